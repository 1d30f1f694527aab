"""Limits: client-query-buffer-limit, maxmemory / maxmemory-policy,
maxclients and the fd limit raised for it; by flag, config file and
CONFIG SET, with redis-server's CONFIG GET bytes, errors and closes."""

import resource

import pytest

from proc_util import open_files_limit, under_tool
from resp_util import encode_command, parse, wait_for

OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"


def config_get(conn, name):
    return conn.cmd("CONFIG", "GET", name)


def kv(name, value):
    name, value = name.encode(), value.encode()
    return b"*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(name), name, len(value), value)


def set_failed(name, why):
    return ("-ERR CONFIG SET failed (possibly related to argument '%s') - %s\r\n" % (name, why)).encode()


# ---------------------------------------------------------------- CONFIG

@pytest.mark.parametrize("name,value", [
    ("client-query-buffer-limit", "1073741824"),
    ("maxmemory", "0"),
    ("maxmemory-policy", "noeviction"),
    ("maxclients", "10000"),
    ("proto-max-bulk-len", "536870912"),
    ("protected-mode", "yes"),
])
def test_limit_defaults(conn, name, value):
    assert config_get(conn, name) == kv(name, value)


def test_config_set_memory_values_with_units(conn):
    try:
        for given, stored in (("2mb", "2097152"), ("3MB", "3145728"), ("1gb", "1073741824"),
                              ("5000000", "5000000"), ("2m", "2000000")):
            assert conn.cmd("CONFIG", "SET", "client-query-buffer-limit", given) == b"+OK\r\n"
            assert config_get(conn, "client-query-buffer-limit") == kv("client-query-buffer-limit", stored)
            assert conn.cmd("CONFIG", "SET", "maxmemory", given) == b"+OK\r\n"
            assert config_get(conn, "maxmemory") == kv("maxmemory", stored)
    finally:
        conn.cmd("CONFIG", "SET", "maxmemory", "0")
        conn.cmd("CONFIG", "SET", "client-query-buffer-limit", "1gb")


@pytest.mark.parametrize("name,value,why", [
    ("client-query-buffer-limit", "1000", "argument must be between 1048576 and 9223372036854775807 inclusive"),
    ("client-query-buffer-limit", "lots", "argument must be a memory value"),
    ("maxmemory", "-1", "argument must be a memory value"),
    ("maxmemory", "1.5gb", "argument must be a memory value"),
    ("maxmemory", "10 mb", "argument must be a memory value"),
    ("proto-max-bulk-len", "abc", "argument must be a memory value"),
    ("maxmemory-policy", "lru", "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
     "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
])
def test_config_set_limit_errors(conn, name, value, why):
    before = config_get(conn, name)
    assert conn.cmd("CONFIG", "SET", name, value) == set_failed(name, why)
    assert config_get(conn, name) == before


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                    "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"])
def test_config_set_every_maxmemory_policy(conn, policy):
    try:
        assert conn.cmd("CONFIG", "SET", "maxmemory-policy", policy.upper()) == b"+OK\r\n"
        assert config_get(conn, "maxmemory-policy") == kv("maxmemory-policy", policy)
        info = parse(conn.cmd("INFO", "memory"))
        assert b"\r\nmaxmemory_policy:%s\r\n" % policy.encode() in info
    finally:
        conn.cmd("CONFIG", "SET", "maxmemory-policy", "noeviction")


def test_limits_by_flag(server_factory):
    srv = server_factory("--client-query-buffer-limit", "2mb", "--maxmemory", "100mb",
                         "--maxmemory-policy", "allkeys-lru")
    c = srv.raw()
    assert config_get(c, "client-query-buffer-limit") == kv("client-query-buffer-limit", "2097152")
    assert config_get(c, "maxmemory") == kv("maxmemory", "104857600")
    assert config_get(c, "maxmemory-policy") == kv("maxmemory-policy", "allkeys-lru")
    info = parse(c.cmd("INFO", "memory"))
    assert b"\r\nmaxmemory:104857600\r\nmaxmemory_human:100.00M\r\n" in info


def test_limits_by_config_file(server_factory, tmp_path):
    conf = tmp_path / "limits.conf"
    conf.write_text("client-query-buffer-limit 4mb\nmaxmemory 1gb\nmaxmemory-policy volatile-ttl\n")
    srv = server_factory(config=str(conf))
    c = srv.raw()
    assert config_get(c, "client-query-buffer-limit") == kv("client-query-buffer-limit", "4194304")
    assert config_get(c, "maxmemory") == kv("maxmemory", "1073741824")
    assert config_get(c, "maxmemory-policy") == kv("maxmemory-policy", "volatile-ttl")


