"""DUMP / RESTORE: Redis 7.0's payload (RDB 10 value, version, CRC64).

Payloads cross between the `server` fixture and a second server of the
other kind (latchd <-> redis-server) both ways; DUMP of small values is
byte-equal to redis-server's; the old encodings Redis 7.0 still restores
(zipmap, ziplist, quicklist v1, RDB_TYPE_ZSET's text scores) are built
here by hand; bad payloads get Redis's errors and change nothing.
"""
import random
import struct

import pytest
import redis

from conftest import Server
from resp_util import parse

# ---------------------------------------------------------------- payloads


def _crc64_table():
    poly = 0x95AC9329AC4BC9B5   # Jones, reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc64_table()


def crc64(data, crc=0):
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def test_crc64_check_value():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA   # the Jones check value


def payload(body, version=10):
    """A DUMP payload around an RDB value body (type byte included)."""
    head = body + struct.pack("<H", version)
    return head + struct.pack("<Q", crc64(head))


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_str(s):
    s = s if isinstance(s, bytes) else str(s).encode()
    return rdb_len(len(s)) + s


def ziplist(items):
    """A ziplist (Redis < 7's small-value container) of bytes / ints."""
    entries, prev = [], 0
    for it in items:
        pre = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
        if isinstance(it, int):
            if 0 <= it <= 12:
                enc = bytes([0xF1 + it])
            elif -128 <= it <= 127:
                enc = b"\xfe" + struct.pack("<b", it)
            elif -32768 <= it <= 32767:
                enc = b"\xc0" + struct.pack("<h", it)
            elif -(1 << 31) <= it < (1 << 31):
                enc = b"\xd0" + struct.pack("<i", it)
            else:
                enc = b"\xe0" + struct.pack("<q", it)
        else:
            n = len(it)
            if n < 64:
                enc = bytes([n]) + it
            elif n < 16384:
                enc = bytes([0x40 | (n >> 8), n & 0xFF]) + it
            else:
                enc = b"\x80" + struct.pack(">I", n) + it
        e = pre + enc
        entries.append(e)
        prev = len(e)
    body = b"".join(entries)
    tail = 10 + sum(len(e) for e in entries[:-1]) if entries else 10
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, len(items)) + body + b"\xff"


def zipmap(pairs):
    out = bytes([len(pairs)])
    for f, v in pairs:
        out += bytes([len(f)]) + f + bytes([len(v), 0]) + v
    return out + b"\xff"


def listpack(items):
    """A listpack with string entries only (Redis reads them either way)."""
    body = b""
    for s in items:
        assert len(s) < 64
        enc = bytes([0x80 | len(s)]) + s
        body += enc + bytes([len(enc)])
    return struct.pack("<IH", 6 + len(body) + 1, len(items)) + body + b"\xff"


# ---------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def peers():
    """One server of each kind, for payloads crossing between them."""
    srvs = {"redis": Server("redis"), "latchd": Server("latchd")}
    yield srvs
    for s in srvs.values():
        s.cleanup()


def other(server, peers):
    """A client to the server of the other kind, flushed."""
    c = peers["redis" if server.kind == "latchd" else "latchd"].client()
    c.flushall()
    return c


def value(r, key):
    t = r.type(key)
    if t == b"string":
        return r.get(key)
    if t == b"hash":
        return sorted(r.hgetall(key).items())
    if t == b"list":
        return r.lrange(key, 0, -1)
    if t == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    return t


def fill(r):
    """One key per encoding each type can take, under Redis's defaults."""
    r.set("s:short", "hello")
    r.set("s:int8", "-5")
    r.set("s:int16", "1000")
    r.set("s:int32", "70000")
    r.set("s:bigint", "12345678901")
    r.set("s:empty", "")
    r.set("s:lzf", "abcdefghij" * 20)
    r.set("s:nolzf", bytes(range(256)))
    r.hset("h:lp", mapping={"f1": "v1", "n": "42", "neg": "-3000", "big": "9999999999"})
    r.hset("h:lock", "8743c9c0-1c2e-4c3f-9d1a-0a4b4a3c2f11:1", "1")
    r.hset("h:ht", mapping={"field%d" % i: "value%d" % i for i in range(600)})
    r.hset("h:longval", mapping={"f": "x" * 100})
    r.rpush("l:small", "a", "b", "1", "-100", "100000", "abc" * 10)
    r.rpush("l:multi", *["element-%d" % i for i in range(3000)])
    r.zadd("z:lp", {"a": 1, "b": 2.5, "c": -3, "d": 1e20, "e": 0.1, "f": float("inf")})
    r.zadd("z:skip", {"m%d" % i: i * 1.5 for i in range(200)})
    return [k.decode() if isinstance(k, bytes) else k for k in r.keys("*")]


