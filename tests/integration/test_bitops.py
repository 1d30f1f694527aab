"""Bitmaps: SETBIT, GETBIT, BITCOUNT and BITPOS (BYTE|BIT ranges), BITOP,
BITFIELD and BITFIELD_RO (types, # offsets, OVERFLOW WRAP|SAT|FAIL), their
error texts, offset limits, encodings and keyspace events; ranges checked
against a model computed here."""

import random

import pytest

from resp_util import parse
from string_util import NOT_INT, SYNTAX, WRONGTYPE, bulk

BAD_OFFSET = b"-ERR bit offset is not an integer or out of range\r\n"
BAD_BIT = b"-ERR bit is not an integer or out of range\r\n"
BAD_TYPE = b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"


def bits_of(data):
    return [(byte >> (7 - i)) & 1 for byte in data for i in range(8)]


def clamp(start, end, total):
    if start < 0:
        start += total
    if end < 0:
        end += total
    start, end = max(start, 0), max(end, 0)
    return start, min(end, total - 1)


# ---------------------------------------------------------------- SETBIT / GETBIT

def test_setbit_getbit(conn):
    assert conn.cmd("SETBIT", "b", 7, 1) == b":0\r\n"
    assert conn.cmd("GET", "b") == bulk(b"\x01")
    assert conn.cmd("SETBIT", "b", 7, 1) == b":1\r\n"
    assert conn.cmd("SETBIT", "b", 100, 0) == b":0\r\n"
    assert conn.cmd("STRLEN", "b") == b":13\r\n"
    assert conn.cmd("GETBIT", "b", 7) == b":1\r\n"
    assert conn.cmd("GETBIT", "b", 6) == b":0\r\n"
    assert conn.cmd("GETBIT", "b", 1 << 20) == b":0\r\n"
    assert conn.cmd("GETBIT", "none", 5) == b":0\r\n"
    assert conn.cmd("OBJECT", "ENCODING", "b") == b"$3\r\nraw\r\n"


def test_setbit_on_integer_makes_raw(conn):
    conn.cmd("SET", "n", "123")
    assert conn.cmd("SETBIT", "n", 0, 0) == b":0\r\n"
    assert conn.cmd("OBJECT", "ENCODING", "n") == b"$3\r\nraw\r\n"
    assert conn.cmd("GETBIT", "n", 2) == b":1\r\n"   # '1' is 0x31


@pytest.mark.parametrize("off,val,want", [
    (-1, 1, BAD_OFFSET), ("abc", 1, BAD_OFFSET), (4294967296, 1, BAD_OFFSET),
    ("#1", 1, BAD_OFFSET), (1, 2, BAD_BIT), (1, -1, BAD_BIT), (1, "x", BAD_BIT),
])
def test_setbit_errors(conn, off, val, want):
    assert conn.cmd("SETBIT", "b", off, val) == want
    assert conn.cmd("EXISTS", "b") == b":0\r\n"


def test_getbit_errors_and_wrongtype(conn):
    assert conn.cmd("GETBIT", "b", -1) == BAD_OFFSET
    assert conn.cmd("GETBIT", "b", 4294967296) == BAD_OFFSET
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("GETBIT", "l", 0) == WRONGTYPE
    assert conn.cmd("SETBIT", "l", 0, 1) == WRONGTYPE


def test_offset_limit_follows_proto_max_bulk_len(conn):
    conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 1024 * 1024)
    try:
        assert conn.cmd("SETBIT", "b", 8 * 1024 * 1024, 1) == BAD_OFFSET
        assert conn.cmd("SETBIT", "b", 8 * 1024 * 1024 - 1, 1) == b":0\r\n"
        assert conn.cmd("STRLEN", "b") == b":1048576\r\n"
    finally:
        conn.cmd("CONFIG", "SET", "proto-max-bulk-len", 512 * 1024 * 1024)


# ---------------------------------------------------------------- BITCOUNT / BITPOS

def test_bitcount_basics(conn):
    conn.cmd("SET", "s", "foobar")
    assert conn.cmd("BITCOUNT", "s") == b":26\r\n"
    assert conn.cmd("BITCOUNT", "s", 0, 0) == b":4\r\n"
    assert conn.cmd("BITCOUNT", "s", 1, 1, "BYTE") == b":6\r\n"
    assert conn.cmd("BITCOUNT", "s", 5, 30, "BIT") == b":17\r\n"
    assert conn.cmd("BITCOUNT", "s", -1, -5) == b":0\r\n"
    assert conn.cmd("BITCOUNT", "s", 0) == SYNTAX
    assert conn.cmd("BITCOUNT", "s", 0, 1, "FOO") == SYNTAX
    assert conn.cmd("BITCOUNT", "s", 0, 1, "BIT", "x") == SYNTAX
    assert conn.cmd("BITCOUNT", "s", "a", 1) == NOT_INT
    assert conn.cmd("BITCOUNT", "none", "a", "b") == b":0\r\n"   # the key before the range
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("BITCOUNT", "l") == WRONGTYPE


