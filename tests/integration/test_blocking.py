"""Blocking commands (BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZPOPMAX
BZMPOP), CLIENT UNBLOCK, CLIENT PAUSE and WAIT, byte for byte as Redis 7.0:
waiters served in the order they blocked, a push seen by its waiter before
any later command, non-blocking inside MULTI and scripts, WRONGTYPE,
SWAPDB, disconnects, INFO and CLIENT LIST."""

import socket
import time

import pytest

from resp_util import encode_command, parse, wait_for

NIL_ARRAY = b"*-1\r\n"


def info_field(c, name):
    for line in parse(c.cmd("INFO", "clients")).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(name)


def wait_blocked(c, n):
    assert wait_for(lambda: info_field(c, "blocked_clients") == n), info_field(c, "blocked_clients")


def park(server, c, *cmd, n=None):
    """A new connection sends cmd and is parked; n: blocked clients expected."""
    w = server.raw()
    w.send(encode_command(*cmd))
    if n is not None:
        wait_blocked(c, n)
    return w


def test_waiters_are_served_in_the_order_they_blocked(server, conn):
    waiters = [park(server, conn, "BLPOP", "q", "0", n=i + 1) for i in range(3)]
    assert conn.cmd("RPUSH", "q", "a", "b", "c", "d") == b":4\r\n"
    got = [w.read_reply() for w in waiters]
    assert got == [b"*2\r\n$1\r\nq\r\n$1\r\na\r\n", b"*2\r\n$1\r\nq\r\n$1\r\nb\r\n",
                   b"*2\r\n$1\r\nq\r\n$1\r\nc\r\n"]
    assert conn.call("LRANGE", "q", "0", "-1") == [b"d"]
    assert info_field(conn, "blocked_clients") == 0


def test_a_push_is_seen_by_its_waiter_before_the_next_command(server, conn):
    w = park(server, conn, "BRPOP", "q", "0", n=1)
    # the pusher's next command, in the same packet, finds the list already popped
    conn.send(encode_command("LPUSH", "q", "x") + encode_command("LLEN", "q") + encode_command("EXISTS", "q"))
    assert conn.read_replies(3) == [b":1\r\n", b":0\r\n", b":0\r\n"]
    assert w.read_reply() == b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n"


def test_data_present_pops_at_once_and_wrongtype_stops_the_scan(conn):
    conn.call("RPUSH", "b", "1", "2")
    assert conn.cmd("BLPOP", "a", "b", "0") == b"*2\r\n$1\r\nb\r\n$1\r\n1\r\n"
    assert conn.cmd("BRPOP", "a", "b", "0") == b"*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    conn.call("SET", "s", "v")
    conn.call("RPUSH", "l", "x")
    assert conn.cmd("BLPOP", "a", "s", "l", "0").startswith(b"-WRONGTYPE")
    conn.call("ZADD", "z", "1", "m")
    assert conn.cmd("BZPOPMIN", "s", "z", "0").startswith(b"-WRONGTYPE")
    assert conn.cmd("BZPOPMAX", "nokey", "z", "0") == b"*3\r\n$1\r\nz\r\n$1\r\nm\r\n$1\r\n1\r\n"


@pytest.mark.parametrize("cmd", [
    ("BLPOP", "k"), ("BRPOP", "k"), ("BZPOPMIN", "k"), ("BZPOPMAX", "k"),
    ("BRPOPLPUSH", "k", "d"), ("BLMOVE", "k", "d", "LEFT", "RIGHT"),
])
def test_timeout_errors(conn, cmd):
    assert conn.cmd(*cmd, "abc") == b"-ERR timeout is not a float or out of range\r\n"
    assert conn.cmd(*cmd, "-0.5") == b"-ERR timeout is negative\r\n"
    assert conn.cmd(*cmd, "nan") == b"-ERR timeout is not a float or out of range\r\n"


