"""Redis's CPU lists on both servers: server_cpulist pins the main thread,
bio_cpulist the background threads (latchd's lazy-free worker and AOF
fsyncs), bgsave_cpulist and aof_rewrite_cpulist the forked children. Read
back from /proc as Cpus_allowed_list; a list that does not parse leaves the
thread unpinned, as in Redis."""

import os

import pytest

from resp_util import wait_for

CPUS = sorted(os.sched_getaffinity(0))
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to tell a pinned thread from an unpinned one")


def allowed(pid, tid=None):
    """The thread's CPUs as a set (the whole process's main thread by default)."""
    with open("/proc/%d/task/%d/status" % (pid, tid or pid)) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                cpus = set()
                for part in line.split(":", 1)[1].strip().split(","):
                    lo, _, hi = part.partition("-")
                    cpus.update(range(int(lo), int(hi or lo) + 1))
                return cpus
    raise AssertionError("no Cpus_allowed_list for %d/%s" % (pid, tid))


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def fill(r, n):
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set("key:%d" % i, "v")
    pipe.execute()


def child_cpus(srv, start, want):
    """Start a child with start(); its CPUs once they are want (it pins
    itself just after the fork), else the last seen while it ran."""
    start()
    kids = wait_for(lambda: children(srv.proc.pid), timeout=5)
    assert kids, "no child process appeared"
    seen = []

    def pinned():
        try:
            seen.append(allowed(kids[0]))
        except OSError:   # it has exited
            return True
        return seen[-1] == want

    wait_for(pinned, timeout=5)
    assert seen, "the child exited before its CPUs could be read"
    return seen[-1]


def test_bgsave_child_runs_on_bgsave_cpulist(server_factory):
    srv = server_factory("--bgsave_cpulist", str(CPUS[0]), "--rdb-key-save-delay", "2000")
    r = srv.client()
    fill(r, 300)   # 0.6 s of saving
    assert child_cpus(srv, r.bgsave, {CPUS[0]}) == {CPUS[0]}
    assert allowed(srv.proc.pid) == set(CPUS)   # the server itself stays unpinned


def test_aof_rewrite_child_runs_on_aof_rewrite_cpulist(server_factory):
    srv = server_factory("--appendonly", "yes", "--aof_rewrite_cpulist", str(CPUS[-1]),
                         "--rdb-key-save-delay", "2000")
    r = srv.client()
    # the start's own rewrite (an empty base) done before the one measured
    assert wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0, timeout=10)
    fill(r, 300)
    assert child_cpus(srv, r.bgrewriteaof, {CPUS[-1]}) == {CPUS[-1]}


def test_server_cpulist_pins_the_main_thread_with_ranges_and_steps(server_factory):
    first = CPUS[0]
    # "a-b:s": every s-th CPU from a to b; a CPU past the machine's is skipped by the step
    srv = server_factory("--server_cpulist", "%d-%d:%d" % (first, first + 1000, 1000))
    assert allowed(srv.proc.pid) == {first}
    assert srv.client().config_get("server_cpulist") == {"server_cpulist": "%d-%d:%d" % (first, first + 1000, 1000)}


@pytest.mark.parametrize("bad", ["x", "1-0", "0-1:0", "0,", "0-"])
def test_server_cpulist_that_does_not_parse_leaves_the_thread_unpinned(server_factory, bad):
    srv = server_factory("--server_cpulist", bad)
    assert allowed(srv.proc.pid) == set(CPUS)
    assert srv.client().ping()


def test_bio_cpulist_pins_the_background_threads(server_factory):
    main, bio = CPUS[0], CPUS[-1]
    srv = server_factory("--server_cpulist", str(main), "--bio_cpulist", str(bio))
    r = srv.client()
    r.sadd("big", *range(1000))
    r.unlink("big")   # a lazy free: latchd's worker starts on the first one

    def bio_threads():
        pid = srv.proc.pid
        return [t for t in map(int, os.listdir("/proc/%d/task" % pid)) if t != pid and allowed(pid, t) == {bio}]

    assert wait_for(bio_threads, timeout=5)
    assert allowed(srv.proc.pid) == {main}
