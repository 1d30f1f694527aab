"""Hash commands: HSET, HSETNX, HGET, HMGET, HEXISTS, HDEL, HLEN, HINCRBY,
HGETALL, HKEYS, HVALS, HSTRLEN."""

import pytest

from resp_util import parse, flat_pairs

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
HASH_NOT_INT = b"-ERR hash value is not an integer\r\n"
OVERFLOW = b"-ERR increment or decrement would overflow\r\n"


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def test_hset_returns_number_of_new_fields(conn):
    assert conn.cmd("HSET", "h", "a", "1", "b", "2") == b":2\r\n"
    assert conn.cmd("HSET", "h", "a", "1", "c", "3") == b":1\r\n"
    assert conn.cmd("HSET", "h", "a", "x") == b":0\r\n"
    assert conn.cmd("HGET", "h", "a") == b"$1\r\nx\r\n"


def test_hset_repeated_field_last_wins(conn):
    assert conn.cmd("HSET", "h", "a", "1", "a", "2") == b":1\r\n"
    assert conn.cmd("HGET", "h", "a") == b"$1\r\n2\r\n"
    assert conn.cmd("HLEN", "h") == b":1\r\n"


def test_hset_odd_arguments_is_arity_error(conn):
    assert conn.cmd("HSET", "h", "a", "1", "b") == (
        b"-ERR wrong number of arguments for 'hset' command\r\n")
    assert conn.cmd("EXISTS", "h") == b":0\r\n"


