"""Keyspace notifications: notify-keyspace-events (flag letters, CONFIG
GET's canonical form, config file and flag), the events every command
raises with Redis's names and classes, class filtering, K/E channel shapes,
"expired" from expiry (and how soon it arrives on latchd), events from
scripts."""

import time

import pytest

from pubsub_util import config_get, drain, frame, require_eval
from resp_util import encode_command, parse


def nke(conn):
    return config_get(conn, "notify-keyspace-events")


@pytest.fixture
def admin(server):
    c = server.raw()
    yield c
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", "") == b"+OK\r\n"


def listen(server, admin, flags, pattern="__key*__:*"):
    """A subscriber to every keyspace/keyevent channel with flags enabled."""
    assert admin.cmd("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
    s = server.raw()
    assert s.cmd("PSUBSCRIBE", pattern) == frame("psubscribe", pattern, 1)
    s.pattern, s.admin = pattern, admin
    return s


END = b"__keyevent@0__:~end~"   # matched by every pattern these tests listen with


def events(sub):
    """(channel, payload) of every pmessage up to an end marker published
    after the command: events of the command come before it."""
    assert sub.admin.cmd("PUBLISH", END, "") == b":1\r\n"
    out = []
    while True:
        m = parse(sub.read_reply())
        if m[2] == END:
            return out
        out.append((m[2], m[3]))


# ---------------------------------------------------------------- the parameter

def test_default_is_off(conn):
    assert nke(conn) == b""


@pytest.mark.parametrize("value,shown", [
    ("KEA", b"AKE"), ("AKE", b"AKE"), ("gK", b"gK"), ("g$hxE", b"g$hxE"), ("Ex", b"xE"), ("K", b"K"),
    ("n", b"n"), ("m", b"m"), ("A", b"A"), ("Am", b"Am"), ("AnmKE", b"AKEm"), ("d", b"d"), ("ed", b"ed"),
    ("gg", b"g"), ("", b""), ("z", b"z"), ("lsztedn", b"lszetdn"), ("Eg$lshzxetd", b"AE"),
])
def test_config_set_get_canonical(admin, value, shown):
    assert admin.cmd("CONFIG", "SET", "notify-keyspace-events", value) == b"+OK\r\n"
    assert nke(admin) == shown


@pytest.mark.parametrize("value", ["KEq", "k", "KE A", "a"])
def test_config_set_rejects_unknown_letters(admin, value):
    admin.cmd("CONFIG", "SET", "notify-keyspace-events", "gE")
    assert admin.cmd("CONFIG", "SET", "notify-keyspace-events", value) == (
        b"-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
        b"Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n")
    assert nke(admin) == b"gE"


def test_flag_and_config_file(server_factory, tmp_path):
    assert nke(server_factory("--notify-keyspace-events", "KEA").raw()) == b"AKE"
    conf = tmp_path / "n.conf"
    conf.write_text("notify-keyspace-events Ex\n")
    assert nke(server_factory(config=str(conf)).raw()) == b"xE"


# ---------------------------------------------------------------- events per command

def ks(key, event):
    return [(b"__keyspace@0__:" + key, event), (b"__keyevent@0__:" + event, key)]


def evs(*pairs):
    out = []
    for key, event in pairs:
        out += ks(key, event)
    return out


# (setup commands, command, events with KEA)
CASES = [
    ([], ["SET", "k", "v"], evs((b"k", b"set"))),
    ([], ["SET", "k", "v", "EX", "100"], evs((b"k", b"set"), (b"k", b"expire"))),
    ([], ["SET", "k", "v", "PX", "100000"], evs((b"k", b"set"), (b"k", b"expire"))),
    ([["SET", "k", "v", "EX", "100"]], ["SET", "k", "w", "KEEPTTL"], evs((b"k", b"set"))),
    ([["SET", "k", "v"]], ["SET", "k", "v", "NX"], []),
    ([], ["SET", "k", "v", "XX"], []),
    ([["SET", "k", "v"]], ["SET", "k", "w", "XX", "GET"], evs((b"k", b"set"))),
    ([["HSET", "k", "f", "v"]], ["SET", "k", "w", "GET"], []),
    ([], ["SETNX", "k", "v"], evs((b"k", b"set"))),
    ([["SET", "k", "v"]], ["SETNX", "k", "v"], []),
    ([], ["SETEX", "k", "10", "v"], evs((b"k", b"set"), (b"k", b"expire"))),
    ([], ["PSETEX", "k", "10000", "v"], evs((b"k", b"set"), (b"k", b"expire"))),
    ([["SET", "k", "v"]], ["GETDEL", "k"], evs((b"k", b"del"))),
    ([], ["GETDEL", "k"], []),
    ([], ["INCR", "n"], evs((b"n", b"incrby"))),
    ([["SET", "n", "5"]], ["DECR", "n"], evs((b"n", b"incrby"))),
    ([["SET", "n", "5"]], ["INCRBY", "n", "5"], evs((b"n", b"incrby"))),
    ([["SET", "n", "5"]], ["DECRBY", "n", "2"], evs((b"n", b"incrby"))),
    ([["SET", "n", "abc"]], ["INCR", "n"], []),
    ([["SET", "n", "9223372036854775807"]], ["INCR", "n"], []),
    ([], ["MSET", "a", "1", "b", "2"], evs((b"a", b"set"), (b"b", b"set"))),
    ([], ["GET", "k"], []),
    ([["SET", "a", "1"], ["SET", "b", "1"]], ["DEL", "a", "b", "zz"], evs((b"a", b"del"), (b"b", b"del"))),
    ([["SET", "a", "1"]], ["UNLINK", "a", "zz"], evs((b"a", b"del"))),
    ([], ["HSET", "h", "f", "1", "g", "2"], evs((b"h", b"hset"))),
    ([["HSET", "h", "f", "1"]], ["HMSET", "h", "f", "2"], evs((b"h", b"hset"))),
    ([["HSET", "h", "f", "1"]], ["HSETNX", "h", "f", "1"], []),
    ([["HSET", "h", "f", "1"]], ["HSETNX", "h", "x", "1"], evs((b"h", b"hset"))),
    ([["HSET", "h", "f", "1"]], ["HINCRBY", "h", "f", "3"], evs((b"h", b"hincrby"))),
    ([["HSET", "h", "f", "x"]], ["HINCRBY", "h", "f", "3"], []),
    ([["HSET", "h", "f", "1", "g", "2"]], ["HDEL", "h", "nope"], []),
    ([["HSET", "h", "f", "1", "g", "2"]], ["HDEL", "h", "f"], evs((b"h", b"hdel"))),
    ([["HSET", "h", "f", "1", "g", "2"]], ["HDEL", "h", "f", "g"], evs((b"h", b"hdel"), (b"h", b"del"))),
    ([["SET", "w", "1"]], ["HSET", "w", "f", "1"], []),
    ([["SET", "r", "1"]], ["RENAME", "r", "r2"], evs((b"r", b"rename_from"), (b"r2", b"rename_to"))),
    ([["SET", "r", "1"], ["SET", "r2", "2"]], ["RENAME", "r", "r2"],
     evs((b"r", b"rename_from"), (b"r2", b"rename_to"))),
    ([["SET", "r", "1"]], ["RENAME", "r", "r"], []),
    ([["SET", "r", "1"]], ["RENAMENX", "r", "r3"], evs((b"r", b"rename_from"), (b"r3", b"rename_to"))),
    ([["SET", "r", "1"], ["SET", "q", "1"]], ["RENAMENX", "r", "q"], []),
    ([["SET", "e", "1"]], ["EXPIRE", "e", "100"], evs((b"e", b"expire"))),
    ([["SET", "e", "1"]], ["PEXPIRE", "e", "100000"], evs((b"e", b"expire"))),
    ([["SET", "e", "1"]], ["EXPIREAT", "e", "99999999999"], evs((b"e", b"expire"))),
    ([["SET", "e", "1"]], ["PEXPIREAT", "e", "99999999999999"], evs((b"e", b"expire"))),
    ([["SET", "e", "1"]], ["EXPIRE", "e", "100", "GT"], []),
    ([["SET", "e", "1"]], ["EXPIRE", "e", "-1"], evs((b"e", b"del"))),
    ([["SET", "e", "1"]], ["PEXPIREAT", "e", "1"], evs((b"e", b"del"))),
    ([], ["EXPIRE", "nope", "10"], []),
    ([["SET", "e", "1", "EX", "100"]], ["PERSIST", "e"], evs((b"e", b"persist"))),
    ([["SET", "e", "1"]], ["PERSIST", "e"], []),
    ([["SET", "k", "1"]], ["FLUSHALL"], []),
    ([["SET", "k", "1"]], ["TTL", "k"], []),
    ([["RPUSH", "l", "2", "1"]], ["SORT", "l", "STORE", "d"], evs((b"d", b"sortstore"))),
    ([["RPUSH", "l", "1"], ["SET", "d", "v"]], ["SORT", "l", "STORE", "d"], evs((b"d", b"sortstore"))),
    ([["SET", "d", "v"]], ["SORT", "nope", "STORE", "d"], evs((b"d", b"del"))),
    ([], ["SORT", "nope", "STORE", "d"], []),
    ([["RPUSH", "l", "1"]], ["SORT", "l"], []),
    ([["SET", "s", "v"]], ["COPY", "s", "d"], evs((b"d", b"copy_to"))),
    ([["SET", "s", "v"], ["SET", "d", "v"]], ["COPY", "s", "d", "REPLACE"], evs((b"d", b"copy_to"))),
    ([["SET", "s", "v"], ["SET", "d", "v"]], ["COPY", "s", "d"], []),
    # a Redisson lock, acquired, re-entered, released
    ([], ["HINCRBY", "lock", "uuid:1", "1"], evs((b"lock", b"hincrby"))),
    ([["HSET", "lock", "uuid:1", "1"]], ["PEXPIRE", "lock", "30000"], evs((b"lock", b"expire"))),
    ([["HSET", "lock", "uuid:1", "1"]], ["DEL", "lock"], evs((b"lock", b"del"))),
    # key names go out byte for byte
    ([], ["SET", b"\x00bin\xff key", "v"], evs((b"\x00bin\xff key", b"set"))),
]


@pytest.mark.parametrize("setup,command,expected", CASES, ids=[" ".join(map(str, c[1])) for c in CASES])
def test_command_events(server, admin, setup, command, expected):
    for cmd in setup:
        admin.cmd(*cmd)
    sub = listen(server, admin, "KEA")
    admin.cmd(*command)
    assert events(sub) == expected


NEW_AND_MISS = [
    ([], ["SET", "k", "v"], [(b"k", b"new")]),
    ([["SET", "k", "v"]], ["SET", "k", "w"], []),
    ([], ["INCR", "n"], [(b"n", b"new")]),
    ([], ["HSET", "h", "f", "1"], [(b"h", b"new")]),
    ([], ["MSET", "a", "1", "b", "2"], [(b"a", b"new"), (b"b", b"new")]),
    ([["SET", "r", "1"]], ["RENAME", "r", "r2"], [(b"r2", b"new")]),
    ([["SET", "r", "1"], ["SET", "r2", "1"]], ["RENAME", "r", "r2"], [(b"r2", b"new")]),
    ([], ["GET", "zz"], [(b"zz", b"keymiss")]),
    ([["SET", "a", "1"]], ["MGET", "zz", "a"], [(b"zz", b"keymiss")]),
    ([], ["EXISTS", "zz"], [(b"zz", b"keymiss")]),
    ([], ["GETDEL", "zz"], [(b"zz", b"keymiss")]),
    ([], ["TTL", "zz"], [(b"zz", b"keymiss")]),
    ([], ["PTTL", "zz"], [(b"zz", b"keymiss")]),
    ([], ["TYPE", "zz"], [(b"zz", b"keymiss")]),
    ([], ["HGET", "zz", "f"], [(b"zz", b"keymiss")]),
    ([], ["HGETALL", "zz"], [(b"zz", b"keymiss")]),
    ([], ["HEXISTS", "zz", "f"], [(b"zz", b"keymiss")]),
    ([], ["STRLEN", "zz"], [(b"zz", b"keymiss")]),
    ([], ["SET", "zz", "v", "GET"], [(b"zz", b"keymiss"), (b"zz", b"new")]),
    ([], ["HINCRBY", "zz", "f", "1"], [(b"zz", b"new")]),
    ([], ["DEL", "zz"], []),
    ([], ["EXPIRE", "zz", "1"], []),
    ([["SET", "s", "v"]], ["COPY", "s", "d"], [(b"d", b"new")]),
    ([["SET", "s", "v"], ["SET", "d", "v"]], ["COPY", "s", "d", "REPLACE"], [(b"d", b"new")]),
    ([], ["COPY", "zz", "d"], [(b"zz", b"keymiss")]),
    ([["RPUSH", "l", "1"]], ["SORT", "l", "STORE", "d"], [(b"d", b"new")]),
    ([["RPUSH", "l", "1"], ["SET", "d", "v"]], ["SORT", "l", "STORE", "d"], []),
    ([["RPUSH", "l", "a"]], ["SORT", "l", "BY", "w_*", "GET", "g_*"], [(b"w_a", b"keymiss"), (b"g_a", b"keymiss")]),
    ([], ["SORT", "zz"], [(b"zz", b"keymiss")]),
    ([], ["RANDOMKEY"], []),
]


@pytest.mark.parametrize("setup,command,expected", NEW_AND_MISS,
                         ids=[" ".join(map(str, c[1])) for c in NEW_AND_MISS])
def test_new_and_keymiss_events(server, admin, setup, command, expected):
    for cmd in setup:
        admin.cmd(*cmd)
    sub = listen(server, admin, "Enm", "__keyevent@0__:*")
    admin.cmd(*command)
    assert events(sub) == [(b"__keyevent@0__:" + e, k) for k, e in expected]


# ---------------------------------------------------------------- classes and channels

@pytest.mark.parametrize("flags,expected", [
    ("g$KE", evs((b"k", b"set"), (b"k", b"expire"), (b"k", b"del"))),
    ("gKE", evs((b"k", b"expire"), (b"k", b"del"))),
    ("$KE", evs((b"k", b"set"))),
    ("hKE", evs((b"h", b"hset"))),
    ("AK", [(b"__keyspace@0__:k", e) for e in (b"set", b"expire", b"del")] + [(b"__keyspace@0__:h", b"hset")]),
    ("AE", [(b"__keyevent@0__:" + e, k) for e, k in
            ((b"set", b"k"), (b"expire", b"k"), (b"del", b"k"), (b"hset", b"h"))]),
    ("KE", []),
    ("g$h", []),
])
def test_classes_and_channel_kinds(server, admin, flags, expected):
    sub = listen(server, admin, flags)
    admin.send(encode_command("SET", "k", "v", "EX", "100") + encode_command("DEL", "k")
               + encode_command("HSET", "h", "f", "v"))
    admin.read_replies(3)
    assert events(sub) == expected


def test_exact_frames_on_plain_subscriptions(server, admin):
    admin.cmd("CONFIG", "SET", "notify-keyspace-events", "KE$")
    space, event = server.raw(), server.raw()
    space.cmd("SUBSCRIBE", "__keyspace@0__:lock")
    event.cmd("SUBSCRIBE", "__keyevent@0__:set")
    admin.cmd("SET", "lock", "1")
    assert space.read_reply() == b"*3\r\n$7\r\nmessage\r\n$19\r\n__keyspace@0__:lock\r\n$3\r\nset\r\n"
    assert event.read_reply() == b"*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$4\r\nlock\r\n"


def test_resp3_subscriber_gets_pushes(server, admin):
    admin.cmd("CONFIG", "SET", "notify-keyspace-events", "E$")
    s = server.raw()
    s.cmd("HELLO", "3")
    s.cmd("SUBSCRIBE", "__keyevent@0__:set")
    admin.cmd("SET", "x", "1")
    assert s.read_reply() == frame("message", "__keyevent@0__:set", "x", proto=3)


def test_a_command_sees_its_own_event_before_its_reply(server, admin):
    admin.cmd("CONFIG", "SET", "notify-keyspace-events", "E$")
    s = server.raw()
    s.cmd("HELLO", "3")
    s.cmd("SUBSCRIBE", "__keyevent@0__:set")
    s.send(encode_command("SET", "mine", "1"))
    assert s.read_replies(2) == [frame("message", "__keyevent@0__:set", "mine", proto=3), b"+OK\r\n"]


# ---------------------------------------------------------------- expired

def test_expired_event_is_delivered(server, admin):
    sub = listen(server, admin, "Ex", "__keyevent@0__:expired")
    admin.cmd("SET", "short", "1", "PX", "100")
    msg = parse(sub.read_reply(timeout=5))
    assert msg == [b"pmessage", b"__keyevent@0__:expired", b"__keyevent@0__:expired", b"short"]
    assert admin.cmd("EXISTS", "short") == b":0\r\n"


def test_expired_on_access_comes_before_the_commands_own_events(server, admin):
    admin.cmd("SET", "k", "1", "PX", "1")
    admin.cmd("CONFIG", "SET", "notify-keyspace-events", "")
    time.sleep(0.05)
    sub = listen(server, admin, "KEA")
    admin.cmd("SETNX", "k", "2")   # expired already: reclaimed (now or earlier), then set
    got = events(sub)
    assert got[-2:] == evs((b"k", b"set"))
    assert got[:-2] in ([], evs((b"k", b"expired")))


def test_expired_event_once_per_key(server, admin):
    sub = listen(server, admin, "Ex", "__keyevent@0__:expired")
    admin.send(b"".join(encode_command("SET", "e%d" % i, "1", "PX", str(20 + i)) for i in range(50)))
    admin.read_replies(50)
    deadline = time.monotonic() + 5
    got = []
    while len(got) < 50 and time.monotonic() < deadline:
        admin.cmd("EXISTS", *("e%d" % i for i in range(50)))   # lazy expiry may report some first
        got += [m[3] for m in drain(sub, 0.1)]
    assert sorted(got) == sorted(b"e%d" % i for i in range(50))


def test_latchd_only_expired_event_within_50ms_of_the_deadline(latchd_factory):
    srv = latchd_factory("--notify-keyspace-events", "Ex")
    sub = srv.raw()
    sub.cmd("SUBSCRIBE", "__keyevent@0__:expired")
    admin = srv.raw()
    ttls = [30, 60, 90, 150, 250, 400]
    deadlines = {}
    for i, ttl in enumerate(ttls):
        t0 = time.monotonic()
        assert admin.cmd("SET", "lock%d" % i, "1", "PX", str(ttl)) == b"+OK\r\n"
        deadlines[b"lock%d" % i] = t0 + ttl / 1000.0
    late = {}
    for _ in ttls:
        msg = parse(sub.read_reply(timeout=5))
        late[msg[2]] = time.monotonic() - deadlines[msg[2]]
    assert sorted(late) == sorted(deadlines)
    assert max(late.values()) < 0.050, late
    assert min(late.values()) > -0.005, late   # never before the deadline


def test_redisson_lock_expiry_announced(server, admin):
    # a lock whose holder died: the waiter can learn it the moment it expires
    sub = listen(server, admin, "Kgx", "__keyspace@0__:redisson-lock")
    admin.cmd("HINCRBY", "redisson-lock", "uuid:1", "1")
    admin.cmd("PEXPIRE", "redisson-lock", "100")
    first = parse(sub.read_reply())
    assert first[2:] == [b"__keyspace@0__:redisson-lock", b"expire"]
    msg = parse(sub.read_reply(timeout=5))
    assert msg[2:] == [b"__keyspace@0__:redisson-lock", b"expired"]


# ---------------------------------------------------------------- scripts

def test_events_from_a_script(server, admin):
    require_eval(admin)
    sub = listen(server, admin, "KEA")
    body = ("redis.call('hincrby', KEYS[1], ARGV[1], 1); redis.call('pexpire', KEYS[1], 30000); "
            "return redis.call('del', KEYS[1])")
    assert admin.cmd("EVAL", body, "1", "L", "uuid:1") == b":1\r\n"
    assert events(sub) == evs((b"L", b"hincrby"), (b"L", b"expire"), (b"L", b"del"))