# ---------------------------------------------------------------- round trips


def test_dump_restore_same_server(r):
    for k in fill(r):
        d = r.dump(k)
        before = value(r, k)
        assert r.restore(k + ":copy", 0, d)
        assert value(r, k + ":copy") == before, k


def test_payloads_cross_both_ways(server, r, peers):
    o = other(server, peers)
    keys = fill(r)
    assert sorted(fill(o)) == sorted(keys)
    for k in keys:
        assert o.restore(k + ":from", 0, r.dump(k)), k
        assert value(o, k + ":from") == value(o, k), k
        assert r.restore(k + ":from", 0, o.dump(k)), k
        assert value(r, k + ":from") == value(r, k), k


SMALL_BYTE_EQUAL = ["s:short", "s:int8", "s:int16", "s:int32", "s:bigint", "s:empty",
                    "s:lzf", "s:nolzf", "h:lp", "h:lock", "h:longval", "l:small", "l:multi",
                    "z:lp", "z:skip"]


def test_dump_bytes_equal_redis(server, r, peers):
    """Every encoding but the hashtable (whose order is the dict's) is
    byte-equal, LZF-compressed ones included."""
    ref = peers["redis"].client()
    ref.flushall()
    fill(ref)
    fill(r)
    for k in SMALL_BYTE_EQUAL:
        assert r.dump(k) == ref.dump(k), k


def test_dump_follows_listpack_thresholds(server, r, peers):
    ref = peers["redis"].client()
    ref.flushall()
    try:
        for c in (r, ref):
            c.config_set("hash-max-listpack-entries", 2)
            c.config_set("zset-max-listpack-value", 3)
            c.hset("h", mapping={"a": "1", "b": "2"})
            c.zadd("z", {"abc": 1, "bcd": 2})
        assert r.dump("h") == ref.dump("h")
        assert r.dump("h")[0] == 16
        assert r.dump("z") == ref.dump("z")
        assert r.dump("z")[0] == 17
        for c in (r, ref):
            c.zadd("z", {"abcd": 3})
        assert r.dump("z")[0] == ref.dump("z")[0] == 5
    finally:
        for c in (r, ref):
            c.config_set("hash-max-listpack-entries", 512)
            c.config_set("zset-max-listpack-value", 64)


