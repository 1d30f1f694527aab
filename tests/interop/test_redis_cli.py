"""redis-cli (Debian's redis-tools 7.0.15) as people use it: one-shot
commands, the interactive REPL on a pseudo terminal (with the argument hints
it builds from COMMAND DOCS), --pipe mass insertion, -3 (RESP3) output,
--bigkeys/--memkeys/--stat/--latency-history and SUBSCRIBE. Expected output is what redis-cli prints against redis-server."""

import os
import re
import subprocess
import time

import pytest

from interop_util import Repl, run, tool
from pubsub_util import wait_numsub
from resp_util import encode_command, parse

PIPE_LINES = 100000


@pytest.fixture
def cli(server):
    """cli(*args, stdin=None) -> (status, stdout, stderr) of one redis-cli run."""
    path = tool("redis-cli")

    def call(*args, stdin=None):
        return run([path, "-h", server.host, "-p", str(server.port)] + list(args), stdin=stdin)

    return call


def out(cli, *args, stdin=None):
    status, stdout, stderr = cli(*args, stdin=stdin)
    assert (status, stderr) == (0, ""), (args, status, stdout, stderr)
    return stdout


@pytest.mark.parametrize("name", ["redis-cli", "redis-benchmark"])
def test_tool_version(name):
    """The expected output here is redis-tools 7.0's (Debian 12 ships 7.0.15)."""
    status, stdout, stderr = run([tool(name), "--version"])
    print(stdout.strip())
    assert status == 0 and re.fullmatch(r"%s 7\.0\.\d+\n" % name, stdout), (stdout, stderr)


def test_one_shot_commands(cli):
    assert out(cli, "PING") == "PONG\n"
    assert out(cli, "SET", "k", "v", "PX", "60000", "NX") == "OK\n"
    assert out(cli, "SET", "k", "v", "PX", "60000", "NX") == "\n"      # nil, raw output
    assert out(cli, "GET", "k") == "v\n"
    assert out(cli, "--no-raw", "GET", "nosuch") == "(nil)\n"
    assert out(cli, "--no-raw", "INCR", "n") == "(integer) 1\n"
    assert out(cli, "--no-raw", "HSET", "h", "f", "v", "g", "w") == "(integer) 2\n"
    assert out(cli, "--no-raw", "HGETALL", "h") == '1) "f"\n2) "v"\n3) "g"\n4) "w"\n'
    assert out(cli, "--no-raw", "HGETALL", "nosuch") == "(empty array)\n"
    assert out(cli, "--no-raw", "GET") == "(error) ERR wrong number of arguments for 'get' command\n"
    assert out(cli, "--no-raw", "NOSUCHCMD", "a") == (
        "(error) ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' \n")


def test_one_shot_repeat_and_stdin_argument(cli):
    assert out(cli, "-r", "3", "INCR", "c") == "1\n2\n3\n"
    assert out(cli, "-x", "SET", "xk", stdin=b"from stdin") == "OK\n"
    assert out(cli, "GET", "xk") == "from stdin\n"


def test_scan_and_bigkeys(cli, server):
    r = server.client()
    r.mset({"lock:%d" % i: "tok" for i in range(30)})
    r.hset("rlock", "uuid:1", 2)
    assert sorted(out(cli, "--scan").split()) == sorted(["rlock"] + ["lock:%d" % i for i in range(30)])
    assert out(cli, "--scan", "--pattern", "rl*") == "rlock\n"
    summary = out(cli, "--bigkeys")
    assert "1 hashs with 1 fields (03.23% of keys, avg size 1.00)\n" in summary
    assert "30 strings with 90 bytes (96.77% of keys, avg size 3.00)\n" in summary


def timed_lines(server, seconds, *args):
    """What a redis-cli mode that runs until interrupted printed in its
    first seconds (line-buffered through stdbuf: a pipe would hold it)."""
    cmd = ["stdbuf", "-oL", tool("redis-cli"), "-h", server.host, "-p", str(server.port)] + list(args)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(seconds)
    p.terminate()
    stdout, stderr = p.communicate(timeout=10)
    assert stderr == b"", stderr
    return stdout.decode().splitlines()


