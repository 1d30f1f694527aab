"""Stream commands: XADD (explicit, ms-*, auto IDs; NOMKSTREAM; MAXLEN/MINID
with = and ~ and LIMIT), XRANGE/XREVRANGE (exclusive bounds, COUNT), XLEN,
XDEL, XTRIM, XSETID, XREAD (RESP2 arrays, RESP3 maps; blocking in
test_stream_groups.py), Redis
7.0's ID rules and error texts, keyspace events, TYPE / OBJECT ENCODING,
WRONGTYPE, the generic key commands on streams; a random walk compared with
a reference redis-server byte for byte."""

import random

import pytest

from resp_util import parse

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
BAD_ID = b"-ERR Invalid stream ID specified as stream command argument\r\n"
TOP = b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"


@pytest.fixture
def s3(conn):
    for i, f in ((1, b"a"), (2, b"b"), (3, b"c")):
        assert conn.cmd("XADD", "s", f"{i}-0", f, i) == b"$3\r\n" + f"{i}-0".encode() + b"\r\n"
    return conn


def test_xadd_explicit_and_ms_star_ids(conn):
    assert parse(conn.cmd("XADD", "s", "5-1", "f", "v")) == b"5-1"
    assert parse(conn.cmd("XADD", "s", "5-*", "f", "v")) == b"5-2"
    assert parse(conn.cmd("XADD", "s", "6-*", "f", "v")) == b"6-0"
    assert parse(conn.cmd("XADD", "s", "7", "f", "v")) == b"7-0"
    assert conn.cmd("XADD", "s", "7-0", "f", "v") == TOP
    assert conn.cmd("XADD", "s", "6-5", "f", "v") == TOP
    assert conn.cmd("XADD", "s", "0-0", "f", "v") == b"-ERR The ID specified in XADD must be greater than 0-0\r\n"
    assert conn.cmd("XADD", "s", "1-x", "f", "v") == BAD_ID
    assert conn.cmd("XADD", "s", "-", "f", "v") == BAD_ID
    assert conn.cmd("XADD", "s", "*", "f") == b"-ERR wrong number of arguments for 'xadd' command\r\n"
    assert conn.cmd("XLEN", "s") == b":4\r\n"


def test_xadd_sequence_exhaustion(conn):
    top = 2**64 - 1
    assert parse(conn.cmd("XADD", "s", f"1-{top}", "f", "v")) == f"1-{top}".encode()
    # Redis 7.0 reports the exhausted sequence of ms-* with this text
    assert conn.cmd("XADD", "s", "1-*", "f", "v") == b"-ERR Elements are too large to be stored\r\n"
    assert parse(conn.cmd("XADD", "s", "*", "f", "v")).endswith(b"-0")
    assert parse(conn.cmd("XADD", "m", f"{top}-{top}", "f", "v")) == f"{top}-{top}".encode()
    assert conn.cmd("XADD", "m", "*", "f", "v") == (
        b"-ERR The stream has exhausted the last possible ID, unable to add more items\r\n")


def test_xadd_auto_ids_grow(conn):
    ids = [parse(conn.cmd("XADD", "s", "*", "f", i)) for i in range(50)]
    parsed = [tuple(int(x) for x in i.split(b"-")) for i in ids]
    assert parsed == sorted(parsed) and len(set(parsed)) == 50


