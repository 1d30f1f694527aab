"""The lock scripts real clients send (../shared/protocol/vectors/<sha1>.lua),
run with realistic KEYS/ARGV: replies, resulting keys, fields, TTLs and
published messages, all as redis-server 7.0 produces them.

Every scenario runs twice, once by EVALSHA (after SCRIPT LOAD) and once by
EVAL of the full text, because latchd selects its native fast paths by the
SHA1 of the body in both cases."""

import os
import time

import pytest

from resp_util import parse
from script_util import (KNOWN_VECTORS, NATIVE_SCRIPTS, NIL, NOT_INTEGER, NO_VECTORS, WRONGTYPE, Script,
                         Subscriber, bulk, channel_of, integer, latch_of, script_runs, sha1hex, snapshot,
                         vector, vector_files, VECTORS_DIR)

VIA = pytest.mark.parametrize("via", ["evalsha", "eval"])

A = "8b8a1d8e-5a3c-4e0b-9a57-2f1d3c4b5a6e:1"      # <uuid>:<threadId>
A2 = "8b8a1d8e-5a3c-4e0b-9a57-2f1d3c4b5a6e:77"    # same client, other thread
B = "d2c1b0a9-0000-4000-8000-112233445566:1"      # another client
REQ = "0123456789abcdef0123456789abcdef"          # unlock request id (32 hex)

NAME = "myLock"
CHAN = channel_of(NAME)
LATCH = latch_of(NAME, REQ)


def pttl(conn, key):
    return parse(conn.cmd("PTTL", key))


def hgetall(conn, key):
    flat = parse(conn.cmd("HGETALL", key))
    return dict(zip(flat[0::2], flat[1::2]))


def key_type(conn, key):
    return parse(conn.cmd("TYPE", key))


def assert_ttl(conn, key, lease):
    """PTTL of key is within 1.5 s below `lease` ms."""
    t = pttl(conn, key)
    assert lease - 1500 < t <= lease, (key, t, lease)


def lock_state(conn, key, fields, lease=None):
    assert key_type(conn, key) == b"hash"
    assert hgetall(conn, key) == {f.encode(): str(v).encode() for f, v in fields.items()}
    if lease is None:
        assert pttl(conn, key) == -1
    else:
        assert_ttl(conn, key, lease)


def gone(conn, key):
    assert conn.cmd("EXISTS", key) == b":0\r\n"


def vec(prefix):
    return Script.vector(prefix)


# Tests whose every call is one the native path hands to Lua (a wrong-type
# key or an argument Lua turns into an error): the replies must be Lua's.
LUA_FALLBACK_TESTS = {
    "test_rlock_lock_wrong_type", "test_rlock_lock_bad_lease", "test_rlock_unlock_wrong_type",
    "test_rlock_unlock_bad_lease", "test_rlock_unlock_latch_wrong_types",
    "test_rlock_unlock_latch_bad_latch_ttl", "test_rlock_renew_errors",
}


VECTOR_FILES = vector_files()


@pytest.fixture(autouse=True)
def native_path_ran(request, server):
    """On latchd (INFO latchd counts the runs), a test of a script it runs
    natively ran it natively at least once, else these tests would pass on
    Lua alone; a LUA_FALLBACK_TESTS test ran only Lua. A test whose vector
    is absent skips before it runs anything, so there is nothing to check."""
    prefix = getattr(request.node, "callspec", None) and request.node.callspec.params.get("prefix")
    if (server.kind != "latchd" or prefix not in NATIVE_SCRIPTS
            or not any(f.startswith(prefix) for f in VECTOR_FILES)):
        yield
        return
    c = server.raw()
    native_before, lua_before = script_runs(c)
    yield
    native_after, lua_after = script_runs(c)
    c.close()
    if request.node.originalname in LUA_FALLBACK_TESTS:
        assert (native_after, lua_after > lua_before) == (native_before, True), (
            "latchd did not hand every %s call to Lua" % prefix)
    else:
        assert native_after > native_before, "latchd ran no %s script natively" % prefix


@pytest.fixture
def sub(server):
    """A subscriber on the lock channels used below."""
    return Subscriber(server, [CHAN, "other-channel"])


# ---------------------------------------------------------------- every vector

