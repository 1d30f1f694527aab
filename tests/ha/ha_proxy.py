"""The fault-injecting TCP proxy the fault suite puts on every link between
nodes: per-link drop, blackhole (stall) and delay, controlled by the test.

One Proxy listens in front of one destination node (its Raft port, or a
redis-server primary's port for the replicas). The source of a connection
is known from what it sends first (`identify`: the raft_uv handshake carries
the sender's server id) or fixed per Proxy (`source`). The rules are kept
per link (source, destination) in a Faults object shared by every Proxy:
  drop       existing connections on the link are closed and new ones are
             closed at once (what a REJECT firewall rule or a dead peer
             looks like)
  blackhole  bytes stop moving both ways but stay queued, as TCP does when
             packets are dropped; they flow again when the rule is lifted
  delay      every chunk is delivered `delay` seconds after it was read
A partition is drop (or blackhole) on both directions of every link between
two groups. Threads only: a few connections per link.
"""

import socket
import struct
import threading
import time

RAFT_HANDSHAKE = struct.Struct("<QQQ")   # protocol, server id, address length


def raft_source(first):
    """The sender's server id from the start of a raft_uv connection (its
    handshake: three little-endian 64-bit words, protocol version first),
    or None when it does not look like one."""
    if len(first) < RAFT_HANDSHAKE.size:
        return None
    proto, sid, alen = RAFT_HANDSHAKE.unpack_from(first)
    if proto != 1 or not 0 < sid < 1 << 16 or alen > 4096:
        return None
    return sid


class Faults:
    """The link rules. Links are (source, destination) node names."""

    def __init__(self):
        self.cond = threading.Condition()
        self.rules = {}           # link -> "drop" | "blackhole"
        self.delays = {}          # link -> seconds
        self.generation = 0       # bumped on every change; pumps re-check

    def _set(self, links, rule):
        with self.cond:
            for link in links:
                if rule is None:
                    self.rules.pop(link, None)
                else:
                    self.rules[link] = rule
            self.generation += 1
            self.cond.notify_all()

    def cut(self, a_nodes, b_nodes, rule="drop"):
        """Cut every link between the two groups, both directions."""
        links = [(a, b) for a in a_nodes for b in b_nodes if a != b]
        self._set(links + [(b, a) for a, b in links], rule)

    def isolate(self, node, others, rule="drop"):
        self.cut([node], [o for o in others if o != node], rule)

    def delay(self, link, seconds):
        with self.cond:
            if seconds:
                self.delays[link] = seconds
            else:
                self.delays.pop(link, None)
            self.generation += 1
            self.cond.notify_all()

    def heal(self):
        with self.cond:
            self.rules.clear()
            self.delays.clear()
            self.generation += 1
            self.cond.notify_all()

    def rule(self, link):
        return self.rules.get(link)


class Proxy:
    """Listens on 127.0.0.1:port, forwards to 127.0.0.1:target."""

    def __init__(self, faults, dest, target, source=None, identify=None, port=0):
        self.faults, self.dest, self.target = faults, dest, target
        self.source, self.identify = source, identify
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", port))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.closed = False
        self.conns = set()
        self.lock = threading.Lock()
        self.stats = {"accepted": 0, "dropped": 0}
        threading.Thread(target=self._accept, daemon=True, name="proxy-%s" % dest).start()

    def close(self):
        self.closed = True
        try:
            self.lsock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.lsock.close()
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            c.close()

    def _accept(self):
        while not self.closed:
            try:
                s, _ = self.lsock.accept()
            except OSError:
                return
            self.stats["accepted"] += 1
            threading.Thread(target=self._start_conn, args=(s,), daemon=True).start()

    def _start_conn(self, s):
        first = b""
        source = self.source
        if self.identify is not None:
            s.settimeout(5)
            try:
                while len(first) < RAFT_HANDSHAKE.size:
                    chunk = s.recv(RAFT_HANDSHAKE.size - len(first))
                    if not chunk:
                        break
                    first += chunk
            except OSError:
                pass
            source = self.identify(first)
            s.settimeout(None)
        link = (source, self.dest)
        if self.faults.rule(link) == "drop":
            self.stats["dropped"] += 1
            s.close()
            return
        try:
            up = socket.create_connection(("127.0.0.1", self.target), timeout=2)
        except OSError:
            s.close()
            return
        up.settimeout(None)
        for sock in (s, up):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(self, link, s, up)
        with self.lock:
            closing = self.closed
            if not closing:
                self.conns.add(conn)
        if closing:   # outside the lock: _Conn.close takes it too
            conn.close()
            return
        conn.start(first)


class _Conn:
    """One proxied connection: a pump thread per direction."""

    def __init__(self, proxy, link, down, up):
        self.proxy, self.link, self.down, self.up = proxy, link, down, up
        self.dead = False

    def start(self, first):
        threading.Thread(target=self._pump, args=(self.down, self.up, first), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.up, self.down, b""), daemon=True).start()

    def close(self):
        if self.dead:
            return
        self.dead = True
        for s in (self.down, self.up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        with self.proxy.lock:
            self.proxy.conns.discard(self)

    def _gate(self):
        """Wait while the link is blackholed; False when it must close."""
        faults = self.proxy.faults
        with faults.cond:
            while True:
                if self.dead:
                    return False
                rule = faults.rules.get(self.link)
                if rule == "drop":
                    return False
                if rule != "blackhole":
                    return True
                faults.cond.wait(0.5)

    def _pump(self, src, dst, first):
        faults = self.proxy.faults
        data = first
        try:
            while True:
                if data:
                    if not self._gate():
                        break
                    d = faults.delays.get(self.link)
                    if d:
                        time.sleep(d)
                    if not self._gate():
                        break
                    dst.sendall(data)
                src.settimeout(0.5)
                try:
                    data = src.recv(1 << 16)
                except socket.timeout:
                    data = b""
                    if faults.rules.get(self.link) == "drop" or self.dead:
                        break
                    continue
                if not data:
                    break
        except OSError:
            pass
        self.close()
