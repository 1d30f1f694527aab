"""Mutual-exclusion soak with Redisson's exact protocol: WORKERS OS processes
(soak_worker.py) take one RLock with Redisson's current lock script, wait on
its pub/sub channel, and release it with the current unlock script, guarding
an unprotected GET / sleep / SET of a counter kept in the server. CRASHERS of
them exit without unlocking in their last round, so the others can only take
over when that lease runs out.

Afterwards: the counter equals the number of holds, no two hold intervals
(time.monotonic, one machine) overlap, and every takeover after a crash came
no earlier than the crashed holder's lease allowed."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from script_util import VECTORS_DIR, missing_vector_reason, vector_files

HERE = os.path.dirname(os.path.abspath(__file__))
LOCK_SHA = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"     # tryLockInnerAsync, 3.19.0 - master
UNLOCK_SHA = "6866459238a13a701d42f4971f12d9f3a50e2442"   # unlockInnerAsync with latch, 3.24.0 - master

WORKERS = 8
CRASHERS = 2
ROUNDS = 100              # per worker; a crasher crashes in round ROUNDS // 2
LEASE_MS = 10000          # far longer than any hold: only crashes let leases run out
CRASH_LEASE_MS = 600
HOLD_MS = 2
CLOCK_SLACK = 0.02        # server expiry clock vs our monotonic clock, seconds


def script_path(sha):
    if sha + ".lua" not in vector_files():
        pytest.skip(missing_vector_reason(sha))
    return os.path.join(VECTORS_DIR, sha + ".lua")


def start_worker(server, rounds, crash, lock_path, unlock_path, certs=None):
    port, env = server.port, None
    if certs:   # over TLS, as Redisson's rediss:// connects
        port = server.tls_port
        env = dict(os.environ, LATCHD_SOAK_TLS="%s,%s,%s" % (certs.crt("ca"), certs.crt("client"),
                                                             certs.key("client")))
    argv = [sys.executable, os.path.join(HERE, "soak_worker.py"), server.host, str(port),
            "soak-lock", "soak-counter", str(rounds), "1" if crash else "0", str(LEASE_MS),
            str(CRASH_LEASE_MS), str(HOLD_MS), lock_path, unlock_path]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def overlaps(holds):
    """Pairs of consecutive (by start) holds whose intervals overlap."""
    ordered = sorted(holds, key=lambda h: h["start"])
    return [(a, b) for a, b in zip(ordered, ordered[1:]) if b["start"] < a["end"]]


def early_takeovers(holds):
    """Holds that began before a crashed holder's lease could have run out:
    the lease started no earlier than that holder sent its lock request."""
    ordered = sorted(holds, key=lambda h: h["start"])
    early = []
    for a, b in zip(ordered, ordered[1:]):
        if a["crash"] and b["start"] < a["sent"] + a["lease_ms"] / 1000.0 - CLOCK_SLACK:
            early.append((a, b))
    return early


def test_redisson_lock_soak(server):
    soak(server)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")
def test_redisson_lock_soak_tls(server_kind):
    """The same soak with every worker on the server's tls-port (mutual TLS)."""
    from integration_conftest import Server, free_port   # tests/integration/conftest.py (interop conftest loads it)
    from tls_util import Certs
    d = tempfile.mkdtemp(prefix="latchd-soak-tls-")
    srv = None
    try:
        certs = Certs(d)
        port = free_port()
        srv = Server(server_kind, certs.server_args(port))
        srv.tls_port = port
        soak(srv, certs)
    finally:
        if srv:
            srv.cleanup()
        shutil.rmtree(d, ignore_errors=True)


def soak(server, certs=None):
    lock_path, unlock_path = script_path(LOCK_SHA), script_path(UNLOCK_SHA)
    plan = [(ROUNDS // 2, True)] * CRASHERS + [(ROUNDS, False)] * (WORKERS - CRASHERS)
    procs = [start_worker(server, rounds, crash, lock_path, unlock_path, certs) for rounds, crash in plan]
    reports = []
    for p, (rounds, crash) in zip(procs, plan):
        stdout, stderr = p.communicate(timeout=120)
        expected_status = 3 if crash else 0
        assert p.returncode == expected_status, (p.returncode, stderr.decode()[-3000:])
        reports.append(json.loads(stdout))

    holds = [h for rep in reports for h in rep["holds"]]
    wakeups = {k: sum(rep["wakeups"][k] for rep in reports) for k in ("message", "ttl")}
    counter = int(server.client().get("soak-counter"))
    span = max(h["end"] for h in holds) - min(h["start"] for h in holds)
    print("\nsoak on %s: %d processes (%d crash), %d holds, counter %d, %d overlaps, "
          "wake-ups by message %d / by TTL %d, %.2fs"
          % (server.kind + (" over TLS" if certs else ""), WORKERS, CRASHERS, len(holds), counter, len(overlaps(holds)),
             wakeups["message"], wakeups["ttl"], span))

    assert len(holds) == sum(rounds for rounds, _ in plan)
    assert counter == len(holds)
    assert overlaps(holds) == []
    assert early_takeovers(holds) == []
    crashes = [h for h in holds if h["crash"]]
    assert len(crashes) == CRASHERS
    # the crashers crashed half way: someone took the lock over after each
    assert all(any(h["start"] > c["end"] for h in holds) for c in crashes)
    assert wakeups["message"] > 0       # unlocks woke waiters through pub/sub
    assert wakeups["ttl"] > 0           # a crash left waiters to time out on the TTL
    assert server.client().exists("soak-lock") == 0
