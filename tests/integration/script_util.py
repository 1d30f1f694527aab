"""Helpers for the scripting tests (EVAL / EVALSHA / SCRIPT).

* Script vectors: the exact bytes real clients send, read at run time from
  one folder of ``<sha1>.lua`` files: $LATCHD_SCRIPT_VECTORS when set, else
  ``../shared/protocol/vectors`` next to the repository when it exists, else
  ``build/vectors`` (what scripts/vectors assembles from the client packages
  on a fresh clone). They are never copied into this project; a test whose
  vector is absent skips, naming the script and why it is missing
  (tests/vectors.sha1 lists every known vector and its client).
* Subscriber: a RESP2 pub/sub connection that collects ``message`` frames,
  using a PING as a barrier so no sleeps are needed.
* State snapshots and the lock-step sequence runner used to compare servers
  (latchd native scripts, latchd Lua-only, redis-server) step by step.
"""

import hashlib
import os
import random
import time

import pytest

from resp_util import encode_command, parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED_VECTORS = os.path.normpath(os.path.join(REPO, "..", "shared", "protocol", "vectors"))
BUILT_VECTORS = os.path.join(REPO, "build", "vectors")
SHA1_LIST = os.path.join(REPO, "tests", "vectors.sha1")


def _vectors_dir():
    env = os.environ.get("LATCHD_SCRIPT_VECTORS")
    if env:
        return env
    if not os.path.isdir(SHARED_VECTORS) and os.path.isdir(BUILT_VECTORS):
        return BUILT_VECTORS
    return SHARED_VECTORS


VECTORS_DIR = _vectors_dir()

NO_VECTORS = ("script vectors not found at %s (../shared/protocol/vectors next to the "
              "repository, or run scripts/vectors; LATCHD_SCRIPT_VECTORS overrides)" % VECTORS_DIR)


def _known_vectors():
    """sha1 -> (client, version, name) from tests/vectors.sha1."""
    known = {}
    try:
        with open(SHA1_LIST) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                parts = line.rstrip("\n").split("\t")
                known[parts[0]] = tuple((parts + ["", "", ""])[1:4])
    except OSError:
        pass
    return known


KNOWN_VECTORS = _known_vectors()


def missing_vector_reason(sha_or_prefix):
    """Why one vector is absent. The variable part (which script) comes after
    " — " so scripts/test can group these skips by their cause."""
    if not os.path.isdir(VECTORS_DIR):
        return NO_VECTORS
    hits = [(s, k) for s, k in KNOWN_VECTORS.items() if s.startswith(sha_or_prefix)]
    if len(hits) == 1:
        sha, (client, version, name) = hits[0]
        if client == "redisson":
            why = ("Redisson script text not in %s (scripts/vectors cannot rebuild Redisson's "
                   "texts without its jars; ../shared/protocol/vectors has them)" % VECTORS_DIR)
        elif client in ("user", "redis-cli"):
            why = ("%s example script not in %s (no package ships it; "
                   "../shared/protocol/vectors has it)" % (client, VECTORS_DIR))
        else:
            why = ("%s script text not in %s (scripts/vectors did not obtain it from the "
                   "installed package)" % (client, VECTORS_DIR))
        return "%s — %s %s %s" % (why, sha[:8], version, name)
    return "script vector not found (or ambiguous) in %s — %s" % (VECTORS_DIR, sha_or_prefix)


def sha1hex(data):
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha1(data).hexdigest()


def vector_files():
    """Sorted list of vector file names (<sha1>.lua); [] if the folder is absent."""
    if not os.path.isdir(VECTORS_DIR):
        return []
    return sorted(f for f in os.listdir(VECTORS_DIR) if f.endswith(".lua"))