def test_stat_memkeys_and_latency_history(cli, server):
    r = server.client()
    r.mset({"lock:%d" % i: "tok" for i in range(5)})
    r.hset("rlock", "uuid:1", 2)
    summary = out(cli, "--memkeys")
    assert re.search(r"^1 hashs with \d+ bytes \(16\.67% of keys, avg size \d+\.\d\d\)$", summary, re.M)
    assert re.search(r"^5 strings with \d+ bytes \(83\.33% of keys, avg size \d+\.\d\d\)$", summary, re.M)
    lines = timed_lines(server, 1.5, "--stat", "-i", "0.2")
    assert lines[0].startswith("------- data ------ ---")
    assert lines[1].split()[:4] == ["keys", "mem", "clients", "blocked"]
    assert len(lines) >= 4 and all(row.split()[0] == "6" for row in lines[2:])
    # "min max avg samples" per ping, and " -- 1.00 seconds range" each period
    lines = timed_lines(server, 2.5, "--latency-history", "-i", "1")
    samples = [row for row in lines if re.fullmatch(r"\d+ \d+ \d+\.\d\d \d+", row)]
    periods = [row for row in lines if re.fullmatch(r" -- \d+\.\d\d seconds range", row)]
    assert len(samples) >= 10 and len(periods) >= 1 and len(samples) + len(periods) == len(lines), lines


def test_eval_file(cli, tmp_path):
    script = tmp_path / "lock.lua"
    script.write_text("if redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2], 'nx') then "
                      "return redis.call('pttl', KEYS[1]) > 0 end return {KEYS[1], ARGV[1]}")
    assert out(cli, "--no-raw", "--eval", str(script), "lk", ",", "tok", "5000") == "(integer) 1\n"
    assert out(cli, "--no-raw", "--eval", str(script), "lk", ",", "tok", "5000") == (
        '1) "lk"\n2) "tok"\n')


# -- RESP3 (-3)

def test_resp3_output(cli):
    assert out(cli, "HSET", "h", "f", "v") == "1\n"
    assert out(cli, "-3", "--no-raw", "HGETALL", "h") == '1# "f" => "v"\n'
    assert out(cli, "-3", "--no-raw", "HGETALL", "nosuch") == "(empty hash)\n"
    assert out(cli, "-3", "--no-raw", "GET", "nosuch") == "(nil)\n"
    assert out(cli, "-3", "--no-raw", "EVAL", "return nil", "0") == "(nil)\n"
    assert out(cli, "-3", "--no-raw", "EVAL", "return redis.status_reply('FINE')", "0") == "FINE\n"
    assert out(cli, "-3", "--no-raw", "EVAL", "return {1,2,'three',nil,4}", "0") == (
        '1) (integer) 1\n2) (integer) 2\n3) "three"\n')
    hello = out(cli, "-3", "--no-raw", "HELLO", "3")
    assert re.match(r'1# "server" => "redis"\n2# "version" => "7\.0\.\d+"\n'
                    r'3# "proto" => \(integer\) 3\n4# "id" => \(integer\) \d+\n', hello), hello
    assert '5# "mode" => "standalone"\n6# "role" => "master"\n7# "modules" => (empty array)\n' in hello


# -- --pipe

def pipe_input(fmt):
    """PIPE_LINES SET commands, as inline lines or in the RESP protocol (the
    form the Redis mass-insertion guide generates)."""
    if fmt == "inline":
        return "".join("SET key:%d value:%d\n" % (i, i) for i in range(PIPE_LINES)).encode()
    return b"".join(encode_command("SET", "key:%d" % i, "value:%d" % i) for i in range(PIPE_LINES))


@pytest.mark.parametrize("fmt", ["inline", "resp"])
def test_pipe_mass_insertion(cli, server, fmt):
    status, stdout, stderr = cli("--pipe", stdin=pipe_input(fmt))
    assert (status, stderr) == (0, "")
    assert stdout.splitlines()[-1] == "errors: 0, replies: %d" % PIPE_LINES
    r = server.client()
    assert r.dbsize() == PIPE_LINES
    assert r.get("key:0") == b"value:0"
    assert r.get("key:%d" % (PIPE_LINES - 1)) == b"value:%d" % (PIPE_LINES - 1)


