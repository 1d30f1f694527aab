"""COPY (every type, TTLs, REPLACE, DB, the errors) and RANDOMKEY (live keys
only, nil when empty), as Redis 7.0 answers them."""

import time

import pytest

from resp_util import parse

SYNTAX = b"-ERR syntax error\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
SAME = b"-ERR source and destination objects are the same\r\n"
OUT_OF_RANGE = b"-ERR DB index is out of range\r\n"


def dump(conn, key):
    """The value under key as a comparable Python value."""
    kind = conn.cmd("TYPE", key)
    if kind == b"+string\r\n":
        return parse(conn.cmd("GET", key))
    if kind == b"+hash\r\n":
        flat = parse(conn.cmd("HGETALL", key))
        return dict(zip(flat[::2], flat[1::2]))
    if kind == b"+list\r\n":
        return parse(conn.cmd("LRANGE", key, "0", "-1"))
    if kind == b"+zset\r\n":
        return parse(conn.cmd("ZRANGE", key, "0", "-1", "WITHSCORES"))
    return None


VALUES = {
    "string-short": [["SET", "src", "v"]],
    "string-long": [["SET", "src", "x" * 300]],
    "string-int": [["SET", "src", "12345"]],
    "hash-one": [["HSET", "src", "f", "v"]],
    "hash-small": [["HSET", "src", *[x for i in range(10) for x in ("f%d" % i, "v%d" % i)]]],
    "hash-big": [["HSET", "src", *[x for i in range(300) for x in ("f%d" % i, "v%d" % i)]]],
    "hash-wide": [["HSET", "src", "f", "w" * 100, "g", "1"]],
    "list-small": [["RPUSH", "src", "a", "b", "c"]],
    "list-big": [["RPUSH", "src", *["elem-%d" % i for i in range(2000)]]],
    "zset-small": [["ZADD", "src", "1", "a", "2.5", "b", "-inf", "c"]],
    "zset-big": [["ZADD", "src", *[x for i in range(300) for x in (str(i % 17), "m%d" % i)]]],
}


@pytest.mark.parametrize("setup", VALUES.values(), ids=list(VALUES))
def test_copy_every_type(conn, setup):
    for cmd in setup:
        conn.cmd(*cmd)
    assert conn.cmd("COPY", "src", "dst") == b":1\r\n"
    assert conn.cmd("TYPE", "dst") == conn.cmd("TYPE", "src")
    assert dump(conn, "dst") == dump(conn, "src")
    # two values from then on: changing the copy leaves the source
    before = dump(conn, "src")
    conn.cmd("DEL", "dst")
    assert dump(conn, "src") == before


def test_copy_is_independent(conn):
    conn.cmd("RPUSH", "src", *["e%d" % i for i in range(500)])
    conn.cmd("COPY", "src", "dst")
    conn.cmd("LPUSH", "dst", "new")
    conn.cmd("LTRIM", "src", "0", "9")
    assert conn.cmd("LLEN", "dst") == b":501\r\n"
    assert conn.cmd("LLEN", "src") == b":10\r\n"
    conn.cmd("ZADD", "z", *[x for i in range(200) for x in (str(i), "m%d" % i)])
    conn.cmd("COPY", "z", "z2")
    conn.cmd("ZINCRBY", "z2", "1000", "m0")
    assert parse(conn.cmd("ZSCORE", "z", "m0")) == b"0"
    assert parse(conn.cmd("ZRANGE", "z2", "-1", "-1")) == [b"m0"]


def test_copy_keeps_ttl(conn):
    conn.cmd("SET", "src", "v", "PX", "100000")
    conn.cmd("SET", "plain", "v")
    assert conn.cmd("COPY", "src", "dst") == b":1\r\n"
    assert 99000 < parse(conn.cmd("PTTL", "dst")) <= 100000
    assert parse(conn.cmd("PEXPIRETIME", "dst")) == parse(conn.cmd("PEXPIRETIME", "src"))
    assert conn.cmd("COPY", "plain", "dst2") == b":1\r\n"
    assert conn.cmd("TTL", "dst2") == b":-1\r\n"


def test_copy_replace_drops_old_ttl(conn):
    conn.cmd("SET", "src", "new")
    conn.cmd("HSET", "dst", "f", "v")
    conn.cmd("EXPIRE", "dst", "100")
    assert conn.cmd("COPY", "src", "dst") == b":0\r\n"
    assert conn.cmd("TYPE", "dst") == b"+hash\r\n"
    assert conn.cmd("COPY", "src", "dst", "REPLACE") == b":1\r\n"
    assert conn.cmd("GET", "dst") == b"$3\r\nnew\r\n"
    assert conn.cmd("TTL", "dst") == b":-1\r\n"


