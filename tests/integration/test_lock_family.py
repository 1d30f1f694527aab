"""The Redisson lock family and redis-semaphore, run from the exact script
texts in ../shared/protocol/vectors/ (the current version of each), in
scenarios that follow each object's API: acquire, re-entry, contention,
release, timeouts and expiry, and the wake-up message on the object's
channel (seen by a SUBSCRIBEd second connection; LATCHD_TEST_NO_PUBSUB=1
turns those checks off). Replies and key state are asserted exactly, the
same on latchd and redis-server; PTTL-derived numbers within 1.5 s.

Without pub/sub the scripts' publish command is swapped for a no-op (see
PUB). Scores and queue timeouts come from the client's clock (an ARGV), so the
scenarios pass their own `now` and move it forward instead of sleeping.
Which scripts latchd runs natively is in README.md; these tests hold for
either path."""

import time

import pytest

from resp_util import parse
from script_util import PUBSUB, NIL, Script, Subscriber, bulk, channel_of, gone, integer, latch_of

T = 1_700_000_000_000       # the clients' "now" (ms) at the start of a scenario
WAIT = 300000               # RFairLock threadWaitTime
LEASE = 30000
LATCH_TTL = "16000"
A = "8b8a1d8e-5a3c-4e0b-9a57-2f1d3c4b5a6e:1"
B = "8b8a1d8e-5a3c-4e0b-9a57-2f1d3c4b5a6e:2"
C = "d2c1b0a9-0000-4000-8000-112233445566:1"
D = "d2c1b0a9-0000-4000-8000-112233445566:7"
E = "0f0f0f0f-1111-4222-8333-444455556666:3"
# The publish command: every current script takes it from ARGV and ignores
# its reply. Without pub/sub (LATCHD_TEST_NO_PUBSUB=1) it becomes EXISTS:
# the same (channel, message) arguments, an integer reply, no key changed,
# so everything but the message itself is still compared.
PUB = "PUBLISH" if PUBSUB else "EXISTS"


def run(prefix, conn, keys, argv):
    """Run vector `prefix` (EVALSHA, loading it on NOSCRIPT): exact reply bytes."""
    return Script.vector(prefix).raw(conn, keys, [a if isinstance(a, bytes) else str(a) for a in argv])


def value(conn, key):
    return parse(conn.cmd("GET", key))


def hash_of(conn, key):
    flat = parse(conn.cmd("HGETALL", key))
    return {k.decode(): v.decode() for k, v in zip(flat[0::2], flat[1::2])}


def queue(conn, key):
    return [x.decode() for x in parse(conn.cmd("LRANGE", key, 0, -1))]


def scores(conn, key):
    """[(member, score)] in order; members decoded unless binary."""
    flat = parse(conn.cmd("ZRANGE", key, 0, -1, "WITHSCORES"))
    out = []
    for m, s in zip(flat[0::2], flat[1::2]):
        try:
            m = m.decode()
        except UnicodeDecodeError:
            pass
        out.append((m, int(s) if s.isdigit() else float(s)))
    return out


def pttl(conn, key):
    return parse(conn.cmd("PTTL", key))


def near(got, want, slack=1500):
    """A TTL-derived number: at most `want`, less by no more than slack."""
    assert want - slack < got <= want, (got, want)
    return got


def held(conn, key, holds, lease=LEASE):
    assert hash_of(conn, key) == {k: str(v) for k, v in holds.items()}
    near(pttl(conn, key), lease)


# ---------------------------------------------------------------- RFairLock

FAIR_LOCK, FAIR_TRY_NOWAIT, FAIR_ACQUIRE_FAILED = "8f6ed299", "d20501c2", "d1ddef65"
FAIR_UNLOCK, FAIR_FORCE = "367f80bd", "71ed11d4"
NR_FAIR_LOCK, NR_FAIR_TRY_NOWAIT = "46724422", "5bea9498"


