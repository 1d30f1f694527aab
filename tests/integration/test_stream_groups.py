"""Stream consumer groups and blocking reads, against Redis 7.0.15's
replies byte for byte: XGROUP (CREATE MKSTREAM ENTRIESREAD, SETID, DESTROY,
CREATECONSUMER, DELCONSUMER, HELP), XREADGROUP (> and history, COUNT,
NOACK, the PEL), XACK, XPENDING (summary, extended, IDLE, consumer),
XCLAIM (IDLE TIME RETRYCOUNT FORCE JUSTID LASTID), XAUTOCLAIM (with the
deleted IDs), XINFO GROUPS / CONSUMERS / STREAM FULL (entries-read, lag),
keyspace events, a random walk compared with redis-server; XREAD BLOCK and
XREADGROUP BLOCK woken by XADD, errors when the key or group goes,
timeouts, CLIENT UNBLOCK, MULTI and scripts."""

import random

import pytest

from resp_util import encode_command, parse, wait_for, RespMap

NIL_ARRAY = b"*-1\r\n"


def info_field(c, name):
    for line in parse(c.cmd("INFO", "clients")).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(name)


def park(server, c, *cmd, n):
    """A new connection sends cmd and is parked (n blocked clients then)."""
    w = server.raw()
    w.send(encode_command(*cmd))
    assert wait_for(lambda: info_field(c, "blocked_clients") == n), info_field(c, "blocked_clients")
    return w


def both(conn, ref, *cmd):
    a, b = conn.cmd(*cmd), ref.cmd(*cmd)
    assert a == b, cmd
    return a


@pytest.fixture
def ref(reference_redis):
    r = reference_redis.raw()
    r.cmd("FLUSHALL")
    return r


# Replies with clock readings (idle times, delivery and seen times) are
# compared with those numbers masked: the servers' clocks differ.
def masked(v, key=None):
    if isinstance(v, RespMap):
        return [(k, "T" if k in (b"seen-time", b"idle") else masked(x, k)) for k, x in v]
    if isinstance(v, list):
        if key == b"pending" and all(isinstance(e, list) for e in v):   # XINFO FULL's PELs
            return [[*e[:-2], "T", e[-1]] for e in v]
        if key == b"xpending":
            return [[e[0], e[1], "T", e[3]] for e in v]
        out = []
        for i, x in enumerate(v):   # flat RESP2 maps: a value after its name
            name = v[i - 1] if i and isinstance(v[i - 1], bytes) else None
            out.append("T" if name in (b"seen-time", b"idle") else masked(x, name))
        return out
    return v


