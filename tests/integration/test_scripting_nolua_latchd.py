"""latchd built with -DLATCHD_LUA=OFF (latchd only; scripts/test runs this
file against build-nolua/latchd with LATCHD_NOLUA=1): the native lock
scripts still run by SHA1, anything that needs Lua gets a NOSCRIPT error."""
import os

import pytest

from script_util import vector as vector_text

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
    assert nolua.cmd("SCRIPT", "LOAD", "return 1").startswith(b"$40\r\n")


def test_nolua_native_script_needing_lua_is_refused(nolua):
    reply = nolua.cmd("EVAL", vector_text(LOCK), "1", "lk", "not-a-number", "a:1")
    assert reply.startswith(b"-NOSCRIPT This latchd was built without Lua: script " + LOCK.encode())
    assert nolua.cmd("EXISTS", "lk") == b":0\r\n"
