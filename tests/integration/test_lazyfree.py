"""Lazy freeing as Redis 7.0 does it: UNLINK, FLUSHDB/FLUSHALL ASYNC and the
lazyfree-lazy-* configs hand big values (more than 64 allocations to free)
to a background thread; the command returns at once, the memory comes back
(used_memory drops) and INFO's lazyfreed_objects counts them. Polled, never
timed."""

import time

import pytest

BIG = 100000   # set members: a hashtable set far past the 64-allocation threshold


def mem(r):
    return r.info("memory")


def wait_settled(r, what="lazyfree"):
    """Until the thread has nothing left; the figures after that are final."""
    for _ in range(500):
        m = mem(r)
        if m["lazyfree_pending_objects"] == 0:
            return m
        time.sleep(0.01)
    pytest.fail("%s: lazyfree_pending_objects never reached 0" % what)


def wait_memory_below(r, limit):
    for _ in range(500):
        m = mem(r)
        if m["lazyfree_pending_objects"] == 0 and m["used_memory"] < limit:
            return m
        time.sleep(0.01)
    pytest.fail("used_memory stayed at %d (limit %d)" % (mem(r)["used_memory"], limit))


def fill_set(r, key, n=BIG):
    for i in range(0, n, 10000):
        r.sadd(key, *range(i, min(n, i + 10000)))


