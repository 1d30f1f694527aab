"""Helpers shared by the pub/sub, notification and Redisson wait-flow tests:
exact frame builders, a reader of pushed messages, and the checks that skip
what a server or this checkout cannot run (EVAL, script vectors)."""

import socket
import time

import pytest

from resp_util import Incomplete, RawConn, parse, reply_end
from script_util import vector



def _b(x):
    return x if isinstance(x, bytes) else str(x).encode()


def bulk(x):
    x = _b(x)
    return b"$%d\r\n%s\r\n" % (len(x), x)


def frame(*items, proto=2):
    """An exact pub/sub frame: bulk strings, None as the null name of a
    bare (UNSUBSCRIBE), ints as RESP integers; '*' in RESP2, '>' in RESP3."""
    out = [(b"*" if proto == 2 else b">") + b"%d\r\n" % len(items)]
    for it in items:
        if it is None:
            out.append(b"$-1\r\n" if proto == 2 else b"_\r\n")
        elif isinstance(it, int):
            out.append(b":%d\r\n" % it)
        else:
            out.append(bulk(it))
    return b"".join(out)


def stalled_conn(server):
    """A RawConn with a tiny receive buffer, for a client that stops reading:
    the server soon has to keep what it sends in its own output buffer."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((server.host, server.port))
    c = RawConn.__new__(RawConn)
    c.sock, c.timeout, c.buf, c.eof = s, 5.0, b"", False
    server._raws.append(c)
    return c


def read_frames(conn, n, timeout=5.0):
    """The next n replies as exact bytes."""
    return [conn.read_reply(timeout) for _ in range(n)]


def drain(conn, wait=0.2):
    """Every complete reply that arrives within `wait` seconds, decoded."""
    data = conn.read_available(wait)
    out = []
    while data:
        try:
            end = reply_end(data)
        except Incomplete:
            raise AssertionError("partial reply left over: %r" % data[:200])
        out.append(parse(data[:end]))
        data = data[end:]
    return out


def wait_numsub(conn, channel, want, timeout=3.0):
    """PUBSUB NUMSUB channel, polled until it equals want (a closed
    subscriber leaves asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        got = parse(conn.cmd("PUBSUB", "NUMSUB", channel))[1]
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def config_get(conn, name):
    """The value of one configuration parameter, by CONFIG GET."""
    reply = parse(conn.cmd("CONFIG", "GET", name))
    assert reply[0] == name.encode(), reply
    return reply[1]


def require_eval(conn):
    """Skip when the server has no EVAL (latchd before the scripting work
    lands): these tests then run against redis only, and against latchd
    once it has scripting."""
    if parse(conn.cmd("COMMAND", "INFO", "eval")) == [None]:
        pytest.skip("this server has no EVAL yet (scripting is built on another branch)")


def script(sha):
    """The exact bytes of a recorded client script (script_util.vector: the
    vectors folder); skip, saying why, when it is not available."""
    return vector(sha)
