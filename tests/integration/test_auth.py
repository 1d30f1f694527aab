"""AUTH and HELLO AUTH, with --requirepass (fresh server per test) and
without a password (shared server)."""

import hashlib

import pytest
import redis

from resp_util import RespMap, parse

PASSWORD = "s3cret-pw"
NOAUTH = b"-NOAUTH Authentication required.\r\n"
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
HELLO_NOAUTH = (
    b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
    b"HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
    b"the RESP protocol version at the same time\r\n")


@pytest.fixture
def secured(server_factory):
    return server_factory("--requirepass", PASSWORD)


# ---------------------------------------------------------------- with requirepass

NEEDS_AUTH = [
    ["PING"], ["PING", "x"], ["ECHO", "x"], ["GET", "a"], ["SET", "a", "b"], ["SELECT", "0"],
    ["CLIENT", "ID"], ["CLIENT", "SETNAME", "x"], ["INFO"], ["COMMAND", "COUNT"],
    ["DBSIZE"], ["KEYS", "*"], ["CONFIG", "GET", "save"], ["FLUSHALL"], ["TIME"],
    ["HSET", "h", "f", "v"], ["EXPIRE", "a", "10"], ["SCAN", "0"], ["WAIT", "0", "0"],
]


def test_commands_need_auth(secured):
    c = secured.raw()
    for argv in NEEDS_AUTH:
        assert c.cmd(*argv) == NOAUTH, argv
    assert c.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert c.cmd("GET", "a") == b"$-1\r\n"     # the rejected SET did nothing
    assert c.cmd("DBSIZE") == b":0\r\n"


def test_noauth_does_not_close_connection(secured):
    c = secured.raw()
    assert c.cmd("GET", "a") == NOAUTH
    assert c.cmd("GET", "a") == NOAUTH
    assert not c.is_closed(0.2)


