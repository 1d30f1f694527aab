"""Protected mode and binding: with protected-mode yes and no password, a
client whose address is not 127.0.0.1 or ::1 gets Redis's -DENIED text and
is disconnected, whatever is bound. The servers are bound to a non-loopback
address of this machine as well; the tests skip, saying why, if it has none."""

import os
import shutil
import socket
import subprocess
import tempfile

import pytest

from conftest import free_port, server_binary
from resp_util import RawConn, encode_command, parse, wait_for

DENIED = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
    b"for the default user. In this mode connections are only accepted from the loopback interface. If you "
    b"want to connect from external computers to Redis you may adopt one of the following solutions: "
    b"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback "
    b"interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is "
    b"not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. "
    b"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    b"setting the protected mode option to 'no', and then restarting the server. 3) If you started the "
    b"server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    b"authentication password for the default user. NOTE: You only need to do one of the above things in "
    b"order for the server to start accepting connections from the outside.\r\n")


def external_ipv4():
    """A non-loopback IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for addr in out.split():
        if "." in addr and not addr.startswith("127."):
            return addr
    return None


@pytest.fixture
def ext_ip():
    ip = external_ipv4()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address (hostname -I) to connect from")
    return ip


def stats(conn):
    fields = {}
    for line in parse(conn.cmd("INFO", "stats")).split(b"\r\n"):
        k, _, v = line.partition(b":")
        fields[k] = v
    return fields


def outside(srv, ip):
    """A connection to srv from the machine's own external address."""
    return RawConn(ip, srv.port)


def test_external_client_denied_and_closed(server_factory, ext_ip):
    srv = server_factory("--bind", "127.0.0.1", ext_ip)
    local = srv.raw()
    before = stats(local)
    with outside(srv, ext_ip) as c:
        c.send_may_close(encode_command("SET", "k", "v"))
        assert c.read_until_closed(timeout=5) == DENIED
    after = stats(local)
    assert int(after[b"rejected_connections"]) == int(before[b"rejected_connections"]) + 1
    assert after[b"total_connections_received"] == before[b"total_connections_received"]
    assert local.cmd("EXISTS", "k") == b":0\r\n"
    assert local.cmd("PING") == b"+PONG\r\n"


def test_loopback_peer_allowed_on_external_address(server_factory, ext_ip):
    # what counts is the client's address, not the one it connected to
    srv = server_factory("--bind", "127.0.0.1", ext_ip)
    s = socket.create_connection((ext_ip, srv.port), source_address=("127.0.0.1", 0), timeout=5)
    with s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"


def test_other_loopback_addresses_are_not_local(server_factory):
    # Redis 7.0 compares with "127.0.0.1" and "::1" exactly
    srv = server_factory()
    s = socket.create_connection(("127.0.0.1", srv.port), source_address=("127.0.0.2", 0), timeout=5)
    with s:
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    assert data == DENIED


@pytest.mark.parametrize("args", [("--protected-mode", "no"), ("--requirepass", "secret")],
                         ids=["protected-mode-no", "requirepass"])
def test_external_client_allowed(server_factory, ext_ip, args):
    srv = server_factory("--bind", "127.0.0.1", ext_ip, *args)
    with outside(srv, ext_ip) as c:
        reply = c.cmd("PING")
        assert reply in (b"+PONG\r\n", b"-NOAUTH Authentication required.\r\n")
        assert not c.is_closed(0.2)


@pytest.mark.parametrize("name,value", [("protected-mode", "no"), ("requirepass", "secret")])
def test_config_set_lets_external_clients_in(server_factory, ext_ip, name, value):
    srv = server_factory("--bind", "127.0.0.1", ext_ip)
    with outside(srv, ext_ip) as c:
        assert c.read_until_closed(timeout=5) == DENIED
    admin = srv.raw()
    assert admin.cmd("CONFIG", "SET", name, value) == b"+OK\r\n"
    with outside(srv, ext_ip) as c:
        assert c.cmd("PING") in (b"+PONG\r\n", b"-NOAUTH Authentication required.\r\n")
    assert admin.cmd("CONFIG", "SET", name, {"protected-mode": "yes", "requirepass": ""}[name]) == b"+OK\r\n"
    with outside(srv, ext_ip) as c:
        assert c.read_until_closed(timeout=5) == DENIED


def test_unix_socket_clients_are_local(server_factory, ext_ip, tmp_path):
    path = str(tmp_path / "s.sock")
    srv = server_factory("--bind", "127.0.0.1", ext_ip, "--unixsocket", path)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    with s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
    with outside(srv, ext_ip) as c:
        assert c.read_until_closed(timeout=5) == DENIED


def test_bind_wildcards(server_factory, ext_ip):
    srv = server_factory("--bind", "*", "-::*")
    assert srv.raw().cmd("CONFIG", "GET", "bind") == b"*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n"
    with outside(srv, ext_ip) as c:
        assert c.read_until_closed(timeout=5) == DENIED


# ---------------------------------------------------------------- the default bind

def test_default_bind_is_every_address_behind_protected_mode(server_kind, ext_ip):
    """Without a bind directive both servers bind "* -::*" (Redis 7.0's
    default; redis.conf narrows it) and protected mode turns away an
    outside client."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="latchd-bind-")
    log = open(os.path.join(workdir, "log"), "wb")
    proc = subprocess.Popen([server_binary(server_kind), "--port", str(port), "--save", ""], cwd=workdir,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        def ready():
            try:
                with RawConn("127.0.0.1", port, timeout=1) as c:
                    return c.cmd("PING") == b"+PONG\r\n"
            except OSError:
                return False
        assert wait_for(ready, timeout=10)
        with RawConn("127.0.0.1", port) as c:
            assert c.cmd("CONFIG", "GET", "bind") == b"*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n"
        with RawConn(ext_ip, port) as c:
            assert c.read_until_closed(timeout=5) == DENIED
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
