"""python3-redis (Debian's redis-py 4.3.4) `Lock`, used as its users use it:
SET NX PX to acquire, GET for locked()/owned(), and its three Lua scripts
(release, extend, reacquire) sent as EVALSHA with SCRIPT LOAD on NOSCRIPT."""

import threading
import time

import pytest
import redis
from redis.exceptions import LockError, LockNotOwnedError


def wait_until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_redis_py_version():
    # clients.md measured Debian 12's 4.3.4: the Lock's scripts and RESP2-only
    # handshake checked here are that series'
    print("python3-redis", redis.__version__)
    assert redis.__version__.startswith("4.3.")


def test_acquire_owned_locked_release(server):
    r = server.client()
    lock = r.lock("py:res", timeout=10)
    assert not lock.locked()
    assert lock.acquire(blocking=False)
    token = r.get("py:res")
    assert token is not None and len(token) == 32
    assert 9000 < r.pttl("py:res") <= 10000
    assert lock.locked() and lock.owned()
    lock.release()
    assert not lock.locked() and not lock.owned()
    assert r.exists("py:res") == 0


def test_second_client_sees_locked_but_not_owned(server):
    a, b = server.client(), server.client()
    mine = a.lock("py:res", timeout=10)
    theirs = b.lock("py:res", timeout=10)
    assert mine.acquire(blocking=False)
    assert theirs.locked() and not theirs.owned()
    assert not theirs.acquire(blocking=False)
    with pytest.raises(LockError):
        theirs.release()          # never acquired: no token to release with
    assert mine.owned()


def test_blocking_acquire_times_out_while_held(server):
    a, b = server.client(), server.client()
    assert a.lock("py:res", timeout=10).acquire(blocking=False)
    started = time.monotonic()
    assert not b.lock("py:res", timeout=10, sleep=0.05).acquire(blocking_timeout=0.3)
    assert time.monotonic() - started >= 0.25


def test_blocking_contention_between_threads(server):
    """Two clients in two threads: the waiter polls (sleep=0.05) and gets the
    lock only after the holder released it."""
    holder = server.client().lock("py:res", timeout=10)
    waiter = server.client().lock("py:res", timeout=10, sleep=0.05)
    assert holder.acquire(blocking=False)
    events = {}

    def wait_for_lock():
        events["acquired"] = waiter.acquire(blocking=True, blocking_timeout=10)
        events["at"] = time.monotonic()
        events["owned"] = waiter.owned()     # the token is thread-local
        waiter.release()

    t = threading.Thread(target=wait_for_lock)
    t.start()
    time.sleep(0.3)
    assert "acquired" not in events          # still blocked while held
    released_at = time.monotonic()
    holder.release()
    t.join(10)
    assert events["acquired"] is True
    assert events["at"] >= released_at
    assert events["owned"] and not holder.owned()
    assert not holder.locked()


def test_many_threads_take_turns(server):
    """Six threads increment a plain counter under the lock; every increment
    survives, so no two held the lock at once."""
    r = server.client()
    r.set("py:count", 0)

    def work():
        c = server.client()
        for _ in range(5):
            with c.lock("py:res", timeout=10, sleep=0.01, blocking_timeout=20):
                v = int(c.get("py:count"))
                time.sleep(0.002)
                c.set("py:count", v + 1)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert int(r.get("py:count")) == 30


def test_extend_adds_to_remaining_ttl(server):
    r = server.client()
    lock = r.lock("py:res", timeout=10)
    assert lock.acquire(blocking=False)
    assert lock.extend(5) is True
    assert 14000 < r.pttl("py:res") <= 15000


def test_extend_replace_ttl(server):
    r = server.client()
    lock = r.lock("py:res", timeout=10)
    assert lock.acquire(blocking=False)
    assert lock.extend(3, replace_ttl=True) is True
    assert 2000 < r.pttl("py:res") <= 3000


def test_reacquire_resets_ttl_to_timeout(server):
    r = server.client()
    lock = r.lock("py:res", timeout=10)
    assert lock.acquire(blocking=False)
    r.pexpire("py:res", 1000)
    assert lock.reacquire() is True
    assert 9000 < r.pttl("py:res") <= 10000
    assert lock.owned()


def test_context_manager(server):
    r = server.client()
    with r.lock("py:res", timeout=10) as lock:
        assert lock.owned()
        assert r.get("py:res") is not None
    assert r.exists("py:res") == 0


def test_context_manager_raises_when_lock_is_held(server):
    a, b = server.client(), server.client()
    assert a.lock("py:res", timeout=10).acquire(blocking=False)
    with pytest.raises(LockError):
        with b.lock("py:res", timeout=10, blocking_timeout=0.2):
            pytest.fail("entered a lock another client holds")


def test_expired_lock_is_not_owned_and_operations_raise(server):
    """The lease runs out and another client takes the lock: release,
    extend and reacquire by the old holder raise LockNotOwnedError and
    leave the new holder's lock alone."""
    a, b = server.client(), server.client()
    old = a.lock("py:res", timeout=0.2)
    assert old.acquire(blocking=False)
    assert wait_until(lambda: a.exists("py:res") == 0)
    new = b.lock("py:res", timeout=10)
    assert new.acquire(blocking=False)
    assert not old.owned() and old.locked()
    with pytest.raises(LockNotOwnedError):
        old.extend(5)
    with pytest.raises(LockNotOwnedError):
        old.reacquire()
    with pytest.raises(LockNotOwnedError):
        old.release()
    assert new.owned()
    assert 9000 < b.pttl("py:res") <= 10000


def test_release_after_expiry_with_nobody_else_raises(server):
    r = server.client()
    lock = r.lock("py:res", timeout=0.1)
    assert lock.acquire(blocking=False)
    assert wait_until(lambda: r.exists("py:res") == 0)
    with pytest.raises(LockNotOwnedError):
        lock.release()


def test_scripts_reload_after_script_flush(server):
    """redis-py answers NOSCRIPT with SCRIPT LOAD and a second EVALSHA."""
    r = server.client()
    lock = r.lock("py:res", timeout=10)
    assert lock.acquire(blocking=False)
    assert lock.extend(1)
    r.script_flush()
    assert lock.extend(1)
    assert 11000 < r.pttl("py:res") <= 12000
    r.script_flush()
    lock.release()
    assert r.exists("py:res") == 0


def test_lock_as_an_acl_user(server):
    # redis-py's username= (AUTH user pass): its Lock works within the user's
    # keys, and a key outside them is refused with Redis's NOPERM text
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "py-app", "on", ">pw", "~py:*", "+@all")
    try:
        r = server.client(username="py-app", password="pw")
        lock = r.lock("py:res", timeout=10)
        assert lock.acquire(blocking=False) and lock.owned()
        lock.extend(5)
        lock.release()
        with pytest.raises(redis.exceptions.NoPermissionError, match="no permissions to access one of the keys"):
            r.lock("other:res", timeout=10).acquire(blocking=False)
        with pytest.raises(redis.exceptions.ResponseError, match="WRONGPASS"):
            server.client(username="py-app", password="bad").ping()
    finally:
        admin.execute_command("ACL", "DELUSER", "py-app")