def test_copy_missing_source(conn):
    assert conn.cmd("COPY", "nope", "dst") == b":0\r\n"
    assert conn.cmd("COPY", "nope", "dst", "REPLACE") == b":0\r\n"
    assert conn.cmd("EXISTS", "dst") == b":0\r\n"


def test_copy_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("COPY", "k", "k") == SAME
    assert conn.cmd("COPY", "k", "k", "REPLACE") == SAME
    assert conn.cmd("COPY", "k", "k", "DB", "0") == SAME
    assert conn.cmd("COPY", "nope", "nope") == SAME   # checked before the lookup
    assert conn.cmd("COPY", "k", "x", "DB", "16") == OUT_OF_RANGE
    assert conn.cmd("COPY", "k", "x", "DB", "-1") == OUT_OF_RANGE
    assert conn.cmd("COPY", "k", "x", "DB", "x") == NOT_INT
    assert conn.cmd("COPY", "k", "x", "DB", "1.5") == NOT_INT
    assert conn.cmd("COPY", "k", "x", "DB", "4294967296") == (
        b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n")
    assert conn.cmd("COPY", "k", "x", "DB") == SYNTAX
    assert conn.cmd("COPY", "k", "x", "FOO") == SYNTAX
    assert conn.cmd("COPY", "k", "x", "REPLACE", "DB", "16") == OUT_OF_RANGE
    assert conn.cmd("COPY", "k") == b"-ERR wrong number of arguments for 'copy' command\r\n"
    assert conn.cmd("EXISTS", "x") == b":0\r\n"


def test_copy_db_zero_explicitly(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("COPY", "k", "k2", "db", "0", "replace") == b":1\r\n"
    assert conn.cmd("GET", "k2") == b"$1\r\nv\r\n"


def test_copy_to_another_db(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("COPY", "k", "k", "DB", "1") == b":1\r\n"
    assert conn.cmd("COPY", "k", "k", "DB", "1") == b":0\r\n"
    conn.cmd("SELECT", "1")
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"
    assert 0 < parse(conn.cmd("TTL", "k")) <= 100
    conn.cmd("FLUSHDB")
    conn.cmd("SELECT", "0")


def test_copy_expired_destination_is_replaced(conn):
    conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        conn.cmd("SET", "src", "new")
        conn.cmd("SET", "dst", "old", "PX", "1")
        time.sleep(0.02)
        assert conn.cmd("COPY", "src", "dst") == b":1\r\n"
        assert conn.cmd("GET", "dst") == b"$3\r\nnew\r\n"
    finally:
        conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_copy_in_transaction_and_watch(server, conn):
    conn.cmd("SET", "src", "v")
    other = server.raw()
    other.cmd("WATCH", "dst")
    conn.cmd("COPY", "src", "dst")
    other.cmd("MULTI")
    other.cmd("GET", "dst")
    assert other.cmd("EXEC") == b"*-1\r\n"


def test_copy_command_info(conn):
    entry = parse(conn.cmd("COMMAND", "INFO", "copy"))[0]
    assert entry[:6] == [b"copy", -3, [b"write", b"denyoom"], 1, 2, 1]
    entry = parse(conn.cmd("COMMAND", "INFO", "randomkey"))[0]
    assert entry[:6] == [b"randomkey", 1, [b"readonly"], 0, 0, 0]


# ---------------------------------------------------------------- RANDOMKEY

def test_randomkey_empty(conn):
    assert conn.cmd("RANDOMKEY") == b"$-1\r\n"


def test_randomkey_one_key(conn):
    conn.cmd("HSET", b"bin\x00key", "f", "v")
    assert conn.cmd("RANDOMKEY") == b"$7\r\nbin\x00key\r\n"


def test_randomkey_reaches_every_key(conn):
    keys = {("k%d" % i).encode() for i in range(10)}
    for k in keys:
        conn.cmd("SET", k, "v")
    seen = {parse(conn.cmd("RANDOMKEY")) for _ in range(400)}
    assert seen == keys


def test_randomkey_skips_expired(conn):
    conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        for i in range(20):
            conn.cmd("SET", "gone%d" % i, "v", "PX", "1")
        conn.cmd("SET", "live", "v")
        time.sleep(0.02)
        for _ in range(50):
            assert conn.cmd("RANDOMKEY") == b"$4\r\nlive\r\n"
        conn.cmd("DEL", "live")
        assert conn.cmd("RANDOMKEY") == b"$-1\r\n"
        assert conn.cmd("DBSIZE") == b":0\r\n"   # every one drawn was reclaimed
    finally:
        conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")
