"""Client-side caching (CLIENT TRACKING) as Redis 7.0 does it: RESP3 push
invalidations, RESP2 redirects on __redis__:invalidate, BCAST prefixes,
OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, the null invalidation of flushes,
expiry, MULTI and scripts, a redirect client going away, the table's limit,
the introspection (TRACKINGINFO, GETREDIR, CLIENT LIST, INFO) and every
error, byte for byte."""

import time

import pytest

from resp_util import parse, wait_for


def keys_frame(*keys):
    out = b"*%d\r\n" % len(keys)
    for k in keys:
        k = k.encode() if isinstance(k, str) else k
        out += b"$%d\r\n%s\r\n" % (len(k), k)
    return out


def push(*keys, null=None):
    """The RESP3 invalidation push; null: the flush's null in RESP2 or 3."""
    body = {2: b"$-1\r\n", 3: b"_\r\n"}[null] if null else keys_frame(*keys)
    return b">2\r\n$10\r\ninvalidate\r\n" + body


def message(*keys, null=None):
    """The RESP2 message on __redis__:invalidate a redirect client gets."""
    body = {2: b"$-1\r\n", 3: b"_\r\n"}[null] if null else keys_frame(*keys)
    return b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n" + body


def resp3(server):
    c = server.raw()
    assert c.cmd("HELLO", "3").startswith(b"%")
    return c


def client_id(c):
    return int(parse(c.cmd("CLIENT", "ID")))


@pytest.fixture
def other(server):
    return server.raw()


@pytest.fixture
def redir(server):
    """A RESP2 client subscribed to __redis__:invalidate, and its id."""
    c = server.raw()
    rid = client_id(c)
    c.cmd("SUBSCRIBE", "__redis__:invalidate")
    return c, rid


def trackinginfo(c):
    """CLIENT TRACKINGINFO (RESP3) as {flags: set, redirect: int, prefixes: list}."""
    info = parse(c.cmd("CLIENT", "TRACKINGINFO")).to_dict()
    info[b"flags"] = set(info[b"flags"])
    return info


def info_field(c, name):
    text = c.call("INFO", "all").decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(name + " not in INFO")


def test_resp3_push_after_another_client_writes(server, other):
    c = resp3(server)
    assert c.cmd("CLIENT", "TRACKING", "ON") == b"+OK\r\n"
    other.cmd("SET", "k", "1")
    assert c.cmd("GET", "k") == b"$1\r\n1\r\n"
    other.cmd("SET", "k", "2")
    assert c.read_reply() == push("k")
    # the key left the table: the next change says nothing until it is read again
    other.cmd("SET", "k", "3")
    assert c.cmd("PING") == b"+PONG\r\n"
    assert c.read_available(0.1) == b""


def test_own_write_invalidation_follows_the_reply(server):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "ON")
    c.cmd("HSET", "h", "f", "1")
    c.cmd("HGET", "h", "f")
    c.send(b"*3\r\n$4\r\nHDEL\r\n$1\r\nh\r\n$1\r\nf\r\n")
    assert c.read_replies(2) == [b":1\r\n", push("h")]


def test_multi_key_read_tracks_every_key(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "ON")
    c.cmd("MGET", "a", "b", "c")
    other.cmd("MSET", "c", "1", "a", "2")
    assert c.read_replies(2) == [push("c"), push("a")]
    assert info_field(other, "tracking_total_keys") == 1   # b is still tracked


def test_resp2_redirect_to_subscribed_client(server, other, redir):
    rc, rid = redir
    c = server.raw()
    assert c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(rid)) == b"+OK\r\n"
    c.cmd("GET", "a")
    c.cmd("GET", "b")
    other.cmd("INCR", "b")
    other.cmd("INCR", "x")   # never read: no message
    assert rc.read_reply() == message("b")
    assert rc.read_available(0.1) == b""


