"""Pub/Sub over RESP2: SUBSCRIBE family frames byte for byte, PUBLISH and
SPUBLISH delivery and receiver counts, glob patterns, the subscribed-mode
command rules, PUBSUB introspection, INFO / CLIENT LIST fields, cleanup on
RESET and disconnect, publishing from scripts."""

import time

import pytest

from pubsub_util import frame, read_frames, require_eval, stalled_conn, wait_numsub
from resp_util import encode_command, parse

CONTEXT_ERROR = (b"-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                 b"are allowed in this context\r\n")


@pytest.fixture
def pub(server):
    return server.raw()


@pytest.fixture
def sub(server):
    return server.raw()


# ---------------------------------------------------------------- frames

def test_subscribe_confirms_each_channel_with_running_count(sub):
    sub.send(encode_command("SUBSCRIBE", "a", "b"))
    assert read_frames(sub, 2) == [frame("subscribe", "a", 1), frame("subscribe", "b", 2)]
    # again: confirmed, count unchanged
    assert sub.cmd("SUBSCRIBE", "a") == frame("subscribe", "a", 2)


def test_subscribe_confirmation_exact_bytes(sub):
    # what Redisson matches on: the channel echoed as a bulk string, byte for byte
    assert sub.cmd("SUBSCRIBE", "redisson_lock__channel:{orders}") == (
        b"*3\r\n$9\r\nsubscribe\r\n$31\r\nredisson_lock__channel:{orders}\r\n:1\r\n")


def test_publish_message_frame_and_receivers(pub, sub, server):
    other = server.raw()
    sub.cmd("SUBSCRIBE", "ch")
    other.cmd("SUBSCRIBE", "ch")
    assert pub.cmd("PUBLISH", "ch", "0") == b":2\r\n"
    expected = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\n0\r\n"
    assert sub.read_reply() == expected
    assert other.read_reply() == expected


def test_publish_without_subscribers_is_zero(pub):
    assert pub.cmd("PUBLISH", "nobody", "x") == b":0\r\n"


@pytest.mark.parametrize("channel,payload", [
    (b"", b""),
    (b"\x00bin\xff", b"\r\n\x00"),
    (b"sp ace", b"x" * 1000),
    (b"big", b"y" * 200000),
])
def test_binary_channels_and_payloads_echoed(pub, sub, channel, payload):
    assert sub.cmd("SUBSCRIBE", channel) == frame("subscribe", channel, 1)
    assert pub.cmd("PUBLISH", channel, payload) == b":1\r\n"
    assert sub.read_reply() == frame("message", channel, payload)


def test_messages_arrive_in_publish_order(pub, sub):
    sub.cmd("SUBSCRIBE", "q")
    pub.send(b"".join(encode_command("PUBLISH", "q", str(i)) for i in range(200)))
    assert read_frames(pub, 200) == [b":1\r\n"] * 200
    assert read_frames(sub, 200) == [frame("message", "q", str(i)) for i in range(200)]


def test_psubscribe_pmessage_frame(pub, sub):
    assert sub.cmd("PSUBSCRIBE", "news.*") == frame("psubscribe", "news.*", 1)
    assert pub.cmd("PUBLISH", "news.art", "hello") == b":1\r\n"
    assert sub.read_reply() == b"*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$8\r\nnews.art\r\n$5\r\nhello\r\n"


def test_channel_and_pattern_both_deliver_message_first(pub, sub):
    sub.cmd("SUBSCRIBE", "news.art")
    assert sub.cmd("PSUBSCRIBE", "news.*") == frame("psubscribe", "news.*", 2)
    assert pub.cmd("PUBLISH", "news.art", "m") == b":2\r\n"
    assert read_frames(sub, 2) == [frame("message", "news.art", "m"),
                                   frame("pmessage", "news.*", "news.art", "m")]


def test_overlapping_patterns_each_deliver(pub, sub):
    sub.send(encode_command("PSUBSCRIBE", "a*", "*b", "a?"))
    read_frames(sub, 3)
    assert pub.cmd("PUBLISH", "ab", "m") == b":3\r\n"
    got = sorted(read_frames(sub, 3))
    assert got == sorted(frame("pmessage", p, "ab", "m") for p in ("a*", "*b", "a?"))


def test_unsubscribe_named_and_unknown(sub):
    sub.send(encode_command("SUBSCRIBE", "a", "b"))
    read_frames(sub, 2)
    assert sub.cmd("UNSUBSCRIBE", "a") == frame("unsubscribe", "a", 1)
    assert sub.cmd("UNSUBSCRIBE", "zzz") == frame("unsubscribe", "zzz", 1)
    assert sub.cmd("UNSUBSCRIBE", "b") == frame("unsubscribe", "b", 0)


def test_unsubscribe_all_confirms_each(sub):
    sub.send(encode_command("SUBSCRIBE", "a", "b", "c"))
    read_frames(sub, 3)
    sub.send(encode_command("UNSUBSCRIBE"))
    got = [parse(f) for f in read_frames(sub, 3)]
    assert sorted(g[1] for g in got) == [b"a", b"b", b"c"]
    assert [g[0] for g in got] == [b"unsubscribe"] * 3
    assert [g[2] for g in got] == [2, 1, 0]
    assert sub.read_available(0.1) == b""


def test_unsubscribe_all_with_nothing_has_null_channel(sub):
    assert sub.cmd("UNSUBSCRIBE") == b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    assert sub.cmd("PUNSUBSCRIBE") == b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n"
    assert sub.cmd("SUNSUBSCRIBE") == b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n"


def test_unsubscribe_when_not_subscribed_echoes(sub):
    assert sub.cmd("UNSUBSCRIBE", "x") == frame("unsubscribe", "x", 0)
    assert sub.cmd("GET", "k") == b"$-1\r\n"   # never entered subscribed mode


def test_punsubscribe_counts_channels_and_patterns_together(sub):
    sub.cmd("SUBSCRIBE", "c")
    assert sub.cmd("PSUBSCRIBE", "p*") == frame("psubscribe", "p*", 2)
    assert sub.cmd("PUNSUBSCRIBE", "p*") == frame("punsubscribe", "p*", 1)
    assert sub.cmd("PUNSUBSCRIBE") == frame("punsubscribe", None, 1)
    assert sub.cmd("UNSUBSCRIBE") == frame("unsubscribe", "c", 0)


# ---------------------------------------------------------------- shard channels

def test_shard_channels_are_their_own_namespace(pub, sub, server):
    plain = server.raw()
    pattern = server.raw()
    assert sub.cmd("SSUBSCRIBE", "s1") == frame("ssubscribe", "s1", 1)
    plain.cmd("SUBSCRIBE", "s1")
    pattern.cmd("PSUBSCRIBE", "*")
    assert pub.cmd("SPUBLISH", "s1", "m") == b":1\r\n"
    assert sub.read_reply() == frame("smessage", "s1", "m")
    assert plain.read_available(0.1) == b"" and pattern.read_available(0.05) == b""
    assert pub.cmd("PUBLISH", "s1", "n") == b":2\r\n"
    assert sub.read_available(0.1) == b""


def test_shard_counts_are_separate(sub):
    sub.cmd("SUBSCRIBE", "c")
    assert sub.cmd("SSUBSCRIBE", "s1", "s2") == frame("ssubscribe", "s1", 1)
    assert sub.read_reply() == frame("ssubscribe", "s2", 2)
    assert sub.cmd("SUNSUBSCRIBE", "s1") == frame("sunsubscribe", "s1", 1)
    assert sub.cmd("UNSUBSCRIBE", "c") == frame("unsubscribe", "c", 0)
    # still subscribed (to s2): still in subscribed mode
    assert sub.cmd("GET", "k") == CONTEXT_ERROR % b"get"
    assert sub.cmd("SUNSUBSCRIBE") == frame("sunsubscribe", "s2", 0)
    assert sub.cmd("GET", "k") == b"$-1\r\n"


# ---------------------------------------------------------------- patterns

PATTERN_CASES = [
    (b"*", b"anything", 1), (b"*", b"", 0), (b"**", b"", 0), (b"", b"", 1),
    (b"h?llo", b"hello", 1), (b"h?llo", b"hllo", 0), (b"h*llo", b"heeeello", 1),
    (b"h[ae]llo", b"hallo", 1), (b"h[ae]llo", b"hillo", 0), (b"h[^e]llo", b"hallo", 1),
    (b"h[^e]llo", b"hello", 0), (b"h[a-b]llo", b"hbllo", 1), (b"h[b-a]llo", b"hallo", 1),
    (b"h\\*llo", b"h*llo", 1), (b"h\\*llo", b"hello", 0), (b"[\\]]", b"]", 1),
    (b"a*", b"a", 1), (b"?*", b"a", 1), (b"*a", b"", 0), (b"a*b*", b"ab", 1),
    (b"[a-]", b"-", 0), (b"[-a]", b"-", 1), (b"[", b"[", 0), (b"h[a", b"ha", 1),
    (b"h[", b"h", 0), (b"h\\", b"h\\", 1), (b"[^]", b"a", 1), (b"[]a]", b"a", 0),
    # binary channel names; ranges compare signed chars, as Redis does
    (b"\x00*", b"\x00z", 1), (b"[a-\xff]", b"b", 0), (b"[a-\xff]", b"\x10", 1),
    (b"[\x80-\xff]", b"\xc0", 1), (b"[\x80-\xff]", b"a", 0), (b"[^\x80-\xff]", b"a", 1),
    (b"redisson_lock__channel:{*}", b"redisson_lock__channel:{orders}", 1),
    (b"__keyspace@0__:*", b"__keyevent@0__:del", 0),
]


@pytest.mark.parametrize("pattern,channel,hits", PATTERN_CASES,
                         ids=["%r~%r" % (p, c) for p, c, _ in PATTERN_CASES])
def test_pattern_matching(pub, sub, pattern, channel, hits):
    assert sub.cmd("PSUBSCRIBE", pattern) == frame("psubscribe", pattern, 1)
    assert pub.cmd("PUBLISH", channel, "m") == b":%d\r\n" % hits
    if hits:
        assert sub.read_reply() == frame("pmessage", pattern, channel, "m")


def test_pattern_subscribed_twice_by_one_client_is_one(pub, sub):
    sub.send(encode_command("PSUBSCRIBE", "x*", "x*"))
    assert read_frames(sub, 2) == [frame("psubscribe", "x*", 1)] * 2
    assert pub.cmd("PUBLISH", "xy", "m") == b":1\r\n"


# ---------------------------------------------------------------- subscribed mode (RESP2)

@pytest.mark.parametrize("argv,name", [
    (("GET", "k"), b"get"), (("SET", "k", "v"), b"set"), (("PUBLISH", "c", "m"), b"publish"),
    (("CLIENT", "ID"), b"client|id"), (("HELLO", "3"), b"hello"), (("INFO",), b"info"),
    (("ECHO", "x"), b"echo"), (("SPUBLISH", "c", "m"), b"spublish"),
    (("PUBSUB", "NUMPAT"), b"pubsub|numpat"), (("CONFIG", "GET", "port"), b"config|get"),
])
def test_subscribed_mode_refuses_other_commands(sub, argv, name):
    sub.cmd("SUBSCRIBE", "c")
    assert sub.cmd(*argv) == CONTEXT_ERROR % name
    assert sub.cmd("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"   # still subscribed, still alive


def test_subscribed_mode_errors_that_come_first(sub):
    sub.cmd("PSUBSCRIBE", "p*")
    assert sub.cmd("NOSUCH") == b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"
    assert sub.cmd("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert sub.cmd("CLIENT", "BOGUS") == b"-ERR unknown subcommand 'BOGUS'. Try CLIENT HELP.\r\n"
    assert sub.cmd("CLIENT", "SETNAME") == b"-ERR wrong number of arguments for 'client|setname' command\r\n"
    assert sub.cmd("PING", "a", "b") == b"-ERR wrong number of arguments for 'ping' command\r\n"


def test_ping_in_subscribed_mode(sub):
    assert sub.cmd("PING") == b"+PONG\r\n"
    sub.cmd("SUBSCRIBE", "c")
    assert sub.cmd("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert sub.cmd("PING", "hello") == b"*2\r\n$4\r\npong\r\n$5\r\nhello\r\n"
    sub.cmd("UNSUBSCRIBE")
    assert sub.cmd("PING") == b"+PONG\r\n"


def test_inline_commands_in_subscribed_mode(sub):
    sub.send(b"SUBSCRIBE x y\r\n")
    assert read_frames(sub, 2) == [frame("subscribe", "x", 1), frame("subscribe", "y", 2)]
    assert sub.inline("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


def test_leaving_subscribed_mode(sub):
    sub.cmd("SUBSCRIBE", "a")
    sub.cmd("PSUBSCRIBE", "b*")
    sub.cmd("UNSUBSCRIBE")
    assert sub.cmd("GET", "k") == CONTEXT_ERROR % b"get"   # the pattern remains
    sub.cmd("PUNSUBSCRIBE")
    assert sub.cmd("GET", "k") == b"$-1\r\n"


def test_quit_in_subscribed_mode(sub, pub):
    sub.cmd("SUBSCRIBE", "c")
    assert sub.cmd("QUIT") == b"+OK\r\n"
    assert sub.is_closed()
    assert wait_numsub(pub, "c", 0) == 0


def test_reset_unsubscribes_everything_silently(sub, pub):
    sub.send(encode_command("SUBSCRIBE", "c") + encode_command("PSUBSCRIBE", "p*")
             + encode_command("SSUBSCRIBE", "s"))
    read_frames(sub, 3)
    assert sub.cmd("RESET") == b"+RESET\r\n"
    assert parse(pub.cmd("PUBSUB", "NUMSUB", "c")) == [b"c", 0]
    assert pub.cmd("PUBSUB", "NUMPAT") == b":0\r\n"
    assert parse(pub.cmd("PUBSUB", "SHARDNUMSUB", "s")) == [b"s", 0]
    assert pub.cmd("PUBLISH", "c", "m") == b":0\r\n"
    assert sub.cmd("GET", "k") == b"$-1\r\n"


def test_disconnect_drops_subscriptions(server, pub):
    for _ in range(3):
        s = server.raw()
        s.send(encode_command("SUBSCRIBE", "gone") + encode_command("PSUBSCRIBE", "go*"))
        read_frames(s, 2)
        s.close()
    assert wait_numsub(pub, "gone", 0) == 0
    assert pub.cmd("PUBSUB", "NUMPAT") == b":0\r\n"
    assert pub.cmd("PUBLISH", "gone", "m") == b":0\r\n"


def test_idle_timeout_spares_subscribers(server_factory):
    srv = server_factory("--timeout", "1")
    subscriber, idle = srv.raw(), srv.raw()
    subscriber.cmd("SUBSCRIBE", "c")
    assert idle.cmd("PING") == b"+PONG\r\n"
    assert idle.is_closed(wait=4.0)              # a plain idle client goes ...
    assert not subscriber.is_closed(wait=0.5)    # ... a subscriber waits as long as it likes
    assert srv.raw().cmd("PUBLISH", "c", "still here") == b":1\r\n"
    assert subscriber.read_reply() == frame("message", "c", "still here")


def test_reply_off_still_gets_confirmations_and_messages(sub, pub):
    # Redis sends pushes regardless of CLIENT REPLY; ordinary replies stay off
    sub.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("SUBSCRIBE", "q")
             + encode_command("PING"))
    assert sub.read_reply() == frame("subscribe", "q", 1)
    assert pub.cmd("PUBLISH", "q", "m") == b":1\r\n"
    assert sub.read_reply() == frame("message", "q", "m")
    assert sub.read_available(0.1) == b""


def test_reply_skip_applies_to_the_subscribe_command_only(sub):
    sub.send(encode_command("CLIENT", "REPLY", "SKIP") + encode_command("SUBSCRIBE", "q", "r")
             + encode_command("PING"))
    assert read_frames(sub, 3) == [frame("subscribe", "q", 1), frame("subscribe", "r", 2),
                                   b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"]


def test_subscribe_arity(sub):
    assert sub.cmd("SUBSCRIBE") == b"-ERR wrong number of arguments for 'subscribe' command\r\n"
    assert sub.cmd("PSUBSCRIBE") == b"-ERR wrong number of arguments for 'psubscribe' command\r\n"
    assert sub.cmd("SSUBSCRIBE") == b"-ERR wrong number of arguments for 'ssubscribe' command\r\n"
    assert sub.cmd("PUBLISH", "c") == b"-ERR wrong number of arguments for 'publish' command\r\n"
    assert sub.cmd("SPUBLISH", "c", "m", "x") == b"-ERR wrong number of arguments for 'spublish' command\r\n"


# ---------------------------------------------------------------- PUBSUB introspection

def test_pubsub_channels_numsub_numpat(server, pub):
    a, b = server.raw(), server.raw()
    a.send(encode_command("SUBSCRIBE", "news.art", "news.tech", "other"))
    read_frames(a, 3)
    b.send(encode_command("SUBSCRIBE", "news.art") + encode_command("PSUBSCRIBE", "n*", "x*"))
    read_frames(b, 3)
    a.cmd("PSUBSCRIBE", "n*")
    assert sorted(parse(pub.cmd("PUBSUB", "CHANNELS"))) == [b"news.art", b"news.tech", b"other"]
    assert sorted(parse(pub.cmd("PUBSUB", "CHANNELS", "news.*"))) == [b"news.art", b"news.tech"]
    assert pub.cmd("PUBSUB", "CHANNELS", "zzz*") == b"*0\r\n"
    assert pub.cmd("PUBSUB", "NUMSUB", "news.art", "other", "none") == (
        b"*6\r\n$8\r\nnews.art\r\n:2\r\n$5\r\nother\r\n:1\r\n$4\r\nnone\r\n:0\r\n")
    assert pub.cmd("PUBSUB", "NUMSUB") == b"*0\r\n"
    assert pub.cmd("PUBSUB", "NUMPAT") == b":2\r\n"   # distinct patterns


def test_pubsub_shard_introspection(server, pub):
    a = server.raw()
    a.send(encode_command("SSUBSCRIBE", "s1", "s2") + encode_command("SUBSCRIBE", "c1"))
    read_frames(a, 3)
    assert sorted(parse(pub.cmd("PUBSUB", "SHARDCHANNELS"))) == [b"s1", b"s2"]
    assert parse(pub.cmd("PUBSUB", "SHARDCHANNELS", "*1")) == [b"s1"]
    assert parse(pub.cmd("PUBSUB", "CHANNELS")) == [b"c1"]
    assert pub.cmd("PUBSUB", "SHARDNUMSUB", "s1", "c1") == b"*4\r\n$2\r\ns1\r\n:1\r\n$2\r\nc1\r\n:0\r\n"
    assert pub.cmd("PUBSUB", "SHARDNUMSUB") == b"*0\r\n"


def test_pubsub_channels_star_skips_the_empty_channel(server, pub):
    a = server.raw()
    a.send(encode_command("SUBSCRIBE", "", "x"))
    read_frames(a, 2)
    assert sorted(parse(pub.cmd("PUBSUB", "CHANNELS"))) == [b"", b"x"]
    assert parse(pub.cmd("PUBSUB", "CHANNELS", "*")) == [b"x"]
    assert parse(pub.cmd("PUBSUB", "CHANNELS", "")) == [b""]


def test_pubsub_errors(pub):
    assert pub.cmd("PUBSUB") == b"-ERR wrong number of arguments for 'pubsub' command\r\n"
    assert pub.cmd("PUBSUB", "foo") == b"-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n"
    assert pub.cmd("PUBSUB", "NUMPAT", "x") == b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"
    assert pub.cmd("pubsub", "Channels", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'Channels'. Try PUBSUB HELP.\r\n")
    assert pub.cmd("PUBSUB", "SHARDCHANNELS", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. Try PUBSUB HELP.\r\n")
    assert pub.cmd("PUBSUB", "HELP", "x") == b"-ERR wrong number of arguments for 'pubsub|help' command\r\n"


def test_pubsub_help(pub):
    lines = parse(pub.cmd("PUBSUB", "HELP"))
    assert lines[0] == b"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[1:3] == [b"CHANNELS [<pattern>]",
                          b"    Return the currently active channels matching a <pattern> (default: '*')."]
    assert lines[-2:] == [b"HELP", b"    Prints this help."]
    assert len(lines) == 14


def test_info_stats_pubsub_fields(server, pub):
    def stats():
        text = parse(pub.cmd("INFO", "stats")).decode()
        return {k: v for k, v in (l.split(":", 1) for l in text.split("\r\n") if ":" in l)}
    a = server.raw()
    a.send(encode_command("SUBSCRIBE", "c1", "c2") + encode_command("PSUBSCRIBE", "p*")
           + encode_command("SSUBSCRIBE", "s"))
    read_frames(a, 4)
    s = stats()
    assert (s["pubsub_channels"], s["pubsub_patterns"], s["pubsubshard_channels"]) == ("2", "1", "1")
    a.cmd("RESET")
    s = stats()
    assert (s["pubsub_channels"], s["pubsub_patterns"], s["pubsubshard_channels"]) == ("0", "0", "0")


def test_client_list_subscription_fields(server, pub):
    a = server.raw()
    a.send(encode_command("SUBSCRIBE", "c1", "c2") + encode_command("PSUBSCRIBE", "p*")
           + encode_command("SSUBSCRIBE", "s"))
    read_frames(a, 4)
    a_port = a.local_port
    text = parse(pub.cmd("CLIENT", "LIST")).decode()
    line = next(l for l in text.splitlines() if ":%d " % a_port in l)
    fields = dict(f.split("=", 1) for f in line.split(" "))
    assert (fields["flags"], fields["sub"], fields["psub"], fields["ssub"]) == ("P", "2", "1", "1")
    mine = parse(pub.cmd("CLIENT", "INFO")).decode()
    assert " flags=N " in mine and " sub=0 psub=0 ssub=0 " in mine


def test_client_list_and_kill_by_type_pubsub(server, pub):
    a, b = server.raw(), server.raw()
    a.cmd("SUBSCRIBE", "c")
    b_id = b.call("CLIENT", "ID")
    a_port = a.local_port
    listed = parse(pub.cmd("CLIENT", "LIST", "TYPE", "pubsub")).decode().splitlines()
    assert sum(":%d " % a_port in l for l in listed) == 1
    assert all(" flags=P " in l for l in listed)
    normal = parse(pub.cmd("CLIENT", "LIST", "TYPE", "normal")).decode()
    assert "id=%d " % b_id in normal and ":%d " % a_port not in normal
    assert pub.cmd("CLIENT", "LIST", "TYPE", "replica") == b"$0\r\n\r\n"
    assert pub.cmd("CLIENT", "LIST", "TYPE", "bogus") == b"-ERR Unknown client type 'bogus'\r\n"
    assert pub.cmd("CLIENT", "KILL", "TYPE", "bogus") == b"-ERR Unknown client type 'bogus'\r\n"
    assert parse(pub.cmd("CLIENT", "KILL", "TYPE", "pubsub")) >= 1
    assert a.is_closed()
    assert b.cmd("PING") == b"+PONG\r\n"


def test_subscribe_unsubscribe_churn(server, pub, sub):
    # node-redisson subscribes and unsubscribes around every wait
    n = 5000
    batch = b"".join(encode_command("SUBSCRIBE", "redisson_lock__channel:{k%d}" % (i % 7))
                     + encode_command("UNSUBSCRIBE", "redisson_lock__channel:{k%d}" % (i % 7))
                     for i in range(n))
    start = time.monotonic()
    sub.send(batch)
    frames = read_frames(sub, 2 * n, timeout=30)
    elapsed = time.monotonic() - start
    assert frames[0] == frame("subscribe", "redisson_lock__channel:{k0}", 1)
    assert frames[-1] == frame("unsubscribe", "redisson_lock__channel:{k%d}" % ((n - 1) % 7), 0)
    assert pub.cmd("PUBSUB", "CHANNELS") == b"*0\r\n"
    assert elapsed < 10, elapsed


def test_many_subscribers_one_channel(server, pub):
    subs = [server.raw() for _ in range(50)]
    for s in subs:
        s.cmd("SUBSCRIBE", "fan")
    assert pub.cmd("PUBLISH", "fan", "x" * 5000) == b":50\r\n"
    for s in subs:
        assert s.read_reply() == frame("message", "fan", "x" * 5000)
    # one leaves from the middle, the rest still get messages
    subs[25].cmd("UNSUBSCRIBE")
    assert pub.cmd("PUBLISH", "fan", "y") == b":49\r\n"


def test_redis_py_pubsub(server):
    r = server.client()
    p = r.pubsub()
    p.subscribe("rp")
    assert p.get_message(timeout=2)["type"] == "subscribe"
    assert r.publish("rp", "hello") == 1
    msg = p.get_message(timeout=2)
    assert (msg["type"], msg["channel"], msg["data"]) == ("message", b"rp", b"hello")
    p.psubscribe("r*")
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    assert r.publish("rx", "m") == 1
    assert p.get_message(timeout=2)["pattern"] == b"r*"
    assert r.pubsub_numpat() == 1
    p.close()


# ---------------------------------------------------------------- COMMAND INFO / DOCS

COMMANDS = {
    # name: (arity, flags, first, last, step)
    "subscribe": (-2, [b"pubsub", b"noscript", b"loading", b"stale"], 0, 0, 0),
    "unsubscribe": (-1, [b"pubsub", b"noscript", b"loading", b"stale"], 0, 0, 0),
    "psubscribe": (-2, [b"pubsub", b"noscript", b"loading", b"stale"], 0, 0, 0),
    "punsubscribe": (-1, [b"pubsub", b"noscript", b"loading", b"stale"], 0, 0, 0),
    "ssubscribe": (-2, [b"pubsub", b"noscript", b"loading", b"stale"], 1, -1, 1),
    "sunsubscribe": (-1, [b"pubsub", b"noscript", b"loading", b"stale"], 1, -1, 1),
    "publish": (3, [b"pubsub", b"loading", b"stale", b"fast"], 0, 0, 0),
    "spublish": (3, [b"pubsub", b"loading", b"stale", b"fast"], 1, 1, 1),
    "pubsub": (-2, [], 0, 0, 0),
    "pubsub|channels": (-2, [b"pubsub", b"loading", b"stale"], 0, 0, 0),
    "pubsub|numsub": (-2, [b"pubsub", b"loading", b"stale"], 0, 0, 0),
    "pubsub|numpat": (2, [b"pubsub", b"loading", b"stale"], 0, 0, 0),
    "pubsub|shardchannels": (-2, [b"pubsub", b"loading", b"stale"], 0, 0, 0),
    "pubsub|shardnumsub": (-2, [b"pubsub", b"loading", b"stale"], 0, 0, 0),
    "pubsub|help": (2, [b"loading", b"stale"], 0, 0, 0),
    "ping": (-1, [b"fast"], 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_info(pub, name):
    entry = parse(pub.cmd("COMMAND", "INFO", name))[0]
    arity, flags, first, last, step = COMMANDS[name]
    assert entry[0] == name.encode()
    assert (entry[1], entry[2], entry[3], entry[4], entry[5]) == (arity, flags, first, last, step)


def test_command_info_pubsub_lists_subcommands(pub):
    entry = parse(pub.cmd("COMMAND", "INFO", "pubsub"))[0]
    assert sorted(s[0] for s in entry[9]) == sorted(n.encode() for n in COMMANDS if n.startswith("pubsub|"))


def test_command_docs_psubscribe_block(pub):
    # Redis documents the patterns as a repeated block around one pattern
    docs = parse(pub.cmd("COMMAND", "DOCS", "psubscribe"))
    d = {docs[1][i]: docs[1][i + 1] for i in range(0, len(docs[1]), 2)}
    assert d[b"summary"] == b"Listen for messages published to channels matching the given patterns"
    assert d[b"arguments"] == [[b"name", b"pattern", b"type", b"block", b"flags", [b"multiple"],
                                b"arguments", [[b"name", b"pattern", b"type", b"pattern"]]]]


DOCS = {
    # name: (summary, since, [(arg name, type, flags)])
    "subscribe": (b"Listen for messages published to the given channels", b"2.0.0",
                  [(b"channel", b"string", [b"multiple"])]),
    "unsubscribe": (b"Stop listening for messages posted to the given channels", b"2.0.0",
                    [(b"channel", b"string", [b"optional", b"multiple"])]),
    "punsubscribe": (b"Stop listening for messages posted to channels matching the given patterns", b"2.0.0",
                     [(b"pattern", b"pattern", [b"optional", b"multiple"])]),
    "ssubscribe": (b"Listen for messages published to the given shard channels", b"7.0.0",
                   [(b"shardchannel", b"string", [b"multiple"])]),
    "sunsubscribe": (b"Stop listening for messages posted to the given shard channels", b"7.0.0",
                     [(b"shardchannel", b"string", [b"optional", b"multiple"])]),
    "publish": (b"Post a message to a channel", b"2.0.0",
                [(b"channel", b"string", []), (b"message", b"string", [])]),
    "spublish": (b"Post a message to a shard channel", b"7.0.0",
                 [(b"shardchannel", b"string", []), (b"message", b"string", [])]),
    "pubsub|channels": (b"List active channels", b"2.8.0", [(b"pattern", b"pattern", [b"optional"])]),
    "pubsub|numsub": (b"Get the count of subscribers for channels", b"2.8.0",
                      [(b"channel", b"string", [b"optional", b"multiple"])]),
    "pubsub|numpat": (b"Get the count of unique patterns pattern subscriptions", b"2.8.0", None),
    "pubsub|shardchannels": (b"List active shard channels", b"7.0.0", [(b"pattern", b"pattern", [b"optional"])]),
    "pubsub|shardnumsub": (b"Get the count of subscribers for shard channels", b"7.0.0",
                           [(b"shardchannel", b"string", [b"optional", b"multiple"])]),
    "pubsub|help": (b"Show helpful text about the different subcommands", b"6.2.0", None),
}


@pytest.mark.parametrize("name", sorted(DOCS))
def test_command_docs(pub, name):
    docs = parse(pub.cmd("COMMAND", "DOCS", name))
    assert docs[0] == name.encode()
    d = {docs[1][i]: docs[1][i + 1] for i in range(0, len(docs[1]), 2)}
    summary, since, args = DOCS[name]
    assert (d[b"summary"], d[b"since"], d[b"group"]) == (summary, since, b"pubsub")
    if args is None:
        assert b"arguments" not in d
        return
    got = []
    for a in d[b"arguments"]:
        f = {a[i]: a[i + 1] for i in range(0, len(a), 2)}
        got.append((f[b"name"], f[b"type"], f.get(b"flags", [])))
    assert got == args


# ---------------------------------------------------------------- scripts

def test_publish_from_script(pub, sub):
    require_eval(pub)
    sub.cmd("SUBSCRIBE", "from-lua")
    assert pub.cmd("EVAL", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "from-lua", "0") == b":1\r\n"
    assert sub.read_reply() == frame("message", "from-lua", "0")


def test_publish_command_name_from_argv_any_case(pub, sub):
    # Redisson >= 3.22 passes "PUBLISH" (upper case) as ARGV[4] of its unlock script
    require_eval(pub)
    sub.cmd("SUBSCRIBE", "ch")
    body = "redis.call(ARGV[1], KEYS[1], ARGV[2]); return redis.call(ARGV[1], KEYS[1], ARGV[3])"
    for name in ("PUBLISH", "publish", "Publish"):
        assert pub.cmd("EVAL", body, "1", "ch", name, "a", "b") == b":1\r\n"
        assert read_frames(sub, 2) == [frame("message", "ch", "a"), frame("message", "ch", "b")]


def test_script_messages_arrive_in_order_with_other_publishes(pub, sub):
    require_eval(pub)
    sub.cmd("SUBSCRIBE", "ord")
    body = "for i = 1, 5 do redis.call('publish', KEYS[1], 's' .. i) end return 5"
    pub.send(encode_command("PUBLISH", "ord", "before") + encode_command("EVAL", body, "1", "ord")
             + encode_command("PUBLISH", "ord", "after"))
    assert read_frames(pub, 3) == [b":1\r\n", b":5\r\n", b":1\r\n"]
    got = [parse(f)[2] for f in read_frames(sub, 7)]
    assert got == [b"before", b"s1", b"s2", b"s3", b"s4", b"s5", b"after"]


def test_spublish_from_script(pub, sub):
    require_eval(pub)
    sub.cmd("SSUBSCRIBE", "shard")
    assert pub.cmd("EVAL", "return redis.call(ARGV[1], KEYS[1], '1')", "1", "shard", "SPUBLISH") == b":1\r\n"
    assert sub.read_reply() == frame("smessage", "shard", "1")


def test_subscribe_is_refused_in_scripts(pub):
    require_eval(pub)
    reply = pub.cmd("EVAL", "return redis.call('subscribe', 'x')", "0")
    assert reply.startswith(b"-ERR This Redis command is not allowed from script"), reply


# ---------------------------------------------------------------- shared frames

def test_latchd_only_large_message_is_queued_once_for_all_subscribers(latchd_factory):
    srv = latchd_factory()
    pub = srv.raw()

    def rss():
        text = parse(pub.cmd("INFO", "memory")).decode()
        return int(text.split("used_memory_rss:")[1].split("\r\n")[0])

    for _ in range(40):   # subscribers that never read
        stalled_conn(srv).send(encode_command("SUBSCRIBE", "big"))
    assert wait_numsub(pub, "big", 40) == 40
    before = rss()
    payload = b"m" * (2 << 20)
    for _ in range(3):
        assert pub.cmd("PUBLISH", "big", payload) == b":40\r\n"
    grown = rss() - before
    # copied per subscriber this would be ~240 MB; shared it is the 6 MB once
    assert grown < 64 << 20, grown
    good = srv.raw()
    good.cmd("SUBSCRIBE", "big")
    pub.cmd("PUBLISH", "big", payload)
    assert good.read_reply(timeout=10) == frame("message", "big", payload)
