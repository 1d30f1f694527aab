"""INFO fields that measure something: the instantaneous rates, the
clients' recent peak buffers, the Lua VM and function registry, forks,
the AOF buffer and RESTORE's sanitizations, on both servers."""

import socket
import threading

from resp_util import RawConn, encode_command, wait_for
from test_info_config import info_fields, info_text


def info(conn, section):
    return {k.decode(): v.decode() for k, v in info_fields(info_text(conn, section)).items()}


def test_info_instantaneous_rates_follow_the_load(server, conn):
    stop = threading.Event()

    def load():
        with RawConn(server.host, server.port) as c:
            while not stop.is_set():
                c.send(encode_command("SET", "inst:k", "v" * 100) * 20)
                c.read_replies(20)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    try:
        busy = wait_for(lambda: (lambda f: int(f["instantaneous_ops_per_sec"]) > 0
                                 and float(f["instantaneous_input_kbps"]) > 0
                                 and float(f["instantaneous_output_kbps"]) > 0 and f)(info(conn, "stats")),
                        timeout=10, interval=0.2)
        assert busy, info(conn, "stats")
    finally:
        stop.set()
        worker.join(10)
    # The rates are means over the last 1.6 s of samples: asked every 2 s,
    # only the asking itself is left in the window, and not even that
    # before its reply is read.
    idle = wait_for(lambda: (lambda f: f["instantaneous_ops_per_sec"] == "0"
                             and f["instantaneous_input_kbps"] == "0.00"
                             and f["instantaneous_output_kbps"] == "0.00")(info(conn, "stats")),
                    timeout=12, interval=2.0)
    assert idle, info(conn, "stats")


def test_info_client_recent_max_input_buffer_big_argument(server, conn):
    with RawConn(server.host, server.port) as big:
        # an unfinished 1 MB argument, 600 kB of it sent: its query buffer
        big.send(b"*3\r\n$3\r\nSET\r\n$6\r\nbig:in\r\n$1000000\r\n" + b"x" * 600000)
        seen = wait_for(lambda: int(info(conn, "clients")["client_recent_max_input_buffer"]) >= 600000,
                        timeout=10, interval=0.1)
        assert seen, info(conn, "clients")
        big.send(b"x" * 400000 + b"\r\n")
        assert big.read_reply() == b"+OK\r\n"


def test_info_client_recent_max_output_buffer_slow_reader(server, conn):
    assert conn.cmd("SET", "big:out", "y" * 1000000) == b"+OK\r\n"
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((server.host, server.port))
    try:
        s.sendall(encode_command("GET", "big:out") * 40)   # 40 MB of replies nobody reads
        seen = wait_for(lambda: int(info(conn, "clients")["client_recent_max_output_buffer"]) >= 1000000,
                        timeout=10, interval=0.1)
        assert seen, info(conn, "clients")
    finally:
        s.close()


LIB = ("#!lua name=infolib\n"
       "redis.register_function('infof1', function() return 1 end)\n"
       "redis.register_function('infof2', function() return 2 end)\n")


def test_info_functions_counted(conn):
    assert conn.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    try:
        before = info(conn, "memory")
        assert (before["number_of_functions"], before["number_of_libraries"]) == ("0", "0")
        assert conn.call("FUNCTION", "LOAD", LIB) == b"infolib"
        after = info(conn, "memory")
        assert (after["number_of_functions"], after["number_of_libraries"]) == ("2", "1")
        # the registry's structures and the library's code
        assert int(after["used_memory_functions"]) >= int(before["used_memory_functions"]) + len(LIB)
        assert int(after["used_memory_scripts"]) == (int(after["used_memory_functions"])
                                                     + int(after["used_memory_scripts_eval"]))
    finally:
        conn.cmd("FUNCTION", "FLUSH")
    assert info(conn, "memory")["number_of_functions"] == "0"


def test_info_used_memory_lua_grows_with_a_big_table(conn):
    before = info(conn, "memory")
    assert int(before["used_memory_lua"]) > 0   # an empty VM is not nothing
    assert conn.call("EVAL", "local t = {} for i = 1, 200000 do t[i] = i end return #t", 0) == 200000
    after = info(conn, "memory")
    assert int(after["used_memory_lua"]) >= int(before["used_memory_lua"]) + 1000000
    assert after["used_memory_vm_eval"] == after["used_memory_lua"]
    assert int(after["used_memory_vm_total"]) == (int(after["used_memory_vm_eval"])
                                                  + int(after["used_memory_vm_functions"]))
    assert int(after["used_memory_lua"]) % 1024 == 0   # Lua counts it in KiB
    assert after["used_memory_lua_human"].endswith(("K", "M"))


def test_info_forks_counted_and_reset(server, conn):
    before = int(info(conn, "stats")["total_forks"])
    assert conn.cmd("BGSAVE") == b"+Background saving started\r\n"
    assert wait_for(lambda: info(conn, "persistence")["rdb_bgsave_in_progress"] == "0", timeout=10)
    stats = info(conn, "stats")
    assert int(stats["total_forks"]) == before + 1
    assert int(stats["latest_fork_usec"]) > 0
    assert conn.cmd("CONFIG", "RESETSTAT") == b"+OK\r\n"
    stats = info(conn, "stats")
    assert (stats["total_forks"], stats["latest_fork_usec"]) == ("0", "0")


