"""The bench's replication section (bench.py --sections raft): the loops
redis-benchmark cannot run. It owns the client loops (sequential lock+unlock
latency, pipelined lock+unlock with or without WAIT 1 0 after each script as
Redisson's syncedEval sends it) and the leader-kill failover timing.
"""

import asyncio
import os
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ha"))

import ha_cluster  # noqa: E402  (puts tests/integration on the path)
from resp_util import ConnectionClosed, Error, Incomplete, RawConn, encode_command, parse, reply_end  # noqa: E402

LEASE = "30000"


def lock_cmds(lock_sha, unlock_sha, key, owner, wait):
    """Redisson's acquire then release of one lock, each followed by
    WAIT 1 0 when wait (its syncedEval against a master with replicas)."""
    cmds = [("EVALSHA", lock_sha, 1, key, LEASE, owner)]
    if wait:
        cmds.append(("WAIT", 1, 0))
    cmds.append(("EVALSHA", unlock_sha, 2, key, "redisson_lock__channel:{%s}" % key, 0, LEASE, owner))
    if wait:
        cmds.append(("WAIT", 1, 0))
    return cmds


def check_replies(replies, wait):
    """A lock that was not taken or not released, or a WAIT no replica
    acknowledged, is a failed run, not a number."""
    lock, unlock = replies[0], replies[2 if wait else 1]
    bad = [r for r in replies if isinstance(r, Error)]
    if bad or lock is not None or unlock != 1 or (wait and (replies[1] < 1 or replies[3] < 1)):
        raise RuntimeError("lock+unlock replies %r" % (replies,))


def sequential_latency(port, lock_sha, unlock_sha, n, wait=False):
    """Microseconds per acquire+release, one client, one command at a time
    (sorted)."""
    out = []
    with RawConn("127.0.0.1", port, timeout=10) as c:
        owner = "%s:1" % uuid.uuid4()
        for i in range(n):
            cmds = lock_cmds(lock_sha, unlock_sha, "seq:%d" % (i % 1000), owner, wait)
            t0 = time.perf_counter()
            replies = [c.call(*cmd) for cmd in cmds]
            out.append((time.perf_counter() - t0) * 1e6)
            check_replies(replies, wait)
    return sorted(out)


def pipelined_rate(port, lock_sha, unlock_sha, clients, depth, seconds, wait=False):
    """Acquire+release pairs per second: `clients` connections, each with
    `depth` pairs in flight (sent as one batch), for `seconds`."""
    async def one(idx, stop, counts):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        owner = "%s:%d" % (uuid.uuid4(), idx)
        i = 0
        while time.monotonic() < stop:
            batch = []
            for _ in range(depth):
                batch += lock_cmds(lock_sha, unlock_sha, "p:%d:%d" % (idx, i % 1000), owner, wait)
                i += 1
            w.write(b"".join(encode_command(*c) for c in batch))
            buf, pos, replies = b"", 0, []
            while len(replies) < len(batch):
                buf += await r.read(1 << 16)
                pos = _parse_some(buf, pos, replies)
            per = len(batch) // depth
            for k in range(depth):
                check_replies(replies[k * per:(k + 1) * per], wait)
            counts[idx] += depth
        w.close()

    async def main():
        counts = [0] * clients
        t0 = time.monotonic()
        await asyncio.gather(*(one(i, t0 + seconds, counts) for i in range(clients)))
        return sum(counts) / (time.monotonic() - t0)
    return asyncio.run(main())


def _parse_some(buf, pos, out):
    """Append the complete replies in buf from pos to out; the next pos."""
    while True:
        try:
            end = reply_end(buf, pos)
        except Incomplete:
            return pos
        out.append(parse(buf[pos:end]))
        pos = end


def failover_times(cluster, lock_sha, lock_body, kills, pin):
    """Milliseconds from kill -9 of the leader to the first lock acquired on
    another node, for each kill; the killed node is restarted (pinned with
    `pin`) and the cluster settled before the next."""
    times = []
    for k in range(kills):
        leader = cluster.wait_leader(30)
        if leader is None:
            raise RuntimeError("no leader before kill %d" % k)
        others = [n for n in cluster.names if n != leader]
        t0 = time.monotonic()
        cluster.kill(leader)
        got = None
        i = 0
        while got is None:
            if time.monotonic() - t0 > 30:
                raise RuntimeError("no lock acquired within 30 s of killing %s" % leader)
            port = cluster.nodes[others[i % len(others)]].port
            i += 1
            try:
                with RawConn("127.0.0.1", port, timeout=2) as c:
                    r = c.call("EVALSHA", lock_sha, 1, "failover:%d" % k, LEASE, "o:%d" % k)
                    if r is None:
                        got = time.monotonic()
                    elif isinstance(r, Error) and r.startswith(b"NOSCRIPT"):
                        c.call("SCRIPT", "LOAD", lock_body)
            except (OSError, ConnectionClosed):
                pass
            if got is None:
                time.sleep(0.002)
        times.append((got - t0) * 1000)
        with pin():
            cluster.start(leader)
        # settled: every node answers and a leader commits a write
        cluster.wait_leader(30)
    return times

