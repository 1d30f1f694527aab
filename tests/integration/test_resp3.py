"""RESP3 (after HELLO 3) versus RESP2 reply encodings, via raw sockets."""

import re

import pytest

from resp_util import RespMap, Verbatim, parse

HELLO_KEYS = [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]


def hello3(conn):
    reply = conn.cmd("HELLO", "3")
    assert reply.startswith(b"%"), reply
    return parse(reply)


# ---------------------------------------------------------------- HELLO

def hello_keys(kind):
    """Redis's seven fields; latchd adds its own version as an eighth, after
    them, so clients that read the Redis fields see exactly Redis's."""
    return HELLO_KEYS + ([b"latchd_version"] if kind == "latchd" else [])


def check_hello(reply, proto, client_id, kind):
    fields = reply.to_dict() if isinstance(reply, RespMap) else {
        reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}
    keys = [k for k, _ in reply] if isinstance(reply, RespMap) else reply[0::2]
    assert keys == hello_keys(kind)
    assert isinstance(fields[b"server"], bytes) and fields[b"server"]
    assert fields[b"version"] == b"7.0.15"
    assert fields[b"proto"] == proto
    assert fields[b"id"] == client_id
    assert fields[b"mode"] == b"standalone"
    assert fields[b"role"] == b"master"
    assert fields[b"modules"] == []
    if kind == "latchd":
        assert re.fullmatch(rb"\d+\.\d+\.\d+", fields[b"latchd_version"])


def test_hello3_reply_is_a_map(conn, server):
    cid = conn.call("CLIENT", "ID")
    raw = conn.cmd("HELLO", "3")
    assert raw.startswith(b"%%%d\r\n$6\r\nserver\r\n$" % len(hello_keys(server.kind)))
    assert b"$7\r\nmodules\r\n*0\r\n" in raw
    assert b"$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:%d\r\n" % cid in raw
    assert b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n" in raw
    reply = parse(raw)
    assert isinstance(reply, RespMap)
    check_hello(reply, 3, cid, server.kind)


def test_hello2_reply_is_a_flat_array(conn, server):
    cid = conn.call("CLIENT", "ID")
    raw = conn.cmd("HELLO", "2")
    assert raw.startswith(b"*%d\r\n$6\r\nserver\r\n$" % (2 * len(hello_keys(server.kind))))
    reply = parse(raw)
    assert isinstance(reply, list) and not isinstance(reply, RespMap)
    check_hello(reply, 2, cid, server.kind)


def test_hello_without_version_keeps_protocol(conn):
    reply = parse(conn.cmd("HELLO"))
    assert not isinstance(reply, RespMap)
    assert reply[5] == 2
    hello3(conn)
    reply = parse(conn.cmd("HELLO"))
    assert isinstance(reply, RespMap)
    assert reply.to_dict()[b"proto"] == 3


def test_hello_back_to_2(conn):
    hello3(conn)
    assert conn.cmd("HELLO", "2").startswith(b"*")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("HGETALL", "h") == b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert conn.cmd("GET", "nope") == b"$-1\r\n"


@pytest.mark.parametrize("ver", ["1", "4", "0", "-1", "100"])
def test_hello_unsupported_version(conn, ver):
    assert conn.cmd("HELLO", ver) == b"-NOPROTO unsupported protocol version\r\n"
    assert conn.cmd("GET", "nope") == b"$-1\r\n"  # still RESP2


@pytest.mark.parametrize("ver", ["abc", "3.0", "", "99999999999999999999"])
def test_hello_version_not_integer(conn, ver):
    assert conn.cmd("HELLO", ver) == b"-ERR Protocol version is not an integer or out of range\r\n"


def test_hello_option_errors(conn):
    assert conn.cmd("HELLO", "3", "BOGUS") == b"-ERR Syntax error in HELLO option 'BOGUS'\r\n"
    assert conn.cmd("HELLO", "3", "SETNAME") == b"-ERR Syntax error in HELLO option 'SETNAME'\r\n"
    assert conn.cmd("HELLO", "3", "AUTH", "u") == b"-ERR Syntax error in HELLO option 'AUTH'\r\n"
    assert conn.cmd("HELLO", "2", "3") == b"-ERR Syntax error in HELLO option '3'\r\n"
    assert conn.cmd("HELLO", "AUTH", "default", "x") == (
        b"-ERR Protocol version is not an integer or out of range\r\n")
    # nothing changed
    assert conn.cmd("GET", "nope") == b"$-1\r\n"


