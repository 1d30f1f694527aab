"""python3-redis (Debian's redis-py 4.3.4) driving client-side caching the
way a RESP2 application must (4.3.4 has no RESP3 and no cache of its own):
CLIENT TRACKING with REDIRECT to a redis-py PubSub subscribed to
__redis__:invalidate, a small dict cache dropped on its messages."""

import time

import pytest


def next_message(p, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = p.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if m:
            return m
    return None


@pytest.fixture
def tracked(server):
    """(reader, pubsub, writer): reader tracks with REDIRECT to the pubsub."""
    reader = server.client()
    writer = server.client()
    p = server.client().pubsub()
    p.subscribe("__redis__:invalidate")
    assert next_message(p, 0.2) is None   # the confirmation is ignored
    # the subscriber's id, as an application finds it: CLIENT LIST's subscriber
    subs = [c["id"] for c in writer.client_list() if c["cmd"] == "subscribe"]
    assert len(subs) == 1
    sub_id = subs[0]
    assert reader.execute_command("CLIENT", "TRACKING", "ON", "REDIRECT", sub_id) == b"OK"
    yield reader, p, writer
    p.close()


def test_cache_invalidated_through_pubsub(tracked):
    reader, p, writer = tracked
    cache = {}

    def cached_get(key):
        if key not in cache:
            cache[key] = reader.get(key)
        return cache[key]

    writer.set("py:a", "1")
    writer.set("py:b", "1")
    assert cached_get("py:a") == b"1" and cached_get("py:b") == b"1"
    writer.set("py:a", "2")
    m = next_message(p)
    assert m["channel"] == b"__redis__:invalidate" and m["data"] == [b"py:a"]
    for k in m["data"]:
        cache.pop(k.decode(), None)
    assert cached_get("py:a") == b"2" and cached_get("py:b") == b"1"
    writer.flushall()
    m = next_message(p)
    assert m["data"] is None   # the null invalidation: drop everything
    assert next_message(p, 0.2) is None


def test_bcast_and_getredir(tracked):
    reader, p, writer = tracked
    redir = reader.execute_command("CLIENT", "GETREDIR")
    reader.execute_command("CLIENT", "TRACKING", "OFF")
    reader.execute_command("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "REDIRECT", redir)
    writer.mset({"user:2": "x", "user:1": "y", "other": "z"})
    m = next_message(p)
    assert m["data"] == [b"user:1", b"user:2"]
    assert next_message(p, 0.2) is None