def vector(sha_or_prefix):
    """The exact bytes of one vector, found by full SHA1 or a unique prefix.
    Skips the test when the vectors folder (or that vector) is absent."""
    names = [f for f in vector_files() if f.startswith(sha_or_prefix)]
    if len(names) != 1:
        pytest.skip(missing_vector_reason(sha_or_prefix))
    with open(os.path.join(VECTORS_DIR, names[0]), "rb") as f:
        return f.read()


class Script:
    """One script body plus how to run it (EVAL or EVALSHA) on a raw conn."""

    def __init__(self, body):
        self.body = body if isinstance(body, bytes) else body.encode()
        self.sha = sha1hex(self.body)

    @classmethod
    def vector(cls, prefix):
        return cls(vector(prefix))

    def args(self, keys=(), argv=(), via="evalsha"):
        head = ("EVALSHA", self.sha) if via == "evalsha" else ("EVAL", self.body)
        return head + (str(len(keys)),) + tuple(keys) + tuple(argv)

    def raw(self, conn, keys=(), argv=(), via="evalsha"):
        """Run the script and return the exact reply bytes. With via="evalsha"
        the body is SCRIPT LOADed first if the server answers NOSCRIPT."""
        reply = conn.cmd(*self.args(keys, argv, via))
        if via == "evalsha" and reply.startswith(b"-NOSCRIPT"):
            assert conn.cmd("SCRIPT", "LOAD", self.body) == bulk(self.sha)
            reply = conn.cmd(*self.args(keys, argv, via))
        return reply

    def __call__(self, conn, keys=(), argv=(), via="evalsha"):
        return parse(self.raw(conn, keys, argv, via))

    def err(self, text, line=1):
        """The exact error reply Redis 7.0 sends when a redis.call() inside
        this script fails with `text` on `line`."""
        return b"-%s script: %s, on @user_script:%d.\r\n" % (
            text.encode() if isinstance(text, str) else text, self.sha.encode(), line)


def script_runs(conn):
    """latchd's (native, lua) script run counters from INFO latchd on a raw
    conn: which path ran a script, as a client cannot tell from replies."""
    info = conn.call("INFO", "latchd")
    if isinstance(info, bytes):
        info = info.decode()
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    return int(fields["latchd_native_script_runs"]), int(fields["latchd_lua_script_runs"])


class ScriptRunCheck:
    """Around a run of script calls on a latchd: with native-scripts yes the
    native path ran at least once, with no never; either way every call ran
    exactly once on one of the two paths."""

    def __init__(self, server):
        self.server = server
        c = server.raw()
        reply = c.call("CONFIG", "GET", "native-scripts")
        c.close()
        self.native = reply[1] == b"yes"
        self.before = self._runs()

    def _runs(self):
        c = self.server.raw()
        runs = script_runs(c)
        c.close()
        return runs

    def check(self, calls):
        native, lua = self._runs()
        ran_native, ran_lua = native - self.before[0], lua - self.before[1]
        assert ran_native + ran_lua == calls, (ran_native, ran_lua, calls)
        if self.native:
            assert ran_native > 0, "native-scripts yes, yet no script ran natively"
        else:
            assert ran_native == 0, "native-scripts no, yet %d scripts ran natively" % ran_native
        return ran_native


def bulk(x):
    if isinstance(x, str):
        x = x.encode()
    return b"$%d\r\n%s\r\n" % (len(x), x)


def array(*items):
    """A RESP array of bulk strings."""
    return b"*%d\r\n" % len(items) + b"".join(bulk(i) for i in items)


def error(text):
    return b"-%s\r\n" % text.encode()


def gone(conn, key):
    """key does not exist (a container's last element took it along)."""
    assert conn.cmd("EXISTS", key) == b":0\r\n"
    assert conn.cmd("TYPE", key) == b"+none\r\n"


NIL = b"$-1\r\n"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_POSITIVE = "ERR value is out of range, must be positive"


def integer(n):
    return b":%d\r\n" % n


# ---------------------------------------------------------------- pub/sub

PONG_BARRIER = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


