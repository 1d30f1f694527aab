"""The fault suite's targets: three latchd nodes on Raft with a fault proxy
in front of every node's Raft port, and the deliberately unsafe redis-server
primary + 2 asynchronous replicas with a harness-driven failover.

Both expose the same face to the workload (ha_workload.py): `addrs` (client
ports, in the order clients try them), `names`, `faults` (ha_proxy.Faults),
kill(name) / start(name) / pause(name) / resume(name), leader(), heal_all()
and stop(). Each node keeps its directory across restarts (a restarted
latchd rebuilds from its Raft log and snapshot).
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(os.path.dirname(HERE), "integration")
sys.path.insert(0, INTEGRATION)

from resp_util import ConnectionClosed, RawConn  # noqa: E402
import ha_proxy  # noqa: E402

# The integration suite's conftest (binaries, free ports), loaded under its
# own name: pytest keeps "conftest" for the one in each test folder.
_spec = importlib.util.spec_from_file_location("integration_conftest",
                                               os.path.join(INTEGRATION, "conftest.py"))
it_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(it_conftest)
LATCHD_BIN, REDIS_BIN, free_port = it_conftest.LATCHD_BIN, it_conftest.REDIS_BIN, it_conftest.free_port

START_TIMEOUT = 15.0


def call(port, *args, timeout=1.0):
    """One command on a fresh connection; the decoded reply (errors come
    back as resp_util.Error values)."""
    with RawConn("127.0.0.1", port, timeout=timeout) as c:
        return c.call(*args)


def info_field(port, field, section="replication"):
    try:
        text = call(port, "INFO", section).decode()
    except (OSError, ConnectionClosed, AttributeError):
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return None


class Node:
    """One server process with a fixed client port and directory."""

    def __init__(self, name, argv_fn, port, dir_):
        self.name, self.argv_fn, self.port, self.dir = name, argv_fn, port, dir_
        self.proc = None
        self.paused = False
        self.log_path = os.path.join(dir_, "server.log")
        self.starts = 0
        self.killed = False
        self.crashes = []   # exit statuses of exits the harness did not cause

    def start(self, wait=True):
        if self.alive():
            return
        self.note_exit()
        self.killed = False
        self.starts += 1
        self.log = open(self.log_path, "ab")
        self.log.write(b"\n==== start %d\n" % self.starts)
        self.log.flush()
        self.proc = subprocess.Popen(self.argv_fn(), cwd=self.dir, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.paused = False
        if wait:
            self.wait_listening()

    def wait_listening(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.note_exit()
                raise RuntimeError("%s exited with %s at start:\n%s"
                                   % (self.name, self.proc.returncode, self.log_tail()))
            try:
                call(self.port, "PING", timeout=0.5)
                return
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        raise RuntimeError("%s did not listen on %d:\n%s" % (self.name, self.port, self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def note_exit(self):
        """Record an exit that was not our kill -9 or stop (a crash, or a
        node giving up), once."""
        if self.proc is not None and self.proc.poll() is not None and not self.killed:
            self.crashes.append(self.proc.returncode)
            self.killed = True

    def kill(self):
        self.note_exit()
        self.killed = True
        if self.alive():
            if self.paused:
                self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait()
        self.paused = False

    def pause(self):
        if self.alive() and not self.paused:
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self):
        if self.alive() and self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False

    def stop(self):
        """SIGTERM (a clean exit), SIGKILL after 10 s. What was wrong with
        the exit: [] or reasons."""
        self.note_exit()
        self.killed = True
        self.resume()
        problems = []
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                problems.append("no exit within 10 s of SIGTERM")
            if self.proc.returncode not in (0, -signal.SIGKILL) or problems:
                problems.append("exit status %s after SIGTERM" % self.proc.returncode)
        return problems + ["sanitizer report (%s)" % m for m in self.sanitizer_report()]

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""

    def sanitizer_report(self):
        text = self.log_tail(1 << 30)
        return [m for m in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
                if m in text]


class Cluster:
    """What both targets share."""

    def __init__(self, prefix):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.faults = ha_proxy.Faults()
        self.proxies = []
        self.nodes = {}

    @property
    def names(self):
        return list(self.nodes)

    @property
    def addrs(self):
        return [("127.0.0.1", n.port) for n in self.nodes.values()]

    def kill(self, name):
        self.nodes[name].kill()

    def start(self, name):
        self.nodes[name].start()

    def pause(self, name):
        self.nodes[name].pause()

    def resume(self, name):
        self.nodes[name].resume()

    def heal_all(self):
        """Lift every link rule, resume paused nodes, restart dead ones."""
        self.faults.heal()
        for n in self.nodes.values():
            n.resume()
        for name, n in self.nodes.items():
            if not n.alive():
                self.start(name)

    def logs(self):
        return "\n".join("---- %s\n%s" % (name, n.log_tail()) for name, n in self.nodes.items())

    def stop(self, keep_dir=False):
        """Stop everything; {node: problems} for nodes whose exit was not
        clean (see Node.stop)."""
        for p in self.proxies:
            p.close()
        problems = {}
        for name, n in self.nodes.items():
            got = n.stop()
            if got:
                problems[name] = got
        if problems:
            problems["logs"] = self.logs()
        if not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return problems


class LatchdRaftCluster(Cluster):
    """Three latchd nodes; every node's peers reach each other's Raft port
    through one proxy per destination, which learns the sender's id from
    the raft_uv handshake."""

    def __init__(self, n=3, election_ms=1000, heartbeat_ms=100, binary=None, proxied=True,
                 extra=()):
        super().__init__("latchd-ha-")
        self.binary, self.extra = binary or LATCHD_BIN, list(extra)
        ids = list(range(1, n + 1))
        self.raft_ports = {i: free_port() for i in ids}
        fronts = dict(self.raft_ports)   # proxied=False (the bench): straight to the node
        for i in ids if proxied else ():
            p = ha_proxy.Proxy(self.faults, "n%d" % i, self.raft_ports[i],
                               identify=lambda first: _node_name(ha_proxy.raft_source(first)))
            self.proxies.append(p)
            fronts[i] = p.port
        self.peers = None   # set once the client ports are known (below)
        self.election_ms, self.heartbeat_ms = election_ms, heartbeat_ms
        for i in ids:
            d = os.path.join(self.dir, "n%d" % i)
            os.makedirs(d)
            self.nodes["n%d" % i] = Node("n%d" % i, self._argv_fn(i, d), free_port(), d)
        # id@host:port@client_port: Raft traffic to a node goes to its proxy;
        # the client port is what INFO replication and ROLE name.
        self.peers = ",".join("%d@127.0.0.1:%d@%d" % (i, fronts[i], self.nodes["n%d" % i].port)
                              for i in ids)

    def _argv_fn(self, i, d):
        def argv():
            return [self.binary, "--port", str(self.nodes["n%d" % i].port), "--bind", "127.0.0.1",
                    "--raft-id", str(i), "--raft-address", "127.0.0.1:%d" % self.raft_ports[i],
                    "--raft-peers", self.peers, "--raft-dir", os.path.join(d, "raft"),
                    "--raft-election-timeout", str(self.election_ms),
                    "--raft-heartbeat-timeout", str(self.heartbeat_ms)] + self.extra
        return argv

    def boot(self):
        for n in self.nodes.values():
            n.start(wait=False)
        for n in self.nodes.values():
            n.wait_listening()
        if self.wait_leader(30) is None:
            raise RuntimeError("no leader elected in 30 s\n" + self.logs())

    def leader(self):
        """The node that says role:master, if exactly one does."""
        masters = [name for name, n in self.nodes.items()
                   if n.alive() and not n.paused and info_field(n.port, "role") == "master"]
        return masters[0] if len(masters) == 1 else None

    def wait_leader(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            name = self.leader()
            if name is not None:
                try:
                    if call(self.nodes[name].port, "SET", "ha:probe", "1") == b"OK":
                        return name
                except (OSError, ConnectionClosed):
                    pass
            time.sleep(0.1)
        return None


def _node_name(sid):
    return None if sid is None else "n%d" % sid


def raft_support(binary=None):
    """None when latchd takes the raft-* options, else why not (for the
    skip message)."""
    binary = binary or LATCHD_BIN
    if not os.access(binary, os.X_OK):
        return "latchd binary not found at %s (build it: scripts/build)" % binary
    d = tempfile.mkdtemp(prefix="latchd-ha-probe-")
    try:
        port, raft = free_port(), free_port()
        p = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--raft-id", "1",
                              "--raft-address", "127.0.0.1:%d" % raft,
                              "--raft-peers", "1@127.0.0.1:%d" % raft, "--raft-dir", d + "/raft"],
                             cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and p.poll() is None:
            try:
                call(port, "PING", timeout=0.3)
                break
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        if p.poll() is None:
            p.terminate()
            try:
                out = p.communicate(timeout=5)[0]
            except subprocess.TimeoutExpired:
                p.kill()
                out = p.communicate()[0]
            return None
        out = p.communicate()[0].decode("utf-8", "replace").strip().splitlines()
        why = [l for l in out if "raft" in l.lower()] or out or ["exit %s" % p.returncode]
        return ("latchd refuses the raft-* options (the Raft core of issue 22, branch raft, is "
                "not in this build): %s" % why[0].strip())
    finally:
        shutil.rmtree(d, ignore_errors=True)


class RedisAsyncCluster(Cluster):
    """The unsafe target: a redis-server primary and two asynchronous
    replicas whose replication stream goes through a delaying proxy, and a
    failover the harness drives (kill -9 the primary, REPLICAOF NO ONE on a
    replica, the others follow it) as Sentinel would. Acknowledged writes
    still in the stream when the primary dies are lost: the checker must
    say so."""

    def __init__(self, repl_delay=0.3):
        super().__init__("latchd-ha-redis-")
        self.repl_delay = repl_delay
        self.primary = "r1"
        self.front = {}
        for name in ("r1", "r2", "r3"):
            d = os.path.join(self.dir, name)
            os.makedirs(d)
            self.nodes[name] = Node(name, self._argv_fn(name, d), free_port(), d)
        # one proxy per (replica, primary) link, made on demand
        self._links = {}

    def _argv_fn(self, name, d):
        def argv():
            return [REDIS_BIN, "--port", str(self.nodes[name].port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", d,
                    "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
        return argv

    def _link_port(self, replica, primary):
        key = (replica, primary)
        if key not in self._links:
            p = ha_proxy.Proxy(self.faults, primary, self.nodes[primary].port, source=replica)
            self.proxies.append(p)
            self._links[key] = p
        self.faults.delay(key, self.repl_delay)
        return self._links[key].port

    def _follow(self, replica, primary):
        call(self.nodes[replica].port, "REPLICAOF", "127.0.0.1", str(self._link_port(replica, primary)))

    def boot(self):
        for n in self.nodes.values():
            n.start()
        for name in self.nodes:
            if name != self.primary:
                self._follow(name, self.primary)
        deadline = time.monotonic() + START_TIMEOUT
        while info_field(self.nodes[self.primary].port, "connected_slaves") != "2":
            if time.monotonic() > deadline:
                raise RuntimeError("replicas did not connect\n" + self.logs())
            time.sleep(0.05)

    def leader(self):
        n = self.nodes[self.primary]
        return self.primary if n.alive() and not n.paused else None

    def failover(self):
        """kill -9 the primary; promote the replica with the larger offset
        (Sentinel's choice); the rest, the old primary restarted empty
        included, replicate from it."""
        old = self.primary
        self.nodes[old].kill()
        replicas = [name for name in self.nodes if name != old]

        def offset(name):
            v = info_field(self.nodes[name].port, "slave_repl_offset")
            return int(v) if v and v.isdigit() else -1
        new = max(replicas, key=offset)
        call(self.nodes[new].port, "REPLICAOF", "NO", "ONE")
        self.primary = new
        for name in replicas:
            if name != new:
                self._follow(name, new)
        self.start(old)
        return old, new

    def start(self, name):
        """A restarted node comes back as a replica of the primary."""
        self.nodes[name].start()
        if name != self.primary:
            self._follow(name, self.primary)

    def wait_leader(self, timeout):
        return self.primary
