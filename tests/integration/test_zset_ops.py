"""Sorted-set commands over several keys, into a destination or by chance:
ZUNION ZINTER ZDIFF (and STORE forms: WEIGHTS, AGGREGATE, WITHSCORES, inf
arithmetic), ZINTERCARD, ZRANGESTORE, ZLEXCOUNT, ZMPOP, ZRANDMEMBER, ZSCAN;
Redis 7.0's replies, error texts, encodings and keyspace events, run against
latchd and redis-server alike."""

import collections

import pytest

from resp_util import parse
import script_util as su
from script_util import error, gone

WRONGTYPE = error(su.WRONGTYPE)
SYNTAX = error("ERR syntax error")


def flat(conn, *args):
    return parse(conn.cmd(*args))


def fill(conn):
    conn.cmd("ZADD", "a", 1, "x", 2, "y", 3, "z")
    conn.cmd("ZADD", "b", 10, "y", 20, "z", 30, "w")


# ---------------------------------------------------------------- ZUNION / ZINTER / ZDIFF

@pytest.mark.parametrize("args,want", [
    (("ZUNION", 2, "a", "b", "WITHSCORES"), [b"x", b"1", b"y", b"12", b"z", b"23", b"w", b"30"]),
    (("ZUNION", 3, "a", "b", "nokey"), [b"x", b"y", b"z", b"w"]),
    (("ZUNION", 2, "a", "b", "WEIGHTS", 2, 3, "WITHSCORES"),
     [b"x", b"2", b"y", b"34", b"z", b"66", b"w", b"90"]),
    (("ZUNION", 2, "a", "b", "AGGREGATE", "MIN", "WITHSCORES"),
     [b"x", b"1", b"y", b"2", b"z", b"3", b"w", b"30"]),
    (("ZUNION", 2, "a", "b", "AGGREGATE", "MAX", "WITHSCORES"),
     [b"x", b"1", b"y", b"10", b"z", b"20", b"w", b"30"]),
    (("ZINTER", 2, "a", "b", "WITHSCORES"), [b"y", b"12", b"z", b"23"]),
    (("ZINTER", 2, "a", "b", "WEIGHTS", 1, -1, "WITHSCORES"), [b"z", b"-17", b"y", b"-8"]),
    (("ZINTER", 2, "a", "nokey"), []),
    (("ZDIFF", 2, "a", "b", "WITHSCORES"), [b"x", b"1"]),
    (("ZDIFF", 2, "b", "a", "WITHSCORES"), [b"w", b"30"]),
    (("ZDIFF", 2, "a", "a"), []),
    (("ZDIFF", 2, "nokey", "a"), []),
    (("ZINTERCARD", 2, "a", "b"), 2),
    (("ZINTERCARD", 2, "a", "b", "LIMIT", 1), 1),
    (("ZINTERCARD", 2, "a", "b", "LIMIT", 0), 2),
    (("ZINTERCARD", 1, "nokey"), 0),
])
def test_set_operations(conn, args, want):
    fill(conn)
    assert flat(conn, *args) == want


def test_infinities(conn):
    conn.cmd("ZADD", "p", "inf", "m")
    conn.cmd("ZADD", "n", "-inf", "m")
    # inf + -inf is 0 by Redis's convention, as is 0 * inf from a weight
    assert flat(conn, "ZUNION", 2, "p", "n", "WITHSCORES") == [b"m", b"0"]
    assert flat(conn, "ZINTER", 2, "p", "n", "WITHSCORES") == [b"m", b"0"]
    assert flat(conn, "ZUNION", 1, "p", "WEIGHTS", 0, "WITHSCORES") == [b"m", b"0"]
    assert flat(conn, "ZINTER", 2, "p", "n", "AGGREGATE", "MIN", "WITHSCORES") == [b"m", b"-inf"]


def test_withscores_resp3(conn):
    fill(conn)
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert parse(conn.cmd("ZINTER", 2, "a", "b", "WITHSCORES"))[0] == [b"y", 12.0]