class Fair:
    """RedissonFairLock's keys and calls (3.45+ scripts)."""

    def __init__(self, conn, name):
        self.conn, self.name = conn, name
        self.q, self.t = "redisson_lock_queue:{%s}" % name, "redisson_lock_timeout:{%s}" % name
        self.chan = channel_of(name)

    def wakeup_channel(self, owner):
        return "%s:%s" % (self.chan, owner)

    def lock(self, owner, now, lease=LEASE, script=FAIR_LOCK, *extra):
        return run(script, self.conn, [self.name, self.q, self.t], [lease, owner, WAIT, now, *extra])

    def try_lock(self, owner, now, lease=LEASE, script=FAIR_TRY_NOWAIT, *extra):
        return run(script, self.conn, [self.name, self.q, self.t], [lease, owner, now, WAIT, *extra])

    def unlock(self, owner, now, req):
        return run(FAIR_UNLOCK, self.conn, [self.name, self.q, self.t, self.chan, latch_of(self.name, req)],
                   ["0", LEASE, owner, now, PUB, LATCH_TTL])

    def acquire_failed(self, owner):
        return run(FAIR_ACQUIRE_FAILED, self.conn, [self.q, self.t], [owner, WAIT])

    def force_unlock(self, now):
        return run(FAIR_FORCE, self.conn, [self.name, self.q, self.t, self.chan], ["0", now, PUB])


def test_fair_lock_queue_order_wakeups_and_stale_waiters(server, conn):
    f = Fair(conn, "fair")
    sub = Subscriber(server, [f.wakeup_channel(x) for x in (B, C, D, E)])
    # A takes the free lock, then re-enters
    assert f.lock(A, T) == NIL
    assert f.lock(A, T) == NIL
    held(conn, "fair", {A: 2})
    gone(conn, f.q)
    # B queues with the lock's remaining time; its timeout = ttl + wait + now
    ttl_b = near(parse(f.lock(B, T)), LEASE)
    assert queue(conn, f.q) == [B]
    assert scores(conn, f.t) == [(B, ttl_b + WAIT + T)]
    near(parse(f.lock(B, T + 10)), LEASE)                 # already queued: the lock's PTTL
    # C queues behind B: its ttl is B's timeout from now
    assert f.lock(C, T + 20) == integer(ttl_b + WAIT - 20)
    assert queue(conn, f.q) == [B, C]
    assert scores(conn, f.t) == [(B, ttl_b + WAIT + T), (C, ttl_b + 2 * WAIT + T)]
    # tryLock() without waiting answers 1 and queues nobody
    assert f.try_lock(D, T + 30) == integer(1)
    assert queue(conn, f.q) == [B, C]
    # A unlocks: a hold left (0, remembered in the latch), then free (1),
    # and the first waiter - only B - is woken on its own channel
    assert f.unlock(A, T + 40, "r1") == integer(0)
    assert f.unlock(A, T + 40, "r1") == integer(0)        # the latch replays the result
    assert value(conn, latch_of("fair", "r1")) == b"0"
    assert f.unlock(B, T + 40, "r2") == NIL               # not the holder
    assert f.unlock(A, T + 40, "r3") == integer(1)
    gone(conn, "fair")
    sub.expect([(f.wakeup_channel(B), "0")])
    assert f.unlock(A, T + 40, "r4") == integer(1)        # already free: B is woken again
    sub.expect([(f.wakeup_channel(B), "0")])
    # C may not jump the queue: the lock is free but B is first
    assert f.lock(C, T + 50) == integer(0)
    # B takes it; everyone behind moves up by the wait time
    assert f.lock(B, T + 60) == NIL
    held(conn, "fair", {B: 1})
    assert queue(conn, f.q) == [C]
    assert scores(conn, f.t) == [(C, ttl_b + WAIT + T)]
    # D queues behind C, then C gives up (acquireFailed): D moves up
    assert f.lock(D, T + 70) == integer(ttl_b + WAIT - 70)
    assert run(FAIR_ACQUIRE_FAILED, conn, [f.q, f.t], [C, WAIT]) == NIL
    assert queue(conn, f.q) == [D]
    d_timeout = ttl_b + WAIT + T
    assert scores(conn, f.t) == [(D, d_timeout)]
    # time passes beyond D's timeout: the next call drops D as stale
    ttl_e = near(parse(f.lock(E, d_timeout)), LEASE, slack=3000)
    assert queue(conn, f.q) == [E]
    assert scores(conn, f.t) == [(E, ttl_e + WAIT + d_timeout)]
    # forceUnlock frees the lock and wakes the first waiter
    assert f.force_unlock(d_timeout) == integer(1)
    gone(conn, "fair")
    sub.expect([(f.wakeup_channel(E), "0")])
    assert f.force_unlock(d_timeout) == integer(0)
    assert queue(conn, f.q) == [E]


