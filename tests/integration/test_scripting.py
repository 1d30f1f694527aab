"""EVAL / EVALSHA / EVAL_RO / EVALSHA_RO / SCRIPT as Redis 7.0 does them:
replies and error texts byte for byte (raw connection), the server-wide
script cache, numkeys and arity errors, read-only scripts, BUSY / SCRIPT KILL."""

import time

import pytest

from resp_util import encode_command, parse
from script_util import NIL, bulk, sha1hex

NOSCRIPT = b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
NEGATIVE = b"-ERR Number of keys can't be negative\r\n"
TOO_MANY = b"-ERR Number of keys can't be greater than number of args\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
RO_WRITE = "ERR Write commands are not allowed from read-only scripts."
BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
NOTBUSY = b"-NOTBUSY No scripts in execution right now.\r\n"
RETURN_1_SHA = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"   # sha1("return 1")


def script_err(text, body, line=1):
    return b"-%s script: %s, on @user_script:%d.\r\n" % (
        text.encode(), sha1hex(body).encode(), line)


def exists(conn, *shas):
    return parse(conn.cmd("SCRIPT", "EXISTS", *shas))


# ---------------------------------------------------------------- EVAL basics

def test_eval_returns_integer(conn):
    assert conn.cmd("EVAL", "return 1", "0") == b":1\r\n"


def test_eval_keys_and_argv(conn):
    body = "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}"
    assert conn.cmd("EVAL", body, "2", "k1", "k2", "a1", "a2") == (
        b"*6\r\n$2\r\nk1\r\n$2\r\nk2\r\n$2\r\na1\r\n$2\r\na2\r\n:2\r\n:2\r\n")


def test_eval_zero_keys_all_args_are_argv(conn):
    assert conn.cmd("EVAL", "return {#KEYS, #ARGV}", "0", "a", "b") == b"*2\r\n:0\r\n:2\r\n"
    assert conn.cmd("EVAL", "return {#KEYS, #ARGV}", "2", "a", "b", "c") == b"*2\r\n:2\r\n:1\r\n"
    assert conn.cmd("EVAL", "return {#KEYS, #ARGV}", "3", "a", "b", "c") == b"*2\r\n:3\r\n:0\r\n"


def test_eval_command_name_case_insensitive(conn):
    assert conn.cmd("eval", "return 7", "0") == b":7\r\n"
    assert conn.cmd("EvAl", "return 7", "0") == b":7\r\n"
    conn.cmd("SCRIPT", "LOAD", "return 7")
    assert conn.cmd("evalsha", sha1hex("return 7"), "0") == b":7\r\n"
    assert conn.cmd("script", "exists", sha1hex("return 7")) == b"*1\r\n:1\r\n"


def test_eval_empty_script_returns_nil(conn):
    assert conn.cmd("EVAL", "", "0") == NIL
    assert conn.cmd("EVAL", "-- only a comment", "0") == NIL
    assert conn.cmd("EVAL", "return", "0") == NIL


