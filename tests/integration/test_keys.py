"""Keyspace commands: EXISTS, DEL, UNLINK, TYPE, KEYS, SCAN, RENAME."""

import pytest

from resp_util import encode_command, parse

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def bulks(*items):
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


def load(conn, *pairs):
    conn.send(b"".join(encode_command("SET", k, v) for k, v in pairs))
    assert conn.read_replies(len(pairs)) == [b"+OK\r\n"] * len(pairs)


# ---------------------------------------------------------------- EXISTS / DEL / UNLINK

def test_exists_counts_each_argument(conn):
    conn.cmd("SET", "s", "v")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("EXISTS", "s") == b":1\r\n"
    assert conn.cmd("EXISTS", "nope") == b":0\r\n"
    assert conn.cmd("EXISTS", "s", "h", "nope", "s") == b":3\r\n"


def test_del(conn):
    load(conn, ("a", "1"), ("b", "2"), ("c", "3"))
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("DEL", "a") == b":1\r\n"
    assert conn.cmd("DEL", "a") == b":0\r\n"
    assert conn.cmd("DEL", "b", "nope", "c", "b", "h") == b":3\r\n"
    assert conn.cmd("DBSIZE") == b":0\r\n"
    assert conn.cmd("GET", "b") == b"$-1\r\n"


def test_unlink(conn):
    load(conn, ("a", "1"), ("b", "2"))
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("UNLINK", "a", "nope", "h") == b":2\r\n"
    assert conn.cmd("EXISTS", "a", "b", "h") == b":1\r\n"
    assert conn.cmd("UNLINK", "a") == b":0\r\n"


def test_del_via_client(r):
    r.set("a", 1)
    r.set("b", 2)
    assert r.delete("a", "b", "c") == 2
    assert r.exists("a", "b") == 0


def test_deleted_key_can_be_recreated_with_other_type(conn):
    conn.cmd("SET", "k", "v")
    conn.cmd("DEL", "k")
    assert conn.cmd("HSET", "k", "f", "v") == b":1\r\n"
    assert conn.cmd("TYPE", "k") == b"+hash\r\n"


# ---------------------------------------------------------------- TYPE

def test_type(conn):
    conn.cmd("SET", "s", "v")
    conn.cmd("SET", "n", "12")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("TYPE", "s") == b"+string\r\n"
    assert conn.cmd("TYPE", "n") == b"+string\r\n"
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"
    assert conn.cmd("TYPE", "nope") == b"+none\r\n"


def test_type_after_incr(conn):
    conn.cmd("INCR", "n")
    assert conn.cmd("TYPE", "n") == b"+string\r\n"


# ---------------------------------------------------------------- KEYS

KEYSET = [b"a", b"ab", b"abc", b"b", b"c*d", b"h?x", b"hello", b"hallo", b"hxllo",
          b"[x]", b"back\\slash", b"\xff\x00bin", b""]


@pytest.fixture
def keyset(conn):
    load(conn, *[(k, "v") for k in KEYSET])
    return conn


@pytest.mark.parametrize("pattern,expected", [
    (b"*", KEYSET),
    (b"a*", [b"a", b"ab", b"abc"]),
    (b"a?", [b"ab"]),
    (b"?", [b"a", b"b"]),
    (b"[ab]", [b"a", b"b"]),
    (b"[^a]*", [k for k in KEYSET if k and k[:1] != b"a"]),
    # Redis glob negates with ^ only: [!a] is the class {'!', 'a'}
    (b"[!a]*", [b"a", b"ab", b"abc"]),
    (b"[a-b]*", [b"a", b"ab", b"abc", b"b", b"back\\slash"]),
    (b"[b-a]*", [b"a", b"ab", b"abc", b"b", b"back\\slash"]),
    (b"h[a-e]llo", [b"hallo", b"hello"]),
    (b"h[ae]llo", [b"hallo", b"hello"]),
    (b"h*llo", [b"hallo", b"hello", b"hxllo"]),
    (b"c\\*d", [b"c*d"]),
    (b"h\\?x", [b"h?x"]),
    (b"\\[x\\]", [b"[x]"]),
    (b"back\\\\slash", [b"back\\slash"]),
    (b"\xff*", [b"\xff\x00bin"]),
    (b"*bin", [b"\xff\x00bin"]),
    (b"nomatch", []),
    (b"abc", [b"abc"]),
    (b"", [b""]),
    (b"**c", [b"abc"]),
    # only the literal "*" is special-cased; a star pattern never matches the empty name
    (b"**", [k for k in KEYSET if k]),
    # class ranges compare signed chars: [a-\xff] is the range -1..'a'
    (b"[a-\xff]*", [b"a", b"ab", b"abc", b"[x]", b"\xff\x00bin"]),
    (b"[\x80-\xff]*", [b"\xff\x00bin"]),
])
def test_keys_patterns(keyset, pattern, expected):
    got = parse(keyset.cmd("KEYS", pattern))
    assert sorted(got) == sorted(expected)