def test_fair_lock_nowait_and_lease_expiry(conn):
    f = Fair(conn, "fair2")
    assert f.try_lock(A, T, lease=200) == NIL
    assert f.try_lock(A, T, lease=200) == NIL             # re-entry
    assert hash_of(conn, "fair2") == {A: "2"}
    assert f.try_lock(B, T) == integer(1)
    time.sleep(0.3)
    gone(conn, "fair2")                                   # the lease ran out
    assert f.try_lock(B, T + 300) == NIL
    held(conn, "fair2", {B: 1})
    gone(conn, f.q)


def test_non_reentrant_fair_lock_refuses_reentry(conn):
    f = Fair(conn, "nrfair")
    msg = "ERR lock is not reentrant"
    assert f.lock(A, T, LEASE, NR_FAIR_LOCK, msg) == NIL
    assert f.lock(A, T, LEASE, NR_FAIR_LOCK, msg) == b"-%s\r\n" % msg.encode()
    assert f.try_lock(A, T, LEASE, NR_FAIR_TRY_NOWAIT, msg) == b"-%s\r\n" % msg.encode()
    held(conn, "nrfair", {A: 1})
    assert f.try_lock(B, T, LEASE, NR_FAIR_TRY_NOWAIT, msg) == integer(1)
    ttl = near(parse(f.lock(B, T, LEASE, NR_FAIR_LOCK, msg)), LEASE)
    assert scores(conn, f.t) == [(B, ttl + WAIT + T)]
    assert f.unlock(A, T + 1, "r1") == integer(1)
    assert f.lock(B, T + 2, LEASE, NR_FAIR_LOCK, msg) == NIL
    gone(conn, f.q)


# ---------------------------------------------------------------- RReadWriteLock

READ_LOCK, READ_UNLOCK, READ_FORCE, RW_IS_LOCKED, READ_RENEW = (
    "95553a6f", "6e1b10e1", "27dbe744", "8ad44f1b", "38d2b478")
WRITE_LOCK, WRITE_UNLOCK, WRITE_FORCE = "6306ba3b", "21f5fb0f", "2e2cb2a3"


class RW:
    """RedissonReadWriteLock: one hash for both locks, one timeout key per
    read hold ({name}:<owner>:rwlock_timeout:<n>)."""

    def __init__(self, conn, name):
        self.conn, self.name = conn, name
        self.chan = "redisson_rwlock:{%s}" % name

    def hold_key(self, owner, n):
        return "{%s}:%s:rwlock_timeout:%d" % (self.name, owner, n)

    def read_lock(self, owner, lease=LEASE):
        return run(READ_LOCK, self.conn, [self.name, "{%s}:%s:rwlock_timeout" % (self.name, owner)],
                   [lease, owner, owner + ":write"])

    def read_unlock(self, owner, req):
        return run(READ_UNLOCK, self.conn,
                   [self.name, self.chan, "{%s}:%s:rwlock_timeout" % (self.name, owner),
                    "{%s}" % self.name, latch_of(self.name, req)],
                   ["0", owner, PUB, LATCH_TTL])

    def write_lock(self, owner, lease=LEASE):
        return run(WRITE_LOCK, self.conn, [self.name], [lease, owner + ":write"])

    def write_unlock(self, owner, req):
        return run(WRITE_UNLOCK, self.conn, [self.name, self.chan, latch_of(self.name, req)],
                   ["1", LEASE, owner + ":write", PUB, LATCH_TTL])

    def is_locked(self):
        return run(RW_IS_LOCKED, self.conn, [self.name], [])


