"""CLIENT LIST's rbs/rbp and INFO's reply_buffer_* as Redis 7.0's
clientsCronResizeOutputBuffer reports them, with DEBUG REPLYBUFFER."""

import re
import time

from resp_util import RawConn


def reply_buffer(conn, name):
    for line in conn.call("CLIENT", "LIST").decode().split("\n"):
        if " name=%s " % name in line:
            return int(re.search(r" rbs=(\d+)", line).group(1)), int(re.search(r" rbp=(\d+)", line).group(1))
    raise AssertionError("no client named " + name)


def wait_for(cond, tries=50):
    for _ in range(tries):
        if cond():
            return True
        time.sleep(0.1)
    return False


def stats(conn):
    info = conn.call("INFO", "stats").decode()
    return {k: int(v) for k, v in re.findall(r"(reply_buffer_\w+):(\d+)", info)}


def test_reply_buffer_shrinks_when_idle_and_grows_when_busy(server, conn):
    tc = None
    try:
        before = stats(conn)
        # no peak resets until the new client has been looked at: the cron's
        # first visit (within 100 ms, which a busy machine can let pass
        # before CLIENT LIST) would reset its peak to its pending bytes
        assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"+OK\r\n"
        tc = server.raw()
        # a new client's buffer is Redis's 16 KiB chunk, its peak the same
        assert tc.cmd("CLIENT", "SETNAME", "rb_test") == b"+OK\r\n"
        assert reply_buffer(conn, "rb_test") == (16384, 16384)
        assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"+OK\r\n"
        # idle: the peak resets, then the buffer shrinks to the 1 KiB minimum
        assert wait_for(lambda: reply_buffer(conn, "rb_test") == (1024, 0)), reply_buffer(conn, "rb_test")
        assert stats(conn)["reply_buffer_shrinks"] > before["reply_buffer_shrinks"]
        assert conn.cmd("SET", "rb_big", "x" * 32768) == b"+OK\r\n"
        assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"+OK\r\n"
        # busy with replies bigger than it: it doubles while full, up to 16 KiB
        sizes = []

        def grown():
            assert tc.cmd("GET", "rb_big").endswith(b"x\r\n")
            sizes.append(reply_buffer(conn, "rb_test")[0])
            return sizes[-1] >= 16384
        assert wait_for(grown), sizes
        assert sizes[-1] == 16384 and sizes == sorted(sizes) and sizes[0] >= 1024, sizes
        for size in sizes:
            assert size in (1024, 2048, 4096, 8192, 16384), sizes
        assert stats(conn)["reply_buffer_expands"] >= before["reply_buffer_expands"] + 4
        # never more than the chunk, however long it stays busy
        for _ in range(3):
            tc.cmd("GET", "rb_big")
            time.sleep(0.1)
        assert reply_buffer(conn, "rb_test")[0] == 16384
        # resizing off: the buffer stays as it is
        assert conn.cmd("DEBUG", "REPLYBUFFER", "RESIZING", "0") == b"+OK\r\n"
        assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"+OK\r\n"
        time.sleep(0.3)
        assert reply_buffer(conn, "rb_test")[0] == 16384
    finally:
        conn.cmd("DEBUG", "REPLYBUFFER", "RESIZING", "1")
        conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")
        conn.cmd("DEL", "rb_big")
        if tc:
            tc.close()


def test_debug_replybuffer_errors(conn):
    assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "x") == \
        b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("DEBUG", "REPLYBUFFER", "FOO", "1") == \
        b"-ERR unknown subcommand or wrong number of arguments for 'REPLYBUFFER'. Try DEBUG HELP.\r\n"
    assert conn.cmd("DEBUG", "REPLYBUFFER", "x") == \
        b"-ERR unknown subcommand or wrong number of arguments for 'REPLYBUFFER'. Try DEBUG HELP.\r\n"
    assert conn.cmd("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset") == b"+OK\r\n"