def test_keys_pattern_with_many_stars_answers_at_once(conn):
    """A star pattern that cannot match must fail in polynomial time: tried
    position by position it takes 2^32 steps and the 5 s read times out."""
    conn.cmd("SET", "a" * 67, "1")
    assert conn.cmd("KEYS", "a*" * 32 + "b") == b"*0\r\n"
    assert conn.cmd("KEYS", "a*" * 32 + "a") == b"*1\r\n$67\r\n" + b"a" * 67 + b"\r\n"


def test_keys_empty_db(conn):
    assert conn.cmd("KEYS", "*") == b"*0\r\n"


def test_keys_includes_all_types(conn):
    conn.cmd("SET", "s", "v")
    conn.cmd("HSET", "h", "f", "v")
    assert sorted(parse(conn.cmd("KEYS", "*"))) == [b"h", b"s"]


def test_keys_via_client(r):
    r.set("user:1", "a")
    r.set("user:2", "b")
    r.set("other", "c")
    assert sorted(r.keys("user:*")) == [b"user:1", b"user:2"]


# ---------------------------------------------------------------- SCAN

def scan_all(conn, *opts):
    cursor = b"0"
    seen = []
    for _ in range(100000):
        reply = parse(conn.cmd("SCAN", cursor, *opts))
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, keys = reply
        assert isinstance(cursor, bytes) and cursor.isdigit(), cursor
        assert isinstance(keys, list)
        seen.extend(keys)
        if cursor == b"0":
            return seen
    raise AssertionError("SCAN did not terminate")


