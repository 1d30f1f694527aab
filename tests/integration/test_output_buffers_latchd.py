"""latchd-only: a client's output buffer that grew for big replies is kept
while the client goes on, and given back once it has been quiet for about a
second (freeing it after every flush made each pipelined batch of big
replies grow it again, page by page)."""
import time

from resp_util import parse, wait_for


def tot_mem(conn, client_id):
    for line in parse(conn.cmd("CLIENT", "LIST")).decode().strip().split("\n"):
        fields = dict(f.split("=", 1) for f in line.split())
        if fields["id"] == str(client_id):
            return int(fields["tot-mem"])
    raise AssertionError("client %d not listed" % client_id)


def test_latchd_big_output_buffer_kept_then_given_back(latchd_factory):
    srv = latchd_factory()
    big, watcher = srv.raw(timeout=10), srv.raw()
    big_id = parse(big.cmd("CLIENT", "ID"))
    big.cmd("RPUSH", "l", *(["x" * 200] * 5000))
    assert len(parse(big.cmd("LRANGE", "l", "0", "-1"))) == 5000
    assert tot_mem(watcher, big_id) > 500_000           # kept: the client may go on
    for _ in range(3):                                     # and it does: no regrowth needed
        assert len(parse(big.cmd("LRANGE", "l", "0", "-1"))) == 5000
    assert wait_for(lambda: tot_mem(watcher, big_id) < 100_000, timeout=5)   # quiet: given back
    time.sleep(0.1)
    assert big.cmd("PING") == b"+PONG\r\n"
