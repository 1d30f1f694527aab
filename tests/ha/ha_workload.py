"""The fault suite's workload and nemesis: N clients taking Redisson fenced
locks (the real scripts, by EVALSHA) around an INCR and held-checks, while
a seeded nemesis kills, restarts, pauses and partitions nodes. It owns the
client's leader-following and the run loop; judging is ha_checker's.

A client follows the leader as Redisson's replicated mode does: it stays on
one node until it answers -READONLY, -CLUSTERDOWN, -LOADING or cannot be
reached, then tries the next. What each reply means for the history:
  reply                                  -> ok
  connect refused, -READONLY, -CLUSTERDOWN, -LOADING, -NOSCRIPT
                                         -> fail (certainly not done)
  timeout or connection lost after send, any other error
                                         -> info (unknown)
"""

import hashlib
import os
import random
import threading
import time
import uuid

import ha_checker
from resp_util import ConnectionClosed, Error, RawConn, encode_command, parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FENCED_LOCK = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"   # RedissonFencedLock tryLockInnerAsync, 3.19+
UNLOCK = "6866459238a13a701d42f4971f12d9f3a50e2442"        # RedissonLock unlockInnerAsync, 3.24+
LATCH_TTL_MS = "13500"
DEFINITE = (b"READONLY", b"CLUSTERDOWN", b"LOADING", b"NOSCRIPT", b"MASTERDOWN", b"TRYAGAIN",
            b"EXECABORT")


def vectors_dir():
    env = os.environ.get("LATCHD_SCRIPT_VECTORS")
    if env:
        return env
    shared = os.path.normpath(os.path.join(REPO, "..", "shared", "protocol", "vectors"))
    return shared if os.path.isdir(shared) else os.path.join(REPO, "build", "vectors")


def script_text(sha):
    """The script's bytes, or None when the vectors folder lacks it."""
    try:
        with open(os.path.join(vectors_dir(), sha + ".lua"), "rb") as f:
            return f.read()
    except OSError:
        return None


class Fail(Exception):
    """The operation certainly did not take effect."""


class Unknown(Exception):
    """The operation may or may not have taken effect."""


class NoScript(Fail):
    """-NOSCRIPT: load the script and send EVALSHA again."""


class Client:
    """One connection that moves between nodes on errors."""

    def __init__(self, addrs, start, timeout):
        self.addrs, self.i, self.timeout = addrs, start % len(addrs), timeout
        self.conn = None
        self.moves = 0   # how many times it left a node
        self.last = ((), [])

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _next(self):
        self.close()
        self.i = (self.i + 1) % len(self.addrs)
        self.moves += 1

    def request(self, *cmds):
        """Send the commands as one pipeline; their decoded replies. Raises
        Fail or Unknown as described in the module comment."""
        if self.conn is None:
            try:
                self.conn = RawConn(*self.addrs[self.i], timeout=self.timeout)
            except OSError as e:
                self._next()
                raise Fail("connect: %s" % e)
        try:
            self.conn.send(b"".join(encode_command(*c) for c in cmds))
        except OSError as e:
            # Bytes may have left before the error: unknown.
            self._next()
            raise Unknown("send: %s" % e)
        try:
            self.last = (cmds, [])   # what a reply of the wrong shape is reported with
            for _ in cmds:
                self.last[1].append(self.conn.read_reply())
            replies = [parse(raw) for raw in self.last[1]]
        except (OSError, ConnectionClosed) as e:
            self._next()
            raise Unknown("read: %s" % e)
        for r in replies:
            if isinstance(r, Error):
                if r.startswith(b"NOSCRIPT"):
                    raise NoScript(r)
                if r.split(b" ", 1)[0] in DEFINITE:
                    self._next()
                    raise Fail(r)
                raise Unknown(r)
        return replies

    def evalsha(self, body, keys, args):
        sha = hashlib.sha1(body).hexdigest()
        try:
            return self.request(("EVALSHA", sha, len(keys)) + tuple(keys) + tuple(args))[0]
        except NoScript:
            pass
        # Redisson loads the script and sends EVALSHA again on NOSCRIPT; the
        # failed EVALSHA did nothing, so this is one operation still.
        try:
            self.request(("SCRIPT", "LOAD", body))
        except Unknown as e:
            raise Fail("SCRIPT LOAD: %s" % e)
        return self.request(("EVALSHA", sha, len(keys)) + tuple(keys) + tuple(args))[0]