def test_info_mem_aof_buffer_while_appendonly(server, conn):
    assert info(conn, "memory")["mem_aof_buffer"] == "0"
    forks = int(info(conn, "stats")["total_forks"])
    try:
        assert conn.cmd("CONFIG", "SET", "appendonly", "yes") == b"+OK\r\n"
        # turning it on rewrites the file in a child
        assert wait_for(lambda: (lambda p: p["aof_rewrite_in_progress"] == "0"
                                 and p["aof_rewrite_scheduled"] == "0")(info(conn, "persistence")), timeout=10)
        assert int(info(conn, "stats")["total_forks"]) == forks + 1
        assert conn.cmd("SET", "aof:k", "v" * 50) == b"+OK\r\n"
        assert int(info(conn, "memory")["mem_aof_buffer"]) > 0
    finally:
        conn.cmd("CONFIG", "SET", "appendonly", "no")
    assert info(conn, "memory")["mem_aof_buffer"] == "0"


def test_info_dump_payload_sanitizations_per_packed_blob(conn):
    # latchd checks every payload deeply, as Redis under this setting
    assert conn.cmd("CONFIG", "SET", "sanitize-dump-payload", "yes") == b"+OK\r\n"
    try:
        conn.call("HSET", "san:h", "f", "v")
        conn.call("SADD", "san:s", 1, 2, 3)
        conn.call("RPUSH", "san:l", "a", "b")
        conn.call("SET", "san:str", "plain")
        dumps = {k: conn.call("DUMP", k) for k in ("san:h", "san:s", "san:l", "san:str")}
        start = int(info(conn, "stats")["dump_payload_sanitizations"])
        for k, n in (("san:h", 1), ("san:s", 1), ("san:l", 1), ("san:str", 0)):
            assert conn.cmd("RESTORE", k, 0, dumps[k], "REPLACE") == b"+OK\r\n"
            assert int(info(conn, "stats")["dump_payload_sanitizations"]) == start + n, k
            start += n
    finally:
        conn.cmd("CONFIG", "SET", "sanitize-dump-payload", "no")


def test_info_dump_payload_sanitizations_follow_the_setting(server, conn):
    """Counted only where Redis checks deeply: never under "no" (the
    default), under "clients" not for a user with skip-sanitize-payload."""
    conn.call("HSET", "san2:h", "f", "v")
    blob = conn.call("DUMP", "san2:h")

    def restored_counts(c):
        start = int(info(conn, "stats")["dump_payload_sanitizations"])
        assert c.cmd("RESTORE", "san2:h", 0, blob, "REPLACE") == b"+OK\r\n"
        return int(info(conn, "stats")["dump_payload_sanitizations"]) - start

    assert conn.cmd("ACL", "SETUSER", "san-skip", "on", "nopass", "+@all", "~*", "skip-sanitize-payload") == b"+OK\r\n"
    try:
        with RawConn(server.host, server.port) as skipper:
            assert skipper.cmd("AUTH", "san-skip", "x") == b"+OK\r\n"
            for mode, by_default_user, by_skipper in (("no", 0, 0), ("yes", 1, 1), ("clients", 1, 0)):
                assert conn.cmd("CONFIG", "SET", "sanitize-dump-payload", mode) == b"+OK\r\n"
                assert (restored_counts(conn), restored_counts(skipper)) == (by_default_user, by_skipper), mode
    finally:
        conn.cmd("CONFIG", "SET", "sanitize-dump-payload", "no")
        conn.cmd("ACL", "DELUSER", "san-skip")


def test_info_script_flush_gives_the_lua_memory_back(conn):
    assert conn.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"
    base = int(info(conn, "memory")["used_memory_lua"])
    conn.send(b"".join(encode_command("EVAL", "return %d" % i, 0) for i in range(3000)))
    conn.read_replies(3000)
    grown = info(conn, "memory")
    assert int(grown["used_memory_lua"]) >= base + 100000   # 3000 compiled chunks
    assert grown["number_of_cached_scripts"] == "3000"
    assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"   # a new VM, as Redis makes
    after = info(conn, "memory")
    assert int(after["used_memory_lua"]) <= base + 8192
    assert after["number_of_cached_scripts"] == "0"


def test_script_flush_keeps_the_functions_and_the_vm_working(conn):
    assert conn.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    try:
        assert conn.call("EVAL", "return 1", 0) == 1
        assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"   # no library: a new VM in latchd
        assert conn.call("FUNCTION", "LOAD", LIB) == b"infolib"
        assert conn.call("EVAL", "return 2", 0) == 2
        assert conn.cmd("SCRIPT", "FLUSH") == b"+OK\r\n"   # a library: latchd keeps its state
        assert conn.call("FCALL", "infof2", 0) == 2
        assert conn.call("EVAL", "return redis.call('ping')", 0) == b"PONG"
        assert info(conn, "memory")["number_of_functions"] == "2"
    finally:
        conn.cmd("FUNCTION", "FLUSH")