def test_read_write_lock(server, conn):
    rw = RW(conn, "rw")
    sub = Subscriber(server, [rw.chan])
    # two readers share it; each hold has its own timeout key
    assert rw.read_lock(A) == NIL
    assert rw.read_lock(A) == NIL
    assert rw.read_lock(B) == NIL
    held(conn, "rw", {"mode": "read", A: 2, B: 1})
    for owner, n in ((A, 1), (A, 2), (B, 1)):
        assert value(conn, rw.hold_key(owner, n)) == b"1"
        near(pttl(conn, rw.hold_key(owner, n)), LEASE)
    assert rw.is_locked() == integer(1)
    # the watchdog renews the hash and every hold of the owner
    assert run(READ_RENEW, conn, ["rw", "{rw}"], [45000, 1, A]) == b"*1\r\n:1\r\n"
    near(pttl(conn, "rw"), 45000)
    near(pttl(conn, rw.hold_key(A, 2)), 45000)
    # a writer has to wait
    near(parse(rw.write_lock(C)), 45000)
    # readers leave one hold at a time; the last one frees it and wakes all
    assert rw.read_unlock(A, "q1") == integer(0)
    assert rw.read_unlock(A, "q1") == integer(0)          # latch replay
    gone(conn, rw.hold_key(A, 2))
    assert rw.read_unlock(A, "q2") == integer(0)
    assert hash_of(conn, "rw") == {"mode": "read", B: "1"}
    assert rw.read_unlock(C, "q3") == NIL                 # holds nothing
    sub.expect([])
    assert rw.read_unlock(B, "q4") == integer(1)
    gone(conn, "rw")
    gone(conn, rw.hold_key(B, 1))
    sub.expect([(rw.chan, "0")])
    # the writer, re-entering (the lease adds up), then reading too
    assert rw.write_lock(C) == NIL
    assert rw.write_lock(C) == NIL
    held(conn, "rw", {"mode": "write", C + ":write": 2}, lease=2 * LEASE)
    assert rw.read_lock(C) == NIL
    assert hash_of(conn, "rw") == {"mode": "write", C + ":write": "2", C: "1"}
    near(parse(rw.read_lock(A)), 2 * LEASE)               # other readers wait
    assert rw.is_locked() == integer(1)
    # write unlocks: the last one turns the lock into C's read lock, silently
    assert rw.write_unlock(C, "w1") == integer(0)
    assert rw.write_unlock(C, "w2") == integer(1)
    assert hash_of(conn, "rw") == {"mode": "read", C: "1"}
    sub.expect([])
    assert rw.write_unlock(C, "w3") == NIL
    # force-unlocking the wrong mode does nothing; the right one wakes all
    assert run(WRITE_FORCE, conn, ["rw", rw.chan], ["1", PUB]) == integer(0)
    assert run(READ_FORCE, conn, ["rw", rw.chan], ["0", PUB]) == integer(1)
    gone(conn, "rw")
    sub.expect([(rw.chan, "0")])
    assert rw.is_locked() == integer(0)


def test_read_lock_expires_with_its_lease(conn):
    rw = RW(conn, "rw2")
    assert rw.read_lock(A, lease=150) == NIL
    near(parse(rw.write_lock(B)), 150)
    time.sleep(0.3)
    gone(conn, "rw2")
    gone(conn, rw.hold_key(A, 1))
    assert rw.write_lock(B) == NIL
    held(conn, "rw2", {"mode": "write", B + ":write": 1})


# ---------------------------------------------------------------- RSemaphore