def test_hello_setname(conn):
    reply = parse(conn.cmd("HELLO", "3", "SETNAME", "conn-1"))
    assert isinstance(reply, RespMap)
    assert conn.cmd("CLIENT", "GETNAME") == b"$6\r\nconn-1\r\n"
    conn.cmd("HELLO", "2", "setname", "conn-2")
    assert conn.cmd("CLIENT", "GETNAME") == b"$6\r\nconn-2\r\n"


def test_hello_bad_setname(conn):
    assert conn.cmd("HELLO", "3", "SETNAME", "bad name") == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
    assert conn.cmd("GET", "nope") == b"$-1\r\n"  # protocol not switched
    assert conn.cmd("CLIENT", "GETNAME") == b"$-1\r\n"


def test_hello_id_matches_client_id(server):
    a, b = server.raw(), server.raw()
    ida = parse(a.cmd("HELLO", "3")).to_dict()[b"id"]
    idb = parse(b.cmd("HELLO", "2"))[7]
    assert ida == a.call("CLIENT", "ID")
    assert idb == b.call("CLIENT", "ID")
    assert ida != idb


def test_hello_pipelined_with_commands(conn):
    conn.send(b"HELLO 3\r\nGET nope\r\nHELLO 2\r\nGET nope\r\n")
    replies = conn.read_replies(4)
    assert replies[0].startswith(b"%")
    assert replies[1] == b"_\r\n"
    assert replies[2].startswith(b"*")
    assert replies[3] == b"$-1\r\n"


# ---------------------------------------------------------------- maps and nulls

def test_hgetall_resp3_map(conn):
    hello3(conn)
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("HGETALL", "h") == b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert conn.cmd("HGETALL", "nope") == b"%0\r\n"


def test_hgetall_resp3_many_fields(conn):
    hello3(conn)
    fields = {b"f%d" % i: b"v%d" % i for i in range(50)}
    args = [x for kv in fields.items() for x in kv]
    conn.cmd("HSET", "h", *args)
    raw = conn.cmd("HGETALL", "h")
    assert raw.startswith(b"%50\r\n")
    m = parse(raw)
    assert isinstance(m, RespMap)
    assert m.to_dict() == fields


