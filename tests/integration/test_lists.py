"""List commands: LPUSH, RPUSH, LPOP, RPOP (with count), LLEN, LINDEX,
LRANGE, LSET, LINSERT, LREM, LTRIM; their errors in Redis's order, RESP2
and RESP3 null shapes, keyspace events, and lists as keys (TYPE, SCAN,
RENAME, EXPIRE, DEL, overwrite) and inside scripts."""

import random
import time

import pytest

from resp_util import parse
import script_util as su
from script_util import array, bulk, error, gone

WRONGTYPE = error(su.WRONGTYPE)
NOT_INT = error(su.NOT_INTEGER)
NOT_POSITIVE = error(su.NOT_POSITIVE)
SYNTAX = error("ERR syntax error")


def lrange(conn, key):
    return parse(conn.cmd("LRANGE", key, 0, -1))


# ---------------------------------------------------------------- push / pop

def test_push_order_and_length(conn, keyevents):
    assert conn.cmd("RPUSH", "l", "a", "b") == b":2\r\n"
    assert conn.cmd("LPUSH", "l", "x", "y", "z") == b":5\r\n"
    assert conn.cmd("LRANGE", "l", 0, -1) == array("z", "y", "x", "a", "b")
    assert conn.cmd("LLEN", "l") == b":5\r\n"
    assert conn.cmd("LLEN", "nokey") == b":0\r\n"
    assert conn.cmd("TYPE", "l") == b"+list\r\n"
    keyevents.expect(("rpush", "l"), ("lpush", "l"))


def test_pop_single_and_counted(conn, keyevents):
    conn.cmd("RPUSH", "l", "a", "b", "c", "d", "e")
    keyevents.take()
    assert conn.cmd("LPOP", "l") == bulk("a")
    assert conn.cmd("RPOP", "l") == bulk("e")
    assert conn.cmd("LPOP", "l", 2) == array("b", "c")
    assert conn.cmd("LPOP", "l", 0) == b"*0\r\n"
    keyevents.expect(("lpop", "l"), ("rpop", "l"), ("lpop", "l"))
    # a count past the end pops what there is and deletes the emptied key
    assert conn.cmd("RPOP", "l", 10) == array("d")
    keyevents.expect(("rpop", "l"), ("del", "l"))
    gone(conn, "l")
    conn.cmd("RPUSH", "l", "1", "2", "3")
    assert conn.cmd("RPOP", "l", 2) == array("3", "2")   # from the tail inwards
    assert conn.cmd("LPOP", "l") == bulk("1")
    gone(conn, "l")


def test_pop_missing_key_shapes(conn):
    assert conn.cmd("LPOP", "nokey") == b"$-1\r\n"
    assert conn.cmd("RPOP", "nokey", 3) == b"*-1\r\n"
    assert conn.cmd("LPOP", "nokey", 0) == b"*-1\r\n"   # the key is looked at first
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert conn.cmd("LPOP", "nokey") == b"_\r\n"
    assert conn.cmd("RPOP", "nokey", 3) == b"_\r\n"


def test_pop_count_errors(conn):
    conn.cmd("RPUSH", "l", "a")
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LPOP", "l", "abc") == NOT_POSITIVE
    assert conn.cmd("RPOP", "l", -1) == NOT_POSITIVE
    assert conn.cmd("LPOP", "l", 1, 2) == b"-ERR wrong number of arguments for 'lpop' command\r\n"
    assert conn.cmd("LPOP", "s") == WRONGTYPE
    assert conn.cmd("LPOP", "s", 0) == WRONGTYPE
    assert conn.cmd("LPOP", "s", "abc") == NOT_POSITIVE   # the count comes first
    assert conn.cmd("LPOP") == b"-ERR wrong number of arguments for 'lpop' command\r\n"
    assert conn.cmd("RPUSH", "l") == b"-ERR wrong number of arguments for 'rpush' command\r\n"
    assert lrange(conn, "l") == [b"a"]