def test_redirect_to_unsubscribed_resp2_client_sends_nothing(server, other):
    target = server.raw()
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", str(client_id(target)))
    c.cmd("GET", "k")
    other.cmd("SET", "k", "1")
    assert target.cmd("PING") == b"+PONG\r\n"
    # a RESP2 client tracking without a redirect gets nothing either
    c.cmd("CLIENT", "TRACKING", "OFF")
    c.cmd("CLIENT", "TRACKING", "ON")
    c.cmd("GET", "k")
    other.cmd("SET", "k", "2")
    assert c.cmd("PING") == b"+PONG\r\n"


def test_redirect_to_resp3_client_pushes(server, other):
    target = resp3(server)
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", str(client_id(target)))
    c.cmd("GET", "k")
    other.cmd("SET", "k", "1")
    assert target.read_reply() == push("k")


def test_bcast_prefixes_one_message_per_prefix_sorted(server, other, redir):
    rc, rid = redir
    c = server.raw()
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid),
                 "PREFIX", "a:", "PREFIX", "b:") == b"+OK\r\n"
    other.send(b"*1\r\n$5\r\nMULTI\r\n")
    other.read_reply()
    for k in ("b:2", "a:2", "c:1", "a:1", "b:1", "a:2"):
        other.cmd("INCR", k)
    other.cmd("EXEC")
    got = sorted(rc.read_replies(2))
    assert got == sorted([message("a:1", "a:2"), message("b:1", "b:2")])
    assert rc.read_available(0.1) == b""


def test_bcast_empty_prefix_and_adding_prefixes(server, other, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid))
    other.cmd("MSET", "z", "1", "y", "2")
    assert rc.read_reply() == message("y", "z")
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid), "PREFIX", "p")
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid), "PREFIX", "q") == b"+OK\r\n"
    info = parse(c.cmd("CLIENT", "TRACKINGINFO"))
    assert sorted(info[5]) == [b"p", b"q"]
    other.cmd("SET", "q1", "1")
    assert rc.read_reply() == message("q1")
    assert info_field(other, "tracking_total_prefixes") == 2


def test_bcast_ignores_keys_read_before(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("GET", "k")
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST")
    other.cmd("INCR", "k")
    # one message: the broadcast; the table's entry for k is not sent
    assert c.cmd("PING") == push("k")
    assert c.read_reply() == b"+PONG\r\n"


@pytest.mark.parametrize("mode,word,cached", [("OPTIN", "yes", ["next"]), ("OPTOUT", "no", ["before", "after"])])
def test_caching_changes_the_next_command_only(server, other, redir, mode, word, cached):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", mode, "REDIRECT", str(rid))
    c.cmd("GET", "before")                 # the mode's default
    assert c.cmd("CLIENT", "CACHING", word) == b"+OK\r\n"
    c.cmd("GET", "next")                   # the other way
    c.cmd("GET", "after")                  # the default again
    other.cmd("MSET", "before", "1", "next", "1", "after", "1")
    assert rc.read_replies(len(cached)) == [message(k) for k in cached]
    assert rc.read_available(0.1) == b""


def test_caching_yes_lasts_a_whole_transaction(server, other, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "OPTIN", "REDIRECT", str(rid))
    c.cmd("CLIENT", "CACHING", "yes")
    c.cmd("MULTI")
    c.cmd("GET", "a")
    c.cmd("GET", "b")
    c.cmd("EXEC")
    other.cmd("MSET", "a", "1", "b", "1")
    assert rc.read_replies(2) == [message("a"), message("b")]


def test_noloop_standard_mode(server, other, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(rid), "NOLOOP")
    c.cmd("MGET", "o1", "loop", "o2")
    other.cmd("SET", "o1", "1")
    c.cmd("SET", "loop", "1")
    other.cmd("SET", "o2", "1")
    assert rc.read_replies(2) == [message("o1"), message("o2")]
    assert rc.read_available(0.1) == b""


def test_noloop_bcast_mode(server, other, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid), "NOLOOP")
    other.cmd("SET", "o1", "1")
    assert rc.read_reply() == message("o1")
    c.cmd("SET", "loop", "1")
    other.cmd("SET", "o2", "1")
    assert rc.read_reply() == message("o2")
    assert rc.read_available(0.1) == b""


