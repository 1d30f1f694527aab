"""Graceful shutdown (SIGTERM and SHUTDOWN) while clients are mid-pipeline:
the server exits 0, promptly, with no crash or sanitizer report (the
fixture's cleanup checks the exit status and the log)."""

import signal
import socket
import subprocess
import threading

import pytest

from conftest import START_TIMEOUT, free_port, server_argv
from resp_util import encode_command

EXIT_TIMEOUT = 10


class Streamer(threading.Thread):
    """Sends a long pipeline of SETs as fast as the server takes it and
    counts the replies that come back, until the connection goes away."""

    def __init__(self, srv, read_replies=True):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((srv.host, srv.port), timeout=EXIT_TIMEOUT)
        self.read_replies = read_replies
        self.replies = 0
        self.started = threading.Event()
        if read_replies:
            threading.Thread(target=self._reader, daemon=True).start()

    def run(self):
        batch = b"".join(encode_command("SET", b"k%d" % i, b"v" * 100) for i in range(1000))
        try:
            for _ in range(1000):   # up to ~130 MB, far more than the test lets through
                self.sock.sendall(batch)
                self.started.set()
        except OSError:
            pass
        self.started.set()

    def _reader(self):
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return
                self.replies += data.count(b"+OK\r\n")
        except OSError:
            pass

    def close(self):
        self.sock.close()


def wait_exit(srv):
    try:
        return srv.proc.wait(timeout=EXIT_TIMEOUT)
    except Exception:
        srv.proc.kill()
        raise


def stop_with(srv, how):
    if how == "SIGTERM":
        srv.proc.send_signal(signal.SIGTERM)
    else:
        c = srv.raw()
        c.send(encode_command("SHUTDOWN", "NOSAVE"))
        assert c.read_until_closed(timeout=EXIT_TIMEOUT) == b""


@pytest.mark.parametrize("how", ["SIGTERM", "SHUTDOWN"])
def test_shutdown_during_pipeline(server_factory, how):
    srv = server_factory()
    streamers = [Streamer(srv) for _ in range(3)]
    for s in streamers:
        s.start()
        s.started.wait(EXIT_TIMEOUT)
    stop_with(srv, how)
    assert wait_exit(srv) == 0
    for s in streamers:
        s.join(EXIT_TIMEOUT)
        assert not s.is_alive()
        s.close()


@pytest.mark.parametrize("how", ["SIGTERM", "SHUTDOWN"])
def test_shutdown_with_client_not_reading_replies(server_factory, how):
    # replies pile up in the server for a client that never reads them:
    # shutting down must not wait for that client
    srv = server_factory()
    c = srv.raw()
    assert c.cmd("SET", "big", b"x" * 100000) == b"+OK\r\n"
    stuck = socket.create_connection((srv.host, srv.port))
    stuck.sendall(encode_command("GET", "big") * 300)
    assert c.cmd("PING") == b"+PONG\r\n"   # the GETs have been read by now
    stop_with(srv, how)
    assert wait_exit(srv) == 0
    stuck.close()


def test_sigterm_while_clients_send_partial_commands(server_factory):
    srv = server_factory()
    partial = [srv.raw() for _ in range(20)]
    for i, c in enumerate(partial):
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\nabc" % (1000 + i))
    assert srv.raw().cmd("PING") == b"+PONG\r\n"
    srv.proc.send_signal(signal.SIGTERM)
    assert wait_exit(srv) == 0
    for c in partial:
        assert c.read_until_closed(timeout=EXIT_TIMEOUT) == b""


@pytest.mark.parametrize("args, reply", [
    (("ABORT",), b"-ERR No shutdown in progress.\r\n"),
    (("NOW", "ABORT"), b"-ERR syntax error\r\n"),
    (("NOSAVE", "SAVE"), b"-ERR syntax error\r\n"),
    (("NOSAVE", "BOGUS"), b"-ERR syntax error\r\n"),
])
def test_shutdown_refused_flags_keep_serving(conn, args, reply):
    assert conn.cmd("SHUTDOWN", *args) == reply
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_sigterm_as_soon_as_ready_is_logged(server_kind):
    # A harness may stop the server the moment it reads "Ready to accept
    # connections": by then SIGTERM must already mean a graceful exit, not
    # the default action (under valgrind latchd once died of it).
    for _ in range(5):
        argv = server_argv(server_kind, free_port(), [])
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            for line in proc.stdout:
                if b"Ready to accept connections" in line:
                    proc.send_signal(signal.SIGTERM)
                    break
            proc.stdout.close()   # the rest of the log is not needed
            assert proc.wait(timeout=START_TIMEOUT) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