def test_eval_writes_are_visible(conn):
    assert conn.cmd("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


def test_eval_with_pyclient(r):
    assert r.eval("return {KEYS[1], ARGV[1]}", 1, "key", "arg") == [b"key", b"arg"]


def test_register_script_flow_with_pyclient(r):
    # redis-py: EVALSHA, on NOSCRIPT -> SCRIPT LOAD, then EVALSHA again
    r.script_flush()
    s = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert s(keys=["counter"], args=[5]) == 5
    assert s(keys=["counter"], args=[2]) == 7
    assert r.script_exists(s.sha) == [True]


# ---------------------------------------------------------------- SCRIPT LOAD / EXISTS

def test_script_load_returns_lowercase_sha1(conn):
    assert conn.cmd("SCRIPT", "LOAD", "return 1") == bulk(RETURN_1_SHA)


@pytest.mark.parametrize("body", [
    b"return 1 ",
    b"return 1\n",
    b"\nreturn 1",
    b"return 'caf\xc3\xa9'",
    b"return 'a\x00b'",
    b"return '\xff\xfe'",
    b"",
], ids=["trailing-space", "trailing-newline", "leading-newline", "utf8", "nul-in-string",
        "non-utf8", "empty"])
def test_script_load_hashes_exact_bytes(conn, body):
    sha = sha1hex(body)
    assert conn.cmd("SCRIPT", "LOAD", body) == bulk(sha)
    assert conn.cmd("SCRIPT", "LOAD", body) == bulk(sha)   # idempotent
    assert exists(conn, sha) == [1]


def test_script_load_does_not_run_the_script(conn):
    body = "redis.call('set', 'loaded-not-run', '1') return 1"
    assert conn.cmd("SCRIPT", "LOAD", body) == bulk(sha1hex(body))
    assert conn.cmd("EXISTS", "loaded-not-run") == b":0\r\n"
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == b":1\r\n"
    assert conn.cmd("EXISTS", "loaded-not-run") == b":1\r\n"


def test_script_load_compile_error(conn):
    assert conn.cmd("SCRIPT", "LOAD", "return +") == (
        b"-ERR Error compiling script (new function): user_script:1: "
        b"unexpected symbol near '+'\r\n")
    assert exists(conn, sha1hex("return +")) == [0]


def test_script_exists_mixed_list(conn):
    conn.cmd("SCRIPT", "FLUSH")
    conn.cmd("SCRIPT", "LOAD", "return 1")
    reply = conn.cmd("SCRIPT", "EXISTS", RETURN_1_SHA, "f" * 40, RETURN_1_SHA.upper(),
                     "not-a-sha", RETURN_1_SHA)
    assert reply == b"*5\r\n:1\r\n:0\r\n:1\r\n:0\r\n:1\r\n"


def test_script_exists_with_pyclient(r):
    r.script_flush()
    sha = r.script_load("return 'x'")
    assert sha == sha1hex("return 'x'")
    assert r.script_exists(sha, "0" * 40) == [True, False]


# ---------------------------------------------------------------- EVALSHA

def test_evalsha_after_load(conn):
    sha = parse(conn.cmd("SCRIPT", "LOAD", "return ARGV[1] .. KEYS[1]")).decode()
    assert conn.cmd("EVALSHA", sha, "1", "k", "a") == b"$2\r\nak\r\n"


def test_evalsha_uppercase_sha(conn):
    conn.cmd("SCRIPT", "LOAD", "return 1")
    assert conn.cmd("EVALSHA", RETURN_1_SHA.upper(), "0") == b":1\r\n"
    assert conn.cmd("EVALSHA_RO", RETURN_1_SHA.upper(), "0") == b":1\r\n"


@pytest.mark.parametrize("sha", [
    "f" * 40, "abc", "", RETURN_1_SHA + "00", RETURN_1_SHA[:-1], "z" * 40,
], ids=["unknown", "short", "empty", "too-long", "39-chars", "not-hex"])
def test_evalsha_noscript(conn, sha):
    conn.cmd("SCRIPT", "LOAD", "return 1")
    assert conn.cmd("EVALSHA", sha, "0") == NOSCRIPT
    assert conn.cmd("EVALSHA_RO", sha, "0") == NOSCRIPT


def test_eval_caches_the_body(conn):
    body = "return 'cached by eval'"
    conn.cmd("SCRIPT", "FLUSH")
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == NOSCRIPT
    assert conn.cmd("EVAL", body, "0") == bulk("cached by eval")
    assert exists(conn, sha1hex(body)) == [1]
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == bulk("cached by eval")


def test_eval_ro_caches_the_body(conn):
    body = "return 'cached by eval_ro'"
    conn.cmd("SCRIPT", "FLUSH")
    assert conn.cmd("EVAL_RO", body, "0") == bulk("cached by eval_ro")
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == bulk("cached by eval_ro")


def test_eval_caches_body_that_fails_at_run_time(conn):
    body = "error('boom')"
    conn.cmd("SCRIPT", "FLUSH")
    expected = script_err("ERR user_script:1: boom", body)
    assert conn.cmd("EVAL", body, "0") == expected
    assert exists(conn, sha1hex(body)) == [1]
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == expected


def test_eval_bodies_alike_but_in_the_middle_each_run_their_own(conn):
    # Same length, same 40-byte head and tail: only the middle tells them
    # apart, so a cache that looked at less than the whole body would mix
    # them up. Each round runs all of them again, after a flush too.
    head, tail = "local pad = '" + "h" * 40 + "'; return '", "' -- " + "t" * 40
    bodies = [head + "body-%03d" % i + tail for i in range(100)]
    for rnd in range(3):
        if rnd == 2:
            assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"
        for i, body in enumerate(bodies):
            assert conn.cmd("EVAL", body, "0") == bulk("body-%03d" % i)
    assert conn.cmd("SCRIPT", "LOAD", bodies[7]) == bulk(sha1hex(bodies[7]))


def test_eval_does_not_cache_body_that_fails_to_compile(conn):
    body = "return +"
    conn.cmd("SCRIPT", "FLUSH")
    assert conn.cmd("EVAL", body, "0") == (
        b"-ERR Error compiling script (new function): user_script:1: "
        b"unexpected symbol near '+'\r\n")
    assert exists(conn, sha1hex(body)) == [0]
    assert conn.cmd("EVALSHA", sha1hex(body), "0") == NOSCRIPT


def test_script_cache_is_server_wide(server):
    a = server.raw()
    b = server.raw()
    body = "return 'shared ' .. ARGV[1]"
    sha = sha1hex(body)
    a.cmd("SCRIPT", "FLUSH")
    assert a.cmd("SCRIPT", "LOAD", body) == bulk(sha)
    assert b.cmd("EVALSHA", sha, "0", "x") == bulk("shared x")
    a.close()
    time.sleep(0.1)
    c = server.raw()
    assert c.cmd("EVALSHA", sha, "0", "y") == bulk("shared y")
    assert parse(c.cmd("SCRIPT", "EXISTS", sha)) == [1]


def test_script_cached_by_eval_survives_disconnect(server):
    a = server.raw()
    body = "return 'from a closed connection'"
    a.cmd("SCRIPT", "FLUSH")
    assert a.cmd("EVAL", body, "0") == bulk("from a closed connection")
    a.close()
    time.sleep(0.1)
    b = server.raw()
    assert b.cmd("EVALSHA", sha1hex(body), "0") == bulk("from a closed connection")


# ---------------------------------------------------------------- SCRIPT FLUSH

@pytest.mark.parametrize("mode", [(), ("ASYNC",), ("SYNC",), ("async",), ("sync",)],
                         ids=["default", "ASYNC", "SYNC", "async", "sync"])
def test_script_flush_then_noscript(conn, mode):
    body = "return 'flush me'"
    sha = sha1hex(body)
    conn.cmd("SCRIPT", "LOAD", body)
    assert conn.cmd("EVALSHA", sha, "0") == bulk("flush me")
    assert conn.cmd("SCRIPT", "FLUSH", *mode) == b"+OK\r\n"
    assert exists(conn, sha) == [0]
    assert conn.cmd("EVALSHA", sha, "0") == NOSCRIPT
    # EVAL still works and caches again
    assert conn.cmd("EVAL", body, "0") == bulk("flush me")
    assert conn.cmd("EVALSHA", sha, "0") == bulk("flush me")


def test_script_flush_visible_to_other_connections(server):
    a, b = server.raw(), server.raw()
    a.cmd("SCRIPT", "LOAD", "return 1")
    assert b.cmd("EVALSHA", RETURN_1_SHA, "0") == b":1\r\n"
    assert a.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"
    assert b.cmd("EVALSHA", RETURN_1_SHA, "0") == NOSCRIPT


@pytest.mark.parametrize("args", [("bad",), ("SYNC", "ASYNC"), ("ASYNC", "x")])
def test_script_flush_bad_option(conn, args):
    assert conn.cmd("SCRIPT", "FLUSH", *args) == b"-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"


def test_script_flush_does_not_touch_keys(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- SCRIPT KILL

def test_script_kill_without_running_script(conn):
    assert conn.cmd("SCRIPT", "KILL") == NOTBUSY
    assert conn.cmd("script", "kill") == NOTBUSY


# ---------------------------------------------------------------- numkeys errors

@pytest.mark.parametrize("command", ["EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO"])
@pytest.mark.parametrize("numkeys,extra,expected", [
    ("-1", (), NEGATIVE),
    ("-5", ("a", "b"), NEGATIVE),
    ("-9223372036854775808", (), NEGATIVE),
    ("1", (), TOO_MANY),
    ("3", ("a", "b"), TOO_MANY),
    ("2147483648", (), TOO_MANY),
    ("9223372036854775807", (), TOO_MANY),
    ("x", (), NOT_INT),
    ("1.5", ("a", "b"), NOT_INT),
    ("", (), NOT_INT),
    ("+1", ("a",), NOT_INT),
    (" 1", ("a",), NOT_INT),
    ("01", ("a",), NOT_INT),
    ("-0", (), NOT_INT),
    ("0x1", ("a",), NOT_INT),
    ("1e0", ("a",), NOT_INT),
    ("99999999999999999999", (), NOT_INT),
], ids=["minus1", "minus5", "int64-min", "one-no-args", "three-two-args", "2^31",
        "int64-max", "x", "1.5", "empty", "plus1", "space1", "leading-zero", "minus-zero",
        "hex", "exponent", "overflow"])
def test_numkeys_errors(conn, command, numkeys, extra, expected):
    conn.cmd("SCRIPT", "LOAD", "return 1")
    # for EVALSHA the numkeys check comes before the script lookup, so both
    # a known and an unknown sha give the numkeys error
    first = RETURN_1_SHA if command.startswith("EVALSHA") else "return 1"
    assert conn.cmd(command, first, numkeys, *extra) == expected
    if command.startswith("EVALSHA"):
        assert conn.cmd(command, "f" * 40, numkeys, *extra) == expected


# ---------------------------------------------------------------- arity

@pytest.mark.parametrize("args,name", [
    (("EVAL",), "eval"),
    (("EVAL", "return 1"), "eval"),
    (("eval", "return 1"), "eval"),
    (("EVALSHA",), "evalsha"),
    (("EVALSHA", RETURN_1_SHA), "evalsha"),
    (("EVAL_RO", "return 1"), "eval_ro"),
    (("EVALSHA_RO",), "evalsha_ro"),
    (("EVALSHA_RO", RETURN_1_SHA), "evalsha_ro"),
    (("SCRIPT",), "script"),
    (("SCRIPT", "LOAD"), "script|load"),
    (("SCRIPT", "LOAD", "return 1", "return 2"), "script|load"),
    (("script", "load"), "script|load"),
    (("SCRIPT", "EXISTS"), "script|exists"),
    (("SCRIPT", "KILL", "x"), "script|kill"),
], ids=lambda v: v if isinstance(v, str) else "-".join(v)[:40])
def test_wrong_arity(conn, args, name):
    assert conn.cmd(*args) == b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()


def test_script_unknown_subcommand(conn):
    assert conn.cmd("SCRIPT", "BOGUS") == b"-ERR unknown subcommand 'BOGUS'. Try SCRIPT HELP.\r\n"
    assert conn.cmd("SCRIPT", "bogus", "x") == b"-ERR unknown subcommand 'bogus'. Try SCRIPT HELP.\r\n"


# ---------------------------------------------------------------- read-only scripts

@pytest.mark.parametrize("call", [
    "redis.call('set', KEYS[1], 'v')",
    "redis.call('del', KEYS[1])",
    "redis.call('pexpire', KEYS[1], 100)",
    "redis.call('hincrby', KEYS[1], 'f', 1)",
    "redis.call('publish', KEYS[1], 'm')",
], ids=["set", "del", "pexpire", "hincrby", "publish"])
def test_eval_ro_refuses_writes(conn, call):
    conn.cmd("SET", "ro-key", "orig")
    body = "return " + call
    assert conn.cmd("EVAL_RO", body, "1", "ro-key") == script_err(RO_WRITE, body)
    sha = parse(conn.cmd("SCRIPT", "LOAD", body)).decode()
    assert conn.cmd("EVALSHA_RO", sha, "1", "ro-key") == script_err(RO_WRITE, body)
    assert conn.cmd("GET", "ro-key") == b"$4\r\norig\r\n"


def test_eval_ro_write_error_line_number(conn):
    body = "local x = 1\nlocal y = 2\nreturn redis.call('set', KEYS[1], 'v')"
    assert conn.cmd("EVAL_RO", body, "1", "k") == script_err(RO_WRITE, body, line=3)


def test_eval_ro_write_with_pcall_returns_error_table(conn):
    body = "return redis.pcall('set', KEYS[1], 'v')"
    assert conn.cmd("EVAL_RO", body, "1", "k") == b"-%s\r\n" % RO_WRITE.encode()
    body = "local r = redis.pcall('set', KEYS[1], 'v') return {type(r), r.err}"
    assert conn.cmd("EVAL_RO", body, "1", "k") == (
        b"*2\r\n$5\r\ntable\r\n%s" % bulk(RO_WRITE))
    assert conn.cmd("EXISTS", "k") == b":0\r\n"


def test_eval_ro_reads(conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("HSET", "h", "f", "1")
    body = ("return {redis.call('get', KEYS[1]), redis.call('hget', KEYS[2], 'f'),"
            " redis.call('exists', KEYS[1]), redis.call('pttl', KEYS[1])}")
    assert conn.cmd("EVAL_RO", body, "2", "k", "h") == (
        b"*4\r\n$1\r\nv\r\n$1\r\n1\r\n:1\r\n:-1\r\n")
    assert conn.cmd("EVAL_RO", "return redis.call('get', 'missing')", "0") == NIL


def test_evalsha_write_script_runs_with_evalsha(conn):
    body = "return redis.call('set', KEYS[1], 'v')"
    sha = parse(conn.cmd("SCRIPT", "LOAD", body)).decode()
    assert conn.cmd("EVALSHA_RO", sha, "1", "k") == script_err(RO_WRITE, body)
    assert conn.cmd("EVALSHA", sha, "1", "k") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- errors reach the client

def test_runtime_error_from_evalsha_names_the_script(conn):
    body = "\n\nreturn 1 + nil"
    sha = parse(conn.cmd("SCRIPT", "LOAD", body)).decode()
    expected = script_err("ERR user_script:3: attempt to perform arithmetic on a nil value", body, 3)
    assert conn.cmd("EVALSHA", sha, "0") == expected
    assert conn.cmd("EVAL", body, "0") == expected


def test_connection_usable_after_script_errors(conn):
    assert conn.cmd("EVAL", "error('x')", "0").startswith(b"-ERR user_script:1: x")
    assert conn.cmd("EVAL", "return +", "0").startswith(b"-ERR Error compiling script")
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.cmd("EVAL", "return 2", "0") == b":2\r\n"


def test_pipelined_evals(conn):
    conn.cmd("SCRIPT", "LOAD", "return 1")
    conn.send(encode_command("EVAL", "return redis.call('incr', KEYS[1])", "1", "ctr") * 3
              + encode_command("EVALSHA", RETURN_1_SHA, "0")
              + encode_command("EVALSHA", "f" * 40, "0")
              + encode_command("EVAL", "return redis.call('get', KEYS[1])", "1", "ctr"))
    assert conn.read_replies(6) == [b":1\r\n", b":2\r\n", b":3\r\n", b":1\r\n", NOSCRIPT,
                                    b"$1\r\n3\r\n"]


def test_resp3_client_null_reply(conn):
    conn.cmd("HELLO", "3")
    assert conn.cmd("EVAL", "return nil", "0") == b"_\r\n"
    assert conn.cmd("EVAL", "return redis.call('get', 'nope')", "0") == b"_\r\n"
    assert conn.cmd("EVALSHA", "f" * 40, "0") == NOSCRIPT
    assert conn.cmd("SCRIPT", "EXISTS", "f" * 40) == b"*1\r\n:0\r\n"
    assert conn.cmd("SCRIPT", "LOAD", "return 1") == bulk(RETURN_1_SHA)


# ---------------------------------------------------------------- atomicity, BUSY, SCRIPT KILL

SPIN_300MS = (
    "redis.call('set', KEYS[1], 'script') "
    "local t = redis.call('time') local s = tonumber(t[1]) * 1000000 + tonumber(t[2]) "
    "while true do local n = redis.call('time') "
    "if tonumber(n[1]) * 1000000 + tonumber(n[2]) - s > 300000 then break end end "
    "return redis.call('get', KEYS[1])")


def test_script_runs_atomically(server):
    a, b = server.raw(), server.raw()
    a.send(encode_command("EVAL", SPIN_300MS, "1", "atomic"))
    time.sleep(0.1)
    t0 = time.monotonic()
    assert b.cmd("SET", "atomic", "other") == b"+OK\r\n"     # waits for the script
    waited = time.monotonic() - t0
    assert a.read_reply() == b"$6\r\nscript\r\n"
    assert waited > 0.1
    assert b.cmd("GET", "atomic") == b"$5\r\nother\r\n"


LOOP_FOREVER = "local i = 0 while true do i = i + 1 end"


def start_busy(srv, body):
    looper, other = srv.raw(timeout=10), srv.raw(timeout=10)
    assert other.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == b"+OK\r\n"
    looper.send(encode_command("EVAL", body, "0"))
    time.sleep(0.4)
    return looper, other


def test_busy_then_script_kill(server_factory):
    srv = server_factory()
    looper, other = start_busy(srv, LOOP_FOREVER)
    assert other.cmd("PING") == BUSY
    assert other.cmd("GET", "x") == BUSY
    assert other.cmd("EVAL", "return 1", "0") == BUSY
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert looper.read_reply() == script_err("ERR Script killed by user with SCRIPT KILL...",
                                             LOOP_FOREVER)
    assert other.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("SCRIPT", "KILL") == NOTBUSY
    assert looper.cmd("PING") == b"+PONG\r\n"


PCALL_SWALLOWS_KILL = ("local f = function() while 1 do redis.call('ping') end end "
                       "while 1 do pcall(f) end")


def test_busy_script_kill_from_a_new_connection_even_under_pcall(server_factory):
    # A busy script still accepts connections: a fresh redis-cli is how an
    # operator sends SCRIPT KILL. The script's pcall must not swallow it.
    srv = server_factory()
    looper, other = start_busy(srv, PCALL_SWALLOWS_KILL)
    assert other.cmd("PING") == BUSY
    fresh = srv.raw(timeout=10)
    assert fresh.cmd("PING") == BUSY
    killer = srv.raw(timeout=10)
    assert killer.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert looper.read_reply() == script_err("ERR Script killed by user with SCRIPT KILL...",
                                             PCALL_SWALLOWS_KILL)
    assert fresh.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("PING") == b"+PONG\r\n"


def test_busy_script_still_delivers_what_others_were_sent(server_factory):
    # Output waiting when the script went busy (here a message the script
    # published before looping) leaves while it runs, as Redis flushes
    # in processEventsWhileBlocked: a client may be waiting on it.
    srv = server_factory()
    sub = srv.raw(timeout=10)
    assert parse(sub.cmd("SUBSCRIBE", "ch")) == [b"subscribe", b"ch", 1]
    body = "redis.call('publish', 'ch', 'hello') " + LOOP_FOREVER
    looper, other = start_busy(srv, body)
    assert parse(sub.read_reply(timeout=5)) == [b"message", b"ch", b"hello"]
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert looper.read_reply() == script_err("ERR Script killed by user with SCRIPT KILL...", body)


def test_busy_write_script_is_unkillable(server_factory):
    srv = server_factory()
    body = "redis.call('set', 'w', '1') " + LOOP_FOREVER
    looper, other = start_busy(srv, body)
    assert other.cmd("PING") == BUSY
    assert other.cmd("SCRIPT", "KILL") == (
        b"-UNKILLABLE Sorry the script already executed write commands against the dataset. "
        b"You can either wait the script termination or kill the server in a hard way using "
        b"the SHUTDOWN NOSAVE command.\r\n")
    other.send(encode_command("SHUTDOWN", "NOSAVE"))
    assert other.is_closed(wait=10)
    srv.proc.wait(timeout=10)


def test_redis_call_with_eight_thousand_arguments(conn):
    body = "local a = {} for i=1,7999 do a[i] = 1 end return redis.call('lpush', 'l', unpack(a))"
    assert conn.cmd("EVAL", body, "0") == b":7999\r\n"


def test_redis_acl_check_cmd(server_factory):
    srv = server_factory()
    admin = srv.raw()
    assert admin.cmd("ACL", "SETUSER", "bob", "on", ">123", "+@scripting", "+set", "~x*") == b"+OK\r\n"
    bob = srv.raw()
    assert bob.cmd("AUTH", "bob", "123") == b"+OK\r\n"
    assert bob.cmd("EVAL", "return redis.acl_check_cmd('set','xx',1)", "1", "xx") == b":1\r\n"
    assert bob.cmd("EVAL", "return redis.acl_check_cmd('hset','xx','f',1)", "1", "xx") == b"$-1\r\n"
    assert bob.cmd("EVAL", "return redis.acl_check_cmd('set','yy',1)", "1", "xx") == b"$-1\r\n"
    err = bob.cmd("EVAL", "return redis.acl_check_cmd('invalid-cmd','arg')", "0")
    assert err.startswith(b"-ERR Invalid command passed to redis.acl_check_cmd()")


def test_refused_redis_call_counts_its_own_error_code(server_factory):
    srv = server_factory()
    r = srv.raw()
    r.cmd("CONFIG", "RESETSTAT")
    r.cmd("CONFIG", "SET", "maxmemory", "1")
    assert r.cmd("EVAL", "return redis.call('set','x','y')", "1", "x").startswith(
        b"-OOM command not allowed when used memory > 'maxmemory'.")
    stats = parse(r.cmd("INFO", "errorstats")).decode()
    assert "errorstat_OOM:count=1" in stats and "errorstat_ERR" not in stats
    r.cmd("CONFIG", "SET", "maxmemory", "0")
