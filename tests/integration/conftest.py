"""Fixtures: every Redis-behaviour test runs against a real redis-server and
against latchd (ids "redis" and "latchd"); both servers are started here.

Fixtures for tests:
  server          the shared server of the current kind, flushed before each test
  server_factory  start a fresh server of the current kind with extra args
  latchd_factory  start a fresh latchd (for latchd-only tests)
  keyevents       the keyspace events commands raise (script_util.Keyevents)
  reference_redis a redis-server of the module's own, to compare answers with
"""

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from resp_util import ConnectionClosed, RawConn, encode_command

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LATCHD_BIN = os.environ.get("LATCHD_BIN", os.path.join(REPO, "build", "latchd"))
REDIS_BIN = os.environ.get("REDIS_SERVER_BIN", shutil.which("redis-server") or "redis-server")

# LATCHD_TIMEOUT_SCALE stretches the start and stop waits (scripts/valgrind).
TIMEOUT_SCALE = float(os.environ.get("LATCHD_TIMEOUT_SCALE", "1"))
START_TIMEOUT = 10.0 * TIMEOUT_SCALE
STOP_TIMEOUT = 5.0 * TIMEOUT_SCALE
# LATCHD_SERVERS=latchd (or redis) runs only that half of the suite; the
# ASan pass of scripts/test uses it (a sanitized latchd adds nothing to the
# redis-server runs). Default: both.
KINDS = [k.strip() for k in (os.environ.get("LATCHD_SERVERS") or "redis,latchd").split(",") if k.strip()]
if not KINDS or set(KINDS) - {"redis", "latchd"}:
    raise pytest.UsageError("LATCHD_SERVERS must list latchd and/or redis (comma-separated), got %r"
                            % os.environ.get("LATCHD_SERVERS"))


_handed_out = set()


def free_port():
    """A port free now, for a server to bind a moment later: below the
    kernel's ephemeral range (32768 up), so no outgoing connection made
    meanwhile (a Raft node dialling its peers) can take it, and never the
    same twice in one run."""
    rng = random.Random()
    while True:
        port = rng.randrange(20000, 32768)
        if port in _handed_out:
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        _handed_out.add(port)
        return port


def announced_port(log):
    """The TCP port a server announced in its log, preferring the
    "Ready to accept connections" line; None if there is none yet."""
    lines = log.splitlines()
    ready = [l for l in lines if "Ready to accept connections" in l]
    for line in ready + lines:
        for m in re.finditer(r"port[ =:](\d+)", line):
            if int(m.group(1)) != 0:
                return int(m.group(1))
    return None


def server_binary(kind):
    if kind == "redis":
        return REDIS_BIN
    if not (os.path.isfile(LATCHD_BIN) and os.access(LATCHD_BIN, os.X_OK)):
        pytest.fail("latchd binary not found or not executable at %s: build it first "
                    "(cmake -S . -B build && cmake --build build) or set LATCHD_BIN"
                    % LATCHD_BIN, pytrace=False)
    return LATCHD_BIN


def server_argv(kind, port, extra, config=None):
    """Both servers take redis-server's command line: an optional config
    file first, then --flags that override it."""
    head = [server_binary(kind)] + ([config] if config else [])
    if kind == "redis":
        return head + ["--port", str(port), "--bind", "127.0.0.1",
                       "--save", "", "--appendonly", "no", "--daemonize", "no",
                       # latchd's default; Redis 7's is "no"
                       "--enable-debug-command", "local"] + list(extra)
    if kind == "latchd":
        return head + ["--port", str(port), "--bind", "127.0.0.1"] + list(extra)
    raise ValueError(kind)


