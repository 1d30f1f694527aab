"""client-output-buffer-limit: Redis's syntax, defaults and CONFIG GET text
(flag, config file, CONFIG SET), and enforcement: a subscriber that cannot
keep up is disconnected while everyone else carries on; the normal class
when it is given a limit."""

import time

import pytest

from pubsub_util import config_get, frame, stalled_conn, wait_numsub
from resp_util import encode_command, parse, wait_for

DEFAULT = b"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def limits(conn):
    return config_get(conn, "client-output-buffer-limit")


@pytest.fixture
def restore_limits(conn):
    yield conn
    assert conn.cmd("CONFIG", "SET", "client-output-buffer-limit", DEFAULT) == b"+OK\r\n"


def test_default(conn):
    assert limits(conn) == DEFAULT


@pytest.mark.parametrize("value,expected", [
    ("pubsub 1mb 512kb 10", b"normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10"),
    ("normal 1 2 3 replica 1gb 1gb 0",
     b"normal 1 2 3 slave 1073741824 1073741824 0 pubsub 33554432 8388608 60"),
    ("PUBSUB 1k 1kb 5", b"normal 0 0 0 slave 268435456 67108864 60 pubsub 1000 1024 5"),
    ("pubsub 1m 1g 0", b"normal 0 0 0 slave 268435456 67108864 60 pubsub 1000000 1000000000 0"),
    ("pubsub kb 0 0", b"normal 0 0 0 slave 268435456 67108864 60 pubsub 0 0 0"),
    ("", DEFAULT),
    (DEFAULT.decode(), DEFAULT),
])
def test_config_set(restore_limits, value, expected):
    conn = restore_limits
    assert conn.cmd("CONFIG", "SET", "client-output-buffer-limit", value) == b"+OK\r\n"
    assert limits(conn) == expected


WRONG_COUNT = b"Wrong number of arguments in buffer limit configuration."
BAD_CLASS = b"Invalid client class specified in buffer limit configuration."
BAD_VALUE = b"Error in hard, soft or soft_seconds setting in buffer limit configuration."


@pytest.mark.parametrize("value,why", [
    ("pubsub 1mb 512kb", WRONG_COUNT), ("master 1 1 1", BAD_CLASS), ("foo 1 1 1", BAD_CLASS),
    ("pubsub -1 1 1", BAD_VALUE), ("pubsub 1 1 -1", BAD_VALUE), ("pubsub 1 1 x", BAD_VALUE),
    ("pubsub x 1 1", BAD_VALUE), ("pubsub 1.5mb 1 1", BAD_VALUE),
    ("pubsub  2mb   1mb  7", BAD_CLASS),   # split on single spaces: an empty class
    ("normal 1 1 1 pubsub 1 1 x", BAD_VALUE),
])
def test_config_set_errors_change_nothing(restore_limits, value, why):
    conn = restore_limits
    reply = conn.cmd("CONFIG", "SET", "client-output-buffer-limit", value)
    assert reply == (b"-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
                     + why + b"\r\n")
    assert limits(conn) == DEFAULT


def test_flag(server_factory):
    srv = server_factory("--client-output-buffer-limit", "pubsub 1mb 512kb 10")
    assert limits(srv.raw()) == b"normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10"


def test_config_file(server_factory, tmp_path):
    conf = tmp_path / "limits.conf"
    conf.write_text("client-output-buffer-limit normal 1 2 3\n"
                    "client-output-buffer-limit \"pubsub 4mb 2mb 5\"\n")
    srv = server_factory(config=str(conf))
    assert limits(srv.raw()) == b"normal 1 2 3 slave 268435456 67108864 60 pubsub 4194304 2097152 5"


def test_memory_config_errors_as_redis(conn):
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "-1") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
        b"argument must be a memory value\r\n")
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
        b"argument must be between 1048576 and 9223372036854775807 inclusive\r\n")


# ---------------------------------------------------------------- enforcement

def client_ids(conn):
    text = parse(conn.cmd("CLIENT", "LIST")).decode()
    return {int(l.split(" ", 1)[0][3:]) for l in text.splitlines()}


def test_slow_subscriber_is_disconnected_others_carry_on(server_factory):
    srv = server_factory("--client-output-buffer-limit", "pubsub 1mb 256kb 60")
    slow = stalled_conn(srv)
    slow_id = slow.call("CLIENT", "ID")
    assert slow.cmd("SUBSCRIBE", "firehose") == frame("subscribe", "firehose", 1)
    good = srv.raw()
    good.cmd("SUBSCRIBE", "firehose")
    bystander = srv.raw()
    pub = srv.raw()
    payload = b"x" * 65536
    for i in range(160):   # 10 MiB: far past what the kernel buffers for the slow one
        assert pub.cmd("PUBLISH", "firehose", payload) in (b":2\r\n", b":1\r\n")
        assert good.read_reply(timeout=10) == frame("message", "firehose", payload)
        if i % 40 == 0:
            assert bystander.cmd("SET", "k%d" % i, "v") == b"+OK\r\n"
    assert wait_numsub(pub, "firehose", 1, timeout=5) == 1
    assert slow_id not in client_ids(pub)
    assert pub.cmd("PUBLISH", "firehose", "after") == b":1\r\n"
    assert good.read_reply() == frame("message", "firehose", "after")
    assert bystander.cmd("GET", "k0") == b"$1\r\nv\r\n"


