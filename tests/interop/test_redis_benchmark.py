"""redis-benchmark (Debian's redis-tools 7.0.15) completes against the server:
every test prints its requests-per-second line and leaves the keys its
commands write. No speed is asserted (that is scripts/bench's job)."""

import re

import pytest

from interop_util import run, tool

# (what -t asks for, extra options, the result labels redis-benchmark prints)
RUNS = {
    "plain": ("ping,set,get,hset", [],
              ["PING_INLINE", "PING_MBULK", "SET", "GET", "HSET"]),
    "pipelined": ("ping,set,get,hset", ["-P", "16", "-c", "4"],
                  ["PING_INLINE", "PING_MBULK", "SET", "GET", "HSET"]),
    # every test whose commands latchd has, with 200-byte values on 1000 keys
    "all-types": ("set,get,incr,lpush,rpush,lpop,rpop,hset,zadd,zpopmin,lrange,mset",
                  ["-d", "200", "-r", "1000", "-P", "8"],
                  ["SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "HSET", "ZADD", "ZPOPMIN",
                   "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)",
                   "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 500 elements)",
                   "LRANGE_600 (first 600 elements)", "MSET (10 keys)"]),
}
RESULT = re.compile(r"^([A-Z_0-9]+(?: \([^)]*\))?): ([0-9]+\.[0-9]+) requests per second, "
                    r"p50=[0-9.]+ msec$")


def results(stdout):
    """{test label: requests per second} from -q output, whose progress lines
    are overwritten in place with carriage returns."""
    found = {}
    for line in re.split(r"[\r\n]", stdout):
        m = RESULT.match(line.strip())
        if m:
            found[m.group(1)] = float(m.group(2))
    return found


@pytest.mark.parametrize("run_name", sorted(RUNS))
def test_benchmark_completes(server, run_name):
    tests, extra, labels = RUNS[run_name]
    argv = [tool("redis-benchmark"), "-h", server.host, "-p", str(server.port),
            "-t", tests, "-q", "-n", "2000"] + extra
    status, stdout, stderr = run(argv, timeout=120)
    assert status == 0, (stdout, stderr)
    assert "error" not in (stdout + stderr).lower(), (stdout, stderr)
    found = results(stdout)
    assert sorted(found) == sorted(labels), stdout
    assert all(rps > 0 for rps in found.values()), found
    print("redis-benchmark on %s, %s: %s" % (server.kind, run_name, found))
    r = server.client()
    if run_name == "all-types":
        keys = r.keys("key:*")                  # -r: random key names, -d: value size
        assert 1 < len(keys) <= 1000 and all(r.strlen(k) == 200 for k in keys[:50])
        assert r.llen("mylist") > 0 and len(r.lindex("mylist", 0)) == 200
        return
    assert r.get("key:__rand_int__") == b"VXK"
    assert r.hgetall("myhash") == {b"element:__rand_int__": b"VXK"}