@pytest.mark.parametrize("how", [("FLUSHALL",), ("FLUSHDB",), ("FLUSHALL", "ASYNC")])
def test_flush_sends_the_null_invalidation(server, other, redir, how):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(rid))
    c.cmd("GET", "k1")
    c.cmd("GET", "k2")
    assert info_field(other, "tracking_total_keys") == 2
    other.cmd(*how)
    assert info_field(other, "tracking_total_keys") == 0
    assert rc.read_reply() == message(null=2)
    # a RESP3 tracker gets the RESP3 null, even with nothing tracked
    c3 = resp3(server)
    c3.cmd("CLIENT", "TRACKING", "on")
    other.cmd(*how)
    assert c3.read_reply() == push(null=3)


def test_own_flush_in_multi_invalidation_after_exec(server):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("SET", "a", "1")
    c.cmd("GET", "a")
    c.cmd("MULTI")
    c.cmd("FLUSHDB")
    c.send(b"*1\r\n$4\r\nEXEC\r\n")
    assert c.read_replies(2) == [b"*1\r\n+OK\r\n", push(null=3)]


def test_invalidation_after_transaction_reply(server):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("MSET", "a", "1", "b", "2")
    c.cmd("GET", "a")
    c.cmd("MULTI")
    c.cmd("INCR", "a")
    c.cmd("GET", "b")
    c.send(b"*1\r\n$4\r\nEXEC\r\n")
    assert c.read_replies(2) == [b"*2\r\n:2\r\n$1\r\n2\r\n", push("a")]


