"""latchd only: --port-file is removed on a clean exit, as the pidfile is,
whether SHUTDOWN or SIGTERM/SIGINT stopped the server; a stale file would
name a port nobody listens on."""

import os
import signal
import subprocess
import time

import pytest

from conftest import LATCHD_BIN, START_TIMEOUT, STOP_TIMEOUT, server_binary
from resp_util import RawConn


def start(tmp_path):
    """latchd on an ephemeral port with a port file and a pidfile; the
    process and both paths once the port file is there."""
    server_binary("latchd")
    port_file = tmp_path / "latchd.port"
    pidfile = tmp_path / "latchd.pid"
    proc = subprocess.Popen([LATCHD_BIN, "--port", "0", "--bind", "127.0.0.1",
                             "--port-file", str(port_file), "--pidfile", str(pidfile),
                             "--logfile", str(tmp_path / "latchd.log")],
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT
    while not (port_file.exists() and pidfile.exists()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("latchd did not start: " + (tmp_path / "latchd.log").read_text())
        time.sleep(0.01)
    return proc, port_file, pidfile


def assert_clean_exit(proc, tmp_path, port_file, pidfile):
    assert proc.wait(timeout=STOP_TIMEOUT) == 0
    assert not port_file.exists()
    assert not pidfile.exists()
    assert sorted(os.listdir(tmp_path)) == ["latchd.log"]   # no temporary port file either


def test_latchd_port_file_removed_after_shutdown(tmp_path):
    proc, port_file, pidfile = start(tmp_path)
    try:
        port = int(port_file.read_text())
        with RawConn("127.0.0.1", port) as c:
            assert c.cmd("PING") == b"+PONG\r\n"
            c.send(b"*1\r\n$8\r\nSHUTDOWN\r\n")
        assert_clean_exit(proc, tmp_path, port_file, pidfile)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_latchd_port_file_removed_after_signal(tmp_path, signum):
    proc, port_file, pidfile = start(tmp_path)
    try:
        proc.send_signal(signum)
        assert_clean_exit(proc, tmp_path, port_file, pidfile)
    finally:
        if proc.poll() is None:
            proc.kill()