# Every vector the repository knows of (tests/vectors.sha1) plus any other
# file in the folder: one that is absent skips with its reason instead of
# vanishing from the count.
EVERY_VECTOR = sorted(set(KNOWN_VECTORS) | {f[:-len(".lua")] for f in VECTOR_FILES})


@pytest.mark.parametrize("sha", EVERY_VECTOR, ids=[s[:12] for s in EVERY_VECTOR])
def test_every_vector_loads_with_its_sha1(conn, sha):
    body = vector(sha)
    assert sha1hex(body) == sha
    assert conn.cmd("SCRIPT", "LOAD", body) == bulk(sha)
    assert conn.cmd("SCRIPT", "EXISTS", sha) == b"*1\r\n:1\r\n"


def test_all_vectors_at_once(conn):
    if not VECTOR_FILES:
        pytest.skip(NO_VECTORS)
    conn.cmd("SCRIPT", "FLUSH")
    shas = []
    for name in VECTOR_FILES:
        with open(os.path.join(VECTORS_DIR, name), "rb") as f:
            conn.cmd("SCRIPT", "LOAD", f.read())
        shas.append(name[:-4])
    assert parse(conn.cmd("SCRIPT", "EXISTS", *shas)) == [1] * len(shas)
    conn.cmd("SCRIPT", "FLUSH")
    assert parse(conn.cmd("SCRIPT", "EXISTS", *shas)) == [0] * len(shas)


# ---------------------------------------------------------------- RLock: lock

# line of the hexists / pexpire calls (node-redisson's text starts with "\n")
LOCK_LINES = {"9401052d": (1, 1), "dad0f8d6": (1, 1), "149c5a8b": (1, 1), "1aa70d37": (2, 4)}


@VIA
@pytest.mark.parametrize("prefix", list(LOCK_LINES))
def test_rlock_lock_reentrant_and_contended(conn, sub, prefix, via):
    s = vec(prefix)
    assert s.raw(conn, [NAME], ["30000", A], via) == NIL
    lock_state(conn, NAME, {A: 1}, 30000)
    # re-entry by the same owner, with another lease
    assert s.raw(conn, [NAME], ["10000", A], via) == NIL
    lock_state(conn, NAME, {A: 2}, 10000)
    # another owner gets the remaining TTL and changes nothing
    r = parse(s.raw(conn, [NAME], ["30000", B], via))
    assert 8500 < r <= 10000
    r = parse(s.raw(conn, [NAME], ["30000", A2], via))
    assert 8500 < r <= 10000
    lock_state(conn, NAME, {A: 2}, 10000)
    # a lock without TTL answers -1
    conn.cmd("PERSIST", NAME)
    assert s.raw(conn, [NAME], ["30000", B], via) == integer(-1)
    assert s.raw(conn, [NAME], ["30000", A], via) == NIL
    lock_state(conn, NAME, {A: 3}, 30000)
    sub.expect([])


@VIA
@pytest.mark.parametrize("prefix", list(LOCK_LINES))
def test_rlock_lock_two_locks_are_independent(conn, prefix, via):
    s = vec(prefix)
    assert s.raw(conn, ["lock-1"], ["30000", A], via) == NIL
    assert s.raw(conn, ["lock-2"], ["20000", B], via) == NIL
    lock_state(conn, "lock-1", {A: 1}, 30000)
    lock_state(conn, "lock-2", {B: 1}, 20000)


@VIA
@pytest.mark.parametrize("prefix", list(LOCK_LINES))
def test_rlock_lock_wrong_type(conn, prefix, via):
    s = vec(prefix)
    conn.cmd("SET", NAME, "a string")
    assert s.raw(conn, [NAME], ["30000", A], via) == s.err(WRONGTYPE, LOCK_LINES[prefix][0])
    assert conn.cmd("GET", NAME) == bulk("a string")


@VIA
@pytest.mark.parametrize("prefix", list(LOCK_LINES))
def test_rlock_lock_bad_lease(conn, prefix, via):
    s = vec(prefix)
    # the hash is written, then PEXPIRE fails: Redis does not roll back
    assert s.raw(conn, [NAME], ["abc", A], via) == s.err(NOT_INTEGER, LOCK_LINES[prefix][1])
    lock_state(conn, NAME, {A: 1})
    assert s.raw(conn, [NAME], ["1.5", A], via) == s.err(NOT_INTEGER, LOCK_LINES[prefix][1])
    lock_state(conn, NAME, {A: 2})
    # PEXPIRE 0 deletes the key at once
    assert s.raw(conn, [NAME], ["0", A], via) == NIL
    gone(conn, NAME)


