"""List commands that move or find elements: LMOVE, RPOPLPUSH, LPOS, LPUSHX,
RPUSHX, LMPOP; Redis 7.0's replies, error texts and keyspace events, run
against latchd and redis-server alike."""

import pytest

from resp_util import parse
import script_util as su
from script_util import array, bulk, error, gone

WRONGTYPE = error(su.WRONGTYPE)
SYNTAX = error("ERR syntax error")


def lrange(conn, key):
    return parse(conn.cmd("LRANGE", key, 0, -1))


# ---------------------------------------------------------------- LMOVE

@pytest.mark.parametrize("frm,to", [("LEFT", "LEFT"), ("LEFT", "RIGHT"),
                                    ("RIGHT", "LEFT"), ("RIGHT", "RIGHT")])
def test_lmove_ends(conn, frm, to):
    conn.cmd("RPUSH", "src", "a", "b", "c")
    conn.cmd("RPUSH", "dst", "x", "y")
    moved = "a" if frm == "LEFT" else "c"
    assert conn.cmd("LMOVE", "src", "dst", frm, to) == bulk(moved)
    want = [b"x", b"y"]
    want = [moved.encode()] + want if to == "LEFT" else want + [moved.encode()]
    assert lrange(conn, "dst") == want


def test_lmove_events_and_emptied_source(conn, keyevents):
    conn.cmd("RPUSH", "src", "only")
    keyevents.take()
    assert conn.cmd("LMOVE", "src", "dst", "left", "right") == bulk("only")
    # the push (on a new key: "new" is not in KEA) before the pop, then del
    keyevents.expect(("rpush", "dst"), ("lpop", "src"), ("del", "src"))
    gone(conn, "src")
    assert lrange(conn, "dst") == [b"only"]


def test_lmove_same_list_rotates(conn, keyevents):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    keyevents.take()
    assert conn.cmd("RPOPLPUSH", "l", "l") == bulk("c")
    assert lrange(conn, "l") == [b"c", b"a", b"b"]
    keyevents.expect(("lpush", "l"), ("rpop", "l"))
    conn.cmd("DEL", "l")
    conn.cmd("RPUSH", "l", "one")
    assert conn.cmd("LMOVE", "l", "l", "LEFT", "RIGHT") == bulk("one")
    assert lrange(conn, "l") == [b"one"]


def test_lmove_missing_and_wrong_types(conn):
    assert conn.cmd("LMOVE", "nokey", "dst", "LEFT", "LEFT") == b"$-1\r\n"
    assert conn.cmd("RPOPLPUSH", "nokey", "dst") == b"$-1\r\n"
    gone(conn, "dst")
    conn.cmd("SET", "s", "x")
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("LMOVE", "s", "l", "LEFT", "LEFT") == WRONGTYPE
    assert conn.cmd("LMOVE", "l", "s", "LEFT", "LEFT") == WRONGTYPE
    assert lrange(conn, "l") == [b"a"]              # nothing moved
    assert conn.cmd("LMOVE", "l", "d", "UP", "LEFT") == SYNTAX
    assert conn.cmd("LMOVE", "nokey", "d", "LEFT", "DOWN") == SYNTAX   # parsed first
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert conn.cmd("LMOVE", "nokey", "dst", "LEFT", "LEFT") == b"_\r\n"


# ---------------------------------------------------------------- LPUSHX / RPUSHX

def test_pushx(conn, keyevents):
    assert conn.cmd("LPUSHX", "l", "a") == b":0\r\n"
    assert conn.cmd("RPUSHX", "l", "a", "b") == b":0\r\n"
    gone(conn, "l")
    conn.cmd("RPUSH", "l", "m")
    keyevents.take()
    assert conn.cmd("LPUSHX", "l", "a", "b") == b":3\r\n"
    assert conn.cmd("RPUSHX", "l", "z") == b":4\r\n"
    assert lrange(conn, "l") == [b"b", b"a", b"m", b"z"]
    keyevents.expect(("lpush", "l"), ("rpush", "l"))
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LPUSHX", "s", "a") == WRONGTYPE


# ---------------------------------------------------------------- LPOS

@pytest.mark.parametrize("args,want", [
    ((), b":0\r\n"),
    (("RANK", 2), b":3\r\n"),
    (("RANK", -1), b":5\r\n"),
    (("RANK", -3), b":0\r\n"),
    (("RANK", 4), b"$-1\r\n"),
    (("COUNT", 0), b"*3\r\n:0\r\n:3\r\n:5\r\n"),
    (("COUNT", 2), b"*2\r\n:0\r\n:3\r\n"),
    (("RANK", -1, "COUNT", 2), b"*2\r\n:5\r\n:3\r\n"),
    (("RANK", 2, "COUNT", 0, "MAXLEN", 4), b"*1\r\n:3\r\n"),
    (("MAXLEN", 3), b":0\r\n"),
    (("RANK", 2, "MAXLEN", 3), b"$-1\r\n"),
    (("RANK", "-9223372036854775808"), b":5\r\n"),   # Redis's negation leaves it negative
])
def test_lpos(conn, args, want):
    conn.cmd("RPUSH", "l", "a", "b", "c", "a", "b", "a")
    assert conn.cmd("LPOS", "l", "a", *args) == want


