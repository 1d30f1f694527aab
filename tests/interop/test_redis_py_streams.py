"""python3-redis (Debian's redis-py 4.3.4) stream consumers, as workers use
them: a consumer group read with xreadgroup (blocking), acknowledged with
xack, a crashed consumer's entries taken over with xautoclaim and xclaim,
xpending and xinfo as redis-py parses them, and a pool of consumer
threads that must see every entry exactly once."""

import threading
import time


def wait_blocked(r, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while r.info("clients")["blocked_clients"] != n:
        assert time.monotonic() < deadline, r.info("clients")["blocked_clients"]
        time.sleep(0.01)


def test_xreadgroup_block_and_xack(server):
    r = server.client(decode_responses=True)
    r.xgroup_create("events", "workers", id="$", mkstream=True)
    assert r.xreadgroup("workers", "w1", {"events": ">"}, count=10, block=50) == []
    got = []
    t = threading.Thread(target=lambda: got.append(server.client(decode_responses=True).xreadgroup(
        "workers", "w1", {"events": ">"}, count=10, block=5000)))
    t.start()
    wait_blocked(r, 1)
    eid = r.xadd("events", {"type": "signup", "user": "42"})
    t.join(5)
    assert got == [[["events", [(eid, {"type": "signup", "user": "42"})]]]]
    assert r.xpending("events", "workers") == {"pending": 1, "min": eid, "max": eid,
                                               "consumers": [{"name": "w1", "pending": 1}]}
    assert r.xack("events", "workers", eid) == 1
    assert r.xpending("events", "workers")["pending"] == 0
    info = r.xinfo_groups("events")
    assert [(g["name"], g["consumers"], g["pending"], g["last-delivered-id"], g["lag"]) for g in info] == [
        ("workers", 1, 0, eid, 0)]


def test_claiming_a_dead_consumers_entries(server):
    r = server.client(decode_responses=True)
    r.xgroup_create("jobs", "g", id="0", mkstream=True)
    ids = [r.xadd("jobs", {"n": str(i)}) for i in range(5)]
    r.xreadgroup("g", "dead", {"jobs": ">"})
    time.sleep(0.02)
    rng = r.xpending_range("jobs", "g", min="-", max="+", count=10, consumername="dead")
    assert [p["message_id"] for p in rng] == ids and all(p["times_delivered"] == 1 for p in rng)
    claimed = r.xclaim("jobs", "g", "alive", min_idle_time=10, message_ids=ids[:2])
    assert [e[0] for e in claimed] == ids[:2]
    cursor, entries, deleted = _xautoclaim(r)
    assert [e[0] for e in entries] == ids[2:] and cursor == "0-0" and deleted == []
    assert r.xinfo_consumers("jobs", "g")[0]["name"] == "alive"
    assert {c["name"]: c["pending"] for c in r.xinfo_consumers("jobs", "g")} == {"alive": 5, "dead": 0}
    assert r.xgroup_delconsumer("jobs", "g", "dead") == 0
    assert r.xack("jobs", "g", *ids) == 5


def _xautoclaim(r):
    """XAUTOCLAIM's 7.0 reply (cursor, entries, deleted IDs) as sent."""
    cursor, entries, deleted = r.execute_command("XAUTOCLAIM", "jobs", "g", "alive", "10", "0-0", "COUNT", "10")
    return cursor, [(e[0], e[1]) for e in entries], deleted


def test_consumer_pool_sees_every_entry_once(server):
    r = server.client(decode_responses=True)
    r.xgroup_create("work", "pool", id="$", mkstream=True)
    seen, lock = [], threading.Lock()

    def consume(name):
        c = server.client(decode_responses=True)
        while True:
            resp = c.xreadgroup("pool", name, {"work": ">"}, count=7, block=2000)
            if not resp:
                return   # the stops went to others: nothing more comes
            stop = False
            for eid, fields in resp[0][1]:
                c.xack("work", "pool", eid)
                if fields.get("stop"):
                    stop = True
                else:
                    with lock:
                        seen.append(fields["m"])
            if stop:
                return

    workers = [threading.Thread(target=consume, args=("w%d" % i,)) for i in range(4)]
    for w in workers:
        w.start()
    wait_blocked(r, 4)
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.xadd("work", {"m": str(i)})
    p.execute()
    for _ in range(4):
        r.xadd("work", {"stop": "1"})
    for w in workers:
        w.join(10)
    assert sorted(seen, key=int) == [str(i) for i in range(500)]
    assert r.xpending("work", "pool")["pending"] == 0