def test_random_values_cross(server, r, peers):
    o = other(server, peers)
    rnd = random.Random(16)

    def blob():
        kind = rnd.randrange(4)
        if kind == 0:
            return str(rnd.randrange(-(1 << 63), 1 << 63)).encode()
        if kind == 1:
            return str(rnd.randrange(-5000, 5000)).encode()
        n = rnd.choice([0, 1, 5, 20, 21, 63, 64, 200, 4095, 4096, 9000])
        return bytes(rnd.randrange(256) for _ in range(n)) if kind == 2 else b"ab" * (n // 2)

    for i in range(60):
        k = "k%d" % i
        t = i % 4
        if t == 0:
            r.set(k, blob())
        elif t == 1:
            r.hset(k, mapping={blob() + b"f%d" % j: blob() for j in range(rnd.randrange(1, 40))})
        elif t == 2:
            r.rpush(k, *[blob() for _ in range(rnd.randrange(1, 50))])
        else:
            r.zadd(k, {blob() + b"m%d" % j: rnd.choice([rnd.random() * 1e6, float(rnd.randrange(-99, 99))])
                       for j in range(rnd.randrange(1, 150))})
        o.restore(k, 0, r.dump(k))
        assert value(o, k) == value(r, k), k
        o.restore(k, 0, o.dump(k), replace=True)
        assert value(o, k) == value(r, k), k


# ---------------------------------------------------------------- old encodings


def test_restore_every_encoding_redis_7_reads(r):
    cases = {
        "str": (payload(b"\x00" + rdb_str("plain")), b"plain"),
        "int8": (payload(b"\x00\xc0\x85"), b"-123"),
        "int16": (payload(b"\x00\xc1" + struct.pack("<h", -2000)), b"-2000"),
        "int32": (payload(b"\x00\xc2" + struct.pack("<i", 123456789)), b"123456789"),
        "list1": (payload(b"\x01" + rdb_len(3) + rdb_str("a") + rdb_str("b") + b"\xc0\x07"),
                  [b"a", b"b", b"7"]),
        "list10": (payload(b"\x0a" + rdb_str(ziplist([b"x", 5, -300, 1 << 40, b"y" * 70]))),
                   [b"x", b"5", b"-300", str(1 << 40).encode(), b"y" * 70]),
        "list14": (payload(b"\x0e" + rdb_len(2) + rdb_str(ziplist([b"a", 1])) + rdb_str(ziplist([b"b"]))),
                   [b"a", b"1", b"b"]),
        "list18": (payload(b"\x12" + rdb_len(2) + b"\x02" + rdb_str(listpack([b"p", b"q"])) + b"\x01"
                           + rdb_str("plain-node")), [b"p", b"q", b"plain-node"]),
        "hash4": (payload(b"\x04" + rdb_len(2) + rdb_str("f") + rdb_str("v") + rdb_str("g") + b"\xc0\x01"),
                  [(b"f", b"v"), (b"g", b"1")]),
        "hash9": (payload(b"\x09" + rdb_str(zipmap([(b"f1", b"v1"), (b"f2", b"")]))),
                  [(b"f1", b"v1"), (b"f2", b"")]),
        "hash13": (payload(b"\x0d" + rdb_str(ziplist([b"f", 10, b"g", b"w"]))), [(b"f", b"10"), (b"g", b"w")]),
        "hash16": (payload(b"\x10" + rdb_str(listpack([b"f", b"v"]))), [(b"f", b"v")]),
        "zset3": (payload(b"\x03" + rdb_len(3) + rdb_str("a") + b"\x031.5" + rdb_str("b") + b"\xfe"
                          + rdb_str("c") + b"\xff"), [(b"c", float("-inf")), (b"a", 1.5), (b"b", float("inf"))]),
        "zset5": (payload(b"\x05" + rdb_len(2) + rdb_str("a") + struct.pack("<d", 2.25) + rdb_str("b")
                          + struct.pack("<d", -1.0)), [(b"b", -1.0), (b"a", 2.25)]),
        "zset12": (payload(b"\x0c" + rdb_str(ziplist([b"b", b"0.5", b"a", 3]))), [(b"b", 0.5), (b"a", 3.0)]),
        "zset17": (payload(b"\x11" + rdb_str(listpack([b"a", b"2", b"b", b"1e3"]))), [(b"a", 2.0), (b"b", 1000.0)]),
        "old-version": (payload(b"\x00" + rdb_str("v6"), version=9), b"v6"),
    }
    for k, (p, want) in cases.items():
        assert r.restore(k, 0, p), k
        assert value(r, k) == want, k


# ---------------------------------------------------------------- errors


def test_restore_errors(r):
    good = payload(b"\x00" + rdb_str("v"))
    r.set("k", "old")
    with pytest.raises(Exception, match="^BUSYKEY Target key name already exists.$"):
        r.restore("k", 0, good)
    with pytest.raises(Exception, match="^Invalid TTL value, must be >= 0$"):
        r.restore("n", -1, good)
    with pytest.raises(Exception, match="^value is not an integer or out of range$"):
        r.execute_command("RESTORE", "n", "x", good)
    for bad in (b"", b"123456789", good[:-1] + bytes([good[-1] ^ 1]), payload(b"\x00" + rdb_str("v"), version=11)):
        with pytest.raises(Exception, match="^DUMP payload version or checksum are wrong$"):
            r.restore("n", 0, bad)
    with pytest.raises(Exception, match="^syntax error$"):
        r.execute_command("RESTORE", "n", 0, good, "BOGUS")
    with pytest.raises(Exception, match="^syntax error$"):
        r.execute_command("RESTORE", "n", 0, good, "IDLETIME", 1, "FREQ", 1)
    with pytest.raises(Exception, match="^syntax error$"):
        r.execute_command("RESTORE", "n", 0, good, "IDLETIME")
    with pytest.raises(Exception, match="^Invalid IDLETIME value, must be >= 0$"):
        r.execute_command("RESTORE", "n", 0, good, "IDLETIME", -1)
    with pytest.raises(Exception, match="^Invalid FREQ value, must be >= 0 and <= 255$"):
        r.execute_command("RESTORE", "n", 0, good, "FREQ", 256)
    with pytest.raises(Exception, match="^wrong number of arguments for 'restore' command$"):
        r.execute_command("RESTORE", "n", 0)
    assert r.execute_command("RESTORE", "n", 0, good, "IDLETIME", 10)
    assert r.execute_command("RESTORE", "n2", 0, good, "FREQ", 255, "REPLACE")
    assert r.get("k") == b"old"


BAD_DATA = {
    "unknown type": b"\x08" + rdb_str("v"),
    "truncated string": b"\x00\x3fabc",   # past the trailer too
    "bad length byte": b"\x00\x82",
    "bad string encoding": b"\x00\xc4",
    "empty list": b"\x01\x00",
    "empty hash": b"\x04\x00",
    "empty zset": b"\x05\x00",
    "duplicate zset member": b"\x05\x02" + rdb_str("m") + struct.pack("<d", 1) + rdb_str("m")
                             + struct.pack("<d", 2),
    "nan score": b"\x05\x01" + rdb_str("m") + struct.pack("<d", float("nan")),
    "ziplist bad total": b"\x0a" + rdb_str(b"\x00" + ziplist([b"a"])[1:]),
    "listpack bad end": b"\x10" + rdb_str(listpack([b"f", b"v"])[:-1] + b"\xfe"),
    "quicklist bad container": b"\x12\x01\x03" + rdb_str(listpack([b"a"])),
    "quicklist empty": b"\x12\x00",
    "lzf lies": b"\x00\xc3\x02\x0a\x00a",   # makes 1 byte, claims 10
}


def test_restore_bad_data_format(r):
    for name, body in BAD_DATA.items():
        with pytest.raises(Exception, match="^Bad data format$"):
            r.restore("k", 0, payload(body))
        assert r.exists("k") == 0, name


def test_restore_bad_data_never_replaces(r):
    r.rpush("k", "keep")
    with pytest.raises(Exception, match="^Bad data format$"):
        r.restore("k", 0, payload(BAD_DATA["duplicate zset member"]), replace=True)
    assert r.lrange("k", 0, -1) == [b"keep"]


def test_sanitized_duplicates_in_listpacks(server, r):
    """Redis takes duplicates in a hash that loads as a listpack unless it
    sanitizes payloads (sanitize-dump-payload yes); latchd always refuses them."""
    if server.kind == "redis":
        r.config_set("sanitize-dump-payload", "yes")
    try:
        for body in (b"\x04\x02" + rdb_str("f") + rdb_str("1") + rdb_str("f") + rdb_str("2"),
                     b"\x10" + rdb_str(listpack([b"f", b"1", b"f", b"2"])),
                     b"\x11" + rdb_str(listpack([b"m", b"1", b"m", b"2"])),
                     b"\x10" + rdb_str(listpack([b"f", b"1", b"g"]))):
            with pytest.raises(Exception, match="^Bad data format$"):
                r.restore("k", 0, payload(body))
    finally:
        if server.kind == "redis":
            r.config_set("sanitize-dump-payload", "no")


def test_restore_sets(server, r):
    """RDB_TYPE_SET and RDB_TYPE_SET_INTSET load; a repeated member, an
    intset out of order or of an unknown width is Bad data format (as
    sanitize-dump-payload yes checks them)."""
    assert r.restore("k", 0, payload(b"\x02\x02" + rdb_str("member") + rdb_str("7")))
    assert sorted(r.smembers("k")) == [b"7", b"member"]
    assert r.object("encoding", "k") == b"hashtable"
    intset = b"\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00\x05\x00"
    assert r.restore("i", 0, payload(b"\x0b" + rdb_str(intset)))
    assert r.object("encoding", "i") == b"intset"
    assert sorted(r.smembers("i")) == [b"1", b"5"]
    if server.kind == "redis":
        r.config_set("sanitize-dump-payload", "yes")
    try:
        for body in (b"\x02\x02" + rdb_str("m") + rdb_str("m"),
                     b"\x0b" + rdb_str(intset[:8] + b"\x05\x00\x01\x00"),
                     b"\x0b" + rdb_str(b"\x03" + intset[1:8] + b"\x01\x00\x00\x05\x00\x00"),
                     b"\x0b" + rdb_str(intset[:-2])):
            with pytest.raises(Exception, match="^Bad data format$"):
                r.restore("bad", 0, payload(body))
    finally:
        if server.kind == "redis":
            r.config_set("sanitize-dump-payload", "no")


# ---------------------------------------------------------------- TTLs and events


def test_restore_ttl_and_absttl(r):
    p = payload(b"\x00" + rdb_str("v"))
    assert r.restore("a", 0, p)
    assert r.pttl("a") == -1
    assert r.restore("b", 100000, p)
    assert 99000 < r.pttl("b") <= 100000
    now = int(r.time()[0]) * 1000
    assert r.restore("c", now + 200000, p, absttl=True)
    assert 190000 < r.pttl("c") <= 200000


def test_restore_already_expired(r, keyevents):
    p = payload(b"\x00" + rdb_str("v"))
    keyevents.take()
    assert r.restore("gone", 1, p, absttl=True)
    assert r.exists("gone") == 0
    keyevents.expect()
    r.set("old", "x")
    keyevents.take()
    assert r.restore("old", 1, p, absttl=True, replace=True)
    assert r.exists("old") == 0
    keyevents.expect(("del", "old"))


def test_restore_events(r, keyevents):
    p = payload(b"\x00" + rdb_str("v"))
    keyevents.take()
    r.restore("k", 0, p)
    keyevents.expect(("restore", "k"))
    r.restore("k", 5000, p, replace=True)
    keyevents.expect(("restore", "k"))


def test_dump_missing_and_command_info(r):
    assert r.dump("nope") is None
    info = r.execute_command("COMMAND", "INFO", "dump", "restore")
    assert (info["dump"]["arity"], info["dump"]["flags"]) == (2, ["readonly"])
    assert (info["restore"]["arity"], info["restore"]["flags"]) == (-4, ["write", "denyoom"])


def test_restore_idletime_sets_the_access_clock(r):
    r.set("src", "v")
    good = r.dump("src")
    assert r.execute_command("RESTORE", "k", 0, good, "IDLETIME", 1000)
    assert 1000 <= r.object("idletime", "k") <= 1002


def test_restore_freq_sets_the_lfu_counter(r):
    r.set("src", "v")
    good = r.dump("src")
    r.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        assert r.execute_command("RESTORE", "k", 0, good, "FREQ", 100)
        assert r.object("freq", "k") == 100
        assert r.execute_command("RESTORE", "k2", 0, good, "IDLETIME", 1000)   # no effect under LFU
        assert r.object("freq", "k2") == 5
    finally:
        r.config_set("maxmemory-policy", "noeviction")


# ---------------------------------------------------------------- MIGRATE


def test_migrate_moves_keys_to_the_other_kind(server, r, peers):
    """MIGRATE to a server of the other kind: values and TTLs arrive, the
    keys leave (COPY keeps them), REPLACE and the target's errors."""
    dst = peers["redis" if server.kind == "latchd" else "latchd"]
    o = dst.client()
    o.flushall()
    keys = fill(r)
    want = {k: value(r, k) for k in keys}
    r.pexpire("h:lock", 30000)
    assert r.execute_command("MIGRATE", dst.host, dst.port, "", 3, 5000, "KEYS", *keys) == b"OK"
    assert r.exists(*keys) == 0
    o.select(3)
    assert {k: value(o, k) for k in keys} == want
    assert 25000 < o.pttl("h:lock") <= 30000
    r.set("one", "1")
    assert r.execute_command("MIGRATE", dst.host, dst.port, "one", 3, 5000, "COPY") == b"OK"
    assert r.get("one") == b"1" and o.get("one") == b"1"
    r.set("one", "2")
    with pytest.raises(redis.ResponseError, match="^Target instance replied with error: BUSYKEY"):
        r.execute_command("MIGRATE", dst.host, dst.port, "one", 3, 5000)
    assert r.get("one") == b"2"
    assert r.execute_command("MIGRATE", dst.host, dst.port, "one", 3, 5000, "REPLACE") == b"OK"
    assert r.get("one") is None and o.get("one") == b"2"


def test_migrate_errors(server, r):
    assert r.execute_command("MIGRATE", "127.0.0.1", 1, "nosuch", 0, 100) == b"NOKEY"
    r.set("k", "v")
    # a refused connection shows when writing (the connect itself waits
    # only for the socket to be writable)
    with pytest.raises(redis.ResponseError, match="^IOERR error or timeout writing to target instance"):
        r.execute_command("MIGRATE", "127.0.0.1", 1, "k", 0, 100)
    assert r.get("k") == b"v"
    with pytest.raises(redis.ResponseError, match="must be set to the empty string"):
        r.execute_command("MIGRATE", "127.0.0.1", 1, "k", 0, 100, "KEYS", "k")
    with pytest.raises(redis.ResponseError, match="^syntax error"):
        r.execute_command("MIGRATE", "127.0.0.1", 1, "k", 0, 100, "AUTH")
    with pytest.raises(redis.ResponseError, match="^value is not an integer"):
        r.execute_command("MIGRATE", "127.0.0.1", 1, "k", "x", 100)
    c = server.raw()
    assert c.cmd("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "1", "", "0", "5", "AUTH2", "u", "p",
                 "KEYS", "a", "b") == (b"*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n"
                                       b"*2\r\n$1\r\nb\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n")


# ---------------------------------------------------------------- streams


def fill_stream(r, key, consumers=True):
    """A stream of several nodes (deleted entries, two field layouts, a
    number-looking field) with two groups; PELs and consumers if asked."""
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "4")
    for i in range(1, 14):
        r.xadd(key, {"f": i, "g": "x" * i} if i % 3 else {"other": i, "123": "-7"}, id=f"{i}-{i % 2}")
    r.xdel(key, "3-1", "4-0", "13-1")
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")
    r.xgroup_create(key, "g", "0")
    r.xgroup_create(key, "h", "$")
    r.execute_command("XGROUP", "SETID", key, "h", "5-1", "ENTRIESREAD", "3")
    if consumers:
        r.xreadgroup("g", "alice", {key: ">"}, count=3)
        r.xreadgroup("g", "bob", {key: ">"}, count=2)
        r.xgroup_createconsumer(key, "g", "carol")