def test_scan_empty_db_exact_reply(conn):
    assert conn.cmd("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_small_db_single_call(conn):
    load(conn, ("a", "1"), ("b", "2"), ("c", "3"))
    reply = parse(conn.cmd("SCAN", "0"))
    assert reply[0] == b"0"
    assert sorted(reply[1]) == [b"a", b"b", b"c"]


@pytest.mark.parametrize("count", [None, "1", "3", "1000"])
def test_scan_visits_every_key(conn, count):
    keys = [b"key:%d" % i for i in range(300)]
    load(conn, *[(k, "v") for k in keys])
    opts = ("COUNT", count) if count else ()
    seen = scan_all(conn, *opts)
    assert set(seen) == set(keys)  # SCAN may return a key more than once


def test_scan_match(conn):
    keys = [b"user:%d" % i for i in range(50)] + [b"item:%d" % i for i in range(50)]
    load(conn, *[(k, "v") for k in keys])
    seen = scan_all(conn, "MATCH", "user:*", "COUNT", "7")
    assert set(seen) == {k for k in keys if k.startswith(b"user:")}
    assert scan_all(conn, "match", "nothing*") == []


def test_scan_type(conn):
    load(conn, *[("s%d" % i, "v") for i in range(20)])
    for i in range(20):
        conn.cmd("HSET", "h%d" % i, "f", "v")
    assert set(scan_all(conn, "TYPE", "string")) == {b"s%d" % i for i in range(20)}
    assert set(scan_all(conn, "TYPE", "hash")) == {b"h%d" % i for i in range(20)}
    assert set(scan_all(conn, "type", "HASH")) == {b"h%d" % i for i in range(20)}
    assert scan_all(conn, "TYPE", "list") == []
    # Redis 7.0 accepts an unknown type name and simply matches nothing
    assert scan_all(conn, "TYPE", "bogus") == []


def test_scan_match_and_type(conn):
    load(conn, ("s:1", "v"), ("s:2", "v"), ("t:1", "v"))
    conn.cmd("HSET", "s:h", "f", "v")
    assert sorted(scan_all(conn, "MATCH", "s:*", "TYPE", "string", "COUNT", "2")) == [b"s:1", b"s:2"]


def test_scan_cursor_is_bulk_string_and_reply_is_two_elements(conn):
    load(conn, *[("k%d" % i, "v") for i in range(100)])
    raw = conn.cmd("SCAN", "0", "COUNT", "5")
    assert raw.startswith(b"*2\r\n$")
    cursor, keys = parse(raw)
    assert cursor.isdigit()
    assert isinstance(keys, list)


@pytest.mark.parametrize("args,err", [
    (["abc"], b"-ERR invalid cursor\r\n"),
    (["1.5"], b"-ERR invalid cursor\r\n"),
    (["18446744073709551616"], b"-ERR invalid cursor\r\n"),
    (["0", "COUNT", "0"], b"-ERR syntax error\r\n"),
    (["0", "COUNT", "-1"], b"-ERR syntax error\r\n"),
    (["0", "COUNT", "abc"], b"-ERR value is not an integer or out of range\r\n"),
    (["0", "COUNT"], b"-ERR syntax error\r\n"),
    (["0", "MATCH"], b"-ERR syntax error\r\n"),
    (["0", "TYPE"], b"-ERR syntax error\r\n"),
    (["0", "BOGUS", "x"], b"-ERR syntax error\r\n"),
    (["0", "MATCH", "*", "extra"], b"-ERR syntax error\r\n"),
])
def test_scan_errors(conn, args, err):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SCAN", *args) == err


def test_scan_large_cursor_ok(conn):
    # any unsigned 64-bit cursor is accepted; an exhausted one ends the scan
    reply = parse(conn.cmd("SCAN", "18446744073709551615"))
    assert isinstance(reply, list) and len(reply) == 2


def test_scan_iter_via_client(r):
    for i in range(120):
        r.set("k%d" % i, i)
    assert set(r.scan_iter(count=10)) == {b"k%d" % i for i in range(120)}
    assert set(r.scan_iter(match="k1*")) == {b"k%d" % i for i in range(120) if str(i).startswith("1")}


# ---------------------------------------------------------------- RENAME

def test_rename(conn):
    conn.cmd("SET", "a", "1")
    assert conn.cmd("RENAME", "a", "b") == b"+OK\r\n"
    assert conn.cmd("EXISTS", "a") == b":0\r\n"
    assert conn.cmd("GET", "b") == b"$1\r\n1\r\n"


def test_rename_missing_key(conn):
    assert conn.cmd("RENAME", "nope", "x") == b"-ERR no such key\r\n"
    assert conn.cmd("RENAME", "nope", "nope") == b"-ERR no such key\r\n"
    assert conn.cmd("EXISTS", "x") == b":0\r\n"


def test_rename_to_itself(conn):
    conn.cmd("SET", "a", "1")
    assert conn.cmd("RENAME", "a", "a") == b"+OK\r\n"
    assert conn.cmd("GET", "a") == b"$1\r\n1\r\n"


def test_rename_overwrites_destination_of_any_type(conn):
    conn.cmd("HSET", "src", "f", "v")
    conn.cmd("SET", "dst", "old")
    assert conn.cmd("RENAME", "src", "dst") == b"+OK\r\n"
    assert conn.cmd("TYPE", "dst") == b"+hash\r\n"
    assert conn.cmd("HGET", "dst", "f") == b"$1\r\nv\r\n"
    assert conn.cmd("DBSIZE") == b":1\r\n"


def test_rename_moves_ttl(conn):
    conn.cmd("SET", "a", "1", "EX", "100")
    conn.cmd("RENAME", "a", "b")
    ttl = parse(conn.cmd("TTL", "b"))
    assert 98 <= ttl <= 100


def test_rename_clears_destination_ttl(conn):
    conn.cmd("SET", "dst", "x", "EX", "50")
    conn.cmd("SET", "src", "y")
    conn.cmd("RENAME", "src", "dst")
    assert conn.cmd("TTL", "dst") == b":-1\r\n"
    assert conn.cmd("GET", "dst") == b"$1\r\ny\r\n"


def test_rename_binary_keys(conn):
    conn.cmd("SET", b"\x00a\r\n", "v")
    assert conn.cmd("RENAME", b"\x00a\r\n", b"\xffb") == b"+OK\r\n"
    assert conn.cmd("GET", b"\xffb") == b"$1\r\nv\r\n"
