"""redis-benchmark (Debian's redis-tools 7.0.15) completes against the server:
every test prints its requests-per-second line and leaves the keys its
commands write. No speed is asserted (that is scripts/bench's job)."""

import re

import pytest

from interop_util import run, tool

TESTS = ["PING_INLINE", "PING_MBULK", "SET", "GET", "HSET"]
RESULT = re.compile(r"^([A-Z_]+): ([0-9]+\.[0-9]+) requests per second, p50=[0-9.]+ msec$")


def results(stdout):
    """{test name: requests per second} from -q output, whose progress lines
    are overwritten in place with carriage returns."""
    found = {}
    for line in re.split(r"[\r\n]", stdout):
        m = RESULT.match(line.strip())
        if m:
            found[m.group(1)] = float(m.group(2))
    return found


@pytest.mark.parametrize("extra", [[], ["-P", "16", "-c", "4"]], ids=["plain", "pipelined"])
def test_benchmark_completes(server, extra):
    argv = [tool("redis-benchmark"), "-h", server.host, "-p", str(server.port),
            "-t", "ping,set,get,hset", "-q", "-n", "2000"] + extra
    status, stdout, stderr = run(argv, timeout=120)
    assert status == 0, (stdout, stderr)
    assert "error" not in (stdout + stderr).lower(), (stdout, stderr)
    found = results(stdout)
    assert sorted(found) == sorted(TESTS), stdout
    assert all(rps > 0 for rps in found.values()), found
    print("redis-benchmark on %s %s: %s" % (server.kind, " ".join(extra) or "(default)", found))
    r = server.client()
    assert r.get("key:__rand_int__") == b"VXK"
    assert r.hgetall("myhash") == {b"element:__rand_int__": b"VXK"}