def stream_full(r, key):
    v = r.execute_command("XINFO", "STREAM", key, "FULL")
    i = v.index(b"radix-tree-nodes")
    return v[:i] + v[i + 2:]


def test_stream_dump_bytes_equal_redis(server, r, peers):
    ref = peers["redis"].client()
    ref.flushall()
    for c in (r, ref):
        fill_stream(c, "st", consumers=False)
        c.xadd("one", {"a": "1"}, id="1-1")
        c.xadd("gone", {"a": "1"}, id="1-1")
        c.xdel("gone", "1-1")
    for k in ("st", "one", "gone"):
        assert r.dump(k) == ref.dump(k), k


def test_stream_payloads_cross_both_ways(server, r, peers):
    o = other(server, peers)
    fill_stream(r, "st")
    fill_stream(o, "st")
    assert o.restore("from", 0, r.dump("st"))
    assert stream_full(o, "from") == stream_full(r, "st")
    assert r.restore("from", 0, o.dump("st"))
    assert stream_full(r, "from") == stream_full(o, "st")
    # the restored PEL works: reads, claims and acks go on from it
    assert r.xack("from", "g", "1-1", "2-0") == 2
    raw = server.raw()
    assert parse(raw.cmd("XPENDING", "from", "g"))[0] == 3
    assert parse(raw.cmd("XAUTOCLAIM", "from", "g", "carol", "0", "0", "JUSTID"))[1] == [b"5-1", b"6-0", b"7-1"]


def test_latchd_only_mangled_stream_payloads_never_crash(latchd_factory):
    srv = latchd_factory()
    r = srv.client()
    fill_stream(r, "st")
    good = r.dump("st")[:-10]
    rng = random.Random(7)
    for i in range(400):
        body = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(body))
            body[at] = rng.randrange(256) if rng.random() < 0.7 else body[at] ^ 1
        if rng.random() < 0.2:
            body = body[:rng.randrange(len(body))]
        try:
            r.restore("k%d" % i, 0, payload(bytes(body)))
        except Exception as e:
            assert str(e) == "Bad data format", e
            continue
        # whatever loaded is a consistent stream
        r.xrange("k%d" % i, "-", "+")
        r.execute_command("XINFO", "STREAM", "k%d" % i, "FULL")
        r.xadd("k%d" % i, {"z": 1})
    assert r.ping()
