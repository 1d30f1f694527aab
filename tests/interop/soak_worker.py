"""One process of the Redisson mutual-exclusion soak (test_redisson_soak.py).

It takes a Redisson RLock the way Redisson 3.46+ does: EVALSHA of the lock
script (SCRIPT LOAD on NOSCRIPT), and while the lock is held by someone else
it waits on redisson_lock__channel:{name} for an unlock message or for the
returned PTTL, whichever comes first. Holding the lock it does an unprotected
GET, sleep, SET on a shared counter, then runs the unlock script and DELs the
unlock latch. A "crashing" worker exits without unlocking in its last round.
It prints one JSON object: its hold intervals (time.monotonic) and wake-ups.

usage: soak_worker.py HOST PORT LOCK COUNTER ROUNDS CRASH LEASE_MS CRASH_LEASE_MS
                      HOLD_MS LOCK_SCRIPT UNLOCK_SCRIPT
With LATCHD_SOAK_TLS=CA,CERT,KEY in the environment it connects over TLS
(PORT is then the server's tls-port), as Redisson's rediss:// does.
"""

import json
import os
import sys
import threading
import time
import uuid

import redis

CRASH_STATUS = 3
LATCH_TTL_MS = "13500"        # Redisson's default unlock latch TTL (3.24-3.47)


class RedissonLock:
    def __init__(self, r, name, lock_body, unlock_body):
        self.r = r
        self.name = name
        self.channel = "redisson_lock__channel:{%s}" % name
        # Redisson's lock owner: the instance UUID and the thread id
        self.owner = "%s:%d" % (uuid.uuid4(), threading.get_ident())
        self.lock_script = r.register_script(lock_body)
        self.unlock_script = r.register_script(unlock_body)
        self.pubsub = r.pubsub()
        self.wakeups = {"message": 0, "ttl": 0}

    def try_acquire(self, lease_ms):
        """None when acquired (or re-entered), else the lock's PTTL."""
        return self.lock_script(keys=[self.name], args=[lease_ms, self.owner])

    def _await_reply(self, kind, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.pubsub.get_message(timeout=deadline - time.monotonic())
            if msg and msg["type"] == kind:
                return
        raise RuntimeError("no %s confirmation for %s" % (kind, self.channel))

    def _wait_for_unlock(self, ttl_ms):
        """Wait for an unlock message, at most ttl_ms (forever if the lock has
        no TTL, as Redisson does)."""
        deadline = None if ttl_ms < 0 else time.monotonic() + ttl_ms / 1000.0
        while True:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                self.wakeups["ttl"] += 1
                return
            msg = self.pubsub.get_message(timeout=left)
            if msg and msg["type"] == "message":
                self.wakeups["message"] += 1
                return

    def lock(self, lease_ms):
        """Returns the monotonic time the first lock request was sent."""
        sent = time.monotonic()
        ttl = self.try_acquire(lease_ms)
        if ttl is None:
            return sent
        self.pubsub.subscribe(self.channel)
        self._await_reply("subscribe")
        while True:
            ttl = self.try_acquire(lease_ms)
            if ttl is None:
                break
            self._wait_for_unlock(ttl)
        self.pubsub.unsubscribe(self.channel)
        self._await_reply("unsubscribe")
        return sent

    def unlock(self, lease_ms):
        latch = "redisson_unlock_latch:{%s}:%s" % (self.name, uuid.uuid4().hex)
        reply = self.unlock_script(keys=[self.name, self.channel, latch],
                                   args=["0", lease_ms, self.owner, "PUBLISH", LATCH_TTL_MS])
        self.r.delete(latch)
        if reply != 1:
            raise RuntimeError("unlock of %s by %s returned %r" % (self.name, self.owner, reply))


def main(argv):
    (host, port, name, counter, rounds, crash, lease, crash_lease, hold_ms,
     lock_path, unlock_path) = argv
    with open(lock_path, "rb") as f:
        lock_body = f.read()
    with open(unlock_path, "rb") as f:
        unlock_body = f.read()
    tls = {}
    if os.environ.get("LATCHD_SOAK_TLS"):
        ca, cert, key = os.environ["LATCHD_SOAK_TLS"].split(",")
        tls = {"ssl": True, "ssl_ca_certs": ca, "ssl_certfile": cert, "ssl_keyfile": key,
               "ssl_cert_reqs": "required"}
    r = redis.Redis(host=host, port=int(port), socket_timeout=30, **tls)
    lock = RedissonLock(r, name, lock_body, unlock_body)
    rounds, crash = int(rounds), crash == "1"
    holds = []

    def report():
        print(json.dumps({"pid": os.getpid(), "holds": holds, "wakeups": lock.wakeups}), flush=True)

    for i in range(rounds):
        crashing = crash and i == rounds - 1
        lease_ms = crash_lease if crashing else lease
        sent = lock.lock(lease_ms)
        start = time.monotonic()
        value = int(r.get(counter) or 0)          # the unprotected read-sleep-write
        time.sleep(int(hold_ms) / 1000.0)
        r.set(counter, value + 1)
        end = time.monotonic()
        holds.append({"sent": sent, "start": start, "end": end, "read": value,
                      "crash": crashing, "lease_ms": int(lease_ms)})
        if crashing:
            report()
            os._exit(CRASH_STATUS)                # no unlock, no clean close
        lock.unlock(lease_ms)
    report()


if __name__ == "__main__":
    main(sys.argv[1:])