def test_pipe_counts_errors_and_reports_them(cli, server):
    """Error replies are counted in the summary, printed on stderr, and make
    redis-cli exit 1; the commands around them still run."""
    status, stdout, stderr = cli("--pipe", stdin=b"SET a 1\nSET s abc\nINCR s\nINCR a\nHSET a f v\n")
    assert status == 1
    assert stdout.splitlines()[-1] == "errors: 2, replies: 5"
    assert stderr == ("ERR value is not an integer or out of range\n"
                      "WRONGTYPE Operation against a key holding the wrong kind of value\n")
    assert server.client().get("a") == b"2"


# -- SUBSCRIBE

@pytest.mark.parametrize("proto", ["2", "3"])
def test_subscribe_receives_publish(server, proto):
    argv = [tool("redis-cli"), "-h", server.host, "-p", str(server.port), "-" + proto,
            "SUBSCRIBE", "news", "redisson_lock__channel:{res}"]
    sub = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        r = server.client()
        for channel in ("news", "redisson_lock__channel:{res}"):
            assert wait_numsub(server.raw(), channel, 1, timeout=10) == 1
        assert r.publish("news", "hello world") == 1
        assert r.publish("redisson_lock__channel:{res}", "0") == 1
        assert r.publish("elsewhere", "nobody") == 0
        expect = ("subscribe\nnews\n1\nsubscribe\nredisson_lock__channel:{res}\n2\n"
                  "message\nnews\nhello world\nmessage\nredisson_lock__channel:{res}\n0\n")
        got = read_exactly(sub.stdout, len(expect))
        assert got == expect
    finally:
        sub.kill()
        sub.wait(5)


def read_exactly(stream, n, timeout=10.0):
    """n bytes of a child's stdout (as text), or what arrived before the timeout."""
    deadline = time.monotonic() + timeout
    data = b""
    os.set_blocking(stream.fileno(), False)
    while len(data) < n and time.monotonic() < deadline:
        chunk = stream.read(n - len(data))
        if chunk:
            data += chunk
        else:
            time.sleep(0.01)
    return data.decode()


# -- the REPL

# What redis-cli 7.0.15 draws after each typed prefix against redis-server
# 7.0.15; the test checks the server under test gives the same hints.
HINTS = {
    "SET": " key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds"
           "|PXAT unix-time-milliseconds|KEEPTTL]",
    "SET k v ": "[NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds"
                "|PXAT unix-time-milliseconds|KEEPTTL]",
    "GET ": "key",
    "DEL ": "key [key ...]",
    "EXISTS ": "key [key ...]",
    "PEXPIRE ": "key milliseconds [NX|XX|GT|LT]",
    "PTTL ": "key",
    "HSET ": "key field value [field value ...]",
    "HINCRBY ": "key field increment",
    "HEXISTS ": "key field",
    "EVAL ": "script numkeys [key [key ...]] [arg [arg ...]]",
    "EVALSHA ": "sha1 numkeys [key [key ...]] [arg [arg ...]]",
    "SCRIPT LOAD ": "script",
    "SUBSCRIBE ": "channel [channel ...]",
    "PSUBSCRIBE ": "pattern [pattern ...]",
    "PUBLISH ": "channel message",
    "CLIENT SETNAME ": "connection-name",
    "CLIENT LIST ": "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]",
    "HELLO ": "[protover [AUTH username password] [SETNAME clientname]]",
    "CONFIG GET ": "parameter [parameter ...]",
    "COMMAND DOCS ": "[command-name [command-name ...]]",
    "COMMAND LIST ": "[FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]",
    "NOSUCHCMD ": "",
}


@pytest.fixture
def repl(server):
    rp = Repl([tool("redis-cli"), "-h", server.host, "-p", str(server.port)])
    rp.prompt = b"%s:%d> " % (server.host.encode(), server.port)
    yield rp
    assert rp.close() == 0