@VIA
@pytest.mark.parametrize("prefix", list(LOCK_LINES))
def test_rlock_lock_expires(conn, prefix, via):
    s = vec(prefix)
    assert s.raw(conn, [NAME], ["100", A], via) == NIL
    time.sleep(0.25)
    gone(conn, NAME)
    assert s.raw(conn, [NAME], ["30000", B], via) == NIL
    lock_state(conn, NAME, {B: 1}, 30000)


# ---------------------------------------------------------------- RLock: unlock (3.x)

def hold(conn, owner, count, lease=30000, name=NAME):
    conn.cmd("HSET", name, owner, str(count))
    if lease:
        conn.cmd("PEXPIRE", name, str(lease))


def unlock_argv(prefix, owner, lease="30000", cmd="PUBLISH"):
    argv = ["0", lease, owner]
    if prefix == "778cea8a":
        argv.append(cmd)
    return argv


@VIA
@pytest.mark.parametrize("prefix", ["93cfc048", "3ffe249c", "778cea8a"])
def test_rlock_unlock(conn, sub, prefix, via):
    s = vec(prefix)
    hold(conn, A, 2, lease=50000)
    # not the owner: nil, nothing changes
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, B), via) == NIL
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A2), via) == NIL
    lock_state(conn, NAME, {A: 2}, 50000)
    # partial unlock: 0, count down, TTL reset to the lease
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A, "20000"), via) == integer(0)
    lock_state(conn, NAME, {A: 1}, 20000)
    sub.expect([])
    # full unlock: 1, key deleted, "0" published on the channel
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A), via) == integer(1)
    gone(conn, NAME)
    sub.expect([(CHAN, "0")])


@VIA
def test_rlock_unlock_missing_key_old_script_publishes(conn, sub, via):
    s = vec("93cfc048")      # 3.1 - 3.10.5: a missing key returns 1 and publishes (bug #2018)
    assert s.raw(conn, [NAME, CHAN], ["0", "30000", A], via) == integer(1)
    sub.expect([(CHAN, "0")])
    gone(conn, NAME)


@VIA
@pytest.mark.parametrize("prefix", ["3ffe249c", "778cea8a"])
def test_rlock_unlock_missing_key(conn, sub, prefix, via):
    s = vec(prefix)
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A), via) == NIL
    sub.expect([])
    gone(conn, NAME)


@VIA
@pytest.mark.parametrize("cmd", ["PUBLISH", "publish", "Publish"])
def test_rlock_unlock_publish_command_from_argv(conn, sub, cmd, via):
    s = vec("778cea8a")
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, CHAN], ["0", "30000", A, cmd], via) == integer(1)
    gone(conn, NAME)
    sub.expect([(CHAN, "0")])


@VIA
def test_rlock_unlock_unknown_publish_command(conn, sub, via):
    s = vec("778cea8a")
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, CHAN], ["0", "30000", A, "NOPE"], via) == s.err(
        "ERR Unknown Redis command called from script")
    gone(conn, NAME)             # the DEL before the failing call stays done
    sub.expect([])


@VIA
@pytest.mark.parametrize("prefix", ["93cfc048", "3ffe249c", "778cea8a"])
def test_rlock_unlock_wrong_type(conn, prefix, via):
    s = vec(prefix)
    conn.cmd("SET", NAME, "x")
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A), via) == s.err(WRONGTYPE)
    assert conn.cmd("GET", NAME) == bulk("x")


@VIA
@pytest.mark.parametrize("prefix", ["93cfc048", "3ffe249c", "778cea8a"])
def test_rlock_unlock_bad_lease(conn, prefix, via):
    s = vec(prefix)
    hold(conn, A, 2)
    assert s.raw(conn, [NAME, CHAN], unlock_argv(prefix, A, "abc"), via) == s.err(NOT_INTEGER)
    lock_state(conn, NAME, {A: 1}, 30000)      # HINCRBY done, PEXPIRE failed


# ---------------------------------------------------------------- RLock: unlock with latch (3.24+)

def latch_argv(prefix, owner, lease="30000", cmd="PUBLISH", latch_ttl="13500"):
    if prefix == "68664592":
        return ["0", lease, owner, cmd, latch_ttl]
    return ["0", lease, owner, latch_ttl]        # node-redisson 4a66e59a


