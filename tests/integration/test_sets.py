"""Set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP
SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF
SDIFFSTORE SSCAN. Redis 7.0's two encodings (intset, then hashtable for
good) as OBJECT ENCODING and DUMP show them, errors in Redis's order,
keyspace events, RESP3 set replies, uniform random draws, and sets in
TYPE, COPY, RENAME, SORT, DUMP/RESTORE, MULTI and scripts."""

import random

import pytest

from resp_util import parse
import script_util as su
from script_util import array, bulk, error, gone

WRONGTYPE = error(su.WRONGTYPE)
NOT_INT = error(su.NOT_INTEGER)
NOT_POSITIVE = error(su.NOT_POSITIVE)
SYNTAX = error("ERR syntax error")


def members(conn, *cmd):
    return sorted(parse(conn.cmd(*cmd)))


def encoding(conn, key):
    return conn.cmd("OBJECT", "ENCODING", key)


def resp3(conn):
    assert conn.cmd("HELLO", "3").startswith(b"%")


# ---------------------------------------------------------------- encodings

def test_intset_while_integers_then_hashtable_for_good(conn):
    assert conn.cmd("SADD", "s", 3, 1, 2) == b":3\r\n"
    assert encoding(conn, "s") == bulk("intset")
    assert parse(conn.cmd("SMEMBERS", "s")) == [b"1", b"2", b"3"]   # an intset is sorted
    assert conn.cmd("SADD", "s", "a") == b":1\r\n"
    assert encoding(conn, "s") == bulk("hashtable")
    assert conn.cmd("SREM", "s", "a") == b":1\r\n"
    assert encoding(conn, "s") == bulk("hashtable")   # one way


@pytest.mark.parametrize("member", ["01", "+1", " 1", "1 ", "-0", "1.0", "9223372036854775808", ""])
def test_non_canonical_integers_are_strings(conn, member):
    conn.cmd("SADD", "s", member)
    assert encoding(conn, "s") == bulk("hashtable")
    assert conn.cmd("SISMEMBER", "s", member) == b":1\r\n"


def test_first_member_decides_a_new_set(conn):
    conn.cmd("SADD", "a", "x", 1)
    assert encoding(conn, "a") == bulk("hashtable")
    conn.cmd("SADD", "b", 1, "x")
    assert encoding(conn, "b") == bulk("hashtable")
    conn.cmd("SADD", "c", "-9223372036854775808", "9223372036854775807")
    assert encoding(conn, "c") == bulk("intset")


def test_max_intset_entries(conn):
    conn.cmd("SADD", "s", *range(512))
    assert encoding(conn, "s") == bulk("intset")
    conn.cmd("SADD", "s", 512)
    assert encoding(conn, "s") == bulk("hashtable")
    assert conn.cmd("SCARD", "s") == b":513\r\n"
    try:
        assert conn.cmd("CONFIG", "SET", "set-max-intset-entries", "4") == b"+OK\r\n"
        conn.cmd("SADD", "t", 1, 2, 3, 4)
        assert encoding(conn, "t") == bulk("intset")
        conn.cmd("SADD", "t", 5)
        assert encoding(conn, "t") == bulk("hashtable")
    finally:
        conn.cmd("CONFIG", "SET", "set-max-intset-entries", "512")


# DUMP of SADD s <values>, SREM s <the one of largest magnitude>, SADD s 9
# on redis-server 7.0.15: the width grows to fit and never shrinks.
INTSET_DUMPS = [
    ([1, 2, 3], "0b0e02000000030000000100020009000a005e02aca3a842b9e3"),
    ([1, 40000], "0b10040000000200000001000000090000000a000509783bf123e018"),
    ([-40000, 5], "0b10040000000200000005000000090000000a00e334522468a739f0"),
    ([1, 2 ** 40], "0b180800000002000000010000000000000009000000000000000a004451147b107ab4d4"),
    ([-(2 ** 40), 7], "0b180800000002000000070000000000000009000000000000000a002522b90a5b1196be"),
    ([2 ** 63 - 1, -(2 ** 63)],
     "0b1808000000020000000900000000000000ffffffffffffff7f0a00e89bc9e12da6fd33"),
    (list(range(30)), "0b4042020000001d00000000000100020003000400050006000700080009000a000b000c00"
                      "0d000e000f0010001100120013001400150016001700180019001a001b001c000a008a88"
                      "b20eeb0b3060"),
]


