"""Differential tests for latchd's native lock-script fast paths.

For every script latchd runs natively (Redisson RLock lock/unlock/renew/
forceUnlock in all versions, node-redisson's four, the redlock, redis-py,
redis-semaphore and ioredis compare-and-delete / compare-and-pexpire
scripts), a seeded random sequence of operations - several owners,
re-entrancy, short leases with sleeps, wrong owners, missing keys, unlock
latch present/absent, "PUBLISH" in several cases and unknown command names,
wrong-type keys, non-integer and non-positive leases - runs in lock step on:

  * latchd with native scripts on (``--native-scripts yes``),
  * latchd with native scripts off (``--native-scripts no``: every script
    goes through Lua),
  * a real redis-server 7.0,

and after every step the replies, the published messages (seen by a
subscriber on each server) and the state of every key involved (TYPE,
value, PTTL within a tolerance) must agree.

test_latchd_only_* run once, on latchd. test_seeded_sequences_match_reference
runs for both server kinds: the server under test against a separate
reference redis-server (for the "redis" id this checks that the sequences
and the comparison are deterministic)."""

import pytest

from conftest import Server, _cleanup_all
from script_util import (NATIVE_SCRIPTS, NO_VECTORS, LockstepRunner, ScriptRunCheck, SequenceGen,
                         Target, vector_files)

SEEDS = [11, 23, 37]
LENGTH = 40

# ids must not contain "redis" (pytest -k redis selects the reference runs)
SCRIPT_IDS = [p for p in NATIVE_SCRIPTS]


def need_vectors():
    if not vector_files():
        pytest.skip(NO_VECTORS)


def seed_for(focus, seed):
    return int(focus, 16) ^ seed


def reset(*servers):
    for srv in servers:
        c = srv.raw()
        assert c.cmd("FLUSHALL") == b"+OK\r\n"
        assert c.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"
        c.close()


def run_sequences(named_servers, focus, via, seeds=SEEDS, length=LENGTH):
    for seed in seeds:
        servers = [srv for _, srv in named_servers]
        reset(*servers)
        gen = SequenceGen(seed_for(focus, seed), focus)
        ops = gen.sequence(length)
        targets = [Target(name, srv, gen.channels()) for name, srv in named_servers]
        # INFO latchd proves which path ran: the replies alone cannot
        checks = [ScriptRunCheck(srv) for srv in servers if srv.kind == "latchd"]
        try:
            LockstepRunner(targets, gen.keys(), via=via).run(ops)
        finally:
            for srv in servers:
                srv.close_connections()
        calls = sum(1 for op in ops if op.script is not None)
        for check in checks:
            check.check(calls)


@pytest.fixture(scope="module")
def latchd_pair():
    """(latchd with native scripts on, latchd with native scripts off)."""
    native = Server("latchd", ["--native-scripts", "yes"])
    try:
        lua = Server("latchd", ["--native-scripts", "no"])
    except BaseException:
        native.cleanup()
        raise
    yield native, lua
    _cleanup_all((native, lua))


def config_value(srv, name):
    c = srv.raw()
    reply = c.call("CONFIG", "GET", name)
    c.close()
    return dict(zip(reply[0::2], reply[1::2])).get(name.encode())


# ---------------------------------------------------------------- latchd only

def test_latchd_only_native_scripts_config(latchd_pair, latchd_factory):
    native, lua = latchd_pair
    assert config_value(native, "native-scripts") == b"yes"
    assert config_value(lua, "native-scripts") == b"no"
    srv = latchd_factory()
    assert config_value(srv, "native-scripts") == b"yes"      # on by default
    c = srv.raw()
    assert c.cmd("CONFIG", "SET", "native-scripts", "no") == b"+OK\r\n"
    assert config_value(srv, "native-scripts") == b"no"
    assert c.cmd("CONFIG", "SET", "native-scripts", "yes") == b"+OK\r\n"
    assert config_value(srv, "native-scripts") == b"yes"
    assert c.cmd("CONFIG", "SET", "native-scripts", "maybe").startswith(b"-ERR ")
    assert config_value(srv, "native-scripts") == b"yes"


@pytest.mark.parametrize("via", ["evalsha", "eval"])
@pytest.mark.parametrize("focus", NATIVE_SCRIPTS, ids=SCRIPT_IDS)
def test_latchd_only_native_matches_lua(latchd_pair, reference_redis, focus, via):
    need_vectors()
    native, lua = latchd_pair
    run_sequences([("latchd-native", native), ("latchd-lua", lua), ("reference", reference_redis)],
                  focus, via)


@pytest.mark.parametrize("focus", ["149c5a8b", "68664592", "6a3d3157", "0f0f23b9"])
def test_latchd_only_config_set_switches_paths(latchd_factory, reference_redis, focus):
    """CONFIG SET native-scripts on a running server: switching back and forth
    between sequences keeps the results identical to redis-server."""
    need_vectors()
    srv = latchd_factory()
    c = srv.raw()
    for i, mode in enumerate(["no", "yes", "no", "yes"]):
        assert c.cmd("CONFIG", "SET", "native-scripts", mode) == b"+OK\r\n"
        run_sequences([("latchd-" + mode, srv), ("reference", reference_redis)], focus,
                      "evalsha", seeds=[100 + i], length=25)
        c = srv.raw()


# ---------------------------------------------------------------- both kinds

@pytest.mark.parametrize("focus", NATIVE_SCRIPTS, ids=SCRIPT_IDS)
def test_seeded_sequences_match_reference(server, reference_redis, focus):
    need_vectors()
    run_sequences([(server.kind, server), ("reference", reference_redis)], focus, "evalsha",
                  seeds=SEEDS[:2])
