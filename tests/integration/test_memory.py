"""MEMORY USAGE / STATS / DOCTOR / PURGE / HELP as Redis 7.0 answers them:
usage grows with the value, nil for a missing key, Redis's errors."""

import pytest

from resp_util import parse


def usage(conn, key, *extra):
    return parse(conn.cmd("MEMORY", "USAGE", key, *extra))


def test_usage_grows_with_the_value(conn):
    assert conn.cmd("MEMORY", "USAGE", "missing") in (b"$-1\r\n", b"_\r\n")
    conn.cmd("SET", "s", "v")
    small = usage(conn, "s")
    conn.cmd("SET", "s", "x" * 10000)
    assert usage(conn, "s") > small + 9000
    for kind, grow in (("l", lambda i: conn.cmd("RPUSH", "l", "e%d" % i)),
                       ("h", lambda i: conn.cmd("HSET", "h", "f%d" % i, "v")),
                       ("z", lambda i: conn.cmd("ZADD", "z", i, "m%d" % i)),
                       ("t", lambda i: conn.cmd("SADD", "t", "m%d" % i))):
        grow(0)
        before = usage(conn, kind)
        for i in range(1, 2000):
            grow(i)
        assert usage(conn, kind, "SAMPLES", "0") > before * 10, kind


def test_usage_errors(conn):
    conn.cmd("SET", "s", "v")
    assert conn.cmd("MEMORY", "USAGE", "s", "SAMPLES") == b"-ERR syntax error\r\n"
    assert conn.cmd("MEMORY", "USAGE", "s", "SAMPLES", "-1") == b"-ERR syntax error\r\n"
    assert conn.cmd("MEMORY", "USAGE", "s", "SAMPLES", "x") == \
        b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("MEMORY", "USAGE", "s", "BOGUS", "1") == b"-ERR syntax error\r\n"
    assert conn.cmd("MEMORY", "USAGE").startswith(b"-ERR wrong number of arguments for 'memory|usage'")
    assert conn.cmd("MEMORY", "NOPE").startswith(b"-ERR unknown subcommand 'NOPE'")


def test_stats_fields_as_redis(conn, reference_redis):
    conn.cmd("SET", "k", "v")
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    ref.cmd("SET", "k", "v")
    mine, theirs = parse(conn.cmd("MEMORY", "STATS")), parse(ref.cmd("MEMORY", "STATS"))
    names = lambda flat: [flat[i] for i in range(0, len(flat), 2)] if isinstance(flat, list) else list(flat)
    assert names(mine) == names(theirs)
    db0 = lambda flat: flat[flat.index(b"db.0") + 1]
    assert names(db0(mine)) == names(db0(theirs))


def test_doctor_purge_help(conn, reference_redis):
    conn.cmd("FLUSHALL")
    ref = reference_redis.raw()
    for c in (conn, ref):
        assert c.cmd("MEMORY", "PURGE") == b"+OK\r\n"
    assert conn.cmd("MEMORY", "HELP") == ref.cmd("MEMORY", "HELP")
    assert b"Hi Sam" in conn.cmd("MEMORY", "DOCTOR")


def test_latchd_only_malloc_stats(latchd_factory):
    conn = latchd_factory().raw()
    assert conn.cmd("MEMORY", "MALLOC-STATS") == b"$45\r\nStats not supported for the current allocator\r\n"
