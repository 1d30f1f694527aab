"""Sixteen databases: SELECT, SWAPDB, FLUSHDB/FLUSHALL per database, INFO
keyspace, keyspace events and CLIENT LIST per database, WATCH across
SWAPDB/FLUSHDB, scripts in the caller's database. Runs on redis-server and
latchd alike."""

import time

import pytest

from resp_util import parse


def _exec_ping(w):
    assert w.cmd("MULTI") == b"+OK\r\n"
    assert w.cmd("PING") == b"+QUEUED\r\n"
    return w.cmd("EXEC")


def test_databases_default_is_16(r):
    assert r.config_get("databases") == {"databases": "16"}


def test_databases_is_immutable(conn):
    assert conn.cmd("CONFIG", "SET", "databases", "8").startswith(
        b"-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")


def test_select_each_database_holds_its_own_keys(server):
    clients = [server.client(db=i) for i in range(16)]
    for i, c in enumerate(clients):
        c.set("k", str(i))
    for i, c in enumerate(clients):
        assert c.get("k") == str(i).encode()
        assert c.dbsize() == 1


def test_select_switches_on_one_connection(conn):
    assert conn.cmd("SET", "k", "zero") == b"+OK\r\n"
    assert conn.cmd("SELECT", "15") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$-1\r\n"
    assert conn.cmd("SET", "k", "fifteen") == b"+OK\r\n"
    assert conn.cmd("SELECT", "0") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$4\r\nzero\r\n"


def test_keys_scan_exists_per_database(server):
    a, b = server.client(db=0), server.client(db=1)
    a.mset({"a1": 1, "a2": 2})
    b.set("b1", 1)
    assert sorted(a.keys("*")) == [b"a1", b"a2"]
    assert b.keys("*") == [b"b1"]
    assert sorted(b.scan_iter()) == [b"b1"]
    assert a.exists("b1") == 0 and b.exists("a1") == 0


def test_info_keyspace_one_line_per_nonempty_database(server):
    server.client(db=0).set("x", 1)
    c2 = server.client(db=2)
    c2.set("y", 1)
    c2.set("z", 1, px=100000)
    server.client(db=9)   # selected, never written: not listed
    info = parse(server.raw().cmd("INFO", "keyspace"))
    lines = [l for l in info.split(b"\r\n") if l.startswith(b"db")]
    assert lines == [b"db0:keys=1,expires=0,avg_ttl=0", b"db2:keys=2,expires=1,avg_ttl=" + lines[1].split(b"avg_ttl=")[1]]


def test_flushdb_empties_only_the_selected_database(server):
    a, b = server.client(db=0), server.client(db=3)
    a.set("k", 1)
    b.set("k", 1)
    assert b.flushdb() is True
    assert b.dbsize() == 0 and a.dbsize() == 1
    assert b.flushdb(asynchronous=True) is True


def test_flushall_empties_every_database(server):
    for i in (0, 5, 15):
        server.client(db=i).set("k", 1)
    assert server.client(db=7).flushall() is True
    for i in (0, 5, 15):
        assert server.client(db=i).dbsize() == 0


def test_swapdb_exchanges_contents_with_ttls(server):
    a, b = server.client(db=0), server.client(db=1)
    a.set("x", "from0", px=100000)
    b.set("y", "from1")
    b.hset("h", "f", "v")
    assert a.swapdb(0, 1) is True
    assert a.get("y") == b"from1" and a.hgetall("h") == {b"f": b"v"}
    assert a.exists("x") == 0
    assert b.get("x") == b"from0"
    assert 0 < b.pttl("x") <= 100000
    assert b.exists("y") == 0


def test_swapdb_with_an_unused_database_and_itself(server):
    a = server.client(db=0)
    a.set("k", 1)
    assert a.swapdb(0, 12) is True
    assert a.dbsize() == 0
    assert server.client(db=12).get("k") == b"1"
    assert a.swapdb(12, 12) is True
    assert server.client(db=12).get("k") == b"1"


