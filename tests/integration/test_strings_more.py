"""The rest of Redis 7.0's string commands: APPEND, GETEX, GETSET, GETRANGE,
SUBSTR, SETRANGE, INCRBYFLOAT (and HINCRBYFLOAT's shared formatting),
MSETNX and LCS: replies, error texts, the encodings OBJECT reports after
them, proto-max-bulk-len and keyspace events."""

import time

import pytest

from resp_util import parse
from string_util import NOT_INT, SYNTAX, WRONGTYPE, bulk

NOT_FLOAT = b"-ERR value is not a valid float\r\n"
NAN_INF = b"-ERR increment would produce NaN or Infinity\r\n"
TOO_BIG = b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"


def enc(conn, key):
    return parse(conn.cmd("OBJECT", "ENCODING", key))


# ---------------------------------------------------------------- APPEND

def test_append_creates_and_grows(conn):
    assert conn.cmd("APPEND", "k", "hello") == b":5\r\n"
    assert conn.cmd("APPEND", "k", " world") == b":11\r\n"
    assert conn.cmd("GET", "k") == bulk(b"hello world")
    assert conn.cmd("APPEND", "k", "") == b":11\r\n"
    assert conn.cmd("APPEND", "l", "") == b":0\r\n"
    assert conn.cmd("EXISTS", "l") == b":1\r\n"


def test_append_many_times_past_inline_and_heap_growth(conn):
    want = b""
    for i in range(300):
        piece = b"%d-" % i
        want += piece
        assert conn.cmd("APPEND", "k", piece) == b":%d\r\n" % len(want)
    assert conn.cmd("GET", "k") == bulk(want)


def test_append_encodings(conn):
    conn.cmd("APPEND", "new", "77")        # a new key is SET's encoding
    assert enc(conn, "new") == b"int"
    conn.cmd("SET", "n", "123")
    conn.cmd("APPEND", "n", "4")
    assert enc(conn, "n") == b"raw"
    assert conn.cmd("OBJECT", "REFCOUNT", "n") == b":1\r\n"
    conn.cmd("SET", "e", "x")
    conn.cmd("APPEND", "e", "")            # even an empty append unshares it
    assert enc(conn, "e") == b"raw"
    conn.cmd("INCR", "n")                  # INCR makes an integer again
    assert enc(conn, "n") == b"int"


def test_append_wrongtype_and_ttl_kept(conn):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("APPEND", "l", "x") == WRONGTYPE
    conn.cmd("SET", "k", "v", "EX", "100")
    conn.cmd("APPEND", "k", "w")
    assert 0 < parse(conn.cmd("TTL", "k")) <= 100


# ---------------------------------------------------------------- GETRANGE / SUBSTR

@pytest.mark.parametrize("start,end,want", [
    (0, -1, b"Hello World"), (0, 4, b"Hello"), (-5, -1, b"World"), (5, 3, b""),
    (-1, -5, b""), (0, 100, b"Hello World"), (-100, 2, b"Hel"), (100, 200, b""),
    (-100, -90, b"H"), (3, 3, b"l"),
])
def test_getrange(conn, start, end, want):
    conn.cmd("SET", "k", "Hello World")
    assert conn.cmd("GETRANGE", "k", start, end) == bulk(want)
    assert conn.cmd("SUBSTR", "k", start, end) == bulk(want)


def test_getrange_edges(conn):
    assert conn.cmd("GETRANGE", "none", 0, 10) == bulk(b"")
    assert conn.cmd("GETRANGE", "none", "a", 1) == NOT_INT
    conn.cmd("SET", "k", "")
    assert conn.cmd("GETRANGE", "k", 0, -1) == bulk(b"")
    conn.cmd("SET", "n", "1234")
    assert conn.cmd("GETRANGE", "n", 1, 2) == bulk(b"23")
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("GETRANGE", "l", 0, 1) == WRONGTYPE
    big = "9223372036854775807"
    assert conn.cmd("GETRANGE", "n", "-" + big, big) == bulk(b"1234")


# ---------------------------------------------------------------- SETRANGE

def test_setrange(conn):
    conn.cmd("SET", "k", "Hello World")
    assert conn.cmd("SETRANGE", "k", 6, "Redis") == b":11\r\n"
    assert conn.cmd("GET", "k") == bulk(b"Hello Redis")
    assert conn.cmd("SETRANGE", "k", 13, "!") == b":14\r\n"
    assert conn.cmd("GET", "k") == bulk(b"Hello Redis\x00\x00!")
    assert enc(conn, "k") == b"raw"


