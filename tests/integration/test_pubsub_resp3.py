"""Pub/Sub over RESP3: confirmations and messages as pushes ('>'), every
command allowed on a subscribed connection, and RESP2 and RESP3 subscribers
of one channel each getting their own framing of the same message."""

import pytest

from pubsub_util import frame, read_frames
from resp_util import encode_command, parse


def resp3(server):
    c = server.raw()
    assert c.cmd("HELLO", "3").startswith(b"%")
    return c


@pytest.fixture
def sub3(server):
    return resp3(server)


@pytest.fixture
def pub(server):
    return server.raw()


def test_subscribe_family_pushes(sub3):
    assert sub3.cmd("SUBSCRIBE", "ch1") == b">3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n"
    assert sub3.cmd("PSUBSCRIBE", "c*") == frame("psubscribe", "c*", 2, proto=3)
    assert sub3.cmd("SSUBSCRIBE", "s") == frame("ssubscribe", "s", 1, proto=3)
    assert sub3.cmd("UNSUBSCRIBE", "ch1") == frame("unsubscribe", "ch1", 1, proto=3)
    assert sub3.cmd("UNSUBSCRIBE") == b">3\r\n$11\r\nunsubscribe\r\n_\r\n:1\r\n"
    assert sub3.cmd("PUNSUBSCRIBE") == frame("punsubscribe", "c*", 0, proto=3)
    assert sub3.cmd("PUNSUBSCRIBE") == b">3\r\n$12\r\npunsubscribe\r\n_\r\n:0\r\n"
    assert sub3.cmd("SUNSUBSCRIBE") == frame("sunsubscribe", "s", 0, proto=3)


def test_message_pmessage_smessage_pushes(sub3, pub):
    sub3.cmd("SUBSCRIBE", "ch1")
    sub3.cmd("PSUBSCRIBE", "c*")
    sub3.cmd("SSUBSCRIBE", "s")
    assert pub.cmd("PUBLISH", "ch1", "hi") == b":2\r\n"
    assert read_frames(sub3, 2) == [b">3\r\n$7\r\nmessage\r\n$3\r\nch1\r\n$2\r\nhi\r\n",
                                    b">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$3\r\nch1\r\n$2\r\nhi\r\n"]
    assert pub.cmd("SPUBLISH", "s", "x") == b":1\r\n"
    assert sub3.read_reply() == frame("smessage", "s", "x", proto=3)


def test_every_command_allowed_while_subscribed(sub3):
    sub3.cmd("SUBSCRIBE", "c")
    assert sub3.cmd("GET", "k") == b"_\r\n"
    assert sub3.cmd("SET", "k", "v") == b"+OK\r\n"
    assert sub3.cmd("HSET", "h", "f", "1") == b":1\r\n"
    assert sub3.cmd("ECHO", "e") == b"$1\r\ne\r\n"
    assert sub3.cmd("CLIENT", "ID").startswith(b":")
    assert sub3.cmd("PING") == b"+PONG\r\n"
    assert sub3.cmd("PING", "x") == b"$1\r\nx\r\n"


def test_publish_to_own_channel_push_before_reply(sub3):
    sub3.cmd("SUBSCRIBE", "me")
    sub3.cmd("PSUBSCRIBE", "m*")
    sub3.send(encode_command("PUBLISH", "me", "self"))
    assert read_frames(sub3, 3) == [frame("message", "me", "self", proto=3),
                                    frame("pmessage", "m*", "me", "self", proto=3), b":2\r\n"]


def test_messages_interleave_with_replies_in_order(sub3, pub):
    sub3.cmd("SUBSCRIBE", "c")
    pub.cmd("PUBLISH", "c", "1")
    sub3.send(encode_command("ECHO", "a"))
    assert read_frames(sub3, 2) == [frame("message", "c", "1", proto=3), b"$1\r\na\r\n"]


def test_hello_2_while_subscribed_brings_resp2_rules(sub3, pub):
    sub3.cmd("SUBSCRIBE", "c")
    assert sub3.cmd("HELLO", "2").startswith(b"*")
    assert sub3.cmd("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert sub3.cmd("GET", "k").startswith(b"-ERR Can't execute 'get'")
    pub.cmd("PUBLISH", "c", "m")
    assert sub3.read_reply() == frame("message", "c", "m")
    assert sub3.cmd("HELLO", "3").startswith(b"-ERR Can't execute 'hello'")


@pytest.mark.parametrize("size", [1, 600, 300000])
def test_resp2_and_resp3_subscribers_of_one_channel(server, pub, size):
    subs = []
    for i in range(6):
        c = resp3(server) if i % 2 else server.raw()
        c.cmd("SUBSCRIBE", "mixed")
        subs.append((c, 3 if i % 2 else 2))
    payload = b"p" * size
    assert pub.cmd("PUBLISH", "mixed", payload) == b":6\r\n"
    for c, proto in subs:
        assert c.read_reply() == frame("message", "mixed", payload, proto=proto)


def test_reply_off_still_pushes(sub3, pub):
    sub3.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("SUBSCRIBE", "q")
              + encode_command("GET", "k"))
    assert sub3.read_reply() == frame("subscribe", "q", 1, proto=3)
    pub.cmd("PUBLISH", "q", "m")
    assert sub3.read_reply() == frame("message", "q", "m", proto=3)
    assert sub3.read_available(0.1) == b""


def test_introspection_shapes_in_resp3(sub3, server):
    other = server.raw()
    other.cmd("SUBSCRIBE", "a")
    assert sub3.cmd("PUBSUB", "NUMSUB", "a") == b"*2\r\n$1\r\na\r\n:1\r\n"
    assert parse(sub3.cmd("PUBSUB", "CHANNELS")) == [b"a"]
    assert sub3.cmd("PUBSUB", "NUMPAT") == b":0\r\n"


def test_reset_returns_to_resp2_unsubscribed(sub3, pub):
    sub3.cmd("SUBSCRIBE", "c")
    assert sub3.cmd("RESET") == b"+RESET\r\n"
    assert pub.cmd("PUBLISH", "c", "m") == b":0\r\n"
    assert sub3.cmd("GET", "k") == b"$-1\r\n"