def test_swapdb_sends_nothing(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    other.cmd("SELECT", "1")
    other.cmd("SET", "k", "1")
    c.cmd("GET", "k")
    assert other.cmd("SWAPDB", "0", "1") == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"
    assert info_field(other, "tracking_total_keys") == 1


def test_active_expiry_invalidates(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    other.cmd("SET", "k", "v", "PX", "50")
    c.cmd("GET", "k")
    assert c.read_reply(timeout=3) == push("k")


def test_lazy_expiry_invalidation_follows_the_reply(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    assert other.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    try:
        other.cmd("MSET", "x", "1", "y", "2")
        other.cmd("PEXPIRE", "y", "50")
        c.cmd("GET", "y")
        time.sleep(0.1)
        c.send(b"*3\r\n$4\r\nMGET\r\n$1\r\nx\r\n$1\r\ny\r\n")
        assert c.read_replies(2) == [b"*2\r\n$1\r\n1\r\n_\r\n", push("y")]
    finally:
        other.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_bcast_expiry_reaches_noloop_client(server, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid), "NOLOOP")
    c.cmd("SET", "mykey", "v", "PX", "30")
    c.cmd("SET", "other", "v")
    assert rc.read_reply(timeout=3) == message("mykey")


@pytest.mark.parametrize("cmd", ["EVAL", "EVAL_RO"])
def test_scripts_track_declared_keys_once_they_read(server, other, cmd):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd(cmd, "return redis.call('ping')", "2", "k1", "k2")   # reads nothing: tracks nothing
    other.cmd("MSET", "k2", "1", "k1", "1")
    assert c.cmd("PING") == b"+PONG\r\n"
    c.cmd(cmd, "return redis.call('get', 'k3')", "2", "k1", "k2")   # a read: every declared key
    other.cmd("MSET", "k2", "2", "k1", "2", "k3", "2")
    assert c.read_replies(2) == [push("k2"), push("k1")]
    assert c.cmd("PING") == b"+PONG\r\n"


def test_script_that_only_writes_tracks_nothing(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("EVAL", "redis.call('set', 'k3', 'bar')", "2", "k1", "k2")
    other.cmd("MSET", "k2", "1", "k1", "1")
    assert c.cmd("PING") == b"+PONG\r\n"


def test_script_write_with_noloop_is_not_sent_back(server):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on", "NOLOOP")
    c.cmd("SET", "key1", "1")
    c.cmd("GET", "key1")
    assert c.cmd("EVAL", "return redis.call('set', 'key1', '2')", "1", "key1") == b"+OK\r\n"
    assert c.cmd("GET", "key1") == b"$1\r\n2\r\n"


def test_redirect_client_gone_gives_redir_broken(server, other):
    target = server.raw()
    tid = client_id(target)
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    c.cmd("GET", "k")
    assert target.cmd("QUIT") == b"+OK\r\n"
    assert target.is_closed()
    other.cmd("SET", "k", "1")
    assert c.read_reply() == b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % tid
    info = trackinginfo(c)
    assert info == {b"flags": {b"on", b"broken_redirect"}, b"redirect": tid, b"prefixes": []}
    assert b" flags=tR " in c.cmd("CLIENT", "INFO")


def test_pushes_go_out_with_client_reply_off(server, other):
    c = resp3(server)
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("GET", "foo")
    c.send(b"*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n")
    other.cmd("SET", "foo", "bar")
    assert c.read_reply() == push("foo")
    assert c.cmd("CLIENT", "REPLY", "ON") == b"+OK\r\n"


def test_table_limit_evicts_with_invalidation(server, other, redir):
    rc, rid = redir
    c = server.raw()
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(rid))
    try:
        for i in range(250):
            c.cmd("GET", "key%d" % i)
        assert other.cmd("CONFIG", "SET", "tracking-table-max-keys", "1") == b"+OK\r\n"
        got = rc.read_replies(249, timeout=5)
        assert len(set(got)) == 249
        assert rc.read_available(0.3) == b""
        assert info_field(other, "tracking_total_keys") == 1
    finally:
        other.cmd("CONFIG", "SET", "tracking-table-max-keys", "1000000")


def test_info_counts(server, other):
    c = server.raw()
    b = server.raw()
    c.cmd("CLIENT", "TRACKING", "on")
    c.cmd("GET", "k1")
    c.cmd("GET", "k2")
    b.cmd("CLIENT", "TRACKING", "on")
    b.cmd("GET", "k2")
    bc = server.raw()
    bc.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:")
    assert info_field(other, "tracking_clients") == 3
    assert info_field(other, "tracking_total_keys") == 2
    assert info_field(other, "tracking_total_items") == 3
    assert info_field(other, "tracking_total_prefixes") == 1
    bc.close()
    c.close()
    b.close()
    assert wait_for(lambda: info_field(other, "tracking_clients") == 0)
    assert info_field(other, "tracking_total_prefixes") == 0


def test_trackinginfo_getredir_client_list(server, redir):
    rc, rid = redir
    c = resp3(server)
    assert trackinginfo(c) == {b"flags": {b"off"}, b"redirect": -1, b"prefixes": []}
    assert c.cmd("CLIENT", "GETREDIR") == b":-1\r\n"
    assert c.cmd("CLIENT", "TRACKINGINFO") == (b"%3\r\n$5\r\nflags\r\n~1\r\n$3\r\noff\r\n"
                                                b"$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n")
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(rid), "noloop")
    assert c.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % rid
    assert trackinginfo(c) == {b"flags": {b"on", b"noloop"}, b"redirect": rid,
                                                      b"prefixes": []}
    line = parse(c.cmd("CLIENT", "INFO"))
    assert b" flags=t " in line and b" redir=%d " % rid in line
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "optin")
    c.cmd("CLIENT", "CACHING", "yes")
    assert trackinginfo(c)[b"flags"] == {b"on", b"optin", b"caching-yes"}
    assert c.cmd("CLIENT", "GETREDIR") == b":0\r\n"
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "optout")
    c.cmd("CLIENT", "CACHING", "no")
    assert trackinginfo(c)[b"flags"] == {b"on", b"optout", b"caching-no"}
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar")
    info = trackinginfo(c)
    assert info[b"flags"] == {b"on", b"bcast"} and sorted(info[b"prefixes"]) == [b"bar", b"foo"]
    assert b" flags=tB " in parse(c.cmd("CLIENT", "INFO"))
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST")
    assert trackinginfo(c)[b"prefixes"] == [b""]
    line = parse(c.cmd("CLIENT", "INFO"))
    assert b" redir=0 " in line
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.cmd("CLIENT", "GETREDIR") == b":-1\r\n"