@pytest.mark.parametrize("args,err", [
    (("ZUNION", 0, "a"), "ERR at least 1 input key is needed for 'zunion' command"),
    (("ZINTERSTORE", "d", 0, "a"), "ERR at least 1 input key is needed for 'zinterstore' command"),
    (("ZUNION", "x", "a"), su.NOT_INTEGER),
    (("ZUNION", 3, "a", "b"), "ERR syntax error"),
    (("ZUNION", 1, "a", "WEIGHTS"), "ERR syntax error"),
    (("ZUNION", 1, "a", "WEIGHTS", "x"), "ERR weight value is not a float"),
    (("ZUNION", 1, "a", "WEIGHTS", "nan"), "ERR weight value is not a float"),
    (("ZUNION", 1, "a", "AGGREGATE", "AVG"), "ERR syntax error"),
    (("ZDIFF", 1, "a", "WEIGHTS", 1), "ERR syntax error"),
    (("ZUNIONSTORE", "d", 1, "a", "WITHSCORES"), "ERR syntax error"),
    (("ZINTERCARD", 1, "a", "WITHSCORES"), "ERR syntax error"),
    (("ZINTERCARD", 1, "a", "LIMIT", -1), "ERR LIMIT can't be negative"),
    (("ZINTERCARD", 1, "a", "LIMIT", "x"), "ERR LIMIT can't be negative"),
    (("ZUNION", 2, "a", "s"), su.WRONGTYPE),
])
def test_set_operation_errors(conn, args, err):
    fill(conn)
    conn.cmd("SET", "s", "v")
    assert conn.cmd(*args) == error(err)


