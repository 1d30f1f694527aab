"""Connection and server-level commands: PING, ECHO, QUIT, SELECT, RESET,
TIME, DBSIZE, FLUSHALL/FLUSHDB, LASTSAVE, WAIT, FUNCTION, unknown commands,
arity errors, and a redis-cli smoke test."""

import re
import subprocess
import time

import pytest

from resp_util import encode_command, parse


def arity(name):
    return b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()


# ---------------------------------------------------------------- PING / ECHO

def test_ping(conn):
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.cmd("PING", "hello") == b"$5\r\nhello\r\n"
    assert conn.cmd("PING", "") == b"$0\r\n\r\n"
    assert conn.cmd("PING", "a", "b") == arity("ping")


def test_ping_via_client(r):
    assert r.ping() is True


def test_command_names_are_case_insensitive(conn):
    assert conn.cmd("pInG") == b"+PONG\r\n"
    assert conn.cmd("set", "k", "v") == b"+OK\r\n"
    assert conn.cmd("GeT", "k") == b"$1\r\nv\r\n"
    assert conn.cmd("client", "getname") == b"$-1\r\n"


def test_echo(conn):
    assert conn.cmd("ECHO", "hi") == b"$2\r\nhi\r\n"
    assert conn.cmd("ECHO", "") == b"$0\r\n\r\n"
    blob = bytes(range(256)) + b"\r\n\x00end"
    assert conn.cmd("ECHO", blob) == b"$%d\r\n%s\r\n" % (len(blob), blob)
    assert conn.cmd("ECHO") == arity("echo")
    assert conn.cmd("ECHO", "a", "b") == arity("echo")


# ---------------------------------------------------------------- QUIT

def test_quit_replies_ok_and_closes(conn):
    assert conn.cmd("QUIT") == b"+OK\r\n"
    assert conn.is_closed(2.0)
    assert conn.buf == b""


def test_quit_ignores_extra_arguments(conn):
    assert conn.cmd("QUIT", "now", "please") == b"+OK\r\n"
    assert conn.is_closed(2.0)


def test_quit_discards_pipelined_commands_after_it(server, conn):
    conn.send(encode_command("SET", "before", "1") + encode_command("QUIT")
              + encode_command("SET", "after", "1"))
    assert conn.read_until_closed() == b"+OK\r\n+OK\r\n"
    other = server.raw()
    assert other.cmd("EXISTS", "before") == b":1\r\n"
    assert other.cmd("EXISTS", "after") == b":0\r\n"


def test_quit_inline(conn):
    conn.send(b"QUIT\r\n")
    assert conn.read_until_closed() == b"+OK\r\n"


# ---------------------------------------------------------------- SELECT

