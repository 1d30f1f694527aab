"""DEBUG as test suites use it (SLEEP, SET-ACTIVE-EXPIRE, HELP), gated by
enable-debug-command like Redis 7: "local" (latchd's default; the redis
fixture passes it) serves loopback and unix socket clients only, "no"
refuses everyone with Redis's exact text, and it is fixed at start."""

import socket
import time

import pytest

from resp_util import RawConn, parse

REFUSED = (b"-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
           b"you can run it from a local connection, otherwise you need to set this option in the "
           b"configuration file, and then restart the server.\r\n")


def syntax_error(sub):
    return b"-ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.\r\n" % sub


def test_debug_help_shape(conn):
    lines = parse(conn.cmd("DEBUG", "HELP"))
    assert lines[0] == b"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[-2:] == [b"HELP", b"    Prints this help."]
    for entry in (b"SLEEP <seconds>", b"SET-ACTIVE-EXPIRE <0|1>"):
        assert entry in lines
    at = lines.index(b"SLEEP <seconds>")
    assert lines[at + 1] == b"    Stop the server for <seconds>. Decimals allowed."


def test_debug_argument_errors(conn):
    assert conn.cmd("DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"
    assert conn.cmd("DEBUG", "nosuch") == syntax_error(b"nosuch")
    assert conn.cmd("DEBUG", "SLEEP") == syntax_error(b"SLEEP")
    assert conn.cmd("DEBUG", "sleep", "0", "1") == syntax_error(b"sleep")
    assert conn.cmd("DEBUG", "set-active-expire") == syntax_error(b"set-active-expire")
    assert conn.cmd("DEBUG", "HELP", "x") == syntax_error(b"HELP")


def test_debug_sleep_stops_the_whole_server(server, conn):
    assert conn.cmd("DEBUG", "SLEEP", "0") == b"+OK\r\n"
    assert conn.cmd("DEBUG", "SLEEP", "not-a-number") == b"+OK\r\n"   # strtod: 0
    other = server.raw()
    assert other.cmd("PING") == b"+PONG\r\n"
    t0 = time.monotonic()
    conn.send(b"DEBUG SLEEP 0.3\r\n")
    time.sleep(0.05)   # let the sleep begin
    assert other.cmd("PING") == b"+PONG\r\n"
    assert time.monotonic() - t0 >= 0.3   # PING had to wait out the sleep
    assert conn.read_reply() == b"+OK\r\n"


def test_debug_set_active_expire_leaves_keys_to_lazy_expiry(conn):
    assert conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    try:
        conn.call("SET", "k", "v", "PX", 30)
        time.sleep(0.4)   # several active expiry cycles on either server
        assert conn.cmd("DBSIZE") == b":1\r\n"      # still there, not reclaimed
        assert conn.cmd("GET", "k") == b"$-1\r\n"   # but expired on access
        assert conn.cmd("DBSIZE") == b":0\r\n"
    finally:
        assert conn.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"
    conn.call("SET", "k", "v", "PX", 30)
    deadline = time.monotonic() + 5
    while conn.cmd("DBSIZE") != b":0\r\n" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert conn.cmd("DBSIZE") == b":0\r\n"   # reclaimed without being touched


def test_debug_not_from_scripts(conn):
    reply = conn.cmd("EVAL", "return redis.call('debug', 'sleep', '0')", "0")
    assert reply.startswith(b"-ERR This Redis command is not allowed from script script: ")


def test_debug_enable_is_local_and_immutable(conn):
    assert conn.cmd("CONFIG", "GET", "enable-debug-command") == \
        b"*2\r\n$20\r\nenable-debug-command\r\n$5\r\nlocal\r\n"
    assert conn.cmd("CONFIG", "SET", "enable-debug-command", "yes") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - "
        b"can't set immutable config\r\n")


