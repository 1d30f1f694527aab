"""OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ|HELP and TOUCH, as Redis 7.0
answers them: encodings follow a value's history under the configured
listpack thresholds, the access clock moves on lookups by commands but not
on TYPE, EXISTS, TTL or OBJECT itself, FREQ needs an LFU policy."""

import time

import pytest

from resp_util import RawConn, parse
from script_util import Script


@pytest.fixture
def cfg(r):
    """CONFIG SET for one test; the shared server gets its values back."""
    saved = {}

    def set_(name, value):
        if name not in saved:
            saved[name] = r.config_get(name)[name]
        r.config_set(name, value)

    yield set_
    for name, value in saved.items():
        r.config_set(name, value)


def enc(r, key):
    return r.object("encoding", key)


@pytest.mark.parametrize("value, expected", [
    (b"0", b"int"), (b"12345", b"int"), (b"-9223372036854775808", b"int"),
    (b"9223372036854775807", b"int"), (b"9223372036854775808", b"embstr"),
    (b"01", b"embstr"), (b"-0", b"embstr"), (b"+1", b"embstr"), (b" 1", b"embstr"),
    (b"1.5", b"embstr"), (b"x" * 44, b"embstr"), (b"x" * 45, b"raw"), (b"", b"embstr"),
])
def test_string_encodings(r, value, expected):
    r.set("s", value)
    assert enc(r, "s") == expected


def test_string_encoding_after_incr_and_other_setters(r):
    r.set("n", "x" * 50)
    r.set("n", "7")
    assert enc(r, "n") == b"int"
    r.incrby("n", 10 ** 12)
    assert enc(r, "n") == b"int"
    r.mset({"m1": "1", "m2": "a" * 60})
    r.setex("m3", 100, "abc")
    r.setnx("m4", "-5")
    assert [enc(r, k) for k in ("m1", "m2", "m3", "m4")] == [b"int", b"raw", b"embstr", b"int"]


def test_refcount_shared_integers(r, cfg):
    for value, want in [("0", 2147483647), ("9999", 2147483647), ("10000", 1), ("-1", 1),
                        ("abc", 1), ("00", 1)]:
        r.set("k", value)
        assert r.object("refcount", "k") == want, value
    r.set("c", "9998")
    r.incr("c")
    assert r.object("refcount", "c") == 2147483647
    r.incr("c")
    assert r.object("refcount", "c") == 1
    r.hset("h", "f", "1")
    assert r.object("refcount", "h") == 1
    # with a maxmemory an LRU/LFU policy needs a clock per value: no sharing
    cfg("maxmemory", "100mb")
    cfg("maxmemory-policy", "allkeys-lru")
    r.set("k", "5")
    assert r.object("refcount", "k") == 1
    cfg("maxmemory-policy", "volatile-ttl")
    r.set("k", "5")
    assert r.object("refcount", "k") == 2147483647


def test_hash_listpack_to_hashtable_for_good(r, cfg):
    cfg("hash-max-listpack-entries", "4")
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
    assert enc(r, "h") == b"listpack"
    r.hset("h", "a", "updated")          # an update adds nothing
    assert enc(r, "h") == b"listpack"
    r.hset("h", "e", 5)
    assert enc(r, "h") == b"hashtable"
    r.hdel("h", "b", "c", "d", "e")
    assert enc(r, "h") == b"hashtable"   # one way, as Redis
    r.delete("h")
    r.hset("h", "a", 1)
    assert enc(r, "h") == b"listpack"    # a new key starts over


def test_hash_value_and_field_length(r, cfg):
    cfg("hash-max-listpack-value", "8")
    r.hset("v", "f", "x" * 8)
    assert enc(r, "v") == b"listpack"
    r.hset("v", "f", "x" * 9)
    assert enc(r, "v") == b"hashtable"
    r.hset("f", "y" * 9, "1")
    assert enc(r, "f") == b"hashtable"
    r.hincrby("i", "z" * 9, 1)             # HINCRBY checks the field too
    assert enc(r, "i") == b"hashtable"
    r.hincrby("j", "ok", 123456789)        # and the new value: 9 digits
    assert enc(r, "j") == b"hashtable"
    r.hset("n", "a", "1")
    r.hsetnx("n", "a", "x" * 100)          # an existing field: nothing set
    assert enc(r, "n") == b"listpack"
    r.hsetnx("n", "b", "x" * 100)
    assert enc(r, "n") == b"hashtable"