def test_scenario_matches_reference(conn, ref):
    plain = [
        ("XADD", "s", "1-1", "a", "1"), ("XADD", "s", "2-1", "b", "2"), ("XADD", "s", "3-1", "c", "3"),
        ("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATE", "s", "g", "0"),
        ("XGROUP", "CREATE", "nokey", "g", "0"), ("XGROUP", "CREATE", "mk", "g", "$", "MKSTREAM"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
        ("XPENDING", "s", "g"),
        ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "1-1"),
        ("XACK", "s", "g", "1-1", "9-9"), ("XACK", "s", "nog", "1-1"), ("XACK", "nokey", "g", "1-1"),
        ("XACK", "s", "g", "bad"),
        ("XCLAIM", "s", "g", "carol", "0", "2-1", "3-1", "JUSTID"),
        ("XCLAIM", "s", "g", "carol", "0", "2-1", "RETRYCOUNT", "5"),
        ("XPENDING", "s", "g"),
        ("XDEL", "s", "3-1"),
        ("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"),
        ("XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "10"),
        ("XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "10", "JUSTID"),
        ("XINFO", "GROUPS", "s"),
        ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"), ("XINFO", "GROUPS", "s"),
        ("XGROUP", "SETID", "s", "g", "$"), ("XINFO", "GROUPS", "s"),
        ("XGROUP", "DELCONSUMER", "s", "g", "dave"), ("XGROUP", "DELCONSUMER", "s", "g", "nobody"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "erin"), ("XGROUP", "CREATECONSUMER", "s", "g", "erin"),
        ("XPENDING", "s", "g"),
        ("XGROUP", "DESTROY", "s", "g"), ("XGROUP", "DESTROY", "s", "g"),
        ("XGROUP", "HELP"),
        ("XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "-2"),
        ("XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "x"),
        ("XGROUP", "CREATE", "s", "g2", "$", "BOGUS"),
        ("XGROUP", "CREATE", "s", "g2", "1-x"),
        ("XGROUP", "SETID", "s", "nog", "0"), ("XGROUP", "SETID", "s", "g2", "0", "MKSTREAM"),
        ("XGROUP", "CREATECONSUMER", "s", "nog", "c"), ("XGROUP", "DELCONSUMER", "nokey", "g", "c"),
        ("XGROUP", "CREATE", "s"), ("XGROUP", "DESTROY", "s", "g", "x"), ("XGROUP", "FOO"),
        ("XGROUP", "CREATE", "s", "g2", "0"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", "$"),
        ("XREADGROUP", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s"),
        ("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", "x"),
        ("XREADGROUP", "GROUP", "g2", "c", "BOGUS", "STREAMS", "s", ">"),
        ("XREAD", "STREAMS", "s", ">"),
        ("XREAD", "GROUP", "g2", "c", "STREAMS", "s", ">"), ("XREAD", "NOACK", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g2", "c", "NOACK", "STREAMS", "s", ">"), ("XPENDING", "s", "g2"),
        ("XINFO", "GROUPS", "s"),
        ("XCLAIM", "s", "g2", "c", "x", "1-1"), ("XCLAIM", "s", "g2", "c", "0", "1-1", "bogus"),
        ("XCLAIM", "s", "g2", "c", "0", "1-1", "IDLE", "x"), ("XCLAIM", "s", "g2", "c", "0", "1-1", "TIME", "x"),
        ("XCLAIM", "s", "g2", "c", "0", "1-1", "RETRYCOUNT", "x"),
        ("XCLAIM", "s", "g2", "c", "0", "1-1", "LASTID", "x"),
        ("XCLAIM", "s", "nog", "c", "0", "1-1"), ("XCLAIM", "nokey", "g", "c", "0", "1-1"),
        ("XCLAIM", "s", "g2", "c", "0", "1-1", "FORCE", "JUSTID"), ("XPENDING", "s", "g2"),
        ("XCLAIM", "s", "g2", "c", "0", "2-1", "FORCE"), ("XPENDING", "s", "g2"),
        ("XCLAIM", "s", "g2", "c", "0", "1-1", "LASTID", "50-0", "JUSTID"), ("XINFO", "GROUPS", "s"),
        ("XAUTOCLAIM", "s", "g2", "c", "0", "0", "COUNT", "0"), ("XAUTOCLAIM", "s", "g2", "c", "x", "0"),
        ("XAUTOCLAIM", "s", "g2", "c", "0", "x"), ("XAUTOCLAIM", "s", "g2", "c", "0", "0", "BOGUS"),
        ("XAUTOCLAIM", "s", "nog", "c", "0", "0"), ("XAUTOCLAIM", "s", "g2", "c", "0", "(" + "18446744073709551615-18446744073709551615"),
        ("XAUTOCLAIM", "s", "g2", "c", "0", "0", "COUNT", "1"),
        ("XPENDING", "s", "g2", "-", "+"), ("XPENDING", "s", "g2", "IDLE", "5", "-", "+"),
        ("XPENDING", "s", "nog"), ("XPENDING", "nokey", "g"), ("XPENDING", "s", "g2", "x", "+", "10"),
        ("XPENDING", "s", "g2", "-", "+", "x"), ("XPENDING", "s", "g2", "IDLE", "x", "-", "+", "10"),
        ("XPENDING", "s", "g2", "(18446744073709551615-18446744073709551615", "+", "10"),
        ("XPENDING", "s", "g2", "-", "(0-0", "10"),
        ("XPENDING", "s", "g2", "-", "+", "10", "nobody"),
        ("XINFO", "CONSUMERS", "s", "nog"), ("XINFO", "CONSUMERS", "nokey", "g"),
        ("SET", "str", "v"), ("XGROUP", "CREATE", "str", "g", "0"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
        ("XACK", "str", "g", "1-1"), ("XPENDING", "str", "g"), ("XCLAIM", "str", "g", "c", "0", "1-1"),
        ("XAUTOCLAIM", "str", "g", "c", "0", "0"), ("XINFO", "GROUPS", "str"),
    ]
    timed = [
        ("XPENDING", "s", "g2", "-", "+", "10"), ("XPENDING", "s", "g2", "IDLE", "0", "-", "+", "10", "c"),
        ("XINFO", "CONSUMERS", "s", "g2"), ("XINFO", "STREAM", "s", "FULL"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "1"), ("XINFO", "STREAM", "s"),
    ]
    for proto in ("2", "3"):
        conn.cmd("FLUSHALL")
        ref.cmd("FLUSHALL")
        conn.cmd("HELLO", proto)
        ref.cmd("HELLO", proto)
        for cmd in plain:
            both(conn, ref, *cmd)
        for cmd in timed:
            key = b"xpending" if cmd[0] == "XPENDING" else None
            assert masked(parse(conn.cmd(*cmd)), key) == masked(parse(ref.cmd(*cmd)), key), cmd


def test_pel_semantics(conn):
    for i in range(1, 6):
        conn.cmd("XADD", "s", f"{i}-0", "f", i)
    conn.cmd("XGROUP", "CREATE", "s", "g", "0")
    assert len(parse(conn.cmd("XREADGROUP", "GROUP", "g", "a", "COUNT", "3", "STREAMS", "s", ">"))[0][1]) == 3
    assert parse(conn.cmd("XPENDING", "s", "g")) == [3, b"1-0", b"3-0", [[b"a", b"3"]]]
    # history reads count as deliveries; a deleted entry comes back with null fields
    conn.cmd("XDEL", "s", "2-0")
    hist = parse(conn.cmd("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "0"))[0][1]
    assert hist == [[b"1-0", [b"f", b"1"]], [b"2-0", None], [b"3-0", [b"f", b"3"]]]
    counts = [e[3] for e in parse(conn.cmd("XPENDING", "s", "g", "-", "+", "10"))]
    assert counts == [2, 1, 2]
    # SETID back: entries go again, to the new reader, out of the first one's PEL
    conn.cmd("XGROUP", "SETID", "s", "g", "0")
    conn.cmd("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", ">")
    assert parse(conn.cmd("XPENDING", "s", "g")) == [3, b"1-0", b"3-0", [[b"a", b"2"], [b"b", b"1"]]]
    # NOACK: the group moves on, nothing pending
    conn.cmd("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">")
    assert parse(conn.cmd("XPENDING", "s", "g"))[0] == 3
    assert parse(conn.cmd("XINFO", "GROUPS", "s"))[0][7] == b"5-0"
    assert conn.cmd("XGROUP", "DELCONSUMER", "s", "g", "a") == b":2\r\n"
    assert parse(conn.cmd("XPENDING", "s", "g")) == [1, b"1-0", b"1-0", [[b"b", b"1"]]]
    assert conn.cmd("XACK", "s", "g", "1-0", "1-0") == b":1\r\n"
    assert parse(conn.cmd("XPENDING", "s", "g")) == [0, None, None, None]


def test_big_pel_in_order(conn):
    n = 600
    for i in range(n):
        conn.send(encode_command("XADD", "s", f"{i + 1}-0", "f", "v"))
    conn.read_replies(n)
    conn.cmd("XGROUP", "CREATE", "s", "g", "0")
    conn.cmd("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    # ack every third one, from the middle outwards, then claim the rest in odd steps
    ids = [f"{i + 1}-0" for i in range(n)]
    gone = ids[::3]
    assert conn.cmd("XACK", "s", "g", *reversed(gone)) == b":%d\r\n" % len(gone)
    left = [i for i in ids if i not in gone]
    got = [e[0] for e in parse(conn.cmd("XPENDING", "s", "g", "-", "+", str(n)))]
    assert got == [i.encode() for i in left]
    claimed = parse(conn.cmd("XCLAIM", "s", "g", "b", "0", *left[::2], "JUSTID"))
    assert claimed == [i.encode() for i in left[::2]]
    assert parse(conn.cmd("XPENDING", "s", "g"))[3] == [[b"a", str(len(left[1::2])).encode()],
                                                           [b"b", str(len(left[::2])).encode()]]
    mine = [e[0] for e in parse(conn.cmd("XPENDING", "s", "g", "-", "+", str(n), "b"))]
    assert mine == [i.encode() for i in left[::2]]
    # XAUTOCLAIM walks with its cursor
    cur, seen = "0-0", []
    while True:
        nxt, got, deleted = parse(conn.cmd("XAUTOCLAIM", "s", "g", "c", "0", cur, "COUNT", "37", "JUSTID"))
        seen += got
        assert deleted == []
        if nxt == b"0-0":
            break
        cur = nxt.decode()
    assert seen == [i.encode() for i in left]


def test_keyspace_events(server):
    r = server.client()
    r.config_set("notify-keyspace-events", "KEt")
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:s")
    p.get_message(timeout=1)
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    r.execute_command("XADD", "s", "1-0", "f", "v")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    r.execute_command("XACK", "s", "g", "1-0")
    r.execute_command("XCLAIM", "s", "g", "d", "0", "1-0", "FORCE")
    r.execute_command("XGROUP", "SETID", "s", "g", "0")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "e")
    r.execute_command("XGROUP", "DELCONSUMER", "s", "g", "e")
    r.execute_command("XGROUP", "DESTROY", "s", "g")
    got = []
    while True:
        m = p.get_message(timeout=0.5)
        if m is None:
            break
        got.append(m["data"])
    assert got == [b"xgroup-create", b"xadd", b"xgroup-createconsumer", b"xgroup-createconsumer",
                   b"xgroup-setid", b"xgroup-createconsumer", b"xgroup-delconsumer", b"xgroup-destroy"]
    r.config_set("notify-keyspace-events", "")
    p.close()


def random_group_command(rng):
    def rid():
        return f"{rng.randint(1, 30)}-{rng.randint(0, 2)}"
    g = rng.choice(["g", "g", "h", "nog"])
    c = rng.choice(["a", "b", "c"])
    k = rng.random()
    if k < 0.25:
        return ["XADD", "s", f"{rng.randint(1, 30)}-*", "f", str(rng.randint(0, 99))]
    if k < 0.42:
        cnt = ["COUNT", str(rng.randint(0, 3))] if rng.random() < 0.6 else []
        noack = ["NOACK"] if rng.random() < 0.15 else []
        return ["XREADGROUP", "GROUP", g, c, *cnt, *noack, "STREAMS", "s", rng.choice([">", ">", "0", rid()])]
    if k < 0.52:
        return ["XACK", "s", g, *[rid() for _ in range(rng.randint(1, 3))]]
    if k < 0.6:
        opts = rng.sample(["JUSTID", "FORCE", "RETRYCOUNT 3", "LASTID " + rid()], rng.randint(0, 2))
        return ["XCLAIM", "s", g, c, "0", *[rid() for _ in range(rng.randint(1, 3))], *" ".join(opts).split()]
    if k < 0.66:
        return ["XAUTOCLAIM", "s", g, c, "0", rng.choice(["0", rid()]), "COUNT", str(rng.randint(1, 4)),
                *(["JUSTID"] if rng.random() < 0.5 else [])]
    if k < 0.72:
        return ["XDEL", "s", rid()]
    if k < 0.76:
        return ["XTRIM", "s", "MAXLEN", str(rng.randint(0, 10))]
    if k < 0.8:
        return ["XGROUP", "SETID", "s", g, rng.choice(["$", "0", rid()]),
                *(["ENTRIESREAD", str(rng.randint(-1, 9))] if rng.random() < 0.5 else [])]
    if k < 0.83:
        return ["XGROUP", rng.choice(["CREATE", "DESTROY"]), "s", g, rng.choice(["$", "0"])][:5 if rng.random() < 0.5 else 4]
    if k < 0.86:
        return ["XGROUP", rng.choice(["CREATECONSUMER", "DELCONSUMER"]), "s", g, c]
    if k < 0.92:
        return ["XPENDING", "s", g]
    if k < 0.96:
        return ["XINFO", "GROUPS", "s"]
    return ["XSETID", "s", f"{rng.randint(30, 40)}-0"]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_group_commands_match_reference(conn, ref, seed):
    rng = random.Random(seed)
    for cmd in (("XADD", "s", "1-0", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATE", "s", "h", "$")):
        both(conn, ref, *cmd)
    for proto in ("2", "3"):
        conn.cmd("HELLO", proto)
        ref.cmd("HELLO", proto)
        for _ in range(500):
            both(conn, ref, *random_group_command(rng))
        assert conn.cmd("DEBUG", "DIGEST") == ref.cmd("DEBUG", "DIGEST")


def test_copy_keeps_groups_apart(conn, ref):
    for cmd in (("XADD", "s", "1-0", "f", "v"), ("XADD", "s", "2-0", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"),
                ("XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "STREAMS", "s", ">"), ("COPY", "s", "t"),
                ("XACK", "s", "g", "1-0"), ("XPENDING", "s", "g"), ("XPENDING", "t", "g"),
                ("XREADGROUP", "GROUP", "g", "b", "STREAMS", "t", ">"), ("XPENDING", "t", "g"), ("XINFO", "GROUPS", "s"),
                ("RENAME", "t", "u"), ("XPENDING", "u", "g")):
        both(conn, ref, *cmd)


# ---- blocking ----

def test_xread_block_woken_by_xadd(server, conn):
    conn.cmd("XADD", "s", "1-0", "f", "v")
    w1 = park(server, conn, "XREAD", "BLOCK", "0", "STREAMS", "s", "$", n=1)
    w2 = park(server, conn, "XREAD", "BLOCK", "0", "COUNT", "1", "STREAMS", "other", "s", "0", "1-0", n=2)
    conn.send(encode_command("XADD", "s", "2-0", "a", "b") + encode_command("XADD", "s", "3-0", "c", "d"))
    conn.read_replies(2)
    # served right after the first XADD, before the second
    assert parse(w1.read_reply()) == [[b"s", [[b"2-0", [b"a", b"b"]]]]]
    assert parse(w2.read_reply()) == [[b"s", [[b"2-0", [b"a", b"b"]]]]]
    assert info_field(conn, "blocked_clients") == 0


def test_xread_block_resp3_timeout_and_wrong_type(server, conn):
    w = server.raw()
    w.cmd("HELLO", "3")
    w.send(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    assert wait_for(lambda: info_field(conn, "blocked_clients") == 1)
    conn.cmd("SET", "s", "x")   # another type: XREAD keeps waiting
    conn.cmd("DEL", "s")
    conn.cmd("XADD", "s", "5-0", "f", "v")
    assert w.read_reply() == b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert conn.cmd("XREAD", "BLOCK", "20", "STREAMS", "s", "$") == NIL_ARRAY
    w.send(encode_command("XREAD", "BLOCK", "20", "STREAMS", "s", "$"))
    assert w.read_reply() == b"_\r\n"


def test_xreadgroup_block_woken_one_reader_per_entry(server, conn):
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w1 = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    w2 = park(server, conn, "XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">", n=2)
    conn.cmd("XADD", "s", "1-0", "f", "v")
    assert parse(w1.read_reply()) == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
    assert info_field(conn, "blocked_clients") == 1   # b saw nothing new for the group
    conn.cmd("XADD", "s", "2-0", "f", "w")
    assert parse(w2.read_reply()) == [[b"s", [[b"2-0", [b"f", b"w"]]]]]
    assert parse(conn.cmd("XPENDING", "s", "g")) == [2, b"1-0", b"2-0", [[b"a", b"1"], [b"b", b"1"]]]


def test_xreadgroup_block_errors_when_group_or_key_goes(server, conn):
    conn.cmd("CONFIG", "RESETSTAT")
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    conn.cmd("XGROUP", "DESTROY", "s", "g")
    assert w.read_reply() == b"-NOGROUP the consumer group this client was blocked on no longer exists\r\n"
    # counted as the blocked command's failure, as Redis's updateStatsOnUnblock does
    stats = parse(conn.cmd("INFO", "errorstats")) + parse(conn.cmd("INFO", "commandstats"))
    assert b"errorstat_NOGROUP:count=1" in stats
    assert b"cmdstat_xreadgroup:calls=1," in stats and b"rejected_calls=0,failed_calls=1" in stats
    conn.cmd("XGROUP", "CREATE", "s", "g", "$")
    w = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    conn.cmd("DEL", "s")
    assert w.read_reply() == b"-UNBLOCKED the stream key no longer exists\r\n"
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    conn.cmd("SET", "s", "v")
    assert w.read_reply() == b"-UNBLOCKED the stream key no longer exists\r\n"
    assert info_field(conn, "blocked_clients") == 0


def test_client_unblock_and_non_blocking_contexts(server, conn):
    w = server.raw()
    wid = parse(w.cmd("CLIENT", "ID"))
    w.send(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    assert wait_for(lambda: info_field(conn, "blocked_clients") == 1)
    assert conn.cmd("CLIENT", "UNBLOCK", wid) == b":1\r\n"
    assert w.read_reply() == NIL_ARRAY
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w.send(encode_command("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"))
    assert wait_for(lambda: info_field(conn, "blocked_clients") == 1)
    assert conn.cmd("CLIENT", "UNBLOCK", wid, "ERROR") == b":1\r\n"
    assert w.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert conn.cmd("MULTI") == b"+OK\r\n"
    conn.cmd("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    assert conn.cmd("EXEC") == b"*1\r\n*-1\r\n"
    assert conn.cmd("EVAL", "return redis.call('xreadgroup', 'GROUP', 'g', 'a', 'BLOCK', '0', 'STREAMS', KEYS[1], '>')",
                    "1", "s").startswith(b"-ERR xreadgroup command is not allowed with BLOCK option from scripts")


def test_blocked_xreadgroup_served_with_a_default_count(server, conn):
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    conn.cmd("MULTI")
    for i in range(1, 1201):
        conn.cmd("XADD", "s", f"{i}-0", "f", "v")
    conn.cmd("EXEC")
    got = parse(w.read_reply(timeout=10))
    assert len(got[0][1]) == 1000   # Redis's XREAD_BLOCKED_DEFAULT_COUNT
    assert parse(conn.cmd("XINFO", "GROUPS", "s"))[0][7] == b"1000-0"


def test_xread_keys_for_getkeys_and_tracking(server, conn, ref):
    for cmd in (("XREAD", "STREAMS", "a", "b", "0", "0"), ("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "a", ">"),
                ("XREAD", "COUNT", "5", "BLOCK", "1", "STREAMS", "a", "0"), ("XREAD", "STREAMS", "a", "b", "0"),
                ("XREAD", "COUNT", "2", "STREAMS")):
        both(conn, ref, "COMMAND", "GETKEYS", *cmd)
    # a read through XREAD is tracked: the next XADD invalidates the key
    t = server.raw()
    t.cmd("HELLO", "3")
    assert t.cmd("CLIENT", "TRACKING", "ON") == b"+OK\r\n"
    conn.cmd("XADD", "s", "1-0", "f", "v")
    t.cmd("XREAD", "STREAMS", "s", "0")
    conn.cmd("XADD", "s", "2-0", "f", "v")
    assert parse(t.read_reply()) == [b"invalidate", [b"s"]]


@pytest.mark.parametrize("flush", [("FLUSHALL",), ("FLUSHDB",), ("SWAPDB", "0", "5")])
def test_flush_and_swapdb_unblock_xreadgroup(server, conn, flush):
    conn.cmd("SELECT", "5")
    conn.cmd("FLUSHDB")
    conn.cmd("SELECT", "0")
    conn.cmd("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w = park(server, conn, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    r = park(server, conn, "XREAD", "BLOCK", "0", "STREAMS", "s", "$", n=2)
    conn.cmd(*flush)
    assert w.read_reply() == b"-UNBLOCKED the stream key no longer exists\r\n"
    assert wait_for(lambda: info_field(conn, "blocked_clients") == 1)   # XREAD waits on
    conn.cmd("XADD", "s", "1-0", "f", "v")
    assert parse(r.read_reply()) == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
    conn.cmd("SELECT", "5")
    conn.cmd("FLUSHDB")
