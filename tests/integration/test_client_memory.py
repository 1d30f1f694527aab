"""What clients hold counts as Redis counts it: their query and output
buffers are part of used_memory (maxmemory evicts keys for them), and
maxmemory-clients closes the biggest clients not marked CLIENT NO-EVICT
(INFO evicted_clients). Polled, never timed."""

import socket
import time

import pytest


def poll(fn, what, tries=500):
    for _ in range(tries):
        v = fn()
        if v:
            return v
        time.sleep(0.01)
    pytest.fail("never happened: " + what)


def half_command(port, arg_bytes):
    """A client that sends most of one big argument and stops."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n" % (arg_bytes + 100))
    chunk = b"x" * 65536
    sent = 0
    try:
        while sent < arg_bytes:
            s.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass   # evicted before it was all sent: the buffer is sized for the whole argument at once
    return s


def closed(s):
    s.settimeout(0.01)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:   # reset, or a socket already shut by a failed send
        return True


def test_maxmemory_clients_evicts_the_big_client(server_factory):
    srv = server_factory()
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.config_set("maxmemory-clients", "1mb")
    assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "1048576"}
    small = socket.create_connection(("127.0.0.1", srv.port))
    small.sendall(b"PING\r\n")
    assert small.recv(100) == b"+PONG\r\n"
    big = half_command(srv.port, 2 * 1024 * 1024)
    poll(lambda: closed(big), "the big client closed")
    assert r.info("stats")["evicted_clients"] == 1
    small.sendall(b"PING\r\n")   # the small one stays
    assert small.recv(100) == b"+PONG\r\n"
    assert r.ping()
    r.config_resetstat()
    assert r.info("stats")["evicted_clients"] == 0
    big.close()
    small.close()
    r.close()


def test_no_evict_client_stays(server_factory):
    """Its memory counts in the total (others may go for it, as in Redis),
    but it is never evicted itself."""
    srv = server_factory()
    r = srv.client()
    r.config_set("maxmemory-clients", "1mb")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"CLIENT NO-EVICT on\r\n")
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (3 * 1024 * 1024))
    s.sendall(b"v" * (3 * 1024 * 1024) + b"\r\n")
    s.settimeout(10)
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"STRLEN k\r\n")
    assert s.recv(100) == b":%d\r\n" % (3 * 1024 * 1024)
    s.close()
    r.close()


def test_maxmemory_clients_percent(server_factory):
    srv = server_factory()
    r = srv.client()
    r.config_set("maxmemory-clients", "10%")
    assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "10%"}
    r.config_set("maxmemory-clients", "0")   # off again
    assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    r.close()


def test_query_buffers_count_toward_maxmemory(server_factory):
    """Redis's 'eviction due to input buffer of a dead client': keys go."""
    srv = server_factory()
    r = srv.client()
    r.config_set("maxmemory-policy", "allkeys-lru")
    for j in range(50):
        r.setrange(str(j), 100000, "x")
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + 2 * 1024 * 1024)
    assert r.info("stats")["evicted_keys"] == 0
    dead = [half_command(srv.port, 1024 * 1024) for _ in range(4)]
    # any command over maxmemory evicts first (INFO too)
    poll(lambda: r.info("stats")["evicted_keys"] > 0, "keys evicted for the query buffers")
    assert r.dbsize() < 50
    for s in dead:
        s.close()
    r.config_set("maxmemory", 0)
    r.close()


def test_client_list_qbuf_is_the_big_argument_arriving(server_factory):
    # Redis moves a big argument (32 KiB or more) to the front of its query
    # buffer once its header is read: qbuf counts its bytes, not the lines
    # before it (unit/client-eviction waits for qbuf == what it sent).
    srv = server_factory()
    c = srv.client()
    s = socket.create_connection(("127.0.0.1", srv.port))
    try:
        s.sendall(b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$2\r\nqb\r\n")
        assert s.recv(16) == b"+OK\r\n"
        s.sendall(b"*2\r\n$3\r\nGET\r\n$100000\r\n" + b"v" * 50000)

        def qbuf():
            for cl in c.client_list():
                if cl["name"] == "qb" and int(cl["qbuf"]) == 50000:
                    return True
            return False
        poll(qbuf, "qbuf 50000")
    finally:
        s.close()