LATCH_LINES = {   # (get latch, hexists, pexpire, set latch after partial, set latch after full)
    "68664592": (1, 1, 1, 1, 1),
    "4a66e59a": (2, 6, 11, 12, 17),
}


@VIA
@pytest.mark.parametrize("prefix", list(LATCH_LINES))
def test_rlock_unlock_latch(conn, sub, prefix, via):
    s = vec(prefix)
    keys = [NAME, CHAN, LATCH]
    hold(conn, A, 2)
    # wrong owner: nil, no latch written
    assert s.raw(conn, keys, latch_argv(prefix, B), via) == NIL
    gone(conn, LATCH)
    # partial unlock: 0, latch "0" with its TTL
    assert s.raw(conn, keys, latch_argv(prefix, A, "25000", latch_ttl="13500"), via) == integer(0)
    lock_state(conn, NAME, {A: 1}, 25000)
    assert conn.cmd("GET", LATCH) == bulk("0")
    assert_ttl(conn, LATCH, 13500)
    # the retried call returns the latch value and changes nothing
    assert s.raw(conn, keys, latch_argv(prefix, A), via) == integer(0)
    lock_state(conn, NAME, {A: 1}, 25000)
    sub.expect([])
    # the client deletes the latch; the next unlock is a new request
    conn.cmd("DEL", LATCH)
    assert s.raw(conn, keys, latch_argv(prefix, A, latch_ttl="16000"), via) == integer(1)
    gone(conn, NAME)
    assert conn.cmd("GET", LATCH) == bulk("1")
    assert_ttl(conn, LATCH, 16000)
    sub.expect([(CHAN, "0")])
    # retry after the full unlock: 1 from the latch, no second message
    assert s.raw(conn, keys, latch_argv(prefix, A), via) == integer(1)
    sub.expect([])


@VIA
@pytest.mark.parametrize("prefix", list(LATCH_LINES))
def test_rlock_unlock_latch_present_values(conn, sub, prefix, via):
    s = vec(prefix)
    keys = [NAME, CHAN, LATCH]
    hold(conn, A, 1)
    for value, reply in [("1", integer(1)), ("0", integer(0)), ("42", integer(42)),
                         ("2.7", integer(2)), ("0x10", integer(16)), ("garbage", NIL), ("", NIL)]:
        conn.cmd("SET", LATCH, value)
        assert s.raw(conn, keys, latch_argv(prefix, A), via) == reply, value
    lock_state(conn, NAME, {A: 1}, 30000)      # never touched
    sub.expect([])


@VIA
@pytest.mark.parametrize("prefix", list(LATCH_LINES))
def test_rlock_unlock_latch_missing_lock(conn, sub, prefix, via):
    s = vec(prefix)
    assert s.raw(conn, [NAME, CHAN, LATCH], latch_argv(prefix, A), via) == NIL
    gone(conn, LATCH)
    gone(conn, NAME)
    sub.expect([])


@VIA
@pytest.mark.parametrize("prefix", list(LATCH_LINES))
def test_rlock_unlock_latch_wrong_types(conn, prefix, via):
    s = vec(prefix)
    hold(conn, A, 1)
    conn.cmd("HSET", LATCH, "f", "v")
    assert s.raw(conn, [NAME, CHAN, LATCH], latch_argv(prefix, A), via) == s.err(
        WRONGTYPE, LATCH_LINES[prefix][0])
    conn.cmd("DEL", LATCH)
    conn.cmd("DEL", NAME)
    conn.cmd("SET", NAME, "x")
    assert s.raw(conn, [NAME, CHAN, LATCH], latch_argv(prefix, A), via) == s.err(
        WRONGTYPE, LATCH_LINES[prefix][1])