def test_setrange_missing_key_and_empty_value(conn):
    assert conn.cmd("SETRANGE", "m", 5, "") == b":0\r\n"
    assert conn.cmd("EXISTS", "m") == b":0\r\n"
    assert conn.cmd("SETRANGE", "m", 2, "ab") == b":4\r\n"
    assert conn.cmd("GET", "m") == bulk(b"\x00\x00ab")
    assert enc(conn, "m") == b"raw"
    assert conn.cmd("SETRANGE", "m", 100, "") == b":4\r\n"   # nothing set: length as is


def test_setrange_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SETRANGE", "k", -1, "x") == b"-ERR offset is out of range\r\n"
    assert conn.cmd("SETRANGE", "k", "x", "x") == NOT_INT
    assert conn.cmd("SETRANGE", "k", 536870912, "x") == TOO_BIG     # 512 MB, the default
    assert conn.cmd("SETRANGE", "k", 536870910, "xyz") == TOO_BIG
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("SETRANGE", "l", 0, "x") == WRONGTYPE
    assert conn.cmd("SETRANGE", "l", 0, "") == WRONGTYPE


def test_append_setrange_obey_proto_max_bulk_len(conn):
    conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 1024 * 1024)
    try:
        assert conn.cmd("SETRANGE", "k", 1024 * 1024 - 1, "x") == b":1048576\r\n"
        assert conn.cmd("APPEND", "k", "y") == TOO_BIG
        assert conn.cmd("SETRANGE", "k2", 1024 * 1024, "x") == TOO_BIG
        assert conn.cmd("EXISTS", "k2") == b":0\r\n"
        assert conn.cmd("STRLEN", "k") == b":1048576\r\n"
    finally:
        conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 512 * 1024 * 1024)


# ---------------------------------------------------------------- GETSET / MSETNX

def test_getset(conn):
    assert conn.cmd("GETSET", "k", "a") == b"$-1\r\n"
    assert conn.cmd("GETSET", "k", "b") == bulk(b"a")
    conn.cmd("EXPIRE", "k", 100)
    assert conn.cmd("GETSET", "k", "c") == bulk(b"b")
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("GETSET", "l", "x") == WRONGTYPE


def test_msetnx(conn):
    assert conn.cmd("MSETNX", "a", "1", "b", "2") == b":1\r\n"
    assert conn.cmd("MSETNX", "c", "3", "a", "9") == b":0\r\n"
    assert conn.cmd("EXISTS", "c") == b":0\r\n"
    assert conn.cmd("MSETNX", "d", "1", "d", "2") == b":1\r\n"
    assert conn.cmd("GET", "d") == bulk(b"2")
    assert conn.cmd("MSETNX", "a", "1", "b") == b"-ERR wrong number of arguments for 'msetnx' command\r\n"
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("MSETNX", "l", "x") == b":0\r\n"


# ---------------------------------------------------------------- GETEX