def frames_before_pong(conn):
    """Every frame a subscribed conn got before a PING sent now, parsed
    (the PING reply itself is dropped)."""
    conn.send(encode_command("PING"))
    out = []
    while True:
        frame = conn.read_reply()
        if frame == PONG_BARRIER:
            return out
        out.append(parse(frame))


# LATCHD_TEST_NO_PUBSUB=1 turns the subscriber checks off (for a latchd built
# without pub/sub); by default published messages are always checked.
PUBSUB = os.environ.get("LATCHD_TEST_NO_PUBSUB", "") in ("", "0")


class Subscriber:
    """A RESP2 connection SUBSCRIBEd to some channels."""

    def __init__(self, server, channels):
        self.enabled = PUBSUB
        self.channels = list(channels) if self.enabled else []
        self.conn = server.raw()
        if self.channels:
            self.conn.send(encode_command("SUBSCRIBE", *self.channels))
            for i, ch in enumerate(self.channels, 1):
                frame = self.conn.read_reply()
                if frame.startswith(b"-"):
                    pytest.fail("%s: SUBSCRIBE failed: %r (pub/sub is needed to check the "
                                "messages scripts publish; LATCHD_TEST_NO_PUBSUB=1 skips "
                                "those checks)" % (server.kind, frame), pytrace=False)
                assert frame == b"*3\r\n$9\r\nsubscribe\r\n%s:%d\r\n" % (bulk(ch), i), frame

    def drain(self):
        """Every frame that arrived before a PING sent now, as parsed
        [kind, channel, payload] lists (the PING reply itself is dropped)."""
        if not self.channels:
            return []
        return frames_before_pong(self.conn)

    def messages(self):
        """(channel, payload) pairs of the `message` frames received so far."""
        msgs = []
        for f in self.drain():
            assert isinstance(f, list) and f[0] == b"message", f
            msgs.append((f[1], f[2]))
        return msgs

    def expect(self, expected):
        """Assert the messages received since the last check (str or bytes)."""
        got = self.messages()
        if self.enabled:
            want = [(c.encode() if isinstance(c, str) else c, p.encode() if isinstance(p, str) else p)
                    for c, p in expected]
            assert got == want


class Keyevents:
    """Keyspace events: a RESP2 connection PSUBSCRIBEd to every
    __keyevent@0__ channel, with notify-keyspace-events set to KEA (the
    `keyevents` fixture resets it afterwards). Gated like Subscriber."""

    PREFIX = b"__keyevent@0__:"

    def __init__(self, server):
        self.enabled = PUBSUB
        self.conn = server.raw()
        if not self.enabled:
            return
        reply = self.conn.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
        if reply != b"+OK\r\n":
            pytest.fail("%s: CONFIG SET notify-keyspace-events failed: %r (LATCHD_TEST_NO_PUBSUB=1 "
                        "skips the keyspace event checks)" % (server.kind, reply), pytrace=False)
        self.conn.send(encode_command("PSUBSCRIBE", self.PREFIX + b"*"))
        assert parse(self.conn.read_reply())[0] == b"psubscribe"

    def take(self):
        """The (event, key) pairs raised since the last call, in order."""
        if not self.enabled:
            return []
        out = []
        for f in frames_before_pong(self.conn):
            assert f[0] == b"pmessage" and f[2].startswith(self.PREFIX), f
            out.append((f[2][len(self.PREFIX):].decode(), f[3].decode()))
        return out

    def expect(self, *events):
        """Assert the events since the last check: ("lpush", "key"), ..."""
        got = self.take()
        if self.enabled:
            assert got == list(events)


# ---------------------------------------------------------------- state

# How snapshot() reads a value of each type, and shapes the reply.
SNAPSHOT_READ = {
    b"hash": (("HGETALL",), lambda flat: sorted(zip(flat[0::2], flat[1::2]))),
    b"string": (("GET",), lambda v: v),
    b"list": (("LRANGE", 0, -1), lambda v: v),
    b"zset": (("ZRANGE", 0, -1, "WITHSCORES"), lambda flat: list(zip(flat[0::2], flat[1::2]))),
}


