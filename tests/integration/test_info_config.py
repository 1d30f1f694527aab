"""INFO, CONFIG GET/SET and COMMAND (COUNT / INFO / DOCS)."""

import re
import socket
import time

import pytest

from conftest import free_port
from resp_util import RawConn, Status, flat_pairs, parse, wait_for

LINE_RE = re.compile(rb"^[A-Za-z0-9_|\-]+:[^\r\n]*$")


def info_text(conn, *sections):
    raw = conn.cmd("INFO", *sections)
    assert raw.startswith(b"$"), raw[:40]
    return parse(raw)


def info_fields(text):
    fields = {}
    for line in text.split(b"\r\n"):
        if line and not line.startswith(b"#"):
            k, _, v = line.partition(b":")
            fields[k] = v
    return fields


def sections_of(text):
    return [line[2:] for line in text.split(b"\r\n") if line.startswith(b"# ")]


def check_info_format(text):
    assert text.endswith(b"\r\n"), text[-20:]
    blocks = text[:-2].split(b"\r\n\r\n")
    for block in blocks:
        lines = block.split(b"\r\n")
        assert re.fullmatch(rb"# [A-Za-z]+", lines[0]), lines[0]
        for line in lines[1:]:
            assert LINE_RE.match(line), line


# ---------------------------------------------------------------- INFO

def test_info_default_sections(conn):
    text = info_text(conn)
    check_info_format(text)
    secs = sections_of(text)
    for s in (b"Server", b"Clients", b"Memory", b"Stats", b"Replication", b"Keyspace"):
        assert s in secs, secs
    assert b"\r\nloading:0\r\n" in text


@pytest.mark.parametrize("arg", ["default", "all", "everything"])
def test_info_default_all_everything(conn, arg):
    text = info_text(conn, arg)
    check_info_format(text)
    secs = sections_of(text)
    for s in (b"Server", b"Clients", b"Memory", b"Stats", b"Replication", b"Keyspace"):
        assert s in secs


def test_info_server(server, conn):
    text = info_text(conn, "server")
    check_info_format(text)
    assert text.startswith(b"# Server\r\n")
    assert sections_of(text) == [b"Server"]
    f = info_fields(text)
    assert f[b"redis_version"] == b"7.0.15"
    assert f[b"redis_mode"] == b"standalone"
    assert f[b"tcp_port"] == str(server.port).encode()
    assert f[b"process_id"] == str(server.proc.pid).encode()
    assert re.fullmatch(rb"[0-9a-f]{40}", f[b"run_id"]), f[b"run_id"]
    assert f[b"uptime_in_seconds"].isdigit()
    assert f[b"uptime_in_days"].isdigit()
    assert f[b"arch_bits"] in (b"32", b"64")


def test_info_section_names_case_insensitive(conn):
    assert sections_of(info_text(conn, "SERVER")) == [b"Server"]
    assert sections_of(info_text(conn, "RePlIcAtIoN")) == [b"Replication"]


def test_info_multiple_sections(conn):
    text = info_text(conn, "server", "clients")
    assert sections_of(text) == [b"Server", b"Clients"]
    check_info_format(text)


def test_info_unknown_section_is_empty(conn):
    assert conn.cmd("INFO", "bogus") == b"$0\r\n\r\n"


def test_info_replication(conn):
    text = info_text(conn, "replication")
    check_info_format(text)
    assert text.startswith(b"# Replication\r\nrole:master\r\nconnected_slaves:0\r\n")
    assert sections_of(text) == [b"Replication"]


def test_info_keyspace_empty_exact(conn):
    assert conn.cmd("INFO", "keyspace") == b"$12\r\n# Keyspace\r\n\r\n"


def test_info_keyspace_counts(conn):
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "1", "EX", "100")
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("PEXPIRE", "h", "200000")
    text = info_text(conn, "keyspace")
    m = re.fullmatch(rb"# Keyspace\r\ndb0:keys=3,expires=2,avg_ttl=(\d+)\r\n", text)
    assert m, text


def test_info_clients_connected_count(server, conn):
    def connected():
        return int(info_fields(info_text(conn, "clients"))[b"connected_clients"])

    assert sections_of(info_text(conn, "clients")) == [b"Clients"]
    # connections of earlier tests may still be closing: wait until only we remain
    assert wait_for(lambda: connected() == 1, timeout=2), connected()
    extra = [server.raw() for _ in range(3)]
    for c in extra:
        assert c.cmd("PING") == b"+PONG\r\n"
    assert connected() == 4
    for c in extra:
        c.close()
    assert wait_for(lambda: connected() == 1, timeout=2), connected()


def test_info_memory(conn):
    text = info_text(conn, "memory")
    check_info_format(text)
    assert sections_of(text) == [b"Memory"]
    f = info_fields(text)
    assert int(f[b"used_memory"]) > 0
    assert re.fullmatch(rb"[0-9.]+[BKMGT]?", f[b"used_memory_human"]), f[b"used_memory_human"]


def test_info_stats_counters(server, conn):
    def stats():
        return info_fields(info_text(conn, "stats"))

    s0 = stats()
    for k in (b"total_connections_received", b"total_commands_processed",
              b"expired_keys", b"keyspace_hits", b"keyspace_misses"):
        assert s0[k].isdigit(), k
    server.raw().cmd("PING")
    conn.cmd("SET", "k", "v")
    conn.cmd("GET", "k")
    conn.cmd("GET", "missing")
    s1 = stats()
    assert int(s1[b"total_connections_received"]) >= int(s0[b"total_connections_received"]) + 1
    assert int(s1[b"total_commands_processed"]) >= int(s0[b"total_commands_processed"]) + 4
    assert int(s1[b"keyspace_hits"]) == int(s0[b"keyspace_hits"]) + 1
    assert int(s1[b"keyspace_misses"]) == int(s0[b"keyspace_misses"]) + 1


