"""MONITOR as Redis 7.0 shows it: "+<sec>.<usec> [0 <peer>] "arg" ..." lines
(peer "lua" for redis.call inside scripts, "unix:<path>" on the socket),
arguments quoted like sdscatrepr, AUTH/HELLO secrets redacted, admin and
refused commands left out; EVAL comes before its calls. Timestamps and
ports are normalised; everything else must match byte for byte."""

import re

from resp_util import RawConn, encode_command, parse
from script_util import Script, script_runs

LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[0 ([^\]]+)\] (.*)\r\n$", re.S)
END = b"~end~"


def repr_arg(arg):
    """Redis's sdscatrepr, the oracle for quoting (checked against redis)."""
    named = {b"\\": b"\\\\", b'"': b'\\"', b"\n": b"\\n", b"\r": b"\\r", b"\t": b"\\t",
             b"\a": b"\\a", b"\b": b"\\b"}
    out = b'"'
    for ch in arg:
        b = bytes([ch])
        out += named.get(b) or (b if 32 <= ch < 127 else b"\\x%02x" % ch)
    return out + b'"'


def shown(*args):
    return b" ".join(repr_arg(a if isinstance(a, bytes) else str(a).encode()) for a in args)


def start_monitor(server):
    m = server.raw()
    assert m.cmd("MONITOR") == b"+OK\r\n"
    return m


def watch(m, client):
    """(peer, text) of every monitor line up to the ECHO ~end~ that client
    sends now; peers are "me" (client), "lua", or the raw peer."""
    client.cmd("ECHO", END)
    me = ("127.0.0.1:%d" % client.local_port).encode()
    out = []
    while True:
        line = m.read_reply()
        got = LINE.match(line)
        assert got, line
        peer = got.group(3)
        out.append(("me" if peer == me else peer.decode(), got.group(4)))
        if out[-1] == ("me", shown("ECHO", END)):
            return out[:-1]


def test_monitor_shows_commands_as_redis_does(server):
    m = start_monitor(server)
    c = server.raw()
    binary = b"v\x00\n\"\\\x7f\xff a\t\r\x07\x08\xc3\xa9'"
    c.cmd("SET", "k", binary)
    c.cmd("GET", "k")
    c.cmd("NOSUCH", "a")                   # unknown: refused before running
    c.cmd("GET")                           # wrong arity: likewise
    c.cmd("CONFIG", "GET", "port")         # admin: never shown
    c.cmd("CLIENT", "ID")
    c.cmd("CLIENT", "KILL", "ID", "999999")  # an admin subcommand
    c.cmd("CLIENT", "NOSUCH")
    c.cmd("DEBUG", "SLEEP", "0")
    c.cmd("MONITOR")                       # c becomes a monitor too: not shown
    assert c.cmd("RESET") == b"+RESET\r\n"
    c.cmd("AUTH", "secret")
    c.cmd("AUTH", "user", "secret")
    c.cmd("HELLO", "2", "AUTH", "default", "pw")
    c.cmd("HELLO", "2", "SETNAME", "nm", "AUTH", "default", "pw")
    c.cmd("HELLO", "2", "SETNAME", "nm")
    c.cmd("PING")
    c.cmd("INCRBY", "n", "-12")
    assert watch(m, c) == [
        ("me", shown("SET", "k", binary)),
        ("me", shown("GET", "k")),
        ("me", shown("CLIENT", "ID")),
        ("me", shown("RESET")),
        ("me", shown("AUTH", "(redacted)")),
        ("me", shown("AUTH", "(redacted)", "(redacted)")),
        ("me", shown("HELLO", "2", "AUTH", "(redacted)", "(redacted)")),
        ("me", shown("HELLO", "2", "SETNAME", "nm", "AUTH", "(redacted)", "(redacted)")),
        ("me", shown("HELLO", "2", "SETNAME", "nm")),
        ("me", shown("PING")),
        ("me", shown("INCRBY", "n", "-12")),
    ]


def test_monitor_shows_script_calls_as_lua(server):
    m = start_monitor(server)
    c = server.raw()
    body = "redis.call('set', KEYS[1], ARGV[1]); redis.pcall('get'); return redis.call('GET', KEYS[1])"
    assert c.cmd("EVAL", body, "1", "kk", "x y") == b"$3\r\nx y\r\n"
    c.cmd("EVAL", "return 1", "-1")                     # EVAL's own errors: still shown
    c.cmd("EVALSHA", "0" * 40, "0")
    c.cmd("EVAL", "return redis.call('config', 'get', 'port')", "0")
    assert watch(m, c) == [
        ("me", shown("EVAL", body, "1", "kk", "x y")),
        ("lua", shown("set", "kk", "x y")),
        ("lua", shown("GET", "kk")),
        ("me", shown("EVAL", "return 1", "-1")),
        ("me", shown("EVALSHA", "0" * 40, "0")),
        ("me", shown("EVAL", "return redis.call('config', 'get', 'port')", "0")),
    ]