@VIA
@pytest.mark.parametrize("prefix", list(LATCH_LINES))
def test_rlock_unlock_latch_bad_latch_ttl(conn, sub, prefix, via):
    s = vec(prefix)
    keys = [NAME, CHAN, LATCH]
    hold(conn, A, 2)
    # partial unlock done, then SET ... px 0 fails
    assert s.raw(conn, keys, latch_argv(prefix, A, latch_ttl="0"), via) == s.err(
        "ERR invalid expire time in 'set' command", LATCH_LINES[prefix][3])
    lock_state(conn, NAME, {A: 1}, 30000)
    gone(conn, LATCH)
    # full unlock: DEL and publish happen, then the latch SET fails
    assert s.raw(conn, keys, latch_argv(prefix, A, latch_ttl="abc"), via) == s.err(
        NOT_INTEGER, LATCH_LINES[prefix][4])
    gone(conn, NAME)
    gone(conn, LATCH)
    sub.expect([(CHAN, "0")])


@VIA
@pytest.mark.parametrize("cmd", ["PUBLISH", "publish"])
def test_rlock_unlock_latch_publish_from_argv(conn, sub, cmd, via):
    s = vec("68664592")
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, CHAN, LATCH], latch_argv("68664592", A, cmd=cmd), via) == integer(1)
    sub.expect([(CHAN, "0")])
    hold(conn, A, 1)
    conn.cmd("DEL", LATCH)
    assert s.raw(conn, [NAME, CHAN, LATCH], latch_argv("68664592", A, cmd="NOPE"), via) == s.err(
        "ERR Unknown Redis command called from script")
    gone(conn, NAME)
    gone(conn, LATCH)
    sub.expect([])


def test_rlock_latch_script_ends_with_space(conn):
    body = vec("68664592")
    assert body.body.endswith(b"end; ")
    assert conn.cmd("SCRIPT", "LOAD", body.body.rstrip()) != bulk(body.sha)


# ---------------------------------------------------------------- RLock: renew

RENEW_LINES = {"8e19a1dd": (1, 1), "998172e5": (2, 3)}   # hexists, pexpire


@VIA
@pytest.mark.parametrize("prefix", list(RENEW_LINES))
def test_rlock_renew(conn, prefix, via):
    s = vec(prefix)
    hold(conn, A, 2, lease=5000)
    assert s.raw(conn, [NAME], ["30000", A], via) == integer(1)
    lock_state(conn, NAME, {A: 2}, 30000)
    assert s.raw(conn, [NAME], ["60000", B], via) == integer(0)
    lock_state(conn, NAME, {A: 2}, 30000)
    assert s.raw(conn, ["missing"], ["30000", A], via) == integer(0)
    gone(conn, "missing")


@VIA
@pytest.mark.parametrize("prefix", list(RENEW_LINES))
def test_rlock_renew_errors(conn, prefix, via):
    s = vec(prefix)
    conn.cmd("SET", NAME, "x")
    assert s.raw(conn, [NAME], ["30000", A], via) == s.err(WRONGTYPE, RENEW_LINES[prefix][0])
    conn.cmd("DEL", NAME)
    hold(conn, A, 1, lease=5000)
    assert s.raw(conn, [NAME], ["abc", A], via) == s.err(NOT_INTEGER, RENEW_LINES[prefix][1])
    lock_state(conn, NAME, {A: 1}, 5000)


@VIA
def test_rlock_renew_batched(conn, via):
    s = vec("6a3d3157")
    hold(conn, A, 1, lease=5000, name="l1")
    hold(conn, B, 3, lease=5000, name="l2")
    hold(conn, A2, 1, lease=5000, name="l3")
    reply = s.raw(conn, ["l1", "l2", "l3", "l4"], ["30000", A, A, A2, A], via)
    assert reply == b"*4\r\n:1\r\n:0\r\n:1\r\n:0\r\n"
    lock_state(conn, "l1", {A: 1}, 30000)
    lock_state(conn, "l2", {B: 3}, 5000)
    lock_state(conn, "l3", {A2: 1}, 30000)
    gone(conn, "l4")
    # one key
    assert s.raw(conn, ["l2"], ["45000", B], via) == b"*1\r\n:1\r\n"
    lock_state(conn, "l2", {B: 3}, 45000)
    # no keys: an empty array
    assert s.raw(conn, [], ["30000"], via) == b"*0\r\n"


@VIA
def test_rlock_renew_batched_errors(conn, via):
    s = vec("6a3d3157")
    hold(conn, A, 1, lease=5000, name="l1")
    hold(conn, A, 1, lease=5000, name="l2")
    # fewer owners than keys: l1 is renewed, then hexists(l2, nil) fails
    assert s.raw(conn, ["l1", "l2"], ["30000", A], via) == s.err(
        "ERR Lua redis lib command arguments must be strings or integers")
    lock_state(conn, "l1", {A: 1}, 30000)
    lock_state(conn, "l2", {A: 1}, 5000)
    conn.cmd("SET", "l3", "x")
    assert s.raw(conn, ["l1", "l3"], ["30000", A, A], via) == s.err(WRONGTYPE)


