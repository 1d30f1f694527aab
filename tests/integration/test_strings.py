"""String commands: GET, SET (+options), SETNX, GETDEL, INCR/DECR family, MGET."""

import time

import pytest

from resp_util import parse

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
SYNTAX = b"-ERR syntax error\r\n"
OVERFLOW = b"-ERR increment or decrement would overflow\r\n"
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


# ---------------------------------------------------------------- GET / SET

def test_get_missing(conn):
    assert conn.cmd("GET", "nope") == b"$-1\r\n"


def test_set_get(conn):
    assert conn.cmd("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"
    assert conn.cmd("SET", "k", "other") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$5\r\nother\r\n"


def test_set_empty_value(conn):
    assert conn.cmd("SET", "k", "") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$0\r\n\r\n"
    assert conn.cmd("EXISTS", "k") == b":1\r\n"


def test_binary_safe_keys_and_values(conn):
    key = b"k\x00\r\n\xff"
    val = bytes(range(256)) * 4
    assert conn.cmd("SET", key, val) == b"+OK\r\n"
    assert conn.cmd("GET", key) == bulk(val)
    assert conn.cmd("GET", b"k") == b"$-1\r\n"


def test_large_value(r):
    val = b"x" * (1 << 20) + b"end"
    assert r.set("big", val) is True
    assert r.get("big") == val


def test_set_get_via_client(r):
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.set("n", 42) is True
    assert r.get("n") == b"42"


def test_get_wrongtype(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("GET", "h") == WRONGTYPE


def test_set_overwrites_other_types(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("SET", "h", "now a string") == b"+OK\r\n"
    assert conn.cmd("TYPE", "h") == b"+string\r\n"


# ---------------------------------------------------------------- SET NX / XX / GET

def test_set_nx(conn):
    assert conn.cmd("SET", "k", "1", "NX") == b"+OK\r\n"
    assert conn.cmd("SET", "k", "2", "NX") == b"$-1\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\n1\r\n"


def test_set_xx(conn):
    assert conn.cmd("SET", "k", "1", "XX") == b"$-1\r\n"
    assert conn.cmd("EXISTS", "k") == b":0\r\n"
    conn.cmd("SET", "k", "1")
    assert conn.cmd("SET", "k", "2", "XX") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\n2\r\n"


def test_set_nx_xx_consider_any_type(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("SET", "h", "v", "NX") == b"$-1\r\n"
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"
    assert conn.cmd("SET", "h", "v", "XX") == b"+OK\r\n"
    assert conn.cmd("TYPE", "h") == b"+string\r\n"


def test_set_options_case_insensitive(conn):
    assert conn.cmd("SET", "k", "v", "nx") == b"+OK\r\n"
    assert conn.cmd("SET", "k", "w", "xX", "gEt") == b"$1\r\nv\r\n"
    assert conn.cmd("SET", "k", "v", "Ex", "100") == b"+OK\r\n"
    assert conn.cmd("TTL", "k") == b":100\r\n"


def test_set_get_option(conn):
    assert conn.cmd("SET", "k", "v1", "GET") == b"$-1\r\n"
    assert conn.cmd("GET", "k") == b"$2\r\nv1\r\n"
    assert conn.cmd("SET", "k", "v2", "GET") == b"$2\r\nv1\r\n"
    assert conn.cmd("GET", "k") == b"$2\r\nv2\r\n"


def test_set_get_with_nx_and_xx(conn):
    # Redis 7.0 allows NX together with GET
    assert conn.cmd("SET", "k", "v", "NX", "GET") == b"$-1\r\n"
    assert conn.cmd("SET", "k", "w", "NX", "GET") == b"$1\r\nv\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"
    assert conn.cmd("SET", "k", "x", "XX", "GET") == b"$1\r\nv\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nx\r\n"
    assert conn.cmd("SET", "m", "x", "XX", "GET") == b"$-1\r\n"
    assert conn.cmd("EXISTS", "m") == b":0\r\n"


def test_set_get_wrongtype_leaves_key_alone(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("SET", "h", "v", "GET") == WRONGTYPE
    assert conn.cmd("SET", "h", "v", "NX", "GET") == WRONGTYPE
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"


@pytest.mark.parametrize("opts", [
    ["NX", "XX"],
    ["XX", "NX"],
    ["EX", "10", "PX", "100"],
    ["PX", "100", "EX", "10"],
    ["EX", "10", "EXAT", "4102444800"],
    ["PXAT", "4102444800000", "EXAT", "4102444800"],
    ["KEEPTTL", "EX", "10"],
    ["PX", "5000", "KEEPTTL"],
    ["EX"],
    ["PX"],
    ["EXAT"],
    ["PXAT"],
    ["BOGUS"],
    ["NX", "BOGUS"],
    ["10"],
])
def test_set_syntax_errors(conn, opts):
    conn.cmd("SET", "k", "orig")
    assert conn.cmd("SET", "k", "v", *opts) == SYNTAX
    assert conn.cmd("GET", "k") == b"$4\r\norig\r\n"


def test_set_repeated_options_are_accepted(conn):
    assert conn.cmd("SET", "k", "v", "EX", "10", "EX", "20") == b"+OK\r\n"
    assert conn.cmd("TTL", "k") == b":20\r\n"
    assert conn.cmd("SET", "k", "v", "XX", "XX") == b"+OK\r\n"
    assert conn.cmd("SET", "k", "w", "GET", "GET") == b"$1\r\nv\r\n"


@pytest.mark.parametrize("opt", ["EX", "PX", "EXAT", "PXAT"])
@pytest.mark.parametrize("val", ["0", "-1", "-100"])
def test_set_invalid_expire_time(conn, opt, val):
    assert conn.cmd("SET", "k", "v", opt, val) == b"-ERR invalid expire time in 'set' command\r\n"
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


@pytest.mark.parametrize("opt,val", [
    ("EX", "9223372036854775807"),
    ("EX", "9999999999999999"),
    ("PX", "9223372036854775807"),
    ("EXAT", "9223372036854775807"),
])
def test_set_expire_overflow(conn, opt, val):
    assert conn.cmd("SET", "k", "v", opt, val) == b"-ERR invalid expire time in 'set' command\r\n"


@pytest.mark.parametrize("opt", ["EX", "PX", "EXAT", "PXAT"])
@pytest.mark.parametrize("val", ["abc", "1.5", "", "99999999999999999999"])
def test_set_expire_not_integer(conn, opt, val):
    assert conn.cmd("SET", "k", "v", opt, val) == NOT_INT


def test_set_ex_px_set_ttl(conn):
    conn.cmd("SET", "a", "v", "EX", "100")
    assert conn.cmd("TTL", "a") == b":100\r\n"
    conn.cmd("SET", "b", "v", "PX", "100000")
    assert 99000 <= parse(conn.cmd("PTTL", "b")) <= 100000


def test_set_exat_pxat(conn):
    at = int(time.time()) + 1000
    conn.cmd("SET", "a", "v", "EXAT", str(at))
    assert conn.cmd("EXPIRETIME", "a") == b":%d\r\n" % at
    conn.cmd("SET", "b", "v", "PXAT", str(at * 1000 + 123))
    assert conn.cmd("PEXPIRETIME", "b") == b":%d\r\n" % (at * 1000 + 123)


def test_set_exat_in_the_past_deletes(conn):
    conn.cmd("SET", "k", "old")
    assert conn.cmd("SET", "k", "v", "EXAT", "1") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$-1\r\n"
    assert conn.cmd("SET", "k", "v", "PXAT", "1") == b"+OK\r\n"
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


def test_set_clears_ttl_unless_keepttl(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("SET", "k", "v2", "KEEPTTL") == b"+OK\r\n"
    assert 99 <= parse(conn.cmd("TTL", "k")) <= 100
    assert conn.cmd("GET", "k") == b"$2\r\nv2\r\n"
    assert conn.cmd("SET", "k", "v3") == b"+OK\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"


def test_set_keepttl_on_persistent_and_new_keys(conn):
    assert conn.cmd("SET", "new", "v", "KEEPTTL") == b"+OK\r\n"
    assert conn.cmd("TTL", "new") == b":-1\r\n"


def test_set_nx_fails_does_not_touch_ttl(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("SET", "k", "w", "NX", "EX", "5") == b"$-1\r\n"
    assert 99 <= parse(conn.cmd("TTL", "k")) <= 100


def test_set_options_via_client(r):
    assert r.set("k", "v", nx=True) is True
    assert r.set("k", "v", nx=True) is None
    assert r.set("k", "w", xx=True, get=True) == b"v"
    assert r.set("k", "v", ex=100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.set("k", "v", px=5000, keepttl=False) is True
    assert r.set("k", "v2", keepttl=True) is True
    assert 0 < r.pttl("k") <= 5000


# ---------------------------------------------------------------- SETNX / GETDEL

def test_setnx(conn):
    assert conn.cmd("SETNX", "k", "1") == b":1\r\n"
    assert conn.cmd("SETNX", "k", "2") == b":0\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\n1\r\n"


def test_setnx_on_other_type(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("SETNX", "h", "x") == b":0\r\n"
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"


def test_getdel(conn):
    conn.cmd("SET", "k", "val")
    assert conn.cmd("GETDEL", "k") == b"$3\r\nval\r\n"
    assert conn.cmd("EXISTS", "k") == b":0\r\n"
    assert conn.cmd("GETDEL", "k") == b"$-1\r\n"


def test_getdel_wrongtype_keeps_key(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("GETDEL", "h") == WRONGTYPE
    assert conn.cmd("EXISTS", "h") == b":1\r\n"


def test_getdel_of_volatile_key(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("GETDEL", "k") == b"$1\r\nv\r\n"
    assert conn.cmd("SET", "k", "w") == b"+OK\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"


# ---------------------------------------------------------------- INCR family

def test_incr_decr(conn):
    assert conn.cmd("INCR", "n") == b":1\r\n"
    assert conn.cmd("INCR", "n") == b":2\r\n"
    assert conn.cmd("INCRBY", "n", "10") == b":12\r\n"
    assert conn.cmd("INCRBY", "n", "-20") == b":-8\r\n"
    assert conn.cmd("DECR", "n") == b":-9\r\n"
    assert conn.cmd("DECRBY", "n", "-9") == b":0\r\n"
    assert conn.cmd("DECRBY", "n", "5") == b":-5\r\n"
    assert conn.cmd("GET", "n") == b"$2\r\n-5\r\n"


def test_incr_missing_keys_start_at_zero(conn):
    assert conn.cmd("DECR", "a") == b":-1\r\n"
    assert conn.cmd("INCRBY", "b", "7") == b":7\r\n"
    assert conn.cmd("DECRBY", "c", "5") == b":-5\r\n"
    assert conn.cmd("TYPE", "a") == b"+string\r\n"


def test_incr_existing_string_number(conn):
    conn.cmd("SET", "n", "41")
    assert conn.cmd("INCR", "n") == b":42\r\n"
    conn.cmd("SET", "n", "-7")
    assert conn.cmd("INCRBY", "n", "0") == b":-7\r\n"


@pytest.mark.parametrize("value", [
    "", " 1", "1 ", "+1", "01", "007", "-0", "-", "1.5", "1e3", "abc", "0x10",
    "9223372036854775808", "-9223372036854775809", "99999999999999999999",
])
def test_incr_non_integer_value(conn, value):
    conn.cmd("SET", "n", value)
    assert conn.cmd("INCR", "n") == NOT_INT
    assert conn.cmd("DECRBY", "n", "1") == NOT_INT
    assert conn.cmd("GET", "n") == bulk(value.encode())


@pytest.mark.parametrize("arg", ["abc", "1.5", "", "+5", "-0", "00", " 1", "9223372036854775808"])
def test_incrby_non_integer_argument(conn, arg):
    conn.cmd("SET", "n", "1")
    assert conn.cmd("INCRBY", "n", arg) == NOT_INT
    assert conn.cmd("DECRBY", "n", arg) == NOT_INT
    assert conn.cmd("GET", "n") == b"$1\r\n1\r\n"


def test_incr_limits(conn):
    conn.cmd("SET", "n", str(LLONG_MAX - 1))
    assert conn.cmd("INCR", "n") == b":%d\r\n" % LLONG_MAX
    assert conn.cmd("INCR", "n") == OVERFLOW
    assert conn.cmd("INCRBY", "n", "0") == b":%d\r\n" % LLONG_MAX
    assert conn.cmd("DECRBY", "n", "-1") == OVERFLOW
    assert conn.cmd("GET", "n") == bulk(str(LLONG_MAX).encode())
    conn.cmd("SET", "m", str(LLONG_MIN + 1))
    assert conn.cmd("DECR", "m") == b":%d\r\n" % LLONG_MIN
    assert conn.cmd("DECR", "m") == OVERFLOW
    assert conn.cmd("INCRBY", "m", "-1") == OVERFLOW
    assert conn.cmd("INCRBY", "m", str(LLONG_MAX)) == b":-1\r\n"


def test_incrby_llong_min(conn):
    conn.cmd("SET", "n", "10")
    assert conn.cmd("INCRBY", "n", str(LLONG_MIN)) == b":%d\r\n" % (10 + LLONG_MIN)
    conn.cmd("SET", "z", "-1")
    assert conn.cmd("DECRBY", "z", str(LLONG_MAX)) == b":%d\r\n" % LLONG_MIN


def test_decrby_llong_min_is_special(conn):
    # negating LLONG_MIN is impossible: DECRBY has its own error text
    conn.cmd("SET", "n", "0")
    assert conn.cmd("DECRBY", "n", str(LLONG_MIN)) == b"-ERR decrement would overflow\r\n"
    assert conn.cmd("DECRBY", "missing", str(LLONG_MIN)) == b"-ERR decrement would overflow\r\n"
    assert conn.cmd("EXISTS", "missing") == b":0\r\n"


def test_incr_wrongtype(conn):
    conn.cmd("HSET", "h", "f", "1")
    for cmd in (["INCR", "h"], ["DECR", "h"], ["INCRBY", "h", "2"], ["DECRBY", "h", "2"]):
        assert conn.cmd(*cmd) == WRONGTYPE


def test_incr_keeps_ttl(conn):
    conn.cmd("SET", "n", "5", "EX", "100")
    assert conn.cmd("INCR", "n") == b":6\r\n"
    assert conn.cmd("DECRBY", "n", "2") == b":4\r\n"
    assert 99 <= parse(conn.cmd("TTL", "n")) <= 100


def test_incr_via_client(r):
    assert r.incr("n") == 1
    assert r.incrby("n", 5) == 6
    assert r.decr("n") == 5
    assert r.decrby("n", 10) == -5
    assert r.get("n") == b"-5"


def test_concurrent_incr(server):
    import threading
    n_threads, per = 8, 200

    def work():
        c = server.client()
        for _ in range(per):
            c.incr("counter")

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.client().get("counter") == str(n_threads * per).encode()


# ---------------------------------------------------------------- MGET

def test_mget(conn):
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("MGET", "a", "nope", "b", "h", "a") == (
        b"*5\r\n$1\r\n1\r\n$-1\r\n$0\r\n\r\n$-1\r\n$1\r\n1\r\n")


def test_mget_single(conn):
    assert conn.cmd("MGET", "nope") == b"*1\r\n$-1\r\n"


def test_mget_via_client(r):
    r.set("a", "1")
    assert r.mget("a", "b") == [b"1", None]