@pytest.mark.parametrize("values,payload", INTSET_DUMPS, ids=[str(i) for i in range(len(INTSET_DUMPS))])
def test_intset_dump_is_redis_bytes(conn, values, payload):
    conn.cmd("SADD", "s", *values)
    conn.cmd("SREM", "s", max(values, key=abs))
    conn.cmd("SADD", "s", 9)
    dump = parse(conn.cmd("DUMP", "s"))
    assert dump.hex() == payload
    assert conn.cmd("RESTORE", "t", 0, dump) == b"+OK\r\n"
    assert encoding(conn, "t") == bulk("intset")
    assert parse(conn.cmd("DUMP", "t")) == dump


def test_restore_hashtable_set_and_bad_payloads(conn):
    conn.cmd("SADD", "s", "a", "b", "c", 1)
    dump = parse(conn.cmd("DUMP", "s"))
    assert dump[0] == 2   # RDB_TYPE_SET
    assert conn.cmd("RESTORE", "t", 0, dump) == b"+OK\r\n"
    assert members(conn, "SMEMBERS", "t") == [b"1", b"a", b"b", b"c"]
    assert conn.cmd("TYPE", "t") == b"+set\r\n"
    # a set of integers only, few: the loader makes it an intset
    conn.cmd("SADD", "h", "x", 1, 2)
    conn.cmd("SREM", "h", "x")
    assert encoding(conn, "h") == bulk("hashtable")
    dump = parse(conn.cmd("DUMP", "h"))
    conn.cmd("RESTORE", "h2", 0, dump)
    assert encoding(conn, "h2") == bulk("intset")
    # an intset out of order, and one of width 3
    bad = [bytes.fromhex("0b0c0200000002000000020001000a00"),
           bytes.fromhex("0b0b03000000010000000100000a00")]
    for p in bad:
        reply = conn.cmd("RESTORE", "bad", 0, p)
        assert reply.startswith(b"-"), reply
    gone(conn, "bad")


# ---------------------------------------------------------------- SADD / SREM / SMOVE

def test_sadd_srem_replies_and_events(conn, keyevents):
    steps = [
        (("SADD", "s", "a", "b", "a"), b":2\r\n", [("sadd", "s")]),
        (("SADD", "s", "a"), b":0\r\n", []),
        (("SREM", "s", "x"), b":0\r\n", []),
        (("SREM", "nokey", "x"), b":0\r\n", []),
        (("SREM", "s", "a", "x"), b":1\r\n", [("srem", "s")]),
        (("SREM", "s", "b", "b", "c"), b":1\r\n", [("srem", "s"), ("del", "s")]),
    ]
    for cmd, want, events in steps:
        assert conn.cmd(*cmd) == want, cmd
        keyevents.expect(*events)
    gone(conn, "s")


def test_arity_and_wrongtype(conn):
    conn.cmd("SET", "str", "x")
    for cmd in [("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"),
                ("SISMEMBER", "str", "a"), ("SMISMEMBER", "str", "a"), ("SCARD", "str"),
                ("SPOP", "str"), ("SPOP", "str", 2), ("SRANDMEMBER", "str"),
                ("SRANDMEMBER", "str", 2), ("SINTER", "str"), ("SUNION", "str"),
                ("SDIFF", "str"), ("SINTERSTORE", "d", "str"), ("SINTERCARD", 1, "str"),
                ("SSCAN", "str", 0), ("SMOVE", "str", "d", "a")]:
        assert conn.cmd(*cmd) == WRONGTYPE, cmd
    for cmd in [("SADD", "s"), ("SREM", "s"), ("SMEMBERS",), ("SISMEMBER", "s"),
                ("SMISMEMBER", "s"), ("SCARD",), ("SPOP",), ("SMOVE", "a", "b"),
                ("SINTER",), ("SINTERCARD", 1), ("SINTERSTORE", "d"), ("SSCAN", "s")]:
        assert conn.cmd(*cmd) == error("ERR wrong number of arguments for '%s' command"
                                       % cmd[0].lower()), cmd