@pytest.mark.parametrize("args,err", [
    (("x", "1"), b"-ERR invalid first DB index\r\n"),
    (("1", "x"), b"-ERR invalid second DB index\r\n"),
    (("2147483648", "1"), b"-ERR invalid first DB index\r\n"),
    (("0", "16"), b"-ERR DB index is out of range\r\n"),
    (("-1", "0"), b"-ERR DB index is out of range\r\n"),
])
def test_swapdb_errors(conn, args, err):
    assert conn.cmd("SWAPDB", *args) == err


def test_swapdb_arity(conn):
    assert conn.cmd("SWAPDB", "0") == b"-ERR wrong number of arguments for 'swapdb' command\r\n"


def test_watch_is_per_database(server):
    w = server.raw()
    assert w.cmd("SELECT", "1") == b"+OK\r\n"
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    server.client(db=0).set("k", "other db")   # same name, another database
    assert _exec_ping(w) == b"*1\r\n+PONG\r\n"
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    server.client(db=1).set("k", "same db")
    assert _exec_ping(w) == b"*-1\r\n"


@pytest.mark.parametrize("where", ["watched db", "other db"])
def test_swapdb_touches_watched_keys_existing_on_either_side(server, where):
    w = server.raw()
    assert w.cmd("SELECT", "1") == b"+OK\r\n"
    server.client(db=1 if where == "watched db" else 2).set("k", 1)
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    server.client(db=0).swapdb(1, 2)
    assert _exec_ping(w) == b"*-1\r\n"


def test_swapdb_leaves_watched_missing_keys_alone(server):
    w = server.raw()
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    server.client(db=5).set("other", 1)
    server.client(db=1).swapdb(0, 5)
    assert _exec_ping(w) == b"*1\r\n+PONG\r\n"


def test_flushdb_touches_only_its_own_watched_keys(server):
    w = server.raw()
    server.client(db=0).set("k", 1)
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    c3 = server.client(db=3)
    c3.set("k", 1)
    c3.flushdb()
    assert _exec_ping(w) == b"*1\r\n+PONG\r\n"
    assert w.cmd("WATCH", "k") == b"+OK\r\n"
    server.client(db=0).flushdb()
    assert w.cmd("MULTI") == b"+OK\r\n"
    assert w.cmd("EXEC") == b"*-1\r\n"


def test_keyspace_events_name_the_database(server):
    admin = server.client()
    admin.config_set("notify-keyspace-events", "KEA")
    try:
        sub = server.client().pubsub()
        sub.psubscribe("__key*@*__:*")
        assert sub.get_message(timeout=2)["type"] == "psubscribe"
        server.client(db=7).set("k", 1)
        got = set()
        for _ in range(2):
            m = sub.get_message(timeout=2)
            got.add((m["channel"], m["data"]))
        assert got == {(b"__keyspace@7__:k", b"set"), (b"__keyevent@7__:set", b"k")}
        sub.close()
    finally:
        admin.config_set("notify-keyspace-events", "")


def test_expired_event_names_the_database(server):
    admin = server.client()
    admin.config_set("notify-keyspace-events", "Ex")
    try:
        sub = server.client().pubsub()
        sub.subscribe("__keyevent@4__:expired")
        assert sub.get_message(timeout=2)["type"] == "subscribe"
        server.client(db=4).set("gone", 1, px=20)
        deadline = time.time() + 5
        m = None
        while m is None and time.time() < deadline:
            m = sub.get_message(timeout=0.5)
        assert m is not None and m["data"] == b"gone"
        sub.close()
    finally:
        admin.config_set("notify-keyspace-events", "")


def test_client_list_shows_the_selected_database(conn):
    assert conn.cmd("SELECT", "11") == b"+OK\r\n"
    assert b" db=11 " in parse(conn.cmd("CLIENT", "INFO"))
    assert conn.cmd("RESET") == b"+RESET\r\n"
    assert b" db=0 " in parse(conn.cmd("CLIENT", "INFO"))


def test_script_runs_in_the_callers_database(server):
    c = server.client(db=6)
    c.set("k", "six")
    assert c.eval("return redis.call('get', KEYS[1])", 1, "k") == b"six"
    assert server.client(db=0).eval("return redis.call('get', KEYS[1])", 1, "k") is None


def test_select_inside_a_script_leaves_the_caller_where_it_was(server):
    c = server.client(db=2)
    c.set("k", "two")
    assert c.eval("redis.call('select', 9); redis.call('set', KEYS[1], 'nine'); return 1", 1, "k") == 1
    assert c.get("k") == b"two"
    assert server.client(db=9).get("k") == b"nine"


