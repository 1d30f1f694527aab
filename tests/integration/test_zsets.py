"""Sorted set commands: ZADD (NX/XX/GT/LT/CH/INCR), ZINCRBY, ZSCORE,
ZMSCORE, ZREM, ZCARD, ZCOUNT, ZRANK/ZREVRANK, ZRANGE (BYSCORE/BYLEX/REV/
LIMIT/WITHSCORES) and its older spellings, ZREMRANGEBY{SCORE,RANK,LEX},
ZPOPMIN/ZPOPMAX. Redis's order (score, then member bytes), score text
("%.17g" bulk in RESP2, a double in RESP3), range syntax, errors in
Redis's order, keyspace events, binary members, and zsets in scripts."""

import random

import pytest

from resp_util import parse
import script_util as su
from script_util import array, bulk, error, gone

WRONGTYPE = error(su.WRONGTYPE)
NOT_INT = error(su.NOT_INTEGER)
NOT_POSITIVE = error(su.NOT_POSITIVE)
NOT_FLOAT = error("ERR value is not a valid float")
RANGE_FLOAT = error("ERR min or max is not a float")
RANGE_LEX = error("ERR min or max not valid string range item")
SYNTAX = error("ERR syntax error")


def resp3(conn):
    assert conn.cmd("HELLO", "3").startswith(b"%")


# ---------------------------------------------------------------- order and scores

def test_order_is_score_then_member_bytes(conn):
    conn.cmd("ZADD", "z", 2, "b", 1, "zz", 2, "a", 2, "ab", "-inf", "low", 2, b"a\x00", 2, b"\xff")
    assert parse(conn.cmd("ZRANGE", "z", 0, -1)) == [
        b"low", b"zz", b"a", b"a\x00", b"ab", b"b", b"\xff"]
    assert conn.cmd("ZRANK", "z", "ab") == b":4\r\n"
    assert conn.cmd("ZREVRANK", "z", "ab") == b":2\r\n"
    assert conn.cmd("ZRANK", "z", "nope") == b"$-1\r\n"
    assert conn.cmd("ZRANK", "nokey", "a") == b"$-1\r\n"


# score as written, RESP2 text and RESP3 double
SCORES = [("1", b"1", b"1"), ("2.5", b"2.5", b"2.5"), ("0.1", b"0.10000000000000001", None),
          ("1e300", b"1.0000000000000001e+300", None), ("-inf", b"-inf", b"-inf"),
          ("+inf", b"inf", b"inf"), ("1700000030000", b"1700000030000", None),
          ("123456789012345678", b"1.2345678901234568e+17", None), ("-0", b"0", b"0"),
          ("5e-324", b"4.9406564584124654e-324", None), ("0x10", b"16", None),
          ("4503599627370495.5", b"4503599627370495.5", None)]


@pytest.mark.parametrize("given,text,_", SCORES, ids=[s[0] for s in SCORES])
def test_score_text(conn, given, text, _):
    assert conn.cmd("ZADD", "z", given, "m") == b":1\r\n"
    assert conn.cmd("ZSCORE", "z", "m") == bulk(text)
    assert conn.cmd("ZRANGE", "z", 0, -1, "WITHSCORES") == array("m", text)
    resp3(conn)
    assert conn.cmd("ZSCORE", "z", "m") == b",%s\r\n" % text
    assert conn.cmd("ZMSCORE", "z", "m", "x") == b"*2\r\n,%s\r\n_\r\n" % text


def test_negative_zero_kept_only_by_big_sets(conn):
    # Redis's packed form writes -0 as "0"; its skiplist keeps the sign
    assert conn.cmd("ZADD", "z", "INCR", "-0", "m") == bulk("-0")
    assert conn.cmd("ZSCORE", "z", "m") == bulk("0")
    conn.cmd("ZADD", "big", *[x for i in range(200) for x in (i, "m%d" % i)])
    conn.cmd("ZADD", "big", "-0", "neg")
    assert conn.cmd("ZSCORE", "big", "neg") == bulk("-0")


def test_bad_scores(conn):
    for bad in ("nan", "abc", "", " 1", "1 ", "1e400", "--1"):
        assert conn.cmd("ZADD", "z", bad, "m") == NOT_FLOAT, bad
    assert conn.cmd("ZADD", "z", "1e-400", "m") == NOT_FLOAT   # underflow to 0
    gone(conn, "z")