def test_smove(conn, keyevents):
    conn.cmd("SADD", "src", 1, 2, "a")
    conn.cmd("SET", "str", "x")
    keyevents.take()
    assert conn.cmd("SMOVE", "nokey", "str", 1) == b":0\r\n"     # missing source first
    assert conn.cmd("SMOVE", "src", "str", 1) == WRONGTYPE
    assert conn.cmd("SMOVE", "src", "src", 1) == b":1\r\n"
    assert conn.cmd("SMOVE", "src", "src", 9) == b":0\r\n"
    assert conn.cmd("SMOVE", "src", "dst", 9) == b":0\r\n"
    keyevents.expect()
    assert conn.cmd("SMOVE", "src", "dst", 1) == b":1\r\n"
    keyevents.expect(("srem", "src"), ("sadd", "dst"))
    assert encoding(conn, "dst") == bulk("intset")
    assert conn.cmd("SMOVE", "src", "dst2", "a") == b":1\r\n"
    assert encoding(conn, "dst2") == bulk("hashtable")
    conn.cmd("SADD", "dst", 2)
    keyevents.take()
    assert conn.cmd("SMOVE", "src", "dst", 2) == b":1\r\n"   # already there: no sadd
    keyevents.expect(("srem", "src"), ("del", "src"))
    gone(conn, "src")
    assert members(conn, "SMEMBERS", "dst") == [b"1", b"2"]


# ---------------------------------------------------------------- reads

def test_membership_and_card(conn):
    conn.cmd("SADD", "s", "a", b"\x00b", 5)
    assert conn.cmd("SISMEMBER", "s", b"\x00b") == b":1\r\n"
    assert conn.cmd("SISMEMBER", "s", "5") == b":1\r\n"
    assert conn.cmd("SISMEMBER", "s", "05") == b":0\r\n"
    assert conn.cmd("SISMEMBER", "nokey", "a") == b":0\r\n"
    assert conn.cmd("SMISMEMBER", "s", "a", "x", 5) == b"*3\r\n:1\r\n:0\r\n:1\r\n"
    assert conn.cmd("SMISMEMBER", "nokey", "a", "b") == b"*2\r\n:0\r\n:0\r\n"
    assert conn.cmd("SCARD", "s") == b":3\r\n"
    assert conn.cmd("SCARD", "nokey") == b":0\r\n"
    assert conn.cmd("SMEMBERS", "nokey") == b"*0\r\n"
    conn.cmd("SADD", "i", 70000, -1, 300)
    assert conn.cmd("SISMEMBER", "i", 70000) == b":1\r\n"
    assert conn.cmd("SISMEMBER", "i", 2 ** 40) == b":0\r\n"


def test_resp3_set_replies(conn):
    conn.cmd("SADD", "s", 2, 1)
    resp3(conn)
    assert conn.cmd("SMEMBERS", "s") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    assert conn.cmd("SMEMBERS", "nokey") == b"~0\r\n"
    assert conn.cmd("SINTER", "s", "nokey") == b"~0\r\n"
    assert conn.cmd("SUNION", "s") == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    assert conn.cmd("SPOP", "nokey", 3) == b"~0\r\n"
    assert conn.cmd("SPOP", "s", 0) == b"~0\r\n"
    assert conn.cmd("SPOP", "nokey") == b"_\r\n"
    assert conn.cmd("SRANDMEMBER", "nokey") == b"_\r\n"
    assert conn.cmd("SRANDMEMBER", "nokey", 3) == b"*0\r\n"
    assert conn.cmd("SRANDMEMBER", "s", 5) == b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    assert conn.cmd("SPOP", "s", 5) == b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    gone(conn, "s")


# ---------------------------------------------------------------- SINTER / SUNION / SDIFF

@pytest.fixture
def abc(conn):
    conn.cmd("SADD", "a", 1, 2, 3, 4, "x")
    conn.cmd("SADD", "b", 2, 3, 5, "x", "y")
    conn.cmd("SADD", "c", 3, 4, 5, "x")
    return conn