def snapshot(conn, keys):
    """{key: (type, value, pttl)} for every key, read in one pipeline.
    value is a sorted list of (field, value) for hashes, bytes for strings,
    the elements for lists, (member, score) pairs in order for zsets."""
    keys = list(keys)
    conn.send(b"".join(encode_command("TYPE", k) for k in keys))
    types = [bytes(parse(conn.read_reply())) for _ in keys]
    cmds = []
    for k, t in zip(keys, types):
        if t in SNAPSHOT_READ:
            cmd = SNAPSHOT_READ[t][0]
            cmds.append(encode_command(cmd[0], k, *cmd[1:]))
        cmds.append(encode_command("PTTL", k))
    conn.send(b"".join(cmds))
    out = {}
    for k, t in zip(keys, types):
        value = None
        if t in SNAPSHOT_READ:
            value = SNAPSHOT_READ[t][1](parse(conn.read_reply()))
        pttl = parse(conn.read_reply())
        out[k] = (t, value, pttl)
    return out


def ttl_close(a, b, tolerance):
    """Two PTTL-like integers agree: equal when either is negative (-1/-2),
    within `tolerance` ms otherwise."""
    if a < 0 or b < 0:
        return a == b
    return abs(a - b) <= tolerance


# ---------------------------------------------------------------- lock-step runner

class Target:
    """One server taking part in a lock-step comparison."""

    def __init__(self, name, server, channels):
        self.name = name
        self.server = server
        self.conn = server.raw(timeout=10.0)
        self.sub = Subscriber(server, channels)


class Op:
    """One step: a script run (script is a Script) or a plain command.

    pttl_reply: the reply may be a PTTL (lock held by someone else), so an
    integer reply is compared with the TTL tolerance."""

    def __init__(self, label, script=None, keys=(), argv=(), command=None,
                 pttl_reply=False, sleep=None):
        self.label = label
        self.script = script
        self.keys = tuple(keys)
        self.argv = tuple(argv)
        self.command = tuple(command) if command else None
        self.pttl_reply = pttl_reply
        self.sleep = sleep

    def send(self, conn, via):
        if self.command:
            return conn.cmd(*self.command)
        return self.script.raw(conn, self.keys, self.argv, via)

    def __repr__(self):
        if self.sleep is not None:
            return "sleep(%dms)" % self.sleep
        if self.command:
            return "%s %r" % (self.label, self.command)
        return "%s keys=%r argv=%r" % (self.label, self.keys, self.argv)


def replies_match(op, a, b, tolerance):
    """Equal bytes; or, for a PTTL-like reply, integers (alone or in an
    array, like RFencedLock's {pttl, -1}) within the tolerance."""
    if a == b:
        return True
    if not op.pttl_reply or a[:1] != b[:1] or a[:1] not in b":*":
        return False
    pa, pb = parse(a), parse(b)
    if a[:1] == b":":
        return ttl_close(pa, pb, tolerance)
    return (len(pa) == len(pb) and all(isinstance(x, int) for x in pa + pb)
            and all(ttl_close(x, y, tolerance) for x, y in zip(pa, pb)))


def states_match(a, b, tolerance):
    if a.keys() != b.keys():
        return False
    for k in a:
        ta, va, pa = a[k]
        tb, vb, pb = b[k]
        if ta != tb or va != vb or not ttl_close(pa, pb, tolerance):
            return False
    return True