def test_unlink_frees_a_big_value_in_the_background(r):
    wait_settled(r)
    r.config_resetstat()
    orig = mem(r)["used_memory"]
    fill_set(r, "myset")
    peak = mem(r)["used_memory"]
    assert peak > orig + 1000000
    assert r.unlink("myset") == 1
    assert r.exists("myset") == 0   # gone at once for every client
    m = wait_memory_below(r, orig + (peak - orig) // 2)
    assert m["lazyfreed_objects"] == 1


def test_unlink_of_small_values_frees_them_at_once(r):
    wait_settled(r)
    r.config_resetstat()
    r.set("s", "x" * 100000)   # a string is one allocation: never lazy
    r.sadd("small", *range(10))
    r.rpush("l", *range(50))
    assert r.unlink("s", "small", "l", "missing") == 3
    assert mem(r)["lazyfreed_objects"] == 0


def test_flushall_async_frees_every_database(r):
    wait_settled(r)
    r.config_resetstat()
    orig = mem(r)["used_memory"]
    fill_set(r, "a")
    r.rpush("l", *range(50000))
    r.set("small", "v")
    r2 = r.connection_pool.connection_kwargs
    other = type(r)(host=r2["host"], port=r2["port"], db=3)
    fill_set(other, "b")
    peak = mem(r)["used_memory"]
    assert r.flushall(asynchronous=True) is True
    assert r.dbsize() == 0 and other.dbsize() == 0
    m = wait_memory_below(r, orig + (peak - orig) // 4)
    # every key of a flushed database counts (Redis adds the dict's size)
    assert m["lazyfreed_objects"] == 4
    other.sadd("b", "still", "usable")   # the new, empty databases work
    assert other.scard("b") == 2
    other.close()


def test_flushdb_async_frees_only_this_database(r):
    wait_settled(r)
    r.config_resetstat()
    fill_set(r, "a")
    r.set("keep", "v")
    kw = r.connection_pool.connection_kwargs
    other = type(r)(host=kw["host"], port=kw["port"], db=2)
    other.set("other", "v")
    peak = mem(r)["used_memory"]
    assert r.flushdb(asynchronous=True) is True
    assert r.dbsize() == 0 and other.get("other") == b"v"
    m = wait_memory_below(r, peak - 1000000)
    assert m["lazyfreed_objects"] == 2
    other.close()


def test_unlink_then_flush_sync_and_async(r):
    """A value still being freed when its database is flushed, either way."""
    wait_settled(r)
    r.config_resetstat()
    orig = mem(r)["used_memory"]
    for key in ("a", "b"):
        fill_set(r, key)
    r.unlink("a")
    r.flushdb(asynchronous=False)
    fill_set(r, "c")
    r.unlink("c")
    r.flushdb(asynchronous=True)
    fill_set(r, "d")
    m = wait_settled(r)
    assert m["lazyfreed_objects"] >= 2   # a, c (b and d as their flushes chose)
    r.unlink("d")
    m = wait_memory_below(r, orig + 1000000)
    assert r.dbsize() == 0


def test_lazy_stream_counts_once(r):
    wait_settled(r)
    r.config_resetstat()
    old = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    try:
        r.config_set("stream-node-max-entries", 5)
        for j in range(1000):
            r.xadd("stream", {"foo": j})
        r.xgroup_create("stream", "g", id="0")
        r.xreadgroup("g", "alice", {"stream": ">"}, count=2)
        assert r.unlink("stream") == 1
        assert wait_settled(r)["lazyfreed_objects"] == 1
    finally:
        r.config_set("stream-node-max-entries", old)


def test_lazyfree_configs_make_del_and_flush_lazy(server_factory):
    srv = server_factory()
    r = srv.client()
    assert r.config_get("lazyfree-*") == {
        "lazyfree-lazy-eviction": "no", "lazyfree-lazy-expire": "no",
        "lazyfree-lazy-server-del": "no", "lazyfree-lazy-user-del": "no",
        "lazyfree-lazy-user-flush": "no"}
    fill_set(r, "a")
    r.delete("a")
    assert wait_settled(r)["lazyfreed_objects"] == 0   # DEL frees at once by default
    r.config_set("lazyfree-lazy-user-del", "yes")
    fill_set(r, "a")
    assert r.delete("a") == 1
    assert wait_settled(r)["lazyfreed_objects"] == 1
    r.set("k", "v")
    r.flushdb()
    assert wait_settled(r)["lazyfreed_objects"] == 1   # FLUSHDB is SYNC by default
    r.config_set("lazyfree-lazy-user-flush", "yes")
    r.set("k", "v")
    r.flushdb()
    assert wait_settled(r)["lazyfreed_objects"] == 2
    r.set("k", "v")
    r.execute_command("FLUSHALL", "SYNC")   # SYNC still wins
    assert wait_settled(r)["lazyfreed_objects"] == 2
    r.close()


def test_lazy_eviction_frees_the_evicted_value_in_the_background(server_factory):
    srv = server_factory()
    r = srv.client()
    r.config_set("lazyfree-lazy-eviction", "yes")
    r.config_set("maxmemory-policy", "allkeys-random")
    fill_set(r, "big")
    used = mem(r)["used_memory"]
    r.config_set("maxmemory", used - 1000000)
    try:
        r.set("x", "y")
    except Exception:   # the memory may not be back before the write is judged
        pass
    assert r.exists("big") == 0
    m = wait_settled(r)
    assert m["lazyfreed_objects"] == 1
    assert r.info("stats")["evicted_keys"] >= 1
    r.config_set("maxmemory", 0)
    r.close()


# ---- lazyfree-lazy-expire and lazyfree-lazy-server-del ----

def big_set(r, key, n=1000):
    """A hashtable set (members are not integers): freeing it takes n
    allocations, past the threshold of 64."""
    r.delete(key)
    r.sadd(key, *("m%d" % i for i in range(n)))


def big_zset(r, key, n=1000):
    r.delete(key)
    r.zadd(key, {"m%d" % i: i for i in range(n)})


def wait_freed(r, n):
    """Until lazyfreed_objects reaches n and nothing is pending; the figure
    then, which is final (nothing is left to free)."""
    for _ in range(500):
        m = mem(r)
        if m["lazyfreed_objects"] >= n and m["lazyfree_pending_objects"] == 0:
            return m["lazyfreed_objects"]
        time.sleep(0.01)
    return mem(r)["lazyfreed_objects"]


def wait_reclaimed(r, key):
    """Until active expiry has reclaimed key (DBSIZE counts a key past its
    deadline until then, and, unlike EXISTS, reclaims nothing itself)."""
    for _ in range(500):
        if r.dbsize() == 0:
            return
        time.sleep(0.01)
    pytest.fail("%s was never reclaimed" % key)


@pytest.mark.parametrize("lazy", ["yes", "no"])
def test_lazy_expire_frees_expired_big_values_in_the_background(server_factory, lazy):
    """However an expired key goes (active expiry, a lookup, an EXPIRE in
    the past), its big value goes to the lazyfree thread under
    lazyfree-lazy-expire yes, and is freed at once under no."""
    r = server_factory().client()
    r.config_set("lazyfree-lazy-expire", lazy)
    grow = 1 if lazy == "yes" else 0
    orig = mem(r)["used_memory"]
    big_set(r, "big", 20000)
    peak = mem(r)["used_memory"]
    # 50 ms, not 1: a PEXPIRE whose deadline passes while it runs (a stall
    # on a busy machine) deletes the key as already expired, which neither
    # server counts in expired_keys
    r.pexpire("big", 50)
    wait_reclaimed(r, "big")                 # the timing wheel / active expiry
    assert wait_freed(r, grow) == grow
    wait_memory_below(r, orig + (peak - orig) // 2)   # the bytes come back either way
    assert r.info("stats")["expired_keys"] == 1

    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    big_set(r, "big")
    r.pexpire("big", 50)
    for _ in range(500):                     # a lookup past the deadline reclaims it
        if r.exists("big") == 0:
            break
        time.sleep(0.01)
    assert r.exists("big") == 0
    assert wait_freed(r, 2 * grow) == 2 * grow
    assert r.info("stats")["expired_keys"] == 2
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")

    big_set(r, "big")
    assert r.expire("big", -1) is True       # a deadline already past deletes it
    assert r.exists("big") == 0
    assert wait_freed(r, 3 * grow) == 3 * grow

    r.sadd("small", *("m%d" % i for i in range(10)))   # small values: never lazy
    r.pexpire("small", 1)
    wait_reclaimed(r, "small")
    r.set("str", "x" * 100000)
    r.expire("str", -1)
    assert wait_freed(r, 3 * grow) == 3 * grow
    assert mem(r)["lazyfreed_objects"] == 3 * grow
    r.close()


def test_lazy_expire_is_not_server_del(server_factory):
    """Each config covers its own kind of implicit free."""
    r = server_factory().client()
    r.config_set("lazyfree-lazy-server-del", "yes")
    big_set(r, "big")
    r.pexpire("big", 1)
    wait_reclaimed(r, "big")
    r.config_set("lazyfree-lazy-server-del", "no")
    r.config_set("lazyfree-lazy-expire", "yes")
    big_set(r, "big")
    r.set("big", "x")
    assert wait_freed(r, 0) == 0
    r.close()


# Each replaces (or deletes as part of the command) a big value: Redis's
# dbOverwrite / dbDelete / the freeing of SUNION's scratch set, each of
# which frees it on the thread under lazyfree-lazy-server-del. (name,
# setup, the command, objects handed over)
def _restore_replace(r):
    payload = r.dump("src")
    r.restore("big", 0, payload, replace=True)


SERVER_DEL = [
    ("set", lambda r: big_set(r, "big"), lambda r: r.set("big", "x"), 1),
    ("mset", lambda r: big_set(r, "big"), lambda r: r.mset({"big": "x", "o": "y"}), 1),
    ("rename", lambda r: (big_set(r, "big"), r.set("src", "v")), lambda r: r.rename("src", "big"), 1),
    ("copy replace", lambda r: (big_set(r, "big"), r.set("src", "v")),
     lambda r: r.copy("src", "big", replace=True), 1),
    ("restore replace", lambda r: (big_set(r, "big"), r.set("src", "v")), _restore_replace, 1),
    ("sunionstore", lambda r: (big_set(r, "big"), r.sadd("src", "a")),
     lambda r: r.sunionstore("big", ["src"]), 1),
    ("sinterstore empty", lambda r: big_set(r, "big"), lambda r: r.sinterstore("big", ["nosuch"]), 1),
    ("zunionstore", lambda r: (big_zset(r, "big"), r.zadd("src", {"a": 1})),
     lambda r: r.zunionstore("big", ["src"]), 1),
    ("sort store", lambda r: (big_set(r, "big"), r.rpush("src", 3, 1, 2)),
     lambda r: r.sort("src", store="big"), 1),
    ("bitop", lambda r: (big_set(r, "big"), r.set("src", "v")),
     lambda r: r.bitop("AND", "big", "src"), 1),
    ("sunion scratch", lambda r: big_set(r, "big"), lambda r: r.sunion(["big", "nosuch"]), 1),
    ("sdiff scratch", lambda r: big_set(r, "big"), lambda r: r.sdiff(["big", "nosuch"]), 1),
    ("spop all", lambda r: big_set(r, "big"), lambda r: r.spop("big", 2000), 2),
    ("spop most", lambda r: big_set(r, "big"), lambda r: r.spop("big", 900), 1),
    # never lazy: small old values, a plain DEL, SINTER (no scratch set)
    ("set small", lambda r: r.sadd("big", *range(100)), lambda r: r.set("big", "x"), 0),
    ("rename small", lambda r: (r.sadd("big", "a", "b"), r.set("src", "v")),
     lambda r: r.rename("src", "big"), 0),
    ("sinter", lambda r: big_set(r, "big"), lambda r: r.sinter(["big", "big"]), 0),
    ("del", lambda r: big_set(r, "big"), lambda r: r.delete("big"), 0),
]


@pytest.mark.parametrize("lazy", ["yes", "no"])
def test_lazy_server_del_frees_replaced_big_values_in_the_background(server_factory, lazy):
    r = server_factory().client()
    r.config_set("lazyfree-lazy-server-del", lazy)
    total = 0
    for name, setup, cmd, n in SERVER_DEL:
        r.flushall()
        setup(r)
        cmd(r)
        total += n if lazy == "yes" else 0
        assert wait_freed(r, total) == total, name
    r.close()


@pytest.mark.parametrize("lazy", ["yes", "no"])
def test_lazy_server_del_frees_migrated_big_values_in_the_background(server_factory, lazy):
    """MIGRATE deletes what it moved with Redis's dbDelete."""
    src, dst = server_factory(), server_factory()
    r = src.client()
    r.config_set("lazyfree-lazy-server-del", lazy)
    big_set(r, "big")
    r.set("small", "v")
    assert r.execute_command("MIGRATE", dst.host, dst.port, "", 0, 5000, "KEYS", "big", "small") == b"OK"
    assert r.exists("big", "small") == 0
    assert dst.client().scard("big") == 1000
    grow = 1 if lazy == "yes" else 0
    assert wait_freed(r, grow) == grow
    r.close()