def test_info_expired_keys_counter(conn):
    def expired():
        return int(info_fields(info_text(conn, "stats"))[b"expired_keys"])

    before = expired()
    conn.cmd("SET", "k", "v", "PX", "50")
    time.sleep(0.1)
    assert conn.cmd("GET", "k") == b"$-1\r\n"
    assert expired() == before + 1


def test_info_via_client(r):
    info = r.info()
    assert info["redis_version"] == "7.0.15"
    assert info["role"] == "master"
    assert info["connected_slaves"] == 0
    assert info["loading"] == 0
    assert r.info("server")["redis_mode"] == "standalone"


def test_latchd_only_info_latchd_version(latchd_factory):
    srv = latchd_factory()
    text = parse(srv.raw().cmd("INFO", "server"))
    f = info_fields(text)
    assert re.fullmatch(rb"\d+\.\d+\.\d+", f[b"latchd_version"]), f.get(b"latchd_version")
    assert f[b"redis_version"] == b"7.0.15"


def test_latchd_only_info_latchd_section(latchd_factory):
    """latchd's counters are a section of their own, shown like a Redis
    module's: when named or under INFO everything, never in Redis's
    default or all sets."""
    c = latchd_factory().raw()
    for args in [(), ("default",), ("all",), ("server", "stats")]:
        assert b"# Latchd" not in parse(c.cmd("INFO", *args)), args
    for args in [("latchd",), ("LATCHD",), ("everything",), ("server", "latchd")]:
        assert b"# Latchd\r\n" in parse(c.cmd("INFO", *args)), args
    f = info_fields(parse(c.cmd("INFO", "latchd")))
    assert (f[b"latchd_native_script_runs"], f[b"latchd_lua_script_runs"]) == (b"0", b"0")
    assert c.cmd("EVAL", "return 1", "0") == b":1\r\n"
    f = info_fields(parse(c.cmd("INFO", "latchd")))
    assert (f[b"latchd_native_script_runs"], f[b"latchd_lua_script_runs"]) == (b"0", b"1")


# ---------------------------------------------------------------- CONFIG

def test_config_get_save_and_appendonly(conn):
    assert conn.cmd("CONFIG", "GET", "save") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
    assert conn.cmd("CONFIG", "GET", "appendonly") == b"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"


def test_config_get_unknown_is_empty(conn):
    assert conn.cmd("CONFIG", "GET", "nosuchparam") == b"*0\r\n"


def test_config_get_echoes_name_as_given(conn):
    # an exact (non-glob) name is echoed back with the caller's case
    assert conn.cmd("CONFIG", "GET", "SAVE") == b"*2\r\n$4\r\nSAVE\r\n$0\r\n\r\n"
    assert conn.cmd("CONFIG", "GET", "AppendOnly") == b"*2\r\n$10\r\nAppendOnly\r\n$2\r\nno\r\n"


def test_config_get_several(conn):
    d = flat_pairs(parse(conn.cmd("CONFIG", "GET", "save", "appendonly", "nosuch")))
    assert d == {b"save": b"", b"appendonly": b"no"}
    assert conn.cmd("CONFIG", "GET", "save", "save") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"


def test_config_get_glob(conn):
    assert conn.cmd("CONFIG", "GET", "appendon*") == b"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"
    d = flat_pairs(parse(conn.cmd("CONFIG", "GET", "*")))
    assert d[b"save"] == b""
    assert d[b"appendonly"] == b"no"


def test_config_set(conn):
    assert conn.cmd("CONFIG", "SET", "save", "") == b"+OK\r\n"
    assert conn.cmd("CONFIG", "SET", "appendonly", "no") == b"+OK\r\n"
    assert conn.cmd("CONFIG", "SET", "SAVE", "") == b"+OK\r\n"
    assert conn.cmd("CONFIG", "SET", "save", "", "appendonly", "no") == b"+OK\r\n"
    assert conn.cmd("CONFIG", "GET", "save") == b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"


def test_config_set_errors(conn):
    assert conn.cmd("CONFIG", "SET", "nosuch", "1") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n")
    assert conn.cmd("CONFIG", "SET", "save", "", "nosuch", "x") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n")
    assert conn.cmd("CONFIG", "SET", "save", "", "appendonly") == b"-ERR syntax error\r\n"
    assert conn.cmd("CONFIG", "SET", "save", "", "save", "") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'save') - duplicate parameter\r\n")
    assert conn.cmd("CONFIG", "SET", "appendonly", "maybe") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'appendonly') - "
        b"argument must be 'yes' or 'no'\r\n")
    assert conn.cmd("CONFIG", "GET", "appendonly") == b"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"


def test_config_via_client(r):
    def norm(d):  # redis-py 4.3 decodes CONFIG GET replies itself
        return {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
                for k, v in d.items()}
    assert norm(r.config_get("save")) == {"save": ""}
    assert r.config_set("appendonly", "no") is True
    everything = norm(r.config_get())
    assert everything["appendonly"] == "no"


# ---------------------------------------------------------------- COMMAND

