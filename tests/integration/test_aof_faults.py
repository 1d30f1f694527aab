"""A disk that fails under the AOF, on both servers: build/disk_fault.so
(LD_PRELOAD) fails write() of the incr file with ENOSPC and its fsyncs with
EIO while a switch file exists. With everysec, writes (and PING) get
MISCONF, reads go on, and once the disk works the buffered records go out
and writes are taken again: nothing acknowledged is lost. With always, the
server exits before a reply whose record is not on disk leaves."""

import os
import re
import signal
import time

import pytest

from conftest import LATCHD_BIN
from resp_util import wait_for
from test_aof import loaded

SHIM = os.path.join(os.path.dirname(LATCHD_BIN), "disk_fault.so")
pytestmark = pytest.mark.skipif(not os.path.exists(SHIM), reason="build/disk_fault.so is built with latchd")

MISCONF = b"-MISCONF Errors writing to the AOF file: No space left on device\r\n"


@pytest.fixture
def faulty(server_factory, monkeypatch, tmp_path):
    """start(*args) -> (server, switch path): the server runs under the shim.
    The switch fails writes and syncs; tmp_path/"fail-sync" fails syncs
    alone and tmp_path/"gate" holds syncs until it is removed."""
    switch = str(tmp_path / "fail")

    def start(*args):
        monkeypatch.setenv("LD_PRELOAD", SHIM)
        monkeypatch.setenv("LATCHD_FAULT_FILE", switch)
        monkeypatch.setenv("LATCHD_FAULT_SYNC_FILE", str(tmp_path / "fail-sync"))
        monkeypatch.setenv("LATCHD_SYNC_GATE_FILE", str(tmp_path / "gate"))
        # an ASan build wants its runtime first; the shim needs none of it
        monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
        try:
            return server_factory(*args), switch
        finally:
            monkeypatch.delenv("LD_PRELOAD")

    return start


def test_everysec_write_error_refuses_writes_and_recovers(faulty):
    srv, switch = faulty("--appendonly", "yes", "--appendfsync", "everysec")
    raw = srv.raw()
    assert raw.cmd("SET", "a", "1") == b"+OK\r\n"
    open(switch, "w").close()
    assert raw.cmd("SET", "b", "2") == b"+OK\r\n"   # run before the write failed: kept in the buffer
    # a write may still be taken while a background fsync postpones the
    # flush (Redis's two seconds): every one taken must survive
    taken, refused = [], None
    for i in range(1000):
        reply = raw.cmd("SET", "c%d" % i, "3")
        if reply == MISCONF:
            refused = "c%d" % i
            break
        assert reply == b"+OK\r\n"
        taken.append("c%d" % i)
        time.sleep(0.01)
    assert refused
    assert raw.cmd("PING") == MISCONF
    assert raw.cmd("GET", "a") == b"$1\r\n1\r\n"
    assert b"aof_last_write_status:err" in raw.cmd("INFO", "persistence")
    os.unlink(switch)
    assert wait_for(lambda: raw.cmd("SET", "d", "4") == b"+OK\r\n", timeout=10)
    assert b"aof_last_write_status:ok" in raw.cmd("INFO", "persistence")
    assert "AOF write error looks solved, Redis can write again." in srv.log()
    srv.proc.kill()
    srv.proc.wait()
    srv._start()
    loaded(srv)
    r = srv.client()
    assert r.get("a") == b"1" and r.get("b") == b"2" and r.get("d") == b"4"
    assert all(r.get(k) == b"3" for k in taken)
    assert r.get(refused) is None


def test_always_write_error_exits_before_the_reply(faulty):
    srv, switch = faulty("--appendonly", "yes", "--appendfsync", "always")
    raw = srv.raw()
    assert raw.cmd("SET", "a", "1") == b"+OK\r\n"
    open(switch, "w").close()
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
    assert raw.read_until_closed(timeout=10) == b""   # no +OK: it is not on disk
    assert wait_for(lambda: srv.proc.poll() is not None, timeout=10)
    assert srv.proc.returncode == 1
    assert "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..." in srv.log()
    os.unlink(switch)
    srv._start()
    loaded(srv)
    r = srv.client()
    assert r.get("a") == b"1"


def test_always_fsync_error_exits_before_the_reply(faulty, tmp_path):
    srv, _ = faulty("--appendonly", "yes", "--appendfsync", "always")
    raw = srv.raw()
    assert raw.cmd("SET", "a", "1") == b"+OK\r\n"
    open(tmp_path / "fail-sync", "w").close()
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
    assert raw.read_until_closed(timeout=10) == b""   # written, never synced: no +OK
    assert wait_for(lambda: srv.proc.poll() is not None, timeout=10)
    assert srv.proc.returncode == 1
    assert "Can't persist AOF for fsync error when the AOF fsync policy is 'always'" in srv.log()
    os.unlink(tmp_path / "fail-sync")
    srv._start()
    loaded(srv)
    assert srv.client().get("a") == b"1"


