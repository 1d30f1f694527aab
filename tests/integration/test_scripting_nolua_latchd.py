"""latchd built with -DLATCHD_LUA=OFF (latchd only; scripts/test runs this
file against build-nolua/latchd with LATCHD_NOLUA=1): the native lock
scripts still run by SHA1, anything that needs Lua gets a NOSCRIPT error."""
import os

import pytest

from resp_util import parse
from script_util import script_runs, vector as vector_text
from test_dump_restore import crc64

pytestmark = pytest.mark.skipif(os.environ.get("LATCHD_NOLUA") != "1",
                                reason="needs a -DLATCHD_LUA=OFF latchd (scripts/test runs it)")

LOCK = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
RENEW = "8e19a1ddbdee9138df9f32a480c57addab4353d1"
FENCED = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45"
FENCED_NIL = "46b5551ba403d6152a7a6eca122e08728d6c8c66"


@pytest.fixture
def nolua(latchd_factory):
    return latchd_factory().raw()


def test_nolua_native_lock_scripts_run(nolua):
    body = vector_text(LOCK)
    assert nolua.cmd("SCRIPT", "LOAD", body) == b"$40\r\n" + LOCK.encode() + b"\r\n"
    assert nolua.cmd("EVALSHA", LOCK, "1", "lk", "30000", "a:1") == b"$-1\r\n"
    assert nolua.cmd("EVAL", body, "1", "lk", "30000", "a:1") == b"$-1\r\n"
    reply = nolua.cmd("EVALSHA", LOCK, "1", "lk", "30000", "b:1")
    assert reply.startswith(b":") and 29000 < int(reply[1:]) <= 30000
    assert nolua.cmd("HGET", "lk", "a:1") == b"$1\r\n2\r\n"
    assert nolua.cmd("EVAL", vector_text(RENEW), "1", "lk", "10000", "a:1") == b":1\r\n"
    assert script_runs(nolua) == (4, 0)


def test_nolua_fenced_lock_runs_natively(nolua):
    """Redisson RFencedLock's acquire needs no Lua either: a token per
    acquire, re-entries included; a counter INCR would refuse needs Lua."""
    token_reply, nil_reply = (vector_text(FENCED), vector_text(FENCED_NIL))
    keys = ("2", "fl", "redisson_lock_token:{fl}")
    assert nolua.cmd("EVAL", token_reply, *keys, "30000", "a:1") == b"*2\r\n:-1\r\n:1\r\n"
    assert nolua.cmd("EVAL", nil_reply, *keys, "30000", "a:1") == b"$-1\r\n"
    reply = nolua.cmd("EVAL", token_reply, *keys, "30000", "b:1")
    assert reply.startswith(b"*2\r\n:") and reply.endswith(b"\r\n:-1\r\n")
    assert nolua.cmd("GET", "redisson_lock_token:{fl}") == b"$1\r\n2\r\n"
    assert nolua.cmd("HGET", "fl", "a:1") == b"$1\r\n2\r\n"
    nolua.cmd("DEL", "fl")
    nolua.cmd("SET", "redisson_lock_token:{fl}", "not a number")
    reply = nolua.cmd("EVAL", token_reply, *keys, "30000", "a:1")
    assert reply.startswith(b"-NOSCRIPT This latchd was built without Lua: script " + FENCED.encode())
    assert nolua.cmd("EXISTS", "fl") == b":0\r\n"


def test_nolua_other_scripts_are_refused(nolua):
    reply = nolua.cmd("EVAL", "return 1", "0")
    assert reply.startswith(b"-NOSCRIPT This latchd was built without Lua and has no native")
    assert script_runs(nolua) == (0, 1)   # handed to the engine, which refuses it
    assert nolua.cmd("SCRIPT", "LOAD", "return 1").startswith(b"$40\r\n")


def test_nolua_native_script_needing_lua_is_refused(nolua):
    reply = nolua.cmd("EVAL", vector_text(LOCK), "1", "lk", "not-a-number", "a:1")
    assert reply.startswith(b"-NOSCRIPT This latchd was built without Lua: script " + LOCK.encode())
    assert nolua.cmd("EXISTS", "lk") == b":0\r\n"


