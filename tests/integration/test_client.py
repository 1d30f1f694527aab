"""CLIENT subcommands: ID, SETNAME/GETNAME, INFO, LIST, KILL, REPLY (and the
latchd-only SETINFO)."""

import re

import pytest

from resp_util import encode_command, parse, wait_for

BAD_NAME = b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"


def client_line_fields(line):
    fields = {}
    for part in line.split(b" "):
        k, eq, v = part.partition(b"=")
        assert eq, (part, line)
        fields[k] = v
    return fields


def client_list(conn):
    text = parse(conn.cmd("CLIENT", "LIST"))
    assert text.endswith(b"\n"), text[-20:]
    return [client_line_fields(line) for line in text[:-1].split(b"\n")]


# ---------------------------------------------------------------- ID

def test_client_id(server):
    a = server.raw()
    ra = a.cmd("CLIENT", "ID")
    b = server.raw()
    rb = b.cmd("CLIENT", "ID")
    assert re.fullmatch(rb":\d+\r\n", ra) and re.fullmatch(rb":\d+\r\n", rb)
    ida, idb = parse(ra), parse(rb)
    assert ida > 0 and idb > ida     # ids increase with each new connection
    assert a.cmd("CLIENT", "ID") == ra
    c = server.raw()
    assert c.call("CLIENT", "ID") > idb


def test_client_id_via_client(r):
    assert isinstance(r.client_id(), int)


# ---------------------------------------------------------------- SETNAME / GETNAME

def test_client_getname_default_nil(conn):
    assert conn.cmd("CLIENT", "GETNAME") == b"$-1\r\n"


def test_client_setname_getname(conn):
    assert conn.cmd("CLIENT", "SETNAME", "worker-1") == b"+OK\r\n"
    assert conn.cmd("CLIENT", "GETNAME") == b"$8\r\nworker-1\r\n"
    assert conn.cmd("CLIENT", "SETNAME", "~!@#$%^&*()_+{}|:<>?") == b"+OK\r\n"
    assert conn.cmd("CLIENT", "GETNAME") == b"$20\r\n~!@#$%^&*()_+{}|:<>?\r\n"


def test_client_setname_empty_clears(conn):
    conn.cmd("CLIENT", "SETNAME", "x")
    assert conn.cmd("CLIENT", "SETNAME", "") == b"+OK\r\n"
    assert conn.cmd("CLIENT", "GETNAME") == b"$-1\r\n"


@pytest.mark.parametrize("name", [b"a b", b"a\nb", b"a\rb", b"tab\there", b"\x00", b"\x7f",
                                  "é".encode(), b"\xff"])
def test_client_setname_invalid(conn, name):
    conn.cmd("CLIENT", "SETNAME", "good")
    assert conn.cmd("CLIENT", "SETNAME", name) == BAD_NAME
    assert conn.cmd("CLIENT", "GETNAME") == b"$4\r\ngood\r\n"


def test_client_name_is_per_connection(server):
    a, b = server.raw(), server.raw()
    a.cmd("CLIENT", "SETNAME", "aaa")
    assert b.cmd("CLIENT", "GETNAME") == b"$-1\r\n"


def test_client_setname_via_client(server):
    r = server.client(client_name="from-lib")
    assert r.client_getname() in (b"from-lib", "from-lib")  # redis-py 4.3 decodes it
    assert r.client_setname("other") is True
    assert r.client_getname() in (b"other", "other")


# ---------------------------------------------------------------- INFO / LIST

def test_client_info(server, conn):
    cid = conn.call("CLIENT", "ID")
    conn.cmd("CLIENT", "SETNAME", "me")
    raw = conn.cmd("CLIENT", "INFO")
    assert raw.startswith(b"$")
    text = parse(raw)
    assert text.endswith(b"\n") and text.count(b"\n") == 1
    f = client_line_fields(text[:-1])
    assert list(f)[:2] == [b"id", b"addr"]
    assert f[b"id"] == str(cid).encode()
    assert f[b"addr"] == b"127.0.0.1:%d" % conn.local_port
    assert f[b"laddr"] == b"127.0.0.1:%d" % server.port
    assert f[b"name"] == b"me"
    assert f[b"db"] == b"0"
    assert f[b"cmd"] == b"client|info"
    assert f[b"resp"] == b"2"
    assert f[b"age"].isdigit() and f[b"idle"].isdigit()
    assert f[b"fd"].isdigit()


def test_client_info_after_hello3(conn):
    conn.cmd("HELLO", "3")
    text = parse(conn.cmd("CLIENT", "INFO"))
    assert client_line_fields(text[:-1])[b"resp"] == b"3"


def test_client_info_empty_name(conn):
    f = client_line_fields(parse(conn.cmd("CLIENT", "INFO"))[:-1])
    assert f[b"name"] == b""


