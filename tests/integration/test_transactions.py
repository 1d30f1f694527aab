"""Transactions as Redis 7.0 runs them: MULTI / EXEC / DISCARD / WATCH /
UNWATCH, byte for byte in RESP2 and RESP3: queue-time refusals doom the
EXEC, runtime errors stay in its array, WATCHed keys touched by writes,
expiry or FLUSHALL make it fail, and the OOM / BUSY / subscribed-mode
checks, CLIENT LIST, MONITOR and pub/sub inside EXEC look as in Redis."""

import re
import time

import pytest
import redis

from resp_util import encode_command, parse

OK = b"+OK\r\n"
QUEUED = b"+QUEUED\r\n"
EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"
NULL_ARRAY = {2: b"*-1\r\n", 3: b"_\r\n"}
BUSY_TEXT = b"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
OOM_TEXT = b"OOM command not allowed when used memory > 'maxmemory'."


def connect(server, proto=2):
    c = server.raw()
    if proto == 3:
        assert c.cmd("HELLO", "3").startswith(b"%")
    return c


def queue(c, *cmds):
    """MULTI, then each command answered +QUEUED."""
    assert c.cmd("MULTI") == OK
    for cmd in cmds:
        assert c.cmd(*cmd) == QUEUED, cmd


def watched_exec(c, key):
    """WATCH was sent already: MULTI, PING, EXEC; the EXEC reply."""
    queue(c, ("PING",))
    return c.cmd("EXEC")


# ---------------------------------------------------------------- basics

@pytest.mark.parametrize("proto", [2, 3])
def test_exec_runs_queued_commands_in_order(server, proto):
    c = connect(server, proto)
    queue(c, ("SET", "s", "x"), ("INCR", "s"), ("GET", "s"), ("HSET", "h", "f", "v"), ("HGETALL", "h"))
    hgetall = b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n" if proto == 3 else b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert c.cmd("EXEC") == (b"*5\r\n+OK\r\n-ERR value is not an integer or out of range\r\n"
                             b"$1\r\nx\r\n:1\r\n" + hgetall)
    assert c.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"