def test_xadd_nomkstream(conn):
    assert conn.cmd("XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"$-1\r\n"
    assert conn.cmd("EXISTS", "s") == b":0\r\n"
    conn.cmd("XADD", "s", "1-1", "f", "v")
    assert parse(conn.cmd("XADD", "s", "NOMKSTREAM", "2-1", "f", "v")) == b"2-1"


def test_xadd_trimming_options(conn):
    for i in range(1, 11):
        conn.cmd("XADD", "s", "MAXLEN", "5", f"{i}-0", "f", i)
    assert conn.cmd("XLEN", "s") == b":5\r\n"
    assert parse(conn.cmd("XRANGE", "s", "-", "+"))[0][0] == b"6-0"
    conn.cmd("XADD", "s", "MINID", "=", "9", "11-0", "f", "v")
    assert conn.cmd("XLEN", "s") == b":3\r\n"
    assert conn.cmd("XADD", "s", "MAXLEN", "-1", "*", "f", "v") == b"-ERR The MAXLEN argument must be >= 0.\r\n"
    assert conn.cmd("XADD", "s", "MAXLEN", "1", "LIMIT", "1", "*", "f", "v") == (
        b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n")
    assert conn.cmd("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v") == (
        b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n")
    assert conn.cmd("XADD", "s", "LIMIT", "1", "*", "f", "v") == (
        b"-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n")
    assert conn.cmd("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "*", "f", "v") == (
        b"-ERR The LIMIT argument must be >= 0.\r\n")


def test_approx_trimming_keeps_whole_nodes(conn):
    conn.cmd("CONFIG", "SET", "stream-node-max-entries", "10")
    for i in range(1, 101):
        conn.cmd("XADD", "s", f"{i}-0", "f", "v")
    assert conn.cmd("XTRIM", "s", "MAXLEN", "~", "55") == b":40\r\n"
    assert conn.cmd("XLEN", "s") == b":60\r\n"
    assert conn.cmd("XTRIM", "s", "MAXLEN", "~", "5", "LIMIT", "30") == b":30\r\n"
    assert conn.cmd("XTRIM", "s", "MINID", "~", "95") == b":20\r\n"
    assert conn.cmd("XTRIM", "s", "MINID", "95") == b":4\r\n"
    assert parse(conn.cmd("XRANGE", "s", "-", "+", "COUNT", "1"))[0][0] == b"95-0"
    conn.cmd("CONFIG", "SET", "stream-node-max-entries", "100")


def test_xtrim_errors_and_missing_key(conn):
    assert conn.cmd("XTRIM", "nokey", "MAXLEN", "1") == b":0\r\n"
    assert conn.cmd("XTRIM", "nokey", "FOO", "1") == b"-ERR syntax error\r\n"
    assert conn.cmd("XTRIM", "nokey", "LIMIT", "1", "x") == b"-ERR syntax error\r\n"
    assert conn.cmd("XTRIM", "nokey", "MINID", "x") == BAD_ID


def test_xrange_bounds_and_count(s3):
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "-", "+"))] == [b"1-0", b"2-0", b"3-0"]
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "(1-0", "+"))] == [b"2-0", b"3-0"]
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "-", "(3-0"))] == [b"1-0", b"2-0"]
    # an incomplete exclusive end excludes only <ms>-<max seq>
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "-", "(3"))] == [b"1-0", b"2-0", b"3-0"]
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "2", "2"))] == [b"2-0"]
    assert [e[0] for e in parse(s3.cmd("XREVRANGE", "s", "+", "-", "COUNT", "2"))] == [b"3-0", b"2-0"]
    assert [e[0] for e in parse(s3.cmd("XREVRANGE", "s", "(3-0", "-"))] == [b"2-0", b"1-0"]
    assert parse(s3.cmd("XRANGE", "s", "-", "+", "COUNT", "1")) == [[b"1-0", [b"a", b"1"]]]
    assert s3.cmd("XRANGE", "s", "-", "+", "COUNT", "0") == b"*-1\r\n"
    assert s3.cmd("XRANGE", "s", "3", "1") == b"*0\r\n"
    assert s3.cmd("XRANGE", "nokey", "-", "+") == b"*0\r\n"
    assert s3.cmd("XRANGE", "s", "(-", "+") == BAD_ID
    assert s3.cmd("XRANGE", "s", "-", "(0-0") == b"-ERR invalid end ID for the interval\r\n"
    top = 2**64 - 1
    assert s3.cmd("XRANGE", "s", f"({top}-{top}", "+") == b"-ERR invalid start ID for the interval\r\n"
    assert s3.cmd("XRANGE", "s", "-", "+", "COUNT") == b"-ERR syntax error\r\n"