class Server:
    """A running server process plus helpers to talk to it."""

    def __init__(self, kind, extra_args=(), port=None, config=None):
        server_binary(kind)  # fails early if the binary is missing
        self.kind = kind
        self.config = config
        self.host = "127.0.0.1"
        self.extra_args = list(extra_args)
        self.dir = tempfile.mkdtemp(prefix="latchd-it-%s-" % kind)
        self.log_path = os.path.join(self.dir, "server.log")
        self.proc = None
        self._clients = []
        self._raws = []
        self.port = port
        self._start()

    # -- lifecycle
    def _start(self):
        last_err = None
        fixed_port = self.port is not None
        for _attempt in range(3):
            port = self.port if self.port is not None else free_port()
            argv = server_argv(self.kind, port, self.extra_args, self.config)
            self.argv = argv
            self._log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(argv, cwd=self.dir, stdout=self._log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if port == 0:
                port = self._port_from_log()
            self.port = port
            if port is not None and self._wait_ready():
                return
            last_err = self.log()
            self.stop()
            if fixed_port or "in use" not in last_err:
                break
            self.port = None
        pytest.fail("%s did not start (argv %r); server log:\n%s"
                    % (self.kind, self.argv, last_err), pytrace=False)

    def _port_from_log(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and self.proc.poll() is None:
            port = announced_port(self.log())
            if port:
                return port
            time.sleep(0.02)
        return None

    def _wait_ready(self):
        """Poll until the server answers PING with any complete reply
        (+PONG, or -NOAUTH when started with --requirepass)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with RawConn(self.host, self.port, timeout=1.0) as c:
                    c.send(encode_command("PING"))
                    c.read_reply()
                    return True
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        return False

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        self.close_connections()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if getattr(self, "_log", None):
            self._log.close()

    def exit_problems(self):
        """Why this server's exit was not clean: a non-zero status after
        SIGTERM (graceful shutdown exits 0) or a sanitizer report."""
        problems = []
        if self.proc is not None and self.proc.returncode not in (0, None):
            problems.append("exit status %s" % self.proc.returncode)
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            if marker in self.log():
                problems.append("sanitizer report (%s)" % marker)
        return problems

    def cleanup(self):
        self.stop()
        problems = self.exit_problems()
        log = self.log()
        shutil.rmtree(self.dir, ignore_errors=True)
        if problems:
            pytest.fail("%s server did not exit cleanly: %s\n%s"
                        % (self.kind, ", ".join(problems), log[-6000:]), pytrace=False)

    # -- connections
    def client(self, **kw):
        """A redis-py client (decode_responses False unless overridden)."""
        kw.setdefault("decode_responses", False)
        kw.setdefault("socket_timeout", 10)
        c = redis.Redis(host=self.host, port=self.port, **kw)
        self._clients.append(c)
        return c

    def raw(self, timeout=5.0):
        c = RawConn(self.host, self.port, timeout=timeout)
        self._raws.append(c)
        return c

    def close_connections(self):
        for c in self._clients:
            try:
                c.close()
                c.connection_pool.disconnect()
            except Exception:
                pass
        for c in self._raws:
            c.close()
        self._clients = []
        self._raws = []

    def __repr__(self):
        return "<%s server on %s:%s>" % (self.kind, self.host, self.port)


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="session", params=KINDS)
def server_kind(request):
    return request.param


@pytest.fixture(scope="session")
def _shared_server(server_kind):
    srv = Server(server_kind)
    yield srv
    srv.cleanup()


@pytest.fixture
def server(_shared_server):
    """The shared server of the current kind, with a clean state."""
    srv = _shared_server
    if srv.proc.poll() is not None:
        pytest.fail("%s server died (exit %s); log:\n%s"
                    % (srv.kind, srv.proc.returncode, srv.log()[-4000:]), pytrace=False)
    with RawConn(srv.host, srv.port) as c:
        for cmd in (("FLUSHALL",), ("CONFIG", "SET", "save", ""),
                    ("CONFIG", "SET", "appendonly", "no")):
            reply = c.cmd(*cmd)
            assert reply == b"+OK\r\n", (cmd, reply)
    yield srv
    srv.close_connections()


@pytest.fixture
def r(server):
    """A redis-py client to the shared server."""
    return server.client()


@pytest.fixture
def conn(server):
    """A raw RESP connection to the shared server."""
    return server.raw()


@pytest.fixture
def keyevents(server):
    """A script_util.Keyevents watcher on the shared server; turns
    notify-keyspace-events back off afterwards."""
    from script_util import Keyevents
    watcher = Keyevents(server)
    yield watcher
    if watcher.enabled:
        with RawConn(server.host, server.port) as c:
            c.cmd("CONFIG", "SET", "notify-keyspace-events", "")


def _factory(kind):
    started = []

    def start(*extra_args, port=None, config=None):
        srv = Server(kind, extra_args, port=port, config=config)
        started.append(srv)
        return srv

    return start, started


def _cleanup_all(servers):
    """Stop every server even if one of them exited badly, then report."""
    errors = []
    for srv in servers:
        try:
            srv.cleanup()
        except pytest.fail.Exception as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)


@pytest.fixture
def server_factory(server_kind):
    """start(*extra_args) -> a fresh Server of the current kind."""
    start, started = _factory(server_kind)
    yield start
    _cleanup_all(started)


@pytest.fixture(scope="module")
def reference_redis():
    """A redis-server 7.0 that only serves as the reference (whatever
    LATCHD_SERVERS says): the answers a latchd test compares against."""
    srv = Server("redis")
    yield srv
    srv.cleanup()


@pytest.fixture
def latchd_factory():
    """start(*extra_args, port=None) -> a fresh latchd Server."""
    start, started = _factory("latchd")
    yield start
    _cleanup_all(started)