def test_bitpos_basics(conn):
    assert conn.cmd("BITPOS", "none", 1) == b":-1\r\n"
    assert conn.cmd("BITPOS", "none", 0) == b":0\r\n"
    conn.cmd("SET", "ones", b"\xff\xff")
    assert conn.cmd("BITPOS", "ones", 0) == b":16\r\n"          # padded with zeros
    assert conn.cmd("BITPOS", "ones", 0, 0, -1) == b":-1\r\n"   # not with an end
    assert conn.cmd("BITPOS", "ones", 0, 0) == b":16\r\n"
    assert conn.cmd("BITPOS", "ones", 2) == b"-ERR The bit argument must be 1 or 0.\r\n"
    assert conn.cmd("BITPOS", "ones", 1, 0, 1, "FOO") == SYNTAX
    assert conn.cmd("BITPOS", "ones", 1, "a") == NOT_INT
    conn.cmd("SET", "z", b"\x00\x00\x01")
    assert conn.cmd("BITPOS", "z", 1) == b":23\r\n"
    assert conn.cmd("BITPOS", "z", 1, 7, 15, "BIT") == b":-1\r\n"
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("BITPOS", "l", 1) == WRONGTYPE


def test_bitcount_bitpos_ranges_against_a_model(conn):
    rnd = random.Random(17)
    for _ in range(40):
        data = bytes(rnd.choice([0, 0xff, rnd.randrange(256)]) for _ in range(rnd.randrange(1, 12)))
        conn.cmd("SET", "k", data)
        bits = bits_of(data)
        for _ in range(8):
            unit = rnd.choice(["BYTE", "BIT"])
            total = len(bits) if unit == "BIT" else len(data)
            start, end = rnd.randrange(-total - 3, total + 3), rnd.randrange(-total - 3, total + 3)
            if start < 0 and end < 0 and start > end:
                want = 0
            else:
                s, e = clamp(start, end, total)
                if unit == "BYTE":
                    s, e = s * 8, e * 8 + 7
                want = sum(bits[s:e + 1]) if s <= e else 0
            assert parse(conn.cmd("BITCOUNT", "k", start, end, unit)) == want
            for bit in (0, 1):
                s, e = clamp(start, end, total)
                if unit == "BYTE":
                    s, e = s * 8, e * 8 + 7
                found = [i for i in range(s, e + 1) if bits[i] == bit] if s <= e else []
                want = found[0] if found else -1
                assert parse(conn.cmd("BITPOS", "k", bit, start, end, unit)) == want


# ---------------------------------------------------------------- BITOP

def test_bitop(conn):
    conn.cmd("MSET", "a", "foobar", "b", "abc")
    assert conn.cmd("BITOP", "AND", "d", "a", "b") == b":6\r\n"
    assert conn.cmd("GET", "d") == bulk(b"`bc\x00\x00\x00")
    assert conn.cmd("BITOP", "OR", "d", "a", "b", "none") == b":6\r\n"
    assert conn.cmd("GET", "d") == bulk(b"goobar")
    assert conn.cmd("BITOP", "XOR", "d", "a", "b") == b":6\r\n"
    assert conn.cmd("GET", "d") == bulk(b"\x07\x0d\x0cbar")
    assert conn.cmd("BITOP", "NOT", "d", "b") == b":3\r\n"
    assert conn.cmd("GET", "d") == bulk(b"\x9e\x9d\x9c")
    assert conn.cmd("OBJECT", "ENCODING", "d") == b"$3\r\nraw\r\n"


def test_bitop_dest_is_a_source_and_empty_result(conn):
    conn.cmd("MSET", "a", "foobar", "b", "abc")
    conn.cmd("SET", "d", "x", "EX", 100)
    assert conn.cmd("BITOP", "OR", "a", "a", "b") == b":6\r\n"
    assert conn.cmd("GET", "a") == bulk(b"goobar")
    assert conn.cmd("BITOP", "AND", "d", "a") == b":6\r\n"
    assert conn.cmd("TTL", "d") == b":-1\r\n"
    assert conn.cmd("BITOP", "AND", "d", "none", "none2") == b":0\r\n"
    assert conn.cmd("EXISTS", "d") == b":0\r\n"


