"""latchd only: how a test harness learns the port of `--port 0` -- the
LATCHD_PORT=<n> line on stdout (flushed at once, even into a pipe) and the
--port-file written atomically once latchd listens."""

import os
import subprocess
import time

from conftest import LATCHD_BIN, START_TIMEOUT, server_binary
from resp_util import RawConn


def read_port_line(proc):
    """The port from the first LATCHD_PORT= line; other lines are logs."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith(b"LATCHD_PORT="):
            return int(line.split(b"=", 1)[1])
    raise AssertionError("no LATCHD_PORT= line on stdout")


def start_piped(*args):
    server_binary("latchd")
    return subprocess.Popen([LATCHD_BIN, "--port", "0", "--bind", "127.0.0.1"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop(proc):
    proc.terminate()
    proc.wait(timeout=START_TIMEOUT)
    proc.stdout.close()


def test_latchd_port_line_on_a_pipe_names_a_live_port(tmp_path):
    # A pipe is block-buffered: the line only arrives if latchd flushes it.
    proc = start_piped()
    try:
        port = read_port_line(proc)
        assert port > 0
        with RawConn("127.0.0.1", port) as c:
            assert c.cmd("PING") == b"+PONG\r\n"
            assert c.cmd("CONFIG", "GET", "port") == b"*2\r\n$4\r\nport\r\n$1\r\n0\r\n"
    finally:
        stop(proc)


def test_latchd_port_line_format_is_exact(latchd_factory):
    srv = latchd_factory(port=0)
    lines = [l for l in srv.log().splitlines() if "LATCHD_PORT" in l]
    assert lines == ["LATCHD_PORT=%d" % srv.port]


def test_latchd_fixed_port_is_announced_too(latchd_factory):
    srv = latchd_factory()
    assert "LATCHD_PORT=%d" % srv.port in srv.log().splitlines()


def test_latchd_port_file_holds_the_bound_port(tmp_path, latchd_factory):
    path = tmp_path / "latchd.port"
    srv = latchd_factory("--port-file", str(path), port=0)
    assert path.read_text() == "%d\n" % srv.port
    # written under a temporary name and renamed: nothing else is left
    assert os.listdir(tmp_path) == ["latchd.port"]
    with srv.raw() as c:
        assert c.cmd("CONFIG", "GET", "port-file") == b"*2\r\n$9\r\nport-file\r\n$%d\r\n%s\r\n" % (
            len(str(path)), str(path).encode())
        assert c.cmd("CONFIG", "SET", "port-file", "/tmp/x").startswith(
            b"-ERR CONFIG SET failed (possibly related to argument 'port-file') - can't set immutable config")


def test_latchd_port_file_replaces_a_stale_one(tmp_path):
    path = tmp_path / "latchd.port"
    path.write_text("1\n")
    proc = start_piped("--port-file", str(path))
    try:
        port = read_port_line(proc)
        assert path.read_text() == "%d\n" % port
    finally:
        stop(proc)


def test_latchd_unwritable_port_file_is_fatal(tmp_path):
    proc = start_piped("--port-file", str(tmp_path / "missing-dir" / "latchd.port"))
    try:
        out, _ = proc.communicate(timeout=START_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert b"Failed to write port file" in out