def test_hash_ziplist_alias_and_zero(r, cfg):
    cfg("hash-max-ziplist-entries", "0")
    r.hset("h", "a", "1")
    assert enc(r, "h") == b"hashtable"


def test_zset_listpack_to_skiplist(r, cfg):
    cfg("zset-max-listpack-entries", "3")
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert enc(r, "z") == b"listpack"
    r.zadd("z", {"a": 10})                 # re-scored
    r.zincrby("z", 1, "b")
    assert enc(r, "z") == b"listpack"
    r.zadd("z", {"d": 4})
    assert enc(r, "z") == b"skiplist"
    r.zrem("z", "a", "b", "c")
    r.zpopmin("z")
    assert r.exists("z") == 0
    r.zadd("z", {"a": 1})
    assert enc(r, "z") == b"listpack"
    r.zadd("z", {"m" * 65: 1})
    assert enc(r, "z") == b"skiplist"


def test_zset_created_big(r, cfg):
    cfg("zset-max-ziplist-entries", "0")
    r.zadd("z0", {"a": 1})
    assert enc(r, "z0") == b"skiplist"
    cfg("zset-max-ziplist-entries", "128")
    cfg("zset-max-listpack-value", "4")
    r.zadd("z1", {"abcde": 1})
    assert enc(r, "z1") == b"skiplist"
    r.zadd("z2", {"abcd": 1, "abcdef": 2})
    assert enc(r, "z2") == b"skiplist"
    r.zadd("z3", {"abcd": 1}, xx=True)     # XX on a missing key creates nothing
    assert r.exists("z3") == 0


def test_lists_are_quicklists(r):
    r.rpush("l", "a")
    assert enc(r, "l") == b"quicklist"
    r.rpush("l", *(["x" * 100] * 300))
    assert enc(r, "l") == b"quicklist"


def test_missing_key_and_errors(server, conn):
    assert conn.cmd("OBJECT", "ENCODING", "nokey") == b"$-1\r\n"
    assert conn.cmd("OBJECT", "refcount", "nokey") == b"$-1\r\n"
    assert conn.cmd("OBJECT", "IDLETIME", "nokey") == b"$-1\r\n"
    assert conn.cmd("OBJECT", "FREQ", "nokey") == b"$-1\r\n"
    assert conn.cmd("OBJECT", "foo", "k") == b"-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n"
    assert conn.cmd("OBJECT", "ENCODING") == \
        b"-ERR wrong number of arguments for 'object|encoding' command\r\n"
    assert conn.cmd("OBJECT", "ENCODING", "a", "b") == \
        b"-ERR wrong number of arguments for 'object|encoding' command\r\n"
    assert conn.cmd("OBJECT") == b"-ERR wrong number of arguments for 'object' command\r\n"
    assert conn.cmd("TOUCH") == b"-ERR wrong number of arguments for 'touch' command\r\n"
    resp3 = RawConn(server.host, server.port)
    try:
        resp3.cmd("HELLO", "3")
        assert resp3.cmd("OBJECT", "ENCODING", "nokey") == b"_\r\n"
    finally:
        resp3.close()


def test_help(conn):
    assert parse(conn.cmd("OBJECT", "HELP")) == [
        b"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        b"ENCODING <key>",
        b"    Return the kind of internal representation used in order to store the value",
        b"    associated with a <key>.",
        b"FREQ <key>",
        b"    Return the access frequency index of the <key>. The returned integer is",
        b"    proportional to the logarithm of the recent access frequency of the key.",
        b"IDLETIME <key>",
        b"    Return the idle time of the <key>, that is the approximated number of",
        b"    seconds elapsed since the last access to the key.",
        b"REFCOUNT <key>",
        b"    Return the number of references of the value associated with the specified",
        b"    <key>.",
        b"HELP",
        b"    Prints this help.",
    ]


