"""The fault proxy itself, against an echo server: it forwards, learns a
raft_uv sender from its handshake, drops, blackholes (bytes wait, then
flow) and delays per link."""

import socket
import struct
import threading
import time

import pytest

import ha_proxy


@pytest.fixture
def echo():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)

    def serve(s):
        while True:
            try:
                d = s.recv(65536)
            except OSError:
                return
            if not d:
                s.close()
                return
            s.sendall(d)

    def accept():
        while True:
            try:
                s, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(s,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    yield ls.getsockname()[1]
    ls.close()


@pytest.fixture
def link(echo):
    """Faults and a Proxy in front of the echo server for the link a -> b."""
    f = ha_proxy.Faults()
    p = ha_proxy.Proxy(f, "b", echo, source="a")
    yield f, p
    p.close()


def handshake(sid):
    addr = b"127.0.0.1:1\0".ljust(16, b"\0")
    return struct.pack("<QQQ", 1, sid, len(addr)) + addr


def roundtrip(port, payload, first=b"", timeout=3.0):
    """Send first + payload; what comes back within timeout (b"" if closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(first + payload)
        want = len(first) + len(payload)
        got = b""
        while len(got) < want:
            d = s.recv(65536)
            if not d:
                break
            got += d
        return got
    except socket.timeout:
        return None
    except ConnectionResetError:
        return b""
    finally:
        s.close()


def test_raft_source_parses_the_handshake():
    assert ha_proxy.raft_source(handshake(2)) == 2
    assert ha_proxy.raft_source(b"*1\r\n$4\r\nPING\r\n" * 3) is None
    assert ha_proxy.raft_source(b"short") is None


def test_forward_drop_heal(echo):
    f = ha_proxy.Faults()
    p = ha_proxy.Proxy(f, "n2", echo, identify=lambda b: "n%s" % ha_proxy.raft_source(b))
    try:
        hs = handshake(1)
        assert roundtrip(p.port, b"hello", hs) == hs + b"hello"
        f.cut(["n1"], ["n2"])
        assert roundtrip(p.port, b"hello", hs) == b""          # closed at once
        assert roundtrip(p.port, b"x", handshake(3)) == handshake(3) + b"x"   # n3 -> n2 still up
        f.heal()
        assert roundtrip(p.port, b"again", hs) == hs + b"again"
    finally:
        p.close()


def test_drop_closes_a_live_connection(link):
    f, p = link
    with socket.create_connection(("127.0.0.1", p.port), timeout=3) as s:
        s.sendall(b"1")
        assert s.recv(10) == b"1"
        f.cut(["a"], ["b"])
        assert s.recv(10) == b""


def test_blackhole_holds_bytes_until_healed(link):
    f, p = link
    with socket.create_connection(("127.0.0.1", p.port), timeout=3) as s:
        f.cut(["a"], ["b"], rule="blackhole")
        s.sendall(b"held")
        s.settimeout(0.7)
        with pytest.raises(socket.timeout):
            s.recv(10)
        f.heal()
        s.settimeout(3)
        assert s.recv(10) == b"held"


def test_delay(link):
    f, p = link
    f.delay(("a", "b"), 0.3)
    t0 = time.monotonic()
    assert roundtrip(p.port, b"slow") == b"slow"
    assert time.monotonic() - t0 >= 0.6       # both directions delayed