def test_monitor_shows_every_call_of_a_redisson_lock(server):
    # latchd runs this script natively; a monitor must still see its calls.
    lock = Script.vector("149c5a8b")
    c = server.raw()
    assert c.cmd("SCRIPT", "LOAD", lock.body) == b"$40\r\n%s\r\n" % lock.sha.encode()
    runs = script_runs(c) if server.kind == "latchd" else None
    m = start_monitor(server)
    assert lock(c, ["orders"], [30000, "a:1"]) is None
    assert lock(c, ["orders"], [30000, "b:1"]) > 0
    assert watch(m, c) == [
        ("me", shown("EVALSHA", lock.sha, "1", "orders", "30000", "a:1")),
        ("lua", shown("exists", "orders")),
        ("lua", shown("hincrby", "orders", "a:1", "1")),
        ("lua", shown("pexpire", "orders", "30000")),
        ("me", shown("EVALSHA", lock.sha, "1", "orders", "30000", "b:1")),
        ("lua", shown("exists", "orders")),
        ("lua", shown("hexists", "orders", "b:1")),
        ("lua", shown("pttl", "orders")),
    ]
    if runs:   # Lua ran both, so the monitor saw each call
        assert script_runs(c) == (runs[0], runs[1] + 2)


def test_monitor_timestamps_are_server_time(server):
    m = start_monitor(server)
    c = server.raw()

    def now():
        sec, usec = parse(c.cmd("TIME"))
        return int(sec) * 1000000 + int(usec)

    before = now()
    c.cmd("PING")
    after = now()
    c.cmd("ECHO", END)
    stamps = []
    for _ in range(4):   # TIME, PING, TIME, ECHO
        got = LINE.match(m.read_reply())
        stamps.append(int(got.group(1)) * 1000000 + int(got.group(2)))
    assert stamps == sorted(stamps)
    assert before <= stamps[1] <= after


def test_monitor_lines_reach_every_monitor_alike(server):
    monitors = [start_monitor(server) for _ in range(3)]
    c = server.raw()
    big = b"\x01" * 3000   # quoted to 12000 bytes: one line shared by all
    c.cmd("SET", "big", big)
    seen = [watch(m, c) for m in monitors]
    assert seen[0] == [("me", shown("SET", "big", big))]
    assert seen[1] == seen[0] and seen[2] == seen[0]


def test_monitor_client_may_not_touch_keys(server):
    m = start_monitor(server)
    assert m.cmd("GET", "k") == b"-ERR Replica can't interact with the keyspace\r\n"
    assert m.cmd("SET", "k", "v") == b"-ERR Replica can't interact with the keyspace\r\n"
    assert m.cmd("EVAL", "return 1", "0") == b"-ERR Replica can't interact with the keyspace\r\n"
    assert m.cmd("PING") == b"+PONG\r\n"
    assert LINE.match(m.read_reply()).group(4) == shown("PING")   # its own command, shown to itself
    m.send(encode_command("MONITOR"))   # a second MONITOR: no reply at all
    assert m.cmd("ECHO", "x") == b"$1\r\nx\r\n"
    assert LINE.match(m.read_reply()).group(4) == shown("ECHO", "x")


def test_monitor_client_list_flags(server):
    m = start_monitor(server)
    m_id = None
    c = server.raw()
    for line in parse(c.cmd("CLIENT", "LIST")).decode().splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" "))
        if fields["cmd"] == "monitor":
            m_id = fields["id"]
            assert fields["flags"] == "O"
    assert m_id is not None
    m.close()


def test_monitor_reset_stops_and_quit_closes(server):
    m = start_monitor(server)
    assert m.cmd("RESET") == b"+RESET\r\n"
    c = server.raw()
    c.cmd("SET", "after", "reset")
    assert m.cmd("GET", "after") == b"$5\r\nreset\r\n"   # an ordinary client again
    assert m.read_available(0.2) == b""
    q = start_monitor(server)
    assert q.cmd("QUIT") == b"+OK\r\n"
    assert q.is_closed()
    c.cmd("PING")   # nobody left to tell: must not trip over the closed one
    assert c.cmd("ECHO", "ok") == b"$2\r\nok\r\n"


def test_monitor_in_subscribed_mode(server):
    s = server.raw()
    s.cmd("SUBSCRIBE", "ch")
    assert s.cmd("MONITOR") == (b"-ERR Can't execute 'monitor': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                                b"PING / QUIT / RESET are allowed in this context\r\n")
    r3 = server.raw()
    assert parse(r3.cmd("HELLO", "3"))
    r3.cmd("SUBSCRIBE", "ch")
    assert r3.cmd("MONITOR") == b"+OK\r\n"   # RESP3 has no subscribed mode
    c = server.raw()
    c.cmd("PUBLISH", "ch", "hi")
    assert r3.read_reply() == b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    assert LINE.match(r3.read_reply()).group(4) == shown("PUBLISH", "ch", "hi")


def test_monitor_over_unix_socket(server_factory, tmp_path):
    path = str(tmp_path / "s.sock")
    srv = server_factory("--unixsocket", path)
    m = start_monitor(srv)
    import socket
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.connect(path)
    u.sendall(encode_command("PING"))
    assert u.recv(100) == b"+PONG\r\n"
    u.close()
    got = LINE.match(m.read_reply())
    assert got.group(3) == ("unix:" + path).encode()
    assert got.group(4) == shown("PING")
