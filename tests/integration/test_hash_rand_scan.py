"""HRANDFIELD (count, WITHVALUES, negative counts, Redis's range errors) and
HSCAN (a packed hash whole in one call, a big one by cursor across calls,
MATCH, COUNT), run against latchd and redis-server alike."""

import collections

import pytest

from resp_util import parse
import script_util as su
from script_util import error

SYNTAX = error("ERR syntax error")


def flat(conn, *args):
    return parse(conn.cmd(*args))


def test_hrandfield_shapes(conn):
    conn.cmd("HSET", "h", "a", 1, "b", 2, "c", 3)
    assert conn.cmd("HRANDFIELD", "nokey") == b"$-1\r\n"
    assert conn.cmd("HRANDFIELD", "nokey", 2) == b"*0\r\n"
    assert conn.cmd("HRANDFIELD", "h", 0) == b"*0\r\n"
    assert flat(conn, "HRANDFIELD", "h") in (b"a", b"b", b"c")
    # a count covering the hash: all of it, in HGETALL's order
    assert flat(conn, "HRANDFIELD", "h", 10, "WITHVALUES") == [b"a", b"1", b"b", b"2", b"c", b"3"]
    two = flat(conn, "HRANDFIELD", "h", 2)
    assert len(set(two)) == 2 and set(two) <= {b"a", b"b", b"c"}
    many = flat(conn, "HRANDFIELD", "h", -10, "WITHVALUES")
    assert len(many) == 20
    assert all(dict(a=b"1", b=b"2", c=b"3")[many[i].decode()] == many[i + 1] for i in range(0, 20, 2))
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert parse(conn.cmd("HRANDFIELD", "h", -1, "WITHVALUES"))[0] in ([b"a", b"1"], [b"b", b"2"],
                                                                     [b"c", b"3"])


def test_hrandfield_one_field_lock(conn):
    # a lock's hash (one packed field) hands out a copy of its field
    field = "8743b520-63cd-4409-a7a6-5d1633f5c74f:1"
    conn.cmd("HINCRBY", "lock", field, 1)
    assert flat(conn, "HRANDFIELD", "lock", 1, "WITHVALUES") == [field.encode(), b"1"]
    assert flat(conn, "HSCAN", "lock", 0) == [b"0", [field.encode(), b"1"]]


@pytest.mark.parametrize("args,err", [
    (("-9223372036854775808",),
     "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"),
    (("-9223372036854770000", "WITHVALUES"), "ERR value is out of range"),
    (("x",), su.NOT_INTEGER),
    ((1, "WITHSCORES"), "ERR syntax error"),
    ((1, "WITHVALUES", "x"), "ERR syntax error"),
])
def test_hrandfield_errors(conn, args, err):
    conn.cmd("HSET", "h", "a", 1)
    assert conn.cmd("HRANDFIELD", "h", *args) == error(err)


def test_hrandfield_is_spread(conn):
    conn.cmd("HSET", "h", *[x for i in range(200) for x in ("f%d" % i, i)])
    seen = collections.Counter()
    for _ in range(20):
        got = flat(conn, "HRANDFIELD", "h", 100)
        assert len(set(got)) == 100
        seen.update(got)
    assert len(seen) > 150


def test_hscan_small_is_one_call(conn):
    conn.cmd("HSET", "h", "a", 1, "b", 2, "ab", 3)
    assert flat(conn, "HSCAN", "h", 0) == [b"0", [b"a", b"1", b"b", b"2", b"ab", b"3"]]
    assert flat(conn, "HSCAN", "h", 0, "MATCH", "a*", "COUNT", 1) == [b"0", [b"a", b"1", b"ab", b"3"]]
    assert flat(conn, "HSCAN", "nokey", 0, "COUNT", "x") == [b"0", []]
    assert conn.cmd("HSCAN", "h", 0, "COUNT", 0) == SYNTAX
    assert conn.cmd("HSCAN", "h", 0, "COUNT", "x") == error(su.NOT_INTEGER)
    assert conn.cmd("HSCAN", "h", 0, "TYPE", "hash") == SYNTAX
    assert conn.cmd("HSCAN", "h", 0, "MATCH") == SYNTAX
    assert conn.cmd("HSCAN", "h", "x") == error("ERR invalid cursor")
    conn.cmd("SET", "s", "v")
    assert conn.cmd("HSCAN", "s", 0) == error(su.WRONGTYPE)


def test_hscan_big_visits_everything(conn):
    fields = {b"f%d" % i: b"%d" % i for i in range(1000)}
    conn.cmd("HSET", "h", *[x for kv in fields.items() for x in kv])
    got, cursor, calls = {}, b"0", 0
    while True:
        cursor, items = flat(conn, "HSCAN", "h", cursor)
        calls += 1
        got.update(dict(zip(items[0::2], items[1::2])))
        if cursor == b"0":
            break
    assert got == fields and calls > 1