@pytest.mark.parametrize("proto", [2, 3])
def test_empty_transaction_and_misplaced_commands(server, proto):
    c = connect(server, proto)
    assert c.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert c.cmd("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    assert c.cmd("MULTI") == OK
    assert c.cmd("EXEC") == b"*0\r\n"
    # nested MULTI and WATCH inside MULTI are errors that do not doom EXEC
    assert c.cmd("MULTI") == OK
    assert c.cmd("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert c.cmd("WATCH", "k") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert c.cmd("SET", "k", "1") == QUEUED
    assert c.cmd("EXEC") == b"*1\r\n+OK\r\n"


def test_discard_drops_the_queue(conn):
    queue(conn, ("SET", "k", "1"), ("UNWATCH",))
    assert conn.cmd("DISCARD") == OK
    assert conn.cmd("GET", "k") == b"$-1\r\n"
    assert conn.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"


def test_container_without_subcommand_is_queued(conn):
    """COMMAND alone is a whole command: queueing it must not look for a
    subcommand in an argument it does not have (here, SET's stale "k")."""
    assert conn.cmd("SET", "k", "v") == OK
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("COMMAND") == QUEUED
    assert conn.cmd("DISCARD") == OK


def test_pipelined_transaction(conn):
    conn.send(b"".join(encode_command(*a) for a in (("MULTI",), ("SET", "p", "v" * 300), ("GET", "p"),
                                                     ("EXEC",), ("GET", "p"))))
    big = b"$300\r\n" + b"v" * 300 + b"\r\n"
    assert conn.read_replies(5) == [OK, QUEUED, QUEUED, b"*2\r\n+OK\r\n" + big, big]


@pytest.mark.parametrize("refused, error", [
    (("NOSUCH", "x"), b"-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"),
    (("GET",), b"-ERR wrong number of arguments for 'get' command\r\n"),
    (("CLIENT", "NOSUCH"), b"-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.\r\n"),
    (("CLIENT", "SETNAME"), b"-ERR wrong number of arguments for 'client|setname' command\r\n"),
    (("SHUTDOWN",), b"-ERR Command not allowed inside a transaction\r\n"),
])
def test_queue_time_refusal_dooms_exec(conn, refused, error):
    queue(conn, ("SET", "a", "1"))
    assert conn.cmd(*refused) == error
    assert conn.cmd("SET", "b", "1") == QUEUED     # still queued, never run
    assert conn.cmd("EXEC") == EXECABORT
    assert conn.cmd("EXISTS", "a", "b") == b":0\r\n"
    assert conn.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"


def test_refused_exec_is_an_execabort(conn):
    queue(conn, ("SET", "a", "1"))
    assert conn.cmd("EXEC", "x") == (b"-EXECABORT Transaction discarded because of: "
                                     b"wrong number of arguments for 'exec' command\r\n")
    assert conn.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert conn.cmd("GET", "a") == b"$-1\r\n"


def test_client_list_shows_the_transaction(server):
    c = server.raw()
    me = parse(c.cmd("CLIENT", "ID"))
    queue(c, ("SET", "q", "1"), ("CLIENT", "INFO"))
    other = server.raw()
    line = [ln for ln in parse(other.cmd("CLIENT", "LIST")).split(b"\n") if ln.startswith(b"id=%d " % me)][0]
    assert b" flags=x " in line and b" multi=2 " in line and b" cmd=client|info " in line
    reply = parse(c.cmd("EXEC"))
    assert b" flags=x " in reply[1] and b" multi=2 " in reply[1] and b" cmd=exec " in reply[1]
    info = parse(c.cmd("CLIENT", "INFO"))
    assert b" flags=N " in info and b" multi=-1 " in info
    assert c.cmd("WATCH", "w") == OK
    assert other.cmd("SET", "w", "1") == OK
    assert b" flags=d " in parse(c.cmd("CLIENT", "INFO"))   # dirty: its EXEC will fail


# ---------------------------------------------------------------- WATCH

@pytest.mark.parametrize("proto", [2, 3])
def test_watched_key_written_by_another_client(server, proto):
    c, other = connect(server, proto), server.raw()
    assert c.cmd("WATCH", "w", "w2") == OK
    assert other.cmd("SET", "w", "1") == OK
    queue(c, ("SET", "mine", "1"))
    assert c.cmd("EXEC") == NULL_ARRAY[proto]
    assert c.cmd("GET", "mine") == (b"_\r\n" if proto == 3 else b"$-1\r\n")
    # untouched: it runs, and the watch is gone after EXEC
    assert c.cmd("WATCH", "w") == OK
    queue(c, ("GET", "w"))
    assert c.cmd("EXEC") == b"*1\r\n$1\r\n1\r\n"
    assert other.cmd("SET", "w", "2") == OK
    queue(c, ("GET", "w"))
    assert c.cmd("EXEC") == b"*1\r\n$1\r\n2\r\n"


def test_own_write_after_watch_fails_the_exec(conn):
    assert conn.cmd("WATCH", "w") == OK
    assert conn.cmd("SET", "w", "2") == OK
    assert watched_exec(conn, "w") == b"*-1\r\n"


def test_unwatch_and_discard_forget_the_keys(server):
    c, other = server.raw(), server.raw()
    assert c.cmd("WATCH", "w") == OK
    assert c.cmd("UNWATCH") == OK
    assert other.cmd("SET", "w", "1") == OK
    assert watched_exec(c, "w") == b"*1\r\n+PONG\r\n"
    assert c.cmd("WATCH", "w") == OK
    assert other.cmd("SET", "w", "2") == OK
    queue(c, ("PING",))
    assert c.cmd("DISCARD") == OK
    assert watched_exec(c, "w") == b"*1\r\n+PONG\r\n"
    # a doomed transaction: UNWATCH clears the dirt too
    assert c.cmd("WATCH", "w") == OK
    assert other.cmd("SET", "w", "3") == OK
    assert c.cmd("UNWATCH") == OK
    assert watched_exec(c, "w") == b"*1\r\n+PONG\r\n"


@pytest.mark.parametrize("setup, change, fails", [
    ((), ("DEL", "w"), False),                              # deleting nothing is no change
    ((("HSET", "w", "f", "v"),), ("HDEL", "w", "nof"), False),
    ((("HSET", "w", "f", "v"),), ("HSET", "w", "f", "v"), True),   # same value: still a write
    ((("SET", "w", "v"),), ("GET", "w"), False),
    ((("SET", "w", "v"),), ("EXPIRE", "w", "100"), True),
    ((("SET", "w", "v", "EX", "100"),), ("PERSIST", "w"), True),
    ((("SET", "w", "v"),), ("PERSIST", "w"), False),
    ((("SET", "w", "v"),), ("RENAME", "w", "w9"), True),
    ((("SET", "x", "v"),), ("RENAME", "x", "w"), True),
    ((("RPUSH", "w", "a"),), ("LPOP", "w"), True),
    ((("SET", "w", "1"),), ("SETNX", "w", "2"), False),
    ((), ("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "w"), True),
    ((), ("SETEX", "w", "100", "v"), True),
    ((), ("PSETEX", "w", "100000", "v"), True),
    ((("SET", "w", "v"),), ("GETDEL", "w"), True),
    ((), ("GETDEL", "w"), False),
    ((), ("INCRBY", "w", "5"), True),
    ((), ("DECR", "w"), True),
    ((), ("MSET", "x", "1", "w", "2"), True),
    ((), ("UNLINK", "w"), False),
    ((("SET", "w", "v"),), ("UNLINK", "w"), True),
    ((("SET", "x", "v"),), ("RENAMENX", "x", "w"), True),
    ((), ("HSETNX", "w", "f", "v"), True),
    ((("HSET", "w", "f", "v"),), ("HSETNX", "w", "f", "v"), False),
    ((), ("HINCRBY", "w", "f", "1"), True),
    ((), ("HMSET", "w", "f", "v"), True),
    ((), ("LPUSH", "w", "a"), True),
    ((("RPUSH", "w", "a", "b"),), ("RPOP", "w"), True),
    ((("RPUSH", "w", "a"),), ("LSET", "w", "0", "b"), True),
    ((("RPUSH", "w", "a"),), ("LINSERT", "w", "BEFORE", "a", "b"), True),
    ((("RPUSH", "w", "a"),), ("LINSERT", "w", "BEFORE", "x", "b"), False),
    ((("RPUSH", "w", "a"),), ("LREM", "w", "0", "x"), False),
    ((("RPUSH", "w", "a", "b"),), ("LREM", "w", "0", "a"), True),
    ((("RPUSH", "w", "a"),), ("LTRIM", "w", "0", "-1"), True),
    ((), ("ZADD", "w", "1", "m"), True),
    ((("ZADD", "w", "1", "m"),), ("ZADD", "w", "1", "m"), False),
    ((("ZADD", "w", "1", "m"),), ("ZINCRBY", "w", "1", "m"), True),
    ((("ZADD", "w", "1", "m", "2", "n"),), ("ZREM", "w", "x"), False),
    ((("ZADD", "w", "1", "m", "2", "n"),), ("ZPOPMIN", "w"), True),
    ((("ZADD", "w", "1", "m", "2", "n"),), ("ZREMRANGEBYSCORE", "w", "5", "6"), False),
    ((("ZADD", "w", "1", "m", "2", "n"),), ("ZREMRANGEBYRANK", "w", "0", "0"), True),
    ((("SET", "w", "v"),), ("PEXPIRE", "w", "100000"), True),
    ((("SET", "w", "v"),), ("EXPIREAT", "w", "1"), True),
    ((("SET", "w", "v"),), ("EXPIRE", "w", "100", "XX"), False),
    ((), ("SET", "w", "v", "XX"), False),
])
def test_which_commands_touch_a_watched_key(server, setup, change, fails):
    c, other = server.raw(), server.raw()
    for cmd in setup:
        other.cmd(*cmd)
    assert c.cmd("WATCH", "w") == OK
    other.cmd(*change)
    assert watched_exec(c, "w") == (b"*-1\r\n" if fails else b"*1\r\n+PONG\r\n")


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_flush_touches_watched_keys_that_exist(server, flush):
    c, other = server.raw(), server.raw()
    assert c.cmd("WATCH", "missing") == OK
    assert other.cmd(flush) == OK
    assert watched_exec(c, "missing") == b"*1\r\n+PONG\r\n"
    assert other.cmd("SET", "w", "1") == OK
    assert c.cmd("WATCH", "missing", "w") == OK
    assert other.cmd(flush) == OK
    assert watched_exec(c, "w") == b"*-1\r\n"


def test_watched_key_expiring_fails_the_exec(server):
    c, other = server.raw(), server.raw()
    assert other.cmd("SET", "e", "1", "PX", "50") == OK
    assert c.cmd("WATCH", "e") == OK
    time.sleep(0.2)
    assert watched_exec(c, "e") == b"*-1\r\n"


def test_expiry_without_active_expire(server_factory):
    """Keys past their deadline that nobody reclaimed (DEBUG
    SET-ACTIVE-EXPIRE 0): alive at WATCH and expired since fails the EXEC;
    already expired at WATCH, reclaiming it is no change, writing it is."""
    srv = server_factory("--enable-debug-command", "yes")
    c, other = srv.raw(), srv.raw()
    assert other.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == OK
    assert other.cmd("SET", "e", "1", "PX", "50") == OK
    assert c.cmd("WATCH", "e") == OK
    time.sleep(0.2)
    assert watched_exec(c, "e") == b"*-1\r\n"
    assert other.cmd("SET", "e", "1", "PX", "50") == OK
    time.sleep(0.2)
    assert c.cmd("WATCH", "e") == OK
    assert watched_exec(c, "e") == b"*1\r\n+PONG\r\n"
    assert c.cmd("WATCH", "e") == OK
    assert other.cmd("GET", "e") == b"$-1\r\n"          # reclaimed now
    assert watched_exec(c, "e") == b"*1\r\n+PONG\r\n"
    assert other.cmd("SET", "e", "1", "PX", "50") == OK
    time.sleep(0.2)
    assert c.cmd("WATCH", "e") == OK
    assert other.cmd("SET", "e", "2") == OK
    assert watched_exec(c, "e") == b"*-1\r\n"


def test_watch_in_a_clients_own_transaction_does_not_doom_it(conn):
    assert conn.cmd("WATCH", "k") == OK
    queue(conn, ("SET", "k", "1"), ("INCR", "k"))
    assert conn.cmd("EXEC") == b"*2\r\n+OK\r\n:2\r\n"


# ---------------------------------------------------------------- connection state

def test_reset_and_quit_end_the_transaction(server):
    c, other = server.raw(), server.raw()
    assert c.cmd("WATCH", "w") == OK
    queue(c, ("SET", "k", "1"))
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert other.cmd("SET", "w", "1") == OK
    assert watched_exec(c, "w") == b"*1\r\n+PONG\r\n"     # RESET unwatched too
    queue(c, ("SET", "k", "1"))
    assert c.cmd("QUIT") == OK
    assert c.is_closed()
    assert other.cmd("GET", "k") == b"$-1\r\n"


def test_multi_in_resp2_subscribed_mode(conn):
    assert conn.cmd("SUBSCRIBE", "ch") == b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    assert conn.cmd("MULTI") == (b"-ERR Can't execute 'multi': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING "
                                 b"/ QUIT / RESET are allowed in this context\r\n")
    assert conn.cmd("EXEC") == (b"-EXECABORT Transaction discarded because of: Can't execute 'exec': only "
                                b"(P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
                                b"context\r\n")


def test_subscribe_inside_multi(server):
    c = server.raw()
    queue(c, ("SUBSCRIBE", "ch"), ("PING",))
    assert c.cmd("EXEC") == b"*2\r\n*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    r3 = connect(server, 3)
    assert r3.cmd("SUBSCRIBE", "c3") == b">3\r\n$9\r\nsubscribe\r\n$2\r\nc3\r\n:1\r\n"
    queue(r3, ("PING",))
    assert r3.cmd("EXEC") == b"*1\r\n+PONG\r\n"


def test_eval_inside_multi(conn):
    queue(conn, ("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"),
          ("EVAL", "return redis.call('incr', KEYS[1])", "1", "k"), ("GET", "k"))
    reply = conn.cmd("EXEC")
    assert reply.startswith(b"*3\r\n+OK\r\n-ERR value is not an integer or out of range script: ")
    assert reply.endswith(b"$1\r\nv\r\n")


# ---------------------------------------------------------------- OOM, BUSY, AUTH

def test_oom_inside_multi(server_factory):
    srv = server_factory()
    c, admin = srv.raw(), srv.raw()
    queue(c, ("SET", "k", "1"))
    assert admin.cmd("CONFIG", "SET", "maxmemory", "1") == OK
    assert c.cmd("EXEC") == b"-EXECABORT Transaction discarded because of: " + OOM_TEXT + b"\r\n"
    # over maxmemory everything but EXEC / DISCARD / QUIT / RESET is refused inside MULTI
    assert c.cmd("MULTI") == OK
    assert c.cmd("GET", "k") == b"-" + OOM_TEXT + b"\r\n"
    assert c.cmd("DISCARD") == OK
    assert c.cmd("MULTI") == OK
    assert c.cmd("PING") == b"-" + OOM_TEXT + b"\r\n"
    assert c.cmd("EXEC") == EXECABORT
    assert c.cmd("MULTI") == OK
    assert c.cmd("EXEC") == b"*0\r\n"    # nothing denyoom queued
    assert admin.cmd("CONFIG", "SET", "maxmemory", "0") == OK


def test_busy_script_and_transactions(server_factory):
    srv = server_factory()
    looper, other = srv.raw(timeout=10), srv.raw(timeout=10)
    assert other.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == OK
    queue(other, ("SET", "k", "1"))
    looper.send(encode_command("EVAL", "local i = 0 while true do i = i + 1 end", "0"))
    time.sleep(0.4)
    assert other.cmd("EXEC") == b"-EXECABORT Transaction discarded because of: " + BUSY_TEXT + b"\r\n"
    assert other.cmd("MULTI") == OK                  # allow_busy
    assert other.cmd("GET", "k") == b"-" + BUSY_TEXT + b"\r\n"
    assert other.cmd("DISCARD") == OK
    assert other.cmd("WATCH", "k") == OK           # WATCH and UNWATCH: allow_busy as well
    assert other.cmd("UNWATCH") == OK
    assert other.cmd("SCRIPT", "KILL") == OK
    assert looper.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    assert other.cmd("GET", "k") == b"$-1\r\n"


def test_noauth_inside_and_at_exec(server_factory):
    srv = server_factory("--requirepass", "pw")
    c = srv.raw()
    assert c.cmd("MULTI") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("EXEC") == b"-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "pw") == OK
    queue(c, ("SET", "k", "1"))
    assert c.cmd("EXEC") == b"*1\r\n+OK\r\n"


# ---------------------------------------------------------------- MONITOR, pub/sub

MONITOR_LINE = re.compile(rb"^\+\d+\.\d{6} \[0 ([^\]]+)\] (.*)\r\n$", re.S)


def monitored(m, c):
    """The monitor lines up to c's ECHO ~end~, peer normalised to me/lua."""
    c.cmd("ECHO", "~end~")
    me = ("127.0.0.1:%d" % c.local_port).encode()
    out = []
    while True:
        got = MONITOR_LINE.match(m.read_reply())
        peer = b"me" if got.group(1) == me else got.group(1)
        if got.group(2) == b'"ECHO" "~end~"':
            return out
        out.append(peer + b" " + got.group(2))


def test_monitor_shows_transactions_as_redis(server):
    m, c, other = server.raw(), server.raw(), server.raw()
    assert m.cmd("MONITOR") == OK
    queue(c, ("SET", "a", "1"), ("EVAL", "return redis.call('get', 'a')", "0"))
    assert c.cmd("EXEC") == b"*2\r\n+OK\r\n$1\r\n1\r\n"
    queue(c, ("SET", "a", "2"))
    assert c.cmd("DISCARD") == OK
    assert c.cmd("MULTI") == OK
    c.cmd("NOSUCH")
    assert c.cmd("EXEC") == EXECABORT
    assert c.cmd("WATCH", "a") == OK
    assert other.cmd("DEL", "a") == b":1\r\n"
    queue(c, ("GET", "a"))
    assert c.cmd("EXEC") == b"*-1\r\n"
    lines = [ln for ln in monitored(m, c) if ln.startswith((b"me ", b"lua "))]
    assert lines == [b'me "MULTI"', b'me "SET" "a" "1"', b'me "EVAL" "return redis.call(\'get\', \'a\')" "0"',
                     b'lua "get" "a"', b'me "EXEC"', b'me "MULTI"', b'me "DISCARD"', b'me "MULTI"', b'me "EXEC"',
                     b'me "WATCH" "a"', b'me "MULTI"', b'me "EXEC"']


def test_events_and_publishes_inside_exec(server):
    sub, c, admin = server.raw(), connect(server, 3), server.raw()
    assert admin.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA") == OK
    try:
        sub.send(encode_command("SUBSCRIBE", "__keyevent@0__:set", "ch"))
        sub.read_replies(2)
        assert c.cmd("SUBSCRIBE", "self") == b">3\r\n$9\r\nsubscribe\r\n$4\r\nself\r\n:1\r\n"
        queue(c, ("SET", "a", "1"), ("PUBLISH", "ch", "hi"), ("PUBLISH", "self", "me"), ("GET", "a"))
        # Redis 7.0 puts a push to the client itself inside the EXEC array
        # (so the array's 4 elements end one reply early: the GET's is read next)
        assert c.cmd("EXEC") + c.read_reply() == (b"*4\r\n+OK\r\n:1\r\n>3\r\n$7\r\nmessage\r\n$4\r\nself\r\n"
                                                  b"$2\r\nme\r\n:1\r\n$1\r\n1\r\n")
        assert sub.read_replies(2) == [b"*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$1\r\na\r\n",
                                       b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"]
    finally:
        admin.cmd("CONFIG", "SET", "notify-keyspace-events", "")


# ---------------------------------------------------------------- COMMAND

def test_command_info_and_docs(conn):
    info = parse(conn.cmd("COMMAND", "INFO", "multi", "exec", "discard", "watch", "unwatch", "shutdown"))
    assert [e[:6] for e in info] == [
        [b"multi", 1, [b"noscript", b"loading", b"stale", b"fast", b"allow_busy"], 0, 0, 0],
        [b"exec", 1, [b"noscript", b"loading", b"stale", b"skip_slowlog"], 0, 0, 0],
        [b"discard", 1, [b"noscript", b"loading", b"stale", b"fast", b"allow_busy"], 0, 0, 0],
        [b"watch", -2, [b"noscript", b"loading", b"stale", b"fast", b"allow_busy"], 1, -1, 1],
        [b"unwatch", 1, [b"noscript", b"loading", b"stale", b"fast", b"allow_busy"], 0, 0, 0],
        [b"shutdown", -1, [b"admin", b"noscript", b"loading", b"stale", b"no_multi", b"allow_busy"], 0, 0, 0],
    ]
    docs = parse(conn.cmd("COMMAND", "DOCS", "multi", "exec", "watch"))
    docs = {docs[i]: dict(zip(docs[i + 1][0::2], docs[i + 1][1::2])) for i in range(0, len(docs), 2)}
    assert docs[b"multi"][b"summary"] == b"Mark the start of a transaction block"
    assert docs[b"exec"][b"summary"] == b"Execute all commands issued after MULTI"
    assert [docs[n][b"group"] for n in (b"multi", b"exec", b"watch")] == [b"transactions"] * 3
    assert docs[b"watch"][b"since"] == b"2.2.0"


# ---------------------------------------------------------------- clients

def test_redis_py_pipeline_is_a_transaction(server):
    r = server.client()
    with r.pipeline() as pipe:      # transaction=True: MULTI ... EXEC
        pipe.set("p", "1").incr("p").hset("h", "f", "v").get("p")
        assert pipe.execute() == [True, 2, 1, b"2"]
    with r.pipeline() as pipe:
        pipe.set("s", "x").incr("s").get("s")
        with pytest.raises(redis.ResponseError, match="not an integer"):
            pipe.execute()
    assert r.get("s") == b"x"       # the rest ran


def test_watch_optimistic_lock_retry_loop(server):
    """Two clients increment one counter with WATCH / GET / MULTI / SET /
    EXEC, interleaved so every other attempt of each loses and retries."""
    a, b = server.client(), server.client()
    a.set("counter", "0")
    retries = {"a": 0, "b": 0}

    def attempt(r, name, before_exec=None):
        with r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch("counter")
                    value = int(pipe.get("counter"))
                    if before_exec:
                        before_exec()
                        before_exec = None
                    pipe.multi()
                    pipe.set("counter", value + 1)
                    pipe.execute()
                    return
                except redis.WatchError:
                    retries[name] += 1

    for _ in range(10):
        attempt(a, "a", before_exec=lambda: attempt(b, "b"))
        attempt(b, "b", before_exec=lambda: attempt(a, "a"))
    assert int(a.get("counter")) == 40
    assert retries == {"a": 10, "b": 10}