def test_always_no_reply_leaves_before_its_fsync(faulty, tmp_path):
    """While the disk has not answered the fdatasync for a write, neither
    the writer nor a client reading what it wrote (nor anyone answered
    meanwhile) gets a reply; all of them do once it answers."""
    srv, _ = faulty("--appendonly", "yes", "--appendfsync", "always")
    writer, reader, other = srv.raw(), srv.raw(), srv.raw()
    assert writer.cmd("SET", "k", "old") == b"+OK\r\n"
    gate = tmp_path / "gate"
    open(gate, "w").close()
    writer.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nnew\r\n")
    time.sleep(0.2)   # the write reaches the server before the read
    reader.send(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
    other.send(b"*1\r\n$4\r\nPING\r\n")
    assert writer.read_available(0.5) == b""
    assert reader.read_available(0.1) == b""
    assert other.read_available(0.1) == b""
    os.unlink(gate)
    assert writer.read_reply(timeout=10) == b"+OK\r\n"
    assert reader.read_reply(timeout=10) == b"$3\r\nnew\r\n"
    assert other.read_reply(timeout=10) == b"+PONG\r\n"


def test_always_a_write_during_an_fsync_waits_for_the_next(faulty, monkeypatch):
    """Each fdatasync of a slow disk takes 300 ms: a write that arrives while
    one runs is not covered by it, so its reply waits for the next (Redis
    blocks in the first; latchd runs the write meanwhile and syncs it as
    soon as the first is done), and both replies come."""
    monkeypatch.setenv("LATCHD_SYNC_DELAY_US", "300000")
    srv, _ = faulty("--appendonly", "yes", "--appendfsync", "always")
    first, second = srv.raw(), srv.raw()
    first.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n")
    time.sleep(0.1)   # inside the first sync
    second.send(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
    assert first.read_reply(timeout=10) == b"+OK\r\n"
    assert second.read_available(0.1) == b""   # its sync has just begun
    assert second.read_reply(timeout=10) == b"+OK\r\n"
    assert srv.client().mget("a", "b") == [b"1", b"2"]


def test_always_waiting_replies_survive_a_switch_to_everysec(faulty, tmp_path):
    """Writes that wait for an fsync when appendfsync goes from always to
    everysec are still synced before their replies leave, and every reply
    comes."""
    srv, _ = faulty("--appendonly", "yes", "--appendfsync", "always")
    first, second, admin = srv.raw(), srv.raw(), srv.raw()
    gate = tmp_path / "gate"
    open(gate, "w").close()
    first.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n")
    time.sleep(0.2)   # its sync waits at the gate
    second.send(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
    time.sleep(0.2)
    admin.send(b"*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$11\r\nappendfsync\r\n$8\r\neverysec\r\n")
    time.sleep(0.2)
    assert first.read_available(0.1) == b"" and second.read_available(0.1) == b""
    os.unlink(gate)
    assert first.read_reply(timeout=10) == b"+OK\r\n"
    assert second.read_reply(timeout=10) == b"+OK\r\n"
    assert admin.read_reply(timeout=10) == b"+OK\r\n"
    assert srv.client().mget("a", "b") == [b"1", b"2"]


def test_shutdown_kills_the_rewrite_child_and_starts_none(faulty, tmp_path):
    """SIGTERM while an automatic rewrite runs: the child is killed, the
    file synced, and the server exits with no rewrite child left behind,
    even when the final sync is slow enough for the rewrite's timer to come
    due again before the exit (latchd's exit is an iteration after the sync)."""
    srv, _ = faulty("--appendonly", "yes", "--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "100",
                    "--auto-aof-rewrite-min-size", "1mb")
    r = srv.client()
    r.config_set("rdb-key-save-delay", 100000)   # 0.1 s a key: the rewrite outlasts the test
    for i in range(40):
        r.set("big:%d" % i, "x" * 60000)
    assert wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 1, timeout=10)
    gate = tmp_path / "gate"
    gate.touch()   # the shutdown's fsync waits: the rewrite's timer comes due meanwhile
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    gate.unlink()
    srv.proc.wait(timeout=20)
    log = srv.log()
    pids = [int(p) for p in re.findall(r"rewriting started by pid (\d+)", log)]
    assert pids, log[-2000:]
    killed_at = log.index("Killing it!")
    assert "rewriting started" not in log[killed_at:], log[killed_at:]
    for pid in pids:   # the killed child is gone, and no other was made
        assert wait_for(lambda: not os.path.exists("/proc/%d" % pid), timeout=5), pid