# Every current lock-family script (test_lock_family.py) and whether latchd
# runs it natively: in a Lua-less latchd the native ones still answer, the
# others are refused. (object, script, native?)
LOCK_FAMILY_PATHS = [
    ("RLock/RFencedLock/RNonReentrantLock unlock", "68664592", True),
    ("RLock watchdog (LockTask)", "6a3d3157", True),
    ("RSpinLock lock", "dad0f8d6", True),
    ("RFencedLock lock", FENCED[:8], True),
    ("RFencedLock lock (nil reply)", FENCED_NIL[:8], True),
    ("RSpinLock unlock", "73ac2729", False),
    ("RSpinLock forceUnlock", "51b433c3", False),
    ("RNonReentrantLock lock", "3daa7be6", False),
    ("RFairLock lock", "8f6ed299", False),
    ("RFairLock tryLock", "d20501c2", False),
    ("RFairLock acquireFailed", "d1ddef65", False),
    ("RFairLock unlock", "367f80bd", False),
    ("RFairLock forceUnlock", "71ed11d4", False),
    ("RNonReentrantFairLock lock", "46724422", False),
    ("RNonReentrantFairLock tryLock", "5bea9498", False),
    ("RReadLock lock", "95553a6f", False),
    ("RReadLock unlock", "6e1b10e1", False),
    ("RReadLock forceUnlock", "27dbe744", False),
    ("RReadLock renew (ReadLockTask)", "38d2b478", False),
    ("RReadWriteLock isLocked", "8ad44f1b", False),
    ("RWriteLock lock", "6306ba3b", False),
    ("RWriteLock unlock", "21f5fb0f", False),
    ("RWriteLock forceUnlock", "2e2cb2a3", False),
    ("RSemaphore trySetPermits", "38bf9988", False),
    ("RSemaphore/RPermitExpirableSemaphore trySetPermits", "241ce4e8", False),
    ("RSemaphore tryAcquire", "c7dc9d18", False),
    ("RSemaphore release", "ae275824", False),
    ("RSemaphore addPermits", "98238d40", False),
    ("RSemaphore drainPermits", "c87766d5", False),
    ("RSemaphore releaseIfExists", "68838024", False),
    ("RPermitExpirableSemaphore tryAcquire", "992c96b0", False),
    ("RPermitExpirableSemaphore tryRelease", "cf3ab77b", False),
    ("RPermitExpirableSemaphore availablePermits", "26b3972b", False),
    ("RPermitExpirableSemaphore getPermits", "e242db5c", False),
    ("RPermitExpirableSemaphore acquiredPermits", "6f0b0be7", False),
    ("RPermitExpirableSemaphore addPermits", "ec6fb1cd", False),
    ("RPermitExpirableSemaphore setPermits", "494d8561", False),
    ("RPermitExpirableSemaphore updateLeaseTime", "2298b02c", False),
    ("RPermitExpirableSemaphore getLeaseTime", "8be95cb5", False),
    ("RCountDownLatch trySetCount", "2a52d54a", False),
    ("RCountDownLatch countDown", "38060fab", False),
    ("RCountDownLatch delete", "47aed1b8", False),
    ("redis-semaphore acquire", "43ebdb49", False),
    ("redis-semaphore refresh", "999a49a1", False),
    ("redis-semaphore multi acquire", "10c1c2e0", False),
    ("redis-semaphore multi release", "0bd1010c", False),
]


NO_NATIVE = b"-NOSCRIPT This latchd was built without Lua and has no native implementation"


@pytest.mark.parametrize("what,prefix,native", LOCK_FAMILY_PATHS,
                         ids=["%s-%s" % (p, "native" if n else "lua") for _, p, n in LOCK_FAMILY_PATHS])
def test_nolua_lock_family_paths(nolua, what, prefix, native):
    """A Lua-less latchd says whether it has a native implementation: a
    native script answers (or, for arguments it leaves to Lua - RLock's
    unlock while PUBLISH is missing - says it runs natively); any other
    is refused as having none."""
    reply = nolua.cmd("EVAL", vector_text(prefix), "2", "fam-a", "fam-b", "30000", "owner:1")
    assert reply.startswith(NO_NATIVE) != native, (what, reply)


def test_nolua_functions_say_they_need_lua(nolua):
    code = "#!lua name=l\nredis.register_function('f', function() return 1 end)"
    assert nolua.cmd("FUNCTION", "LOAD", code) == (
        b"-ERR This latchd was built without Lua: functions need Lua\r\n")
    assert nolua.cmd("FUNCTION", "LIST") == b"*0\r\n"
    assert nolua.cmd("FCALL", "f", "0") == b"-ERR Function not found\r\n"
    # a payload of a Lua build (or of redis-server) is refused the same way
    body = code.encode()
    payload = b"\xf5" + bytes([0x40 | (len(body) >> 8), len(body) & 0xff]) + body + b"\x0a\x00"
    payload += crc64(payload).to_bytes(8, "little")
    assert nolua.cmd("FUNCTION", "RESTORE", payload) == (
        b"-ERR This latchd was built without Lua: functions need Lua\r\n")
    assert nolua.cmd("FUNCTION", "RESTORE", b"x" + payload[1:]).startswith(b"-ERR DUMP payload")


def test_nolua_info_has_no_lua_vm(nolua):
    """No VM: its memory is 0, not the ~32 KiB of an empty Lua state a
    build with Lua shows; the cached scripts still count."""
    nolua.cmd("SCRIPT", "LOAD", vector_text(LOCK))
    text = parse(nolua.cmd("INFO", "memory")).decode()
    fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
    for name in ("used_memory_lua", "used_memory_vm_eval", "used_memory_vm_functions", "used_memory_vm_total"):
        assert fields[name] == "0", name
    assert fields["used_memory_lua_human"] == "0B"
    assert fields["number_of_cached_scripts"] == "1"
    assert int(fields["used_memory_scripts_eval"]) > len(vector_text(LOCK))