ERRORS = [
    (("CLIENT", "TRACKING", "on", "PREFIX", "a"), b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"),
    (("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"), b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"),
    (("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"), b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "999999"),
     b"-ERR The client ID you want redirect to does not exist\r\n"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "x"), b"-ERR value is not an integer or out of range\r\n"),
    (("CLIENT", "TRACKING", "on", "REDIRECT", "0"), b"-ERR The client ID you want redirect to does not exist\r\n"),
    (("CLIENT", "TRACKING", "on", "BOGUS"), b"-ERR syntax error\r\n"),
    (("CLIENT", "TRACKING", "on", "REDIRECT"), b"-ERR syntax error\r\n"),
    (("CLIENT", "TRACKING", "maybe"), b"-ERR syntax error\r\n"),
    (("CLIENT", "TRACKING"), b"-ERR wrong number of arguments for 'client|tracking' command\r\n"),
    (("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO"),
     b"-ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. "
     b"Prefixes for a single client must not overlap.\r\n"),
    (("CLIENT", "CACHING", "yes"),
     b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT "
     b"mode enabled\r\n"),
    (("CLIENT", "CACHING"), b"-ERR wrong number of arguments for 'client|caching' command\r\n"),
    (("CLIENT", "GETREDIR", "x"),
     b"-ERR wrong number of arguments for 'client|getredir' command\r\n"),
    (("CLIENT", "TRACKINGINFO", "x"), b"-ERR wrong number of arguments for 'client|trackinginfo' command\r\n"),
]


@pytest.mark.parametrize("args,err", ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_errors(server, args, err):
    assert server.raw().cmd(*args) == err


def test_errors_against_the_current_mode(server, other):
    c = server.raw()
    oid = str(client_id(other))
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", oid)
    assert c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", oid, "REDIRECT", oid) == \
        b"-ERR A client can only redirect to a single other client\r\n"
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST") == (
        b"-ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
        b"and then re-enabling it with a different mode.\r\n")
    assert c.cmd("CLIENT", "CACHING", "yes") == \
        b"-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n"
    assert c.cmd("CLIENT", "CACHING", "no") == \
        b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"
    assert c.cmd("CLIENT", "CACHING", "maybe") == b"-ERR syntax error\r\n"
    c.cmd("CLIENT", "TRACKING", "on", "OPTIN")
    assert c.cmd("CLIENT", "TRACKING", "on", "OPTOUT") == (
        b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
        b"and then re-enabling it with a different mode.\r\n")
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR")
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO") == (
        b"-ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. "
        b"Prefixes for a single client must not overlap.\r\n")
    assert c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "BARB") == (
        b"-ERR Prefix 'BARB' overlaps with an existing prefix 'BAR'. "
        b"Prefixes for a single client must not overlap.\r\n")


def test_tracking_caller_of_a_native_lock_script(server):
    """redis-py's Lock.release, which latchd runs natively: for a tracking
    caller its GET is tracked and its DEL invalidates, as in Lua."""
    import redis.lock
    from resp_util import encode_command
    body = redis.lock.Lock.LUA_RELEASE_SCRIPT
    c = resp3(server)
    sha = c.cmd("SCRIPT", "LOAD", body)
    assert sha == b"$40\r\nc3f8721cbb97f72bc19e972846bd7aaf91901658\r\n"
    c.cmd("SET", "lk", "tok")
    c.cmd("CLIENT", "TRACKING", "on")
    c.send(encode_command("EVALSHA", "c3f8721cbb97f72bc19e972846bd7aaf91901658", "1", "lk", "tok"))
    assert c.read_replies(2) == [b":1\r\n", push("lk")]
    c.cmd("CLIENT", "TRACKING", "off")
    c.cmd("SET", "lk", "tok")
    assert c.cmd("EVALSHA", "c3f8721cbb97f72bc19e972846bd7aaf91901658", "1", "lk", "tok") == b":1\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"


def test_self_redirect_while_subscribed(server, other):
    c = server.raw()
    cid = client_id(c)
    c.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(cid))
    c.cmd("GET", "k")
    c.cmd("SUBSCRIBE", "__redis__:invalidate")
    other.cmd("SET", "k", "1")
    assert c.read_reply() == message("k")
