"""latchd only: blocking commands', CLIENT PAUSE's and WAIT's timeouts run on
the clock LATCHD.CLOCK moves (--enable-clock-control yes): an ADVANCE past a
deadline times the client out at once, a frozen clock never does."""

import time

import pytest

from resp_util import encode_command, parse, wait_for

CLOCK_ON = ("--enable-clock-control", "yes")


@pytest.fixture
def clocked(latchd_factory):
    return latchd_factory(*CLOCK_ON)


def blocked(c):
    for line in parse(c.cmd("INFO", "clients")).decode().split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    raise AssertionError("no blocked_clients")


def parked(clocked, c, *cmd):
    w = clocked.raw()
    w.send(encode_command(*cmd))
    assert wait_for(lambda: blocked(c) >= 1)
    return w


def test_latchd_only_blpop_times_out_on_clock_advance(clocked):
    c = clocked.raw()
    w = parked(clocked, c, "BLPOP", "k", "3600")       # an hour: only the jump can end it
    c.call("LATCHD.CLOCK", "ADVANCE", "3599000")
    assert w.read_available(0.2) == b""
    c.call("LATCHD.CLOCK", "ADVANCE", "1001")
    assert w.read_reply(timeout=1) == b"*-1\r\n"
    assert blocked(c) == 0


def test_latchd_only_frozen_clock_holds_timeouts(clocked):
    c = clocked.raw()
    c.call("LATCHD.CLOCK", "FREEZE")
    w = parked(clocked, c, "BZPOPMIN", "z", "0.05")
    time.sleep(0.2)
    assert w.read_available(0.1) == b""
    c.call("LATCHD.CLOCK", "ADVANCE", "60")
    assert w.read_reply(timeout=1) == b"*-1\r\n"
    c.call("LATCHD.CLOCK", "RESUME")


def test_latchd_only_pause_and_wait_end_on_clock_advance(clocked):
    c = clocked.raw()
    c.call("CLIENT", "PAUSE", "3600000", "WRITE")
    writer = parked(clocked, c, "SET", "k", "v")
    waiter = clocked.raw()
    waiter.send(encode_command("WAIT", "1", "7200000"))
    assert wait_for(lambda: blocked(c) == 2)
    c.call("LATCHD.CLOCK", "ADVANCE", "3600001")
    assert writer.read_reply(timeout=1) == b"+OK\r\n"
    assert waiter.read_available(0.1) == b""
    c.call("LATCHD.CLOCK", "ADVANCE", "3600000")
    assert waiter.read_reply(timeout=1) == b":0\r\n"


def test_latchd_only_many_waiters_one_wake(clocked):
    # 500 clients on 500 keys; a push wakes exactly its own waiter
    c = clocked.raw()
    ws = []
    for i in range(500):
        w = clocked.raw()
        w.send(encode_command("BLPOP", "q%d" % i, "0"))
        ws.append(w)
    assert wait_for(lambda: blocked(c) == 500, timeout=10)
    c.call("RPUSH", "q321", "x")
    assert ws[321].read_reply() == b"*2\r\n$4\r\nq321\r\n$1\r\nx\r\n"
    assert blocked(c) == 499
    for w in ws:
        w.close()
    assert wait_for(lambda: blocked(c) == 0, timeout=10)