def test_soft_limit_needs_its_seconds(server_factory):
    srv = server_factory("--client-output-buffer-limit", "pubsub 0 256kb 1")
    slow = stalled_conn(srv)
    slow_id = slow.call("CLIENT", "ID")
    slow.cmd("SUBSCRIBE", "c")
    pub = srv.raw()
    payload = b"y" * 65536
    for _ in range(64):   # 4 MiB: over the soft limit
        pub.cmd("PUBLISH", "c", payload)
    assert slow_id in client_ids(pub)   # over soft, but not yet for a second
    deadline = time.monotonic() + 5
    while slow_id in client_ids(pub) and time.monotonic() < deadline:
        pub.cmd("PUBLISH", "c", "tick")   # the limit is checked as output is added
        time.sleep(0.2)
    assert slow_id not in client_ids(pub)


def test_default_limits_leave_normal_clients_alone(server):
    reader = stalled_conn(server)
    rid = reader.call("CLIENT", "ID")
    conn = server.raw()
    conn.cmd("SET", "big", "z" * 100000)
    reader.send(encode_command("GET", "big") * 100)   # ~10 MB of replies it will not read
    time.sleep(0.3)
    assert rid in client_ids(conn)


def test_normal_class_limit_when_set(server_factory):
    srv = server_factory("--client-output-buffer-limit", "normal 1mb 0 0")
    reader = stalled_conn(srv)
    rid = reader.call("CLIENT", "ID")
    conn = srv.raw()
    conn.cmd("SET", "big", "z" * 100000)
    reader.send(encode_command("GET", "big") * 100)
    assert wait_for(lambda: rid not in client_ids(conn), timeout=5)
    assert conn.cmd("GET", "big").startswith(b"$100000\r\n")


@pytest.mark.parametrize("fill,command", [
    (("HSET", "h", "a", "b"), ("HRANDFIELD", "h", "-999999999")),
    (("SADD", "s", "a"), ("SRANDMEMBER", "s", "-999999999")),
    (("ZADD", "z", "1", "a"), ("ZRANDMEMBER", "z", "-999999999")),
])
def test_huge_reply_is_cut_mid_run(server_factory, fill, command):
    """Redis checks the limit as each element is added, so a billion draws
    stop at the limit instead of building gigabytes first."""
    srv = server_factory("--client-output-buffer-limit", "normal 1000000 0 0")
    conn = srv.raw()
    conn.cmd(*fill)
    victim = srv.raw()
    victim.send(encode_command(*command))
    got = victim.read_until_closed(timeout=10)
    assert len(got) < 2000000
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_limit_counts_reply_blocks_as_redis(server_factory):
    """KEYS of 1000 100-byte names is ~112 KB: past 100000 only because the
    part beyond the first 16 KiB is counted in whole 20504-byte blocks."""
    srv = server_factory("--client-output-buffer-limit", "normal 100000 0 0")
    conn = srv.raw()
    prefix = "p" * 100
    for i in range(0, 1000, 100):
        conn.cmd("MSET", *[x for j in range(i, i + 100) for x in ("%s%d" % (prefix, j), "v")])
    victim = srv.raw()
    victim.send(encode_command("KEYS", "*"))
    assert victim.read_until_closed(timeout=10) == b""
    assert conn.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 200000 0 0") == b"+OK\r\n"
    assert len(parse(srv.raw().cmd("KEYS", "*"))) == 1000


def test_omem_counts_reply_blocks_as_redis(server_factory):
    srv = server_factory()
    slow = stalled_conn(srv)
    slow.cmd("SUBSCRIBE", "c")
    pub = srv.raw()
    seen = set()
    for _ in range(20000):
        pub.cmd("PUBLISH", "c", "x" * 1000)
        text = parse(pub.cmd("CLIENT", "LIST")).decode()
        omem = [int(f[5:]) for l in text.splitlines() if "cmd=subscribe" in l
                for f in l.split() if f.startswith("omem=")]
        seen.add(omem[0])
        if omem[0] >= 3 * 20504:
            break
    assert {0, 20504, 2 * 20504, 3 * 20504} <= seen


def test_soft_limit_enforced_without_traffic(server_factory):
    """Once over the soft limit, the client goes when its seconds pass even
    if nothing more is published (Redis checks in its client cron)."""
    srv = server_factory("--client-output-buffer-limit", "pubsub 0 256kb 1")
    slow = stalled_conn(srv)
    slow_id = slow.call("CLIENT", "ID")
    slow.cmd("SUBSCRIBE", "c")
    pub = srv.raw()
    for _ in range(64):   # 4 MiB, then silence
        pub.cmd("PUBLISH", "c", b"y" * 65536)
    assert slow_id in client_ids(pub)
    assert wait_for(lambda: slow_id not in client_ids(pub), timeout=4)