# ---------------------------------------------------------------- client-query-buffer-limit

def test_query_buffer_limit_closes_client_without_reply(server_factory):
    srv = server_factory("--client-query-buffer-limit", "1mb")
    bystander = srv.raw()
    assert bystander.cmd("SET", "bystander", "alive") == b"+OK\r\n"
    c = srv.raw()
    # one argument larger than the limit, still arriving
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n")
    for _ in range(24):
        c.send_may_close(b"x" * 65536)
    assert c.read_until_closed(timeout=10) == b""
    assert bystander.cmd("GET", "bystander") == b"$5\r\nalive\r\n"
    assert bystander.cmd("EXISTS", "k") == b":0\r\n"


def test_query_buffer_under_limit_is_fine(server_factory):
    srv = server_factory("--client-query-buffer-limit", "1mb")
    c = srv.raw()
    val = b"v" * (900 * 1024)
    assert c.cmd("SET", "k", val) == b"+OK\r\n"
    assert c.cmd("STRLEN", "k") == b":%d\r\n" % len(val)


def test_query_buffer_limit_counts_one_command_not_a_pipeline(server_factory):
    # 2 MB of small commands in one go: each is parsed as it arrives
    srv = server_factory("--client-query-buffer-limit", "1mb")
    c = srv.raw()
    n = 20000
    c.send(encode_command("INCR", "n" * 90) * n)
    replies = c.read_replies(n, timeout=30)
    assert replies[-1] == b":%d\r\n" % n