def test_mpop_argument_errors(conn):
    assert conn.cmd("BLMPOP", "0", "0", "k", "LEFT") == b"-ERR numkeys should be greater than 0\r\n"
    assert conn.cmd("BLMPOP", "0", "2", "k", "LEFT") == b"-ERR syntax error\r\n"
    assert conn.cmd("BLMPOP", "x", "1", "k", "LEFT") == b"-ERR timeout is not a float or out of range\r\n"
    assert conn.cmd("BZMPOP", "0", "1", "k", "LEFT") == b"-ERR syntax error\r\n"
    assert conn.cmd("BZMPOP", "0", "1", "k", "MIN", "COUNT", "0") == b"-ERR count should be greater than 0\r\n"
    assert conn.cmd("BZMPOP", "1") == b"-ERR wrong number of arguments for 'bzmpop' command\r\n"
    assert conn.cmd("BLMOVE", "a", "b", "UP", "LEFT", "0") == b"-ERR syntax error\r\n"


def test_fractional_timeout_times_out_with_a_null(server, conn):
    t0 = time.monotonic()
    assert conn.cmd("BLPOP", "k", "0.1") == NIL_ARRAY
    assert conn.cmd("BRPOPLPUSH", "k", "d", "0.05") == NIL_ARRAY
    assert conn.cmd("BZMPOP", "0.05", "1", "z", "MIN") == NIL_ARRAY
    assert time.monotonic() - t0 >= 0.19
    r3 = server.raw()
    r3.cmd("HELLO", "3")
    assert r3.cmd("BLMPOP", "0.01", "1", "k", "RIGHT") == b"_\r\n"
    assert info_field(conn, "blocked_clients") == 0


def test_bzpop_replies_resp2_and_resp3(server, conn):
    w2 = park(server, conn, "BZPOPMIN", "z", "0", n=1)
    r3 = server.raw()
    r3.cmd("HELLO", "3")
    r3.send(encode_command("BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"))
    wait_blocked(conn, 2)
    conn.call("ZADD", "z", "1", "a", "2.5", "b", "3", "c")
    assert w2.read_reply() == b"*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert r3.read_reply() == b"*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    assert conn.call("EXISTS", "z") == 0


