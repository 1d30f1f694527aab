"""The append-only file on both servers: Redis 7.0's multi-part layout, the
records commands leave in it (relative expiries as absolute ones, scripts'
effects in MULTI/EXEC, reclaims as DEL), loading at start (a cut-off tail
too), BGREWRITEAOF, CONFIG SET appendonly, DEBUG LOADAOF, INFO; and the
directory crossing between latchd and redis-server 7.0 both ways."""

import os
import shutil
import subprocess
import time

import pytest
import redis

from conftest import Server
from resp_util import encode_command, wait_for
from script_util import Script

AOF = ("--appendonly", "yes", "--appendfsync", "always")


def aof_dir(srv):
    return os.path.join(srv.dir, "appendonlydir")


def manifest(srv):
    with open(os.path.join(aof_dir(srv), "appendonly.aof.manifest")) as f:
        return f.read()


def records(data):
    """The commands of AOF text: lists of bytes ("#" annotations skipped)."""
    out, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        assert data[pos:pos + 1] == b"*", data[pos:pos + 40]
        end = data.index(b"\r\n", pos)
        n, pos = int(data[pos + 1:end]), end + 2
        cmd = []
        for _ in range(n):
            end = data.index(b"\r\n", pos)
            ln = int(data[pos + 1:end])
            cmd.append(data[end + 2:end + 2 + ln])
            pos = end + 2 + ln + 2
        out.append(cmd)
    return out


def incr_records(srv, seq=1):
    with open(os.path.join(aof_dir(srv), "appendonly.aof.%d.incr.aof" % seq), "rb") as f:
        return records(f.read())


def loaded(srv):
    """Started, and done loading (redis-server answers -LOADING until then)."""
    assert wait_for(lambda: not srv.raw().cmd("PING").startswith(b"-LOADING"), timeout=20)
    return srv


def restart(srv):
    srv.stop()
    srv._start()
    loaded(srv)


def near_ms(v, delta_ms):
    """v (bytes) is an absolute ms time about delta_ms from now."""
    return abs(int(v) - (time.time() * 1000 + delta_ms)) < 5000


def test_a_new_aof_is_a_base_and_an_incr(server_factory):
    srv = server_factory(*AOF)
    assert manifest(srv) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                             "file appendonly.aof.1.incr.aof seq 1 type i\n")
    with open(os.path.join(aof_dir(srv), "appendonly.aof.1.base.rdb"), "rb") as f:
        assert f.read(5) == b"REDIS"
    assert os.path.getsize(os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof")) == 0
    srv2 = server_factory("--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    assert manifest(srv2).startswith("file appendonly.aof.1.base.aof seq 1 type b\n")


def test_records_are_what_redis_propagates(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    r.set("plain", "v")
    r.set("ex", "v", ex=100)
    r.execute_command("SET", "got", "v", "GET")
    r.setex("sx", 100, "v")
    r.psetex("psx", 100000, "v")
    r.expire("plain", 50)
    r.execute_command("EXPIRE", "plain", "60", "GT")
    r.expire("missing", 50)                 # nothing changes: nothing logged
    r.getex("plain", persist=True)
    r.getex("plain", px=70000)
    r.set("gone", "v")
    r.expire("gone", -1)                    # in the past: DEL
    r.incrbyfloat("f", "1.5")
    r.hincrbyfloat("h", "f", "2.5")
    r.getset("got", "w")
    r.getdel("got")
    r.sadd("s", "only")
    assert r.spop("s") == b"only"
    r.rpush("q", "a")
    assert r.blpop(["nothing", "q"], 0) == (b"q", b"a")
    r.eval("redis.call('set','e1','1'); redis.call('pexpire','e1',100000)", 0)
    r.eval("redis.call('incr','e2')", 0)
    r.get("plain")                          # reads leave nothing
    r.execute_command("SELECT", 2)
    r.set("in2", "v")
    r.flushdb()
    got = incr_records(srv)
    want = [
        [b"SELECT", b"0"],
        [b"set", b"plain", b"v"],
        [b"SET", b"ex", b"v", b"PXAT", None],
        [b"SET", b"got", b"v"],
        [b"SET", b"sx", b"v", b"PXAT", None],
        [b"SET", b"psx", b"v", b"PXAT", None],
        [b"PEXPIREAT", b"plain", None],
        [b"PEXPIREAT", b"plain", None, b"GT"],
        [b"PERSIST", b"plain"],
        [b"PEXPIREAT", b"plain", None],
        [b"SET", b"gone", b"v"],
        [b"DEL", b"gone"],
        [b"SET", b"f", b"1.5", b"KEEPTTL"],
        [b"HSET", b"h", b"f", b"2.5"],
        [b"SET", b"got", b"w"],
        [b"DEL", b"got"],
        [b"SADD", b"s", b"only"],
        [b"SREM", b"s", b"only"],
        [b"RPUSH", b"q", b"a"],
        [b"LPOP", b"q"],
        [b"MULTI"],
        [b"set", b"e1", b"1"],
        [b"PEXPIREAT", b"e1", None],
        [b"EXEC"],
        [b"incr", b"e2"],
        [b"SELECT", b"2"],
        [b"SET", b"in2", b"v"],
        [b"FLUSHDB"],
    ]
    assert len(got) == len(want), got
    for g, w in zip(got, want):
        assert len(g) == len(w), (g, w)
        for a, b in zip(g, w):
            if b is None:
                assert a.isdigit() and near_ms(a, 0) or int(a) > time.time() * 1000, (g, w)
            else:
                assert a.upper() == b.upper(), (g, w)


def test_transactions_stay_whole(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.incr("a")
    p.get("a")
    p.execute()
    p = r.pipeline(transaction=True)
    p.set("one", "1")
    p.execute()
    got = [c[0].upper() for c in incr_records(srv)]
    assert got == [b"SELECT", b"MULTI", b"SET", b"INCRBY", b"EXEC", b"SET"]


def test_a_lock_script_logs_its_lua_commands(server_factory):
    """Redisson's RLock lock: HINCRBY and PEXPIRE (as PEXPIREAT) in
    MULTI/EXEC, whichever way the server runs it."""
    srv = server_factory(*AOF)
    raw = srv.raw()
    lock = Script.vector("149c5a8b")
    assert lock.raw(raw, keys=["L"], argv=["30000", "owner:1"]) == b"$-1\r\n"
    assert lock.raw(raw, keys=["L"], argv=["30000", "owner:2"]).startswith(b":")
    got = incr_records(srv)
    assert [c[0].upper() for c in got] == [b"SELECT", b"MULTI", b"HINCRBY", b"PEXPIREAT", b"EXEC"]
    assert got[2][1:] == [b"L", b"owner:1", b"1"]
    assert got[3][1] == b"L" and near_ms(got[3][2], 30000)


def test_expiry_is_logged_as_del(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    r.set("k", "v", px=50)
    assert wait_for(lambda: r.exists("k") == 0, timeout=5)
    got = incr_records(srv)
    assert [b"DEL", b"k"] in got


def test_lazy_frees_are_logged_as_unlink(server_factory):
    """Under lazyfree-lazy-expire an expiry (and an EXPIRE or GETEX deadline
    already past) is UNLINK, and GETDEL under lazyfree-lazy-user-del, as
    Redis's propagateDeletion and getdelCommand write them."""
    srv = server_factory(*AOF, "--lazyfree-lazy-expire", "yes", "--lazyfree-lazy-user-del", "yes")
    r = srv.client()
    r.set("k", "v", px=50)
    assert wait_for(lambda: r.exists("k") == 0, timeout=5)
    r.set("e", "v")
    r.expire("e", -1)
    r.set("g", "v")
    r.getex("g", pxat=1)
    r.set("d", "v")
    r.getdel("d")
    got = [c for c in incr_records(srv) if c[0].upper() in (b"DEL", b"UNLINK")]
    assert got == [[b"UNLINK", b"k"], [b"UNLINK", b"e"], [b"UNLINK", b"g"], [b"UNLINK", b"d"]]
    r.set("after", "v")
    restart(srv)                              # and the file loads back
    r = srv.client()
    assert r.keys("*") == [b"after"]


@pytest.mark.parametrize("lazy", ["yes", "no"])
def test_eviction_is_logged_as_del_or_unlink(server_factory, lazy):
    """An evicted key is DEL, or UNLINK under lazyfree-lazy-eviction (not
    lazyfree-lazy-expire), as Redis's propagateDeletion."""
    srv = server_factory(*AOF, "--lazyfree-lazy-eviction", lazy, "--lazyfree-lazy-expire", "yes",
                         "--maxmemory-policy", "allkeys-random")
    r = srv.client()
    r.sadd("big", *("m%d" % i for i in range(20000)))
    r.config_set("maxmemory", r.info("memory")["used_memory"] - 100000)
    try:
        r.set("x", "y")
    except redis.ResponseError:   # the memory may not be back before the write is judged
        pass
    assert r.exists("big") == 0
    r.config_set("maxmemory", 0)
    got = [c for c in incr_records(srv) if c[0].upper() in (b"DEL", b"UNLINK")]
    assert got == [[b"UNLINK" if lazy == "yes" else b"DEL", b"big"]]


def test_restart_loads_everything(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    r.set("s", "v")
    r.set("t", "v", ex=1000)
    r.rpush("l", "a", "b", "c")
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.zadd("z", {"m": 1.5})
    r.sadd("set", "x", "y")
    r.execute_command("SELECT", 5)
    r.set("five", "5")
    r.execute_command("SELECT", 0)
    srv.proc.kill()   # no shutdown: what is acknowledged is on disk
    srv.proc.wait()
    srv._start()
    loaded(srv)
    r = srv.client()
    assert r.get("s") == b"v"
    assert 990000 < r.pttl("t") <= 1000000
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert r.zscore("z", "m") == 1.5
    assert r.smembers("set") == {b"x", b"y"}
    r.execute_command("SELECT", 5)
    assert r.get("five") == b"5"


def test_bgrewriteaof_makes_a_new_base(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    for i in range(50):
        r.incr("n")
    raw = srv.raw()
    assert raw.cmd("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    assert wait_for(lambda: b"aof_rewrite_in_progress:0" in raw.cmd("INFO", "persistence")
                    and b"aof_rewrites:1" in raw.cmd("INFO", "persistence"), timeout=10)
    assert wait_for(lambda: manifest(srv) == ("file appendonly.aof.2.base.rdb seq 2 type b\n"
                                              "file appendonly.aof.2.incr.aof seq 2 type i\n"), timeout=10)
    assert sorted(os.listdir(aof_dir(srv))) == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof",
                                                "appendonly.aof.manifest"]
    r.incr("n")
    restart(srv)
    assert srv.client().get("n") == b"51"


def test_rewrite_without_preamble_loads(server_factory):
    srv = server_factory(*AOF, "--aof-use-rdb-preamble", "no")
    r = srv.client()
    r.set("s", "v", ex=1000)
    r.rpush("l", "a", "b")
    r.hset("h", "f", "v")
    raw = srv.raw()
    assert raw.cmd("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    assert wait_for(lambda: "appendonly.aof.2.base.aof" in manifest(srv), timeout=10)
    restart(srv)
    r = srv.client()
    assert r.get("s") == b"v" and r.ttl("s") > 900
    assert r.lrange("l", 0, -1) == [b"a", b"b"]
    assert r.hgetall("h") == {b"f": b"v"}


def test_config_set_appendonly_rewrites_first(server_factory):
    srv = server_factory()
    r = srv.client()
    r.set("before", "1")
    assert r.config_get("appendonly") == {"appendonly": "no"} or r.config_get("appendonly") == {b"appendonly": b"no"}
    r.config_set("appendonly", "yes")
    raw = srv.raw()
    assert wait_for(lambda: b"aof_rewrite_in_progress:0" in raw.cmd("INFO", "persistence")
                    and b"aof_enabled:1" in raw.cmd("INFO", "persistence"), timeout=10)
    assert wait_for(lambda: os.path.exists(os.path.join(aof_dir(srv), "appendonly.aof.manifest")), timeout=10)
    r.set("after", "2")
    srv.extra_args += ["--appendonly", "yes"]
    restart(srv)
    r = srv.client()
    assert r.get("before") == b"1" and r.get("after") == b"2"


def test_truncated_tail_is_cut_and_loaded(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    r.set("a", "1")
    r.set("b", "2")
    srv.stop()
    path = os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof")
    good = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1")
    loaded(srv._start() or srv)
    r = srv.client()
    assert r.get("a") == b"1" and r.get("b") == b"2" and r.get("c") is None
    assert "!!! Warning: short read while loading the AOF file appendonly.aof.1.incr.aof!!!" in srv.log()
    assert "AOF appendonly.aof.1.incr.aof loaded anyway because aof-load-truncated is enabled" in srv.log()
    assert os.path.getsize(path) >= good


def test_truncated_tail_refused_without_aof_load_truncated(server_factory):
    srv = server_factory(*AOF, "--aof-load-truncated", "no")
    srv.client().set("a", "1")
    srv.stop()
    with open(os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof"), "ab") as f:
        f.write(b"*2\r\n$3\r\nGET")
    # redis-server listens before it loads, so a PING may get -LOADING and
    # the start look fine for an instant: either way the server must exit
    try:
        srv._start()
    except BaseException:
        pass
    assert srv.proc.wait(timeout=10) != 0
    assert "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof" in srv.log()
    os.unlink(os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof"))
    shutil.rmtree(aof_dir(srv))
    srv._start()


def test_timestamp_annotations(server_factory):
    srv = server_factory(*AOF, "--aof-timestamp-enabled", "yes")
    srv.client().set("a", "1")
    with open(os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof"), "rb") as f:
        data = f.read()
    assert data.startswith(b"#TS:")
    restart(srv)
    assert srv.client().get("a") == b"1"


def test_debug_loadaof(server_factory):
    srv = server_factory(*AOF)
    r = srv.client()
    r.set("a", "1")
    assert srv.raw().cmd("DEBUG", "LOADAOF") == b"+OK\r\n"
    assert r.get("a") == b"1"
    assert "Append Only File loaded by DEBUG LOADAOF" in srv.log()


INFO_AOF = ["aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_rewrite_time_sec",
            "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites",
            "aof_rewrites_consecutive_failures", "aof_last_write_status", "aof_last_cow_size",
            "module_fork_in_progress", "module_fork_last_cow_size", "aof_current_size", "aof_base_size",
            "aof_pending_rewrite", "aof_buffer_length", "aof_pending_bio_fsync", "aof_delayed_fsync"]


def test_info_persistence_fields(server_factory):
    srv = server_factory(*AOF)
    text = srv.raw().cmd("INFO", "persistence").decode()
    names = [line.split(":")[0] for line in text.split("\r\n") if ":" in line]
    tail = names[names.index("aof_enabled"):]
    assert tail == INFO_AOF
    info = srv.client().info("persistence")
    assert info["aof_enabled"] == 1 and info["aof_last_write_status"] == "ok"
    assert info["aof_base_size"] == 0 and info["aof_current_size"] == 0   # a new base is not counted
    srv.client().set("a", "1")
    incr = os.path.getsize(os.path.join(aof_dir(srv), "appendonly.aof.1.incr.aof"))
    assert srv.client().info("persistence")["aof_current_size"] == incr
    restart(srv)
    info = srv.client().info("persistence")
    base = os.path.getsize(os.path.join(aof_dir(srv), "appendonly.aof.1.base.rdb"))
    assert info["aof_base_size"] == base and info["aof_current_size"] == base + incr


def test_config_get_names_and_defaults(server_factory):
    srv = server_factory()
    r = srv.client(decode_responses=True)
    got = r.config_get("append*")
    assert got == {"appendonly": "no", "appendfsync": "everysec", "appendfilename": "appendonly.aof",
                   "appenddirname": "appendonlydir"}
    assert r.config_get("aof-*") == {"aof-use-rdb-preamble": "yes", "aof-load-truncated": "yes",
                                     "aof-timestamp-enabled": "no", "aof-rewrite-incremental-fsync": "yes",
                                     "aof-disable-auto-gc": "no"}
    assert r.config_get("auto-aof-*") == {"auto-aof-rewrite-percentage": "100",
                                          "auto-aof-rewrite-min-size": "67108864"}


def _cross(src_kind, dst_kind):
    a = Server(src_kind, AOF)
    try:
        r = a.client()
        r.set("s", "v", ex=1000)
        r.rpush("l", "a", "b")
        r.hset("h", "f", "v")
        r.eval("redis.call('set','e','1'); redis.call('incr','e')", 0)
        a.stop()
        check = subprocess.run(["redis-check-aof", os.path.join(aof_dir(a), "appendonly.aof.manifest")],
                               capture_output=True, text=True)
        assert check.returncode == 0 and "All AOF files and manifest are valid" in check.stdout, check.stdout
        b = Server(dst_kind)
        try:
            b.stop()
            shutil.copytree(aof_dir(a), aof_dir(b))
            b.extra_args += list(AOF)
            b._start()
            loaded(b)
            r = b.client()
            assert r.get("s") == b"v" and r.ttl("s") > 900
            assert r.lrange("l", 0, -1) == [b"a", b"b"]
            assert r.hgetall("h") == {b"f": b"v"}
            assert r.get("e") == b"2"
        finally:
            b.cleanup()
    finally:
        a.cleanup()


@pytest.mark.parametrize("src,dst", [("latchd", "redis"), ("redis", "latchd")])
def test_latchd_only_aof_crosses_to_and_from_redis(src, dst):
    _cross(src, dst)


# Each native lock script's calls, run once natively and once by Lua: the
# same records (deadlines aside).
NATIVE_FLOWS = [
    ("149c5a8b", [(["L"], ["30000", "o1"]), (["L"], ["30000", "o1"]), (["L"], ["30000", "o2"])]),
    ("dad0f8d6", [(["L"], ["30000", "o1"]), (["L"], ["30000", "o1"])]),
    ("9401052d", [(["L"], ["30000", "o1"]), (["L"], ["30000", "o1"])]),
    ("1aa70d37", [(["L"], ["30000", "o1"])]),
    ("3ffe249c", [(["L", "ch"], ["m", "30000", "o1"]), (["L", "ch"], ["m", "30000", "o1"]),
                  (["L", "ch"], ["m", "30000", "o9"])]),
    ("778cea8a", [(["L", "ch"], ["m", "30000", "o1", "publish"])] * 2),
    ("68664592", [(["L", "ch", "latch"], ["m", "30000", "o1", "publish", "5000"])] * 2),
    ("4a66e59a", [(["L", "ch", "latch"], ["m", "30000", "o1", "5000"])]),
    ("93cfc048", [(["L", "ch"], ["m", "30000", "o1"])] * 3),
    ("8e19a1dd", [(["L"], ["40000", "o1"]), (["L"], ["40000", "o9"])]),
    ("7e9c80b3", [(["L", "ch"], ["m"])] * 2),
    ("c3f8721c", [(["T"], ["tok"]), (["T"], ["other"])]),
    ("1cac5148", [(["T"], ["tok", "9000"]), (["T"], ["other", "9000"])]),
]


def _native_records(native, flows):
    srv = Server("latchd", AOF + ("--native-scripts", native))
    try:
        raw = srv.raw()
        lock = Script.vector("149c5a8b")
        for prefix, calls in flows:
            raw.cmd("FLUSHALL")
            assert lock.raw(raw, keys=["L"], argv=["30000", "o1"]) == b"$-1\r\n"
            assert lock.raw(raw, keys=["L"], argv=["30000", "o1"]) == b"$-1\r\n"   # held twice
            raw.cmd("SET", "T", "tok")
            sc = Script.vector(prefix)
            for keys, argv in calls:
                sc.raw(raw, keys=keys, argv=argv)
        runs = srv.client().info("latchd")["latchd_native_script_runs"]
        return [[b"<ms>" if a.isdigit() and len(a) == 13 else a for a in r] for r in incr_records(srv)], runs
    finally:
        srv.cleanup()


def test_latchd_only_native_lock_scripts_log_what_their_lua_logs():
    native, runs = _native_records("yes", NATIVE_FLOWS)
    lua, none = _native_records("no", NATIVE_FLOWS)
    assert runs > 20 and none == 0   # each way really ran as it says
    assert len(native) == len(lua)
    for a, b in zip(native, lua):
        assert a == b


def test_auto_rewrite_on_growth(server_factory):
    srv = server_factory(*AOF, "--auto-aof-rewrite-min-size", "4096", "--auto-aof-rewrite-percentage", "100")
    r = srv.client()
    for i in range(200):
        r.set("k%d" % i, "v" * 40)
    assert wait_for(lambda: r.info("persistence")["aof_rewrites"] >= 1
                    and r.info("persistence")["aof_rewrite_in_progress"] == 0, timeout=20)
    assert "Starting automatic rewriting of AOF on" in srv.log()
    restart(srv)
    assert srv.client().dbsize() == 200


def test_shutdown_syncs_the_file(server_factory):
    srv = server_factory("--appendonly", "yes", "--appendfsync", "no")
    raw = srv.raw()
    raw.cmd("SET", "k", "v")
    raw.send(b"SHUTDOWN\r\n")
    assert raw.read_until_closed(timeout=10) == b""
    assert wait_for(lambda: srv.proc.poll() is not None, timeout=10)
    assert "Calling fsync() on the AOF file." in srv.log()
    srv._start()
    assert loaded(srv).client().get("k") == b"v"


def test_bgsave_waits_for_a_rewrite_child(server_factory):
    srv = server_factory(*AOF)
    raw = srv.raw()
    for i in range(10):
        raw.cmd("SET", "k%d" % i, "v")
    raw.cmd("CONFIG", "SET", "rdb-key-save-delay", "100000")   # 0.1 s a key: a rewrite of a second
    assert raw.cmd("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    assert raw.cmd("BGREWRITEAOF") == b"-ERR Background append only file rewriting already in progress\r\n"
    assert raw.cmd("BGSAVE") == (b"-ERR Another child process is active (AOF?): can't BGSAVE right now. "
                                 b"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.\r\n")
    assert raw.cmd("BGSAVE", "SCHEDULE") == b"+Background saving scheduled\r\n"
    raw.cmd("CONFIG", "SET", "rdb-key-save-delay", "0")
    assert wait_for(lambda: srv.client().info("persistence")["rdb_saves"] >= 1, timeout=30)
    assert srv.client().info("persistence")["aof_rewrites"] >= 1


def test_streams_reload_as_they_were(server_factory):
    """XADD's chosen IDs, ~ trims (with LIMIT) and consumer groups come
    back from the AOF as they were, and from a rewrite without the RDB
    preamble."""
    srv = server_factory(*AOF, "--aof-use-rdb-preamble", "no", "--stream-node-max-entries", "10")
    r = srv.client()
    for i in range(100):
        r.xadd("s", {"f": i})
    r.xadd("s", {"f": "x"}, maxlen=50, approximate=True)
    r.execute_command("XTRIM", "s", "MINID", "~", "0-1", "LIMIT", "10")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "alice", {"s": ">"}, count=3)
    r.xreadgroup("g", "bob", {"s": ">"}, count=2, noack=True)

    def state():
        return (r.xrange("s"), r.xinfo_groups("s"), [(c["name"], c["pending"]) for c in r.xinfo_consumers("s", "g")],
                r.xpending("s", "g")["pending"])
    before = state()
    restart(srv)
    r = srv.client()
    assert state() == before
    raw = srv.raw()
    assert raw.cmd("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    assert wait_for(lambda: "appendonly.aof.2.base.aof" in manifest(srv), timeout=10)
    restart(srv)
    r = srv.client()
    assert state() == before


def _resp(*cmds):
    return b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in c) for c in cmds)


def _start_with_aof(srv):
    srv.extra_args += list(AOF)
    srv._start()
    return loaded(srv)


def test_a_pre_7_single_file_aof_is_upgraded(server_factory):
    """An old appendonly.aof alone in dir (Redis 6's layout): loaded, moved
    into appendonlydir as base 1 under a new manifest, appended to after."""
    srv = server_factory()
    srv.stop()
    with open(os.path.join(srv.dir, "appendonly.aof"), "wb") as f:
        f.write(_resp([b"SELECT", b"0"], [b"SET", b"a", b"1"], [b"RPUSH", b"l", b"x", b"y"],
                      [b"SELECT", b"3"], [b"SET", b"b", b"2"]))
    _start_with_aof(srv)
    r = srv.client()
    assert r.get("a") == b"1" and r.lrange("l", 0, -1) == [b"x", b"y"]
    assert ("Successfully migrated an old-style AOF file (appendonly.aof) into the AOF directory "
            "(appendonlydir).") in srv.log()
    assert not os.path.exists(os.path.join(srv.dir, "appendonly.aof"))
    assert sorted(os.listdir(aof_dir(srv))) == ["appendonly.aof", "appendonly.aof.1.incr.aof",
                                                "appendonly.aof.manifest"]
    assert manifest(srv) == ("file appendonly.aof seq 1 type b\n"
                             "file appendonly.aof.1.incr.aof seq 1 type i\n")
    r.set("c", "3")
    restart(srv)
    r = srv.client()
    assert r.get("a") == b"1" and r.get("c") == b"3"
    r.execute_command("SELECT", 3)
    assert r.get("b") == b"2"


def test_a_pre_7_aof_with_an_rdb_preamble_loads_its_tail(server_factory):
    """Redis 6's aof-use-rdb-preamble file: an RDB, then commands."""
    srv = server_factory()
    srv.client().set("from_rdb", "v")
    assert srv.raw().cmd("SAVE") == b"+OK\r\n"
    srv.stop()
    dump = os.path.join(srv.dir, "dump.rdb")
    with open(dump, "rb") as f:
        rdb = f.read()
    os.unlink(dump)
    with open(os.path.join(srv.dir, "appendonly.aof"), "wb") as f:
        f.write(rdb + _resp([b"SELECT", b"0"], [b"SET", b"from_tail", b"w"]))
    _start_with_aof(srv)
    r = srv.client()
    assert r.get("from_rdb") == b"v" and r.get("from_tail") == b"w"
    log = srv.log()
    assert "Reading RDB preamble from AOF file..." in log and "Reading the remaining AOF tail..." in log
    assert manifest(srv).startswith("file appendonly.aof seq 1 type b\n")


def test_an_interrupted_upgrade_is_done_at_the_next_start(server_factory):
    """The manifest written but the file not moved yet (a crash between)."""
    srv = server_factory()
    srv.stop()
    with open(os.path.join(srv.dir, "appendonly.aof"), "wb") as f:
        f.write(_resp([b"SET", b"a", b"1"]))
    os.mkdir(aof_dir(srv))
    with open(os.path.join(aof_dir(srv), "appendonly.aof.manifest"), "w") as f:
        f.write("file appendonly.aof seq 1 type b\n")
    _start_with_aof(srv)
    assert srv.client().get("a") == b"1"
    assert "Successfully migrated an old-style AOF file" in srv.log()
    assert not os.path.exists(os.path.join(srv.dir, "appendonly.aof"))
    assert os.path.exists(os.path.join(aof_dir(srv), "appendonly.aof"))


def test_consumer_group_effects_are_logged_as_redis_propagates_them(server_factory):
    """XREADGROUP (served at once or after blocking), XCLAIM and XAUTOCLAIM
    leave Redis 7.0's records: an XCLAIM ... FORCE JUSTID LASTID per entry
    made pending (streamPropagateXCLAIM), XGROUP CREATECONSUMER / SETID
    for NOACK reads and a LASTID no claim carried; a history read nothing.
    Several records of one command in MULTI/EXEC."""
    srv = server_factory(*AOF)
    r = srv.client()
    for i in range(1, 6):
        r.xadd("s", {"f": i}, id="%d-0" % i)
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "alice", {"s": ">"}, count=2)
    r.xreadgroup("g", "bob", {"s": ">"}, count=1, noack=True)
    r.xreadgroup("g", "alice", {"s": "0"})            # history: nothing
    r.xreadgroup("g", "nobody", {"s": "0"})           # a consumer made by a history read: nothing
    r.execute_command("XCLAIM", "s", "g", "carol", "0", "1-0", "2", "TIME", "12345", "RETRYCOUNT", "7")
    r.execute_command("XCLAIM", "s", "g", "carol", "0", "9-0", "LASTID", "4-0")
    r.xdel("s", "2-0")
    r.xautoclaim("s", "g", "dave", 0, "0", count=10, justid=True)
    r.xreadgroup("g", "erin", {"s": ">"}, noack=True)
    r.xgroup_setid("s", "g", "0")
    r.xreadgroup("g", "frank", {"s": ">"}, count=1)
    r.xadd("b", {"f": "x"}, id="1-0")
    r.xgroup_create("b", "g", id="$")
    with srv.raw() as waiter:
        waiter.send(encode_command("XREADGROUP", "GROUP", "g", "gina", "BLOCK", "0", "STREAMS", "b", ">"))
        assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1, timeout=5)
        r.xadd("b", {"f": "y"}, id="2-0")
        assert waiter.read_reply(timeout=5)
    T = None   # a delivery time: now, as the server saw it
    claim = [b"XCLAIM", b"s", b"g"]
    want = [
        [b"SELECT", b"0"],
        *[[b"XADD", b"s", b"%d-0" % i, b"f", b"%d" % i] for i in range(1, 6)],
        [b"XGROUP", b"CREATE", b"s", b"g", b"0"],
        [b"MULTI"],
        claim + [b"alice", b"0", b"1-0", b"TIME", T, b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID", b"LASTID", b"1-0"],
        claim + [b"alice", b"0", b"2-0", b"TIME", T, b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID", b"LASTID", b"2-0"],
        [b"EXEC"],
        [b"MULTI"],
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"bob"],
        [b"XGROUP", b"SETID", b"s", b"g", b"3-0", b"ENTRIESREAD", b"3"],
        [b"EXEC"],
        [b"MULTI"],
        claim + [b"carol", b"0", b"1-0", b"TIME", b"12345", b"RETRYCOUNT", b"7", b"FORCE", b"JUSTID", b"LASTID", b"3-0"],
        claim + [b"carol", b"0", b"2", b"TIME", b"12345", b"RETRYCOUNT", b"7", b"FORCE", b"JUSTID", b"LASTID", b"3-0"],
        [b"EXEC"],
        [b"XGROUP", b"SETID", b"s", b"g", b"4-0", b"ENTRIESREAD", b"3"],
        [b"XDEL", b"s", b"2-0"],
        [b"MULTI"],
        claim + [b"dave", b"0", b"1-0", b"TIME", T, b"RETRYCOUNT", b"7", b"FORCE", b"JUSTID", b"LASTID", b"4-0"],
        claim + [b"carol", b"0", b"2-0", b"TIME", b"12345", b"RETRYCOUNT", b"7", b"FORCE", b"JUSTID", b"LASTID", b"4-0"],
        [b"EXEC"],
        [b"MULTI"],
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"erin"],
        [b"XGROUP", b"SETID", b"s", b"g", b"5-0", b"ENTRIESREAD", b"4"],
        [b"EXEC"],
        [b"XGROUP", b"SETID", b"s", b"g", b"0"],
        claim + [b"frank", b"0", b"1-0", b"TIME", T, b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID", b"LASTID", b"1-0"],
        [b"XADD", b"b", b"1-0", b"f", b"x"],
        [b"XGROUP", b"CREATE", b"b", b"g", b"$"],
        [b"XADD", b"b", b"2-0", b"f", b"y"],
        [b"XCLAIM", b"b", b"g", b"gina", b"0", b"2-0", b"TIME", T, b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID",
         b"LASTID", b"2-0"],
    ]
    got = incr_records(srv)
    assert len(got) == len(want), got
    for g, w in zip(got, want):
        assert len(g) == len(w), (g, w)
        for a, b in zip(g, w):
            if b is None:
                assert near_ms(a, 0), (g, w)
            else:
                assert a.upper() == b.upper(), (g, w)
    before = (r.xinfo_groups("s"), r.xpending_range("s", "g", "-", "+", 10), r.xinfo_consumers("b", "g"))
    restart(srv)
    r = srv.client()
    after = (r.xinfo_groups("s"), r.xpending_range("s", "g", "-", "+", 10), r.xinfo_consumers("b", "g"))
    for x in (before, after):
        x[0][0].pop("consumers")   # "nobody" is not in the file, as in Redis's
        for c in x[2]:   # idle times move on
            c.pop("idle", None)
            c.pop("inactive", None)
        for p in x[1]:
            p.pop("time_since_delivered", None)
    assert after == before


def test_latchd_only_activerehashing_runs_while_clients_wait_on_fsync(latchd_factory):
    """With appendfsync always a write's client waits for the disk, and the
    loop has nothing to run meanwhile: the keyspace table's pending rehash
    goes on then (activerehashing yes), not only one bucket per command,
    and not while a fork child runs. latchd_rehashing_dbs (INFO latchd)
    tells whether a table is mid-rehash."""
    srv = latchd_factory("--appendonly", "yes", "--appendfsync", "no", "--activerehashing", "no")
    r = srv.client()
    rehashing = lambda: r.info("latchd")["latchd_rehashing_dbs"]
    # 2^16 keys fill the table; the next one starts its move to 2^17 buckets
    p = r.pipeline(transaction=False)
    for i in range(0, 1 << 16, 1024):
        p.mset({"k:%d" % j: "v" for j in range(i, i + 1024)})
    p.execute()
    assert rehashing() == 0
    r.set("k:last", "v")
    assert rehashing() == 1
    r.config_set("appendfsync", "always")
    for i in range(20):   # a bucket per command: far from the 65536
        r.set("probe", i)
    assert rehashing() == 1
    r.config_set("activerehashing", "yes")
    # not while a fork child shares the pages (Redis's cron skips it too)
    r.config_set("rdb-key-save-delay", 30)   # about 2 s for these keys
    r.bgsave()
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    for i in range(20):
        r.set("probe", i)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1, "the child ended too soon to tell"
    assert rehashing() == 1
    assert wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=60)
    # a command moves a bucket or two: 3000 of them alone would leave
    # 60000 of the 65536 to move (the disk's waits are short, a sanitized
    # build slow: as many syncs as it takes, up to that)
    for i in range(3000):
        r.set("probe", i)
        if rehashing() == 0:
            break
    assert rehashing() == 0, "still rehashing after %d synced writes" % (i + 1)
    assert r.dbsize() == (1 << 16) + 2