class LockstepRunner:
    """Runs the same ops on several targets one step at a time and checks
    that replies, key state (TYPE, value, PTTL within a tolerance) and the
    published messages agree with the first target after every step.

    Expiry must never be ambiguous: the runner remembers the deadlines of
    keys with short TTLs (from the snapshots) and, before a step, waits
    until no deadline lies within `guard` ms of now, so every server sees a
    key either clearly alive or clearly expired."""

    def __init__(self, targets, keys, via="evalsha", tolerance=150, guard=80,
                 short_ttl=10 ** 9):
        self.targets = targets
        self.keys = list(keys)
        self.via = via
        self.tolerance = tolerance
        self.guard = guard / 1000.0
        self.short_ttl = short_ttl
        self.deadlines = []          # (earliest, latest) monotonic seconds
        self.log = []

    def _wait_clear(self):
        now = time.monotonic()
        self.deadlines = [(lo, hi) for lo, hi in self.deadlines if hi + self.guard > now]
        for lo, hi in sorted(self.deadlines):
            now = time.monotonic()
            if lo - self.guard <= now <= hi + self.guard:
                time.sleep(hi + self.guard - now)

    def _record_deadlines(self, states, t0):
        for k in self.keys:
            ttls = [s[k][2] for s in states]
            if all(0 <= t <= self.short_ttl for t in ttls):
                self.deadlines.append((t0 + min(ttls) / 1000.0,
                                       time.monotonic() + max(ttls) / 1000.0))

    def _fail(self, step, op, what, values):
        lines = ["step %d: %r: %s differ" % (step, op, what)]
        for t, v in zip(self.targets, values):
            lines.append("  %-12s %r" % (t.name, v))
        lines.append("history:")
        lines.extend("  " + h for h in self.log[-25:])
        pytest.fail("\n".join(lines), pytrace=False)

    def step(self, i, op):
        if op.sleep is not None:
            time.sleep(op.sleep / 1000.0)
            self.log.append("%d %r" % (i, op))
            return
        self._wait_clear()
        t0 = time.monotonic()
        replies = [op.send(t.conn, self.via) for t in self.targets]
        msgs = [t.sub.messages() for t in self.targets]
        states = [snapshot(t.conn, self.keys) for t in self.targets]
        self.log.append("%d %r -> %r" % (i, op, replies[0]))
        ref = self.targets[0]
        for t, r in zip(self.targets[1:], replies[1:]):
            if not replies_match(op, replies[0], r, self.tolerance):
                self._fail(i, op, "replies (%s vs %s)" % (ref.name, t.name), replies)
        for t, m in zip(self.targets[1:], msgs[1:]):
            if m != msgs[0]:
                self._fail(i, op, "published messages (%s vs %s)" % (ref.name, t.name), msgs)
        for t, s in zip(self.targets[1:], states[1:]):
            if not states_match(states[0], s, self.tolerance):
                self._fail(i, op, "key states (%s vs %s)" % (ref.name, t.name), states)
        self._record_deadlines(states, t0)
        return replies[0]

    def run(self, ops):
        for i, op in enumerate(ops):
            self.step(i, op)
        return self.log


# ---------------------------------------------------------------- lock scripts

# Redisson RLock (redisson.md section 1) and node-redisson (clients.md section 5)
RLOCK_LOCK = ["9401052d", "dad0f8d6", "149c5a8b", "1aa70d37"]     # KEYS[1]; ARGV lease, owner
RLOCK_UNLOCK_OLD = ["93cfc048", "3ffe249c"]                         # KEYS name, chan; ARGV msg, lease, owner
RLOCK_UNLOCK_CMD = ["778cea8a"]                                     # ... + ARGV[4] publish command
RLOCK_UNLOCK_LATCH = ["68664592"]                                   # KEYS name, chan, latch; ARGV msg, lease, owner, cmd, latch ttl
NODE_UNLOCK_LATCH = ["4a66e59a"]                                    # KEYS name, chan, latch; ARGV msg, lease, owner, latch ttl
RLOCK_RENEW = ["8e19a1dd", "998172e5"]                              # KEYS[1]; ARGV lease, owner
RLOCK_RENEW_BATCH = ["6a3d3157"]                                    # KEYS n1..nk; ARGV lease, owner1..ownerk
RLOCK_FORCE = ["7e9c80b3", "95d09a0d"]                              # KEYS name, chan; ARGV msg
RLOCK_FORCE_CMD = ["605e3382"]                                      # KEYS name, chan; ARGV msg, cmd
RLOCK_ALL = (RLOCK_LOCK + RLOCK_UNLOCK_OLD + RLOCK_UNLOCK_CMD + RLOCK_UNLOCK_LATCH
             + NODE_UNLOCK_LATCH + RLOCK_RENEW + RLOCK_RENEW_BATCH + RLOCK_FORCE + RLOCK_FORCE_CMD)