def test_blmpop_served_with_count(server, conn):
    w = park(server, conn, "BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "5", n=1)
    conn.call("RPUSH", "y", "1", "2", "3")
    assert w.read_reply() == b"*2\r\n$1\r\ny\r\n*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n"


def test_blmove_chain_wakes_the_next_waiter(server, conn):
    mover = park(server, conn, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0", n=1)
    popper = park(server, conn, "BLPOP", "dst", "0", n=2)
    conn.call("RPUSH", "src", "v")
    assert mover.read_reply() == b"$1\r\nv\r\n"
    assert popper.read_reply() == b"*2\r\n$3\r\ndst\r\n$1\r\nv\r\n"
    assert conn.call("EXISTS", "src", "dst") == 0


def test_brpoplpush_wrong_destination_type_keeps_the_element(server, conn):
    w = park(server, conn, "BRPOPLPUSH", "src", "dst", "0", n=1)
    conn.call("SET", "dst", "string")
    conn.call("RPUSH", "src", "v")
    assert w.read_reply().startswith(b"-WRONGTYPE")
    assert conn.call("LRANGE", "src", "0", "-1") == [b"v"]
    assert info_field(conn, "blocked_clients") == 0


def test_waiter_of_another_type_stays_blocked(server, conn):
    w = park(server, conn, "BLPOP", "k", "0", n=1)
    conn.call("ZADD", "k", "1", "m")        # a zset does not serve a list waiter
    conn.call("DEL", "k")
    conn.call("SET", "k", "v")
    conn.call("DEL", "k")
    assert info_field(conn, "blocked_clients") == 1
    conn.call("LPUSH", "k", "e")
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\ne\r\n"


def test_push_and_delete_inside_multi_wakes_nobody(server, conn):
    w = park(server, conn, "BLPOP", "k", "0", n=1)
    conn.call("MULTI")
    conn.call("LPUSH", "k", "a")
    conn.call("DEL", "k")
    assert conn.cmd("EXEC") == b"*2\r\n:1\r\n:1\r\n"
    assert info_field(conn, "blocked_clients") == 1
    conn.call("MULTI")
    conn.call("RPUSH", "k", "x", "y")
    conn.call("LPOP", "k")
    conn.call("EXEC")
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n"


def test_blocking_commands_do_not_block_inside_multi(conn):
    conn.call("MULTI")
    for cmd in (("BLPOP", "k", "0"), ("BRPOPLPUSH", "k", "d", "0"), ("BLMOVE", "k", "d", "LEFT", "LEFT", "0"),
                ("BLMPOP", "0", "1", "k", "LEFT"), ("BZPOPMIN", "z", "0"), ("BZMPOP", "0", "1", "z", "MIN")):
        assert conn.cmd(*cmd) == b"+QUEUED\r\n"
    assert conn.cmd("EXEC") == b"*6\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n*-1\r\n"


def test_blocking_commands_in_scripts(conn):
    assert conn.cmd("EVAL", "return redis.call('blmpop', 0, 1, 'k', 'left')", "0") == b"$-1\r\n"
    assert conn.cmd("EVAL", "return redis.call('bzmpop', 0, 1, 'z', 'min')", "0") == b"$-1\r\n"
    err = conn.cmd("EVAL", "return redis.call('blpop', 'k', 0)", "0")
    assert err.startswith(b"-ERR This Redis command is not allowed from script")
    conn.call("RPUSH", "k", "v")
    assert conn.call("EVAL", "return redis.call('blmpop', 0, 1, 'k', 'left')", "0") == [b"k", [b"v"]]


def test_same_key_twice_is_one_wait(server, conn):
    w = park(server, conn, "BLPOP", "k", "k", "k", "0", n=1)
    conn.call("RPUSH", "k", "a", "b")
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\na\r\n"
    assert conn.call("LRANGE", "k", "0", "-1") == [b"b"]


def test_swapdb_wakes_a_waiter_of_the_other_database(server, conn):
    w = server.raw()
    w.cmd("SELECT", "1")
    w.send(encode_command("BLPOP", "k", "0"))
    wait_blocked(conn, 1)
    conn.call("RPUSH", "k", "from0")
    assert conn.call("SWAPDB", "0", "1") == b"OK"
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$5\r\nfrom0\r\n"
    conn.call("FLUSHALL")


def test_rename_and_move_into_place_wake_waiters(server, conn):
    w = park(server, conn, "BLPOP", "k", "0", n=1)
    conn.call("RPUSH", "tmp", "r")
    conn.call("RENAME", "tmp", "k")
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\nr\r\n"
    w1 = server.raw()
    w1.cmd("SELECT", "1")
    w1.send(encode_command("BLPOP", "m", "0"))
    wait_blocked(conn, 1)
    conn.call("RPUSH", "m", "moved")
    assert conn.call("MOVE", "m", "1") == 1
    assert w1.read_reply() == b"*2\r\n$1\r\nm\r\n$5\r\nmoved\r\n"
    conn.call("FLUSHALL")


def test_disconnect_while_blocked_frees_the_wait(server, conn):
    waiters = [park(server, conn, "BLPOP", "k%d" % i, "k", "5", n=i + 1) for i in range(3)]
    for w in waiters:
        w.close()
    wait_blocked(conn, 0)
    assert info_field(conn, "clients_in_timeout_table") == 0
    conn.call("RPUSH", "k", "v")
    assert conn.call("LRANGE", "k", "0", "-1") == [b"v"]


def test_client_list_flag_and_info(server, conn):
    park(server, conn, "BLPOP", "k", "5", n=1)
    assert info_field(conn, "clients_in_timeout_table") == 1
    listing = parse(conn.cmd("CLIENT", "LIST")).decode()
    line = [l for l in listing.splitlines() if "cmd=blpop" in l][0]
    assert " flags=b " in line
    conn.call("CLIENT", "KILL", "ID", line.split()[0].split("=")[1])
    wait_blocked(conn, 0)
    assert info_field(conn, "clients_in_timeout_table") == 0


def client_id_of(conn, cmd):
    listing = parse(conn.cmd("CLIENT", "LIST")).decode()
    return [l for l in listing.splitlines() if "cmd=" + cmd in l][0].split()[0].split("=")[1]


def test_client_unblock(server, conn):
    w = park(server, conn, "BLPOP", "k", "0", n=1)
    cid = client_id_of(conn, "blpop")
    assert conn.cmd("CLIENT", "UNBLOCK", cid) == b":1\r\n"
    assert w.read_reply() == NIL_ARRAY
    assert conn.cmd("CLIENT", "UNBLOCK", cid) == b":0\r\n"
    w.send(encode_command("BZPOPMAX", "z", "0"))
    wait_blocked(conn, 1)
    assert conn.cmd("CLIENT", "UNBLOCK", cid, "ERROR") == b":1\r\n"
    assert w.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert conn.cmd("CLIENT", "UNBLOCK", cid, "maybe") == b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"
    assert conn.cmd("CLIENT", "UNBLOCK", "x") == b"-ERR value is not an integer or out of range\r\n"
    # the unblocked client goes on with what it sent meanwhile
    w.send(encode_command("BLPOP", "k", "0") + encode_command("PING"))
    wait_blocked(conn, 1)
    conn.call("CLIENT", "UNBLOCK", cid, "TIMEOUT")
    assert w.read_replies(2) == [NIL_ARRAY, b"+PONG\r\n"]


def test_keyspace_events_of_a_served_pop(server, conn):
    conn.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        sub = server.raw()
        sub.cmd("PSUBSCRIBE", "__keyevent@0__:*")
        w = park(server, conn, "BLPOP", "k", "0", n=1)
        conn.call("RPUSH", "k", "v")
        assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n"
        events = [parse(sub.read_reply())[2].split(b":")[-1] for _ in range(3)]
        assert events == [b"rpush", b"lpop", b"del"]
    finally:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_monitor_shows_the_blocking_command_once(server, conn):
    mon = server.raw()
    mon.cmd("MONITOR")
    w = park(server, conn, "BLPOP", "k", "0", n=1)
    conn.call("RPUSH", "k", "v")
    w.read_reply()
    shown = []
    while not shown or b'"RPUSH"' not in shown[-1]:   # INFO polls come and go between
        line = mon.read_reply()
        if b'"BLPOP"' in line or b'"RPUSH"' in line:
            shown.append(line)
    conn.call("PING")
    assert [b'"BLPOP"' in l for l in shown] == [True, False]
    assert b"BLPOP" not in mon.read_available(0.2)   # not again when served


def test_client_pause_write_holds_writers_not_readers(server, conn):
    conn.call("SET", "k", "old")
    assert conn.cmd("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK\r\n"
    try:
        reader = server.raw()
        assert reader.cmd("GET", "k") == b"$3\r\nold\r\n"
        writers = [park(server, conn, "SET", "k", "v%d" % i, n=i + 1) for i in range(3)]
        assert "flags=b" in parse(conn.cmd("CLIENT", "LIST")).decode()
        assert reader.cmd("GET", "k") == b"$3\r\nold\r\n"
        assert conn.cmd("CLIENT", "PAUSE", "abc") == b"-ERR timeout is not an integer or out of range\r\n"
        assert conn.cmd("CLIENT", "PAUSE", "-1") == b"-ERR timeout is negative\r\n"
        assert conn.cmd("CLIENT", "PAUSE", "10", "NONE") == b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"
    finally:
        assert conn.cmd("CLIENT", "UNPAUSE") == b"+OK\r\n"
    assert [w.read_reply() for w in writers] == [b"+OK\r\n"] * 3
    assert conn.call("GET", "k") == b"v2"   # in the order they arrived


def test_client_pause_postponed_command_runs_before_the_rest_of_its_pipeline(server, conn):
    """A command held by CLIENT PAUSE runs first when the pause ends, even
    when its client's next bytes are read in the same loop iteration as
    the UNPAUSE (both sent while DEBUG SLEEP keeps the server busy)."""
    conn.call("DEL", "pp")
    conn.call("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        a = park(server, conn, "MULTI")
        a.send(encode_command("INCR", "pp") + encode_command("GET", "pp") + encode_command("EXEC"))
        wait_blocked(conn, 1)
        sleeper, unpauser = server.raw(), server.raw()
        sleeper.send(encode_command("DEBUG", "SLEEP", "0.3"))
        time.sleep(0.1)
        unpauser.send(encode_command("CLIENT", "UNPAUSE"))
        time.sleep(0.05)
        a.send(encode_command("PING"))
        assert sleeper.read_reply() == b"+OK\r\n"
        assert unpauser.read_reply() == b"+OK\r\n"
    finally:
        conn.call("CLIENT", "UNPAUSE")
    assert a.read_replies(5) == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n",
                                 b"*2\r\n:1\r\n$1\r\n1\r\n", b"+PONG\r\n"]


def test_client_pause_ends_by_itself(server, conn):
    conn.call("CLIENT", "PAUSE", "150", "ALL")
    t0 = time.monotonic()
    w = server.raw()
    assert w.cmd("PING") == b"+PONG\r\n"
    assert time.monotonic() - t0 >= 0.1


def test_client_pause_keeps_expiring_keys_for_readers(server, conn):
    conn.call("SET", "k", "v", "PX", "30")
    conn.call("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        time.sleep(0.1)
        assert conn.call("GET", "k") is None
        assert conn.call("DBSIZE") == 1   # read as gone, not reclaimed
    finally:
        conn.call("CLIENT", "UNPAUSE")
    assert conn.call("GET", "k") is None
    assert conn.call("DBSIZE") == 0


def test_client_no_evict(conn):
    assert conn.cmd("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    assert " flags=e " in " " + parse(conn.cmd("CLIENT", "INFO")).decode()
    assert conn.cmd("CLIENT", "NO-EVICT", "off") == b"+OK\r\n"
    assert conn.cmd("CLIENT", "NO-EVICT", "maybe") == b"-ERR syntax error\r\n"


def test_wait_without_replicas(server, conn):
    assert conn.cmd("WAIT", "0", "0") == b":0\r\n"
    t0 = time.monotonic()
    assert conn.cmd("WAIT", "1", "100") == b":0\r\n"
    assert time.monotonic() - t0 >= 0.09
    w = park(server, conn, "WAIT", "2", "0", n=1)
    conn.call("CLIENT", "UNBLOCK", client_id_of(conn, "wait"))
    assert w.read_reply() == b":0\r\n"
    conn.call("MULTI")
    conn.call("WAIT", "1", "0")
    assert conn.cmd("EXEC") == b"*1\r\n:0\r\n"


def test_idle_timeout_spares_blocked_clients(server, conn):
    conn.call("CONFIG", "SET", "timeout", "1")
    try:
        w = park(server, conn, "BLPOP", "k", "0", n=1)
        assert conn.is_closed(wait=4.0)     # the idle one goes
        admin = server.raw()
        assert info_field(admin, "blocked_clients") == 1
        admin.call("RPUSH", "k", "v")
        assert w.read_reply() == b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n"
    finally:
        server.raw().call("CONFIG", "SET", "timeout", "0")


def test_pause_write_lets_a_no_writes_function_run(server):
    """FCALL of a function registered with no-writes is a read for CLIENT
    PAUSE WRITE, as Redis's fcallGetCommandFlags makes it."""
    admin, other = server.raw(), server.raw()
    lib = "#!lua name=pauselib\nredis.register_function{function_name='ro', callback=function() return 'hi' end, flags={'no-writes'}}\nredis.register_function('rw', function() return redis.call('set', 'k', 'v') end)"
    assert admin.cmd("FUNCTION", "LOAD", "REPLACE", lib) == b"$8\r\npauselib\r\n"
    assert admin.cmd("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK\r\n"
    try:
        assert other.cmd("FCALL", "ro", "0") == b"$2\r\nhi\r\n"
        other.send(b"FCALL rw 0\r\n")
        with pytest.raises(socket.timeout):   # held by the pause
            other.read_reply(timeout=0.3)
    finally:
        assert admin.cmd("CLIENT", "UNPAUSE") == b"+OK\r\n"
    assert other.read_reply(timeout=5) == b"+OK\r\n"
    admin.cmd("FUNCTION", "FLUSH")