SEM_SET_TTL, SEM_SET, SEM_ACQUIRE, SEM_RELEASE = "38bf9988", "241ce4e8", "c7dc9d18", "ae275824"
SEM_ADD, SEM_DRAIN, SEM_RELEASE_IF_EXISTS = "98238d40", "c87766d5", "68838024"


def test_semaphore(server, conn):
    chan = "redisson_sc:{sem}"
    sub = Subscriber(server, [chan])
    assert run(SEM_SET_TTL, conn, ["sem", chan], [2, PUB, 60000]) == integer(1)
    assert run(SEM_SET, conn, ["sem", chan], [5, PUB]) == integer(0)   # already set
    sub.expect([(chan, "2")])
    near(pttl(conn, "sem"), 60000)
    # tryAcquire: 1 when there are enough permits, else 0 and no change
    assert run(SEM_ACQUIRE, conn, ["sem"], [1]) == integer(1)
    assert run(SEM_ACQUIRE, conn, ["sem"], [2]) == integer(0)
    assert run(SEM_ACQUIRE, conn, ["sem"], [1]) == integer(1)
    assert run(SEM_ACQUIRE, conn, ["sem"], [1]) == integer(0)
    assert value(conn, "sem") == b"0"
    # release publishes the new count: the wake-up for waiters
    assert run(SEM_RELEASE, conn, ["sem", chan], [1, PUB]) == NIL
    sub.expect([(chan, "1")])
    near(pttl(conn, "sem"), 60000)                         # INCRBY/DECRBY keep the TTL
    assert run(SEM_ADD, conn, ["sem", chan], [3, PUB]) == NIL
    sub.expect([(chan, "4")])
    assert pttl(conn, "sem") == -1                         # addPermits SETs: no TTL
    assert run(SEM_DRAIN, conn, ["sem"], []) == bulk("4")
    assert run(SEM_DRAIN, conn, ["sem"], []) == bulk("0")
    assert run(SEM_RELEASE_IF_EXISTS, conn, ["nosem", "redisson_sc:{nosem}"], [1, PUB]) == integer(0)
    gone(conn, "nosem")
    assert run(SEM_RELEASE_IF_EXISTS, conn, ["sem", chan], [2, PUB]) == integer(1)
    sub.expect([(chan, "2")])
    assert value(conn, "sem") == b"2"
    # the semaphore goes with its TTL
    conn.cmd("PEXPIRE", "sem", 100)
    time.sleep(0.25)
    assert run(SEM_ACQUIRE, conn, ["sem"], [1]) == integer(0)
    gone(conn, "sem")


# ---------------------------------------------------------------- RPermitExpirableSemaphore

PES_ACQUIRE, PES_RELEASE, PES_AVAILABLE, PES_PERMITS, PES_ACQUIRED = (
    "992c96b0", "cf3ab77b", "26b3972b", "e242db5c", "6f0b0be7")
PES_ADD, PES_SET, PES_UPDATE_LEASE, PES_LEASE_TIME = "ec6fb1cd", "494d8561", "2298b02c", "8be95cb5"
NONEXP = 922337203685477    # RedissonPermitExpirableSemaphore.nonExpirableTimeout


def permit_id(n):
    """16 random-looking raw bytes, as Redisson sends them (ByteArrayCodec)."""
    return bytes([n, 0, 13, 10, 255, 128 + n]) + b"\x00\xfe" * 5