def test_binary_and_empty_elements(conn):
    weird = b"\x00\r\n\xff"
    assert conn.cmd("RPUSH", b"k\x00", weird, b"", b"x" * 70000) == b":3\r\n"
    assert conn.cmd("LINDEX", b"k\x00", 0) == bulk(weird)
    assert conn.cmd("LINDEX", b"k\x00", 1) == b"$0\r\n\r\n"
    assert conn.cmd("RPOP", b"k\x00") == bulk(b"x" * 70000)
    assert conn.cmd("LREM", b"k\x00", 0, b"") == b":1\r\n"
    assert conn.cmd("LRANGE", b"k\x00", 0, -1) == array(weird)


# ---------------------------------------------------------------- reads

def test_lindex(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    conn.cmd("SET", "s", "x")
    cases = [(0, bulk("a")), (2, bulk("c")), (3, b"$-1\r\n"), (-1, bulk("c")),
             (-3, bulk("a")), (-4, b"$-1\r\n"), ("-9223372036854775808", b"$-1\r\n")]
    for idx, want in cases:
        assert conn.cmd("LINDEX", "l", idx) == want, idx
    assert conn.cmd("LINDEX", "l", "abc") == NOT_INT
    # the key before the index: no error for a missing key, WRONGTYPE first
    assert conn.cmd("LINDEX", "nokey", "abc") == b"$-1\r\n"
    assert conn.cmd("LINDEX", "s", "abc") == WRONGTYPE


@pytest.mark.parametrize("start,stop,want", [
    (0, -1, "abcde"), (1, 3, "bcd"), (-2, -1, "de"), (-100, 1, "ab"), (3, 100, "de"),
    (4, 4, "e"), (5, 10, ""), (3, 2, ""), (-1, -2, ""), (0, -6, ""), (-6, -5, "a"), (-7, -6, ""),
    ("-9223372036854775808", "9223372036854775807", "abcde"),
])
def test_lrange_index_clipping(conn, start, stop, want):
    conn.cmd("RPUSH", "l", *"abcde")
    assert conn.cmd("LRANGE", "l", start, stop) == array(*want)


def test_lrange_errors(conn):
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LRANGE", "nokey", 0, -1) == b"*0\r\n"
    assert conn.cmd("LRANGE", "nokey", "a", "b") == NOT_INT   # indexes first
    assert conn.cmd("LRANGE", "s", 0, -1) == WRONGTYPE
    assert conn.cmd("LRANGE", "s", 0, "1.5") == NOT_INT


# ---------------------------------------------------------------- writes

def test_lset(conn, keyevents):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    conn.cmd("SET", "s", "x")
    keyevents.take()
    assert conn.cmd("LSET", "l", 1, "B") == b"+OK\r\n"
    assert conn.cmd("LSET", "l", -1, "C" * 100) == b"+OK\r\n"
    assert conn.cmd("LSET", "l", 3, "x") == b"-ERR index out of range\r\n"
    assert conn.cmd("LSET", "l", "a", "x") == NOT_INT
    assert conn.cmd("LSET", "nokey", 0, "x") == b"-ERR no such key\r\n"
    assert conn.cmd("LSET", "nokey", "a", "x") == b"-ERR no such key\r\n"
    assert conn.cmd("LSET", "s", "a", "x") == WRONGTYPE
    assert lrange(conn, "l") == [b"a", b"B", b"C" * 100]
    keyevents.expect(("lset", "l"), ("lset", "l"))


def test_linsert(conn, keyevents):
    conn.cmd("RPUSH", "l", "a", "b", "a")
    conn.cmd("SET", "s", "x")
    keyevents.take()
    assert conn.cmd("LINSERT", "l", "BEFORE", "a", "0") == b":4\r\n"
    assert conn.cmd("LINSERT", "l", "after", "a", "1") == b":5\r\n"   # the first pivot
    assert conn.cmd("LINSERT", "l", "after", "zz", "1") == b":-1\r\n"
    assert lrange(conn, "l") == [b"0", b"a", b"1", b"b", b"a"]
    keyevents.expect(("linsert", "l"), ("linsert", "l"))
    assert conn.cmd("LINSERT", "nokey", "before", "a", "b") == b":0\r\n"
    assert conn.cmd("LINSERT", "nokey", "middle", "a", "b") == SYNTAX
    assert conn.cmd("LINSERT", "s", "middle", "a", "b") == SYNTAX
    assert conn.cmd("LINSERT", "s", "before", "a", "b") == WRONGTYPE
    gone(conn, "nokey")


def test_lrem(conn, keyevents):
    conn.cmd("RPUSH", "l", *"xaxbxcx")
    keyevents.take()
    assert conn.cmd("LREM", "l", 2, "x") == b":2\r\n"
    assert b"".join(lrange(conn, "l")) == b"abxcx"
    assert conn.cmd("LREM", "l", -1, "x") == b":1\r\n"
    assert b"".join(lrange(conn, "l")) == b"abxc"
    assert conn.cmd("LREM", "l", 0, "nope") == b":0\r\n"
    keyevents.expect(("lrem", "l"), ("lrem", "l"))
    assert conn.cmd("LREM", "l", "-9223372036854775808", "x") == b":1\r\n"
    assert conn.cmd("LREM", "l", 0, "a") == b":1\r\n"
    assert conn.cmd("LREM", "l", 0, "b") == b":1\r\n"
    assert conn.cmd("LREM", "l", 0, "c") == b":1\r\n"
    keyevents.expect(("lrem", "l"), ("lrem", "l"), ("lrem", "l"), ("lrem", "l"), ("del", "l"))
    gone(conn, "l")
    assert conn.cmd("LREM", "nokey", "abc", "x") == NOT_INT
    assert conn.cmd("LREM", "nokey", 0, "x") == b":0\r\n"
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LREM", "s", 0, "x") == WRONGTYPE


@pytest.mark.parametrize("start,stop,want", [
    (1, 2, "bc"), (0, -1, "abcde"), (-2, 100, "de"), (3, 1, None), (5, 9, None), (-100, 0, "a"),
])
def test_ltrim(conn, keyevents, start, stop, want):
    conn.cmd("RPUSH", "l", *"abcde")
    keyevents.take()
    assert conn.cmd("LTRIM", "l", start, stop) == b"+OK\r\n"
    if want is None:
        gone(conn, "l")
        keyevents.expect(("ltrim", "l"), ("del", "l"))
    else:
        assert b"".join(lrange(conn, "l")) == want.encode()
        keyevents.expect(("ltrim", "l"))


def test_ltrim_errors(conn):
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LTRIM", "nokey", 0, 1) == b"+OK\r\n"
    assert conn.cmd("LTRIM", "nokey", "a", 1) == NOT_INT
    assert conn.cmd("LTRIM", "s", 0, 1) == WRONGTYPE
    gone(conn, "nokey")


# ---------------------------------------------------------------- types

LIST_COMMANDS = [("LPUSH", "k", "v"), ("RPUSH", "k", "v"), ("LPOP", "k"), ("RPOP", "k", 1),
                 ("LLEN", "k"), ("LINDEX", "k", 0), ("LRANGE", "k", 0, 1), ("LSET", "k", 0, "v"),
                 ("LINSERT", "k", "before", "a", "b"), ("LREM", "k", 0, "v"), ("LTRIM", "k", 0, 1)]


@pytest.mark.parametrize("cmd", LIST_COMMANDS, ids=[c[0] for c in LIST_COMMANDS])
def test_wrongtype_on_other_types(conn, cmd):
    for setup in (("SET", "k", "x"), ("HSET", "k", "f", "v"), ("ZADD", "k", 1, "m")):
        conn.cmd("DEL", "k")
        conn.cmd(*setup)
        assert conn.cmd(*cmd) == WRONGTYPE, setup


def test_other_commands_on_a_list(conn):
    conn.cmd("RPUSH", "l", "a")
    for cmd in (("GET", "l"), ("HGET", "l", "f"), ("INCR", "l"), ("ZADD", "l", 1, "m"),
                ("ZSCORE", "l", "m"), ("GETDEL", "l"), ("HSET", "l", "f", "v")):
        assert conn.cmd(*cmd) == WRONGTYPE, cmd
    assert conn.cmd("SET", "l", "now a string") == b"+OK\r\n"
    assert conn.cmd("TYPE", "l") == b"+string\r\n"


def test_list_as_a_key(conn):
    conn.cmd("RPUSH", "l1", "a", "b")
    conn.cmd("RPUSH", "l2", "c")
    conn.cmd("SET", "s", "x")
    assert sorted(parse(conn.cmd("SCAN", 0, "TYPE", "list", "COUNT", 100))[1]) == [b"l1", b"l2"]
    assert parse(conn.cmd("SCAN", 0, "TYPE", "string", "COUNT", 100))[1] == [b"s"]
    assert conn.cmd("RENAME", "l1", "l3") == b"+OK\r\n"
    assert conn.cmd("LRANGE", "l3", 0, -1) == array("a", "b")
    assert conn.cmd("PEXPIRE", "l3", 100000) == b":1\r\n"
    assert 0 < parse(conn.cmd("PTTL", "l3")) <= 100000
    assert conn.cmd("RPUSH", "l3", "c") == b":3\r\n"                  # TTL kept
    assert 0 < parse(conn.cmd("PTTL", "l3")) <= 100000
    assert conn.cmd("RENAME", "l3", "l2") == b"+OK\r\n"               # replaces a list
    assert conn.cmd("LRANGE", "l2", 0, -1) == array("a", "b", "c")
    assert conn.cmd("DBSIZE") == b":2\r\n"
    assert b"db0:keys=2,expires=1," in conn.cmd("INFO", "keyspace")
    assert conn.cmd("DEL", "l2", "s") == b":2\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"


def test_expired_list_is_gone(conn):
    conn.cmd("RPUSH", "l", "a")
    conn.cmd("PEXPIRE", "l", 1)
    time.sleep(0.05)
    assert conn.cmd("LLEN", "l") == b":0\r\n"
    assert conn.cmd("LPUSH", "l", "b") == b":1\r\n"
    assert conn.cmd("PTTL", "l") == b":-1\r\n"


# ---------------------------------------------------------------- bigger lists

def apply(conn, model, rng):
    """One random command on list "big" and on the Python model; returns
    the reply and what it must be."""
    r = rng.random()
    n = len(model)
    v = rng.choice(["a", "b", "c", "x" * rng.choice([1, 300, 9000])])
    if r < 0.3:
        vals = [rng.choice("abc") for _ in range(rng.randint(1, 60))]
        if rng.random() < 0.5:
            model[:0] = reversed(vals)
            return conn.cmd("LPUSH", "big", *vals), b":%d\r\n" % len(model)
        model.extend(vals)
        return conn.cmd("RPUSH", "big", *vals), b":%d\r\n" % len(model)
    if r < 0.45:
        cnt = rng.randint(1, 40)
        left = rng.random() < 0.5
        got = model[:cnt] if left else model[::-1][:cnt]
        if left:
            del model[:len(got)]
        else:
            del model[n - len(got):]
        want = array(*got) if got else b"*-1\r\n"
        return conn.cmd("LPOP" if left else "RPOP", "big", cnt), want
    if r < 0.55 and n:
        i = rng.randrange(-n, n)
        model[i] = v
        return conn.cmd("LSET", "big", i, v), b"+OK\r\n"
    if r < 0.65:
        pivot, after = rng.choice("abc"), rng.random() < 0.5
        if pivot not in model:
            return conn.cmd("LINSERT", "big", "AFTER" if after else "BEFORE", pivot, v), (
                b":-1\r\n" if n else b":0\r\n")
        model.insert(model.index(pivot) + after, v)
        return conn.cmd("LINSERT", "big", "AFTER" if after else "BEFORE", pivot, v), (
            b":%d\r\n" % len(model))
    if r < 0.8:
        target, count = rng.choice("abc"), rng.randint(-5, 5)
        idx = [i for i, e in enumerate(model) if e == target]
        if count < 0:
            idx = idx[::-1][:-count]
        elif count > 0:
            idx = idx[:count]
        for i in sorted(idx, reverse=True):
            del model[i]
        return conn.cmd("LREM", "big", count, target), b":%d\r\n" % len(idx)
    if r < 0.85 and n:
        start, stop = rng.randint(-n, n), rng.randint(-n, n)
        kept = model[slice(*clip(start, stop, n))]
        model[:] = kept
        return conn.cmd("LTRIM", "big", start, stop), b"+OK\r\n"
    start, stop = rng.randint(-n - 5, n + 5), rng.randint(-n - 5, n + 5)
    return conn.cmd("LRANGE", "big", start, stop), array(*model[slice(*clip(start, stop, n))])


def clip(start, stop, n):
    """Redis's index clipping as a Python slice (start, stop)."""
    start = start + n if start < 0 else start
    stop = stop + n if stop < 0 else stop
    start = max(start, 0)
    if start > stop or start >= n:
        return 0, 0
    return start, min(stop, n - 1) + 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_against_a_model(conn, seed):
    """Hundreds of elements and 9000-byte ones: latchd's chunked lists
    must give every reply exactly as redis-server does."""
    rng = random.Random(seed)
    model = []
    for step in range(400):
        got, want = apply(conn, model, rng)
        assert got == want, (step, got[:200], want[:200])
        assert conn.cmd("LLEN", "big") == b":%d\r\n" % len(model)
    assert conn.cmd("LRANGE", "big", 0, -1) == array(*model)


# ---------------------------------------------------------------- scripts

def test_lists_from_a_script(conn):
    body = ("redis.call('rpush', KEYS[1], 'a', 'b', 'c'); "
            "local r = redis.call('lrange', KEYS[1], 0, -1); "
            "return {#r, redis.call('lindex', KEYS[1], -1), redis.call('lpop', KEYS[1], 5), "
            "redis.call('lpop', KEYS[1])}")
    # lpop of the emptied (deleted) key is nil: false in Lua, a nil bulk back
    assert conn.cmd("EVAL", body, 1, "l") == (
        b"*4\r\n:3\r\n$1\r\nc\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$-1\r\n")
    gone(conn, "l")


# ---------------------------------------------------------------- memory (latchd)

def used_memory(conn):
    info = parse(conn.cmd("INFO", "memory")).decode()
    return int(info.split("used_memory:")[1].split("\r\n")[0])


def test_latchd_only_memory_of_small_lists_and_zsets(latchd_factory):
    """INFO used_memory counts list and zset values, a small one costs
    about its bytes (no allocation per element), and it all comes back."""
    conn = latchd_factory().raw()
    base = used_memory(conn)
    member = "6f1d8a2e-5a3c-4e0b-9a57-2f1d3c4b5a6e:1"   # 38 bytes, like a lock owner
    for i in range(200):
        conn.cmd("RPUSH", "l%d" % i, *[member] * 100)
        conn.cmd("ZADD", "z%d" % i, *[x for j in range(100) for x in (1700000000000 + j, "%s%d" % (member, j))])
    per_list = (used_memory(conn) - base) / 400
    # 100 elements of ~40 bytes: one packed buffer, plus the key entry
    assert per_list < 100 * (40 + 10) + 200, per_list
    assert conn.cmd("FLUSHALL") == b"+OK\r\n"
    assert used_memory(conn) == base