# ---------------------------------------------------------------- ZADD / ZINCRBY

def test_zadd_flags(conn, keyevents):
    steps = [
        (("ZADD", "z", "XX", 1, "a"), b":0\r\n", []),
        (("ZADD", "z", 1, "a", 2, "b"), b":2\r\n", [("zadd", "z")]),
        (("ZADD", "z", 1, "a"), b":0\r\n", []),
        (("ZADD", "z", 5, "a"), b":0\r\n", [("zadd", "z")]),
        (("ZADD", "z", "CH", 6, "a", 2, "b", 3, "c"), b":2\r\n", [("zadd", "z")]),
        (("ZADD", "z", "NX", 9, "a", 4, "d"), b":1\r\n", [("zadd", "z")]),
        (("ZADD", "z", "XX", "CH", 9, "a", 4, "e"), b":1\r\n", [("zadd", "z")]),
        (("ZADD", "z", "GT", "CH", 8, "a", 10, "b"), b":1\r\n", [("zadd", "z")]),
        (("ZADD", "z", "LT", "CH", 8, "a", 11, "b"), b":1\r\n", [("zadd", "z")]),
        (("ZADD", "z", "GT", 1, "new"), b":1\r\n", [("zadd", "z")]),
        (("ZADD", "z", "XX", "GT", 1, "nope"), b":0\r\n", []),
        (("ZADD", "z", "INCR", 2, "a"), bulk("10"), [("zincr", "z")]),
        (("ZADD", "z", "INCR", 0, "a"), bulk("10"), []),
        (("ZADD", "z", "NX", "INCR", 2, "a"), b"$-1\r\n", []),
        (("ZADD", "z", "GT", "INCR", -1, "a"), b"$-1\r\n", []),
        (("ZADD", "z", "XX", "INCR", 1, "nope"), b"$-1\r\n", []),
        (("ZINCRBY", "z", "-2.5", "a"), bulk("7.5"), [("zincr", "z")]),
        (("ZINCRBY", "z", 1, "fresh"), bulk("1"), [("zincr", "z")]),
    ]
    for cmd, want, events in steps:
        assert conn.cmd(*cmd) == want, cmd
        keyevents.expect(*events)
    assert parse(conn.cmd("ZRANGE", "z", 0, -1, "WITHSCORES")) == [
        b"fresh", b"1", b"new", b"1", b"c", b"3", b"d", b"4", b"a", b"7.5", b"b", b"10"]


def test_zadd_xx_on_missing_key_creates_nothing(conn):
    assert conn.cmd("ZADD", "nokey", "XX", 1, "a") == b":0\r\n"
    assert conn.cmd("ZADD", "nokey", "XX", "INCR", 1, "a") == b"$-1\r\n"
    gone(conn, "nokey")