def test_permit_expirable_semaphore(server, conn):
    name, tmo, chan = "pes", "{pes}:timeout", "redisson_sc:{pes}"
    sub = Subscriber(server, [chan])
    keys3 = [name, tmo, chan]
    id1, id2, id3, id4 = (permit_id(i) for i in range(1, 5))

    def acquire(now, timeout, *ids):
        return Script.vector(PES_ACQUIRE).raw(conn, keys3, [str(len(ids)), str(timeout), str(now),
                                                            str(NONEXP), PUB, *ids])

    def release(now, *ids):
        return Script.vector(PES_RELEASE).raw(conn, [name, chan, tmo],
                                              [str(len(ids)), str(now), PUB, *ids])

    assert run("241ce4e8", conn, [name, chan], [2, PUB]) == integer(1)
    sub.expect([(chan, "2")])
    # a permit with a lease and one without
    assert acquire(T, T + 1000, id1) == bulk("OK")
    assert acquire(T, NONEXP, id2) == bulk("OK")
    assert value(conn, name) == b"0"
    assert scores(conn, tmo) == [(id1, T + 1000), (id2, NONEXP)]
    # none left: the reply names the nearest lease end
    assert acquire(T + 10, T + 5000, id3) == bulk(":%d" % (T + 1000))
    assert run(PES_AVAILABLE, conn, keys3, [T + 10, PUB]) == bulk("0")
    assert run(PES_PERMITS, conn, keys3, [T + 10, PUB]) == integer(2)
    assert run(PES_ACQUIRED, conn, keys3, [T + 10, PUB]) == integer(2)
    sub.expect([])
    # id1's lease ends: the next call takes it back and announces the count
    assert run(PES_AVAILABLE, conn, keys3, [T + 1000, PUB]) == integer(1)
    sub.expect([(chan, "1")])
    assert scores(conn, tmo) == [(id2, NONEXP)]
    assert acquire(T + 1000, T + 4000, id3) == bulk("OK")
    # leases: prolonged, read back (-1: never ends), 0 for unknown permits
    assert run(PES_UPDATE_LEASE, conn, keys3, [id3, T + 9000, T + 1000, PUB]) == integer(1)
    assert run(PES_UPDATE_LEASE, conn, keys3, [id1, T + 9000, T + 1000, PUB]) == integer(0)
    assert run(PES_LEASE_TIME, conn, keys3, [id3, NONEXP, T + 1000, PUB]) == integer(8000)
    assert run(PES_LEASE_TIME, conn, keys3, [id2, NONEXP, T + 1000, PUB]) == integer(-1)
    assert run(PES_LEASE_TIME, conn, keys3, [id1, NONEXP, T + 1000, PUB]) == integer(0)
    # release: the count goes back up and waiters hear how many came back
    assert release(T + 2000, id3) == integer(1)
    sub.expect([(chan, "1")])
    assert release(T + 2000, id3) == integer(0)           # not held any more
    assert release(T + 2000, id4, id2) == integer(0)      # one unknown id: nothing
    assert scores(conn, tmo) == [(id2, NONEXP)]
    # setPermits counts held permits in; addPermits adds to the free count
    assert run(PES_SET, conn, [name, chan, tmo], [5, PUB]) == NIL
    sub.expect([(chan, "5")])
    assert value(conn, name) == b"4"
    assert run(PES_ADD, conn, [name, chan], [2, PUB]) == NIL
    sub.expect([(chan, "2")])
    assert run(PES_PERMITS, conn, keys3, [T + 3000, PUB]) == integer(7)
    assert release(T + 3000, id2) == integer(1)
    gone(conn, tmo)                                       # the last permit took the zset along


# ---------------------------------------------------------------- RCountDownLatch

CDL_SET, CDL_COUNT_DOWN, CDL_DELETE = "2a52d54a", "38060fab", "47aed1b8"