def test_select_zero(conn):
    assert conn.cmd("SELECT", "0") == b"+OK\r\n"
    assert conn.cmd("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


@pytest.mark.parametrize("index", ["16", "17", "1000", "2147483647", "-1", "-16", "-2147483648"])
def test_select_out_of_range(conn, index):
    assert conn.cmd("SELECT", index) == b"-ERR DB index is out of range\r\n"


@pytest.mark.parametrize("index", ["abc", "", "0.5", "1e3", " 0", "99999999999999999999"])
def test_select_not_an_integer(conn, index):
    assert conn.cmd("SELECT", index) == b"-ERR value is not an integer or out of range\r\n"


@pytest.mark.parametrize("index", ["2147483648", "-2147483649", "9223372036854775807"])
def test_select_index_beyond_int(conn, index):
    # SELECT parses an int, not a long long (sic: "must between")
    assert conn.cmd("SELECT", index) == (
        b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n")


def test_select_arity(conn):
    assert conn.cmd("SELECT") == arity("select")
    assert conn.cmd("SELECT", "0", "0") == arity("select")


def test_select_zero_keeps_data(server, conn):
    assert conn.cmd("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd("SELECT", "0") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- unknown / arity

def test_unknown_command_without_args(conn):
    assert conn.cmd("NOSUCH") == b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"


def test_unknown_command_keeps_case_and_quotes_args(conn):
    assert conn.cmd("nOsUcH", "a", "b", "c") == (
        b"-ERR unknown command 'nOsUcH', with args beginning with: 'a' 'b' 'c' \r\n")
    assert conn.cmd("nosuch", "", "x") == (
        b"-ERR unknown command 'nosuch', with args beginning with: '' 'x' \r\n")


def test_unknown_command_empty_name(conn):
    assert conn.cmd("") == b"-ERR unknown command '', with args beginning with: \r\n"


def test_unknown_command_args_truncated_to_128_chars(conn):
    # each arg is printed as '%.*s' with the remaining budget of 128 chars,
    # and no more args are added once the list reaches 128 chars
    assert conn.cmd("nosuch", "a" * 150, "b") == (
        b"-ERR unknown command 'nosuch', with args beginning with: '" + b"a" * 128 + b"' \r\n")
    assert conn.cmd("nosuch", "b" * 113, "c" * 30, "d") == (
        b"-ERR unknown command 'nosuch', with args beginning with: '"
        + b"b" * 113 + b"' '" + b"c" * 12 + b"' \r\n")


def test_unknown_command_name_truncated_to_128_chars(conn):
    assert conn.cmd("x" * 200) == (
        b"-ERR unknown command '" + b"x" * 128 + b"', with args beginning with: \r\n")


def test_unknown_command_newlines_become_spaces(conn):
    assert conn.cmd("fo\nx", "a\rb") == (
        b"-ERR unknown command 'fo x', with args beginning with: 'a b' \r\n")


def test_unknown_command_does_not_close_connection(conn):
    assert conn.cmd("NOSUCH").startswith(b"-ERR unknown command")
    assert conn.cmd("PING") == b"+PONG\r\n"


ARITY_CASES = [
    ("get", ["GET"]),
    ("get", ["GET", "a", "b"]),
    ("set", ["SET", "k"]),
    ("setnx", ["SETNX", "k"]),
    ("getdel", ["GETDEL"]),
    ("incr", ["INCR"]),
    ("incrby", ["INCRBY", "k"]),
    ("decr", ["DECR", "a", "b"]),
    ("decrby", ["DECRBY", "k"]),
    ("mget", ["MGET"]),
    ("exists", ["EXISTS"]),
    ("del", ["DEL"]),
    ("unlink", ["UNLINK"]),
    ("type", ["TYPE"]),
    ("keys", ["KEYS"]),
    ("keys", ["KEYS", "a", "b"]),
    ("scan", ["SCAN"]),
    ("rename", ["RENAME", "a"]),
    ("rename", ["RENAME", "a", "b", "c"]),
    ("expire", ["EXPIRE", "k"]),
    ("pexpire", ["PEXPIRE", "k"]),
    ("expireat", ["EXPIREAT", "k"]),
    ("pexpireat", ["PEXPIREAT", "k"]),
    ("ttl", ["TTL"]),
    ("pttl", ["PTTL", "a", "b"]),
    ("expiretime", ["EXPIRETIME"]),
    ("pexpiretime", ["PEXPIRETIME"]),
    ("persist", ["PERSIST"]),
    ("hset", ["HSET", "h"]),
    ("hset", ["HSET", "h", "f"]),
    ("hset", ["HSET", "h", "f", "v", "g"]),
    ("hsetnx", ["HSETNX", "h", "f"]),
    ("hget", ["HGET", "h"]),
    ("hmget", ["HMGET", "h"]),
    ("hexists", ["HEXISTS", "h"]),
    ("hdel", ["HDEL", "h"]),
    ("hlen", ["HLEN"]),
    ("hincrby", ["HINCRBY", "h", "f"]),
    ("hgetall", ["HGETALL"]),
    ("hkeys", ["HKEYS"]),
    ("hvals", ["HVALS"]),
    ("hstrlen", ["HSTRLEN", "h"]),
    ("echo", ["ECHO"]),
    ("select", ["SELECT"]),
    ("auth", ["AUTH"]),
    ("reset", ["RESET", "x"]),
    ("time", ["TIME", "x"]),
    ("dbsize", ["DBSIZE", "x"]),
    ("lastsave", ["LASTSAVE", "x"]),
    ("wait", ["WAIT", "0"]),
    ("client", ["CLIENT"]),
    ("config", ["CONFIG"]),
    ("function", ["FUNCTION"]),
    ("client|setname", ["CLIENT", "SETNAME"]),
    ("client|getname", ["CLIENT", "GETNAME", "x"]),
    ("client|id", ["CLIENT", "ID", "x"]),
    ("client|info", ["CLIENT", "INFO", "x"]),
    ("client|kill", ["CLIENT", "KILL"]),
    ("client|reply", ["CLIENT", "REPLY"]),
    ("client|reply", ["CLIENT", "REPLY", "ON", "x"]),
    ("config|get", ["CONFIG", "GET"]),
    ("config|set", ["CONFIG", "SET", "save"]),
    ("command|count", ["COMMAND", "COUNT", "x"]),
]


@pytest.mark.parametrize("name,argv", ARITY_CASES, ids=[" ".join(a) for _, a in ARITY_CASES])
def test_wrong_number_of_arguments(conn, name, argv):
    assert conn.cmd(*argv) == arity(name)


def test_arity_error_uses_lowercase_full_name(conn):
    assert conn.cmd("gEt") == arity("get")
    assert conn.cmd("cLiEnT", "sEtNaMe") == arity("client|setname")
    assert conn.cmd("cOnFiG", "gEt") == arity("config|get")


@pytest.mark.parametrize("container", ["CLIENT", "CONFIG", "COMMAND", "FUNCTION"])
def test_unknown_subcommand(conn, container):
    assert conn.cmd(container, "BOGUS") == (
        b"-ERR unknown subcommand 'BOGUS'. Try %s HELP.\r\n" % container.encode())


def test_unknown_subcommand_case(conn):
    # the subcommand is echoed as sent, the container name is upper-cased
    assert conn.cmd("client", "bogus", "x") == b"-ERR unknown subcommand 'bogus'. Try CLIENT HELP.\r\n"


# ---------------------------------------------------------------- RESET

def test_reset(server, conn):
    assert conn.cmd("RESET") == b"+RESET\r\n"
    assert conn.cmd("RESET", "x") == arity("reset")


def test_reset_clears_connection_state(conn):
    assert conn.cmd("CLIENT", "SETNAME", "someone") == b"+OK\r\n"
    assert conn.cmd("HELLO", "3").startswith(b"%")
    assert conn.cmd("GET", "missing") == b"_\r\n"
    assert conn.cmd("RESET") == b"+RESET\r\n"
    assert conn.cmd("CLIENT", "GETNAME") == b"$-1\r\n"
    assert conn.cmd("GET", "missing") == b"$-1\r\n"  # back to RESP2
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.call("HELLO")[4:6] == [b"proto", 2]


def test_reset_keeps_data(conn):
    assert conn.cmd("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd("RESET") == b"+RESET\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


def test_reset_turns_client_reply_back_on(conn):
    conn.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("PING")
              + encode_command("RESET") + encode_command("PING"))
    assert conn.read_replies(2) == [b"+RESET\r\n", b"+PONG\r\n"]
    assert conn.read_available(0.1) == b""


def test_reset_keeps_client_id(conn):
    before = conn.call("CLIENT", "ID")
    assert conn.cmd("RESET") == b"+RESET\r\n"
    assert conn.call("CLIENT", "ID") == before


# ---------------------------------------------------------------- TIME / LASTSAVE

def test_time(conn):
    reply = conn.cmd("TIME")
    m = re.fullmatch(rb"\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n", reply)
    assert m, reply
    secs, usecs = int(m.group(1)), int(m.group(2))
    assert abs(secs + usecs / 1e6 - time.time()) < 5
    assert 0 <= usecs < 1_000_000
    # bulk lengths are right and there are no leading zeros
    assert parse(reply) == [m.group(1), m.group(2)]
    assert m.group(2) == str(usecs).encode()


def test_time_advances(conn):
    a = [int(x) for x in conn.call("TIME")]
    time.sleep(0.02)
    b = [int(x) for x in conn.call("TIME")]
    assert b[0] * 1_000_000 + b[1] > a[0] * 1_000_000 + a[1]


def test_time_via_client(r):
    secs, usecs = r.time()
    assert abs(secs - time.time()) < 5


def test_lastsave(conn):
    reply = conn.cmd("LASTSAVE")
    assert re.fullmatch(rb":\d+\r\n", reply), reply
    assert 1_600_000_000 < parse(reply) <= time.time() + 1


# ---------------------------------------------------------------- DBSIZE / FLUSH*

def test_dbsize(conn):
    assert conn.cmd("DBSIZE") == b":0\r\n"
    conn.cmd("SET", "a", "1")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("DBSIZE") == b":2\r\n"
    conn.cmd("DEL", "a")
    assert conn.cmd("DBSIZE") == b":1\r\n"


def test_flushall(conn):
    for i in range(20):
        conn.cmd("SET", "k%d" % i, "v")
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("SET", "e", "v", "EX", "100")
    assert conn.cmd("FLUSHALL") == b"+OK\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"
    assert conn.cmd("KEYS", "*") == b"*0\r\n"
    assert conn.cmd("TTL", "e") == b":-2\r\n"


def test_flushdb(conn):
    conn.cmd("SET", "a", "1")
    assert conn.cmd("FLUSHDB") == b"+OK\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"


@pytest.mark.parametrize("cmd", ["FLUSHALL", "FLUSHDB"])
@pytest.mark.parametrize("mode", ["ASYNC", "SYNC", "async"])
def test_flush_modes(conn, cmd, mode):
    conn.cmd("SET", "a", "1")
    assert conn.cmd(cmd, mode) == b"+OK\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"


@pytest.mark.parametrize("cmd", ["FLUSHALL", "FLUSHDB"])
def test_flush_bad_option(conn, cmd):
    conn.cmd("SET", "a", "1")
    assert conn.cmd(cmd, "BOGUS") == b"-ERR syntax error\r\n"
    assert conn.cmd(cmd, "ASYNC", "SYNC") == b"-ERR syntax error\r\n"
    assert conn.cmd("DBSIZE") == b":1\r\n"


def test_flushall_via_client(r):
    r.set("a", "1")
    assert r.flushall() is True
    r.set("a", "1")
    assert r.flushall(asynchronous=True) is True
    assert r.dbsize() == 0


# ---------------------------------------------------------------- WAIT / FUNCTION

def test_wait_no_replicas(conn):
    assert conn.cmd("WAIT", "0", "0") == b":0\r\n"
    t0 = time.monotonic()
    assert conn.cmd("WAIT", "1", "50") == b":0\r\n"
    assert time.monotonic() - t0 < 3


def test_wait_errors(conn):
    assert conn.cmd("WAIT", "x", "0") == b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("WAIT", "0", "x") == b"-ERR timeout is not an integer or out of range\r\n"
    assert conn.cmd("WAIT", "0", "-1") == b"-ERR timeout is negative\r\n"


def test_function_list_and_flush(conn):
    assert conn.cmd("FUNCTION", "LIST") == b"*0\r\n"
    assert conn.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert conn.cmd("FUNCTION", "FLUSH", "ASYNC") == b"+OK\r\n"
    assert conn.cmd("FUNCTION", "FLUSH", "SYNC") == b"+OK\r\n"
    assert conn.cmd("function", "list") == b"*0\r\n"


def test_function_via_client(r):
    assert r.function_list() == []
    assert r.function_flush() in (True, b"OK")


# ---------------------------------------------------------------- redis-cli

def test_cli_smoke(server):
    def cli(*args):
        out = subprocess.run(["redis-cli", "-h", server.host, "-p", str(server.port)] + list(args),
                             capture_output=True, timeout=10)
        assert out.returncode == 0, out
        return out.stdout

    assert cli("PING") == b"PONG\n"
    assert cli("SET", "k", "hello world") == b"OK\n"
    assert cli("GET", "k") == b"hello world\n"
    assert cli("HSET", "h", "f", "v") == b"1\n"
    assert cli("HGETALL", "h") == b"f\nv\n"
    assert cli("GET", "missing") == b"\n"
    assert cli("--no-raw", "GET", "missing") == b"(nil)\n"
    assert cli("--no-raw", "INCR", "n") == b"(integer) 1\n"
    assert cli("-3", "--no-raw", "HGETALL", "h") == b'1# "f" => "v"\n'
    assert cli("-3", "--no-raw", "GET", "missing") == b"(nil)\n"
    out = cli("INFO", "server")
    assert b"redis_version:7.0.15" in out


# ---------------------------------------------------------------- latchd only

def test_latchd_only_port_zero(latchd_factory):
    # --port 0: the kernel picks a port and latchd announces it on stdout
    # ("Ready to accept connections tcp port <N>").
    srv = latchd_factory(port=0)
    log = srv.log()
    ports = [int(p) for p in re.findall(r"port[ =:](\d+)", log)]
    assert srv.port in ports and srv.port != 0, log
    c = srv.raw()
    assert c.cmd("PING") == b"+PONG\r\n"
    info = parse(c.cmd("INFO", "server"))
    assert b"\r\ntcp_port:%d\r\n" % srv.port in info


# ---------------------------------------------------------------- idle timeout

def test_idle_client_closed_after_timeout(server_factory):
    srv = server_factory("--timeout", "1")
    idle = srv.raw()
    busy = srv.raw()
    assert idle.cmd("PING") == b"+PONG\r\n"
    deadline = time.monotonic() + 4.0
    closed = False
    while time.monotonic() < deadline and not closed:
        assert busy.cmd("PING") == b"+PONG\r\n"   # activity keeps this one alive
        closed = idle.is_closed(wait=0.25)
    assert closed
    assert busy.cmd("PING") == b"+PONG\r\n"


def test_config_set_timeout_applies_to_live_clients(server_factory):
    srv = server_factory()
    admin = srv.raw()
    idle = srv.raw()
    assert idle.cmd("PING") == b"+PONG\r\n"
    assert not idle.is_closed(wait=1.2)
    assert admin.cmd("CONFIG", "SET", "timeout", "1") == b"+OK\r\n"
    deadline = time.monotonic() + 4.0
    closed = False
    while time.monotonic() < deadline and not closed:
        assert admin.cmd("PING") == b"+PONG\r\n"
        closed = idle.is_closed(wait=0.25)
    assert closed
