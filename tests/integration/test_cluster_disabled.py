"""CLUSTER on a server without cluster support (cluster-enabled no): the
command and its subcommands exist, as COMMAND shows them, and each refuses."""

import pytest

DISABLED = b"-ERR This instance has cluster support disabled\r\n"

SUBCOMMANDS = [
    ("addslots", -3), ("addslotsrange", -4), ("bumpepoch", 2), ("count-failure-reports", 3),
    ("countkeysinslot", 3), ("delslots", -3), ("delslotsrange", -4), ("failover", -2), ("flushslots", 2),
    ("forget", 3), ("getkeysinslot", 4), ("help", 2), ("info", 2), ("keyslot", 3), ("links", 2),
    ("meet", -4), ("myid", 2), ("nodes", 2), ("replicas", 3), ("replicate", 3), ("reset", -2),
    ("saveconfig", 2), ("set-config-epoch", 3), ("setslot", -4), ("shards", 2), ("slaves", 3), ("slots", 2),
]


@pytest.mark.parametrize("name,arity", SUBCOMMANDS)
def test_every_subcommand_refuses(conn, name, arity):
    args = ["1"] * (abs(arity) - 2)
    assert conn.cmd("CLUSTER", name, *args) == DISABLED
    assert conn.cmd("cluster", name.upper(), *args) == DISABLED


def test_arity_and_unknown_subcommand(conn):
    assert conn.cmd("CLUSTER") == b"-ERR wrong number of arguments for 'cluster' command\r\n"
    assert conn.cmd("CLUSTER", "KEYSLOT") == b"-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"
    assert conn.cmd("CLUSTER", "HELP", "x") == b"-ERR wrong number of arguments for 'cluster|help' command\r\n"
    assert conn.cmd("CLUSTER", "INFO", "x") == b"-ERR wrong number of arguments for 'cluster|info' command\r\n"
    assert conn.cmd("CLUSTER", "nosuch") == b"-ERR unknown subcommand 'nosuch'. Try CLUSTER HELP.\r\n"


def test_command_info_and_list(conn):
    info = conn.call("COMMAND", "INFO", "cluster")[0]
    assert info[:9] == [b"cluster", -2, [], 0, 0, 0, [b"@slow"], [], []]
    subs = {s[0].decode(): s for s in info[9]}
    assert sorted(subs) == sorted("cluster|" + n for n, _ in SUBCOMMANDS)
    for name, arity in SUBCOMMANDS:
        assert subs["cluster|" + name][1] == arity, name
    assert subs["cluster|reset"][2] == [b"admin", b"noscript", b"stale"]
    assert subs["cluster|help"][2] == [b"loading", b"stale"]
    assert subs["cluster|addslots"][6] == [b"@admin", b"@slow", b"@dangerous"]
    listed = conn.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "cluster*")
    assert sorted(listed) == sorted([b"cluster"] + [b"cluster|" + n.encode() for n, _ in SUBCOMMANDS])
    docs = conn.call("COMMAND", "DOCS", "cluster")[1]
    doc = dict(zip(docs[0::2], docs[1::2]))
    assert doc[b"summary"] == b"A container for cluster commands" and doc[b"group"] == b"cluster"
    assert len(doc[b"subcommands"]) == 2 * len(SUBCOMMANDS)


def test_cluster_reset_not_allowed_from_script(conn):
    # the subcommand's noscript flag decides, as Redis looks it up first
    reply = conn.cmd("EVAL", "return redis.call('cluster', 'reset', 'hard')", "0")
    assert reply.startswith(b"-ERR This Redis command is not allowed from script script: ")
    reply = conn.cmd("EVAL", "return redis.call('cluster', 'info')", "0")
    assert reply.startswith(b"-ERR This instance has cluster support disabled script: ")
    reply = conn.cmd("EVAL", "return redis.call('acl', 'whoami')", "0")
    assert reply.startswith(b"-ERR This Redis command is not allowed from script script: ")