def test_xdel_and_first_entry(s3):
    assert s3.cmd("XDEL", "s", "2-0", "9-0", "2-0") == b":1\r\n"
    assert [e[0] for e in parse(s3.cmd("XRANGE", "s", "-", "+"))] == [b"1-0", b"3-0"]
    assert s3.cmd("XDEL", "s", "1-0", "x") == BAD_ID
    assert s3.cmd("XLEN", "s") == b":2\r\n"
    assert s3.cmd("XDEL", "s", "1-0", "3-0") == b":2\r\n"
    assert s3.cmd("XLEN", "s") == b":0\r\n"
    assert s3.cmd("EXISTS", "s") == b":1\r\n"   # an empty stream stays
    assert s3.cmd("XADD", "s", "3-0", "f", "v") == TOP
    assert s3.cmd("XDEL", "nokey", "1-0") == b":0\r\n"


def test_xsetid(s3):
    assert s3.cmd("XSETID", "s", "2-0") == b"-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"
    assert s3.cmd("XSETID", "s", "5-0", "ENTRIESADDED", "2") == (
        b"-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n")
    assert s3.cmd("XSETID", "s", "5-0", "ENTRIESADDED", "-1") == b"-ERR entries_added must be positive\r\n"
    assert s3.cmd("XSETID", "s", "5-0", "MAXDELETEDID", "6-0") == (
        b"-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n")
    assert s3.cmd("XSETID", "s", "5-0", "FOO") == b"-ERR syntax error\r\n"
    assert s3.cmd("XSETID", "nokey", "5-0") == b"-ERR no such key\r\n"
    assert s3.cmd("XSETID", "s", "5-0", "ENTRIESADDED", "9", "MAXDELETEDID", "4-0") == b"+OK\r\n"
    assert s3.cmd("XADD", "s", "5-0", "f", "v") == TOP
    assert parse(s3.cmd("XADD", "s", "5-*", "f", "v")) == b"5-1"