def test_client_list(server, conn):
    conn.cmd("CLIENT", "SETNAME", "lister")
    other = server.raw()
    other.cmd("CLIENT", "SETNAME", "other")
    other_id = other.call("CLIENT", "ID")
    my_id = conn.call("CLIENT", "ID")
    rows = client_list(conn)
    by_id = {int(r[b"id"]): r for r in rows}
    assert by_id[my_id][b"name"] == b"lister"
    assert by_id[my_id][b"cmd"] == b"client|list"
    assert by_id[my_id][b"addr"] == b"127.0.0.1:%d" % conn.local_port
    assert by_id[other_id][b"name"] == b"other"
    assert by_id[other_id][b"addr"] == b"127.0.0.1:%d" % other.local_port
    assert by_id[other_id][b"cmd"] == b"client|id"
    for row in rows:
        assert list(row)[:2] == [b"id", b"addr"]


def test_client_list_tracks_connections(server, conn):
    def ids():
        return {int(r[b"id"]) for r in client_list(conn)}

    me = conn.call("CLIENT", "ID")
    # connections of earlier tests may still be closing: wait until only we remain
    assert wait_for(lambda: ids() == {me}, timeout=2), ids()
    extra = server.raw()
    eid = extra.call("CLIENT", "ID")
    assert ids() == {me, eid}
    extra.close()
    assert wait_for(lambda: ids() == {me}, timeout=2), ids()


def test_client_list_oldest_first(server, conn):
    """Redis lists clients in the order they connected (Redis's own
    obuf-limits test reads the second line as the second client)."""
    others = [server.raw() for _ in range(3)]
    ids = [o.call("CLIENT", "ID") for o in others]
    others[1].close()
    others.append(server.raw())
    ids = [ids[0], ids[2], others[3].call("CLIENT", "ID")]
    listed = [int(r[b"id"]) for r in client_list(conn)]
    assert wait_for(lambda: [i for i in (int(r[b"id"]) for r in client_list(conn)) if i in ids] == ids,
                    timeout=2), listed
    assert listed.index(conn.call("CLIENT", "ID")) < listed.index(ids[0])


def test_client_list_type_normal(conn):
    text = parse(conn.cmd("CLIENT", "LIST", "TYPE", "normal"))
    assert b"id=%d " % conn.call("CLIENT", "ID") in text


def test_client_list_bad_args(conn):
    assert conn.cmd("CLIENT", "LIST", "bogus") == b"-ERR syntax error\r\n"


def test_client_list_via_client(r):
    me = r.client_id()
    assert any(int(c["id"]) == me for c in r.client_list())


# ---------------------------------------------------------------- KILL

def test_client_kill_by_id(server, conn):
    victim = server.raw()
    vid = victim.call("CLIENT", "ID")
    assert conn.cmd("CLIENT", "KILL", "ID", str(vid)) == b":1\r\n"
    assert victim.is_closed(2.0)
    assert victim.buf == b""
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_client_kill_by_addr(server, conn):
    victim = server.raw()
    victim.cmd("PING")
    addr = "127.0.0.1:%d" % victim.local_port
    assert conn.cmd("CLIENT", "KILL", "ADDR", addr) == b":1\r\n"
    assert victim.is_closed(2.0)


def test_client_kill_old_form(server, conn):
    victim = server.raw()
    victim.cmd("PING")
    assert conn.cmd("CLIENT", "KILL", "127.0.0.1:%d" % victim.local_port) == b"+OK\r\n"
    assert victim.is_closed(2.0)


def test_client_kill_nonexistent(conn):
    assert conn.cmd("CLIENT", "KILL", "ID", "999999999") == b":0\r\n"
    assert conn.cmd("CLIENT", "KILL", "ADDR", "127.0.0.1:1") == b":0\r\n"
    assert conn.cmd("CLIENT", "KILL", "127.0.0.1:1") == b"-ERR No such client\r\n"


def test_client_kill_skips_self_by_default(conn):
    my_id = conn.call("CLIENT", "ID")
    assert conn.cmd("CLIENT", "KILL", "ID", str(my_id)) == b":0\r\n"
    assert conn.cmd("CLIENT", "KILL", "ADDR", "127.0.0.1:%d" % conn.local_port) == b":0\r\n"
    assert conn.cmd("CLIENT", "KILL", "ID", str(my_id), "SKIPME", "yes") == b":0\r\n"
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_client_kill_self_with_skipme_no(conn):
    my_id = conn.call("CLIENT", "ID")
    conn.send(encode_command("CLIENT", "KILL", "ID", str(my_id), "SKIPME", "no"))
    assert conn.read_until_closed() == b":1\r\n"


def test_client_kill_self_old_form(conn):
    conn.send(encode_command("CLIENT", "KILL", "127.0.0.1:%d" % conn.local_port))
    assert conn.read_until_closed() == b"+OK\r\n"