# name -> (arity, first key, last key, step, "write"/"readonly"/None)
COMMAND_TABLE = {
    "ping": (-1, 0, 0, 0, None), "echo": (2, 0, 0, 0, None), "quit": (-1, 0, 0, 0, None),
    "select": (2, 0, 0, 0, None), "hello": (-1, 0, 0, 0, None), "client": (-2, 0, 0, 0, None),
    "reset": (1, 0, 0, 0, None), "auth": (-2, 0, 0, 0, None), "command": (-1, 0, 0, 0, None),
    "info": (-1, 0, 0, 0, None), "config": (-2, 0, 0, 0, None), "time": (1, 0, 0, 0, None),
    "dbsize": (1, 0, 0, 0, "readonly"), "flushall": (-1, 0, 0, 0, "write"),
    "flushdb": (-1, 0, 0, 0, "write"), "function": (-2, 0, 0, 0, None),
    "wait": (3, 0, 0, 0, None), "lastsave": (1, 0, 0, 0, None),
    "exists": (-2, 1, -1, 1, "readonly"), "del": (-2, 1, -1, 1, "write"),
    "unlink": (-2, 1, -1, 1, "write"), "type": (2, 1, 1, 1, "readonly"),
    "keys": (2, 0, 0, 0, "readonly"), "scan": (-2, 0, 0, 0, "readonly"),
    "rename": (3, 1, 2, 1, "write"), "expire": (-3, 1, 1, 1, "write"),
    "pexpire": (-3, 1, 1, 1, "write"), "expireat": (-3, 1, 1, 1, "write"),
    "pexpireat": (-3, 1, 1, 1, "write"), "ttl": (2, 1, 1, 1, "readonly"),
    "pttl": (2, 1, 1, 1, "readonly"), "expiretime": (2, 1, 1, 1, "readonly"),
    "pexpiretime": (2, 1, 1, 1, "readonly"), "persist": (2, 1, 1, 1, "write"),
    "get": (2, 1, 1, 1, "readonly"), "set": (-3, 1, 1, 1, "write"),
    "setnx": (3, 1, 1, 1, "write"), "getdel": (2, 1, 1, 1, "write"),
    "incr": (2, 1, 1, 1, "write"), "incrby": (3, 1, 1, 1, "write"),
    "decr": (2, 1, 1, 1, "write"), "decrby": (3, 1, 1, 1, "write"),
    "mget": (-2, 1, -1, 1, "readonly"), "hset": (-4, 1, 1, 1, "write"),
    "hsetnx": (4, 1, 1, 1, "write"), "hget": (3, 1, 1, 1, "readonly"),
    "hmget": (-3, 1, 1, 1, "readonly"), "hexists": (3, 1, 1, 1, "readonly"),
    "hdel": (-3, 1, 1, 1, "write"), "hlen": (2, 1, 1, 1, "readonly"),
    "hincrby": (4, 1, 1, 1, "write"), "hgetall": (2, 1, 1, 1, "readonly"),
    "hkeys": (2, 1, 1, 1, "readonly"), "hvals": (2, 1, 1, 1, "readonly"),
    "hstrlen": (3, 1, 1, 1, "readonly"),
    "lpush": (-3, 1, 1, 1, "write"), "rpush": (-3, 1, 1, 1, "write"),
    "lpop": (-2, 1, 1, 1, "write"), "rpop": (-2, 1, 1, 1, "write"),
    "llen": (2, 1, 1, 1, "readonly"), "lindex": (3, 1, 1, 1, "readonly"),
    "lrange": (4, 1, 1, 1, "readonly"), "lset": (4, 1, 1, 1, "write"),
    "linsert": (5, 1, 1, 1, "write"), "lrem": (4, 1, 1, 1, "write"),
    "ltrim": (4, 1, 1, 1, "write"),
    "zadd": (-4, 1, 1, 1, "write"), "zincrby": (4, 1, 1, 1, "write"),
    "zscore": (3, 1, 1, 1, "readonly"), "zmscore": (-3, 1, 1, 1, "readonly"),
    "zrem": (-3, 1, 1, 1, "write"), "zcard": (2, 1, 1, 1, "readonly"),
    "zcount": (4, 1, 1, 1, "readonly"), "zrank": (3, 1, 1, 1, "readonly"),
    "zrevrank": (3, 1, 1, 1, "readonly"), "zrange": (-4, 1, 1, 1, "readonly"),
    "zrevrange": (-4, 1, 1, 1, "readonly"), "zrangebyscore": (-4, 1, 1, 1, "readonly"),
    "zrevrangebyscore": (-4, 1, 1, 1, "readonly"), "zrangebylex": (-4, 1, 1, 1, "readonly"),
    "zrevrangebylex": (-4, 1, 1, 1, "readonly"), "zremrangebyrank": (4, 1, 1, 1, "write"),
    "zremrangebyscore": (4, 1, 1, 1, "write"), "zremrangebylex": (4, 1, 1, 1, "write"),
    "zpopmin": (-2, 1, 1, 1, "write"), "zpopmax": (-2, 1, 1, 1, "write"),
    "copy": (-3, 1, 2, 1, "write"), "randomkey": (1, 0, 0, 0, "readonly"),
    "sort": (-2, 1, 1, 1, "write"), "sort_ro": (-2, 1, 1, 1, "readonly"),
    "client|setname": (3, 0, 0, 0, None), "client|getname": (2, 0, 0, 0, None),
    "client|id": (2, 0, 0, 0, None), "client|info": (2, 0, 0, 0, None),
    "client|list": (-2, 0, 0, 0, None), "client|kill": (-3, 0, 0, 0, None),
    "client|reply": (3, 0, 0, 0, None), "config|get": (-3, 0, 0, 0, None),
    "config|set": (-4, 0, 0, 0, None), "command|count": (2, 0, 0, 0, None),
    "command|info": (-2, 0, 0, 0, None), "command|docs": (-2, 0, 0, 0, None),
    "function|flush": (-2, 0, 0, 0, "write"), "function|list": (-2, 0, 0, 0, None),
    "fcall": (-3, 0, 0, 0, None), "fcall_ro": (-3, 0, 0, 0, "readonly"),
    "function|load": (-3, 0, 0, 0, "write"), "function|delete": (3, 0, 0, 0, "write"),
    "function|restore": (-3, 0, 0, 0, "write"), "function|dump": (2, 0, 0, 0, None),
    "function|kill": (2, 0, 0, 0, None), "function|stats": (2, 0, 0, 0, None),
    "function|help": (2, 0, 0, 0, None),
}