def test_count_down_latch(server, conn):
    chan = "redisson_countdownlatch:{cdl}"
    sub = Subscriber(server, [chan])
    assert run(CDL_SET, conn, ["cdl", chan], [1, 2, PUB]) == integer(1)
    assert run(CDL_SET, conn, ["cdl", chan], [1, 5, PUB]) == integer(0)
    sub.expect([(chan, "1")])                             # NEW_COUNT
    assert run(CDL_COUNT_DOWN, conn, ["cdl", chan], [0, PUB]) == NIL
    assert value(conn, "cdl") == b"1"
    sub.expect([])
    assert run(CDL_COUNT_DOWN, conn, ["cdl", chan], [0, PUB]) == NIL
    gone(conn, "cdl")
    sub.expect([(chan, "0")])                             # ZERO_COUNT: waiters go
    # counting down a missing latch leaves nothing behind and wakes no one
    assert run(CDL_COUNT_DOWN, conn, ["cdl", chan], [0, PUB]) == NIL
    gone(conn, "cdl")
    sub.expect([])
    assert run(CDL_DELETE, conn, ["cdl", chan], [1, PUB]) == integer(0)
    assert run(CDL_SET, conn, ["cdl", chan], [1, 3, PUB]) == integer(1)
    assert run(CDL_DELETE, conn, ["cdl", chan], [1, PUB]) == integer(1)
    gone(conn, "cdl")
    sub.expect([(chan, "1"), (chan, "1")])


# ---------------------------------------------------------------- RSpinLock

SPIN_LOCK, SPIN_UNLOCK, SPIN_FORCE = "dad0f8d6", "73ac2729", "51b433c3"


def test_spin_lock(server, conn):
    sub = Subscriber(server, [channel_of("spin")])        # a spin lock never publishes

    def unlock(owner, req):
        return run(SPIN_UNLOCK, conn, ["spin", latch_of("spin", req)], [LEASE, owner, LATCH_TTL])

    assert run(SPIN_LOCK, conn, ["spin"], [LEASE, A]) == NIL
    assert run(SPIN_LOCK, conn, ["spin"], [LEASE, A]) == NIL
    held(conn, "spin", {A: 2})
    near(parse(run(SPIN_LOCK, conn, ["spin"], [LEASE, B])), LEASE)
    assert unlock(A, "s1") == integer(0)
    assert unlock(A, "s1") == integer(0)
    near(pttl(conn, latch_of("spin", "s1")), int(LATCH_TTL))
    assert unlock(B, "s2") == NIL
    assert unlock(A, "s3") == integer(1)
    gone(conn, "spin")
    assert value(conn, latch_of("spin", "s3")) == b"1"
    # a short lease runs out; then force-unlock
    assert run(SPIN_LOCK, conn, ["spin"], [150, B]) == NIL
    time.sleep(0.3)
    assert run(SPIN_LOCK, conn, ["spin"], [LEASE, A]) == NIL
    assert run(SPIN_FORCE, conn, ["spin"], []) == integer(1)
    assert run(SPIN_FORCE, conn, ["spin"], []) == integer(0)
    sub.expect([])


# ---------------------------------------------------------------- RFencedLock, RLock unlock

FENCED_LOCK, FENCED_LOCK_NIL, RLOCK_UNLOCK, NR_LOCK = "49babb5a", "46b5551b", "68664592", "3daa7be6"


def rlock_unlock(conn, name, owner, req):
    return run(RLOCK_UNLOCK, conn, [name, channel_of(name), latch_of(name, req)],
               ["0", LEASE, owner, PUB, LATCH_TTL])


def test_fenced_lock_tokens(server, conn):
    token = "redisson_lock_token:{fenced}"
    sub = Subscriber(server, [channel_of("fenced")])

    def lock(owner, lease=LEASE, script=FENCED_LOCK):
        return run(script, conn, ["fenced", token], [lease, owner])

    # every acquire takes the next token, re-entries too
    assert lock(A) == b"*2\r\n:-1\r\n:1\r\n"
    assert lock(A) == b"*2\r\n:-1\r\n:2\r\n"
    assert lock(A, script=FENCED_LOCK_NIL) == NIL
    held(conn, "fenced", {A: 3})
    assert value(conn, token) == b"3"
    # contention: {pttl, -1}, and no token is used up
    reply = parse(lock(B))
    near(reply[0], LEASE)
    assert reply[1] == -1
    near(parse(lock(B, script=FENCED_LOCK_NIL)), LEASE)
    assert value(conn, token) == b"3"
    # released with RLock's unlock; the waiter is woken and gets token 4
    assert [rlock_unlock(conn, "fenced", A, r) for r in ("u1", "u2", "u3")] == [
        integer(0), integer(0), integer(1)]
    sub.expect([(channel_of("fenced"), "0")])
    assert lock(B, lease=150) == b"*2\r\n:-1\r\n:4\r\n"
    # the lease runs out; the counter stays
    time.sleep(0.3)
    gone(conn, "fenced")
    assert lock(C) == b"*2\r\n:-1\r\n:5\r\n"
    assert pttl(conn, token) == -1


