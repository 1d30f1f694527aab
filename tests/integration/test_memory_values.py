"""Memory values as Redis 7.0's memtoull reads them, for maxmemory (any
unsigned 64-bit value), proto-max-bulk-len and client-query-buffer-limit
(signed bounds) and client-output-buffer-limit: units k/kb/m/mb/g/gb/b in
any case, no sign, at most 127 digits, saturation at 2^64-1, products that
wrap. The same bytes from CONFIG SET, CONFIG GET and INFO, and the same
values by flag and config file."""

import subprocess

import pytest

from conftest import server_argv
from resp_util import parse

U64_MAX = "18446744073709551615"

# (given, what CONFIG GET maxmemory shows, INFO's maxmemory and maxmemory_human)
MAXMEMORY = [
    (U64_MAX, U64_MAX, "-1", "18446744073709551615B"),
    ("18446744073709551616", U64_MAX, "-1", "18446744073709551615B"),   # saturates
    ("9" * 127, U64_MAX, "-1", "18446744073709551615B"),
    ("9223372036854775808", "9223372036854775808", "-9223372036854775808", "9223372036854775808B"),
    ("9223372036854775807", "9223372036854775807", "9223372036854775807", "9223372036854775807B"),
    ("17179869184gb", "0", "0", "0B"),                                  # 2^64: wraps to 0
    ("17179869183gb", "18446744072635809792", "-1073741824", "18446744072635809792B"),
    ("18014398509481983kb", "18446744073709550592", "-1024", "18446744073709550592B"),
    ("18446744073709552k", "384", "384", "384B"),
    ("99999999999999999999999999999k", "18446744073709550616", "-1000", "18446744073709550616B"),
    (U64_MAX + "b", U64_MAX, "-1", "18446744073709551615B"),
    ("1152921504606846976", "1152921504606846976", "1152921504606846976", "1152921504606846976B"),
    ("1152921504606846975", "1152921504606846975", "1152921504606846975", "1024.00P"),
    ("1125899906842624", "1125899906842624", "1125899906842624", "1.00P"),
    ("0" * 126 + "7", "7", "7", "7B"),
    ("1GB", "1073741824", "1073741824", "1.00G"),
    ("1g", "1000000000", "1000000000", "953.67M"),
    ("3Mb", "3145728", "3145728", "3.00M"),
    ("2M", "2000000", "2000000", "1.91M"),
    ("5K", "5000", "5000", "4.88K"),
    ("1kB", "1024", "1024", "1.00K"),
    ("5B", "5", "5", "5B"),
    ("", "0", "0", "0B"),
    ("b", "0", "0", "0B"),
    ("kb", "0", "0", "0B"),
]

NOT_MEMORY = ["-1", "-0", "+5", " 5", "5 ", "1.5", "0x10", "1tb", "1e3", "1 kb", "1kbb",
              "1" * 128, "0" * 128, "--1", "1\t"]


def config_get(conn, name):
    reply = conn.call("CONFIG", "GET", name)
    return dict(zip(reply[0::2], reply[1::2]))[name.encode()]


def info_memory(conn):
    lines = parse(conn.cmd("INFO", "memory")).split(b"\r\n")
    fields = dict(l.split(b":", 1) for l in lines if b":" in l)
    return fields[b"maxmemory"].decode(), fields[b"maxmemory_human"].decode()


def set_failed(name, why):
    return ("-ERR CONFIG SET failed (possibly related to argument '%s') - %s\r\n" % (name, why)).encode()


@pytest.fixture
def restore(conn):
    yield conn
    conn.cmd("CONFIG", "SET", "maxmemory", "0")
    conn.cmd("CONFIG", "SET", "proto-max-bulk-len", "512mb")
    conn.cmd("CONFIG", "SET", "client-query-buffer-limit", "1gb")
    conn.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 "
             "pubsub 33554432 8388608 60")


@pytest.mark.parametrize("given,stored,info,human", MAXMEMORY, ids=[c[0][:24] for c in MAXMEMORY])
def test_config_set_maxmemory(restore, given, stored, info, human):
    assert restore.cmd("CONFIG", "SET", "maxmemory", given) == b"+OK\r\n"
    assert config_get(restore, "maxmemory") == stored.encode()
    assert info_memory(restore) == (info, human)