def test_command_count(conn):
    reply = conn.cmd("COMMAND", "COUNT")
    assert re.fullmatch(rb":\d+\r\n", reply)
    top_level = [n for n in COMMAND_TABLE if "|" not in n]
    assert parse(reply) >= len(top_level)


@pytest.mark.parametrize("group", ["commands", "subcommands"])
def test_command_info_table(conn, group):
    names = [n for n in COMMAND_TABLE if ("|" in n) == (group == "subcommands")]
    replies = parse(conn.cmd("COMMAND", "INFO", *names))
    assert len(replies) == len(names)
    for name, entry in zip(names, replies):
        arity, first, last, step, kind = COMMAND_TABLE[name]
        assert isinstance(entry, list) and len(entry) == 10, (name, entry)
        assert entry[0] == name.encode()
        assert (entry[1], entry[3], entry[4], entry[5]) == (arity, first, last, step), name
        flags = entry[2]
        assert isinstance(flags, list) and all(isinstance(f, bytes) for f in flags), name
        if kind == "write":
            assert b"write" in flags and b"readonly" not in flags, (name, flags)
        elif kind == "readonly":
            assert b"readonly" in flags and b"write" not in flags, (name, flags)
        for i in (6, 7, 8, 9):
            assert isinstance(entry[i], list), (name, i, entry[i])


def test_command_info_case_and_unknown(conn):
    reply = parse(conn.cmd("COMMAND", "INFO", "GET", "nosuchcommand", "Set"))
    assert len(reply) == 3
    assert reply[0][0] == b"get"
    assert reply[1] is None
    assert reply[2][0] == b"set"
    assert conn.cmd("COMMAND", "INFO", "nosuchcommand") == b"*1\r\n$-1\r\n"


