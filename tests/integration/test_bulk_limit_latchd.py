"""proto-max-bulk-len against the store's limit: latchd holds a key, field,
value or element of at most 2047 MiB (store.h STORE_MAX_LEN: 32-bit lengths
inside). proto-max-bulk-len takes Redis 7.0's whole range (up to LLONG_MAX),
but a bulk longer than the store limit gets Redis's "invalid bulk length"
whatever it says. Tests named _latchd_only are latchd's; the others run on
both servers."""
import pytest

STORE_MAX_LEN = 2047 * 1024 * 1024


def config_get(conn):
    reply = conn.call("CONFIG", "GET", "proto-max-bulk-len")
    return int(reply[1])


@pytest.fixture
def at_store_limit(conn):
    """Both servers with proto-max-bulk-len at latchd's ceiling."""
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", str(STORE_MAX_LEN)) == b"+OK\r\n"
    yield conn
    conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "512mb")


def test_bulk_at_the_limit_waits_for_its_bytes(server, at_store_limit):
    c = server.raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % STORE_MAX_LEN)
    c.send(b"abc")
    # Still reading the announced bulk: the connection is open, nothing said.
    assert c.read_available(0.3) == b""


def test_bulk_over_the_limit_is_a_protocol_error(server, at_store_limit):
    c = server.raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (STORE_MAX_LEN + 1))
    assert c.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"


@pytest.mark.parametrize("given", ["2gb", "4gb", "9223372036854775807"])
def test_config_takes_redis_range_past_the_store_limit(conn, given):
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", given) == b"+OK\r\n"
    try:
        assert config_get(conn) == {"2gb": 2 << 30, "4gb": 4 << 30}.get(given, 2 ** 63 - 1)
    finally:
        conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "512mb")


@pytest.mark.parametrize("how", ["config-set", "flag"])
def test_latchd_only_bulk_past_the_store_limit_is_refused_whatever_the_config(latchd_factory, how):
    if how == "flag":
        srv = latchd_factory("--proto-max-bulk-len", "4gb")
    else:
        srv = latchd_factory()
        assert srv.raw().cmd("CONFIG", "SET", "proto-max-bulk-len", "4gb") == b"+OK\r\n"
    c = srv.raw()
    assert config_get(c) == 4 << 30
    c.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (STORE_MAX_LEN + 1))
    assert c.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"
    # Up to the store limit a bulk is still awaited.
    c = srv.raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % STORE_MAX_LEN)
    assert c.read_available(0.3) == b""
    assert srv.raw().cmd("PING") == b"+PONG\r\n"