# ---------------------------------------------------------------- RLock: forceUnlock

FORCE = {"7e9c80b3": None, "95d09a0d": None, "605e3382": "PUBLISH"}


@VIA
@pytest.mark.parametrize("prefix", list(FORCE))
def test_rlock_force_unlock(conn, sub, prefix, via):
    s = vec(prefix)
    argv = ["0"] + ([FORCE[prefix]] if FORCE[prefix] else [])
    hold(conn, B, 3)
    assert s.raw(conn, [NAME, CHAN], argv, via) == integer(1)
    gone(conn, NAME)
    sub.expect([(CHAN, "0")])
    assert s.raw(conn, [NAME, CHAN], argv, via) == integer(0)
    sub.expect([])
    # forceUnlock deletes whatever type the key has
    conn.cmd("SET", NAME, "x")
    assert s.raw(conn, [NAME, CHAN], argv, via) == integer(1)
    gone(conn, NAME)
    sub.expect([(CHAN, "0")])


@VIA
def test_rlock_force_unlock_command_from_argv(conn, sub, via):
    s = vec("605e3382")
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, CHAN], ["0", "publish"], via) == integer(1)
    sub.expect([(CHAN, "0")])
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, CHAN], ["0", "NOPE"], via) == s.err(
        "ERR Unknown Redis command called from script")
    gone(conn, NAME)
    sub.expect([])
    # a message on another channel reaches only that channel's subscribers
    hold(conn, A, 1)
    assert s.raw(conn, [NAME, "other-channel"], ["1", "PUBLISH"], via) == integer(1)
    sub.expect([(b"other-channel", b"1")])


# ---------------------------------------------------------------- RLock: a whole life cycle

@VIA
def test_rlock_life_cycle_current_scripts(conn, sub, via):
    lock, unlock, renew, force = vec("149c5a8b"), vec("68664592"), vec("6a3d3157"), vec("605e3382")
    assert lock.raw(conn, [NAME], ["30000", A], via) == NIL
    assert lock.raw(conn, [NAME], ["30000", A], via) == NIL
    waited = parse(lock.raw(conn, [NAME], ["30000", B], via))
    assert 28500 < waited <= 30000
    assert renew.raw(conn, [NAME], ["30000", A], via) == b"*1\r\n:1\r\n"
    assert unlock.raw(conn, [NAME, CHAN, LATCH], ["0", "30000", A, "PUBLISH", "13500"], via) == integer(0)
    conn.cmd("DEL", LATCH)
    assert unlock.raw(conn, [NAME, CHAN, LATCH], ["0", "30000", A, "PUBLISH", "13500"], via) == integer(1)
    conn.cmd("DEL", LATCH)
    sub.expect([(CHAN, "0")])
    assert lock.raw(conn, [NAME], ["30000", B], via) == NIL
    lock_state(conn, NAME, {B: 1}, 30000)
    assert force.raw(conn, [NAME, CHAN], ["0", "PUBLISH"], via) == integer(1)
    sub.expect([(CHAN, "0")])
    assert renew.raw(conn, [NAME], ["30000", B], via) == b"*1\r\n:0\r\n"


# ---------------------------------------------------------------- redlock 4

@VIA
def test_redlock_acquire(conn, via):
    s = vec("e5a322e2")
    keys = ["rl:{r}:1", "rl:{r}:2", "rl:{r}:3"]
    assert s.raw(conn, keys, ["val-1", "10000"], via) == integer(3)
    for k in keys:
        assert conn.cmd("GET", k) == bulk("val-1")
        assert_ttl(conn, k, 10000)
    assert s.raw(conn, keys, ["val-2", "10000"], via) == integer(0)
    conn.cmd("DEL", keys[0], keys[2])
    # one key still exists: nothing is written
    assert s.raw(conn, keys, ["val-2", "20000"], via) == integer(0)
    gone(conn, keys[0])
    gone(conn, keys[2])
    assert conn.cmd("GET", keys[1]) == bulk("val-1")
    assert s.raw(conn, ["single"], ["v", "5000"], via) == integer(1)
    assert_ttl(conn, "single", 5000)