def test_command_info_get_exact_head(conn):
    raw = conn.cmd("COMMAND", "INFO", "get")
    assert raw.startswith(b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n")


def test_command_info_subcommands_listed(conn):
    entry = parse(conn.cmd("COMMAND", "INFO", "client"))[0]
    subs = {s[0] for s in entry[9]}
    for name in ("client|setname", "client|getname", "client|id", "client|info",
                 "client|list", "client|kill", "client|reply"):
        assert name.encode() in subs, name


def is_bulk(x):
    # redis-cli asserts REDIS_REPLY_STRING (a bulk string, not a +status)
    return type(x) is bytes


def check_doc_args(args, where):
    assert isinstance(args, list), where
    for a in args:
        d = flat_pairs(a)
        assert is_bulk(d.get(b"name")), (where, d)
        assert is_bulk(d.get(b"type")), (where, d)
        assert d[b"type"] in (b"key", b"string", b"integer", b"double", b"pattern",
                              b"unix-time", b"pure-token", b"oneof", b"block"), (where, d)
        if b"token" in d:
            assert is_bulk(d[b"token"]), (where, d)
        if b"flags" in d:
            assert isinstance(d[b"flags"], list), (where, d)
            for f in d[b"flags"]:
                assert isinstance(f, Status), (where, f)   # +optional etc.
                assert f in (b"optional", b"multiple", b"multiple_token"), (where, f)
        if d[b"type"] in (b"oneof", b"block"):
            check_doc_args(d[b"arguments"], "%s/%s" % (where, d[b"name"].decode()))


def check_docs(name, doc):
    d = flat_pairs(doc)
    for k in (b"summary", b"since", b"group"):
        assert is_bulk(d.get(k)), (name, k)
    if b"arguments" in d:
        check_doc_args(d[b"arguments"], name.decode())
    if b"subcommands" in d:
        subs = flat_pairs(d[b"subcommands"])
        for sub, subdoc in subs.items():
            assert sub.startswith(name + b"|"), sub
            check_docs(sub, subdoc)


def test_command_docs_get(conn):
    docs = flat_pairs(parse(conn.cmd("COMMAND", "DOCS", "get")))
    assert list(docs) == [b"get"]
    d = flat_pairs(docs[b"get"])
    assert is_bulk(d[b"summary"]) and d[b"summary"]
    assert d[b"group"] == b"string"
    assert d[b"since"] == b"1.0.0"
    args = [flat_pairs(a) for a in d[b"arguments"]]
    assert [(a[b"name"], a[b"type"]) for a in args] == [(b"key", b"key")]
    check_docs(b"get", docs[b"get"])


def test_command_docs_unknown(conn):
    assert conn.cmd("COMMAND", "DOCS", "nosuchcommand") == b"*0\r\n"


def test_command_docs_set_arguments(conn):
    d = flat_pairs(flat_pairs(parse(conn.cmd("COMMAND", "DOCS", "set")))[b"set"])
    names = [flat_pairs(a)[b"name"] for a in d[b"arguments"]]
    assert names[:2] == [b"key", b"value"]
    check_docs(b"set", flat_pairs(parse(conn.cmd("COMMAND", "DOCS", "set")))[b"set"])


def test_command_docs_all_is_well_formed_for_cli_hints(conn):
    # redis-cli (interactive) builds its hints from a bare COMMAND DOCS and
    # asserts on the shape: name -> map with string summary/since/group and
    # arguments that each have a string name and a known type.
    raw = conn.cmd("COMMAND", "DOCS")
    docs = flat_pairs(parse(raw))
    for name in COMMAND_TABLE:
        if "|" not in name:
            assert name.encode() in docs, name
    for name, doc in docs.items():
        check_docs(name, doc)
    client_subs = flat_pairs(flat_pairs(docs[b"client"])[b"subcommands"])
    for sub in (b"client|setname", b"client|getname", b"client|id", b"client|kill",
                b"client|list", b"client|info", b"client|reply"):
        assert sub in client_subs, sub


def doc_tokens(args):
    """Every token named anywhere in a COMMAND DOCS arguments tree."""
    found = set()
    for a in args:
        a = flat_pairs(a)
        if b"token" in a:
            found.add(a[b"token"])
        found |= doc_tokens(a.get(b"arguments", []))
    return found


def test_command_docs_client_list_names_its_types(conn):
    # redis-cli draws "[TYPE NORMAL|MASTER|REPLICA|PUBSUB]" from these tokens
    docs = flat_pairs(parse(conn.cmd("COMMAND", "DOCS", "client|list")))
    args = flat_pairs(docs[b"client|list"])[b"arguments"]
    assert doc_tokens(args) == {b"TYPE", b"NORMAL", b"MASTER", b"REPLICA", b"PUBSUB", b"ID"}


def test_command_list_names_subcommands_too(conn):
    names = parse(conn.cmd("COMMAND", "LIST"))
    top = [n for n in names if b"|" not in n]
    assert len(top) == parse(conn.cmd("COMMAND", "COUNT"))
    for sub in (b"client|list", b"client|setname", b"config|get", b"script|load", b"command|docs"):
        assert sub in names, sub
    assert all(n.split(b"|")[0] in top for n in names)


def test_command_list_filterby(conn):
    def listed(*args):
        return sorted(parse(conn.cmd("COMMAND", "LIST", "FILTERBY", *args)))
    assert listed("PATTERN", "pexp*") == [b"pexpire", b"pexpireat", b"pexpiretime"]
    assert listed("pattern", "CLIENT|L*") == [b"client|list"]
    assert listed("PATTERN", "nosuch*") == []
    assert listed("MODULE", "nosuchmodule") == []
    assert listed("ACLCAT", "nosuchcategory") == []
    for args in (("bogus",), ("FILTERBY",), ("FILTERBY", "PATTERN"), ("FILTERBY", "PATTERN", "a", "b"),
                 ("FILTERBY", "NOSUCH", "x")):
        assert conn.cmd("COMMAND", "LIST", *args) == b"-ERR syntax error\r\n", args


def test_command_docs_several(conn):
    docs = flat_pairs(parse(conn.cmd("COMMAND", "DOCS", "get", "hset", "nosuch")))
    assert sorted(docs) == [b"get", b"hset"]


# Parameters kept with Redis's names, defaults, ranges and aliases (latchd
# does not act on them yet): what CONFIG GET and CONFIG SET answer.
KEPT = [("list-max-listpack-size", "-2"), ("list-max-ziplist-size", "-2"), ("list-compress-depth", "0"),
        ("set-max-intset-entries", "512"), ("hash-max-listpack-entries", "512"),
        ("hash-max-ziplist-entries", "512"), ("hash-max-listpack-value", "64"),
        ("hash-max-ziplist-value", "64"), ("zset-max-listpack-entries", "128"),
        ("zset-max-ziplist-entries", "128"), ("zset-max-listpack-value", "64"),
        ("zset-max-ziplist-value", "64"), ("stream-node-max-entries", "100"),
        ("stream-node-max-bytes", "4096"), ("slowlog-log-slower-than", "10000"),
        ("slowlog-max-len", "128"), ("latency-monitor-threshold", "0"), ("aof-use-rdb-preamble", "yes")]


def config_get(conn, name):
    return conn.call("CONFIG", "GET", name)


@pytest.mark.parametrize("name,default", KEPT)
def test_config_kept_parameter_default(conn, name, default):
    assert config_get(conn, name) == [name.encode(), default.encode()]


def set_failed(name, why):
    return ("-ERR CONFIG SET failed (possibly related to argument '%s') - %s\r\n" % (name, why)).encode()


@pytest.mark.parametrize("name,value,reply,shown", [
    ("list-max-ziplist-size", "1kb", "argument couldn't be parsed into an integer", None),
    ("list-max-ziplist-size", "-5", None, [("list-max-listpack-size", "-5"), ("list-max-ziplist-size", "-5")]),
    ("set-max-intset-entries", "-1", "argument must be between 0 and 9223372036854775807 inclusive", None),
    ("hash-max-ziplist-value", "1kb", None, [("hash-max-listpack-value", "1024")]),
    ("zset-max-ziplist-value", "-1", "argument must be a memory value", None),
    ("slowlog-log-slower-than", "-2", "argument must be between -1 and 9223372036854775807 inclusive", None),
    ("list-compress-depth", "-1", "argument must be between 0 and 2147483647 inclusive", None),
    ("aof-use-rdb-preamble", "maybe", "argument must be 'yes' or 'no'", None),
    ("stream-node-max-bytes", "2mb", None, [("stream-node-max-bytes", "2097152")]),
])
def test_config_set_kept_parameter(conn, name, value, reply, shown):
    defaults = dict(KEPT)
    try:
        got = conn.cmd("CONFIG", "SET", name, value)
        assert got == (set_failed(name, reply) if reply else b"+OK\r\n")
        for shown_name, shown_value in shown or [(name, defaults[name])]:
            assert config_get(conn, shown_name) == [shown_name.encode(), shown_value.encode()]
    finally:
        conn.cmd("CONFIG", "SET", name, defaults[name])


# ---------------------------------------------------------------- every parameter, as redis-server answers

# Values that differ between two servers started apart: where each runs,
# what it was told to listen on.
DIFFERING_VALUES = {"dir", "pidfile", "port", "logfile", "unixsocket"}


def all_config(c):
    return flat_pairs(c.call("CONFIG", "GET", "*"))


def test_config_get_every_parameter_as_redis(conn, reference_redis):
    want = all_config(reference_redis.raw())
    got = all_config(conn)
    assert sorted(got) == sorted(want)
    assert len(want) >= 190
    for name in want:
        if name.decode() not in DIFFERING_VALUES:
            assert (name, got[name]) == (name, want[name])


def test_config_get_each_name_exactly_as_redis(conn, reference_redis):
    ref = reference_redis.raw()
    for name in all_config(ref):
        if name.decode() in DIFFERING_VALUES:
            continue
        upper = name.upper()
        assert conn.call("CONFIG", "GET", upper) == ref.call("CONFIG", "GET", upper), name


def test_config_get_aliases_and_patterns(conn):
    d = flat_pairs(conn.call("CONFIG", "GET", "*slave*"))
    assert d[b"slaveof"] == b"" and d[b"slave-read-only"] == b"yes" and d[b"slave-priority"] == b"100"
    assert b"replica-read-only" not in d
    assert flat_pairs(conn.call("CONFIG", "GET", "lua-time-limit")) == {b"lua-time-limit": b"5000"}
    # Redis's hidden parameters answer only when named exactly
    assert flat_pairs(conn.call("CONFIG", "GET", "key-load-delay")) == {b"key-load-delay": b"0"}
    assert b"key-load-delay" not in flat_pairs(conn.call("CONFIG", "GET", "key-*"))


def test_config_set_every_parameter_to_its_value_as_redis(conn, reference_redis):
    """Every parameter redis-server lists, set to the value it shows: the
    mutable ones take it back, the immutable and protected ones are refused
    with the same words."""
    ref = reference_redis.raw()
    for name, value in all_config(ref).items():
        mine = flat_pairs(conn.call("CONFIG", "GET", name))[name]
        want = ref.cmd("CONFIG", "SET", name, value)
        assert (name, conn.cmd("CONFIG", "SET", name, mine)) == (name, want)


CONFIG_SET_ERRORS = [
    (("MAXCLIENTS", "abc"), "maxclients", "argument couldn't be parsed into an integer"),
    (("Daemonize", "yes"), "Daemonize", "can't set immutable config"),
    (("databases", "4"), "databases", "can't set immutable config"),
    (("io-threads", "4"), "io-threads", "can't set immutable config"),
    (("slaveof", "127.0.0.1 7000"), "slaveof", "can't set immutable config"),
    (("enable-debug-command", "yes"), "enable-debug-command", "can't set immutable config"),
    (("dir", "/"), "dir", "can't set protected config"),
    (("dbfilename", "x.rdb"), "dbfilename", "can't set protected config"),
    (("maxclients", "10", "maxclients", "11"), "maxclients", "duplicate parameter"),
    (("maxmemory-eviction-tenacity", "200"), "maxmemory-eviction-tenacity",
     "argument must be between 0 and 100 inclusive"),
    (("maxmemory", "abc"), "maxmemory", "argument must be a memory value"),
    (("client-query-buffer-limit", "-1"), "client-query-buffer-limit", "argument must be a memory value"),
    (("proto-max-bulk-len", "10"), "proto-max-bulk-len",
     "argument must be between 1048576 and 9223372036854775807 inclusive"),
    (("maxclients", "-1"), "maxclients", "argument must be between 1 and 4294967295 inclusive"),
    (("slowlog-max-len", "-1"), "slowlog-max-len", "argument must be between 0 and 9223372036854775807 inclusive"),
    (("loglevel", "foo"), "loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning"),
    (("oom-score-adj", "bad"), "oom-score-adj",
     "argument(s) must be one of the following: no, yes, relative, absolute"),
    (("appendonly", "maybe"), "appendonly", "argument must be 'yes' or 'no'"),
    (("save", "1 2 3"), "save", "Invalid save parameters"),
    (("save", "a b"), "save", "Invalid save parameters"),
    (("client-output-buffer-limit", "foo 1 2 3"), "client-output-buffer-limit",
     "Invalid client class specified in buffer limit configuration."),
    (("oom-score-adj-values", "1 2"), "oom-score-adj-values", "wrong number of arguments"),
    (("oom-score-adj-values", "1 2 3000"), "oom-score-adj-values",
     "Invalid oom-score-adj-values, elements must be between -2000 and 2000."),
    (("notify-keyspace-events", "Q"), "notify-keyspace-events",
     "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."),
    (("maxmemory-clients", "200%"), "maxmemory-clients", "percentage argument must be less or equal to 100"),
    (("maxmemory-clients", "-5"), "maxmemory-clients", "argument must be a memory or percent value"),
    (("shutdown-on-sigint", "save nosave"), "shutdown-on-sigint",
     "shutdown options SAVE and NOSAVE can't be used simultaneously"),
    (("latency-tracking-info-percentiles", "50 200"), "latency-tracking-info-percentiles",
     "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
    (("latency-tracking-info-percentiles", "abc"), "latency-tracking-info-percentiles",
     "Invalid latency-tracking-info-percentiles parameters"),
    (("tcp-keepalive", "-1"), "tcp-keepalive", "argument must be between 0 and 2147483647 inclusive"),
    (("proc-title-template", "{title}"), "proc-title-template",
     "template format is invalid or contains unknown variables"),
    (("proc-title-template", "{foo} x"), "proc-title-template",
     "template format is invalid or contains unknown variables"),
    # the value's error names the parameter as Redis spells it
    (("SLAVE-PRIORITY", "x"), "slave-priority", "argument couldn't be parsed into an integer"),
    # the first problem among the names wins, before any value is looked at
    (("hz", "x", "daemonize", "yes"), "daemonize", "can't set immutable config"),
]


@pytest.mark.parametrize("args,arg,why", CONFIG_SET_ERRORS, ids=[" ".join(a) for a, _, _ in CONFIG_SET_ERRORS])
def test_config_set_error_texts(conn, args, arg, why):
    before = all_config(conn)
    assert conn.cmd("CONFIG", "SET", *args) == set_failed(arg, why)
    assert all_config(conn) == before


def test_config_set_unknown_and_arity(conn):
    assert conn.cmd("CONFIG", "SET", "hz", "1", "foo", "2") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n")
    assert conn.cmd("CONFIG", "SET", "hz") == b"-ERR wrong number of arguments for 'config|set' command\r\n"
    assert conn.cmd("CONFIG", "SET", "maxclients", "10", "hz") == b"-ERR syntax error\r\n"


def test_config_set_several_is_all_or_nothing(conn):
    try:
        assert conn.cmd("CONFIG", "SET", "maxmemory", "1gb", "hz", "20", "maxmemory-samples", "0") == set_failed(
            "maxmemory-samples", "argument must be between 1 and 2147483647 inclusive")
        assert config_get(conn, "maxmemory") == [b"maxmemory", b"0"]
        assert config_get(conn, "hz") == [b"hz", b"10"]
        assert conn.cmd("CONFIG", "SET", "maxmemory", "1gb", "hz", "20", "maxmemory-samples", "7") == b"+OK\r\n"
        assert flat_pairs(conn.call("CONFIG", "GET", "maxmemory", "hz", "maxmemory-samples")) == {
            b"maxmemory": b"1073741824", b"hz": b"20", b"maxmemory-samples": b"7"}
        # an alias is a parameter of its own: not a duplicate, the last one wins
        assert conn.cmd("CONFIG", "SET", "replica-priority", "1", "slave-priority", "2") == b"+OK\r\n"
        assert config_get(conn, "replica-priority") == [b"replica-priority", b"2"]
    finally:
        conn.cmd("CONFIG", "SET", "maxmemory", "0", "hz", "10", "maxmemory-samples", "5", "replica-priority", "100")


@pytest.mark.parametrize("name,value,shown", [
    ("hz", "0", "1"), ("hz", "1000", "500"), ("save", "0100 02", "100 2"), ("oom-score-adj", "relative", "yes"),
    ("maxmemory-clients", "10%", "10%"), ("maxmemory-clients", "1k", "1000"), ("appendfsync", "ALWAYS", "always"),
    ("shutdown-on-sigint", "nosave now", "nosave now"), ("latency-tracking-info-percentiles", "50.5 99", "50.5 99"),
    ("client-output-buffer-limit", "normal 1mb 2mb 10",
     "normal 1048576 2097152 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
])
def test_config_set_value_shown_as_redis(conn, name, value, shown):
    before = config_get(conn, name)[1]
    try:
        assert conn.cmd("CONFIG", "SET", name, value) == b"+OK\r\n"
        assert config_get(conn, name) == [name.encode(), shown.encode()]
    finally:
        conn.cmd("CONFIG", "SET", name, before)


def test_config_set_protected_when_enabled(server_factory, tmp_path):
    c = server_factory("--enable-protected-configs", "yes").raw()
    before = config_get(c, "dir")
    assert c.cmd("CONFIG", "SET", "dir", "/nonexistent") == set_failed("dir", "No such file or directory")
    # all or nothing: the directory moved for dir comes back when a later value fails
    assert c.cmd("CONFIG", "SET", "dir", str(tmp_path), "dbfilename", "x/y") == set_failed(
        "dbfilename", "dbfilename can't be a path, just a filename")
    assert config_get(c, "dir") == before
    assert c.cmd("CONFIG", "SET", "dir", str(tmp_path), "dbfilename", "x.rdb") == b"+OK\r\n"
    assert config_get(c, "dir") == [b"dir", str(tmp_path).encode()]


def test_config_set_port_and_bind_rebind(server_factory):
    srv = server_factory()
    c = srv.raw()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        assert c.cmd("CONFIG", "SET", "port", str(busy.getsockname()[1])) == set_failed(
            "port", "Unable to listen on this port. Check server logs.")
        assert c.cmd("CONFIG", "SET", "bind", "127.0.0.1 192.0.2.1") == set_failed(
            "bind", "Failed to bind to specified addresses.")
    finally:
        busy.close()
    assert config_get(c, "port") == [b"port", str(srv.port).encode()]
    with RawConn("127.0.0.1", srv.port) as again:
        assert again.cmd("PING") == b"+PONG\r\n"
    new = free_port()
    assert c.cmd("CONFIG", "SET", "port", str(new)) == b"+OK\r\n"
    with RawConn("127.0.0.1", new) as moved:
        assert moved.cmd("PING") == b"+PONG\r\n"
        assert b"\r\ntcp_port:%d\r\n" % new in moved.cmd("INFO", "server")
    with pytest.raises(OSError):
        RawConn("127.0.0.1", srv.port, timeout=1).cmd("PING")
    # the connection that moved it stays
    assert c.cmd("PING") == b"+PONG\r\n"
    srv.port = new


def test_config_resetstat(server, conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("GET", "k")
    conn.cmd("GET", "nosuch")
    conn.cmd("SET", "e", "v", "PX", "1")
    time.sleep(0.05)
    conn.cmd("GET", "e")
    f = info_fields(info_text(conn, "stats"))
    assert int(f[b"total_commands_processed"]) > 3 and int(f[b"keyspace_hits"]) >= 1
    assert conn.cmd("CONFIG", "RESETSTAT") == b"+OK\r\n"
    f = info_fields(info_text(conn, "stats"))
    for field in (b"keyspace_hits", b"keyspace_misses", b"expired_keys", b"total_connections_received",
                  b"rejected_connections", b"evicted_keys"):
        assert f[field] == b"0", field
    assert f[b"total_commands_processed"] == b"1"   # RESETSTAT itself, counted once it ran
    assert int(f[b"total_net_input_bytes"]) < 100


def test_latchd_only_resetstat_clears_script_counters(latchd_factory):
    c = latchd_factory().raw()
    c.cmd("EVAL", "return 1", "0")
    assert b"latchd_lua_script_runs:1" in info_text(c, "latchd")
    c.cmd("CONFIG", "RESETSTAT")
    assert b"latchd_lua_script_runs:0" in info_text(c, "latchd")


def test_config_rewrite_without_a_file(conn):
    assert conn.cmd("CONFIG", "REWRITE") == b"-ERR The server is running without a config file\r\n"


def test_config_long_values_whole(conn):
    """No length limit of latchd's own: a long password, many save pairs."""
    pairs = " ".join("%d %d" % (i + 1, i) for i in range(600))
    try:
        assert conn.cmd("CONFIG", "SET", "save", pairs, "replica-announce-ip", "h" * 9000) == b"+OK\r\n"
        assert config_get(conn, "save") == [b"save", pairs.encode()]
        assert config_get(conn, "replica-announce-ip") == [b"replica-announce-ip", b"h" * 9000]
    finally:
        conn.cmd("CONFIG", "SET", "save", "", "replica-announce-ip", "")


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
                                    "volatile-lfu", "volatile-random", "volatile-ttl"])
def test_maxmemory_policy_evicts_to_the_limit(server_factory, policy):
    """Over maxmemory, keys go as the policy says before each command:
    used_memory stays near the limit, volatile policies take only keys with
    a TTL (writes fail once none is left), and each eviction is counted and
    announced as an 'evicted' event."""
    srv = server_factory()
    r = srv.client()
    r.config_set("notify-keyspace-events", "Ee")
    sub = srv.client().pubsub()
    sub.psubscribe("__keyevent@0__:evicted")
    limit = r.info("memory")["used_memory"] + 2_000_000
    r.config_set("maxmemory", limit)
    r.config_set("maxmemory-policy", policy)
    volatile = policy.startswith("volatile")
    p = r.pipeline(transaction=False)
    for i in range(5000):
        if volatile and i % 2:
            p.set("k%d" % i, "x" * 1000)   # no TTL: never evicted
        else:
            p.set("k%d" % i, "x" * 1000, ex=100000 + i)
    res = p.execute(raise_on_error=False)
    oom = [x for x in res if isinstance(x, Exception)]
    info = r.info()
    assert info["evicted_keys"] > 1000
    assert info["used_memory"] < limit + 100_000
    if volatile:
        assert oom and all("OOM" in str(x) for x in oom)
        assert r.ttl("k1") == -1   # the keys without a TTL are all there
        assert all(r.exists("k%d" % i) for i in range(1, 5000, 2)[:200])
    else:
        assert not oom
    events = 0
    while sub.get_message(timeout=0.5):
        events += 1
    assert events > 100
    r.config_set("maxmemory", 0)


def test_maxmemory_set_lower_evicts_at_once(server_factory):
    srv = server_factory()
    r = srv.client()
    r.mset({"k%d" % i: "x" * 1000 for i in range(3000)})
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", r.info("memory")["used_memory"] - 1_000_000)
    assert r.info("stats")["evicted_keys"] > 500   # by CONFIG SET itself
    r.config_set("maxmemory", 0)