@pytest.mark.parametrize("in_db1,outcome", [
    (None, b"*1\r\n+PONG\r\n"),        # nothing replaced by a dead key: no change
    ("stale", b"*1\r\n+PONG\r\n"),     # a dead key replaced by a dead key: no change
    ("live", b"*-1\r\n"),                # a live key replaced by a dead one: a change
])
def test_swapdb_stale_keys_and_watch(server, in_db1, outcome):
    admin = server.raw()
    assert admin.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    try:
        server.client(db=0).set("x", "foo", px=1)
        if in_db1:
            server.client(db=1).set("x", "bar", px=1 if in_db1 == "stale" else None)
        time.sleep(0.01)
        w = server.raw()
        assert w.cmd("SELECT", "1") == b"+OK\r\n"
        assert w.cmd("WATCH", "x") == b"+OK\r\n"
        admin.cmd("SWAPDB", "0", "1")
        assert _exec_ping(w) == outcome
    finally:
        admin.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


# ---------------------------------------------------------------- MOVE

def test_move_carries_value_and_ttl(server):
    a, b = server.client(db=0), server.client(db=10)
    a.set("s", "v", px=100000)
    a.rpush("l", "x", "y")
    a.zadd("z", {"m": 1.5})
    a.hset("h", mapping={"f": "v", "g": "w"})
    for k in ("s", "l", "z", "h"):
        assert a.move(k, 10) is True
        assert a.exists(k) == 0
    assert b.get("s") == b"v" and 0 < b.pttl("s") <= 100000
    assert b.lrange("l", 0, -1) == [b"x", b"y"]
    assert b.zrange("z", 0, -1, withscores=True) == [(b"m", 1.5)]
    assert b.hgetall("h") == {b"f": b"v", b"g": b"w"}
    assert b.ttl("l") == -1


def test_move_refuses_existing_target_and_missing_source(server):
    a, b = server.client(db=0), server.client(db=1)
    a.set("k", "src")
    b.set("k", "dst")
    assert a.move("k", 1) is False
    assert a.get("k") == b"src" and b.get("k") == b"dst"
    assert a.move("nosuch", 1) is False


@pytest.mark.parametrize("args,err", [
    (("k", "0"), b"-ERR source and destination objects are the same\r\n"),
    (("k", "16"), b"-ERR DB index is out of range\r\n"),
    (("k", "-1"), b"-ERR DB index is out of range\r\n"),
    (("k", "x"), b"-ERR value is not an integer or out of range\r\n"),
    (("k", "2147483648"), b"-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"),
    (("k",), b"-ERR wrong number of arguments for 'move' command\r\n"),
])
def test_move_errors(conn, args, err):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("MOVE", *args) == err


def test_move_events_and_watch(server):
    admin = server.client()
    admin.config_set("notify-keyspace-events", "KEg")
    try:
        sub = server.client().pubsub()
        sub.psubscribe("__key*")
        assert sub.get_message(timeout=2)["type"] == "psubscribe"
        w = server.raw()
        assert w.cmd("SELECT", "3") == b"+OK\r\n"
        assert w.cmd("WATCH", "k") == b"+OK\r\n"
        c = server.client(db=2)
        c.set("k", 1)
        assert c.move("k", 3) is True
        got = []
        for _ in range(4):
            m = sub.get_message(timeout=2)
            got.append((m["channel"], m["data"]))
        assert sorted(got) == sorted([(b"__keyspace@2__:k", b"move_from"), (b"__keyevent@2__:move_from", b"k"),
                                      (b"__keyspace@3__:k", b"move_to"), (b"__keyevent@3__:move_to", b"k")])
        sub.close()
        assert _exec_ping(w) == b"*-1\r\n"
    finally:
        admin.config_set("notify-keyspace-events", "")


def test_move_of_a_held_lock_keeps_it_held(server):
    c = server.client(db=0)
    c.hset("lock", "owner:1", 1)
    c.pexpire("lock", 30000)
    assert c.move("lock", 4) is True
    d = server.client(db=4)
    assert d.hget("lock", "owner:1") == b"1" and 0 < d.pttl("lock") <= 30000