@VIA
def test_redlock_acquire_errors(conn, via):
    s = vec("e5a322e2")
    assert s.raw(conn, ["a", "b"], ["v", "abc"], via) == s.err(NOT_INTEGER, 11)
    gone(conn, "a")
    assert s.raw(conn, ["a", "b"], ["v", "0"], via) == s.err("ERR invalid expire time in 'set' command", 11)
    # wrong type keys "exist" for EXISTS
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["v", "1000"], via) == integer(0)


@VIA
def test_redlock_release(conn, via):
    s = vec("0f0f23b9")
    conn.cmd("SET", "k1", "mine", "PX", "10000")
    conn.cmd("SET", "k2", "theirs", "PX", "10000")
    conn.cmd("SET", "k3", "mine")
    assert s.raw(conn, ["k1", "k2", "k3", "k4"], ["mine"], via) == integer(2)
    gone(conn, "k1")
    gone(conn, "k3")
    assert conn.cmd("GET", "k2") == bulk("theirs")
    assert s.raw(conn, ["k1", "k2"], ["mine"], via) == integer(0)
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["mine"], via) == s.err(WRONGTYPE, 5)


@VIA
def test_redlock_extend(conn, via):
    s = vec("ce46f809")
    conn.cmd("SET", "k1", "mine", "PX", "5000")
    conn.cmd("SET", "k2", "mine", "PX", "5000")
    assert s.raw(conn, ["k1", "k2"], ["mine", "20000"], via) == integer(2)
    assert_ttl(conn, "k1", 20000)
    assert_ttl(conn, "k2", 20000)
    conn.cmd("SET", "k2", "theirs", "PX", "5000")
    assert s.raw(conn, ["k1", "k2"], ["mine", "40000"], via) == integer(0)
    assert_ttl(conn, "k1", 20000)
    assert s.raw(conn, ["k1", "missing"], ["mine", "40000"], via) == integer(0)
    gone(conn, "missing")
    assert s.raw(conn, ["k1"], ["mine", "x"], via) == s.err(NOT_INTEGER, 11)
    assert conn.cmd("GET", "k1") == bulk("mine")


# ---------------------------------------------------------------- redis-semaphore mutex

@VIA
def test_semaphore_refresh(conn, via):
    s = vec("594683e4")
    conn.cmd("SET", "mutex", "id-1", "PX", "5000")
    assert s.raw(conn, ["mutex"], ["id-1", "10000"], via) == integer(1)
    assert_ttl(conn, "mutex", 10000)
    assert s.raw(conn, ["mutex"], ["id-2", "30000"], via) == integer(0)
    assert_ttl(conn, "mutex", 10000)
    assert s.raw(conn, ["missing"], ["id-1", "10000"], via) == integer(0)
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["id-1", "10000"], via) == s.err(WRONGTYPE, 6)
    assert s.raw(conn, ["mutex"], ["id-1", "abc"], via) == s.err(NOT_INTEGER, 9)


@VIA
def test_semaphore_release(conn, via):
    s = vec("7157921a")
    conn.cmd("SET", "mutex", "id-1", "PX", "5000")
    assert s.raw(conn, ["mutex"], ["id-2"], via) == integer(0)
    assert conn.cmd("GET", "mutex") == bulk("id-1")
    assert s.raw(conn, ["mutex"], ["id-1"], via) == integer(1)
    gone(conn, "mutex")
    assert s.raw(conn, ["mutex"], ["id-1"], via) == integer(0)
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["id-1"], via) == s.err(WRONGTYPE, 5)


# ---------------------------------------------------------------- redis-py Lock

