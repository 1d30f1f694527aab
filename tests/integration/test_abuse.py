"""Connection abuse: slowloris clients, half-open and reset connections, a
client killed mid-command, a client that never reads its replies, and 10k
concurrent idle connections. Through all of it the server keeps serving a
well-behaved client; latchd's memory returns to its baseline afterwards
(RSS is asserted for latchd only: the test says so in its name)."""

import resource
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

from proc_util import rss_kb, under_tool
from resp_util import encode_command, parse, wait_for

IDLE_CONNECTIONS = 10000


def info_field(conn, section, name):
    for line in parse(conn.cmd("INFO", section)).split(b"\r\n"):
        k, _, v = line.partition(b":")
        if k == name.encode():
            return int(v)
    raise KeyError(name)


def connected_clients(conn):
    return info_field(conn, "clients", "connected_clients")


def serves(conn, tag):
    """The well-behaved client: a write and a read, checked."""
    assert conn.cmd("SET", "worker", tag) == b"+OK\r\n"
    assert conn.cmd("GET", "worker") == b"$%d\r\n%s\r\n" % (len(tag), tag.encode())


# ---------------------------------------------------------------- slowloris

def test_slowloris_clients_do_not_stall_others(server):
    worker = server.raw()
    command = encode_command("SET", "slow", "x" * 40)
    slow = [server.raw() for _ in range(50)]
    for i in range(len(command)):          # every client trickles one byte at a time
        for c in slow:
            c.send(command[i:i + 1])
        if i % 8 == 0:
            serves(worker, "byte-%d" % i)   # ... while the worker is served in between
        time.sleep(0.002)
    for c in slow:
        assert c.read_reply() == b"+OK\r\n"
    assert worker.cmd("GET", "slow") == b"$40\r\n" + b"x" * 40 + b"\r\n"


def test_many_clients_parked_mid_command(server):
    worker = server.raw()
    parked = [server.raw() for _ in range(200)]
    for i, c in enumerate(parked):
        c.send(b"*3\r\n$3\r\nSET\r\n$2\r\np%d\r\n$1000\r\n" % (i % 10) + b"y" * 500)
    serves(worker, "parked")
    assert worker.cmd("DBSIZE") == b":1\r\n"
    for c in parked:
        c.send(b"y" * 500 + b"\r\n")
    for c in parked:
        assert c.read_reply() == b"+OK\r\n"


# ---------------------------------------------------------------- half-open, reset, killed

def test_half_closed_after_complete_command_gets_reply(server):
    c = server.raw()
    c.send(encode_command("SET", "hc", "1") + encode_command("GET", "hc"))
    c.sock.shutdown(socket.SHUT_WR)
    assert c.read_until_closed() == b"+OK\r\n$1\r\n1\r\n"


def test_half_closed_mid_command_is_dropped(server):
    worker = server.raw()
    c = server.raw()
    c.send(b"*3\r\n$3\r\nSET\r\n$2\r\nhc\r\n$10\r\nabc")
    c.sock.shutdown(socket.SHUT_WR)
    assert c.read_until_closed() == b""
    assert worker.cmd("EXISTS", "hc") == b":0\r\n"
    serves(worker, "half")


def test_reset_mid_command(server):
    worker = server.raw()
    for _ in range(20):
        s = socket.create_connection((server.host, server.port))
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nr\r\n$100000\r\n" + b"z" * 50000)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()                        # RST, not FIN
    assert worker.cmd("EXISTS", "r") == b":0\r\n"
    serves(worker, "reset")


KILLED_CLIENT = r"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"*3\r\n$3\r\nSET\r\n$6\r\nkilled\r\n$1000000000\r\n")
chunk = b"k" * 65536
print("sending", flush=True)
while True:
    s.sendall(chunk)
"""


def test_client_killed_mid_command(server):
    worker = server.raw()
    proc = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, str(server.port)],
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"sending\n"
        serves(worker, "during")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert worker.cmd("EXISTS", "killed") == b":0\r\n"
    serves(worker, "after")
    assert wait_for(lambda: connected_clients(worker) == 1)


def test_client_that_never_reads_replies(server):
    worker = server.raw()
    assert worker.cmd("SET", "big", b"b" * 100000) == b"+OK\r\n"
    deaf = socket.create_connection((server.host, server.port))
    deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    deaf.sendall(encode_command("GET", "big") * 300)   # ~30 MB of replies, never read
    for i in range(50):
        serves(worker, "deaf-%d" % i)
    # the backlog is the deaf client's alone, not the worker's
    assert worker.cmd("PING") == b"+PONG\r\n"
    deaf.close()
    assert wait_for(lambda: connected_clients(worker) == 1)
    serves(worker, "after-deaf")


# ---------------------------------------------------------------- 10k idle connections

@pytest.fixture
def fd_headroom():
    """Raise this process's fd limit for 10k client sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE_CONNECTIONS + 200
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip("hard fd limit %d is below the %d this test needs" % (hard, need))
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_idle(srv, worker, n):
    """n connections, each having sent one PING (so each has been read
    and answered) and then left idle; the worker is served between batches."""
    conns = []
    for start in range(0, n, 1000):
        batch = [socket.create_connection((srv.host, srv.port)) for _ in range(min(1000, n - start))]
        for s in batch:
            s.sendall(b"PING\r\n")
        for s in batch:
            assert s.recv(16) == b"+PONG\r\n"
        conns += batch
        serves(worker, "ramp-%d" % start)
    return conns


def close_all(conns, worker):
    for s in conns:
        s.close()
    assert wait_for(lambda: connected_clients(worker) == 1, timeout=30)


def test_10k_idle_connections(server_factory, fd_headroom):
    srv = server_factory("--maxclients", str(IDLE_CONNECTIONS + 100))
    worker = srv.raw()
    conns = open_idle(srv, worker, IDLE_CONNECTIONS)
    assert connected_clients(worker) == IDLE_CONNECTIONS + 1
    serves(worker, "peak")
    close_all(conns, worker)
    serves(worker, "after")


def test_latchd_only_10k_idle_connections_rss_returns_to_baseline(latchd_factory, fd_headroom, capsys):
    srv = latchd_factory("--maxclients", str(IDLE_CONNECTIONS + 100))
    if under_tool(srv.proc.pid):
        pytest.skip("RSS is not glibc's under %s" % under_tool(srv.proc.pid))
    worker = srv.raw()
    serves(worker, "warm")
    close_all(open_idle(srv, worker, 100), worker)   # warm up the allocator
    before = rss_kb(srv.proc.pid)
    conns = open_idle(srv, worker, IDLE_CONNECTIONS)
    peak = rss_kb(srv.proc.pid)
    close_all(conns, worker)
    serves(worker, "after")
    after = rss_kb(srv.proc.pid)
    with capsys.disabled():
        print("\n10k idle connections, latchd RSS: before %d kB, peak %d kB, after %d kB"
              % (before, peak, after))
    assert after <= before * 1.10, (before, peak, after)