def test_sinter_sunion_sdiff(abc):
    c = abc
    assert members(c, "SINTER", "a", "b", "c") == [b"3", b"x"]
    assert members(c, "SINTER", "a") == [b"1", b"2", b"3", b"4", b"x"]
    assert members(c, "SINTER", "a", "a") == [b"1", b"2", b"3", b"4", b"x"]
    assert c.cmd("SINTER", "a", "nokey") == b"*0\r\n"
    assert members(c, "SUNION", "a", "b", "nokey") == [b"1", b"2", b"3", b"4", b"5", b"x", b"y"]
    assert c.cmd("SUNION", "nokey") == b"*0\r\n"
    assert members(c, "SDIFF", "a", "b") == [b"1", b"4"]
    assert members(c, "SDIFF", "a", "b", "c") == [b"1"]
    assert members(c, "SDIFF", "a", "nokey") == [b"1", b"2", b"3", b"4", b"x"]
    assert c.cmd("SDIFF", "nokey", "a") == b"*0\r\n"
    assert c.cmd("SDIFF", "a", "a") == b"*0\r\n"
    assert c.cmd("SDIFF", "a", "b", "a") == b"*0\r\n"
    # a big first set and small others, and the other way round (both algorithms)
    c.cmd("SADD", "big", *range(1000))
    c.cmd("SADD", "small", 1, 2, 3)
    assert members(c, "SDIFF", "small", "big") == []
    assert len(parse(c.cmd("SDIFF", "big", "small"))) == 997
    c.cmd("SET", "str", "v")
    assert c.cmd("SINTER", "nokey", "str") == WRONGTYPE   # every key is checked
    assert c.cmd("SUNION", "a", "str") == WRONGTYPE


def test_integer_results_are_sorted_intsets(conn):
    conn.cmd("SADD", "a", 5, 3, 1, "x")
    conn.cmd("SADD", "b", 3, 5, 7)
    assert parse(conn.cmd("SINTER", "b", "a")) == [b"3", b"5"]
    assert parse(conn.cmd("SDIFF", "b", "a")) == [b"7"]
    conn.cmd("SREM", "a", "x")
    assert parse(conn.cmd("SUNION", "a", "b")) == [b"1", b"3", b"5", b"7"]
    assert conn.cmd("SUNIONSTORE", "d", "a", "b") == b":4\r\n"
    assert encoding(conn, "d") == bulk("intset")   # built fresh, unlike a
    assert encoding(conn, "a") == bulk("hashtable")


def test_store_forms(abc, keyevents):
    c = abc
    c.cmd("SET", "dst", "old")
    c.cmd("EXPIRE", "dst", 100)
    keyevents.take()
    assert c.cmd("SINTERSTORE", "dst", "a", "b") == b":3\r\n"
    keyevents.expect(("sinterstore", "dst"))
    assert c.cmd("TTL", "dst") == b":-1\r\n"
    assert members(c, "SMEMBERS", "dst") == [b"2", b"3", b"x"]
    assert encoding(c, "dst") == bulk("hashtable")
    assert c.cmd("SINTERSTORE", "dst", "a", "b", "c", "x") == b":0\r\n"   # missing x
    keyevents.expect(("del", "dst"))
    gone(c, "dst")
    assert c.cmd("SINTERSTORE", "dst", "a", "nokey") == b":0\r\n"
    keyevents.expect()
    assert c.cmd("SUNIONSTORE", "dst", "b", "c") == b":6\r\n"
    keyevents.expect(("sunionstore", "dst"))   # "new" is not in KEA
    assert c.cmd("SDIFFSTORE", "dst", "dst", "b") == b":1\r\n"   # a source may be the destination
    assert members(c, "SMEMBERS", "dst") == [b"4"]
    assert encoding(c, "dst") == bulk("intset")
    keyevents.expect(("sdiffstore", "dst"))
    assert c.cmd("SDIFFSTORE", "dst", "a", "a") == b":0\r\n"
    keyevents.expect(("del", "dst"))
    assert c.cmd("SUNIONSTORE", "dst", "nokey") == b":0\r\n"
    keyevents.expect()
    c.cmd("SET", "str", "v")
    assert c.cmd("SUNIONSTORE", "str", "a") == b":5\r\n"   # the destination's type does not count
    assert c.cmd("TYPE", "str") == b"+set\r\n"