def test_hset_creates_hash(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"


def test_hget(conn):
    conn.cmd("HSET", "h", "f", "v", "e", "")
    assert conn.cmd("HGET", "h", "f") == b"$1\r\nv\r\n"
    assert conn.cmd("HGET", "h", "e") == b"$0\r\n\r\n"
    assert conn.cmd("HGET", "h", "nope") == b"$-1\r\n"
    assert conn.cmd("HGET", "nokey", "f") == b"$-1\r\n"


def test_hash_binary_safe(conn):
    field, value = b"\x00f\r\n", b"\xff\x00v\r\n"
    assert conn.cmd("HSET", b"h\x00", field, value) == b":1\r\n"
    assert conn.cmd("HGET", b"h\x00", field) == bulk(value)
    assert conn.cmd("HSTRLEN", b"h\x00", field) == b":%d\r\n" % len(value)


def test_hsetnx(conn):
    assert conn.cmd("HSETNX", "h", "f", "1") == b":1\r\n"
    assert conn.cmd("HSETNX", "h", "f", "2") == b":0\r\n"
    assert conn.cmd("HGET", "h", "f") == b"$1\r\n1\r\n"
    assert conn.cmd("HSETNX", "h", "g", "2") == b":1\r\n"
    assert conn.cmd("HLEN", "h") == b":2\r\n"


def test_hmget(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    assert conn.cmd("HMGET", "h", "a", "nope", "b", "a") == (
        b"*4\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n$1\r\n1\r\n")
    assert conn.cmd("HMGET", "nokey", "a", "b") == b"*2\r\n$-1\r\n$-1\r\n"


def test_hexists(conn):
    conn.cmd("HSET", "h", "a", "1")
    assert conn.cmd("HEXISTS", "h", "a") == b":1\r\n"
    assert conn.cmd("HEXISTS", "h", "b") == b":0\r\n"
    assert conn.cmd("HEXISTS", "nokey", "a") == b":0\r\n"


def test_hdel(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert conn.cmd("HDEL", "h", "a", "nope", "a") == b":1\r\n"
    assert conn.cmd("HLEN", "h") == b":2\r\n"
    assert conn.cmd("HDEL", "nokey", "a") == b":0\r\n"


def test_hdel_last_field_removes_key(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    conn.cmd("EXPIRE", "h", "100")
    assert conn.cmd("HDEL", "h", "a", "b") == b":2\r\n"
    assert conn.cmd("EXISTS", "h") == b":0\r\n"
    assert conn.cmd("TYPE", "h") == b"+none\r\n"
    assert conn.cmd("TTL", "h") == b":-2\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"
    # recreated key has no TTL
    conn.cmd("HSET", "h", "a", "1")
    assert conn.cmd("TTL", "h") == b":-1\r\n"


def test_hlen(conn):
    assert conn.cmd("HLEN", "nokey") == b":0\r\n"
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    assert conn.cmd("HLEN", "h") == b":2\r\n"


def test_hstrlen(conn):
    conn.cmd("HSET", "h", "a", "hello", "e", "", "n", "-12")
    assert conn.cmd("HSTRLEN", "h", "a") == b":5\r\n"
    assert conn.cmd("HSTRLEN", "h", "e") == b":0\r\n"
    assert conn.cmd("HSTRLEN", "h", "n") == b":3\r\n"
    assert conn.cmd("HSTRLEN", "h", "nope") == b":0\r\n"
    assert conn.cmd("HSTRLEN", "nokey", "a") == b":0\r\n"


# ---------------------------------------------------------------- HINCRBY

def test_hincrby(conn):
    assert conn.cmd("HINCRBY", "h", "n", "5") == b":5\r\n"
    assert conn.cmd("HINCRBY", "h", "n", "-7") == b":-2\r\n"
    assert conn.cmd("HINCRBY", "h", "n", "0") == b":-2\r\n"
    assert conn.cmd("HGET", "h", "n") == b"$2\r\n-2\r\n"
    assert conn.cmd("HSTRLEN", "h", "n") == b":2\r\n"


def test_hincrby_existing_numeric_field(conn):
    conn.cmd("HSET", "h", "n", "41")
    assert conn.cmd("HINCRBY", "h", "n", "1") == b":42\r\n"


@pytest.mark.parametrize("value", ["x", "", " 5", "5 ", "+5", "05", "-0", "1.5", "9223372036854775808"])
def test_hincrby_non_integer_field(conn, value):
    conn.cmd("HSET", "h", "f", value)
    assert conn.cmd("HINCRBY", "h", "f", "1") == HASH_NOT_INT
    assert conn.cmd("HGET", "h", "f") == bulk(value.encode())


@pytest.mark.parametrize("arg", ["x", "1.5", "", "+1", "99999999999999999999"])
def test_hincrby_non_integer_increment(conn, arg):
    conn.cmd("HSET", "h", "f", "1")
    assert conn.cmd("HINCRBY", "h", "f", arg) == NOT_INT
    assert conn.cmd("HINCRBY", "nokey", "f", arg) == NOT_INT
    assert conn.cmd("EXISTS", "nokey") == b":0\r\n"


def test_hincrby_overflow(conn):
    conn.cmd("HSET", "h", "max", "9223372036854775807", "min", "-9223372036854775808")
    assert conn.cmd("HINCRBY", "h", "max", "1") == OVERFLOW
    assert conn.cmd("HINCRBY", "h", "min", "-1") == OVERFLOW
    assert conn.cmd("HINCRBY", "h", "max", "-9223372036854775808") == b":-1\r\n"
    assert conn.cmd("HGET", "h", "min") == b"$20\r\n-9223372036854775808\r\n"


def test_hincrby_increment_checked_before_type(conn):
    conn.cmd("SET", "s", "v")
    assert conn.cmd("HINCRBY", "s", "f", "x") == NOT_INT
    assert conn.cmd("HINCRBY", "s", "f", "1") == WRONGTYPE


# ---------------------------------------------------------------- HGETALL / HKEYS / HVALS

def test_hgetall_resp2_is_flat_array(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("HGETALL", "h") == b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_hgetall_missing(conn):
    assert conn.cmd("HGETALL", "nokey") == b"*0\r\n"
    assert conn.cmd("HKEYS", "nokey") == b"*0\r\n"
    assert conn.cmd("HVALS", "nokey") == b"*0\r\n"


def test_hgetall_hkeys_hvals(conn):
    fields = {b"f%d" % i: b"v%d" % (i * 7) for i in range(20)}
    args = []
    for k, v in fields.items():
        args += [k, v]
    conn.cmd("HSET", "h", *args)
    flat = parse(conn.cmd("HGETALL", "h"))
    assert len(flat) == 40
    assert flat_pairs(flat) == fields
    keys = parse(conn.cmd("HKEYS", "h"))
    vals = parse(conn.cmd("HVALS", "h"))
    assert sorted(keys) == sorted(fields)
    assert sorted(vals) == sorted(fields.values())
    # HKEYS, HVALS and HGETALL walk an unmodified hash in the same order
    assert list(zip(keys, vals)) == list(zip(flat[0::2], flat[1::2]))


def test_big_hash(r):
    mapping = {b"field:%d" % i: b"value:%d" % i for i in range(1000)}
    mapping[b"long"] = b"x" * 5000
    assert r.hset("big", mapping=mapping) == 1001
    assert r.hlen("big") == 1001
    assert r.hgetall("big") == mapping
    assert r.hget("big", "field:500") == b"value:500"
    assert r.hstrlen("big", "long") == 5000
    assert r.hdel("big", *[b"field:%d" % i for i in range(0, 1000, 2)]) == 500
    assert r.hlen("big") == 501
    assert r.hexists("big", "field:1") is True
    assert r.hexists("big", "field:0") is False


def test_hash_via_client(r):
    assert r.hset("h", mapping={"a": "1", "b": "2"}) == 2
    assert r.hset("h", "c", "3") == 1
    assert r.hsetnx("h", "a", "9") == 0
    assert r.hget("h", "a") == b"1"
    assert r.hmget("h", ["a", "zz", "c"]) == [b"1", None, b"3"]
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert sorted(r.hkeys("h")) == [b"a", b"b", b"c"]
    assert sorted(r.hvals("h")) == [b"1", b"2", b"3"]
    assert r.hincrby("h", "a", 10) == 11
    assert r.hdel("h", "a", "b") == 2
    assert r.hlen("h") == 1
    assert r.hexists("h", "c") is True


# ---------------------------------------------------------------- WRONGTYPE

HASH_CMDS = [
    ["HSET", "s", "f", "v"],
    ["HSETNX", "s", "f", "v"],
    ["HGET", "s", "f"],
    ["HMGET", "s", "f", "g"],
    ["HEXISTS", "s", "f"],
    ["HDEL", "s", "f"],
    ["HLEN", "s"],
    ["HINCRBY", "s", "f", "1"],
    ["HGETALL", "s"],
    ["HKEYS", "s"],
    ["HVALS", "s"],
    ["HSTRLEN", "s", "f"],
]


@pytest.mark.parametrize("argv", HASH_CMDS, ids=[a[0] for a in HASH_CMDS])
def test_hash_commands_on_string_are_wrongtype(conn, argv):
    conn.cmd("SET", "s", "v")
    assert conn.cmd(*argv) == WRONGTYPE
    assert conn.cmd("GET", "s") == b"$1\r\nv\r\n"


STRING_CMDS = [
    ["GET", "h"], ["GETDEL", "h"], ["INCR", "h"], ["DECR", "h"],
    ["INCRBY", "h", "1"], ["DECRBY", "h", "1"], ["SET", "h", "v", "GET"],
]


@pytest.mark.parametrize("argv", STRING_CMDS, ids=[" ".join(a) for a in STRING_CMDS])
def test_string_commands_on_hash_are_wrongtype(conn, argv):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd(*argv) == WRONGTYPE
    assert conn.cmd("HGET", "h", "f") == b"$1\r\nv\r\n"


def test_mget_returns_nil_for_hash(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("MGET", "h") == b"*1\r\n$-1\r\n"


def test_listpack_sized_hash_keeps_insertion_order(r):
    """While Redis keeps a hash as a listpack (hash-max-listpack-entries /
    -value), its fields come back in insertion order; latchd's packed form
    follows the same thresholds."""
    fields = ["f%d" % (300 - i) for i in range(300)]
    for f in fields:
        r.hset("h", f, "v")
    assert r.object("encoding", "h") == b"listpack"
    assert [k.decode() for k in r.hkeys("h")] == fields
    r.config_set("hash-max-listpack-value", 1000000)
    try:
        for i in range(1, 6):
            r.hset("g", "f%d" % i, "x" * (i * 20000))
        assert r.hkeys("g") == [b"f1", b"f2", b"f3", b"f4", b"f5"]
    finally:
        r.config_set("hash-max-listpack-value", 64)
    r.hset("h", "f0", "v")   # past 512 fields: a hashtable, for good
    for i in range(301, 520):
        r.hset("h", "x%d" % i, "v")
    assert r.object("encoding", "h") == b"hashtable"
    assert r.hlen("h") == 520
