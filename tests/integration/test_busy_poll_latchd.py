"""latchd only: busy-poll-usecs (hidden from CONFIG GET *, as latchd's own
settings are). After requests that come within the window of each other
the loop polls without sleeping for that long; an idle server, or one that
sees a slow trickle, sleeps. Judged by the process state the kernel shows
(R while polling, even when another process has the CPU; S asleep)."""

import time

from resp_util import encode_command


def states(pid, n=20, every=0.005):
    out = []
    for _ in range(n):
        with open("/proc/%d/stat" % pid) as f:
            out.append(f.read().rsplit(")", 1)[1].split()[0])
        time.sleep(every)
    return out


def test_busy_poll_config(latchd_factory):
    srv = latchd_factory()
    c = srv.raw()
    assert c.cmd("CONFIG", "GET", "busy-poll-usecs") == b"*2\r\n$15\r\nbusy-poll-usecs\r\n$1\r\n0\r\n"
    assert b"busy-poll" not in c.cmd("CONFIG", "GET", "*")
    assert c.cmd("CONFIG", "SET", "busy-poll-usecs", "20") == b"+OK\r\n"
    assert c.cmd("CONFIG", "SET", "busy-poll-usecs", "-1").startswith(b"-ERR CONFIG SET failed")
    assert c.cmd("CONFIG", "SET", "busy-poll-usecs", "1000001").startswith(b"-ERR CONFIG SET failed")


def test_busy_poll_after_fast_requests_only(latchd_factory):
    window_us = 300000   # long enough to watch from here
    srv = latchd_factory("--busy-poll-usecs", str(window_us))
    pid = srv.proc.pid
    c = srv.raw()
    time.sleep(0.5)   # past any window: the next request comes slowly
    assert c.cmd("PING") == b"+PONG\r\n"
    time.sleep(0.02)
    slow = states(pid, n=10)
    assert slow.count("R") <= 2, slow   # asleep: a slow request is not followed by polling
    time.sleep(0.5)
    c.send(encode_command("PING"))
    assert c.read_reply() == b"+PONG\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"   # within the window of the one before
    fast = states(pid, n=20, every=0.005)   # 0.1 s of the 0.3 s window
    assert fast.count("R") >= 15, fast
    time.sleep(0.5)
    idle = states(pid, n=10)
    assert idle.count("R") <= 2, idle   # the window ended: asleep again