def test_xread(s3):
    assert parse(s3.cmd("XREAD", "STREAMS", "s", "1-0")) == [[b"s", [[b"2-0", [b"b", b"2"]], [b"3-0", [b"c", b"3"]]]]]
    assert parse(s3.cmd("XREAD", "COUNT", "1", "STREAMS", "s", "nokey", "0", "0")) == [[b"s", [[b"1-0", [b"a", b"1"]]]]]
    assert s3.cmd("XREAD", "STREAMS", "s", "$") == b"*-1\r\n"
    assert s3.cmd("XREAD", "STREAMS", "s", "3-0") == b"*-1\r\n"
    assert s3.cmd("XREAD", "STREAMS", "s", "t", "0") == (
        b"-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n")
    assert s3.cmd("XREAD", "STREAMS", "s", ">") == (
        b"-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n")
    assert s3.cmd("XREAD", "COUNT", "1", "s") == b"-ERR syntax error\r\n"
    assert s3.cmd("XREAD", "STREAMS", "s", "x") == BAD_ID
    s3.cmd("SET", "str", "v")
    assert s3.cmd("XREAD", "STREAMS", "s", "str", "0", "0") == WRONGTYPE
    assert s3.cmd("HELLO", "3").startswith(b"%")
    assert s3.cmd("XREAD", "COUNT", "1", "STREAMS", "s", "2") == (
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
    assert s3.cmd("XREAD", "STREAMS", "s", "$") == b"_\r\n"


def test_xread_block_served_when_ready(s3):
    # data already there: served at once, as Redis does before it would block
    assert parse(s3.cmd("XREAD", "BLOCK", "0", "COUNT", "1", "STREAMS", "s", "0")) == [[b"s", [[b"1-0", [b"a", b"1"]]]]]
    assert s3.cmd("XREAD", "BLOCK", "-1", "STREAMS", "s", "0") == b"-ERR timeout is negative\r\n"
    assert s3.cmd("XREAD", "BLOCK", "x", "STREAMS", "s", "0") == b"-ERR timeout is not an integer or out of range\r\n"
    # inside EXEC nothing blocks: a null reply, as if the timeout passed
    assert s3.cmd("MULTI") == b"+OK\r\n"
    assert s3.cmd("XREAD", "BLOCK", "0", "STREAMS", "s", "$") == b"+QUEUED\r\n"
    assert s3.cmd("EXEC") == b"*1\r\n*-1\r\n"
    assert s3.cmd("EVAL", "return redis.call('xread', 'BLOCK', '0', 'STREAMS', KEYS[1], '0')", "1", "s").startswith(
        b"-ERR xread command is not allowed with BLOCK option from scripts")


def test_type_encoding_wrongtype(s3):
    assert s3.cmd("TYPE", "s") == b"+stream\r\n"
    assert s3.cmd("OBJECT", "ENCODING", "s") == b"$6\r\nstream\r\n"
    assert s3.cmd("GET", "s") == WRONGTYPE
    assert s3.cmd("LPUSH", "s", "x") == WRONGTYPE
    s3.cmd("SET", "str", "v")
    for cmd in (("XADD", "str", "*", "f", "v"), ("XRANGE", "str", "-", "+"), ("XREVRANGE", "str", "+", "-"),
                ("XLEN", "str"), ("XDEL", "str", "1-0"), ("XTRIM", "str", "MAXLEN", "1"),
                ("XSETID", "str", "1-0")):
        assert s3.cmd(*cmd) == WRONGTYPE, cmd
    assert parse(s3.cmd("SCAN", "0", "TYPE", "stream")) == [b"0", [b"s"]]


def test_generic_key_commands(s3):
    assert s3.cmd("RENAME", "s", "t") == b"+OK\r\n"
    assert s3.cmd("XLEN", "t") == b":3\r\n"
    assert s3.cmd("COPY", "t", "u") == b":1\r\n"
    s3.cmd("XADD", "u", "4-0", "f", "v")
    assert s3.cmd("XLEN", "t") == b":3\r\n" and s3.cmd("XLEN", "u") == b":4\r\n"
    assert s3.cmd("MOVE", "u", "1") == b":1\r\n"
    s3.cmd("SELECT", "1")
    assert s3.cmd("XLEN", "u") == b":4\r\n"
    s3.cmd("SELECT", "0")
    assert s3.cmd("PEXPIRE", "t", "1") == b":1\r\n"
    import time
    time.sleep(0.05)
    assert s3.cmd("EXISTS", "t") == b":0\r\n"
    s3.cmd("XADD", "d", "1-0", "f", "v")
    assert s3.cmd("DEL", "d") == b":1\r\n"


def test_keyspace_events(server):
    r = server.client()
    r.config_set("notify-keyspace-events", "KEt")
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:s")
    p.get_message(timeout=1)
    r.execute_command("XADD", "s", "MAXLEN", "1", "1-0", "f", "v")
    r.execute_command("XADD", "s", "MAXLEN", "1", "2-0", "f", "v")
    r.execute_command("XDEL", "s", "2-0")
    r.execute_command("XADD", "s", "3-0", "f", "v")
    r.execute_command("XTRIM", "s", "MAXLEN", "0")
    r.execute_command("XSETID", "s", "9-0")
    got = []
    for _ in range(7):
        m = p.get_message(timeout=1)
        got.append(m["data"])
    assert got == [b"xadd", b"xadd", b"xtrim", b"xdel", b"xadd", b"xtrim", b"xsetid"]
    r.config_set("notify-keyspace-events", "")
    p.close()


def test_debug_digest_value_matches_reference(s3, reference_redis):
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    for i, f in ((1, b"a"), (2, b"b"), (3, b"c")):
        ref.cmd("XADD", "s", f"{i}-0", f, i)
    assert s3.cmd("DEBUG", "DIGEST-VALUE", "s") == ref.cmd("DEBUG", "DIGEST-VALUE", "s")


def random_command(rng):
    key = rng.choice(["s", "s", "t"])
    def rid():
        return f"{rng.randint(0, 40)}-{rng.randint(0, 3)}" if rng.random() < 0.8 else str(rng.randint(0, 40))
    def bound():
        return rng.choice(["-", "+", rid(), "(" + rid()])
    k = rng.random()
    if k < 0.35:
        trim = []
        if rng.random() < 0.3:
            trim = [rng.choice(["MAXLEN", "MINID"]), rng.choice(["~", "=", None])]
            trim = [t for t in trim if t] + [str(rng.randint(0, 8)) if trim[0] == "MAXLEN" else rid()]
        idv = rng.choice([rid(), f"{rng.randint(0, 40)}-*"])
        fields = []
        for _ in range(rng.randint(1, 3)):
            fields += [rng.choice(["a", "bb", "f" * rng.randint(1, 30)]), str(rng.randint(0, 10**6))]
        return ["XADD", key, *trim, idv, *fields]
    if k < 0.5:
        return ["XRANGE", key, bound(), bound(), *(["COUNT", str(rng.randint(-1, 5))] if rng.random() < 0.4 else [])]
    if k < 0.6:
        return ["XREVRANGE", key, bound(), bound(), *(["COUNT", str(rng.randint(-1, 5))] if rng.random() < 0.4 else [])]
    if k < 0.7:
        return ["XDEL", key, *[rid() for _ in range(rng.randint(1, 3))]]
    if k < 0.78:
        return ["XTRIM", key, rng.choice(["MAXLEN", "MINID"]), rng.choice(["~", "="]),
                str(rng.randint(0, 10)) if rng.random() < 0.5 else rid()]
    if k < 0.85:
        return ["XLEN", key]
    if k < 0.93:
        return ["XREAD", "COUNT", str(rng.randint(0, 4)), "STREAMS", "s", "t", rid(), rng.choice(["$", rid()])]
    return ["XSETID", key, rid()]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_commands_match_reference(conn, reference_redis, seed):
    rng = random.Random(seed)
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    for node_max in ("3", "100"):
        conn.cmd("CONFIG", "SET", "stream-node-max-entries", node_max)
        ref.cmd("CONFIG", "SET", "stream-node-max-entries", node_max)
        for proto in ("2", "3"):
            conn.cmd("HELLO", proto)
            ref.cmd("HELLO", proto)
            for _ in range(400):
                cmd = random_command(rng)
                assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd
            assert conn.cmd("DEBUG", "DIGEST") == ref.cmd("DEBUG", "DIGEST")
    conn.cmd("CONFIG", "SET", "stream-node-max-entries", "100")
    ref.cmd("CONFIG", "SET", "stream-node-max-entries", "100")


def test_xinfo_matches_reference(conn, reference_redis):
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    cmds = [("XADD", "s", "1-0", "a", "1"), ("XADD", "s", "2-0", "a", "1", "b", "2"), ("XADD", "s", "3-0", "c", "3"),
            ("XDEL", "s", "1-0"), ("XDEL", "s", "3-0"), ("XADD", "e", "MAXLEN", "0", "5-0", "f", "v")]
    for cmd in cmds:
        assert conn.cmd(*cmd) == ref.cmd(*cmd)
    for proto in ("2", "3"):
        conn.cmd("HELLO", proto)
        ref.cmd("HELLO", proto)
        for cmd in (("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
                    ("XINFO", "STREAM", "e"), ("XINFO", "STREAM", "s", "FULL", "COUNT"), ("XINFO", "STREAM", "s", "X"),
                    ("XINFO", "STREAM", "nokey"), ("XINFO", "GROUPS", "s"), ("XINFO", "CONSUMERS", "s", "g"),
                    ("XINFO", "HELP"), ("XINFO", "FOO")):
            assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd


def test_auto_ids_follow_the_clock_latchd_only(latchd_factory):
    c = latchd_factory("--enable-clock-control", "yes").raw()
    assert c.cmd("LATCHD.CLOCK", "FREEZE") == b"+OK\r\n"
    now = parse(c.cmd("LATCHD.CLOCK", "GET"))
    assert [parse(c.cmd("XADD", "s", "*", "f", "v")) for _ in range(3)] == [
        f"{now}-{i}".encode() for i in range(3)]
    later = parse(c.cmd("LATCHD.CLOCK", "ADVANCE", 1500))
    assert later == now + 1500
    assert parse(c.cmd("XADD", "s", "*", "f", "v")) == f"{later}-0".encode()
    # an explicit ID in the future: auto IDs go on from it, not back in time
    assert parse(c.cmd("XADD", "s", f"{later + 10}-5", "f", "v")) == f"{later + 10}-5".encode()
    assert parse(c.cmd("XADD", "s", "*", "f", "v")) == f"{later + 10}-6".encode()