@pytest.mark.parametrize("given", NOT_MEMORY)
def test_config_set_maxmemory_refuses(restore, given):
    restore.cmd("CONFIG", "SET", "maxmemory", "12345")
    assert restore.cmd("CONFIG", "SET", "maxmemory", given) == set_failed(
        "maxmemory", "argument must be a memory value")
    assert config_get(restore, "maxmemory") == b"12345"


def test_huge_maxmemory_never_refuses_writes(restore):
    for value in (U64_MAX, "9223372036854775808"):
        assert restore.cmd("CONFIG", "SET", "maxmemory", value) == b"+OK\r\n"
        assert restore.cmd("SET", "k", "v") == b"+OK\r\n"
    assert restore.cmd("CONFIG", "SET", "maxmemory", "1") == b"+OK\r\n"
    assert restore.cmd("SET", "k", "v") == b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
    restore.cmd("CONFIG", "SET", "maxmemory", "0")
    restore.cmd("DEL", "k")


BOUNDED = "argument must be between 1048576 and 9223372036854775807 inclusive"


@pytest.mark.parametrize("name", ["proto-max-bulk-len", "client-query-buffer-limit"])
@pytest.mark.parametrize("given,outcome", [
    (U64_MAX, BOUNDED),                       # read as -1
    ("99999999999999999999999999", BOUNDED),
    ("9223372036854775808", BOUNDED),
    ("18446744073709552k", BOUNDED),          # wraps to 384
    ("9223372036854775807", None),
    ("8796093022207kb", None),                # just under 2^63
    ("1" * 128, "argument must be a memory value"),
    ("-5mb", "argument must be a memory value"),
])
def test_signed_memory_limits(restore, name, given, outcome):
    before = config_get(restore, name)
    reply = restore.cmd("CONFIG", "SET", name, given)
    if outcome is None:
        assert reply == b"+OK\r\n"
        assert config_get(restore, name) != before
    else:
        assert reply == set_failed(name, outcome)
        assert config_get(restore, name) == before


def test_output_buffer_limit_takes_any_memory_value(restore):
    assert restore.cmd("CONFIG", "SET", "client-output-buffer-limit",
                       "pubsub %s 17179869184gb 60" % ("9" * 30)) == b"+OK\r\n"
    assert config_get(restore, "client-output-buffer-limit") == (
        b"normal 0 0 0 slave 268435456 67108864 60 pubsub %s 0 60" % U64_MAX.encode())
    assert restore.cmd("CONFIG", "SET", "client-output-buffer-limit", "pubsub -1 0 0") == set_failed(
        "client-output-buffer-limit",
        "Error in hard, soft or soft_seconds setting in buffer limit configuration.")


@pytest.mark.parametrize("given,stored", [(U64_MAX, U64_MAX), ("18446744073709551616", U64_MAX),
                                          ("9223372036854775808", "9223372036854775808"),
                                          ("17179869183gb", "18446744072635809792")])
def test_maxmemory_by_flag_and_config_file(server_factory, tmp_path, given, stored):
    by_flag = server_factory("--maxmemory", given).raw()
    assert config_get(by_flag, "maxmemory") == stored.encode()
    conf = tmp_path / "mem.conf"
    conf.write_text("maxmemory %s\n" % given)
    by_file = server_factory(config=str(conf)).raw()
    assert config_get(by_file, "maxmemory") == stored.encode()
    assert info_memory(by_file) == info_memory(by_flag)


@pytest.mark.parametrize("given", ["-1", "1tb", "1" * 128])
def test_bad_maxmemory_in_config_file_refuses_to_start(server_kind, tmp_path, given):
    conf = tmp_path / "bad.conf"
    conf.write_text("maxmemory %s\n" % given)
    proc = subprocess.run(server_argv(server_kind, 0, (), str(conf)), cwd=str(tmp_path),
                          capture_output=True, timeout=10)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert b"FATAL CONFIG FILE ERROR" in out
    assert b">>> 'maxmemory %s'" % given.encode() in out
    assert b"argument must be a memory value" in out