def test_getex_options(conn):
    assert conn.cmd("GETEX", "none") == b"$-1\r\n"
    assert conn.cmd("GETEX", "none", "EX", "abc") == b"$-1\r\n"   # the key first
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k") == bulk(b"v")
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("GETEX", "k", "EX", 100) == bulk(b"v")
    assert 0 < parse(conn.cmd("TTL", "k")) <= 100
    assert conn.cmd("GETEX", "k", "PERSIST") == bulk(b"v")
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("GETEX", "k", "PX", 50000) == bulk(b"v")
    assert 0 < parse(conn.cmd("PTTL", "k")) <= 50000
    at = int(time.time() * 1000) + 100000123   # absolute deadlines are kept exactly
    assert conn.cmd("GETEX", "k", "PXAT", at) == bulk(b"v")
    assert conn.cmd("PEXPIRETIME", "k") == b":%d\r\n" % at
    assert conn.cmd("GETEX", "k", "EXAT", at // 1000) == bulk(b"v")
    assert conn.cmd("EXPIRETIME", "k") == b":%d\r\n" % (at // 1000)


def test_getex_past_deadline_deletes_after_replying(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k", "EXAT", 1) == bulk(b"v")
    assert conn.cmd("EXISTS", "k") == b":0\r\n"
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k", "PXAT", 1) == bulk(b"v")
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


@pytest.mark.parametrize("args,want", [
    (["EX", 0], b"-ERR invalid expire time in 'getex' command\r\n"),
    (["PX", -1], b"-ERR invalid expire time in 'getex' command\r\n"),
    (["EX", "9223372036854775807"], b"-ERR invalid expire time in 'getex' command\r\n"),
    (["EX", "x"], NOT_INT),
    (["EX", 10, "PX", 10], SYNTAX),
    (["PERSIST", "EX", 10], SYNTAX),
    (["EX", 10, "PERSIST"], SYNTAX),
    (["EX"], SYNTAX),
    (["NX"], SYNTAX),
    (["KEEPTTL"], SYNTAX),
    (["GET"], SYNTAX),
])
def test_getex_errors(conn, args, want):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k", *args) == want


def test_getex_wrongtype(conn):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("GETEX", "l", "EX", 10) == WRONGTYPE


# ---------------------------------------------------------------- INCRBYFLOAT

# Inputs and what redis-server 7.0.15 prints for them (long double, "%.17Lf"
# with the trailing zeros dropped).
FLOATS = [
    ("10.5", "0.1", b"10.6"), ("0", "0.1", b"0.1"), ("1", "2", b"3"), ("5.0e3", "2.0e2", b"5200"),
    ("0", "1.1e-20", b"0"), ("0", "3.0000000000000000001", b"3"), ("-1", "1", b"0"),
    ("0", "-0.0", b"0"), ("3", "-5.5", b"-2.5"), ("0.1", "0.2", b"0.3"), ("1e-5", "0", b"0.00001"),
    ("123456789012345678", "1", b"123456789012345679"), ("0", "0x10", b"16"),
    ("1.5", "-1.25", b"0.25"), ("0", "1e-310", b"0"), ("0", "123.456e10", b"1234560000000"),
    ("9007199254740993", "0", b"9007199254740993"),
    ("0", "0.3333333333333333333333", b"0.33333333333333333"), ("100", "-0.01", b"99.99"),
    ("0", "17179869184", b"17179869184"), ("-0.00001", "0", b"-0.00001"),
    ("-1.5e-7", "0", b"-0.00000015"), ("2.5", "2.5", b"5"), ("0", "1e20", b"100000000000000000000"),
    ("1e17", "0.5", b"100000000000000000.5"),
    ("0", "1e300", b"1000000000000000000008997324079559193870523944273290747938260082321265646596"
                   b"180935755849152083750497190350372508614274835903592556184672983913096260520748"
                   b"646287327135641843653294084255107606016789726652932370030551382947620994540294"
                   b"772781889620606179267611627097410650567187386105690089424915104006144"),
]


@pytest.mark.parametrize("base,incr,want", FLOATS)
def test_incrbyfloat_formatting(conn, base, incr, want):
    conn.cmd("SET", "f", base)
    assert conn.cmd("INCRBYFLOAT", "f", incr) == bulk(want)
    assert conn.cmd("GET", "f") == bulk(want)
    conn.cmd("HSET", "h", "f", base)
    assert conn.cmd("HINCRBYFLOAT", "h", "f", incr) == bulk(want)


def test_incrbyfloat_missing_key_encoding_and_ttl(conn):
    assert conn.cmd("INCRBYFLOAT", "f", "3") == bulk(b"3")
    assert enc(conn, "f") == b"embstr"               # never tried as an integer
    assert conn.cmd("OBJECT", "REFCOUNT", "f") == b":1\r\n"
    conn.cmd("INCRBYFLOAT", "big", "1e100")
    assert enc(conn, "big") == b"raw"
    conn.cmd("EXPIRE", "f", 100)
    conn.cmd("INCRBYFLOAT", "f", "1")
    assert 0 < parse(conn.cmd("TTL", "f")) <= 100   # the TTL stays


@pytest.mark.parametrize("base,incr,want", [
    ("abc", "1", NOT_FLOAT), ("1", "abc", NOT_FLOAT), ("1", " 1", NOT_FLOAT), ("1", "1 ", NOT_FLOAT),
    ("1", "", NOT_FLOAT), ("1", "nan", NOT_FLOAT), ("1", "1e5000", NOT_FLOAT),
    ("1", "inf", NAN_INF), ("1", "-inf", NAN_INF),
])
def test_incrbyfloat_errors(conn, base, incr, want):
    conn.cmd("SET", "f", base)
    assert conn.cmd("INCRBYFLOAT", "f", incr) == want
    assert conn.cmd("GET", "f") == bulk(base.encode())


def test_incrbyfloat_overflow_to_inf(conn):
    conn.cmd("SET", "f", "1e4932")
    assert conn.cmd("INCRBYFLOAT", "f", "1e4932") == NAN_INF


def test_incrbyfloat_wrongtype(conn):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("INCRBYFLOAT", "l", "1") == WRONGTYPE


def test_hincrbyfloat_errors(conn):
    conn.cmd("HSET", "h", "s", "abc")
    assert conn.cmd("HINCRBYFLOAT", "h", "s", "1") == b"-ERR hash value is not a float\r\n"
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "x") == NOT_FLOAT
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "inf") == b"-ERR value is NaN or Infinity\r\n"
    conn.cmd("HSET", "h", "m", "1e4932")
    assert conn.cmd("HINCRBYFLOAT", "h", "m", "1e4932") == NAN_INF
    assert conn.cmd("HINCRBYFLOAT", "new", "f", "1.5") == bulk(b"1.5")
    conn.cmd("SET", "str", "1")
    assert conn.cmd("HINCRBYFLOAT", "str", "f", "1") == WRONGTYPE


# ---------------------------------------------------------------- LCS

def test_lcs_forms(conn):
    conn.cmd("MSET", "a", "ohmytext", "b", "mynewtext")
    assert conn.cmd("LCS", "a", "b") == bulk(b"mytext")
    assert conn.cmd("LCS", "a", "b", "LEN") == b":6\r\n"
    assert parse(conn.cmd("LCS", "a", "b", "IDX")) == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert parse(conn.cmd("LCS", "a", "b", "IDX", "MINMATCHLEN", 4)) == [
        b"matches", [[[4, 7], [5, 8]]], b"len", 6]
    assert parse(conn.cmd("LCS", "a", "b", "IDX", "MINMATCHLEN", 4, "WITHMATCHLEN")) == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert parse(conn.cmd("LCS", "a", "b", "IDX", "MINMATCHLEN", -5, "WITHMATCHLEN")) == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]