def test_debug_refused_when_disabled(server_factory):
    srv = server_factory("--enable-debug-command", "no")
    c = srv.raw()
    assert c.cmd("DEBUG", "SLEEP", "0") == REFUSED
    assert c.cmd("DEBUG", "HELP") == REFUSED
    assert c.cmd("DEBUG", "nosuch") == REFUSED
    assert c.cmd("DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"


def test_debug_refused_before_auth(server_factory):
    srv = server_factory("--enable-debug-command", "no", "--requirepass", "pw")
    c = srv.raw()
    assert c.cmd("DEBUG", "SLEEP", "0") == REFUSED
    assert c.cmd("GET", "k") == b"-NOAUTH Authentication required.\r\n"


def outward_ipv4():
    """An address of this host that is not loopback, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))   # no packet is sent: only picks a route
        ip = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if ip.startswith("127.") else ip


def test_debug_local_refuses_a_remote_client(server_factory):
    ip = outward_ipv4()
    if not ip:
        pytest.skip("no non-loopback IPv4 address to connect from")
    srv = server_factory("--bind", "127.0.0.1", ip, "--protected-mode", "no")
    with RawConn(ip, srv.port) as remote:
        assert remote.cmd("DEBUG", "SLEEP", "0") == REFUSED
    assert srv.raw().cmd("DEBUG", "SLEEP", "0") == b"+OK\r\n"


def _digest_fill(r):
    r.flushall()
    r.set("s", "v")
    r.set("n", 42)
    r.set("t", "x", px=100000)
    r.rpush("l", "a", "b", 3)
    r.sadd("i", 1, 2, 3)
    r.sadd("st", "a", "b")
    r.zadd("zl", {"a": 1.5, "7": -2})
    r.zadd("zs", {"m%d" % i: i / 7 for i in range(200)})
    r.hset("h", mapping={"f": "v", "g": 1})
    r.execute_command("SELECT", 2)
    r.set("other", "db")
    r.execute_command("SELECT", 0)


def test_debug_digest_is_redis_digest(server, reference_redis):
    """DEBUG DIGEST and DIGEST-VALUE give redis-server's exact hex for the
    same data (Redis's SHA1 mixing of keys, types, values and deadlines)."""
    mine, ref = server.client(), reference_redis.client()
    for r in (mine, ref):
        _digest_fill(r)
    assert mine.execute_command("DEBUG", "DIGEST") == ref.execute_command("DEBUG", "DIGEST")
    keys = ["s", "n", "t", "l", "i", "st", "zl", "zs", "h", "missing"]
    got = mine.execute_command("DEBUG", "DIGEST-VALUE", *keys)
    assert got == ref.execute_command("DEBUG", "DIGEST-VALUE", *keys)
    assert got[-1] == b"0" * 40
    mine.flushall()
    assert mine.execute_command("DEBUG", "DIGEST") == b"0" * 40


def test_pause_cron_holds_a_signals_shutdown(server_factory):
    """With the cron paused a SIGTERM's shutdown waits: SHUTDOWN ABORT
    cancels it, and unpausing runs one still pending (Redis's serverCron)."""
    import signal
    import time
    srv = server_factory()
    conn = srv.raw()
    assert conn.cmd("SHUTDOWN", "ABORT") == b"-ERR No shutdown in progress.\r\n"
    assert conn.cmd("DEBUG", "PAUSE-CRON", "1") == b"+OK\r\n"
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.cmd("SHUTDOWN", "ABORT") == b"+OK\r\n"
    assert "Shutdown manually aborted" in srv.log()
    assert conn.cmd("DEBUG", "PAUSE-CRON", "0") == b"+OK\r\n"
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.cmd("DEBUG", "PAUSE-CRON", "1") == b"+OK\r\n"
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    assert conn.cmd("PING") == b"+PONG\r\n"
    conn.send(b"DEBUG PAUSE-CRON 0\r\n")
    assert srv.proc.wait(timeout=10) == 0


PROTOCOL_REPLIES = {
    # type: (RESP2 reply, RESP3 reply)
    "string": (b"$11\r\nHello World\r\n",) * 2,
    "integer": (b":12345\r\n",) * 2,
    "double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    "bignum": (b"$37\r\n1234567999999999999999999999999999999\r\n",
               b"(1234567999999999999999999999999999999\r\n"),
    "null": (b"$-1\r\n", b"_\r\n"),
    "array": (b"*3\r\n:0\r\n:1\r\n:2\r\n",) * 2,
    "set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    "map": (b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    "attrib": (b"$39\r\nSome real reply following the attribute\r\n",
               b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
               b"$39\r\nSome real reply following the attribute\r\n"),
    "push": (b"-ERR RESP2 is not supported by this command\r\n",
             b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n"),
    "verbatim": (b"$25\r\nThis is a verbatim\nstring\r\n", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    "true": (b":1\r\n", b"#t\r\n"),
    "false": (b":0\r\n", b"#f\r\n"),
    "nosuch": (b"-ERR Wrong protocol type name. Please use one of the following: "
               b"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n",) * 2,
}


@pytest.mark.parametrize("proto", [2, 3])
def test_debug_protocol_replies_each_resp_type(server, proto):
    c = server.raw()
    c.cmd("HELLO", str(proto))
    for name, replies in PROTOCOL_REPLIES.items():
        c.send(b"DEBUG PROTOCOL %s\r\nPING\r\n" % name.encode())
        want = replies[proto - 2] + b"+PONG\r\n"
        got = b""
        for _ in range(50):
            got += c.read_available(0.05)
            if got.endswith(b"+PONG\r\n"):
                break
        assert got == want, name


def test_debug_set_disable_deny_scripts_lets_scripts_call_noscript_commands(conn):
    call = "return redis.call('client', 'id')"
    assert conn.cmd("EVAL", call, "0").startswith(b"-ERR This Redis command is not allowed from script")
    assert conn.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") == b"+OK\r\n"
    assert conn.cmd("EVAL", call, "0").startswith(b":")
    assert conn.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0") == b"+OK\r\n"
    assert conn.cmd("EVAL", call, "0").startswith(b"-ERR This Redis command is not allowed from script")