def test_unknown_command_and_arity_checked_before_auth(secured):
    c = secured.raw()
    assert c.cmd("NOSUCH", "x") == b"-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"
    assert c.cmd("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"


def test_auth_wrong_password(secured):
    c = secured.raw()
    assert c.cmd("AUTH", "wrong") == WRONGPASS
    assert c.cmd("GET", "a") == NOAUTH


def test_auth_correct_password(secured):
    c = secured.raw()
    assert c.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"
    assert c.cmd("SET", "a", "1") == b"+OK\r\n"
    assert c.cmd("GET", "a") == b"$1\r\n1\r\n"


def test_auth_is_per_connection(secured):
    a, b = secured.raw(), secured.raw()
    assert a.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert a.cmd("PING") == b"+PONG\r\n"
    assert b.cmd("PING") == NOAUTH


def test_auth_default_user(secured):
    c = secured.raw()
    assert c.cmd("AUTH", "default", "wrong") == WRONGPASS
    assert c.cmd("AUTH", "bob", PASSWORD) == WRONGPASS
    assert c.cmd("PING") == NOAUTH
    assert c.cmd("AUTH", "default", PASSWORD) == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"


def test_failed_auth_keeps_existing_authentication(secured):
    c = secured.raw()
    assert c.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert c.cmd("AUTH", "wrong") == WRONGPASS
    assert c.cmd("PING") == b"+PONG\r\n"


def test_auth_syntax(secured):
    c = secured.raw()
    assert c.cmd("AUTH") == b"-ERR wrong number of arguments for 'auth' command\r\n"
    assert c.cmd("AUTH", "a", "b", "c") == b"-ERR syntax error\r\n"


def test_auth_inline_pipelined(secured):
    c = secured.raw()
    c.send(("AUTH %s\r\nGET a\r\n" % PASSWORD).encode())
    assert c.read_replies(2) == [b"+OK\r\n", b"$-1\r\n"]


def test_hello_needs_auth(secured):
    c = secured.raw()
    assert c.cmd("HELLO") == HELLO_NOAUTH
    assert c.cmd("HELLO", "3") == HELLO_NOAUTH
    assert c.cmd("HELLO", "2", "SETNAME", "x") == HELLO_NOAUTH
    assert c.cmd("GET", "a") == NOAUTH


def test_hello_auth(secured):
    c = secured.raw()
    reply = parse(c.cmd("HELLO", "3", "AUTH", "default", PASSWORD))
    assert isinstance(reply, RespMap)
    assert reply.to_dict()[b"proto"] == 3
    assert c.cmd("GET", "a") == b"_\r\n"


def test_hello_auth_wrong(secured):
    c = secured.raw()
    assert c.cmd("HELLO", "3", "AUTH", "default", "wrong") == WRONGPASS
    assert c.cmd("HELLO", "3", "AUTH", "bob", PASSWORD) == WRONGPASS
    assert c.cmd("GET", "a") == NOAUTH
    assert c.cmd("HELLO", "2", "AUTH", "default", PASSWORD).startswith(b"*")
    assert c.cmd("GET", "a") == b"$-1\r\n"


def test_hello_auth_and_setname(secured):
    c = secured.raw()
    assert c.cmd("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "me").startswith(b"%")
    assert c.cmd("CLIENT", "GETNAME") == b"$2\r\nme\r\n"


def test_hello_auth_then_bad_setname(secured):
    # credentials are checked and applied before the name is validated
    c = secured.raw()
    assert c.cmd("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "bad name") == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
    assert c.cmd("GET", "a") == b"$-1\r\n"  # authenticated, still RESP2


def test_quit_allowed_without_auth(secured):
    c = secured.raw()
    assert c.cmd("QUIT") == b"+OK\r\n"
    assert c.is_closed(2.0)


def test_reset_allowed_without_auth(secured):
    c = secured.raw()
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.cmd("PING") == NOAUTH


def test_reset_deauthenticates(secured):
    c = secured.raw()
    assert c.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.cmd("PING") == NOAUTH


def test_unauthenticated_multibulk_limit(secured):
    c = secured.raw()
    c.send(b"*11\r\n" + b"$4\r\nPING\r\n" * 11)
    assert c.read_until_closed() == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    c = secured.raw()
    c.send(b"*10\r\n" + b"$4\r\nPING\r\n" * 10)
    assert c.read_reply() == NOAUTH


def test_unauthenticated_bulk_limit(secured):
    c = secured.raw()
    c.send(b"*2\r\n$4\r\nAUTH\r\n$16385\r\n")
    assert c.read_until_closed() == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    c = secured.raw()
    c.send(b"*2\r\n$4\r\nAUTH\r\n$16384\r\n" + b"x" * 16384 + b"\r\n")
    assert c.read_reply() == WRONGPASS


def test_limits_lifted_after_auth(secured):
    c = secured.raw()
    assert c.cmd("AUTH", PASSWORD) == b"+OK\r\n"
    assert c.cmd("DEL", *["k%d" % i for i in range(20)]) == b":0\r\n"
    big = b"x" * 100000
    assert c.cmd("ECHO", big) == b"$100000\r\n" + big + b"\r\n"


def test_client_library_with_password(secured):
    r = secured.client(password=PASSWORD)
    assert r.ping() is True
    assert r.set("a", "1") is True
    assert r.get("a") == b"1"
    bad = secured.client(password="wrong")
    with pytest.raises(redis.exceptions.RedisError, match="WRONGPASS"):
        bad.ping()
    anon = secured.client()
    with pytest.raises(redis.exceptions.AuthenticationError):
        anon.get("a")


# ---------------------------------------------------------------- without requirepass

def test_auth_without_password_configured(conn):
    assert conn.cmd("AUTH", "foo") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n")
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_auth_default_user_any_password_without_requirepass(conn):
    # the default user is "nopass": any password is accepted for it
    assert conn.cmd("AUTH", "default", "anything") == b"+OK\r\n"
    assert conn.cmd("AUTH", "bob", "anything") == WRONGPASS
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_hello_auth_without_requirepass(conn):
    assert conn.cmd("HELLO", "3", "AUTH", "default", "whatever").startswith(b"%")
    assert conn.cmd("HELLO", "2", "AUTH", "bob", "whatever") == WRONGPASS
    assert conn.cmd("GET", "a") == b"_\r\n"


# ---------------------------------------------------------------- binary passwords

BINARY = b"abc\x00def"


def test_binary_requirepass(server_factory):
    # requirepass is one of Redis's sds configs: a NUL in it is kept
    srv = server_factory()
    c = srv.raw()
    assert c.cmd("CONFIG", "SET", "requirepass", BINARY) == b"+OK\r\n"
    other = srv.raw()
    assert other.cmd("AUTH", "abc") == WRONGPASS
    assert other.cmd("AUTH", "abcdef") == WRONGPASS
    assert other.cmd("PING") == NOAUTH
    assert other.cmd("AUTH", BINARY) == b"+OK\r\n"
    assert other.cmd("PING") == b"+PONG\r\n"
    h = srv.raw()
    assert h.cmd("HELLO", "2", "AUTH", "default", "abc") == WRONGPASS
    assert parse(h.cmd("HELLO", "2", "AUTH", "default", BINARY))[:2] == [b"server", b"redis"]
    assert c.call("CONFIG", "GET", "requirepass") == [b"requirepass", BINARY]
    digest = hashlib.sha256(BINARY).hexdigest().encode()
    assert c.call("ACL", "LIST") == [b"user default on #" + digest + b" ~* &* +@all"]
    assert c.cmd("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"
    assert srv.raw().cmd("PING") == b"+PONG\r\n"


def test_binary_acl_password(conn):
    try:
        assert conn.cmd("ACL", "SETUSER", "bin", "on", b">x\x00y", "+@all", "~*") == b"+OK\r\n"
        digest = hashlib.sha256(b"x\x00y").hexdigest().encode()
        assert conn.call("ACL", "GETUSER", "bin")[3] == [digest]
        assert conn.cmd("AUTH", "bin", "x") == WRONGPASS
        assert conn.cmd("AUTH", "bin", b"x\x00y") == b"+OK\r\n"
        assert conn.call("ACL", "WHOAMI") == b"bin"
        # < removes it by the same bytes; a selector keeps its rules' NULs too
        assert conn.cmd("ACL", "SETUSER", "bin", b"<x\x00y", b">z\x00") == b"+OK\r\n"
        assert conn.call("ACL", "GETUSER", "bin")[3] == [hashlib.sha256(b"z\x00").hexdigest().encode()]
        assert conn.cmd("AUTH", "bin", b"z\x00") == b"+OK\r\n"
        # a rule's error text ends at its NUL, as Redis's %s does
        assert conn.cmd("ACL", "SETUSER", "bin", b"bad\x00x") == \
            b"-ERR Error in ACL SETUSER modifier 'bad': Syntax error\r\n"
    finally:
        conn.cmd("AUTH", "default", "x")
        conn.cmd("ACL", "DELUSER", "bin")


def test_masterauth_binary_masteruser_c_string(conn):
    # masterauth is an sds config (kept whole), masteruser a C string (cut at the NUL)
    try:
        assert conn.cmd("CONFIG", "SET", "masterauth", BINARY, "masteruser", b"ab\x00cd") == b"+OK\r\n"
        assert conn.call("CONFIG", "GET", "masterauth") == [b"masterauth", BINARY]
        assert conn.call("CONFIG", "GET", "masteruser") == [b"masteruser", b"ab"]
    finally:
        conn.cmd("CONFIG", "SET", "masterauth", "", "masteruser", "")