def test_lcs_missing_and_errors(conn):
    assert conn.cmd("LCS", "x", "y") == bulk(b"")
    assert parse(conn.cmd("LCS", "x", "y", "IDX")) == [b"matches", [], b"len", 0]
    conn.cmd("SET", "a", "abc")
    assert conn.cmd("LCS", "a", "y", "LEN") == b":0\r\n"
    assert conn.cmd("LCS", "a", "a", "IDX", "LEN") == \
        b"-ERR If you want both the length and indexes, please just use IDX.\r\n"
    assert conn.cmd("LCS", "a", "a", "FOO") == SYNTAX
    assert conn.cmd("LCS", "a", "a", "MINMATCHLEN") == SYNTAX
    assert conn.cmd("LCS", "a", "a", "MINMATCHLEN", "x") == NOT_INT
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("LCS", "a", "l") == b"-ERR The specified keys must contain string values\r\n"


def test_lcs_resp3_map(server):
    c = server.raw()
    c.cmd("HELLO", "3")
    c.cmd("MSET", "a", "ab", "b", "ab")
    assert c.cmd("LCS", "a", "b", "IDX") == \
        b"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:1\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:2\r\n"


def test_lcs_table_limit(conn):
    conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 1024 * 1024)
    try:
        conn.cmd("SET", "a", "x" * 1000)
        conn.cmd("SET", "b", "y" * 1000)
        assert conn.cmd("LCS", "a", "b") == \
            b"-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"
    finally:
        conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 512 * 1024 * 1024)


# ---------------------------------------------------------------- keyspace events

def test_string_keyspace_events(conn, keyevents):
    for args in (["APPEND", "k", "x"], ["SETRANGE", "k", 3, "y"], ["INCRBYFLOAT", "f", "1.5"],
                 ["HINCRBYFLOAT", "h", "f", "1"], ["GETSET", "k", "v"], ["MSETNX", "m", "1"],
                 ["GETEX", "k", "EX", 100], ["GETEX", "k", "PERSIST"], ["GETEX", "k", "PERSIST"],
                 ["GETEX", "k", "PXAT", 1], ["SETRANGE", "k", 0, ""]):
        conn.cmd(*args)
    keyevents.expect(("append", "k"), ("setrange", "k"), ("incrbyfloat", "f"), ("hincrbyfloat", "h"),
                     ("set", "k"), ("set", "m"), ("expire", "k"), ("persist", "k"), ("del", "k"))
