"""Replication on Raft (raft-id; server/repl/): three latchd nodes on
loopback, each with its own raft-dir. One leader serves; followers refuse
writes with READONLY and apply what the leader commits; a write's reply
leaves the leader only once a majority has it, so killing the leader loses
no acknowledged lock or INCR; a restarted node catches up from the log (or
a snapshot); a minority cannot commit; expiry is the leader's DEL."""

import os
import random
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import LATCHD_BIN, free_port
from script_util import Script
# the kill -9 test's clients: Redisson lock/unlock and INCR, each remembering what was acknowledged
from test_aof_crash_latchd import LEASE_MS, LOCK, UNLOCK, Worker
WAIT_S = 30            # bound on every wait for an election or a catch-up (ASan builds are slow)


class Cluster:
    def __init__(self, factory, extra=()):
        self.factory = factory
        self.extra = list(extra)
        self.ports = {i: free_port() for i in (1, 2, 3)}
        raft_ports = {i: free_port() for i in (1, 2, 3)}
        self.peers = ",".join("%d@127.0.0.1:%d@%d" % (i, raft_ports[i], self.ports[i]) for i in (1, 2, 3))
        self.nodes = {}
        for i in (1, 2, 3):
            self.nodes[i] = factory(*self.args(i), port=self.ports[i])

    def args(self, i):
        return ["--raft-id", str(i), "--raft-peers", self.peers, "--raft-election-timeout", "800",
                "--raft-heartbeat-timeout", "80"] + self.extra

    def client(self, i, **kw):
        return redis.Redis(port=self.ports[i], socket_timeout=kw.pop("timeout", 10), **kw)

    def alive(self):
        return [i for i, n in self.nodes.items() if n.proc.poll() is None]

    def info(self, i):
        return self.client(i).info("replication")

    def leader(self, among=None):
        """The one serving leader among the live nodes, once there is one."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            serving = []
            for i in among or self.alive():
                try:
                    inf = self.info(i)
                except redis.RedisError:
                    continue
                if inf.get("role") == "master" and inf.get("raft_serving") == 1:
                    serving.append(i)
            if len(serving) == 1:
                return serving[0]
            time.sleep(0.05)
        pytest.fail("no single serving leader among %r" % (among or self.alive()))

    def kill(self, i):
        self.nodes[i].proc.kill()
        self.nodes[i].proc.wait()
        self.nodes[i].close_connections()

    def restart(self, i):
        self.nodes[i]._start()   # same port, same working directory: same raft-dir


def wait_for(fn, what):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            if fn():
                return
        except redis.RedisError:
            pass
        time.sleep(0.05)
    pytest.fail("timed out waiting for " + what)


def load_scripts(cl):
    lock, unlock = Script.vector(LOCK), Script.vector(UNLOCK)
    for i in cl.alive():   # SCRIPT LOAD is not replicated (Redis 7 neither): every node
        r = cl.client(i)
        assert r.script_load(lock.body) == lock.sha
        assert r.script_load(unlock.body) == unlock.sha
    return lock.sha, unlock.sha


def test_raft_latchd_elects_one_leader_and_replicates_committed_writes(latchd_factory):
    cl = Cluster(latchd_factory)
    lead = cl.leader()
    followers = [i for i in (1, 2, 3) if i != lead]
    for i in followers:
        inf = cl.info(i)
        assert inf["role"] == "slave"
        wait_for(lambda: cl.info(i)["master_link_status"] == "up", "a follower to know its leader")
        inf = cl.info(i)
        assert inf["master_port"] == cl.ports[lead] and inf["connected_slaves"] == 0
        role = cl.client(i).execute_command("ROLE")
        assert role[0] == b"slave" and role[2] == cl.ports[lead]
    assert cl.info(lead)["connected_slaves"] == 0   # Redisson sends no WAIT
    assert cl.client(lead).execute_command("ROLE")[0] == b"master"
    # followers refuse writes (and scripts) as a Redis replica does, and serve reads
    for i in followers:
        with pytest.raises(redis.ReadOnlyError, match="You can't write against a read only replica."):
            cl.client(i).set("k", "v")
        with pytest.raises(redis.ReadOnlyError):
            cl.client(i).eval("return 1", 0)
        assert cl.client(i).get("k") is None
    # the leader's reply comes after the commit: every node then has it
    r = cl.client(lead)
    assert r.set("k", "v") is True
    assert r.incr("n") == 1
    r.hset("h", mapping={"a": "1", "b": "2"})
    with r.pipeline(transaction=True) as p:
        p.incr("n").rpush("l", "x", "y").execute()
    for i in followers:
        f = cl.client(i)
        wait_for(lambda: f.get("n") == b"2", "the follower to apply the writes")
        assert f.get("k") == b"v" and f.hgetall("h") == {b"a": b"1", b"b": b"2"}
        assert f.lrange("l", 0, -1) == [b"x", b"y"]
    # fixed at start, shown when named
    assert r.config_get("raft-id") == {"raft-id": str(lead)}
    with pytest.raises(redis.ResponseError, match="immutable"):
        r.config_set("raft-election-timeout", "100")


def test_raft_latchd_leader_kill_keeps_every_acknowledged_lock(latchd_factory):
    cl = Cluster(latchd_factory)
    for rnd in range(2):
        lead = cl.leader()
        lock, unlock = load_scripts(cl)
        workers = [Worker(cl.ports[lead], w + 10 * rnd, random.Random(w), lock, unlock) for w in range(4)]
        for w in workers:
            w.start()
        wait_for(lambda: sum(w.sent for w in workers) > 200, "the workers to run")
        cl.kill(lead)   # its clients see the connection drop: whatever was in flight is unknown
        killed = time.monotonic()
        for w in workers:
            w.join(WAIT_S)
            assert not w.is_alive() and w.error is None, w.error
        new = cl.leader()
        assert new != lead
        r = cl.client(new)
        assert r.evalsha(lock, 1, "failover:%d" % rnd, LEASE_MS, "owner") is None
        print("failover: first lock on the new leader %.3f s after the kill" % (time.monotonic() - killed))
        for w in workers:
            value = int(r.get("counter:%d" % w.wid) or 0)
            assert w.acked <= value <= w.sent, (w.wid, w.acked, value, w.sent)
            for key, st in w.locks.items():
                holder = r.hgetall(key)
                if st[0] == "held":   # every acknowledged acquire, with its owner and a lease
                    assert holder == {st[1].encode(): b"1"}, (key, st, holder)
                    assert 0 < r.pttl(key) <= LEASE_MS
                elif st[0] == "free":
                    assert holder == {}, (key, st, holder)
                else:   # in flight at the kill: either outcome, nothing else
                    assert holder in ({}, {st[1].encode(): b"1"}), (key, st, holder)
        cl.restart(lead)
        wait_for(lambda: cl.info(lead)["master_link_status"] == "up", "the old leader to rejoin")


def test_raft_latchd_restarted_node_catches_up_by_log_and_snapshot(latchd_factory):
    cl = Cluster(latchd_factory, ["--raft-snapshot-threshold", "64"])
    lead = cl.leader()
    off = [i for i in (1, 2, 3) if i != lead][0]
    r = cl.client(lead)
    for k in range(50):
        r.set("before:%d" % k, k)
    cl.kill(off)
    for k in range(400):   # several snapshots' worth while it is away
        r.incr("counter")
        r.set("k:%d" % (k % 50), k)
    cl.restart(off)
    f = cl.client(off)
    wait_for(lambda: f.get("counter") == b"400", "the restarted node to catch up")
    assert f.get("k:49") == b"399" and f.get("before:7") == b"7"
    assert "restored from a snapshot" in cl.nodes[off].log()
    # and it goes on applying what comes next
    r.set("after", "1")
    wait_for(lambda: f.get("after") == b"1", "the next write")
    # a whole-cluster restart rebuilds every node from snapshot + log
    for i in (1, 2, 3):
        cl.kill(i)
    for i in (1, 2, 3):
        cl.restart(i)
    lead = cl.leader()
    assert cl.client(lead).get("counter") == b"400"


def test_raft_latchd_minority_cannot_commit(latchd_factory):
    cl = Cluster(latchd_factory)
    lead = cl.leader()
    r = cl.client(lead)
    for _ in range(50):
        r.incr("n")
    # the leader alone: its reply never says OK (an error once it steps down, or no answer)
    others = [i for i in (1, 2, 3) if i != lead]
    for i in others:
        cl.kill(i)
    try:
        rep = cl.client(lead, timeout=8).incr("n")
        pytest.fail("a lone leader acknowledged a write: %r" % rep)
    except redis.TimeoutError:
        pass
    except redis.ResponseError as e:
        assert str(e).startswith(("UNKNOWN", "CLUSTERDOWN")), e
    # a lone node has no leader: CLUSTERDOWN for keyspace commands, others answer
    lone = cl.client(lead)
    wait_for(lambda: cl.info(lead)["master_link_status"] == "down", "the lone node to step down")
    with pytest.raises(redis.ResponseError, match="^CLUSTERDOWN The cluster is down"):
        lone.get("n")
    assert lone.ping()
    # the majority back: the unacknowledged INCR may or may not be there, each
    # entry applied once on every node (the old leader rebuilt its dataset from
    # the log, and what it replayed is not proposed again)
    for i in others:
        cl.restart(i)
    lead = cl.leader()
    value = cl.client(lead).get("n")
    assert value in (b"50", b"51"), value
    r = cl.client(lead)
    r.incr("n")
    want = int(value) + 1
    for i in (1, 2, 3):
        wait_for(lambda: cl.client(i).get("n") == str(want).encode(), "node %d to agree" % i)


def test_raft_latchd_expiry_is_the_leaders_del(latchd_factory):
    cl = Cluster(latchd_factory)
    lead = cl.leader()
    r = cl.client(lead)
    r.set("keep", "1")
    r.set("gone", "1")
    followers = [cl.client(i) for i in (1, 2, 3) if i != lead]
    for f in followers:
        wait_for(lambda: f.get("gone") == b"1", "the follower to have the key")
    assert r.pexpire("gone", 300)
    # past the deadline a follower hides the key; the leader's DEL removes it
    for f in followers:
        wait_for(lambda: f.dbsize() == 1, "the leader's DEL to reach the follower")
        assert f.get("gone") is None and f.get("keep") == b"1"


def test_raft_latchd_client_pause_on_a_follower_does_not_stop_the_log(latchd_factory):
    cl = Cluster(latchd_factory)
    lead = cl.leader()
    i = [n for n in (1, 2, 3) if n != lead][0]
    f = cl.client(i)
    wait_for(lambda: cl.info(i)["master_link_status"] == "up", "the follower to know its leader")
    assert f.execute_command("CLIENT", "PAUSE", "100000", "WRITE")   # reads go on; longer than WAIT_S
    cl.client(lead).set("during", "pause")
    wait_for(lambda: f.get("during") == b"pause", "the paused follower to apply the entry")
    assert f.execute_command("CLIENT", "UNPAUSE")


def test_raft_latchd_majority_lost_under_load_then_back_agrees_everywhere(latchd_factory):
    """The leader keeps entries in flight while both followers die: its
    clients get errors, it rebuilds, and (with the longest log) usually
    leads again; every node must then hold exactly the committed INCRs."""
    cl = Cluster(latchd_factory, ["--raft-snapshot-threshold", "100"])
    sent, acked = {}, {}

    def incr(port, w):
        r = redis.Redis(port=port, socket_timeout=10)
        try:
            while True:
                sent[w] += 1
                acked[w] = r.incr("c:%d" % w)
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            return

    for rnd in range(3):
        lead = cl.leader()
        threads = []
        for w in range(6):
            key = 10 * rnd + w
            sent[key], acked[key] = 0, 0
            threads.append(threading.Thread(target=incr, args=(cl.ports[lead], key), daemon=True))
        for t in threads:
            t.start()
        wait_for(lambda: sum(acked.values()) > 50 * (rnd + 1), "the clients to run")
        others = [i for i in (1, 2, 3) if i != lead]
        for i in others:
            cl.kill(i)
        for t in threads:
            t.join(WAIT_S)
            assert not t.is_alive()
        for i in others:
            cl.restart(i)
        lead = cl.leader()
        r = cl.client(lead)
        for key in sent:
            value = int(r.get("c:%d" % key) or 0)
            assert acked[key] <= value <= sent[key], (key, acked[key], value, sent[key])
        assert r.set("round", rnd)   # every node applies up to here
        for i in (1, 2, 3):
            f = cl.client(i)
            wait_for(lambda: f.get("round") == str(rnd).encode(), "node %d to catch up" % i)
            assert [f.get("c:%d" % k) for k in sorted(sent)] == [r.get("c:%d" % k) for k in sorted(sent)], i


def test_raft_latchd_leader_paused_with_writes_in_flight_steps_down_and_rebuilds(latchd_factory):
    """SIGSTOP the leader while its clients' INCRs wait for their commits,
    let the others elect, SIGCONT it: the new leader's first message deposes
    it inside libraft, which fails the waiting proposals from there. The
    node rebuilds and follows, every node holds every acknowledged INCR,
    and each exits cleanly (the fixture fails on an ASan report: closing
    the engine from inside that callback left libraft writing to a closed
    log, a use after free)."""
    cl = Cluster(latchd_factory)
    acked = {}
    for rnd in range(5):
        old = cl.leader()
        stop = threading.Event()

        def incr(key, port=cl.ports[old]):
            r = redis.Redis(port=port, socket_timeout=WAIT_S)
            try:
                while not stop.is_set():
                    acked[key] = r.incr(key)
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                return   # -UNKNOWN once deposed

        threads = [threading.Thread(target=incr, args=("c:%d:%d" % (rnd, w),), daemon=True) for w in range(8)]
        for t in threads:
            t.start()
        wait_for(lambda: len([k for k in acked if k.startswith("c:%d:" % rnd)]) == 8, "every client's first INCR")
        os.kill(cl.nodes[old].proc.pid, signal.SIGSTOP)   # each client waits on a proposal
        try:
            new = cl.leader(among=[i for i in (1, 2, 3) if i != old])
        finally:
            os.kill(cl.nodes[old].proc.pid, signal.SIGCONT)
        stop.set()
        for t in threads:
            t.join(WAIT_S)
            assert not t.is_alive()
        assert cl.client(new).set("round", rnd)
        for i in (1, 2, 3):
            wait_for(lambda: cl.client(i).get("round") == str(rnd).encode(), "node %d to catch up" % i)
            f = cl.client(i)
            for key, value in acked.items():
                assert int(f.get(key) or 0) >= value, (i, key, value)   # acknowledged: never lost
    assert cl.alive() == [1, 2, 3]


DISK_SHIM = os.path.join(os.path.dirname(LATCHD_BIN), "disk_fault.so")


@pytest.mark.skipif(not os.path.exists(DISK_SHIM), reason="build/disk_fault.so is built with latchd")
def test_raft_latchd_deposed_leader_with_stalled_disk_rebuilds_once_its_writes_end(latchd_factory, monkeypatch):
    """The leader's disk stalls (the shim holds its log writes) and its
    followers are stopped, so it logs entries no one else has; then it is
    stopped, the others elect, it resumes: the new leader's entries replace
    its own in its log while its writes of them still wait. The rebuild's
    close waits for those writes (libraft 0.15, closed then, cancels them
    and its cancelled-write path truncates the log past its end: a NULL
    read). The node stays up, rebuilds once the disk answers, catches up."""
    monkeypatch.setenv("LD_PRELOAD", DISK_SHIM)
    monkeypatch.setenv("LATCHD_RAFT_WRITE_GATE", "write-gate")
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    cl = Cluster(latchd_factory)
    monkeypatch.delenv("LD_PRELOAD")
    incr = b"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
    for rnd in range(3):
        old = cl.leader()
        others = [i for i in (1, 2, 3) if i != old]
        gate = os.path.join(cl.nodes[old].dir, "raft-%d" % old, "write-gate")
        open(gate, "w").close()
        for i in others:
            os.kill(cl.nodes[i].proc.pid, signal.SIGSTOP)
        raws = []   # a connection each: one waiting for its reply sends nothing more
        try:
            for _ in range(15):   # an entry each, within the election timeout: it still leads
                raws.append(socket.create_connection(("127.0.0.1", cl.ports[old])))
                raws[-1].sendall(incr)
                time.sleep(0.02)
            os.kill(cl.nodes[old].proc.pid, signal.SIGSTOP)
            for i in others:
                os.kill(cl.nodes[i].proc.pid, signal.SIGCONT)
            new = cl.leader(among=others)
            assert cl.client(new).set("round", rnd)
            os.kill(cl.nodes[old].proc.pid, signal.SIGCONT)
            wait_for(lambda: cl.info(old).get("raft_state") == "rebuilding", "node %d to be deposed" % old)
            time.sleep(0.5)   # deposed, its log replaced behind the writes that wait
            assert cl.nodes[old].proc.poll() is None
            assert cl.info(old)["raft_state"] == "rebuilding"
        finally:
            os.remove(gate)
            for raw in raws:
                raw.close()
        for i in (1, 2, 3):
            wait_for(lambda: cl.client(i).get("round") == str(rnd).encode(), "node %d to catch up" % i)
    assert cl.alive() == [1, 2, 3]