def test_sintercard(abc):
    c = abc
    assert c.cmd("SINTERCARD", 3, "a", "b", "c") == b":2\r\n"
    assert c.cmd("SINTERCARD", 2, "a", "b") == b":3\r\n"
    assert c.cmd("SINTERCARD", 2, "a", "b", "LIMIT", 2) == b":2\r\n"
    assert c.cmd("SINTERCARD", 2, "a", "b", "limit", 0) == b":3\r\n"
    assert c.cmd("SINTERCARD", 2, "a", "nokey") == b":0\r\n"
    assert c.cmd("SINTERCARD", 1, "a", "LIMIT", 9, "LIMIT", 1) == b":1\r\n"
    for args, err in [((0, "a"), "ERR numkeys should be greater than 0"),
                      (("x", "a"), "ERR numkeys should be greater than 0"),
                      ((-1, "a"), "ERR numkeys should be greater than 0"),
                      ((3, "a", "b"), "ERR Number of keys can't be greater than number of args"),
                      ((1, "a", "LIMIT", -1), "ERR LIMIT can't be negative"),
                      ((1, "a", "LIMIT", "x"), "ERR LIMIT can't be negative"),
                      ((1, "a", "LIMIT"), "ERR syntax error"),
                      ((1, "a", "b"), "ERR syntax error")]:
        assert c.cmd("SINTERCARD", *args) == error(err), args


# ---------------------------------------------------------------- SPOP / SRANDMEMBER

def test_spop_errors_and_edges(conn, keyevents):
    conn.cmd("SADD", "s", 1, 2, 3)
    keyevents.take()
    assert conn.cmd("SPOP", "s", -1) == NOT_POSITIVE
    assert conn.cmd("SPOP", "s", "x") == NOT_POSITIVE
    assert conn.cmd("SPOP", "s", 1, 2) == SYNTAX
    assert conn.cmd("SPOP", "nokey") == b"$-1\r\n"
    assert conn.cmd("SPOP", "nokey", 2) == b"*0\r\n"
    assert conn.cmd("SPOP", "s", 0) == b"*0\r\n"
    keyevents.expect()
    got = parse(conn.cmd("SPOP", "s"))
    keyevents.expect(("spop", "s"))
    assert got in (b"1", b"2", b"3")
    assert conn.cmd("SPOP", "s", 10) == b"*2\r\n" + b"".join(
        bulk(x) for x in sorted({"1", "2", "3"} - {got.decode()}))
    keyevents.expect(("spop", "s"), ("del", "s"))
    gone(conn, "s")
    conn.cmd("SADD", "t", "a")
    assert conn.cmd("SPOP", "t") == bulk("a")
    keyevents.take()
    gone(conn, "t")


@pytest.mark.parametrize("kind", ["int", "str"])
@pytest.mark.parametrize("count", [1, 3, 50, 90, 99, 100])
def test_spop_count_paths(conn, kind, count):
    """Every path of spopWithCount: one by one, survivors drawn anew."""
    base = [str(i) if kind == "int" else "m%d" % i for i in range(100)]
    conn.cmd("SADD", "s", *base)
    popped = parse(conn.cmd("SPOP", "s", count))
    assert len(popped) == len(set(popped)) == count
    left = parse(conn.cmd("SMEMBERS", "s")) if count < 100 else []
    assert sorted(popped + left) == sorted(x.encode() for x in base)
    if count < 100:
        assert encoding(conn, "s") == bulk("intset" if kind == "int" else "hashtable")


def test_spop_survivors_become_an_intset(conn):
    """Few survivors are a new set: a hashtable of integers becomes an intset."""
    conn.cmd("SADD", "s", *range(600))
    assert encoding(conn, "s") == bulk("hashtable")
    assert len(parse(conn.cmd("SPOP", "s", 590))) == 590
    assert encoding(conn, "s") == bulk("intset")
    conn.cmd("SADD", "t", *range(600))
    parse(conn.cmd("SPOP", "t", 10))
    assert encoding(conn, "t") == bulk("hashtable")


