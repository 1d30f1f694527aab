"""The config file and command-line flags, as redis-server reads them:
directives one per line, comments, quoting, flags overriding the file."""

import subprocess

from conftest import server_argv


def write_conf(tmp_path, text):
    path = tmp_path / "server.conf"
    path.write_text(text)
    return str(path)


def config_value(conn, name):
    reply = conn.call("CONFIG", "GET", name)
    return dict(zip(reply[0::2], reply[1::2]))[name.encode()]


def test_config_file_directives(server_factory, tmp_path):
    conf = write_conf(tmp_path, (
        "# a comment line\n"
        "\n"
        "   # an indented comment\n"
        'requirepass "s3 cret"\n'
        "maxclients 123\n"
        "loglevel warning\n"
        "timeout 0\n"))
    srv = server_factory(config=conf)
    c = srv.raw()
    assert c.cmd("PING") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "s3 cret") == b"+OK\r\n"
    assert config_value(c, "maxclients") == b"123"
    assert config_value(c, "loglevel") == b"warning"
    assert config_value(c, "requirepass") == b"s3 cret"


def test_flags_override_the_config_file(server_factory, tmp_path):
    conf = write_conf(tmp_path, "maxclients 123\n")
    srv = server_factory("--maxclients", "77", config=conf)
    assert config_value(srv.raw(), "maxclients") == b"77"


def test_memory_units_in_config(server_factory, tmp_path):
    conf = write_conf(tmp_path, "proto-max-bulk-len 2mb\n")
    srv = server_factory(config=conf)
    assert config_value(srv.raw(), "proto-max-bulk-len") == b"2097152"


def test_bad_directive_refuses_to_start(server_kind, tmp_path):
    conf = write_conf(tmp_path, "maxclients 10\nno-such-directive 1\n")
    argv = server_argv(server_kind, 0, (), conf)
    proc = subprocess.run(argv, cwd=str(tmp_path), capture_output=True, timeout=10)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert b"FATAL CONFIG FILE ERROR" in out
    assert b"at line 2" in out
    assert b">>> 'no-such-directive 1'" in out
    assert b"Bad directive or wrong number of arguments" in out


def test_bad_value_refuses_to_start(server_kind, tmp_path):
    conf = write_conf(tmp_path, "maxclients lots\n")
    proc = subprocess.run(server_argv(server_kind, 0, (), conf), cwd=str(tmp_path),
                          capture_output=True, timeout=10)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert b"FATAL CONFIG FILE ERROR" in out
    assert b">>> 'maxclients lots'" in out