def test_repl_starts_and_answers(repl):
    assert repl.read_until(repl.prompt) == repl.prompt   # nothing before it: no error, no warning
    assert repl.command("PING", repl.prompt) == b"PONG\r\n"
    assert repl.command("set lk tok PX 60000 NX", repl.prompt) == b"OK\r\n"
    assert repl.command("set lk tok PX 60000 NX", repl.prompt) == b"(nil)\r\n"
    assert re.fullmatch(rb"\(integer\) [1-9]\d*\r\n", repl.command("pttl lk", repl.prompt))
    assert repl.command("get", repl.prompt) == (
        b"(error) ERR wrong number of arguments for 'get' command\r\n")
    assert repl.command("hset h f v g w", repl.prompt) == b"(integer) 2\r\n"
    assert repl.command("hgetall h", repl.prompt) == b'1) "f"\r\n2) "v"\r\n3) "g"\r\n4) "w"\r\n'


def test_repl_resp3_after_hello(repl):
    repl.read_until(repl.prompt)
    repl.command("hset h f v", repl.prompt)
    assert b'\r\n3# "proto" => (integer) 3\r\n' in repl.command("hello 3", repl.prompt)
    assert repl.command("hgetall h", repl.prompt) == b'1# "f" => "v"\r\n'
    assert repl.command("hgetall nosuch", repl.prompt) == b"(empty hash)\r\n"


def test_repl_subscribe_then_ctrl_c(repl, server):
    """SUBSCRIBE typed in the REPL prints messages as they come; ^C goes back
    to the prompt on a fresh connection (no longer subscribed)."""
    repl.read_until(repl.prompt)
    repl.type("subscribe news\r")
    assert repl.read_until(b"(integer) 1\r\n").endswith(
        b'\r\nReading messages... (press Ctrl-C to quit)\r\n'
        b'1) "subscribe"\r\n2) "news"\r\n3) (integer) 1\r\n')
    assert server.client().publish("news", "hi there") == 1
    assert repl.read_until(b'3) "hi there"\r\n').endswith(
        b'1) "message"\r\n2) "news"\r\n3) "hi there"\r\n')
    repl.type("\x03")
    repl.read_until(repl.prompt)
    assert repl.command("ping", repl.prompt) == b"PONG\r\n"
    assert repl.command("pubsub numsub news", repl.prompt) == b'1) "news"\r\n2) (integer) 0\r\n'


def test_repl_hints_match_redis(repl):
    repl.read_until(repl.prompt)
    got = {typed: repl.hint_for(typed).decode() for typed in HINTS}
    assert got == HINTS


def test_repl_hints_come_from_command_docs(repl, server):
    """redis-cli 7.0 builds its hints from the server's COMMAND DOCS reply
    and only falls back to its built-in table when that fails. So a command
    the server documents has a hint and one it does not document has none
    (redis-server documents XADD; a lock server need not)."""
    repl.read_until(repl.prompt)
    conn = server.raw()
    for name in ("XADD", "GEOADD", "PEXPIRE", "HSET"):
        documented = parse(conn.cmd("COMMAND", "DOCS", name)) != []
        assert bool(repl.hint_for(name + " ")) == documented, (name, documented)


def test_user_and_pass(cli, server):
    """--user/--pass send AUTH user pass; a wrong one is refused with WRONGPASS."""
    admin = server.raw()
    assert admin.cmd("ACL", "SETUSER", "cli-user", "on", ">pw", "~app:*", "+@all") == b"+OK\r\n"
    try:
        auth = ["--user", "cli-user", "--pass", "pw", "--no-auth-warning"]
        assert out(cli, *auth, "ACL", "WHOAMI") == "cli-user\n"
        assert out(cli, *auth, "SET", "app:1", "v") == "OK\n"
        assert out(cli, *auth, "GET", "other") == (
            "NOPERM this user has no permissions to access one of the keys used as arguments\n\n")
        status, stdout, stderr = cli("--user", "cli-user", "--pass", "bad", "--no-auth-warning", "PING")
        assert "WRONGPASS" in stdout + stderr
    finally:
        admin.cmd("ACL", "DELUSER", "cli-user")