def test_zadd_errors_in_redis_order(conn):
    conn.cmd("SET", "s", "x")
    conn.cmd("ZADD", "z", 1, "a")
    cases = [
        (("ZADD", "z"), b"-ERR wrong number of arguments for 'zadd' command\r\n"),
        (("ZADD", "z", 1), b"-ERR wrong number of arguments for 'zadd' command\r\n"),
        (("ZADD", "z", "NX", "XX", 1, "a"), b"-ERR XX and NX options at the same time are not compatible\r\n"),
        (("ZADD", "z", "NX", "GT", 1, "a"), b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        (("ZADD", "z", "GT", "LT", 1, "a"), b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        (("ZADD", "z", "INCR", 1, "a", 2, "b"), b"-ERR INCR option supports a single increment-element pair\r\n"),
        (("ZADD", "z", "a", "b"), NOT_FLOAT),
        (("ZADD", "z", 1, "a", "x", "b"), NOT_FLOAT),
        (("ZADD", "z", "XX", 1, "a", "NX"), SYNTAX),
        (("ZADD", "z", "NX", "XX", 1), SYNTAX),
        (("ZADD", "s", "x", "a"), NOT_FLOAT),                    # scores before the key
        (("ZADD", "s", 1, "a"), WRONGTYPE),
        (("ZINCRBY", "z", "a", "b"), NOT_FLOAT),
        (("ZINCRBY", "z", "nx", "a"), SYNTAX),                   # "nx" read as an option
        (("ZINCRBY", "s", 1, "a"), WRONGTYPE),
        (("ZINCRBY", "z", 1), b"-ERR wrong number of arguments for 'zincrby' command\r\n"),
    ]
    for cmd, want in cases:
        assert conn.cmd(*cmd) == want, cmd
    assert conn.cmd("ZRANGE", "z", 0, -1, "WITHSCORES") == array("a", "1")


def test_nan_result_is_refused(conn):
    conn.cmd("ZADD", "z", "inf", "m")
    assert conn.cmd("ZINCRBY", "z", "-inf", "m") == b"-ERR resulting score is not a number (NaN)\r\n"
    assert conn.cmd("ZADD", "z", "INCR", "-inf", "m") == b"-ERR resulting score is not a number (NaN)\r\n"
    assert conn.cmd("ZSCORE", "z", "m") == bulk("inf")


# ---------------------------------------------------------------- reads and ZREM

def test_zscore_zmscore_zcard(conn):
    conn.cmd("ZADD", "z", 1, "a", 2, b"\x00b\r\n")
    assert conn.cmd("ZSCORE", "z", b"\x00b\r\n") == bulk("2")
    assert conn.cmd("ZSCORE", "z", "x") == b"$-1\r\n"
    assert conn.cmd("ZSCORE", "nokey", "x") == b"$-1\r\n"
    assert conn.cmd("ZMSCORE", "z", "a", "x", b"\x00b\r\n") == b"*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"
    assert conn.cmd("ZMSCORE", "nokey", "a", "b") == b"*2\r\n$-1\r\n$-1\r\n"
    assert conn.cmd("ZCARD", "z") == b":2\r\n"
    assert conn.cmd("ZCARD", "nokey") == b":0\r\n"
    resp3(conn)
    assert conn.cmd("ZSCORE", "z", "x") == b"_\r\n"
    assert conn.cmd("ZMSCORE", "nokey", "a") == b"*1\r\n_\r\n"


def test_zrem(conn, keyevents):
    conn.cmd("ZADD", "z", 1, "a", 2, "b", 3, "c")
    keyevents.take()
    assert conn.cmd("ZREM", "z", "a", "x", "a") == b":1\r\n"
    assert conn.cmd("ZREM", "z", "x") == b":0\r\n"
    keyevents.expect(("zrem", "z"))
    assert conn.cmd("ZREM", "z", "b", "c", "a") == b":2\r\n"
    keyevents.expect(("zrem", "z"), ("del", "z"))
    gone(conn, "z")
    assert conn.cmd("ZREM", "nokey", "a") == b":0\r\n"


def test_binary_members_like_permit_ids(conn):
    ids = [bytes([i, 0, 13, 10, 255 - i]) + b"\x00" * 11 for i in range(5)]   # 16 raw bytes
    for i, pid in enumerate(ids):
        assert conn.cmd("ZADD", "z", 1000 + i, pid) == b":1\r\n"
    assert conn.cmd("ZRANGEBYSCORE", "z", 0, 1002, "LIMIT", 0, -1) == array(*ids[:3])
    assert conn.cmd("ZREM", "z", ids[0], ids[1]) == b":2\r\n"
    assert conn.cmd("ZRANGE", "z", 0, 0, "WITHSCORES") == array(ids[2], "1002")


# ---------------------------------------------------------------- ranges

@pytest.fixture
def z5(conn):
    conn.cmd("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
    return conn


@pytest.mark.parametrize("args,want", [
    (("ZRANGE", "z", 0, -1), "abcde"),
    (("ZRANGE", "z", -2, 100), "de"),
    (("ZRANGE", "z", 3, 1), ""),
    (("ZRANGE", "z", 0, 1, "REV"), "ed"),
    (("ZREVRANGE", "z", -2, -1), "ba"),
    (("ZRANGE", "z", 2, 4, "BYSCORE"), "bcd"),
    (("ZRANGE", "z", "(2", "(4", "BYSCORE"), "c"),
    (("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", 1, 2), "bc"),
    (("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 1, 2), "dc"),
    (("ZRANGE", "z", 4, 2, "BYSCORE", "REV"), "dcb"),
    (("ZRANGE", "z", 2, 4, "BYSCORE", "REV"), ""),
    (("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", 1, -1), "bcde"),
    (("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", -1, 1), ""),
    (("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", 5, 1), ""),
    (("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", 1, 0), ""),
    (("ZRANGEBYSCORE", "z", "", "1"), "a"),          # strtod reads "" as 0
    (("ZRANGEBYSCORE", "z", "(", "3"), "abc"),
    (("ZRANGEBYSCORE", "z", " 1", "0x3"), "abc"),
    (("ZRANGEBYSCORE", "z", b"2\x00junk", "3"), "bc"),   # a C string ends at NUL
    (("ZRANGEBYSCORE", "z", 3, 3), "c"),
    (("ZRANGEBYSCORE", "z", "(3", 3), ""),
    (("ZRANGEBYSCORE", "z", 4, 2), ""),
    (("ZREVRANGEBYSCORE", "z", "(5", 2, "LIMIT", 0, 2), "dc"),
    (("ZRANGE", "z", "0", "-1", "LIMIT", 0, -1), "abcde"),    # LIMIT x -1 is no limit
])
def test_zrange_variants(z5, args, want):
    assert z5.cmd(*args) == array(*want)


def test_zrange_withscores_resp2_and_resp3(z5):
    assert z5.cmd("ZRANGE", "z", 0, 1, "WITHSCORES") == array("a", "1", "b", "2")
    assert z5.cmd("ZREVRANGEBYSCORE", "z", "+inf", 4, "WITHSCORES") == array("e", "5", "d", "4")
    resp3(z5)
    assert z5.cmd("ZRANGE", "z", 0, 1, "WITHSCORES") == (
        b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n")
    assert z5.cmd("ZRANGEBYSCORE", "z", 5, 5, "WITHSCORES", "LIMIT", 0, 1) == b"*1\r\n*2\r\n$1\r\ne\r\n,5\r\n"
    assert z5.cmd("ZRANGE", "z", 0, 1) == array("a", "b")
    assert z5.cmd("ZRANGE", "nokey", 0, 1, "WITHSCORES") == b"*0\r\n"


def test_zrange_bylex(conn):
    conn.cmd("ZADD", "z", *[x for m in ("a", "aa", "ab", "b", "c") for x in (0, m)])
    cases = [(("-", "+"), "a aa ab b c"), (("[aa", "(b"), "aa ab"), (("(a", "[b"), "aa ab b"),
             (("+", "-"), ""), (("-", "-"), ""), (("[b", "[a"), ""), ((b"-\x00x", "[a"), "a")]
    for (lo, hi), want in cases:
        assert conn.cmd("ZRANGEBYLEX", "z", lo, hi) == array(*want.split()), (lo, hi)
        assert conn.cmd("ZRANGE", "z", lo, hi, "BYLEX") == array(*want.split()), (lo, hi)
    assert conn.cmd("ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", 1, 2) == array("b", "ab")
    assert conn.cmd("ZRANGE", "z", "[c", "[a", "BYLEX", "REV") == array("c", "b", "ab", "aa", "a")
    assert conn.cmd("ZRANGEBYLEX", "z", "a", "+") == RANGE_LEX
    assert conn.cmd("ZRANGEBYLEX", "z", "", "+") == RANGE_LEX
    assert conn.cmd("ZRANGEBYLEX", "z", "-x", "+") == RANGE_LEX
    assert conn.cmd("ZREMRANGEBYLEX", "z", "[aa", "[ab") == b":2\r\n"
    assert conn.cmd("ZRANGE", "z", 0, -1) == array("a", "b", "c")


def test_zrange_errors_in_redis_order(conn):
    conn.cmd("SET", "s", "x")
    cases = [
        (("ZRANGE", "nokey", 0, 1, "LIMIT", 0, 1),
         b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"),
        (("ZRANGE", "nokey", 0, 1, "LIMIT", "a", 1), NOT_INT),
        (("ZRANGE", "nokey", 0, 1, "LIMIT", 0), SYNTAX),
        (("ZRANGE", "nokey", "a", 1), NOT_INT),
        (("ZRANGE", "nokey", 0, 1, "BYLEX"), RANGE_LEX),
        (("ZRANGE", "nokey", "[a", "[b", "BYSCORE"), RANGE_FLOAT),
        (("ZRANGE", "nokey", "[a", "[b", "BYLEX", "WITHSCORES"),
         b"-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
        (("ZRANGE", "nokey", "[a", "[b", "BYLEX", "BYSCORE"), SYNTAX),
        (("ZRANGE", "nokey", 0, 1, "REV", "REV"), SYNTAX),
        (("ZRANGEBYSCORE", "nokey", 0, 1, "REV"), SYNTAX),
        (("ZRANGEBYSCORE", "nokey", 0, 1, "BYSCORE"), SYNTAX),
        (("ZRANGEBYSCORE", "nokey", "a", 1), RANGE_FLOAT),
        (("ZRANGEBYSCORE", "nokey", "nan", 1), RANGE_FLOAT),
        (("ZRANGEBYSCORE", "nokey", "1 ", 1), RANGE_FLOAT),
        (("ZRANGEBYSCORE", "s", 0, 1), WRONGTYPE),
        (("ZRANGEBYSCORE", "s", "x", 1), RANGE_FLOAT),
        (("ZRANGE", "nokey", 0, 1, "BYSCORE", "WITHSCORES", "LIMIT", 0, 1, "REV"), b"*0\r\n"),
        (("ZREVRANGE", "nokey", 0, 1, "BYSCORE"), SYNTAX),
        (("ZRANGE", "nokey", 0), b"-ERR wrong number of arguments for 'zrange' command\r\n"),
    ]
    for cmd, want in cases:
        assert conn.cmd(*cmd) == want, cmd


def test_zcount(z5):
    assert z5.cmd("ZCOUNT", "z", "-inf", "+inf") == b":5\r\n"
    assert z5.cmd("ZCOUNT", "z", "(1", "(5") == b":3\r\n"
    assert z5.cmd("ZCOUNT", "z", 6, 9) == b":0\r\n"
    assert z5.cmd("ZCOUNT", "nokey", 0, 1) == b":0\r\n"
    assert z5.cmd("ZCOUNT", "nokey", "a", "b") == RANGE_FLOAT
    z5.cmd("SET", "s", "x")
    assert z5.cmd("ZCOUNT", "s", 0, 1) == WRONGTYPE


def test_zremrange(z5, keyevents):
    keyevents.take()
    assert z5.cmd("ZREMRANGEBYSCORE", "z", 7, 9) == b":0\r\n"
    assert z5.cmd("ZREMRANGEBYRANK", "z", 7, 9) == b":0\r\n"
    keyevents.expect()
    assert z5.cmd("ZREMRANGEBYSCORE", "z", "(1", 2) == b":1\r\n"
    assert z5.cmd("ZREMRANGEBYRANK", "z", -2, -2) == b":1\r\n"
    assert z5.cmd("ZRANGE", "z", 0, -1) == array("a", "c", "e")
    keyevents.expect(("zremrangebyscore", "z"), ("zremrangebyrank", "z"))
    assert z5.cmd("ZREMRANGEBYRANK", "z", 0, -1) == b":3\r\n"
    keyevents.expect(("zremrangebyrank", "z"), ("del", "z"))
    gone(z5, "z")
    z5.cmd("SET", "s", "x")
    for cmd, want in [(("ZREMRANGEBYRANK", "nokey", "a", 1), NOT_INT),
                      (("ZREMRANGEBYRANK", "nokey", 0, 1), b":0\r\n"),
                      (("ZREMRANGEBYSCORE", "nokey", "x", 1), RANGE_FLOAT),
                      (("ZREMRANGEBYSCORE", "s", 0, 1), WRONGTYPE),
                      (("ZREMRANGEBYRANK", "s", "a", 1), NOT_INT),
                      (("ZREMRANGEBYLEX", "s", "a", "b"), RANGE_LEX)]:
        assert z5.cmd(*cmd) == want, cmd


# ---------------------------------------------------------------- ZPOPMIN / ZPOPMAX

def test_zpop(z5, keyevents):
    keyevents.take()
    assert z5.cmd("ZPOPMIN", "z") == array("a", "1")
    assert z5.cmd("ZPOPMAX", "z", 2) == array("e", "5", "d", "4")
    assert z5.cmd("ZPOPMIN", "z", 0) == b"*0\r\n"
    keyevents.expect(("zpopmin", "z"), ("zpopmax", "z"))
    resp3(z5)
    assert z5.cmd("ZPOPMIN", "z") == b"*2\r\n$1\r\nb\r\n,2\r\n"
    assert z5.cmd("ZPOPMIN", "z", 5) == b"*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    keyevents.expect(("zpopmin", "z"), ("zpopmin", "z"), ("del", "z"))
    gone(z5, "z")
    assert z5.cmd("ZPOPMIN", "z") == b"*0\r\n"
    assert z5.cmd("ZPOPMAX", "z", 3) == b"*0\r\n"


def test_zpop_errors(conn):
    conn.cmd("SET", "s", "x")
    for cmd, want in [(("ZPOPMIN", "s", 0), WRONGTYPE), (("ZPOPMIN", "s", -1), NOT_POSITIVE),
                      (("ZPOPMIN", "s", "abc"), NOT_POSITIVE), (("ZPOPMIN", "s", 1, 2), SYNTAX),
                      (("ZPOPMAX", "nokey", 1, 2), SYNTAX),
                      (("ZPOPMIN",), b"-ERR wrong number of arguments for 'zpopmin' command\r\n")]:
        assert conn.cmd(*cmd) == want, cmd


# ---------------------------------------------------------------- types

ZSET_COMMANDS = [("ZADD", "k", 1, "m"), ("ZINCRBY", "k", 1, "m"), ("ZSCORE", "k", "m"),
                 ("ZMSCORE", "k", "m"), ("ZREM", "k", "m"), ("ZCARD", "k"), ("ZCOUNT", "k", 0, 1),
                 ("ZRANK", "k", "m"), ("ZREVRANK", "k", "m"), ("ZRANGE", "k", 0, 1),
                 ("ZREVRANGE", "k", 0, 1), ("ZRANGEBYSCORE", "k", 0, 1), ("ZREVRANGEBYSCORE", "k", 1, 0),
                 ("ZRANGEBYLEX", "k", "-", "+"), ("ZREVRANGEBYLEX", "k", "+", "-"),
                 ("ZREMRANGEBYRANK", "k", 0, 1), ("ZREMRANGEBYSCORE", "k", 0, 1),
                 ("ZREMRANGEBYLEX", "k", "-", "+"), ("ZPOPMIN", "k"), ("ZPOPMAX", "k", 2)]


@pytest.mark.parametrize("cmd", ZSET_COMMANDS, ids=[c[0] for c in ZSET_COMMANDS])
def test_wrongtype_on_other_types(conn, cmd):
    for setup in (("SET", "k", "x"), ("HSET", "k", "f", "v"), ("RPUSH", "k", "v")):
        conn.cmd("DEL", "k")
        conn.cmd(*setup)
        assert conn.cmd(*cmd) == WRONGTYPE, setup


def test_zset_as_a_key(conn):
    conn.cmd("ZADD", "z1", 1, "a")
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("TYPE", "z1") == b"+zset\r\n"
    assert parse(conn.cmd("SCAN", 0, "TYPE", "zset", "COUNT", 100))[1] == [b"z1"]
    assert conn.cmd("RENAME", "z1", "z2") == b"+OK\r\n"
    assert conn.cmd("EXPIRE", "z2", 100) == b":1\r\n"
    assert conn.cmd("ZADD", "z2", 2, "b") == b":1\r\n"
    assert 0 < parse(conn.cmd("TTL", "z2")) <= 100
    assert conn.cmd("RENAME", "z2", "l") == b"+OK\r\n"
    assert conn.cmd("TYPE", "l") == b"+zset\r\n"
    assert conn.cmd("GET", "l") == WRONGTYPE
    assert conn.cmd("SET", "l", "x") == b"+OK\r\n"
    assert conn.cmd("TYPE", "l") == b"+string\r\n"


# ---------------------------------------------------------------- bigger sets

def random_step(conn, model, rng):
    """One random command on zset "big" and on a {member: score} model."""
    def ordered():
        return sorted(model.items(), key=lambda kv: (kv[1], kv[0]))

    r = rng.random()
    m = ("m%d" % rng.randrange(400)).encode()
    if rng.random() < 0.03:
        m = b"L" * 80   # past the packed form's member limit
    score = rng.randrange(60) / 4
    if r < 0.45:
        added = m not in model
        model[m] = score
        return conn.cmd("ZADD", "big", score, m), b":%d\r\n" % added
    if r < 0.6:
        had = model.pop(m, None) is not None
        return conn.cmd("ZREM", "big", m), b":%d\r\n" % had
    if r < 0.7:
        items = ordered()
        rank = [k for k, _ in items].index(m) if m in model else None
        return conn.cmd("ZRANK", "big", m), b"$-1\r\n" if rank is None else b":%d\r\n" % rank
    if r < 0.8:
        lo, hi = sorted((score, rng.randrange(60) / 4))
        got = [k for k, v in ordered() if lo <= v <= hi]
        off = rng.randrange(5)
        return (conn.cmd("ZRANGEBYSCORE", "big", lo, hi, "LIMIT", off, 20),
                array(*got[off:off + 20]))
    if r < 0.85:
        lo, hi = sorted((score, rng.randrange(60) / 4))
        victims = [k for k, v in ordered() if lo < v <= hi]
        for k in victims:
            del model[k]
        return conn.cmd("ZREMRANGEBYSCORE", "big", "(%r" % lo, hi), b":%d\r\n" % len(victims)
    if r < 0.9:
        items = ordered()[:3]
        for k, _ in items:
            del model[k]
        flat = [x for k, v in items for x in (k, repr(v).rstrip("0").rstrip(".") if v else "0")]
        return conn.cmd("ZPOPMIN", "big", 3), array(*flat) if items else b"*0\r\n"
    start, stop = rng.randint(-30, 30), rng.randint(-30, 30)
    names = [k for k, _ in ordered()]
    n = len(names)
    a = start + n if start < 0 else start
    b = stop + n if stop < 0 else stop
    a = max(a, 0)
    got = [] if a > b or a >= n else names[a:min(b, n - 1) + 1]
    return conn.cmd("ZRANGE", "big", start, stop), array(*got)


@pytest.mark.parametrize("seed", [5, 6])
def test_random_operations_against_a_model(conn, seed):
    """A set that grows past 128 members (and 64-byte ones): the skiplist
    must answer exactly as redis-server does."""
    rng = random.Random(seed)
    model = {}
    for step in range(1500):
        got, want = random_step(conn, model, rng)
        assert got == want, (step, got[:300], want[:300])
    assert conn.cmd("ZCARD", "big") == b":%d\r\n" % len(model)


# ---------------------------------------------------------------- scripts

def test_scores_inside_scripts(conn):
    conn.cmd("ZADD", "z", "0.5", "a", 2, "b")
    # RESP2 (the default): scores are strings in Lua
    body = "local v = redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES'); return {v[1], v[2], type(v[2])}"
    assert conn.cmd("EVAL", body, 1, "z") == array("a", "0.5", "string")
    # redis.setresp(3): a score is a {double=...} table, returned as a double
    body = "redis.setresp(3); local s = redis.call('zscore', KEYS[1], 'a'); return {type(s), s['double'] * 4}"
    assert conn.cmd("EVAL", body, 1, "z") == b"*2\r\n$5\r\ntable\r\n:2\r\n"
    body = "redis.setresp(3); return redis.call('zscore', KEYS[1], 'a')"
    assert conn.cmd("EVAL", body, 1, "z") == bulk("0.5")
    resp3(conn)
    assert conn.cmd("EVAL", body, 1, "z") == b",0.5\r\n"


# ---------------------------------------------------------------- COMMAND

FAST = ["zadd", "zincrby", "zscore", "zmscore", "zrem", "zcard", "zcount", "zrank", "zrevrank",
        "zpopmin", "zpopmax", "lpush", "rpush", "lpop", "rpop", "llen"]
SLOW = ["zrange", "zrevrange", "zrangebyscore", "zrevrangebyscore", "zrangebylex",
        "zrevrangebylex", "zremrangebyrank", "zremrangebyscore", "zremrangebylex",
        "lindex", "lrange", "lset", "linsert", "lrem", "ltrim"]


def test_command_info_fast_flag_and_docs(conn):
    """Which commands Redis marks fast, and the COMMAND DOCS basics."""
    for entry in parse(conn.cmd("COMMAND", "INFO", *(FAST + SLOW))):
        assert (b"fast" in entry[2]) == (entry[0].decode() in FAST), entry[:3]
    docs = parse(conn.cmd("COMMAND", "DOCS", "zadd", "lpop"))
    docs = dict(zip(docs[0::2], docs[1::2]))
    zadd = dict(zip(docs[b"zadd"][0::2], docs[b"zadd"][1::2]))
    assert (zadd[b"group"], zadd[b"since"]) == (b"sorted-set", b"1.2.0")
    names = [dict(zip(a[0::2], a[1::2]))[b"name"] for a in zadd[b"arguments"]]
    assert names[0] == b"key" and len(names) == 6
    lpop = dict(zip(docs[b"lpop"][0::2], docs[b"lpop"][1::2]))
    assert (lpop[b"group"], lpop[b"since"]) == (b"list", b"1.0.0")
    assert lpop[b"summary"] == b"Remove and get the first elements in a list"