@VIA
def test_pylock_extend(conn, via):
    s = vec("a4e87838")
    conn.cmd("SET", "pylock", "tok", "PX", "10000")
    # replace = "1": the TTL becomes the new value
    assert s.raw(conn, ["pylock"], ["tok", "30000", "1"], via) == integer(1)
    assert_ttl(conn, "pylock", 30000)
    # replace = "0": the new time is added to the remaining TTL
    assert s.raw(conn, ["pylock"], ["tok", "20000", "0"], via) == integer(1)
    assert_ttl(conn, "pylock", 50000)
    assert s.raw(conn, ["pylock"], ["other", "20000", "1"], via) == integer(0)
    assert_ttl(conn, "pylock", 50000)
    assert s.raw(conn, ["missing"], ["tok", "20000", "1"], via) == integer(0)
    # no TTL: 0 and nothing changes
    conn.cmd("PERSIST", "pylock")
    assert s.raw(conn, ["pylock"], ["tok", "20000", "1"], via) == integer(0)
    assert pttl(conn, "pylock") == -1
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["tok", "1000", "1"], via) == s.err(WRONGTYPE, 2)
    conn.cmd("PEXPIRE", "pylock", "5000")
    assert s.raw(conn, ["pylock"], ["tok", "abc", "1"], via) == s.err(NOT_INTEGER, 18)
    assert s.raw(conn, ["pylock"], ["tok", "abc", "0"], via) == s.err(
        "ERR user_script:16: attempt to perform arithmetic on field '?' (a string value)", 16)


@VIA
def test_pylock_reacquire(conn, via):
    s = vec("1cac5148")
    conn.cmd("SET", "pylock", "tok", "PX", "10000")
    assert s.raw(conn, ["pylock"], ["tok", "40000"], via) == integer(1)
    assert_ttl(conn, "pylock", 40000)
    assert s.raw(conn, ["pylock"], ["nope", "1000"], via) == integer(0)
    assert_ttl(conn, "pylock", 40000)
    assert s.raw(conn, ["missing"], ["tok", "1000"], via) == integer(0)
    conn.cmd("PERSIST", "pylock")
    assert s.raw(conn, ["pylock"], ["tok", "7000"], via) == integer(1)
    assert_ttl(conn, "pylock", 7000)


@VIA
@pytest.mark.parametrize("prefix,line", [("c3f8721c", 2), ("cf0e94b2", 1)])
def test_token_release(conn, prefix, line, via):
    s = vec(prefix)
    conn.cmd("SET", "tlock", "tok", "PX", "10000")
    assert s.raw(conn, ["tlock"], ["nope"], via) == integer(0)
    assert conn.cmd("GET", "tlock") == bulk("tok")
    assert s.raw(conn, ["tlock"], ["tok"], via) == integer(1)
    gone(conn, "tlock")
    assert s.raw(conn, ["tlock"], ["tok"], via) == integer(0)
    conn.cmd("HSET", "h", "f", "v")
    assert s.raw(conn, ["h"], ["tok"], via) == s.err(WRONGTYPE, line)


@VIA
def test_token_release_with_binary_token(conn, via):
    s = vec("cf0e94b2")
    token = b"\x00\xff\r\ntok"
    conn.cmd("SET", "tlock", token)
    assert s.raw(conn, ["tlock"], [b"\x00\xff\r\ntoK"], via) == integer(0)
    assert s.raw(conn, ["tlock"], [token], via) == integer(1)
    gone(conn, "tlock")


# ---------------------------------------------------------------- RESP3 connections

@VIA
def test_lock_scripts_on_resp3_connection(conn, via):
    conn.cmd("HELLO", "3")
    lock, renew = vec("149c5a8b"), vec("6a3d3157")
    assert lock.raw(conn, [NAME], ["30000", A], via) == b"_\r\n"
    r = lock.raw(conn, [NAME], ["30000", B], via)
    assert r.startswith(b":") and 28500 < parse(r) <= 30000
    assert renew.raw(conn, [NAME, "missing"], ["30000", A, A], via) == b"*2\r\n:1\r\n:0\r\n"
    unlock = vec("68664592")
    assert unlock.raw(conn, [NAME, CHAN, LATCH], ["0", "30000", B, "PUBLISH", "13500"], via) == b"_\r\n"
    assert unlock.raw(conn, [NAME, CHAN, LATCH], ["0", "30000", A, "PUBLISH", "13500"], via) == b":1\r\n"


def test_snapshot_helper(conn):
    # the state helper used by the differential tests
    conn.cmd("HSET", "h", "b", "2", "a", "1")
    conn.cmd("SET", "s", "v", "PX", "10000")
    snap = snapshot(conn, ["h", "s", "none"])
    assert snap["h"] == (b"hash", [(b"a", b"1"), (b"b", b"2")], -1)
    assert snap["s"][:2] == (b"string", b"v") and 9000 < snap["s"][2] <= 10000
    assert snap["none"] == (b"none", None, -2)