def test_srandmember(conn):
    conn.cmd("SADD", "s", *range(20))
    assert conn.cmd("SRANDMEMBER", "s", 1, 2) == SYNTAX
    assert conn.cmd("SRANDMEMBER", "s", "x") == NOT_INT
    assert conn.cmd("SRANDMEMBER", "s", "-9223372036854775808") == error(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert conn.cmd("SRANDMEMBER", "s", 0) == b"*0\r\n"
    assert conn.cmd("SRANDMEMBER", "nokey") == b"$-1\r\n"
    assert conn.cmd("SRANDMEMBER", "nokey", -5) == b"*0\r\n"
    all_ = sorted(str(i).encode() for i in range(20))
    for n in (1, 5, 7, 19, 20, 30):   # distinct: drawn, or copied and trimmed, or all
        got = parse(conn.cmd("SRANDMEMBER", "s", n))
        assert len(got) == len(set(got)) == min(n, 20)
        assert set(got) <= set(all_)
    got = parse(conn.cmd("SRANDMEMBER", "s", -50))
    assert len(got) == 50 and set(got) <= set(all_)
    assert conn.cmd("SCARD", "s") == b":20\r\n"
    conn.cmd("SADD", "s", "str")
    for n in (3, 10, 21, -40):
        got = parse(conn.cmd("SRANDMEMBER", "s", n))
        assert len(got) == min(abs(n), 21) if n > 0 else len(got) == 40


def chi_square(counts, expected):
    return sum((c - expected) ** 2 / expected for c in counts)


def histogram(draws):
    counts = {}
    for d in draws:
        counts[d] = counts.get(d, 0) + 1
    return counts


@pytest.mark.parametrize("kind", ["intset", "hashtable"])
def test_random_draws_are_uniform(server, conn, kind):
    """Redis's own histogram test (10 members, chi-square under 40: df 9,
    p 0.00001) for repeats, distinct draws and SPOP; latchd also draws
    uniformly from a 100-member table (Redis's sampling does not)."""
    base = list(range(10)) if kind == "intset" else ["m%d" % i for i in range(10)]
    conn.cmd("SADD", "s", *base)
    assert encoding(conn, "s") == bulk(kind)
    counts = histogram(parse(conn.cmd("SRANDMEMBER", "s", -1000)))
    assert len(counts) == 10 and chi_square(counts.values(), 100) < 40
    for size in (8, 2):
        draws = []
        for _ in range(1000 // size):
            draws += parse(conn.cmd("SRANDMEMBER", "s", size))
        counts = histogram(draws)
        assert chi_square(counts.values(), len(draws) / 10) < 40
    firsts = []
    for _ in range(1000):
        conn.cmd("SADD", "p", *base)
        firsts.append(parse(conn.cmd("SPOP", "p")))
        conn.cmd("DEL", "p")
    assert chi_square(histogram(firsts).values(), 100) < 40
    if server.kind != "latchd":
        return
    conn.cmd("SADD", "big", *(["m%d" % i for i in range(100)] if kind == "hashtable" else range(100)))
    counts = histogram(parse(conn.cmd("SRANDMEMBER", "big", -20000)))
    # df 99: 160 is p ~ 0.0001
    assert len(counts) == 100 and chi_square(counts.values(), 200) < 160


# ---------------------------------------------------------------- SSCAN

def test_sscan_intset_in_one_call(conn):
    conn.cmd("SADD", "s", *range(300))
    reply = parse(conn.cmd("SSCAN", "s", 0, "COUNT", 5))
    assert reply[0] == b"0" and len(reply[1]) == 300
    reply = parse(conn.cmd("SSCAN", "s", 0, "MATCH", "1?"))
    assert reply == [b"0", [str(i).encode() for i in range(10, 20)]]


def test_sscan_errors(conn):
    conn.cmd("SADD", "s", 1)
    assert conn.cmd("SSCAN", "s", "x") == error("ERR invalid cursor")
    assert conn.cmd("SSCAN", "s", 0, "TYPE", "string") == SYNTAX
    assert conn.cmd("SSCAN", "s", 0, "COUNT", 0) == SYNTAX
    assert conn.cmd("SSCAN", "s", 0, "COUNT", "x") == NOT_INT
    assert conn.cmd("SSCAN", "s", 0, "MATCH") == SYNTAX
    assert conn.cmd("SSCAN", "nokey", 0, "bogus") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    assert conn.cmd("SSCAN", "nokey", "x") == error("ERR invalid cursor")


def test_sscan_hashtable_sees_everything_across_growth(conn):
    names = ["m%d" % i for i in range(1000)]
    conn.cmd("SADD", "s", *names)
    seen, cursor, rounds = set(), b"0", 0
    while True:
        cursor, got = parse(conn.cmd("SSCAN", "s", cursor, "COUNT", 20))
        seen.update(got)
        if rounds == 3:   # grow the table mid-scan: nothing present all along is missed
            conn.cmd("SADD", "s", *("n%d" % i for i in range(3000)))
        rounds += 1
        if cursor == b"0":
            break
    assert {n.encode() for n in names} <= seen
    cursor, got = parse(conn.cmd("SSCAN", "s", 0, "MATCH", "m99*", "COUNT", 100000))
    assert cursor == b"0" and sorted(got) == sorted([b"m99"] + [b"m99%d" % i for i in range(10)])


# ---------------------------------------------------------------- sets as keys

def test_type_copy_rename_and_keys(conn):
    conn.cmd("SADD", "s", 1, 2, 3)
    conn.cmd("SADD", "h", "a", "b")
    assert conn.cmd("TYPE", "s") == b"+set\r\n"
    assert conn.cmd("COPY", "s", "s2") == b":1\r\n"
    assert conn.cmd("COPY", "h", "h2") == b":1\r\n"
    conn.cmd("SADD", "s2", 4)
    assert conn.cmd("SCARD", "s") == b":3\r\n"
    assert encoding(conn, "h2") == bulk("hashtable") and encoding(conn, "s2") == bulk("intset")
    assert members(conn, "SMEMBERS", "h2") == [b"a", b"b"]
    assert conn.cmd("RENAME", "h2", "h3") == b"+OK\r\n"
    assert members(conn, "SMEMBERS", "h3") == [b"a", b"b"]
    assert sorted(parse(conn.cmd("SCAN", 0, "TYPE", "set", "COUNT", 100))[1]) == [b"h", b"h3", b"s", b"s2"]
    assert conn.cmd("MOVE", "s", 1) == b":1\r\n"
    conn.cmd("SELECT", 1)
    assert members(conn, "SMEMBERS", "s") == [b"1", b"2", b"3"]
    conn.cmd("SELECT", 0)


def test_sort_of_a_set(conn):
    conn.cmd("SADD", "s", 3, 1, 2)
    assert parse(conn.cmd("SORT", "s")) == [b"1", b"2", b"3"]
    assert parse(conn.cmd("SORT", "s", "DESC", "LIMIT", 0, 2)) == [b"3", b"2"]
    conn.cmd("SADD", "w", "b", "c", "a")
    assert parse(conn.cmd("SORT", "w", "ALPHA")) == [b"a", b"b", b"c"]
    assert conn.cmd("SORT", "w", "STORE", "out") == error(
        "ERR One or more scores can't be converted into double")
    assert conn.cmd("SORT", "s", "STORE", "out") == b":3\r\n"
    assert parse(conn.cmd("LRANGE", "out", 0, -1)) == [b"1", b"2", b"3"]


def test_multi_and_scripts(conn):
    assert conn.cmd("MULTI") == b"+OK\r\n"
    assert conn.cmd("SADD", "s", "a", "b") == b"+QUEUED\r\n"
    assert conn.cmd("SCARD", "s") == b"+QUEUED\r\n"
    assert parse(conn.cmd("EXEC")) == [2, 2]
    r = conn.cmd("EVAL", "redis.call('SADD', KEYS[1], 'c'); return redis.call('SCARD', KEYS[1])", 1, "s")
    assert r == b":3\r\n"
    r = parse(conn.cmd("EVAL", "return redis.call('SMEMBERS', KEYS[1])", 1, "s"))
    assert sorted(r) == [b"a", b"b", b"c"]
    r = conn.cmd("EVAL", "return redis.call('SADD', KEYS[1], 'x')", 1, "fresh")
    assert r == b":1\r\n"
    conn.cmd("SET", "str", "v")
    r = conn.cmd("EVAL", "return redis.pcall('SADD', KEYS[1], 'x')", 1, "str")
    assert r.startswith(b"-WRONGTYPE")


def test_command_info_rows(conn):
    info = parse(conn.cmd("COMMAND", "INFO", "sadd", "sintercard", "smove", "sinterstore", "srandmember"))
    assert info[0][:6] == [b"sadd", -3, [b"write", b"denyoom", b"fast"], 1, 1, 1]
    assert info[1][:6] == [b"sintercard", -3, [b"readonly", b"movablekeys"], 0, 0, 0]
    assert info[2][:6] == [b"smove", 4, [b"write", b"fast"], 1, 2, 1]
    assert info[3][:6] == [b"sinterstore", -3, [b"write", b"denyoom"], 1, -1, 1]
    assert info[4][:6] == [b"srandmember", -2, [b"readonly"], 1, 1, 1]
    docs = parse(conn.cmd("COMMAND", "DOCS", "sscan"))
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"summary"] == b"Incrementally iterate Set elements"
    assert d[b"since"] == b"2.8.0" and d[b"group"] == b"set"
