"""Redisson's RLock wait flow end to end over raw sockets, with the exact
scripts Redisson sends (read from the shared protocol vectors): the holder
locks, the waiter gets the lock's PTTL, subscribes to the lock's channel,
the holder unlocks (publishing "0" from inside the script), the waiter is
woken by the message and acquires. Needs EVAL: skipped where the server has
none yet."""

import pytest

from pubsub_util import frame, require_eval, script
from resp_util import encode_command, parse

LOCK_SHA = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"     # tryLockInnerAsync, 3.19.0 - master
UNLOCK_SHA = "6866459238a13a701d42f4971f12d9f3a50e2442"   # unlockInnerAsync with latch, 3.24.0 - master
LEASE = "30000"
LATCH_TTL = "13500"


class Lock:
    """One RLock named `name`, driven the way Redisson drives it."""

    def __init__(self, name):
        self.name = name
        self.channel = "redisson_lock__channel:{%s}" % name
        self.lock_body = script(LOCK_SHA)
        self.unlock_body = script(UNLOCK_SHA)

    def try_lock(self, conn, owner):
        return conn.cmd("EVAL", self.lock_body, "1", self.name, LEASE, owner)

    def unlock(self, conn, owner, request_id):
        latch = "redisson_unlock_latch:{%s}:%s" % (self.name, request_id)
        reply = conn.cmd("EVAL", self.unlock_body, "3", self.name, self.channel, latch,
                         "0", LEASE, owner, "PUBLISH", LATCH_TTL)
        assert conn.cmd("DEL", latch) == b":1\r\n"   # what Redisson sends after the script
        return reply


@pytest.fixture
def lock(server):
    c = server.raw()
    require_eval(c)
    return Lock("orders")


def test_waiter_is_woken_by_unlock_and_acquires(server, lock):
    holder, waiter, waiter_pubsub = server.raw(), server.raw(), server.raw()
    assert lock.try_lock(holder, "uuid-a:1") == b"$-1\r\n"          # acquired: nil
    ttl = parse(lock.try_lock(waiter, "uuid-b:7"))                    # held: its pttl
    assert isinstance(ttl, int) and 0 < ttl <= 30000
    assert waiter_pubsub.cmd("SUBSCRIBE", lock.channel) == (
        b"*3\r\n$9\r\nsubscribe\r\n$31\r\nredisson_lock__channel:{orders}\r\n:1\r\n")
    assert isinstance(parse(lock.try_lock(waiter, "uuid-b:7")), int)  # still held after subscribing
    assert lock.unlock(holder, "uuid-a:1", "0123456789abcdef0123456789abcdef") == b":1\r\n"
    assert waiter_pubsub.read_reply(timeout=5) == (
        b"*3\r\n$7\r\nmessage\r\n$31\r\nredisson_lock__channel:{orders}\r\n$1\r\n0\r\n")
    assert lock.try_lock(waiter, "uuid-b:7") == b"$-1\r\n"
    assert parse(waiter.cmd("HGETALL", "orders")) == [b"uuid-b:7", b"1"]
    assert 29000 < parse(waiter.cmd("PTTL", "orders")) <= 30000
    assert waiter_pubsub.cmd("UNSUBSCRIBE", lock.channel) == frame("unsubscribe", lock.channel, 0)


def test_reentrant_unlock_does_not_wake(server, lock):
    holder, waiter_pubsub = server.raw(), server.raw()
    assert lock.try_lock(holder, "uuid-a:1") == b"$-1\r\n"
    assert lock.try_lock(holder, "uuid-a:1") == b"$-1\r\n"   # re-entered: count 2
    waiter_pubsub.cmd("SUBSCRIBE", lock.channel)
    assert lock.unlock(holder, "uuid-a:1", "1" * 32) == b":0\r\n"
    assert waiter_pubsub.read_available(0.2) == b""
    assert lock.unlock(holder, "uuid-a:1", "2" * 32) == b":1\r\n"
    assert waiter_pubsub.read_reply() == frame("message", lock.channel, "0")


def test_unlock_retried_returns_first_result_without_second_message(server, lock):
    holder, waiter_pubsub = server.raw(), server.raw()
    lock.try_lock(holder, "uuid-a:1")
    waiter_pubsub.cmd("SUBSCRIBE", lock.channel)
    latch = "redisson_unlock_latch:{orders}:" + "3" * 32
    args = ["EVAL", lock.unlock_body, "3", lock.name, lock.channel, latch, "0", LEASE, "uuid-a:1", "PUBLISH",
            LATCH_TTL]
    assert holder.cmd(*args) == b":1\r\n"
    assert holder.cmd(*args) == b":1\r\n"   # the re-sent EVAL reads the latch
    assert waiter_pubsub.read_reply() == frame("message", lock.channel, "0")
    assert waiter_pubsub.read_available(0.2) == b""


def test_wait_flow_with_evalsha_and_resp3_subscriber(server, lock):
    # node clients speak RESP3 on the subscriber; Redisson >= 3.46 sends EVALSHA
    holder, waiter = server.raw(), server.raw()
    sub3 = server.raw()
    sub3.cmd("HELLO", "3")
    assert holder.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"   # the cache is server-wide
    assert holder.cmd("EVALSHA", LOCK_SHA, "1", lock.name, LEASE, "uuid-a:1").startswith(b"-NOSCRIPT")
    assert parse(holder.cmd("SCRIPT", "LOAD", lock.lock_body)) == LOCK_SHA.encode()
    assert parse(holder.cmd("SCRIPT", "LOAD", lock.unlock_body)) == UNLOCK_SHA.encode()
    assert holder.cmd("EVALSHA", LOCK_SHA, "1", lock.name, LEASE, "uuid-a:1") == b"$-1\r\n"
    assert isinstance(parse(waiter.cmd("EVALSHA", LOCK_SHA, "1", lock.name, LEASE, "uuid-b:1")), int)
    assert sub3.cmd("SUBSCRIBE", lock.channel) == frame("subscribe", lock.channel, 1, proto=3)
    latch = "redisson_unlock_latch:{orders}:" + "4" * 32
    holder.send(encode_command("EVALSHA", UNLOCK_SHA, "3", lock.name, lock.channel, latch, "0", LEASE,
                               "uuid-a:1", "PUBLISH", LATCH_TTL))
    assert holder.read_reply() == b":1\r\n"
    assert sub3.read_reply(timeout=5) == frame("message", lock.channel, "0", proto=3)
    assert waiter.cmd("EVALSHA", LOCK_SHA, "1", lock.name, LEASE, "uuid-b:1") == b"$-1\r\n"


def test_many_waiters_all_woken(server, lock):
    holder = server.raw()
    lock.try_lock(holder, "uuid-a:1")
    waiters = [server.raw() for _ in range(20)]
    for w in waiters:
        w.cmd("SUBSCRIBE", lock.channel)
    assert lock.unlock(holder, "uuid-a:1", "5" * 32) == b":1\r\n"
    for w in waiters:
        assert w.read_reply() == frame("message", lock.channel, "0")