# Redisson RFencedLock (RLock's unlock/renew): KEYS name, token counter; ARGV lease, owner
FENCED_LOCK = ["49babb5a", "46b5551b"]

# token (string value) locks: redlock 4, redis-semaphore mutex, redis-py Lock,
# the ioredis/node-redis "release if token matches" script
REDLOCK_ACQUIRE = ["e5a322e2"]      # KEYS k1..kn; ARGV value, ttl
REDLOCK_RELEASE = ["0f0f23b9"]      # KEYS k1..kn; ARGV value
REDLOCK_EXTEND = ["ce46f809"]       # KEYS k1..kn; ARGV value, ttl
TOKEN_REFRESH = ["594683e4", "1cac5148"]   # KEYS[1]; ARGV token, ttl
TOKEN_RELEASE = ["7157921a", "c3f8721c", "cf0e94b2"]   # KEYS[1]; ARGV token
PY_EXTEND = ["a4e87838"]            # KEYS[1]; ARGV token, ms, replace("0"/"1")
TOKEN_ALL = REDLOCK_ACQUIRE + REDLOCK_RELEASE + REDLOCK_EXTEND + TOKEN_REFRESH + TOKEN_RELEASE + PY_EXTEND

NATIVE_SCRIPTS = RLOCK_ALL + FENCED_LOCK + TOKEN_ALL


def channel_of(name):
    return "redisson_lock__channel:{%s}" % name


def latch_of(name, req):
    return "redisson_unlock_latch:{%s}:%s" % (name, req)


def fence_of(name):
    """RFencedLock's fencing token counter."""
    return "redisson_lock_token:{%s}" % name