def test_non_reentrant_lock(server, conn):
    sub = Subscriber(server, [channel_of("nr")])
    msg = "ERR lock is not reentrant"
    assert run(NR_LOCK, conn, ["nr"], [LEASE, A, msg]) == NIL
    assert run(NR_LOCK, conn, ["nr"], [LEASE, A, msg]) == b"-%s\r\n" % msg.encode()
    held(conn, "nr", {A: 1})
    near(parse(run(NR_LOCK, conn, ["nr"], [LEASE, B, msg])), LEASE)
    assert rlock_unlock(conn, "nr", A, "n1") == integer(1)
    sub.expect([(channel_of("nr"), "0")])
    assert run(NR_LOCK, conn, ["nr"], [LEASE, B, msg]) == NIL
    held(conn, "nr", {B: 1})


# ---------------------------------------------------------------- redis-semaphore (npm)

RS_ACQUIRE, RS_REFRESH, RS_MULTI_ACQUIRE, RS_MULTI_RELEASE = (
    "43ebdb49", "999a49a1", "10c1c2e0", "0bd1010c")


def test_redis_semaphore(conn):
    key, timeout = "semaphore:res", 10000

    def acquire(who, now, limit=2):
        return run(RS_ACQUIRE, conn, [key], [limit, who, timeout, now])

    def refresh(who, now, limit=2):
        return run(RS_REFRESH, conn, [key], [limit, who, timeout, now])

    assert acquire("a", T) == integer(1)
    assert acquire("b", T + 5) == integer(1)
    assert acquire("c", T + 10) == integer(0)             # limit reached
    assert scores(conn, key) == [("a", T), ("b", T + 5)]
    near(pttl(conn, key), timeout)
    assert refresh("a", T + 20) == integer(1)
    assert refresh("c", T + 20) == integer(0)
    assert scores(conn, key) == [("b", T + 5), ("a", T + 20)]
    # release is a plain ZREM; then c gets in
    assert conn.cmd("ZREM", key, "b") == integer(1)
    assert acquire("c", T + 30) == integer(1)
    # entries older than the lock timeout are dropped on the next call
    assert refresh("a", T + 20 + timeout + 1) == integer(0)
    assert scores(conn, key) == [("c", T + 30)]
    assert acquire("d", T + 30 + timeout) == integer(1)   # c expires exactly now
    assert scores(conn, key) == [("d", T + 30 + timeout)]


def test_redis_multi_semaphore(conn):
    key, timeout = "msem:res", 10000

    def acquire(who, permits, now):
        return run(RS_MULTI_ACQUIRE, conn, [key], [5, permits, who, timeout, now])

    assert acquire("x", 3, T) == integer(1)
    assert scores(conn, key) == [("x_0", T), ("x_1", T), ("x_2", T)]
    assert acquire("y", 3, T + 1) == integer(0)
    assert acquire("y", 2, T + 1) == integer(1)
    assert run(RS_MULTI_RELEASE, conn, [key], [3, "x"]) == integer(3)
    assert run(RS_MULTI_RELEASE, conn, [key], [3, "x"]) == integer(0)
    assert scores(conn, key) == [("y_0", T + 1), ("y_1", T + 1)]
    assert acquire("z", 4, T + 2 + timeout) == integer(1)  # y's entries expired
    assert [m for m, _ in scores(conn, key)] == ["z_0", "z_1", "z_2", "z_3"]
    assert run(RS_MULTI_RELEASE, conn, [key], [4, "z"]) == integer(4)
    gone(conn, key)
