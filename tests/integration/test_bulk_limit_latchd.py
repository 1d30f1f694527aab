"""proto-max-bulk-len against the store's limit: latchd holds a key, field,
value or element of at most 2047 MiB (store.h STORE_MAX_LEN: 32-bit lengths
inside), so it refuses to raise proto-max-bulk-len past that, by CONFIG SET,
config file or flag, with Redis's range error, and a bulk longer than the
limit in force gets Redis's "invalid bulk length". Redis 7.0 allows up to
LLONG_MAX there, so the refusals are latchd only; a limit both servers
accept behaves the same on both."""
import subprocess

import pytest

from conftest import server_argv

STORE_MAX_LEN = 2047 * 1024 * 1024
RANGE = "argument must be between 1048576 and %d inclusive" % STORE_MAX_LEN


def set_failed(why):
    return ("-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - %s\r\n"
            % why).encode()


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


def test_latchd_only_config_set_refuses_past_the_store_limit(latchd_factory):
    conn = latchd_factory().raw()
    for given in (str(STORE_MAX_LEN + 1), "2gb", "4gb", "4294967296", "9223372036854775807"):
        assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", given) == set_failed(RANGE), given
        assert config_get(conn) == 512 * 1024 * 1024
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "2047mb") == b"+OK\r\n"
    assert config_get(conn) == STORE_MAX_LEN
    # Below the minimum: the same range error.
    assert conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "1000") == set_failed(RANGE)


@pytest.mark.parametrize("where", ["file", "flag"])
def test_latchd_only_startup_refuses_past_the_store_limit(tmp_path, where):
    conf = None
    extra = ()
    if where == "file":
        conf = str(tmp_path / "latchd.conf")
        with open(conf, "w") as f:
            f.write("proto-max-bulk-len 4gb\n")
    else:
        extra = ("--proto-max-bulk-len", "4gb")
    proc = subprocess.run(server_argv("latchd", 0, extra, conf), cwd=str(tmp_path),
                          capture_output=True, timeout=10)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    if where == "file":
        assert b"FATAL CONFIG FILE ERROR" in out and b">>> 'proto-max-bulk-len 4gb'" in out, out
    else:
        assert b"Invalid option '--proto-max-bulk-len'" in out, out
    assert RANGE.encode() in out, out


def test_latchd_only_startup_takes_the_store_limit(latchd_factory):
    conn = latchd_factory("--proto-max-bulk-len", "2047mb").raw()
    assert config_get(conn) == STORE_MAX_LEN