class SequenceGen:
    """Seeded random operation sequences around one script under test."""

    LONG = ["30000", "60000", "45000"]
    SHORT = ["300", "400"]
    BAD_LEASES = ["abc", "1.5", "", "0", "-1"]

    def __init__(self, seed, focus):
        self.rng = random.Random(seed)
        self.focus = focus
        self.names = ["lk-a", "lk-b{x}"]
        self.owners = ["6f1d8a2e-uuid-1:1", "6f1d8a2e-uuid-1:7", "c0ffee00-uuid-2:1"]
        self.reqs = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"]
        self.tokens = ["tok-A", "tok-B"]
        self.tkeys = ["tk-1", "tk-2", "tk-3"]
        self.scripts = {}
        # the owner / token most recently used to lock a name / key: unlocks,
        # renewals and releases use it most of the time, so that they succeed
        self.holder = {}
        self.token_of = {}

    # -- universe
    def keys(self):
        ks = list(self.names) + list(self.tkeys)
        ks += [latch_of(n, r) for n in self.names for r in self.reqs]
        ks += [fence_of(n) for n in self.names]
        return ks

    def channels(self):
        return [channel_of(n) for n in self.names] + ["other-channel"]

    def script(self, prefix):
        if prefix not in self.scripts:
            self.scripts[prefix] = Script.vector(prefix)
        return self.scripts[prefix]

    # -- random pieces
    def lease(self, bad=0.06, short=0.25):
        r = self.rng.random()
        if r < bad:
            return self.rng.choice(self.BAD_LEASES)
        if r < bad + short:
            return self.rng.choice(self.SHORT)
        return self.rng.choice(self.LONG)

    def latch_ttl(self):
        r = self.rng.random()
        if r < 0.04:
            return self.rng.choice(["0", "abc"])
        if r < 0.35:
            return self.rng.choice(self.SHORT)
        return self.rng.choice(["13500", "16000", "20000"])

    def pub_cmd(self):
        return self.rng.choice(["PUBLISH"] * 4 + ["publish", "Publish", "NOPE"])

    def name(self):
        return self.rng.choice(self.names)

    def owner(self, name=None):
        if name is not None and name in self.holder and self.rng.random() < 0.7:
            return self.holder[name]
        # mostly the first owner, so that re-entry is common
        return self.rng.choices(self.owners, weights=[6, 2, 2])[0]

    def token(self, key=None):
        if key is not None and key in self.token_of and self.rng.random() < 0.7:
            return self.token_of[key]
        return self.rng.choices(self.tokens, weights=[3, 1])[0]

    # -- ops
    def rlock_op(self, prefix):
        s = self.script(prefix)
        n = self.name()
        ch = channel_of(n) if self.rng.random() > 0.05 else "other-channel"
        label = prefix
        if prefix in RLOCK_LOCK + FENCED_LOCK:
            owner = self.owner(n)
            self.holder[n] = owner
            keys = [n, fence_of(n)] if prefix in FENCED_LOCK else [n]
            return Op(label, s, keys, [self.lease(), owner], pttl_reply=True)
        if prefix in RLOCK_UNLOCK_OLD:
            return Op(label, s, [n, ch], ["0", self.lease(), self.owner(n)])
        if prefix in RLOCK_UNLOCK_CMD:
            return Op(label, s, [n, ch], ["0", self.lease(), self.owner(n), self.pub_cmd()])
        if prefix in RLOCK_UNLOCK_LATCH:
            return Op(label, s, [n, ch, latch_of(n, self.rng.choice(self.reqs))],
                      ["0", self.lease(), self.owner(n), self.pub_cmd(), self.latch_ttl()])
        if prefix in NODE_UNLOCK_LATCH:
            return Op(label, s, [n, ch, latch_of(n, self.rng.choice(self.reqs))],
                      ["0", self.lease(), self.owner(n), self.latch_ttl()])
        if prefix in RLOCK_RENEW:
            return Op(label, s, [n], [self.lease(), self.owner(n)])
        if prefix in RLOCK_RENEW_BATCH:
            k = self.rng.randint(0, 3)
            names = [self.rng.choice(self.names) for _ in range(k)]
            owners = [self.owner(x) for x in names]
            if k and self.rng.random() < 0.05:
                owners = owners[:-1]        # fewer ARGV than KEYS: a nil argument
            return Op(label, s, names, [self.lease()] + owners)
        if prefix in RLOCK_FORCE:
            return Op(label, s, [n, ch], ["0"])
        if prefix in RLOCK_FORCE_CMD:
            return Op(label, s, [n, ch], ["0", self.pub_cmd()])
        raise ValueError(prefix)

    def token_op(self, prefix):
        s = self.script(prefix)
        k = self.rng.choice(self.tkeys)
        if prefix in REDLOCK_ACQUIRE + REDLOCK_RELEASE + REDLOCK_EXTEND:
            keys = self.rng.sample(self.tkeys, self.rng.randint(1, 3))
            tok = self.token(keys[0])
            if prefix in REDLOCK_RELEASE:
                return Op(prefix, s, keys, [tok])
            if prefix in REDLOCK_ACQUIRE:
                for key in keys:
                    self.token_of[key] = tok
            return Op(prefix, s, keys, [tok, self.lease(bad=0.05, short=0.6)])
        tok = self.token(k)
        if prefix in TOKEN_REFRESH:
            return Op(prefix, s, [k], [tok, self.lease(bad=0.05)])
        if prefix in TOKEN_RELEASE:
            return Op(prefix, s, [k], [tok])
        if prefix in PY_EXTEND:
            return Op(prefix, s, [k], [tok, self.lease(bad=0.05),
                                       self.rng.choice(["0", "1", "1"])])
        raise ValueError(prefix)

    def acquire_op(self):
        k = self.rng.choice(self.tkeys)
        tok = self.token()
        self.token_of[k] = tok
        return Op("acquire", command=("SET", k, tok, "PX",
                                      self.rng.choice(self.SHORT + self.LONG), "NX"))

    def plain_op(self, family):
        if self.rng.random() < 0.08:
            # scripts run in the caller's database: the same names in
            # database 1 are other locks, untouched by what ran in 0
            return Op("select", command=("SELECT", self.rng.choice(["0", "0", "1"])))
        r = self.rng.random()
        if family == "rlock":
            n = self.name()
            if self.focus in FENCED_LOCK and self.rng.random() < 0.3:
                # counters INCR refuses (or has to start from), and DEL
                v = self.rng.choice(["garbage", "9223372036854775807", "-3", "41", None])
                if v is None:
                    return Op("del-token", command=("DEL", fence_of(n)))
                return Op("set-token", command=("SET", fence_of(n), v))
            if r < 0.25:
                latch = latch_of(n, self.rng.choice(self.reqs))
                v = self.rng.choice(["0", "1", "1", "garbage"])
                return Op("set-latch", command=("SET", latch, v, "PX", self.rng.choice(self.SHORT + ["20000"])))
            if r < 0.4:
                return Op("del-latch", command=("DEL", latch_of(n, self.rng.choice(self.reqs))))
            if r < 0.45:
                return Op("wrongtype-lock", command=("SET", n, "not-a-hash", "PX", "700"))
            if r < 0.5:
                return Op("wrongtype-latch", command=("HSET", latch_of(n, self.reqs[0]), "f", "v"))
            if r < 0.6:
                return Op("persist", command=("PERSIST", n))
            if r < 0.75:
                return Op("del", command=("DEL", n))
            return Op("sleep", sleep=self.rng.choice([150, 450]))
        k = self.rng.choice(self.tkeys)
        if r < 0.35:
            return self.acquire_op()
        if r < 0.4:
            return Op("wrongtype", command=("HSET", k, "f", "v"))
        if r < 0.5:
            return Op("persist", command=("PERSIST", k))
        if r < 0.6:
            return Op("overwrite", command=("SET", k, self.token()))
        if r < 0.75:
            return Op("del", command=("DEL", k))
        return Op("sleep", sleep=self.rng.choice([150, 450]))

    def sequence(self, length):
        family = "rlock" if self.focus in RLOCK_ALL + FENCED_LOCK else "token"
        pool = RLOCK_ALL if family == "rlock" else TOKEN_ALL
        lockers = RLOCK_LOCK if family == "rlock" else REDLOCK_ACQUIRE
        if self.focus in FENCED_LOCK:
            # Around a fenced lock: RLock locks and renewals on the same
            # hash, DEL to free it, and no script that publishes, so the
            # comparison holds on a latchd built without pub/sub too.
            pool = RLOCK_LOCK + RLOCK_RENEW + RLOCK_RENEW_BATCH + FENCED_LOCK
            lockers = lockers + FENCED_LOCK
        ops = []
        for _ in range(length):
            r = self.rng.random()
            if r < 0.4:
                prefix = self.focus
            elif r < 0.7:
                if family == "token" and self.rng.random() < 0.6:
                    ops.append(self.acquire_op())
                    continue
                prefix = self.rng.choice(lockers)
            elif r < 0.85:
                prefix = self.rng.choice(pool)
            else:
                ops.append(self.plain_op(family))
                continue
            ops.append(self.rlock_op(prefix) if family == "rlock" else self.token_op(prefix))
        return ops
