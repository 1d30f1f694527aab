"""python3-redis (Debian's redis-py 4.3.4) queue consumers, as workers use
them: BLPOP over several queues with a timeout, the BRPOPLPUSH / BLMOVE
reliable-queue pattern, BZPOPMIN for a priority queue, and a pool of
consumer threads that must see every message exactly once."""

import threading
import time


def wait_blocked(r, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while r.info("clients")["blocked_clients"] != n:
        assert time.monotonic() < deadline, r.info("clients")["blocked_clients"]
        time.sleep(0.01)


def test_blpop_timeout_and_wakeup(server):
    r = server.client(decode_responses=True)
    assert r.blpop(["jobs:high", "jobs:low"], timeout=0.05) is None
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("v", server.client(decode_responses=True)
                                                        .blpop(["jobs:high", "jobs:low"], timeout=5)))
    t.start()
    wait_blocked(r, 1)
    r.rpush("jobs:low", "j1")
    t.join(5)
    assert got["v"] == ("jobs:low", "j1")
    r.rpush("jobs:high", "h")
    r.rpush("jobs:low", "l")
    assert r.blpop(["jobs:high", "jobs:low"], timeout=1) == ("jobs:high", "h")


def test_reliable_queue_with_brpoplpush_and_blmove(server):
    r = server.client(decode_responses=True)
    out = []
    t = threading.Thread(target=lambda: out.append(server.client(decode_responses=True)
                                                   .brpoplpush("queue", "processing", timeout=5)))
    t.start()
    wait_blocked(r, 1)
    r.lpush("queue", "task-1")
    t.join(5)
    assert out == ["task-1"]
    assert r.lrange("processing", 0, -1) == ["task-1"]
    assert r.lrem("processing", 1, "task-1") == 1
    r.rpush("queue", "task-2")
    assert r.blmove("queue", "processing", 1, "LEFT", "RIGHT") == "task-2"


def test_bzpopmin_priority_queue(server):
    r = server.client(decode_responses=True)
    out = []
    t = threading.Thread(target=lambda: out.append(server.client(decode_responses=True).bzpopmin("prio", timeout=5)))
    t.start()
    wait_blocked(r, 1)
    r.zadd("prio", {"urgent": 1, "later": 9})
    t.join(5)
    assert out == [("prio", "urgent", 1.0)]
    assert r.bzpopmax(["prio"], timeout=1) == ("prio", "later", 9.0)


def test_consumer_pool_sees_every_message_once(server):
    r = server.client(decode_responses=True)
    seen, lock = [], threading.Lock()

    def consume():
        c = server.client(decode_responses=True)
        while True:
            item = c.blpop("work", timeout=5)
            if item is None or item[1] == "stop":
                return
            with lock:
                seen.append(item[1])

    workers = [threading.Thread(target=consume) for _ in range(4)]
    for w in workers:
        w.start()
    wait_blocked(r, 4)
    for i in range(400):
        r.rpush("work", "m%d" % i)
    r.rpush("work", *["stop"] * 4)
    for w in workers:
        w.join(10)
    assert sorted(seen) == sorted("m%d" % i for i in range(400))
    assert r.llen("work") == 0