def test_lpos_missing_and_errors(conn):
    assert conn.cmd("LPOS", "nokey", "a") == b"$-1\r\n"
    assert conn.cmd("LPOS", "nokey", "a", "COUNT", 1) == b"*0\r\n"
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("LPOS", "l", "z", "COUNT", 1) == b"*0\r\n"
    assert conn.cmd("LPOS", "l", "a", "RANK", 0) == error(
        "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list")
    assert conn.cmd("LPOS", "l", "a", "RANK", "x") == error(su.NOT_INTEGER)
    assert conn.cmd("LPOS", "l", "a", "COUNT", -1) == error("ERR COUNT can't be negative")
    assert conn.cmd("LPOS", "l", "a", "COUNT", "x") == error("ERR COUNT can't be negative")
    assert conn.cmd("LPOS", "l", "a", "MAXLEN", -1) == error("ERR MAXLEN can't be negative")
    assert conn.cmd("LPOS", "l", "a", "RANK") == SYNTAX
    assert conn.cmd("LPOS", "l", "a", "FOO", 1) == SYNTAX
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LPOS", "s", "a") == WRONGTYPE


def test_lpos_long_list(conn):
    conn.cmd("RPUSH", "l", *[str(i % 10) for i in range(1000)])
    assert conn.cmd("LPOS", "l", "7", "RANK", -1) == b":997\r\n"
    assert parse(conn.cmd("LPOS", "l", "3", "COUNT", 0)) == list(range(3, 1000, 10))


# ---------------------------------------------------------------- LMPOP

def test_lmpop(conn, keyevents):
    conn.cmd("RPUSH", "b", "1", "2", "3")
    keyevents.take()
    assert parse(conn.cmd("LMPOP", 2, "a", "b", "LEFT")) == [b"b", [b"1"]]
    assert parse(conn.cmd("LMPOP", 2, "a", "b", "RIGHT", "COUNT", 10)) == [b"b", [b"3", b"2"]]
    keyevents.expect(("lpop", "b"), ("rpop", "b"), ("del", "b"))
    assert conn.cmd("LMPOP", 2, "a", "b", "LEFT") == b"*-1\r\n"
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LMPOP", 2, "s", "b", "LEFT") == WRONGTYPE
    conn.cmd("RPUSH", "b", "1")
    # the first non-empty list answers: a later wrong type is never looked at
    assert parse(conn.cmd("LMPOP", 2, "b", "s", "LEFT")) == [b"b", [b"1"]]
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert conn.cmd("LMPOP", 1, "nokey", "LEFT") == b"_\r\n"


@pytest.mark.parametrize("args,err", [
    ((0, "l", "LEFT"), "ERR numkeys should be greater than 0"),
    (("x", "l", "LEFT"), "ERR numkeys should be greater than 0"),
    ((3, "l", "LEFT"), "ERR syntax error"),
    ((1, "l", "UP"), "ERR syntax error"),
    ((1, "l", "LEFT", "COUNT", 0), "ERR count should be greater than 0"),
    ((1, "l", "LEFT", "COUNT", "x"), "ERR count should be greater than 0"),
    ((1, "l", "LEFT", "COUNT", 1, "COUNT", 1), "ERR syntax error"),
    ((1, "l", "LEFT", "COUNT"), "ERR syntax error"),
    ((1, "l", "LEFT", "FOO"), "ERR syntax error"),
])
def test_lmpop_errors(conn, args, err):
    assert conn.cmd("LMPOP", *args) == error(err)


def test_moves_in_multi_and_scripts(conn):
    conn.cmd("RPUSH", "l", "a", "b")
    assert conn.cmd("MULTI") == b"+OK\r\n"
    assert conn.cmd("LMOVE", "l", "m", "LEFT", "LEFT") == b"+QUEUED\r\n"
    assert conn.cmd("LPOS", "m", "a") == b"+QUEUED\r\n"
    assert parse(conn.cmd("EXEC")) == [b"a", 0]
    assert parse(conn.cmd("EVAL", "return redis.call('lmpop', 1, KEYS[1], 'right')", 1, "l")) == \
        [b"l", [b"b"]]