def test_touch_counts_existing_keys(r):
    r.set("a", 1)
    r.hset("b", "f", "v")
    assert r.touch("a", "b", "missing", "a") == 3


def test_idletime_moves_on_access_only(r):
    r.set("read", "v")
    r.set("notouch", "v")
    r.set("touched", "v")
    r.hset("h", "f", "v")
    time.sleep(2.2)
    for k in ("read", "notouch", "touched", "h"):
        assert r.object("idletime", k) >= 2
    r.get("read")
    r.hget("h", "f")
    r.type("notouch")
    r.exists("notouch")
    r.ttl("notouch")
    r.pttl("notouch")
    r.object("encoding", "notouch")
    r.touch("touched")
    assert r.object("idletime", "read") < 2
    assert r.object("idletime", "h") < 2
    assert r.object("idletime", "touched") < 2
    assert r.object("idletime", "notouch") >= 2


def _bgsave_running(r):
    return r.info("persistence")["rdb_bgsave_in_progress"] == 1


def test_idletime_kept_while_a_snapshot_child_runs(r, cfg):
    """Redis's lookupKey leaves access clocks alone while a fork child
    shares the pages: each stamp would copy a page away from it."""
    r.mset({"idle": "v", "pad1": "v", "pad2": "v"})
    time.sleep(2.2)
    cfg("rdb-key-save-delay", 500000)   # half a second a key: the child outlasts the reads
    r.bgsave()
    deadline = time.time() + 5
    while not _bgsave_running(r) and time.time() < deadline:
        time.sleep(0.01)
    assert _bgsave_running(r)
    r.get("idle")
    r.touch("idle")
    assert r.object("idletime", "idle") >= 2
    while _bgsave_running(r) and time.time() < deadline:
        time.sleep(0.05)
    assert not _bgsave_running(r)
    r.get("idle")
    assert r.object("idletime", "idle") < 2


def test_idletime_and_encoding_inside_scripts(r):
    r.hset("h", "f", "v")
    assert r.eval("return redis.call('object', 'encoding', KEYS[1])", 1, "h") == b"listpack"
    assert r.eval("return redis.call('object', 'idletime', KEYS[1])", 1, "h") == 0


def test_lock_key_is_a_listpack_hash_and_touched(r, conn):
    lock = Script.vector("149c5a8b")       # Redisson RLock lock (native in latchd)
    owner = "8743c9c0-1c2e-4c3f-9d1a-0a4b4a3c2f11:1"
    assert lock(conn, ["lock:orders"], ["30000", owner]) is None
    assert enc(r, "lock:orders") == b"listpack"
    assert r.object("idletime", "lock:orders") == 0
    assert r.object("refcount", "lock:orders") == 1


def test_freq_needs_lfu(r, cfg):
    r.set("k", "v")
    with pytest.raises(Exception, match="^An LFU maxmemory policy is not selected, access frequency not "
                                        "tracked. Please note that when switching between policies at "
                                        "runtime LRU and LFU data will take some time to adjust.$"):
        r.object("freq", "k")
    cfg("maxmemory-policy", "allkeys-lfu")
    cfg("lfu-log-factor", "0")             # every access counts
    r.set("f", "some text")
    assert r.object("freq", "f") == 5      # LFU_INIT_VAL
    for _ in range(3):
        r.get("f")
    assert r.object("freq", "f") == 8
    r.exists("f")                          # not an access
    assert r.object("freq", "f") == 8
    with pytest.raises(Exception, match="^An LFU maxmemory policy is selected, idle time not tracked. "
                                        "Please note that when switching between policies at runtime "
                                        "LRU and LFU data will take some time to adjust.$"):
        r.object("idletime", "f")
    cfg("maxmemory-policy", "volatile-lfu")
    assert r.object("freq", "f") == 8