@pytest.mark.parametrize("args,reply", [
    (["ID", "abc"], b"-ERR client-id should be greater than 0\r\n"),
    (["ID", "0"], b"-ERR client-id should be greater than 0\r\n"),
    (["ID", "-3"], b"-ERR client-id should be greater than 0\r\n"),
    (["BOGUS", "1"], b"-ERR syntax error\r\n"),
    (["ID", "1", "SKIPME"], b"-ERR syntax error\r\n"),
    (["ID", "1", "SKIPME", "maybe"], b"-ERR syntax error\r\n"),
    (["USER", "nobody"], b"-ERR No such user 'nobody'\r\n"),
    (["USER", "Default"], b"-ERR No such user 'Default'\r\n"),
    (["ID", "1", "USER", "nobody"], b"-ERR No such user 'nobody'\r\n"),
])
def test_client_kill_errors(conn, args, reply):
    assert conn.cmd("CLIENT", "KILL", *args) == reply


def test_client_kill_by_user_default(server, conn):
    victim = server.raw()
    victim.cmd("PING")
    assert conn.cmd("CLIENT", "KILL", "USER", "default", "ADDR", "127.0.0.1:%d" % victim.local_port) == b":1\r\n"
    assert victim.is_closed(2.0)


def test_killed_client_via_library_reconnects(server, conn):
    r = server.client()
    assert r.ping() is True
    rid = r.client_id()
    assert conn.cmd("CLIENT", "KILL", "ID", str(rid)) == b":1\r\n"
    # redis-py retries once on a fresh connection
    assert wait_for(lambda: _safe_ping(r), timeout=2)
    assert r.client_id() != rid


def _safe_ping(r):
    try:
        return r.ping()
    except Exception:
        return False


# ---------------------------------------------------------------- REPLY

def test_client_reply_off_on(conn):
    conn.send(encode_command("CLIENT", "REPLY", "OFF")
              + encode_command("SET", "k", "1")
              + encode_command("GET", "k")
              + encode_command("GET")                # errors are suppressed too
              + encode_command("INCR", "k")
              + encode_command("CLIENT", "REPLY", "ON")
              + encode_command("GET", "k"))
    assert conn.read_replies(2) == [b"+OK\r\n", b"$1\r\n2\r\n"]
    assert conn.read_available(0.1) == b""


def test_client_reply_skip(conn):
    conn.send(encode_command("CLIENT", "REPLY", "SKIP")
              + encode_command("SET", "k", "v")
              + encode_command("GET", "k"))
    assert conn.read_reply() == b"$1\r\nv\r\n"
    assert conn.read_available(0.1) == b""


def test_client_reply_skip_twice(conn):
    conn.send(encode_command("CLIENT", "REPLY", "SKIP")
              + encode_command("CLIENT", "REPLY", "SKIP")
              + encode_command("ECHO", "one")
              + encode_command("ECHO", "two"))
    assert conn.read_reply() == b"$3\r\ntwo\r\n"
    assert conn.read_available(0.1) == b""


def test_client_reply_skip_then_on(conn):
    conn.send(encode_command("CLIENT", "REPLY", "SKIP")
              + encode_command("CLIENT", "REPLY", "ON")
              + encode_command("ECHO", "three"))
    assert conn.read_replies(2) == [b"+OK\r\n", b"$5\r\nthree\r\n"]


def test_client_reply_skip_while_off(conn):
    conn.send(encode_command("CLIENT", "REPLY", "off")
              + encode_command("CLIENT", "REPLY", "skip")
              + encode_command("ECHO", "four")
              + encode_command("ECHO", "five")
              + encode_command("CLIENT", "REPLY", "on"))
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.read_available(0.1) == b""


def test_client_reply_on_when_on(conn):
    assert conn.cmd("CLIENT", "REPLY", "ON") == b"+OK\r\n"


def test_client_reply_bad_mode(conn):
    assert conn.cmd("CLIENT", "REPLY", "BAD") == b"-ERR syntax error\r\n"
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_client_reply_off_inline(conn):
    conn.send(b"CLIENT REPLY OFF\r\nPING\r\nCLIENT REPLY ON\r\nPING\r\n")
    assert conn.read_replies(2) == [b"+OK\r\n", b"+PONG\r\n"]


# ---------------------------------------------------------------- SETINFO (latchd only)

def test_latchd_only_client_setinfo(latchd_factory):
    # Redis 7.0 has no CLIENT SETINFO (7.2 added it); latchd accepts it so that
    # newer client libraries can announce themselves on connect.
    srv = latchd_factory()
    c = srv.raw()
    assert c.cmd("CLIENT", "SETINFO", "lib-name", "redis-py") == b"+OK\r\n"
    assert c.cmd("CLIENT", "SETINFO", "LIB-VER", "5.0.1") == b"+OK\r\n"
    assert c.cmd("CLIENT", "SETINFO", "bogus", "x").startswith(b"-ERR ")
    assert c.cmd("PING") == b"+PONG\r\n"