def test_query_buffer_limit_set_at_runtime(server_factory):
    srv = server_factory()
    admin, c = srv.raw(), srv.raw()
    assert admin.cmd("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"+OK\r\n"
    c.send(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n")
    c.send_may_close(b"y" * (1536 * 1024))
    assert c.read_until_closed(timeout=10) == b""
    assert admin.cmd("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------- maxmemory

DENYOOM = [("SET", "k", "v"), ("SETNX", "k2", "v"), ("SETEX", "k", "10", "v"),
           ("PSETEX", "k", "10000", "v"), ("INCR", "n"), ("DECR", "n"), ("INCRBY", "n", "2"),
           ("DECRBY", "n", "2"), ("MSET", "a", "1", "b", "2"), ("HSET", "h", "f", "v"),
           ("HMSET", "h", "f", "v"), ("HSETNX", "h", "g", "v"), ("HINCRBY", "h", "n", "1")]

ALLOWED = [(("GET", "k"), b"$1\r\n1\r\n"), (("EXPIRE", "k", "100"), b":1\r\n"),
           (("PERSIST", "k"), b":1\r\n"), (("HGET", "h", "f"), b"$1\r\nv\r\n"),
           (("HDEL", "h", "f"), b":1\r\n"), (("GETDEL", "k"), b"$1\r\n1\r\n"),
           (("RENAME", "n", "m"), b"+OK\r\n"), (("DEL", "m"), b":1\r\n"), (("PING",), b"+PONG\r\n"),
           (("DBSIZE",), b":0\r\n")]


def test_maxmemory_refuses_denyoom_commands(server_factory):
    srv = server_factory()
    c = srv.raw()
    for cmd in (("SET", "k", "1"), ("SET", "n", "5"), ("HSET", "h", "f", "v")):
        assert c.cmd(*cmd) in (b"+OK\r\n", b":1\r\n")
    assert c.cmd("CONFIG", "SET", "maxmemory", "1") == b"+OK\r\n"
    for cmd in DENYOOM:
        assert c.cmd(*cmd) == OOM, cmd
    for cmd, reply in ALLOWED:   # reads and deletes still work
        assert c.cmd(*cmd) == reply, cmd
    assert c.cmd("CONFIG", "SET", "maxmemory", "0") == b"+OK\r\n"
    assert c.cmd("SET", "k", "v") == b"+OK\r\n"


def test_maxmemory_oom_in_a_pipeline_and_inline(server_factory):
    srv = server_factory("--maxmemory", "1")
    c = srv.raw()
    c.send(encode_command("SET", "a", "1") + encode_command("GET", "a") + b"HSET h f v\r\n")
    assert c.read_replies(3) == [OOM, b"$-1\r\n", OOM]


def test_maxmemory_checks_arity_and_auth_first(server_factory):
    srv = server_factory("--maxmemory", "1", "--requirepass", "pw")
    c = srv.raw()
    assert c.cmd("SET", "k") == b"-ERR wrong number of arguments for 'set' command\r\n"
    assert c.cmd("SET", "k", "v") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "pw") == b"+OK\r\n"
    assert c.cmd("SET", "k", "v") == OOM


def test_maxmemory_above_usage_allows_writes(server_factory):
    srv = server_factory("--maxmemory", "1gb")
    c = srv.raw()
    assert c.cmd("SET", "k", "v" * 1000) == b"+OK\r\n"
    assert c.cmd("HSET", "h", "f", "v") == b":1\r\n"


@pytest.mark.parametrize("policy", ["volatile-random", "volatile-ttl", "volatile-lru", "volatile-lfu"])
def test_volatile_policy_finds_the_few_keys_with_a_ttl(server_factory, policy):
    """One key with a TTL among 300 without: over maxmemory, a volatile
    policy evicts it every time (Redis samples its dict of keys with a TTL;
    latchd once drew from all keys and missed it about half the time)."""
    srv = server_factory()
    c = srv.client()
    c.config_set("maxmemory-policy", policy)
    for trial in range(10):
        c.config_set("maxmemory", 0)
        c.flushall()
        c.mset({"k%d" % i: "v" for i in range(300)})
        c.set("vol", "x", ex=1000)
        c.config_set("maxmemory", c.info("memory")["used_memory"] + 100 * 1024)
        c.setbit("big", 1600000, 0)   # 200 kB over: the next command evicts first
        assert c.getbit("big", 0) == 0
        assert c.exists("vol") == 0, "trial %d: the key with a TTL was not evicted" % trial
        assert c.dbsize() == 301
    assert c.info("stats")["evicted_keys"] == 10


def test_denyoom_flag_in_command_info(conn):
    for name in ("set", "hset", "hincrby", "incr", "mset"):
        flags = parse(conn.cmd("COMMAND", "INFO", name))[0][2]
        assert b"denyoom" in flags, (name, flags)
    for name in ("del", "expire", "getdel", "rename", "get"):
        flags = parse(conn.cmd("COMMAND", "INFO", name))[0][2]
        assert b"denyoom" not in flags, (name, flags)


# ---------------------------------------------------------------- maxclients

def test_maxclients_refuses_the_one_too_many(server_factory):
    srv = server_factory("--maxclients", "3")
    held = [srv.raw() for _ in range(3)]
    for c in held:
        assert c.cmd("PING") == b"+PONG\r\n"
    extra = srv.raw()
    assert extra.read_until_closed(timeout=5) == b"-ERR max number of clients reached\r\n"
    assert b"\r\nrejected_connections:1\r\n" in parse(held[0].cmd("INFO", "stats"))
    assert held[0].cmd("PING") == b"+PONG\r\n"
    held.pop().close()
    # the freed slot is usable again once the close has been noticed
    assert wait_for(lambda: srv.raw().cmd("PING") == b"+PONG\r\n", timeout=5)


def skip_under_valgrind(srv):
    if under_tool(srv.proc.pid) == "valgrind":
        pytest.skip("valgrind keeps fds for itself and reports a lower limit")


def start_with_low_fd_limit(server_factory, *args):
    """A server started with a soft fd limit of 1024 (hard unchanged)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3032:
        pytest.skip("hard fd limit %d is below 3032" % hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        srv = server_factory(*args)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    skip_under_valgrind(srv)
    return srv


def test_fd_limit_raised_for_maxclients(server_factory):
    srv = start_with_low_fd_limit(server_factory, "--maxclients", "2000")
    assert open_files_limit(srv.proc.pid) >= 2032
    assert config_get(srv.raw(), "maxclients") == kv("maxclients", "2000")


def test_fd_limit_raised_by_config_set_maxclients(server_factory):
    srv = start_with_low_fd_limit(server_factory, "--maxclients", "100")
    c = srv.raw()
    assert open_files_limit(srv.proc.pid) == 1024
    assert c.cmd("CONFIG", "SET", "maxclients", "3000") == b"+OK\r\n"
    assert open_files_limit(srv.proc.pid) >= 3032
    assert config_get(c, "maxclients") == kv("maxclients", "3000")


def test_config_set_maxclients_beyond_hard_fd_limit(server_factory):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:   # a process allowed past the hard limit never hits the error
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1))
        pytest.skip("this process may raise its hard fd limit")
    except (ValueError, OSError):
        pass
    srv = server_factory()
    skip_under_valgrind(srv)
    c = srv.raw()
    assert c.cmd("CONFIG", "SET", "maxclients", str(hard + 100)) == set_failed(
        "maxclients", "The operating system is not able to handle the specified number of clients, "
        "try with %d" % (hard - 32))
    assert config_get(c, "maxclients") == kv("maxclients", "10000")
