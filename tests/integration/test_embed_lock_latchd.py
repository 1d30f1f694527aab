"""liblatchd's native lock API (latchd.h: latchd_lock_acquire/renew/release),
latchd only. build/embed_lock_driver runs an embedded server and makes one
native call per stdin line while redis-py talks RESP to the same server:
each test runs with the server on its own thread (calls cross threads onto
its loop) and on the caller's loop (calls run on it directly)."""
import os
import subprocess
import time

import pytest
import redis

from conftest import LATCHD_BIN
from script_util import vector

DRIVER = os.path.join(os.path.dirname(LATCHD_BIN), "embed_lock_driver")
RLOCK = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"      # Redisson RLock lock 3.19.0-
FENCED = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"     # Redisson RFencedLock lock
UNLOCK = "3ffe249c16dee540ac8ab32e39bd408626b9aff7"     # Redisson RLock unlock 3.10.6-3.21.3

pytestmark = pytest.mark.skipif(not os.access(DRIVER, os.X_OK),
                                reason="embed_lock_driver is built next to latchd (cmake --build)")


class Driver:
    def __init__(self, mode):
        self.proc = subprocess.Popen([DRIVER, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        first = self.proc.stdout.readline().split()
        assert first[0] == "port", first
        self.port = int(first[1])

    def call(self, op, name, owner, lease):
        """(status, {holds, token, ttl}) of one native call."""
        self.proc.stdin.write("%s %s %s %d\n" % (op, name, owner, lease))
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        return words[0], {k: int(v) for k, v in (w.split("=") for w in words[1:])}

    def client(self):
        return redis.Redis(port=self.port)

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=10)
        assert rc == 0


@pytest.fixture(params=["thread", "loop"])
def drv(request):
    d = Driver(request.param)
    yield d
    d.close()


def test_latchd_native_acquire_is_a_redisson_lock_to_resp(drv):
    st, out = drv.call("acquire", "orders", "app:1", 30000)
    assert (st, out["holds"], out["token"]) == ("LATCHD_OK", 1, 1)
    r = drv.client()
    assert r.hgetall("orders") == {b"app:1": b"1"}
    assert 29000 < r.pttl("orders") <= 30000
    assert r.get("redisson_lock_token:{orders}") == b"1"
    # Re-entry: a second hold, a new token, the lease set again.
    st, out = drv.call("acquire", "orders", "app:1", 60000)
    assert (st, out["holds"], out["token"]) == ("LATCHD_OK", 2, 2)
    assert r.hgetall("orders") == {b"app:1": b"2"}
    assert 59000 < r.pttl("orders") <= 60000


def test_latchd_resp_held_lock_refuses_native_acquire_with_ttl(drv):
    r = drv.client()
    assert r.eval(vector(RLOCK), 1, "orders", 20000, "java:7") is None
    st, out = drv.call("acquire", "orders", "app:1", 30000)
    assert st == "LATCHD_LOCK_HELD"
    assert 19000 < out["ttl"] <= 20000
    assert out["token"] == -1
    # Refused means untouched: no hold, no token taken.
    assert r.hgetall("orders") == {b"java:7": b"1"}
    assert r.exists("redisson_lock_token:{orders}") == 0
    # And the other way round: the native holder blocks the script.
    drv.call("acquire", "stock", "app:1", 30000)
    pttl = r.eval(vector(RLOCK), 1, "stock", 20000, "java:7")
    assert 29000 < pttl <= 30000


def wait_message(pubsub, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = pubsub.get_message(timeout=0.1)
        if m and m["type"] == "message":
            return m
    return None


def test_latchd_native_release_publishes_like_the_unlock_script(drv):
    r = drv.client()
    ps = r.pubsub()
    ps.subscribe("redisson_lock__channel:{orders}")
    assert ps.get_message(timeout=5)["type"] == "subscribe"
    drv.call("acquire", "orders", "app:1", 30000)
    drv.call("acquire", "orders", "app:1", 30000)
    st, out = drv.call("release", "orders", "app:1", 45000)
    assert (st, out["holds"]) == ("LATCHD_OK", 1)
    assert 44000 < r.pttl("orders") <= 45000   # one hold left: lease renewed
    assert wait_message(ps, timeout=0.3) is None   # nothing published yet
    st, out = drv.call("release", "orders", "app:1", 45000)
    assert (st, out["holds"]) == ("LATCHD_OK", 0)
    m = wait_message(ps)
    assert m["channel"] == b"redisson_lock__channel:{orders}" and m["data"] == b"0"
    assert r.exists("orders") == 0
    st, _ = drv.call("release", "orders", "app:1", 45000)
    assert st == "LATCHD_LOCK_NOT_HELD"
    ps.close()


def test_latchd_native_release_of_a_resp_taken_lock_wakes_resp_waiters(drv):
    r = drv.client()
    ps = r.pubsub()
    ps.subscribe("redisson_lock__channel:a{b}c")   # no braces added: the name has one
    ps.get_message(timeout=5)
    assert r.eval(vector(RLOCK), 1, "a{b}c", 30000, "shared:1") is None
    st, out = drv.call("release", "a{b}c", "shared:1", 30000)
    assert (st, out["holds"]) == ("LATCHD_OK", 0)
    m = wait_message(ps)
    assert m["channel"] == b"redisson_lock__channel:a{b}c" and m["data"] == b"0"
    # A script unlock of a native hold answers as it would for its own.
    drv.call("acquire", "orders", "shared:1", 30000)
    assert r.eval(vector(UNLOCK), 2, "orders", "redisson_lock__channel:{orders}", 0, 30000, "shared:1") == 1
    ps.close()


def test_latchd_native_renew_extends_only_for_the_holder(drv):
    r = drv.client()
    drv.call("acquire", "orders", "app:1", 1000)
    st, out = drv.call("renew", "orders", "app:1", 60000)
    assert (st, out["holds"]) == ("LATCHD_OK", 1)
    assert 59000 < r.pttl("orders") <= 60000
    st, _ = drv.call("renew", "orders", "app:2", 90000)
    assert st == "LATCHD_LOCK_NOT_HELD"
    assert r.pttl("orders") <= 60000
    st, _ = drv.call("renew", "missing", "app:1", 90000)
    assert st == "LATCHD_LOCK_NOT_HELD"


def test_latchd_native_lease_expires_on_the_server_clock(drv):
    r = drv.client()
    drv.call("acquire", "short", "app:1", 50)
    deadline = time.time() + 5
    while r.exists("short") and time.time() < deadline:
        time.sleep(0.02)
    assert r.exists("short") == 0
    st, out = drv.call("acquire", "short", "app:2", 30000)
    assert st == "LATCHD_OK" and out["token"] == 2


def test_latchd_fencing_tokens_increase_across_native_and_resp(drv):
    r = drv.client()
    tokens = []
    for i in range(3):
        st, out = drv.call("acquire", "orders", "app:1", 30000)
        assert st == "LATCHD_OK"
        tokens.append(out["token"])
        assert drv.call("release", "orders", "app:1", 30000)[0] == "LATCHD_OK"
        # Redisson's RFencedLock over RESP shares the counter.
        reply = r.eval(vector(FENCED), 2, "orders", "redisson_lock_token:{orders}", 30000, "java:1")
        assert reply[0] == -1
        tokens.append(reply[1])
        r.delete("orders")
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens)
    assert tokens[0] == 1 and tokens[-1] == 6


def test_latchd_native_errors_are_values(drv):
    r = drv.client()
    r.set("plain", "x")
    assert drv.call("acquire", "plain", "app:1", 30000)[0] == "LATCHD_ERR_WRONGTYPE"
    assert drv.call("release", "plain", "app:1", 30000)[0] == "LATCHD_ERR_WRONGTYPE"
    assert drv.call("renew", "plain", "app:1", 30000)[0] == "LATCHD_ERR_WRONGTYPE"
    r.set("redisson_lock_token:{orders}", "not a number")
    assert drv.call("acquire", "orders", "app:1", 30000)[0] == "LATCHD_ERR_WRONGTYPE"
    assert r.exists("orders") == 0   # nothing changed
    assert drv.call("acquire", "other", "app:1", 0)[0] == "LATCHD_ERR_ARG"
    assert drv.call("acquire", "other", "app:1", -5)[0] == "LATCHD_ERR_ARG"
    assert r.exists("other") == 0


def test_latchd_native_calls_after_resp_shutdown_report_state(drv):
    r = drv.client()
    try:
        r.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    assert drv.call("acquire", "orders", "app:1", 30000)[0] == "LATCHD_ERR_STATE"


def keyevents(pubsub, n):
    """The next n keyspace events as (event, key)."""
    got = []
    deadline = time.time() + 5
    while len(got) < n and time.time() < deadline:
        m = pubsub.get_message(timeout=0.1)
        if m and m["type"] == "pmessage":
            got.append((m["channel"].split(b":", 1)[1], m["data"]))
    return got


def test_latchd_native_calls_raise_the_scripts_keyspace_events(drv):
    r = drv.client()
    r.config_set("notify-keyspace-events", "KEA")
    ps = r.pubsub()
    ps.psubscribe("__keyevent@0__:*")
    ps.get_message(timeout=5)
    r.eval(vector(FENCED), 2, "by-script", "redisson_lock_token:{by-script}", 30000, "o:1")
    r.eval(vector(UNLOCK), 2, "by-script", "redisson_lock__channel:{by-script}", 0, 30000, "o:1")
    script = keyevents(ps, 5)
    drv.call("acquire", "native", "o:1", 30000)
    drv.call("release", "native", "o:1", 30000)
    native = keyevents(ps, 5)
    assert [e for e, _ in script] == [b"incrby", b"hincrby", b"expire", b"hincrby", b"del"]
    assert [e for e, _ in native] == [e for e, _ in script]
    assert [k for _, k in native] == [k.replace(b"by-script", b"native") for _, k in script]
    ps.close()


def test_latchd_native_calls_from_many_threads_exclude_each_other():
    """8 threads of the embedding program contend for one lock on a
    threaded server (every call crosses onto its loop) while a RESP client
    watches: one holder at a time, tokens strictly increasing."""
    d = Driver("thread")
    try:
        d.proc.stdin.write("stress contended 8 200\n")
        d.proc.stdin.flush()
        words = d.proc.stdout.readline().split()
        assert words == ["STRESS_OK", "last_token=1600"]
        r = d.client()
        assert r.get("redisson_lock_token:{contended}") == b"1600"
        assert r.exists("contended") == 0
    finally:
        d.close()