class Worker(threading.Thread):
    """One client process of the history: lock, INCR, check, unlock, loop."""

    def __init__(self, run, index):
        super().__init__(daemon=True, name="ha-client-%d" % index)
        self.run_, self.index = run, index
        self.rng = random.Random(run.seed * 1000 + index)
        self.client = Client(run.cluster.addrs, index, run.op_timeout)
        self.process = "c%d" % index

    def op(self, f, lock, fn, value=None):
        """Run fn() as one history operation; its ok value, or None with
        the outcome recorded as fail/info."""
        h = self.run_.history
        h.invoke(self.process, f, lock, value)
        try:
            v = fn()
        except Fail:
            h.complete(self.process, "fail", f, lock)
            return None, "fail"
        except Unknown:
            h.complete(self.process, "info", f, lock)
            return None, "info"
        except (TypeError, ValueError, IndexError) as e:
            # A reply of the wrong shape: the server answered out of step
            # (an extra or a missing reply). Counted against the run; the
            # outcome is unknown and the connection starts over.
            cmds, raws = self.client.last
            self.run_.protocol_errors.append("%s %s on %s: %s; sent %r, read %r" % (
                self.process, f, self.client.addrs[self.client.i], e, cmds, raws))
            self.client.close()
            h.complete(self.process, "info", f, lock)
            return None, "info"
        h.complete(self.process, "ok", f, lock, v)
        return v, "ok"

    def run(self):
        r = self.run_
        lock_body, unlock_body = r.lock_body, r.unlock_body
        lease = str(int(r.lease_s * 1000))
        n = 0
        while not r.stop.is_set() and n < r.max_ops:
            n += 1
            lock = self.rng.choice(r.locks)
            owner = "%s:%d" % (uuid.uuid4(), self.index)   # one Redisson thread per hold

            def acquire():
                reply = self.client.evalsha(lock_body, [lock, lock + ":token"], [lease, owner])
                if reply[0] == -1:
                    return reply[1]
                raise Fail("held: pttl %r" % reply[0])
            token, status = self.op("acquire", lock, acquire)
            moves = self.client.moves
            if status != "ok":
                time.sleep(self.rng.uniform(0.005, 0.03))
                continue
            # The INCR and a held-check in one transaction: a write, so only
            # the leader runs it (followers refuse: -EXECABORT after
            # -READONLY) and its reads see the committed state there.
            self.op("incr", lock, lambda: tuple(self.client.request(
                ("MULTI",), ("INCR", lock + ":counter"), ("HEXISTS", lock, owner), ("PTTL", lock),
                ("EXEC",))[-1]))
            # Plain reads (linearizable on the leader), judged only while the
            # client is still on the node that acknowledged the acquire: a
            # follower it moved to may answer from behind, as Redis replicas do.
            if self.client.moves == moves:
                self.op("check", lock, lambda: tuple(self.client.request(
                    ("HEXISTS", lock, owner), ("PTTL", lock))))
            time.sleep(self.rng.uniform(0, 0.02))
            latch = "redisson_unlock_latch:{%s}:%s" % (lock, uuid.uuid4().hex)
            for _ in range(len(r.cluster.addrs) * 3):   # -READONLY: Redisson retries elsewhere
                _, status = self.op("release", lock, lambda: self.client.evalsha(
                    unlock_body, [lock, "redisson_lock__channel:{%s}" % lock, latch],
                    ["0", lease, owner, "PUBLISH", LATCH_TTL_MS]))
                if status != "fail" or r.stop.is_set():
                    break
                time.sleep(0.05)
            try:
                self.client.request(("DEL", latch))   # as Redisson does; not judged
            except (Fail, Unknown):
                pass
        self.client.close()