def test_store_forms_events_and_encodings(conn, keyevents):
    fill(conn)
    conn.cmd("SET", "d", "old")
    conn.cmd("EXPIRE", "d", 100)
    keyevents.take()
    assert conn.cmd("ZUNIONSTORE", "d", 2, "a", "b") == b":4\r\n"
    assert conn.cmd("TTL", "d") == b":-1\r\n"             # setKey drops the TTL
    assert conn.cmd("OBJECT", "ENCODING", "d") == b"$8\r\nlistpack\r\n"
    assert conn.cmd("ZINTERSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2) == b":2\r\n"
    assert flat(conn, "ZRANGE", "d", 0, -1, "WITHSCORES") == [b"y", b"22", b"z", b"43"]
    assert conn.cmd("ZDIFFSTORE", "d", 2, "a", "b") == b":1\r\n"
    assert conn.cmd("ZDIFFSTORE", "d", 2, "a", "a") == b":0\r\n"
    gone(conn, "d")
    assert conn.cmd("ZDIFFSTORE", "d", 2, "a", "a") == b":0\r\n"   # no key: no event
    keyevents.expect(("zunionstore", "d"), ("zinterstore", "d"),
                     ("zdiffstore", "d"), ("del", "d"))
    # an input as destination, and the skiplist past the configured size
    assert conn.cmd("ZUNIONSTORE", "a", 2, "a", "b") == b":4\r\n"
    assert flat(conn, "ZRANGE", "a", 0, -1) == [b"x", b"y", b"z", b"w"]
    assert conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", 2) == b"+OK\r\n"
    try:
        assert conn.cmd("ZUNIONSTORE", "big", 1, "b") == b":3\r\n"
        assert conn.cmd("OBJECT", "ENCODING", "big") == b"$8\r\nskiplist\r\n"
        assert conn.cmd("ZDIFFSTORE", "small", 2, "a", "b") == b":1\r\n"
        assert conn.cmd("OBJECT", "ENCODING", "small") == b"$8\r\nlistpack\r\n"
    finally:
        conn.cmd("CONFIG", "SET", "zset-max-listpack-entries", 128)


def test_store_overwrites_other_types(conn):
    fill(conn)
    conn.cmd("RPUSH", "l", "1")
    assert conn.cmd("ZINTERSTORE", "l", 2, "a", "b") == b":2\r\n"
    assert conn.cmd("TYPE", "l") == b"+zset\r\n"


# ---------------------------------------------------------------- ZRANGESTORE / ZLEXCOUNT

def test_zrangestore(conn, keyevents):
    fill(conn)
    keyevents.take()
    assert conn.cmd("ZRANGESTORE", "d", "b", 0, 1) == b":2\r\n"
    assert flat(conn, "ZRANGE", "d", 0, -1, "WITHSCORES") == [b"y", b"10", b"z", b"20"]
    assert conn.cmd("ZRANGESTORE", "d", "b", "(10", "+inf", "BYSCORE", "LIMIT", 0, 1) == b":1\r\n"
    assert flat(conn, "ZRANGE", "d", 0, -1) == [b"z"]
    assert conn.cmd("ZRANGESTORE", "d", "b", "+", "-", "BYLEX", "REV") == b":3\r\n"
    assert conn.cmd("ZRANGESTORE", "d", "b", 5, 6, "BYSCORE") == b":0\r\n"
    gone(conn, "d")
    assert conn.cmd("ZRANGESTORE", "d", "nokey", 0, -1) == b":0\r\n"
    keyevents.expect(("zrangestore", "d"), ("zrangestore", "d"), ("zrangestore", "d"), ("del", "d"))
    assert conn.cmd("ZRANGESTORE", "d", "b", 0, -1, "WITHSCORES") == SYNTAX
    assert conn.cmd("ZRANGESTORE", "d", "b", 0, -1, "LIMIT", 0, 1) == error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    conn.cmd("SET", "s", "v")
    assert conn.cmd("ZRANGESTORE", "d", "s", 0, -1) == WRONGTYPE


def test_zlexcount(conn):
    conn.cmd("ZADD", "z", 0, "a", 0, "b", 0, "c", 0, "d")
    assert conn.cmd("ZLEXCOUNT", "z", "-", "+") == b":4\r\n"
    assert conn.cmd("ZLEXCOUNT", "z", "[b", "(d") == b":2\r\n"
    assert conn.cmd("ZLEXCOUNT", "z", "(a", "[z") == b":3\r\n"
    assert conn.cmd("ZLEXCOUNT", "nokey", "-", "+") == b":0\r\n"
    assert conn.cmd("ZLEXCOUNT", "z", "a", "+") == error("ERR min or max not valid string range item")


# ---------------------------------------------------------------- ZMPOP

def test_zmpop(conn, keyevents):
    fill(conn)
    keyevents.take()
    assert flat(conn, "ZMPOP", 2, "nokey", "a", "MIN") == [b"a", [[b"x", b"1"]]]
    assert flat(conn, "ZMPOP", 1, "a", "MAX", "COUNT", 10) == [b"a", [[b"z", b"3"], [b"y", b"2"]]]
    keyevents.expect(("zpopmin", "a"), ("zpopmax", "a"), ("del", "a"))
    assert conn.cmd("ZMPOP", 1, "a", "MIN") == b"*-1\r\n"
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert parse(conn.cmd("ZMPOP", 1, "b", "MIN")) == [b"b", [[b"y", 10.0]]]


@pytest.mark.parametrize("args,err", [
    ((0, "a", "MIN"), "ERR numkeys should be greater than 0"),
    ((1, "a", "UP"), "ERR syntax error"),
    ((2, "a", "MIN"), "ERR syntax error"),
    ((1, "a", "MIN", "COUNT", 0), "ERR count should be greater than 0"),
    ((1, "a", "MIN", "COUNT", 1, "COUNT", 1), "ERR syntax error"),
    ((1, "s", "MIN"), su.WRONGTYPE),
])
def test_zmpop_errors(conn, args, err):
    conn.cmd("SET", "s", "v")
    assert conn.cmd("ZMPOP", *args) == error(err)


# ---------------------------------------------------------------- ZRANDMEMBER

def test_zrandmember_shapes(conn):
    fill(conn)
    assert conn.cmd("ZRANDMEMBER", "nokey") == b"$-1\r\n"
    assert conn.cmd("ZRANDMEMBER", "nokey", 3) == b"*0\r\n"
    assert conn.cmd("ZRANDMEMBER", "a", 0) == b"*0\r\n"
    assert flat(conn, "ZRANDMEMBER", "a") in ([b"x"], [b"y"], [b"z"], b"x", b"y", b"z")
    # a count covering the set: all of it, from the highest rank down
    assert flat(conn, "ZRANDMEMBER", "a", 5, "WITHSCORES") == [b"z", b"3", b"y", b"2", b"x", b"1"]
    two = flat(conn, "ZRANDMEMBER", "a", 2)
    assert len(set(two)) == 2 and set(two) <= {b"x", b"y", b"z"}
    many = flat(conn, "ZRANDMEMBER", "a", -20)
    assert len(many) == 20 and set(many) <= {b"x", b"y", b"z"}
    assert len(flat(conn, "ZRANDMEMBER", "a", -3, "WITHSCORES")) == 6
    assert conn.cmd("ZRANDMEMBER", "a", "-9223372036854775808") == error(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert conn.cmd("ZRANDMEMBER", "a", "-9223372036854770000", "WITHSCORES") == \
        error("ERR value is out of range")
    assert conn.cmd("ZRANDMEMBER", "a", 1, "WITHVALUES") == SYNTAX
    conn.cmd("SET", "s", "v")
    assert conn.cmd("ZRANDMEMBER", "s") == WRONGTYPE


@pytest.mark.parametrize("size", [10, 300])
def test_zrandmember_is_uniform(conn, size):
    conn.cmd("ZADD", "z", *[x for i in range(size) for x in (i, "m%d" % i)])
    seen = collections.Counter()
    for _ in range(20):
        got = flat(conn, "ZRANDMEMBER", "z", size // 2)
        assert len(set(got)) == size // 2
        seen.update(got)
    assert len(seen) > size * 0.6     # 20 draws of half: every member is likely seen


# ---------------------------------------------------------------- ZSCAN

def test_zscan_small_is_one_call(conn):
    conn.cmd("ZADD", "z", 1.5, "a", 0, "b", "1e20", "c", "-inf", "d")
    assert flat(conn, "ZSCAN", "z", 0) == [b"0", [b"d", b"-inf", b"b", b"0", b"a", b"1.5",
                                                b"c", b"1e+20"]]
    assert flat(conn, "ZSCAN", "z", 0, "MATCH", "[ab]") == [b"0", [b"b", b"0", b"a", b"1.5"]]
    assert flat(conn, "ZSCAN", "nokey", 0, "COUNT", "x") == [b"0", []]
    assert conn.cmd("ZSCAN", "z", 0, "COUNT", 0) == SYNTAX
    assert conn.cmd("ZSCAN", "z", 0, "TYPE", "zset") == SYNTAX
    assert conn.cmd("ZSCAN", "z", "x") == error("ERR invalid cursor")


def test_zscan_big_visits_everything(conn):
    members = {b"m%d" % i: i for i in range(500)}
    conn.cmd("ZADD", "z", *[x for m, s in members.items() for x in (s, m)])
    got, cursor, calls = {}, b"0", 0
    while True:
        cursor, items = flat(conn, "ZSCAN", "z", cursor, "COUNT", 20)
        calls += 1
        got.update({items[i]: int(items[i + 1]) for i in range(0, len(items), 2)})
        if cursor == b"0":
            break
    assert got == members and calls > 1


# ---------------------------------------------------------------- WATCH, COMMAND INFO

@pytest.mark.parametrize("cmd", [
    ("ZUNIONSTORE", "dst", 1, "a"),
    ("ZDIFFSTORE", "dst", 2, "a", "a"),          # an empty result deletes dst
    ("ZRANGESTORE", "dst", "a", 0, -1),
    ("LMOVE", "l", "dst", "LEFT", "LEFT"),
])
def test_stores_touch_watched_destination(server, conn, cmd):
    fill(conn)
    conn.cmd("RPUSH", "l", "x")
    if cmd[0] != "LMOVE":
        conn.cmd("ZADD", "dst", 1, "old")
    other = server.raw()
    other.cmd("WATCH", "dst")
    assert not conn.cmd(*cmd).startswith(b"-")
    other.cmd("MULTI")
    other.cmd("EXISTS", "dst")
    assert other.cmd("EXEC") == b"*-1\r\n"


@pytest.mark.parametrize("name,head", [
    ("zunion", [b"zunion", -3, [b"readonly", b"movablekeys"], 0, 0, 0]),
    ("zunionstore", [b"zunionstore", -4, [b"write", b"denyoom", b"movablekeys"], 1, 1, 1]),
    ("zintercard", [b"zintercard", -3, [b"readonly", b"movablekeys"], 0, 0, 0]),
    ("zmpop", [b"zmpop", -4, [b"write", b"movablekeys"], 0, 0, 0]),
    ("lmpop", [b"lmpop", -4, [b"write", b"movablekeys"], 0, 0, 0]),
    ("lmove", [b"lmove", 5, [b"write", b"denyoom"], 1, 2, 1]),
    ("zrangestore", [b"zrangestore", -5, [b"write", b"denyoom"], 1, 2, 1]),
    ("zlexcount", [b"zlexcount", 4, [b"readonly", b"fast"], 1, 1, 1]),
    ("hscan", [b"hscan", -3, [b"readonly"], 1, 1, 1]),
])
def test_command_info(conn, name, head):
    assert parse(conn.cmd("COMMAND", "INFO", name))[0][:6] == head


def test_sets_are_inputs_scored_one(r):
    r.sadd("s", "a", "b", "c")
    r.zadd("z", {"a": 2, "d": 5})
    assert r.zunion(["s", "z"], withscores=True) == [(b"b", 1.0), (b"c", 1.0), (b"a", 3.0), (b"d", 5.0)]
    assert r.zinter({"s": 3, "z": 1}, withscores=True) == [(b"a", 5.0)]
    assert r.zdiff(["s", "z"]) == [b"b", b"c"]
    assert r.zinterstore("dst", ["s", "z"], aggregate="MAX") == 1
    assert r.zrange("dst", 0, -1, withscores=True) == [(b"a", 2.0)]
    assert r.zintercard(2, ["s", "z"]) == 1