def test_lfu_config_parameters(r, cfg):
    assert r.config_get("lfu-*") == {"lfu-log-factor": "10", "lfu-decay-time": "1"}
    cfg("lfu-decay-time", "0")
    assert r.config_get("lfu-decay-time") == {"lfu-decay-time": "0"}
    with pytest.raises(Exception, match="lfu-log-factor"):
        r.config_set("lfu-log-factor", "-1")


def debug_object(r, key):
    return r.execute_command("DEBUG", "OBJECT", key).decode()


def test_debug_object(r):
    r.set("foo", "20000")
    r.incr("foo")
    line = debug_object(r, "foo")
    words = dict(w.split(":", 1) for w in line.split()[1:])
    assert line.startswith("Value at:")
    assert words["refcount"] == "1" and words["encoding"] == "int"
    assert words["lru_seconds_idle"] == "0"
    r.incr("foo")                          # an unshared integer changes in place
    assert debug_object(r, "foo").split()[1] == line.split()[1]
    r.hset("smallhash", "foo", "a" * 1024)
    assert "encoding:hashtable" in debug_object(r, "smallhash")
    r.rpush("l", "a", "b", "c")
    assert " ql_nodes:1 ql_avg_node:3.00 ql_listpack_max:-2 ql_compressed:0 " in debug_object(r, "l")
    with pytest.raises(Exception, match="^no such key$"):
        debug_object(r, "missing")


def test_debug_listpack_and_packed_threshold(r):
    r.hset("h", "f", "v")
    r.rpush("l", "a")
    assert r.execute_command("DEBUG", "LISTPACK", "h") == b"Listpack structure printed on stdout"
    with pytest.raises(Exception, match="^Not a listpack encoded object.$"):
        r.execute_command("DEBUG", "LISTPACK", "l")
    assert r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b") == b"OK"
    assert r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == b"OK"
    with pytest.raises(Exception, match="^argument must be a memory value bigger than 1 and smaller than 4gb$"):
        r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb")


def keyspace_stats(r):
    info = r.info("stats")
    return info["keyspace_hits"], info["keyspace_misses"]


def test_lookups_count_as_redis_counts_them(r):
    r.set("k", "v")
    r.config_resetstat()
    r.execute_command("DEBUG", "OBJECT", "k")   # reads the dict directly
    assert keyspace_stats(r) == (0, 0)
    r.object("encoding", "k")
    r.object("encoding", "nokey")
    r.touch("k", "nokey")
    assert keyspace_stats(r) == (2, 2)


def test_copy_keeps_the_encoding(r, cfg):
    cfg("zset-max-listpack-entries", "1")
    cfg("hash-max-listpack-entries", "1")
    r.zadd("z", {"a": 1, "b": 2})
    r.zrem("z", "b")
    r.hset("h", mapping={"a": 1, "b": 2})
    r.hdel("h", "b")
    r.copy("z", "z2")
    r.copy("h", "h2")
    assert [enc(r, k) for k in ("z2", "h2")] == [b"skiplist", b"hashtable"]
    r.move("z2", 1)
    c = r.connection_pool.connection_kwargs
    other = type(r)(host=c["host"], port=c["port"], db=1)
    try:
        assert enc(other, "z2") == b"skiplist"
    finally:
        other.flushdb()
        other.close()


def test_restore_sets_idletime_and_freq(r, cfg):
    r.set("foo", "bar")
    payload = r.dump("foo")
    got = []
    for idle in (0, 1000, 2 ** 40, 16777215, 16777216, 2 ** 63 - 1):
        r.restore("foo", 0, payload, replace=True, idletime=idle)
        got.append(r.object("idletime", "foo"))
    assert got == [0, 1000, 1, 0, 1, 16777214]   # Redis's 24-bit arithmetic
    r.restore("foo", 0, payload, replace=True, frequency=100)   # not LFU: no effect
    with pytest.raises(Exception, match="not selected"):
        r.object("freq", "foo")
    cfg("maxmemory-policy", "allkeys-lfu")
    r.restore("foo", 0, payload, replace=True, frequency=100)
    assert r.object("freq", "foo") == 100
    r.restore("foo", 0, payload, replace=True, idletime=1000)   # LFU: no effect
    assert r.object("freq", "foo") == 5