class Run:
    """One seeded run: workload + nemesis for `seconds`, then heal, final
    reads and the checker's verdict."""

    def __init__(self, cluster, seed, seconds, nemesis, clients=5, locks=3, lease_s=5.0,
                 op_timeout=3.0, max_ops=200000, log=print):
        self.cluster, self.seed, self.seconds = cluster, seed, seconds
        self.nemesis_fn, self.log = nemesis, log
        self.rng = random.Random(seed)
        self.locks = ["ha-lock-%d-%d" % (seed, i) for i in range(locks)]
        self.lease_s, self.op_timeout, self.max_ops = lease_s, op_timeout, max_ops
        self.history = ha_checker.History(time.monotonic)
        self.stop = threading.Event()
        self.lock_body, self.unlock_body = script_text(FENCED_LOCK), script_text(UNLOCK)
        self.protocol_errors = []   # replies out of step with their requests
        self.workers = [Worker(self, i) for i in range(clients)]
        self.faults_done = []

    def execute(self):
        t0 = time.monotonic()
        for w in self.workers:
            w.start()
        try:
            self.nemesis_fn(self, t0 + self.seconds)
        finally:
            self.stop.set()
            for w in self.workers:
                w.join(self.op_timeout * 4 + 5)
            self.cluster.heal_all()
        leader = self.cluster.wait_leader(30)
        self.final_reads(leader)
        violations = ha_checker.check(self.history.events, self.lease_s)
        return violations, ha_checker.summary(self.history.events)

    def final_reads(self, leader):
        """Read every token and counter from the leader once healed (retried
        on other nodes until one answers)."""
        if leader is None:
            self.log("no leader after healing: no final reads")
            return
        c = Client(self.cluster.addrs, self.cluster.names.index(leader), self.op_timeout)
        for lock in self.locks:
            def read():
                # In a transaction with a write: only the leader answers it,
                # and from its committed state (a follower may be behind).
                _, tok, ctr = c.request(("MULTI",), ("INCR", "ha:final-reads"), ("GET", lock + ":token"),
                                        ("GET", lock + ":counter"), ("EXEC",))[-1]
                return {"token": int(tok or 0), "counter": int(ctr or 0)}
            for _ in range(50):
                self.history.invoke("final", "read", lock)
                try:
                    v = read()
                except (Fail, Unknown):
                    self.history.complete("final", "fail", "read", lock)
                    time.sleep(0.2)
                    continue
                self.history.complete("final", "ok", "read", lock, v)
                break
        c.close()

    def sleep_until(self, t):
        """Sleep until monotonic t; False if the run is over first."""
        while True:
            left = t - time.monotonic()
            if left <= 0:
                return True
            if self.stop.wait(min(left, 0.2)):
                return False

    def note(self, what):
        self.faults_done.append((round(time.monotonic(), 3), what))
        self.log("nemesis: %s" % what)


# ---------------------------------------------------------------- nemeses

def raft_nemesis(run, end):
    """Random faults against the latchd nodes until `end`: each fault lasts
    0.5-3 s and is followed by 1-3 s of calm so clients make progress."""
    c, rng = run.cluster, run.rng
    kinds = ["kill-leader", "kill-any", "pause-leader", "pause-any", "isolate-leader",
             "split", "blackhole-leader", "delay"]
    while time.monotonic() < end:
        if not run.sleep_until(min(end, time.monotonic() + rng.uniform(1.0, 3.0))):
            break
        kind = rng.choice(kinds)
        leader = c.leader() or rng.choice(c.names)
        victim = leader if kind.endswith("leader") else rng.choice(c.names)
        hold = rng.uniform(0.5, 3.0)
        run.note("%s %s for %.1f s" % (kind, victim, hold))
        if kind.startswith("kill"):
            c.kill(victim)
            run.sleep_until(time.monotonic() + hold)
            c.start(victim)
        elif kind.startswith("pause"):
            c.pause(victim)
            run.sleep_until(time.monotonic() + hold)
            c.resume(victim)
        elif kind in ("isolate-leader", "blackhole-leader"):
            c.faults.isolate(victim, c.names, "drop" if kind == "isolate-leader" else "blackhole")
            run.sleep_until(time.monotonic() + hold)
            c.faults.heal()
        elif kind == "split":
            names = c.names[:]
            rng.shuffle(names)
            c.faults.cut(names[:1], names[1:])
            run.sleep_until(time.monotonic() + hold)
            c.faults.heal()
        elif kind == "delay":
            for a in c.names:
                for b in c.names:
                    if a != b:
                        c.faults.delay((a, b), rng.uniform(0.0, 0.2))
            run.sleep_until(time.monotonic() + hold)
            c.faults.heal()


def redis_failover_nemesis(run, end):
    """Failovers of the unsafe redis-server group, every 1-2 s."""
    c, rng = run.cluster, run.rng
    while time.monotonic() < end:
        if not run.sleep_until(min(end, time.monotonic() + rng.uniform(1.0, 2.0))):
            break
        old, new = c.failover()
        run.note("kill -9 primary %s, REPLICAOF NO ONE on %s" % (old, new))