def test_bitop_errors(conn):
    conn.cmd("SET", "a", "x")
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("BITOP", "NOT", "d", "a", "a") == \
        b"-ERR BITOP NOT must be called with a single source key.\r\n"
    assert conn.cmd("BITOP", "NAND", "d", "a") == SYNTAX
    assert conn.cmd("BITOP", "AND", "d", "a", "l") == WRONGTYPE
    assert conn.cmd("BITOP", "AND", "l", "a") == b":1\r\n"      # the destination is replaced
    assert conn.cmd("TYPE", "l") == b"+string\r\n"


# ---------------------------------------------------------------- BITFIELD

def test_bitfield_set_get_incrby(conn):
    assert parse(conn.cmd("BITFIELD", "bf", "SET", "i8", 0, 100, "GET", "i8", 0)) == [0, 100]
    assert parse(conn.cmd("BITFIELD", "bf", "INCRBY", "i8", 0, 100)) == [-56]
    assert parse(conn.cmd("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", 0, -100)) == [-128]
    assert parse(conn.cmd("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1)) == [None]
    assert parse(conn.cmd("BITFIELD", "bf", "SET", "u8", "#1", 255, "GET", "u8", "#1", "GET", "i8", 8)) == \
        [0, 255, -1]
    old = parse(conn.cmd("BITFIELD", "bf", "GET", "i64", 0))[0]
    assert parse(conn.cmd("BITFIELD", "bf", "SET", "i64", 0, -1, "GET", "i64", 0, "GET", "u63", 1)) == \
        [old, -1, 9223372036854775807]
    assert parse(conn.cmd("BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "u8", 0, -1)) == [255]
    assert parse(conn.cmd("BITFIELD", "bf", "GET", "u8", 0)) == [255]   # a negative saturates high
    assert parse(conn.cmd("BITFIELD", "bf", "OVERFLOW", "WRAP", "SET", "i4", 0, 100)) == [-1]
    assert parse(conn.cmd("BITFIELD", "bf", "GET", "i4", 0)) == [4]
    assert parse(conn.cmd("BITFIELD", "bf")) == []


def test_bitfield_overflow_against_a_model(conn):
    rnd = random.Random(7)
    for _ in range(200):
        sign, bits = rnd.choice([(True, rnd.randrange(1, 65)), (False, rnd.randrange(1, 64))])
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if sign else (0, (1 << bits) - 1)
        start = rnd.randrange(lo, hi + 1)
        incr = rnd.randrange(-(1 << min(bits + 1, 62)), 1 << min(bits + 1, 62))
        how = rnd.choice(["WRAP", "SAT", "FAIL"])
        t = ("i" if sign else "u") + str(bits)
        conn.cmd("DEL", "k")
        conn.cmd("BITFIELD", "k", "SET", t, 3, start)
        got = parse(conn.cmd("BITFIELD", "k", "OVERFLOW", how, "INCRBY", t, 3, incr))[0]
        total = start + incr
        if lo <= total <= hi:
            want = total
        elif how == "FAIL":
            want = None
        elif how == "SAT":
            want = hi if total > hi else lo
        else:
            want = total % (1 << bits)
            if sign and want > hi:
                want -= 1 << bits
        assert got == want, (t, start, incr, how)


@pytest.mark.parametrize("args,want", [
    (["GET", "u64", 0], BAD_TYPE), (["GET", "i65", 0], BAD_TYPE), (["GET", "i0", 0], BAD_TYPE),
    (["GET", "x8", 0], BAD_TYPE), (["GET", "i8", -1], BAD_OFFSET), (["GET", "i8", "#-1"], BAD_OFFSET),
    (["GET", "i8", "abc"], BAD_OFFSET), (["GET", "i8", 4294967296], BAD_OFFSET),
    (["GET", "i8", "#536870912"], BAD_OFFSET),
    (["OVERFLOW", "FOO"], b"-ERR Invalid OVERFLOW type specified\r\n"),
    (["FOO"], SYNTAX), (["GET", "i8"], SYNTAX), (["SET", "i8", 0], SYNTAX),
    (["SET", "i8", 0, "x"], NOT_INT),
])
def test_bitfield_errors(conn, args, want):
    assert conn.cmd("BITFIELD", "k", *args) == want
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


def test_bitfield_ro_and_types(conn):
    conn.cmd("SET", "k", b"\x80\xff")
    assert parse(conn.cmd("BITFIELD_RO", "k", "GET", "i8", 0, "GET", "u4", 8)) == [-128, 15]
    assert conn.cmd("BITFIELD_RO", "k", "SET", "i8", 0, 1) == \
        b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"
    assert parse(conn.cmd("BITFIELD", "none", "GET", "i8", 0)) == [0]
    assert conn.cmd("EXISTS", "none") == b":0\r\n"
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("BITFIELD", "l", "GET", "i8", 0) == WRONGTYPE
    assert conn.cmd("BITFIELD", "l", "SET", "i8", 0, 1) == WRONGTYPE
    # a failed-only write still makes the key, zero-filled to the field
    assert parse(conn.cmd("BITFIELD", "nb", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 10)) == [None]
    assert conn.cmd("GET", "nb") == bulk(b"\x00")


# ---------------------------------------------------------------- keyspace events

def test_bitmap_keyspace_events(conn, keyevents):
    conn.cmd("SETBIT", "b", 3, 1)
    conn.cmd("SETBIT", "b", 3, 1)                          # no change: no event
    conn.cmd("BITFIELD", "b", "SET", "u4", 0, 5)
    conn.cmd("BITFIELD", "b", "SET", "u4", 0, 5)           # no change
    conn.cmd("BITOP", "NOT", "d", "b")
    conn.cmd("BITOP", "AND", "d", "none")
    keyevents.expect(("setbit", "b"), ("setbit", "b"), ("set", "d"), ("del", "d"))


# ---------------------------------------------------------------- against a reference

def random_command(rng, keys):
    """One string or bitmap command on a few shared keys, with arguments
    around the edges (negative and past-the-end offsets, every field width,
    integers, floats and binary values)."""
    k = rng.choice(keys)

    def val():
        return rng.choice(["", "0", "1", "-1", "123", "1.5", "abc", b"\xff\x00", "x" * rng.randrange(60),
                           "9223372036854775807", "1e10", str(rng.randrange(-1000, 1000))])

    def num():
        return str(rng.choice([0, 1, -1, 2, 7, 8, 15, 16, 63, 64, -5, -100, 100, rng.randrange(-200, 200)]))

    def bitfield_ops():
        ops = []
        for _ in range(rng.randrange(1, 4)):
            t = rng.choice("iu") + str(rng.randrange(1, 65))
            off = rng.choice([num(), "#%d" % rng.randrange(5)])
            ops += rng.choice([["GET", t, off], ["SET", t, off, num()], ["INCRBY", t, off, num()],
                               ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]])
        return ops

    unit = [[], [rng.choice(["BIT", "BYTE"])]]
    return rng.choice([
        lambda: ["APPEND", k, val()], lambda: ["SETRANGE", k, num(), val()],
        lambda: ["GETRANGE", k, num(), num()], lambda: ["SET", k, val()], lambda: ["GET", k],
        lambda: ["INCRBYFLOAT", k, rng.choice(["1", "-0.5", "1e3", "0.1", "abc", "3.33333333333"])],
        lambda: ["SETBIT", k, str(rng.randrange(300)), rng.choice("01")],
        lambda: ["GETBIT", k, str(rng.randrange(300))],
        lambda: ["BITCOUNT", k] + rng.choice([[], [num(), num()] + rng.choice(unit)]),
        lambda: ["BITPOS", k, rng.choice("01")] + rng.choice([[], [num()], [num(), num()] + rng.choice(unit)]),
        lambda: ["BITOP", rng.choice(["AND", "OR", "XOR", "NOT"]), rng.choice(keys)] +
                [rng.choice(keys) for _ in range(rng.choice([1, 1, 2, 3]))],
        lambda: ["BITFIELD", k] + bitfield_ops(),
        lambda: ["BITFIELD_RO", k, "GET", rng.choice(["i8", "u4", "i64"]), num()],
        lambda: ["OBJECT", "ENCODING", k], lambda: ["OBJECT", "REFCOUNT", k],
        lambda: ["LCS", rng.choice(keys), rng.choice(keys)] +
                rng.choice([[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"], ["IDX", "MINMATCHLEN", num()]]),
        lambda: ["HINCRBYFLOAT", "h", rng.choice("fg"), rng.choice(["1", "-0.5", "1e3", "0.1", "abc"])],
        lambda: ["GETSET", k, val()], lambda: ["MSETNX", rng.choice(keys), val(), rng.choice(keys), val()],
        lambda: ["STRLEN", k], lambda: ["INCR", k], lambda: ["DEL", k], lambda: ["DUMP", k],
    ])()


@pytest.mark.parametrize("seed", range(4))
def test_random_commands_match_reference(conn, reference_redis, seed):
    rng = random.Random(seed)
    keys = ["k1", "k2", "k3", "h"]
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    for _ in range(1500):
        cmd = random_command(rng, keys)
        assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd
