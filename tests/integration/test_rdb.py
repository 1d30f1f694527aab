"""The dump file: SAVE, BGSAVE, DEBUG RELOAD, LASTSAVE, INFO persistence,
save points, SHUTDOWN SAVE and loading at start, on both servers; and the
file itself crossing between latchd and redis-server 7.0 both ways."""

import os
import shutil
import subprocess
import time

import pytest

from conftest import Server
from resp_util import parse, wait_for


def fill(r):
    """One key of every type latchd has, in both encodings where it has two,
    some with deadlines, over two databases."""
    r.set("str", "hello")
    r.set("int", 12345)
    r.set("long", "x" * 200)           # LZF-compressed in the file
    r.set("ttl", "v", px=3600000)
    r.rpush("list", *[str(i) for i in range(5)])
    r.rpush("biglist", *["e%d" % i for i in range(300)])
    r.hset("hash", mapping={"f%d" % i: "v%d" % i for i in range(5)})
    r.hset("bighash", mapping={"f%d" % i: "v" * 100 for i in range(600)})
    r.zadd("zset", {"a": 1, "b": 2.5, "c": -3})
    r.zadd("bigzset", {"m%d" % i: i / 3 for i in range(200)})
    r.sadd("intset", 1, 2, 3, -70000)
    r.sadd("set", "a", "b", "c")
    r.pfadd("hll", "a", "b", "c")
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "4")
    for i in range(1, 12):   # several nodes, deleted entries, two field layouts, groups and PELs
        r.xadd("stream", {"f": i, "g": "x" * i} if i % 3 else {"other": i}, id=f"{i}-{i % 2}")
    r.xdel("stream", "3-1", "4-0")
    r.xgroup_create("stream", "g", "0")
    r.xgroup_create("stream", "h", "$")
    r.xreadgroup("g", "alice", {"stream": ">"}, count=3)
    r.xreadgroup("g", "bob", {"stream": ">"}, count=2)
    r.xgroup_createconsumer("stream", "g", "carol")
    r.xadd("emptystream", {"a": 1}, id="5-5")
    r.xdel("emptystream", "5-5")
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")
    r.execute_command("SELECT", 3)
    r.set("in3", "three")
    r.execute_command("SELECT", 0)


def snapshot(r):
    """Every key of databases 0 and 3 as DUMP sees its value, and TTLs."""
    out = {}
    for db in (0, 3):
        r.execute_command("SELECT", db)
        for k in sorted(r.keys("*")):
            t = r.type(k)
            v = {b"string": r.get, b"list": lambda k: r.lrange(k, 0, -1), b"hash": r.hgetall,
                 b"zset": lambda k: r.zrange(k, 0, -1, withscores=True),
                 b"set": lambda k: sorted(r.smembers(k)), b"stream": lambda k: stream_state(r, k)}[t](k)
            out[(db, k)] = (t, v, r.pttl(k) > 0)
    r.execute_command("SELECT", 0)
    return out


def stream_state(r, k):
    """XINFO STREAM FULL but its rax's node count (each server's own)."""
    v = r.execute_command("XINFO", "STREAM", k, "FULL")
    i = v.index(b"radix-tree-nodes")
    return v[:i] + v[i + 2:]


def info_persistence(r):
    return r.info("persistence")


def test_save_and_debug_reload_keep_everything(server_factory):
    srv = server_factory()
    r = srv.client()
    fill(r)
    before = snapshot(r)
    assert info_persistence(r)["rdb_changes_since_last_save"] > 0
    assert srv.raw().cmd("SAVE") == b"+OK\r\n"
    assert info_persistence(r)["rdb_changes_since_last_save"] == 0
    assert os.path.getsize(os.path.join(srv.dir, "dump.rdb")) > 0
    assert srv.raw().cmd("DEBUG", "RELOAD") == b"+OK\r\n"
    assert snapshot(r) == before
    assert r.object("encoding", "intset") == b"intset"
    r.flushall()
    assert srv.raw().cmd("DEBUG", "RELOAD", "NOSAVE") == b"+OK\r\n"
    assert snapshot(r) == before


