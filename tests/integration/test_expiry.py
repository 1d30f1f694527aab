"""Expiry: EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT (+NX/XX/GT/LT), TTL, PTTL,
EXPIRETIME, PEXPIRETIME, PERSIST, lazy and active expiration."""

import time

import pytest

from resp_util import encode_command, parse, wait_for

NOT_INT = b"-ERR value is not an integer or out of range\r\n"
FUTURE_S = 4102444800          # 2100-01-01
FUTURE_MS = FUTURE_S * 1000


def ttl(conn, key):
    return parse(conn.cmd("TTL", key))


def pttl(conn, key):
    return parse(conn.cmd("PTTL", key))


# ---------------------------------------------------------------- TTL / PTTL basics

def test_ttl_missing_and_persistent(conn):
    assert conn.cmd("TTL", "nope") == b":-2\r\n"
    assert conn.cmd("PTTL", "nope") == b":-2\r\n"
    conn.cmd("SET", "k", "v")
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("PTTL", "k") == b":-1\r\n"


def test_expire_sets_ttl(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "100") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":100\r\n"
    assert 99000 < pttl(conn, "k") <= 100000


def test_pexpire_sets_ttl(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("PEXPIRE", "k", "100000") == b":1\r\n"
    assert 99000 < pttl(conn, "k") <= 100000
    assert ttl(conn, "k") == 100


def test_ttl_rounds_to_nearest_second(conn):
    # TTL = (pttl + 500) / 1000
    conn.cmd("SET", "a", "v", "PX", "2600")
    conn.cmd("SET", "b", "v", "PX", "2400")
    conn.cmd("SET", "c", "v", "PX", "400")
    assert conn.cmd("TTL", "a") == b":3\r\n"
    assert conn.cmd("TTL", "b") == b":2\r\n"
    assert conn.cmd("TTL", "c") == b":0\r\n"


def test_expire_on_missing_key(conn):
    for cmd, arg in (("EXPIRE", "10"), ("PEXPIRE", "10000"),
                     ("EXPIREAT", str(FUTURE_S)), ("PEXPIREAT", str(FUTURE_MS))):
        assert conn.cmd(cmd, "nope", arg) == b":0\r\n"
    assert conn.cmd("EXISTS", "nope") == b":0\r\n"


def test_expireat_and_expiretime(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIREAT", "k", str(FUTURE_S)) == b":1\r\n"
    assert conn.cmd("EXPIRETIME", "k") == b":%d\r\n" % FUTURE_S
    assert conn.cmd("PEXPIRETIME", "k") == b":%d\r\n" % FUTURE_MS


def test_pexpireat_and_pexpiretime(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("PEXPIREAT", "k", str(FUTURE_MS + 123)) == b":1\r\n"
    assert conn.cmd("PEXPIRETIME", "k") == b":%d\r\n" % (FUTURE_MS + 123)


def test_expiretime_rounds_to_nearest_second(conn):
    conn.cmd("SET", "a", "v")
    conn.cmd("SET", "b", "v")
    conn.cmd("PEXPIREAT", "a", str(FUTURE_MS + 499))
    conn.cmd("PEXPIREAT", "b", str(FUTURE_MS + 500))
    assert conn.cmd("EXPIRETIME", "a") == b":%d\r\n" % FUTURE_S
    assert conn.cmd("EXPIRETIME", "b") == b":%d\r\n" % (FUTURE_S + 1)


def test_expiretime_missing_and_persistent(conn):
    assert conn.cmd("EXPIRETIME", "nope") == b":-2\r\n"
    assert conn.cmd("PEXPIRETIME", "nope") == b":-2\r\n"
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRETIME", "k") == b":-1\r\n"
    assert conn.cmd("PEXPIRETIME", "k") == b":-1\r\n"


def test_expiretime_matches_relative_expire(conn):
    conn.cmd("SET", "k", "v")
    before = int(time.time() * 1000)
    conn.cmd("PEXPIRE", "k", "50000")
    after = int(time.time() * 1000)
    at = parse(conn.cmd("PEXPIRETIME", "k"))
    assert before + 50000 - 5 <= at <= after + 50000 + 5


def test_expire_on_hash(conn):
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("EXPIRE", "h", "100") == b":1\r\n"
    assert conn.cmd("TTL", "h") == b":100\r\n"
    conn.cmd("HSET", "h", "g", "w")      # modifying a hash keeps its TTL
    conn.cmd("HDEL", "h", "f")
    conn.cmd("HINCRBY", "h", "n", "1")
    assert 99 <= ttl(conn, "h") <= 100


def test_expire_via_client(r):
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert r.ttl("k") == 100
    assert r.pexpire("k", 50000) is True
    assert 49000 < r.pttl("k") <= 50000
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.expire("nope", 10) is False


# ---------------------------------------------------------------- PERSIST

def test_persist(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("PERSIST", "k") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("PERSIST", "k") == b":0\r\n"
    assert conn.cmd("PERSIST", "nope") == b":0\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- zero / negative / past

@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "0"), ("EXPIRE", "-1"), ("PEXPIRE", "0"), ("PEXPIRE", "-100"),
    ("EXPIREAT", "0"), ("EXPIREAT", "1"), ("PEXPIREAT", "1"), ("EXPIREAT", "-5"),
])
def test_expire_in_the_past_deletes_key(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd(cmd, "k", arg) == b":1\r\n"
    assert conn.cmd(cmd, "h", arg) == b":1\r\n"
    assert conn.cmd("EXISTS", "k", "h") == b":0\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"
    assert conn.cmd("TTL", "k") == b":-2\r\n"


def test_expire_in_the_past_respects_conditions(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("EXPIRE", "k", "-5", "GT") == b":0\r\n"
    assert conn.cmd("EXPIRE", "k", "-5", "NX") == b":0\r\n"
    assert conn.cmd("EXISTS", "k") == b":1\r\n"
    assert conn.cmd("EXPIRE", "k", "-5", "XX") == b":1\r\n"
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


# ---------------------------------------------------------------- NX / XX / GT / LT

def test_expire_nx(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "100", "NX") == b":1\r\n"
    assert conn.cmd("EXPIRE", "k", "200", "NX") == b":0\r\n"
    assert conn.cmd("TTL", "k") == b":100\r\n"


def test_expire_xx(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "100", "XX") == b":0\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    conn.cmd("EXPIRE", "k", "100")
    assert conn.cmd("EXPIRE", "k", "200", "XX") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":200\r\n"


def test_expire_gt_lt(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("EXPIRE", "k", "50", "GT") == b":0\r\n"
    assert conn.cmd("EXPIRE", "k", "200", "GT") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":200\r\n"
    assert conn.cmd("EXPIRE", "k", "300", "LT") == b":0\r\n"
    assert conn.cmd("EXPIRE", "k", "150", "LT") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":150\r\n"


def test_expire_gt_lt_on_persistent_key(conn):
    # a key without TTL counts as an infinite TTL
    conn.cmd("SET", "k", "v")
    assert conn.cmd("EXPIRE", "k", "100", "GT") == b":0\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("EXPIRE", "k", "100", "LT") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":100\r\n"


def test_expire_xx_gt_combination(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("EXPIRE", "k", "200", "XX", "GT") == b":1\r\n"
    assert conn.cmd("EXPIRE", "k", "50", "XX", "LT") == b":1\r\n"
    assert conn.cmd("TTL", "k") == b":50\r\n"


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "100"), ("PEXPIRE", "100000"),
    ("EXPIREAT", str(FUTURE_S)), ("PEXPIREAT", str(FUTURE_MS)),
])
def test_condition_flags_on_all_variants(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    assert conn.cmd(cmd, "k", arg, "xx") == b":0\r\n"
    assert conn.cmd(cmd, "k", arg, "gt") == b":0\r\n"
    assert conn.cmd(cmd, "k", arg, "nx") == b":1\r\n"
    assert conn.cmd(cmd, "k", arg, "nx") == b":0\r\n"
    assert conn.cmd(cmd, "k", arg, "xx") == b":1\r\n"


@pytest.mark.parametrize("cmd,arg", [("EXPIREAT", str(FUTURE_S)), ("PEXPIREAT", str(FUTURE_MS))])
def test_gt_lt_equal_deadline_is_not_applied(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    conn.cmd(cmd, "k", arg)
    assert conn.cmd(cmd, "k", arg, "LT") == b":0\r\n"     # equal is not less
    assert conn.cmd(cmd, "k", arg, "GT") == b":0\r\n"     # nor greater
    assert conn.cmd(cmd, "k", arg, "XX") == b":1\r\n"


@pytest.mark.parametrize("opts,err", [
    (["NX", "XX"], b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"),
    (["NX", "GT"], b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"),
    (["LT", "NX"], b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"),
    (["GT", "LT"], b"-ERR GT and LT options at the same time are not compatible\r\n"),
    (["BOGUS"], b"-ERR Unsupported option BOGUS\r\n"),
    (["NX", "bogus"], b"-ERR Unsupported option bogus\r\n"),
])
@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "100"), ("PEXPIRE", "100000"),
    ("EXPIREAT", str(FUTURE_S)), ("PEXPIREAT", str(FUTURE_MS)),
])
def test_expire_option_errors(conn, cmd, arg, opts, err):
    conn.cmd("SET", "k", "v")
    assert conn.cmd(cmd, "k", arg, *opts) == err
    assert conn.cmd("TTL", "k") == b":-1\r\n"


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
@pytest.mark.parametrize("arg", ["abc", "1.5", "", "99999999999999999999"])
def test_expire_not_integer(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    assert conn.cmd(cmd, "k", arg) == NOT_INT
    assert conn.cmd(cmd, "nope", arg) == NOT_INT


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "9999999999999999"),
    ("EXPIRE", "9223372036854775807"),
    ("PEXPIRE", "9223372036854775807"),
    ("EXPIREAT", "9223372036854775807"),
    ("EXPIRE", "-9223372036854775808"),
])
def test_expire_overflow(conn, cmd, arg):
    conn.cmd("SET", "k", "v")
    assert conn.cmd(cmd, "k", arg) == (
        b"-ERR invalid expire time in '%s' command\r\n" % cmd.lower().encode())
    assert conn.cmd("TTL", "k") == b":-1\r\n"


# ---------------------------------------------------------------- lazy expiration

def test_lazy_expiry_get(conn):
    conn.cmd("SET", "k", "v", "PX", "100")
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"
    time.sleep(0.2)
    assert conn.cmd("GET", "k") == b"$-1\r\n"
    assert conn.cmd("PTTL", "k") == b":-2\r\n"
    assert conn.cmd("TTL", "k") == b":-2\r\n"


def test_expired_key_is_invisible_everywhere(conn):
    conn.cmd("SET", "s", "v", "PX", "100")
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("PEXPIRE", "h", "100")
    conn.cmd("SET", "keep", "v")
    time.sleep(0.2)
    assert conn.cmd("EXISTS", "s", "h") == b":0\r\n"
    assert conn.cmd("TYPE", "s") == b"+none\r\n"
    assert conn.cmd("MGET", "s", "keep") == b"*2\r\n$-1\r\n$1\r\nv\r\n"
    assert conn.cmd("HGET", "h", "f") == b"$-1\r\n"
    assert conn.cmd("HGETALL", "h") == b"*0\r\n"
    assert conn.cmd("HLEN", "h") == b":0\r\n"
    assert conn.cmd("KEYS", "*") == b"*1\r\n$4\r\nkeep\r\n"
    assert conn.cmd("EXPIRETIME", "s") == b":-2\r\n"
    assert conn.cmd("PERSIST", "s") == b":0\r\n"
    assert conn.cmd("RENAME", "s", "x") == b"-ERR no such key\r\n"
    assert conn.cmd("GETDEL", "s") == b"$-1\r\n"


def test_keys_and_scan_skip_expired_keys(conn):
    conn.send(b"".join(encode_command("SET", "e%d" % i, "v", "PX", "100") for i in range(30)))
    conn.read_replies(30)
    conn.cmd("SET", "keep", "v")
    time.sleep(0.2)
    assert conn.cmd("KEYS", "*") == b"*1\r\n$4\r\nkeep\r\n"
    seen, cursor = [], b"0"
    while True:
        cursor, keys = parse(conn.cmd("SCAN", cursor))
        seen += keys
        if cursor == b"0":
            break
    assert set(seen) == {b"keep"}


def test_expired_key_can_be_recreated(conn):
    conn.cmd("SET", "k", "v", "PX", "100")
    time.sleep(0.2)
    assert conn.cmd("SET", "k", "new", "NX") == b"+OK\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("PEXPIRE", "h", "100")
    time.sleep(0.2)
    assert conn.cmd("SETNX", "h", "str") == b":1\r\n"
    assert conn.cmd("TYPE", "h") == b"+string\r\n"


def test_expired_counter_restarts(conn):
    conn.cmd("SET", "n", "10", "PX", "100")
    time.sleep(0.2)
    assert conn.cmd("INCR", "n") == b":1\r\n"
    assert conn.cmd("TTL", "n") == b":-1\r\n"


def test_expired_hash_field_ops_start_fresh(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    conn.cmd("PEXPIRE", "h", "100")
    time.sleep(0.2)
    assert conn.cmd("HSET", "h", "c", "3") == b":1\r\n"
    assert conn.cmd("HLEN", "h") == b":1\r\n"
    assert conn.cmd("TTL", "h") == b":-1\r\n"


def test_set_xx_on_expired_key(conn):
    conn.cmd("SET", "k", "v", "PX", "100")
    time.sleep(0.2)
    assert conn.cmd("SET", "k", "w", "XX") == b"$-1\r\n"
    assert conn.cmd("SET", "k", "w", "GET") == b"$-1\r\n"


def test_overwrite_with_new_ttl(conn):
    conn.cmd("SET", "k", "v", "PX", "100")
    conn.cmd("SET", "k", "v2", "EX", "100")
    time.sleep(0.2)
    assert conn.cmd("GET", "k") == b"$2\r\nv2\r\n"


def test_persist_prevents_expiry(conn):
    conn.cmd("SET", "k", "v", "PX", "150")
    assert conn.cmd("PERSIST", "k") == b":1\r\n"
    time.sleep(0.25)
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


def test_pttl_never_negative_before_expiry(conn):
    conn.cmd("SET", "k", "v", "PX", "150")
    seen = []
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        v = pttl(conn, "k")
        seen.append(v)
        if v == -2:
            break
    assert seen[-1] == -2, seen[-5:]
    live = [v for v in seen if v != -2]
    assert live, seen
    assert all(0 <= v <= 150 for v in live), [v for v in live if not 0 <= v <= 150]
    assert live == sorted(live, reverse=True)


def test_ttl_never_negative_before_expiry(conn):
    conn.cmd("SET", "k", "v", "PX", "150")
    seen = []
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        v = ttl(conn, "k")
        seen.append(v)
        if v == -2:
            break
    assert seen[-1] == -2
    assert all(v in (0, -2) for v in seen), set(seen)


# ---------------------------------------------------------------- active expiration

def test_active_expiry_removes_untouched_keys(server, conn):
    n = 50
    conn.send(b"".join(encode_command("SET", "e%d" % i, "v", "PX", "100") for i in range(n)))
    conn.send(b"".join(encode_command("HSET", "h%d" % i, "f", "v") for i in range(n)))
    conn.send(b"".join(encode_command("PEXPIRE", "h%d" % i, "100") for i in range(n)))
    conn.read_replies(3 * n)
    conn.cmd("SET", "keep", "v")
    assert conn.cmd("DBSIZE") == b":%d\r\n" % (2 * n + 1)
    # never touch the volatile keys: DBSIZE counts keys that are still stored
    watcher = server.raw()
    ok = wait_for(lambda: watcher.cmd("DBSIZE") == b":1\r\n", timeout=2.5, interval=0.05)
    assert ok, watcher.cmd("DBSIZE")
    assert watcher.cmd("GET", "keep") == b"$1\r\nv\r\n"


def test_active_expiry_updates_info_keyspace(server, conn):
    conn.cmd("SET", "k", "v", "PX", "100")
    conn.cmd("SET", "keep", "v")
    info = parse(conn.cmd("INFO", "keyspace"))
    assert b"db0:keys=2,expires=1," in info
    watcher = server.raw()

    def expired():
        return b"db0:keys=1,expires=0," in parse(watcher.cmd("INFO", "keyspace"))
    assert wait_for(expired, timeout=2.5, interval=0.05)