def test_hgetall_resp2_flat(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    reply = parse(conn.cmd("HGETALL", "h"))
    assert not isinstance(reply, RespMap)
    assert len(reply) == 4
    assert {reply[0]: reply[1], reply[2]: reply[3]} == {b"a": b"1", b"b": b"2"}
    assert conn.cmd("HGETALL", "nope") == b"*0\r\n"


def test_resp3_null_replies(conn):
    hello3(conn)
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("SET", "s", "v")
    assert conn.cmd("GET", "nope") == b"_\r\n"
    assert conn.cmd("HGET", "h", "nope") == b"_\r\n"
    assert conn.cmd("HGET", "nope", "f") == b"_\r\n"
    assert conn.cmd("GETDEL", "nope") == b"_\r\n"
    assert conn.cmd("SET", "s", "x", "NX") == b"_\r\n"
    assert conn.cmd("SET", "nope", "x", "XX") == b"_\r\n"
    assert conn.cmd("SET", "s", "y", "GET") == b"$1\r\nv\r\n"
    assert conn.cmd("SET", "new", "y", "GET") == b"_\r\n"
    assert conn.cmd("CLIENT", "GETNAME") == b"_\r\n"


def test_resp3_nulls_inside_arrays(conn):
    hello3(conn)
    conn.cmd("SET", "a", "1")
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("MGET", "nope", "a", "h") == b"*3\r\n_\r\n$1\r\n1\r\n_\r\n"
    assert conn.cmd("HMGET", "h", "f", "x") == b"*2\r\n$1\r\nv\r\n_\r\n"
    assert conn.cmd("HMGET", "nope", "x") == b"*1\r\n_\r\n"


def test_resp3_unchanged_replies(conn):
    hello3(conn)
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("PING") == b"+PONG\r\n"
    assert conn.cmd("ECHO", "x") == b"$1\r\nx\r\n"
    assert conn.cmd("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$1\r\nv\r\n"
    assert conn.cmd("EXISTS", "k", "h") == b":2\r\n"   # integers, not booleans
    assert conn.cmd("HEXISTS", "h", "f") == b":1\r\n"
    assert conn.cmd("SETNX", "k", "v") == b":0\r\n"
    assert conn.cmd("TTL", "k") == b":-1\r\n"
    assert conn.cmd("TYPE", "h") == b"+hash\r\n"
    assert conn.cmd("HKEYS", "h") == b"*1\r\n$1\r\nf\r\n"
    assert conn.cmd("HVALS", "h") == b"*1\r\n$1\r\nv\r\n"
    assert conn.cmd("KEYS", "k") == b"*1\r\n$1\r\nk\r\n"
    assert conn.cmd("FUNCTION", "LIST") == b"*0\r\n"
    assert conn.cmd("DEL", "k") == b":1\r\n"
    assert conn.cmd("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nh\r\n"
    assert re.fullmatch(rb"\*2\r\n\$\d+\r\n\d+\r\n\$\d+\r\n\d+\r\n", conn.cmd("TIME"))
    assert conn.cmd("GET", "h") == b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert conn.cmd("NOSUCH") == b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"


def test_resp3_config_get_is_a_map(conn):
    hello3(conn)
    assert conn.cmd("CONFIG", "GET", "save") == b"%1\r\n$4\r\nsave\r\n$0\r\n\r\n"
    assert conn.cmd("CONFIG", "GET", "nosuch") == b"%0\r\n"
    m = parse(conn.cmd("CONFIG", "GET", "save", "appendonly"))
    assert isinstance(m, RespMap)
    assert m.to_dict() == {b"save": b"", b"appendonly": b"no"}


# ---------------------------------------------------------------- verbatim strings

def test_info_is_verbatim_in_resp3(conn):
    hello3(conn)
    raw = conn.cmd("INFO", "server")
    m = re.match(rb"=(\d+)\r\ntxt:", raw)
    assert m, raw[:40]
    n = int(m.group(1))
    body = raw[len(m.group(0)) - 4:]
    assert len(body) == n + 2 and body.endswith(b"\r\n")
    v = parse(raw)
    assert isinstance(v, Verbatim) and v.format == b"txt"
    assert v.startswith(b"# Server\r\n")
    assert b"redis_version:7.0.15\r\n" in v


def test_info_is_bulk_in_resp2(conn):
    raw = conn.cmd("INFO", "server")
    assert raw.startswith(b"$")
    assert parse(raw).startswith(b"# Server\r\n")


def test_info_unknown_section_verbatim_empty(conn):
    hello3(conn)
    assert conn.cmd("INFO", "bogus") == b"=4\r\ntxt:\r\n"


def test_info_keyspace_verbatim_exact(conn):
    hello3(conn)
    assert conn.cmd("INFO", "keyspace") == b"=16\r\ntxt:# Keyspace\r\n\r\n"


def test_client_info_and_list_verbatim_in_resp3(conn):
    hello3(conn)
    for sub in ("INFO", "LIST"):
        v = parse(conn.cmd("CLIENT", sub))
        assert isinstance(v, Verbatim) and v.format == b"txt", sub
        assert b" resp=3" in v


def test_resp3_command_docs_is_a_map(conn):
    hello3(conn)
    m = parse(conn.cmd("COMMAND", "DOCS", "get"))
    assert isinstance(m, RespMap)
    d = m.to_dict()
    assert list(d) == [b"get"]
    assert isinstance(d[b"get"], RespMap)
    assert conn.cmd("COMMAND", "DOCS", "nosuchcommand") == b"%0\r\n"
    assert conn.cmd("COMMAND", "INFO", "nosuchcommand") == b"*1\r\n_\r\n"


def test_reset_returns_to_resp2(conn):
    hello3(conn)
    assert conn.cmd("RESET") == b"+RESET\r\n"
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("HGETALL", "h") == b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