def test_debug_reload_options(server_factory):
    srv = server_factory()
    r = srv.client()
    r.set("a", "1")
    raw = srv.raw()
    assert raw.cmd("SAVE") == b"+OK\r\n"
    r.set("b", "2")
    assert raw.cmd("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"+OK\r\n"
    assert r.get("a") == b"1" and r.get("b") == b"2"
    assert raw.cmd("DEBUG", "RELOAD", "NOSAVE") == b"+OK\r\n"
    assert r.get("b") is None
    assert raw.cmd("DEBUG", "RELOAD", "BOGUS") == \
        b"-ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.\r\n"


def test_bgsave_and_lastsave(server_factory):
    srv = server_factory()
    r = srv.client()
    r.set("k", "v")
    before = r.lastsave()
    time.sleep(1.1)
    assert srv.raw().cmd("BGSAVE") == b"+Background saving started\r\n"
    assert wait_for(lambda: info_persistence(r)["rdb_bgsave_in_progress"] == 0, timeout=10)
    p = info_persistence(r)
    assert p["rdb_last_bgsave_status"] == "ok"
    assert p["rdb_changes_since_last_save"] == 0
    assert r.lastsave() > before
    assert p["rdb_last_save_time"] == int(r.lastsave().timestamp())
    assert srv.raw().cmd("BGSAVE", "NOW") == b"-ERR syntax error\r\n"


def test_bgsave_in_multi_is_scheduled(server_factory):
    srv = server_factory()
    r = srv.client()
    r.set("k", "v")
    raw = srv.raw()
    raw.cmd("MULTI")
    raw.cmd("BGSAVE")
    assert raw.cmd("EXEC") == b"*1\r\n+Background saving scheduled\r\n"
    assert wait_for(lambda: info_persistence(r)["rdb_changes_since_last_save"] == 0, timeout=10)
    assert wait_for(lambda: os.path.exists(os.path.join(srv.dir, "dump.rdb")), timeout=10)


def test_save_refused_inside_multi(server_factory):
    raw = server_factory().raw()
    raw.cmd("MULTI")
    assert raw.cmd("SAVE") == b"-ERR Command not allowed inside a transaction\r\n"
    assert raw.cmd("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"


def test_save_point_triggers_bgsave(server_factory):
    srv = server_factory("--save", "1 2")
    r = srv.client()
    r.set("a", "1")
    r.set("b", "2")
    assert wait_for(lambda: info_persistence(r)["rdb_saves"] >= 1, timeout=10)
    assert wait_for(lambda: info_persistence(r)["rdb_changes_since_last_save"] == 0, timeout=10)


def test_dump_file_loads_at_start_and_expired_keys_are_dropped(server_factory):
    srv = server_factory("--dbfilename", "state.rdb")
    r = srv.client()
    fill(r)
    r.set("soon", "x", px=300)
    before = snapshot(r)
    assert srv.raw().cmd("SAVE") == b"+OK\r\n"
    time.sleep(0.4)
    del before[(0, b"soon")]
    srv2 = server_factory("--dbfilename", "state.rdb")
    shutil.copy(os.path.join(srv.dir, "state.rdb"), os.path.join(srv2.dir, "state.rdb"))
    srv2.stop()
    srv2._start()
    r2 = srv2.client()
    assert snapshot(r2) == before
    p = info_persistence(r2)
    assert p["rdb_last_load_keys_expired"] == 1
    assert p["rdb_last_load_keys_loaded"] == len(before)


def test_shutdown_save_writes_the_file(server_factory):
    srv = server_factory()
    r = srv.raw()
    r.cmd("SET", "k", "v")
    r.send(b"SHUTDOWN SAVE\r\n")
    assert r.read_until_closed(timeout=10) == b""
    assert wait_for(lambda: srv.proc.poll() is not None, timeout=10)
    assert os.path.getsize(os.path.join(srv.dir, "dump.rdb")) > 0


def test_shutdown_refused_when_the_save_fails(server_factory):
    srv = server_factory("--save", "3600 1")
    r = srv.raw()
    r.cmd("SET", "k", "v")
    # both servers write temp-<pid>.rdb first: a directory there fails it
    blocker = os.path.join(srv.dir, "temp-%d.rdb" % srv.proc.pid)
    os.mkdir(blocker)
    assert r.cmd("SHUTDOWN") == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    assert r.cmd("SAVE") == b"-ERR\r\n"
    assert b"rdb_last_bgsave_status:ok" in r.cmd("INFO", "persistence")   # SAVE leaves it be
    assert r.cmd("PING") == b"+PONG\r\n"
    os.rmdir(blocker)
    assert r.cmd("SAVE") == b"+OK\r\n"
    assert b"rdb_last_bgsave_status:ok" in r.cmd("INFO", "persistence")


def _cross(src_kind, dst_kind, tmp_path):
    """fill on src, SAVE, start dst on that file: the same data."""
    a = Server(src_kind)
    try:
        r = a.client()
        fill(r)
        before = snapshot(r)
        assert a.raw().cmd("SAVE") == b"+OK\r\n"
        path = os.path.join(a.dir, "dump.rdb")
        check = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        b = Server(dst_kind)
        try:
            shutil.copy(path, os.path.join(b.dir, "dump.rdb"))
            b.stop()
            b._start()
            assert snapshot(b.client()) == before
        finally:
            b.cleanup()
    finally:
        a.cleanup()


@pytest.mark.parametrize("src,dst", [("latchd", "redis"), ("redis", "latchd")])
def test_latchd_only_dump_file_crosses_to_and_from_redis(src, dst, tmp_path):
    _cross(src, dst, tmp_path)


def test_latchd_only_corrupt_file_refuses_to_start(latchd_factory, tmp_path):
    srv = latchd_factory()
    r = srv.client()
    r.set("k", "v" * 100)
    assert srv.raw().cmd("SAVE") == b"+OK\r\n"
    path = os.path.join(srv.dir, "dump.rdb")
    data = bytearray(open(path, "rb").read())
    data[-20] ^= 0xFF
    open(path, "wb").write(bytes(data))
    srv.stop()
    with pytest.raises(BaseException):
        srv._start()
    assert "Short read or OOM loading DB" in srv.log() or "Wrong RDB checksum" in srv.log()
    data[-20] ^= 0xFF   # flipped back: the trailer's CRC alone is wrong now
    data[-3] ^= 0xFF
    open(path, "wb").write(bytes(data))
    srv.stop()
    with pytest.raises(BaseException):
        srv._start()
    assert "Wrong RDB checksum. Aborting now." in srv.log()
    os.unlink(path)
    srv._start()   # the fixture stops a running server


def test_changes_since_last_save_count_real_changes(server):
    r = server.client()
    dirty = lambda: info_persistence(r)["rdb_changes_since_last_save"]
    start = dirty()
    r.setbit("b", 0, 0)         # a new key: one change
    r.set("s", "v")
    assert dirty() == start + 2
    r.setbit("b", 0, 0)         # no change, no count
    assert dirty() == start + 2
    r.setbit("b", 0, 1)
    assert dirty() == start + 3


LIB = "#!lua name=rdblib\nredis.register_function('hello', function() return 'hi' end)"


def test_function_libraries_go_into_the_file(server_factory):
    srv = server_factory()
    raw = srv.raw()
    assert raw.cmd("FUNCTION", "LOAD", LIB) == b"$6\r\nrdblib\r\n"
    raw.cmd("SET", "k", "v")
    assert raw.cmd("DEBUG", "RELOAD") == b"+OK\r\n"
    assert raw.cmd("FCALL", "hello", "0") == b"$2\r\nhi\r\n"
    # without FLUSH the library and the key are there already: refused, unless MERGE
    assert raw.cmd("DEBUG", "RELOAD", "NOFLUSH") == \
        b"-ERR Error trying to load the RDB dump\r\n"
    assert raw.cmd("DEBUG", "RELOAD", "NOFLUSH", "MERGE") == b"+OK\r\n"
    assert raw.cmd("FCALL", "hello", "0") == b"$2\r\nhi\r\n"
    assert raw.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert raw.cmd("DEBUG", "RELOAD", "NOSAVE") == b"+OK\r\n"   # the file still has it
    assert raw.cmd("FCALL", "hello", "0") == b"$2\r\nhi\r\n"


@pytest.mark.parametrize("src,dst", [("latchd", "redis"), ("redis", "latchd")])
def test_latchd_only_function_libraries_cross_with_redis(src, dst):
    a = Server(src)
    try:
        raw = a.raw()
        raw.cmd("FUNCTION", "LOAD", LIB)
        assert raw.cmd("SAVE") == b"+OK\r\n"
        b = Server(dst)
        try:
            shutil.copy(os.path.join(a.dir, "dump.rdb"), os.path.join(b.dir, "dump.rdb"))
            b.stop()
            b._start()
            assert b.raw().cmd("FCALL", "hello", "0") == b"$2\r\nhi\r\n"
        finally:
            b.cleanup()
    finally:
        a.cleanup()
