#!/usr/bin/env python3
"""bench.py - latchd against redis-server, side by side, as ratios.

Both servers run on this machine pinned to one core (core 0) and every load
generator on another (core 1). Rounds alternate latchd / redis so drift in a
noisy machine hits both alike. Sections (--sections, default all):

  throughput  redis-benchmark workloads at -P1 and -P16: median rps and server
              CPU time per request (utime+stime from /proc over the run,
              divided by the requests sent), which -P16 does not hide; at -P1
              also redis-benchmark's own CPU per request: when it is busy all
              the time, it and not the server sets the -P1 rate; the lock
              workloads and redis-benchmark's default tests (-t ...)
  handoff     tests/bench/handoff.c (build/bench_handoff): Redisson RLock
              handoff, acquisitions/s and handoff latency p50/p99/p999
  memory      1M held Redisson locks loaded with pipelined EVALSHA: RSS growth
              and used_memory growth per lock, fresh server each
  sets        memory per element of a 1M-member set of integers and of
              16-byte strings, and per 8-member set (100k of them): RSS
              and used_memory growth, fresh server each
  rdb         the dump file of 1M held locks (--memory-locks; --quick
              200k): BGSAVE time, the parent's peak RSS and its growth
              during it, file size, and start-up loading it (wall and
              server CPU, medians of alternating rounds)
  aof         appendonly yes on both: SET and EVALSHA lock at -P16 and -P1
              with appendfsync always (by redis-benchmark, and again by
              build/bench_loadgen, whose lower CPU per request leaves the
              servers as the limit), and with everysec beside latchd
              without persistence (and redis-server's beside its own
              without, for scale; fresh servers in a temp dir each run)
  expiry      tests/bench/expired_lateness.py: 100k keys expiring over 2 s,
              lateness of the "expired" events p50/p99/max
  startup     exec -> first PING reply, median of 20
  wheel       build/bench_wheel: timing-wheel insert/cancel cost at 1e3, 1e5,
              1e7 timers (ns/op, and callgrind instructions/op), latchd only
  streams     XADD -P1/-P16 (redis-benchmark, in the throughput table too);
              a consumer group drained by pipelined XREADGROUP COUNT 10 +
              XACK of those 10 (redis-cli --pipe): entries/s; memory per
              entry of a 1M-entry stream of 2 small fields (RSS and
              used_memory growth), fresh server each
  queue       tests/bench/queue.c (build/bench_queue): N consumers parked in
              BLPOP, P producers LPUSHing stamped messages: messages/s and
              handoff latency (LPUSH sent -> consumer's reply) p50/p99/p999;
              then 10k clients parked in BLPOP on 10k keys: RSS and
              used_memory growth per blocked client, fresh server each
  tls         both servers with TLS (certificates made with openssl, mutual
              TLS as Redis's default tls-auth-clients asks): EVALSHA lock and
              GET at -P16 and -P1 through redis-benchmark --tls and through
              build/bench_loadgen --tls (rps, server CPU per request, and the
              rounds' paired rps ratios: their median and how many rounds
              latchd led; the -P1 rows also with latchd's busy-poll-usecs
              50; --only picks the workloads); on fresh
              servers, new handshakes per second
              (openssl s_time -new) and server CPU per handshake, and RSS
              per idle TLS connection (1000 of them)
  raft        3 latchd nodes on Raft (raft-id, each fsyncing its log) beside
              one latchd with appendfsync always and redis-server + 2
              replicas with WAIT 1 0 after each script (Redisson's
              syncedEval): Redisson lock acquires/s (redis-benchmark
              EVALSHA -P16 c=50, the latchd ones) and lock+unlock pairs/s
              (a Python asyncio load, c=50 with 16 pairs in flight each, all
              three), sequential
              lock+unlock latency p50/p99 (one Python client), and failover:
              kill -9 of the leader -> first lock acquired, p50/max over
              --raft-kills kills (tests/bench/raft_bench.py)

Writes build/bench/report.md (the table, the targets with met/missed,
the chart), results.csv and ratios.png (gnuplot), and prints the report.

    tests/bench/bench.py [--quick] [--rounds N] [--requests N] [--only REGEX]
                         [--sections a,b,...] [--out DIR]
"""

import argparse
import copy
import csv
import datetime
import hashlib
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "bench")
VECTORS = os.environ.get("LATCHD_SCRIPT_VECTORS") or os.path.join(ROOT, "..", "shared", "protocol", "vectors")
LOCK_SHA = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
UNLOCK_SHA = "3ffe249c16dee540ac8ab32e39bd408626b9aff7"
LUA_ONLY = "return redis.call('hexists', KEYS[1], ARGV[1])"   # no native path
# The same body as a function, for FCALL beside "EVALSHA Lua-only".
FCALL_LIB = ("#!lua name=benchlib\nredis.register_function('hexists_fn', function(KEYS, ARGV) "
             "return redis.call('hexists', KEYS[1], ARGV[1]) end)")
TICK = os.sysconf("SC_CLK_TCK")
SERVER_CORE, LOAD_CORE = 0, 1
KINDS = ("latchd", "redis")
SECTIONS = ("throughput", "handoff", "memory", "sets", "rdb", "aof", "expiry", "startup", "wheel", "queue", "tls",
            "streams", "raft")
QUICK_WORKLOADS = r"^(GET|SET|EVALSHA lock|EVAL lock text|EVALSHA Lua-only)$"
# redis-benchmark's default tests (issue 17's table): each runs alone on a
# flushed server, so LPOP, RPOP, SPOP and ZPOPMIN pop from empty keys on
# both servers alike; the LRANGE ones fill their list first.
DEFAULT_TESTS = ["ping_inline", "ping_mbulk", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop",
                 "sadd", "hset", "spop", "zadd", "zpopmin", "lrange_100", "lrange_300", "lrange_500",
                 "lrange_600", "mset"]


class BenchError(Exception):
    pass


def vector(sha):
    path = os.path.join(VECTORS, sha + ".lua")
    try:
        with open(path, "rb") as f:
            return f.read().decode()
    except OSError as e:
        raise BenchError("script text %s: %s" % (path, e))


def workloads():
    lock = vector(LOCK_SHA)
    lua_sha = hashlib.sha1(LUA_ONLY.encode()).hexdigest()
    return [
        ("PING_MBULK", ["-t", "ping_mbulk"]),
        ("SET", ["-t", "set"]),
        ("GET", ["-t", "get"]),
        ("HSET", ["-t", "hset"]),
        ("HINCRBY", ["hincrby", "h:__rand_int__", "f", "1"]),
        ("PUBLISH", ["publish", "ch", "msg"]),
        ("EVALSHA lock", ["evalsha", LOCK_SHA, "1", "lock:__rand_int__", "30000", "owner:1"]),
        ("EVALSHA unlock", ["evalsha", UNLOCK_SHA, "2", "lock:__rand_int__", "chan", "0",
                            "30000", "owner:1"]),
        ("EVAL lock text", ["eval", lock, "1", "lock:__rand_int__", "30000", "owner:1"]),
        ("EVALSHA Lua-only", ["evalsha", lua_sha, "1", "lock:__rand_int__", "owner:1"]),
        ("FCALL", ["fcall", "hexists_fn", "1", "lock:__rand_int__", "owner:1"]),
        ("SCRIPT LOAD", ["script", "load", lock]),
    ] + [(t.upper(), ["-t", t]) for t in DEFAULT_TESTS if t not in ("set", "get", "hset", "ping_mbulk")] + \
        GEO_WORKLOADS + STREAM_WORKLOADS, [lock, vector(UNLOCK_SHA), LUA_ONLY]


# Geo (issue 19): GEOADD of random points ("13.<12 random digits>") into one
# index, and GEOSEARCH of the 5 nearest within 10 km in an index of 1000
# points spread over one degree square (about 50 in the circle), filled
# before each run by geo_fill.
GEO_WORKLOADS = [
    ("GEOADD", ["geoadd", "geo", "13.__rand_int__", "38.__rand_int__", "m:__rand_int__"]),
    ("GEOSEARCH", ["geosearch", "geo", "FROMLONLAT", "13.5", "38.5", "BYRADIUS", "10", "km",
                   "ASC", "COUNT", "5"]),
]


# Streams (issue 19): XADD of one small entry with an auto ID to one stream.
STREAM_WORKLOADS = [
    ("XADD", ["xadd", "stream", "*", "f", "__rand_int__"]),
]


def geo_fill(port):
    rng = random.Random(19)
    args = []
    for i in range(1000):
        args += ["%.6f" % rng.uniform(13, 14), "%.6f" % rng.uniform(38, 39), "p%d" % i]
    cli(port, "GEOADD", "geo", *args)


# What a workload needs in the flushed server before it runs.
FILLS = {"GEOSEARCH": geo_fill}


# ---- servers ----

_ports_given = set()


def free_port():
    """A port free now and not handed out before in this run: the kernel
    can give the same free port to two binds in a row (a TLS server's
    tls-port and its plain port once came out equal)."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in _ports_given:
            _ports_given.add(port)
            return port


def server_argv(kind, opt, port, extra=()):
    binary = opt.latchd if kind == "latchd" else opt.redis
    return [binary, "--port", str(port), "--save", "", "--appendonly", "no"] + list(extra)


def spawn_on_server_core(argv):
    """Popen with the child on the server core and no extra exec (taskset
    would add one to the start-up time): we pin ourselves around the fork."""
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {SERVER_CORE})
    try:
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
    except OSError as e:
        raise BenchError("cannot start %s: %s" % (argv[0], e))
    finally:
        os.sched_setaffinity(0, mine)


def ping(port, timeout):
    """True once the server at port answers PING with +PONG."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Server:
    live = []

    def __init__(self, kind, opt, extra=(), start_s=10):
        self.kind, self.port = kind, free_port()
        argv = server_argv(kind, opt, self.port, extra)
        self.proc = spawn_on_server_core(argv)
        Server.live.append(self)
        deadline = time.monotonic() + start_s
        while not ping(self.port, 0.5):
            if self.proc.poll() is not None:
                raise BenchError("%s exited with %s at start (%s)" % (kind, self.proc.returncode,
                                                                       " ".join(argv)))
            if time.monotonic() > deadline:
                raise BenchError("%s did not answer PING within %d s" % (kind, start_s))
            time.sleep(0.01)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self in Server.live:
            Server.live.remove(self)

    @staticmethod
    def stop_all():
        for s in list(Server.live):
            s.stop()


def run(argv, timeout, what, core=LOAD_CORE, **kw):
    """Run a load generator pinned to the load core; its stdout, or BenchError."""
    try:
        out = subprocess.run(["taskset", "-c", str(core)] + argv, capture_output=True,
                             text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise BenchError("%s timed out after %d s" % (what, timeout))
    if out.returncode != 0:
        raise BenchError("%s failed (exit %d): %s" % (what, out.returncode,
                                                       (out.stderr or out.stdout)[-500:]))
    return out.stdout


def cli(port, *args):
    out = subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True,
                         text=True, timeout=30)
    if out.returncode != 0 or out.stdout.startswith("ERR") or out.stdout.startswith("(error)"):
        raise BenchError("redis-cli %s: %s%s" % (" ".join(args[:2]), out.stdout, out.stderr))
    return out.stdout


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime + stime


def proc_status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise BenchError("no %s in /proc/%d/status" % (field, pid))


def info_field(port, field):
    m = re.search(r"^%s:(\d+)" % field, cli(port, "INFO", "memory"), re.M)
    if not m:
        raise BenchError("INFO memory has no %s" % field)
    return int(m.group(1))


# ---- results ----

class Results:
    """Rows of (section, figure, latchd, redis, unit); ratio = latchd/redis."""

    def __init__(self):
        self.rows = []
        self.values = {}

    def add(self, section, figure, latchd, redis, unit):
        self.rows.append((section, figure, latchd, redis, unit))
        self.values[figure] = (latchd, redis)
        print("  %-34s latchd %12s  redis %12s  %s" % (figure, fmt(latchd), fmt(redis), unit),
              file=sys.stderr)

    def get(self, figure):
        return self.values.get(figure, (None, None))


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def ratio(l, r):
    return l / r if l is not None and r else None


def fmt_ratio(v):
    if v is None:
        return "-"
    return "%.2f×" % v if v >= 0.1 else "%.2g×" % v


def pct(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p / 100.0))]


# ---- sections ----

def children_cpu_seconds():
    """CPU of every child waited for so far (run() waits for each)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measured_load(server, argv, opt, what):
    """(output, server µs CPU per request, load µs CPU per request) of the
    load generator argv run against server for opt.requests requests."""
    before, load_before = cpu_seconds(server.proc.pid), children_cpu_seconds()
    out = run(argv, 60 + opt.requests // 5000, what)
    cpu = cpu_seconds(server.proc.pid) - before
    load_cpu = children_cpu_seconds() - load_before
    return out, cpu * 1e6 / opt.requests, load_cpu * 1e6 / opt.requests


def run_redis_benchmark(server, args, pipeline, opt, fill=None, conn=None):
    """(rps, server µs CPU per request, redis-benchmark µs CPU per request);
    conn: how redis-benchmark reaches the server (default -p its port)."""
    cli(server.port, "FLUSHALL")
    if fill:
        fill(server.port)
    out, cpu, load_cpu = measured_load(
        server, ["redis-benchmark"] + (conn or ["-p", str(server.port)]) + ["-c", str(opt.clients), "-n",
                 str(opt.requests), "-P", str(pipeline), "-r", "1000000", "-q", "--csv"] + args,
        opt, "redis-benchmark %s -P%d on %s" % (args[:2], pipeline, server.kind))
    # the last line is the test asked for (LRANGE_* print their LPUSH fill first)
    m = (re.findall(r'^"[^"]*","([0-9.]+)"', out, re.M) or [None])[-1]
    if m is None:
        raise BenchError("redis-benchmark printed no result for %s on %s: %s"
                         % (args[:2], server.kind, out[-300:]))
    return float(m), cpu, load_cpu


def section_throughput(servers, opt, res):
    work, scripts = workloads()
    if opt.only:
        work = [w for w in work if re.search(opt.only, w[0])]
    for s in servers.values():
        for body in scripts:
            cli(s.port, "SCRIPT", "LOAD", body)
        cli(s.port, "FUNCTION", "LOAD", "REPLACE", FCALL_LIB)   # FLUSHALL keeps functions
    for name, args in work:
        for pipeline in (1, 16):
            got = {k: [] for k in KINDS}
            for _ in range(opt.rounds):
                for kind in KINDS:   # alternating A/B
                    got[kind].append(run_redis_benchmark(servers[kind], args, pipeline, opt,
                                                         FILLS.get(name)))
            med = {k: [statistics.median(r[i] for r in v) for i in range(3)]
                   for k, v in got.items()}
            res.add("throughput", "%s -P%d rps" % (name, pipeline), med["latchd"][0],
                    med["redis"][0], "requests/s")
            res.add("throughput", "%s -P%d CPU/req" % (name, pipeline), med["latchd"][1],
                    med["redis"][1], "µs server CPU")
            if pipeline == 1:
                res.add("throughput", "%s -P1 load CPU/req" % name, med["latchd"][2],
                        med["redis"][2], "µs redis-benchmark CPU")


TLS_WORKLOADS = ("EVALSHA lock", "GET")
# The same requests for build/bench_loadgen (redis-benchmark -t get's key)
TLS_LOADGEN_COMMANDS = {"GET": ["GET", "key:__rand_int__"],
                        "EVALSHA lock": ["evalsha", LOCK_SHA, "1", "lock:__rand_int__", "30000", "owner:1"]}


# The -P1 TLS rows again with latchd polling before it sleeps (its own
# busy-poll-usecs, off by default; README: "The TLS rows").
TLS_POLL_US = 50
TLS_POLLING = "latchd, busy-poll-usecs %d" % TLS_POLL_US


def tls_server(kind, opt, certs):
    """A server with a tls-port beside the plain one (for set-up); the kind
    TLS_POLLING is latchd with busy-poll-usecs."""
    port = free_port()
    extra = ["--busy-poll-usecs", str(TLS_POLL_US)] if kind == TLS_POLLING else []
    s = Server("latchd" if kind == TLS_POLLING else kind, opt, certs.server_args(port) + extra)
    s.tls_port = port
    return s


def tls_idle_rss(server, certs, n):
    """RSS growth per idle TLS connection, n of them (handshakes done)."""
    import ssl
    ctx = certs.context()
    time.sleep(0.2)
    rss0 = proc_status_kb(server.proc.pid, "VmRSS")
    socks = []
    try:
        for _ in range(n):
            raw = socket.create_connection(("127.0.0.1", server.tls_port), timeout=10)
            s = ctx.wrap_socket(raw)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")   # the server's side of the handshake ends with it
            if not s.recv(16).startswith(b"+PONG"):
                raise BenchError("no PONG over TLS from %s" % server.kind)
            socks.append(s)
        time.sleep(0.2)
        return (proc_status_kb(server.proc.pid, "VmRSS") - rss0) * 1024.0 / n
    finally:
        for s in socks:
            s.close()


def tls_handshakes(server, certs, seconds):
    """(new handshakes per second, server µs CPU per handshake): openssl
    s_time -new, one connection after another, with the client certificate."""
    before = cpu_seconds(server.proc.pid)
    out = run(["openssl", "s_time", "-connect", "127.0.0.1:%d" % server.tls_port, "-new", "-time",
               str(int(seconds)), "-cert", certs.crt("client"), "-key", certs.key("client"),
               "-CAfile", certs.crt("ca")], 60 + seconds, "openssl s_time on %s" % server.kind)
    cpu = cpu_seconds(server.proc.pid) - before
    m = re.search(r"^(\d+) connections in ([0-9.]+) real seconds", out, re.M)
    if not m or int(m.group(1)) == 0:
        raise BenchError("openssl s_time printed no count for %s: %s" % (server.kind, out[-300:]))
    n, secs = int(m.group(1)), float(m.group(2))
    return n / secs, cpu * 1e6 / n


def add_round_pairs(res, section, name, latchd_runs, redis_runs):
    """The rounds' rps ratios: a round's two runs are neighbours in time, so
    their ratio cancels the drift of a shared machine that moves both
    medians (rows "<name> rps ratio, rounds paired" and "<name> rounds
    latchd ahead")."""
    pairs = [a[0] / b[0] for a, b in zip(latchd_runs, redis_runs)]
    res.add(section, "%s rps ratio, rounds paired" % name, statistics.median(pairs), None,
            "median of the rounds' latchd/redis rps")
    res.add(section, "%s rounds latchd ahead" % name, sum(r >= 1.0 for r in pairs), None,
            "of %d rounds, in rps" % len(pairs))


def section_tls(opt, res):
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    from tls_util import Certs
    d = tempfile.mkdtemp(prefix="latchd-bench-tls-")
    try:
        certs = Certs(d)
        lock = vector(LOCK_SHA)
        work = [w for w in workloads()[0] if w[0] in TLS_WORKLOADS and (not opt.only or re.search(opt.only, w[0]))]
        for name, args in work:
            for pipeline in (16, 1):
                kinds = list(KINDS) + ([TLS_POLLING] if pipeline == 1 else [])
                got = {k: [] for k in kinds}
                lean = {k: [] for k in KINDS}
                for _ in range(opt.rounds):
                    for kind in kinds:
                        # a fresh server per run: a round does not inherit the
                        # heap and connections the runs before it left
                        s = tls_server(kind, opt, certs)
                        try:
                            cli(s.port, "SCRIPT", "LOAD", lock)
                            conn = ["-p", str(s.tls_port)] + certs.cli_args()
                            got[kind].append(run_redis_benchmark(s, args, pipeline, opt, conn=conn))
                            if kind in KINDS:
                                lean[kind].append(run_loadgen(s, TLS_LOADGEN_COMMANDS[name], pipeline, opt,
                                                              conn=conn))
                        finally:
                            Server.stop_all()
                med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in got.items()}
                lmed = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in lean.items()}
                res.add("tls", "TLS %s -P%d (bench_loadgen) rps" % (name, pipeline), lmed["latchd"][0],
                        lmed["redis"][0], "requests/s, load from tests/bench/loadgen.c")
                add_round_pairs(res, "tls", "TLS %s -P%d (bench_loadgen)" % (name, pipeline), lean["latchd"],
                                lean["redis"])
                res.add("tls", "TLS %s -P%d (bench_loadgen) CPU/req" % (name, pipeline), lmed["latchd"][1],
                        lmed["redis"][1], "µs server CPU")
                res.add("tls", "TLS %s -P%d (bench_loadgen) load CPU/req" % (name, pipeline), lmed["latchd"][2],
                        lmed["redis"][2], "µs bench_loadgen CPU")
                res.add("tls", "TLS %s -P%d rps" % (name, pipeline), med["latchd"][0], med["redis"][0],
                        "requests/s")
                add_round_pairs(res, "tls", "TLS %s -P%d" % (name, pipeline), got["latchd"], got["redis"])
                res.add("tls", "TLS %s -P%d CPU/req" % (name, pipeline), med["latchd"][1], med["redis"][1],
                        "µs server CPU")
                res.add("tls", "TLS %s -P%d load CPU/req" % (name, pipeline), med["latchd"][2], med["redis"][2],
                        "µs redis-benchmark CPU")
                if TLS_POLLING in med:
                    p = med[TLS_POLLING]
                    res.add("tls", "TLS %s -P1 %s rps" % (name, TLS_POLLING), p[0], med["redis"][0], "requests/s")
                    res.add("tls", "TLS %s -P1 %s CPU/req" % (name, TLS_POLLING), p[1], med["redis"][1],
                            "µs server CPU")
        idle, hs = {}, {}
        for kind in KINDS:   # fresh servers: a heap the throughput runs churned slows malloc
            for what in ("handshakes", "idle"):
                s = tls_server(kind, opt, certs)
                try:
                    if what == "idle":
                        idle[kind] = tls_idle_rss(s, certs, opt.tls_idle)
                    else:
                        hs[kind] = tls_handshakes(s, certs, opt.tls_seconds)
                finally:
                    Server.stop_all()
        res.add("tls", "TLS new handshakes/s", hs["latchd"][0], hs["redis"][0], "handshakes/s (openssl s_time)")
        res.add("tls", "TLS server CPU per handshake", hs["latchd"][1], hs["redis"][1], "µs server CPU")
        res.add("tls", "RSS per idle TLS connection (%d)" % opt.tls_idle, idle["latchd"], idle["redis"], "bytes")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def parse_kv(line, prefix):
    if not line.startswith(prefix + " "):
        raise BenchError("unexpected output: %r" % line[:200])
    return {k: float(v) if re.match(r"^-?[0-9.]+$", v) else v
            for k, v in (kv.split("=", 1) for kv in line.split()[1:])}


def tool_rounds(servers, opt, name, args, seconds, fields, sound):
    """Run build/bench_<name> on each server, opt.rounds alternating rounds;
    the median of each field of its last line ("<name> k=v ...")."""
    tool = os.path.join(opt.build, "bench_" + name)
    if not os.access(tool, os.X_OK):
        raise BenchError("%s not built (cmake -DLATCHD_BENCH=ON)" % tool)
    got = {k: [] for k in KINDS}
    for _ in range(opt.rounds):
        for kind in KINDS:
            s = servers[kind]
            cli(s.port, "FLUSHALL")
            out = run([tool, "--port", str(s.port)] + args + ["--duration", str(seconds), "--warmup", "1"],
                      seconds + 40, "%s on %s" % (name, kind))
            kv = parse_kv(out.strip().splitlines()[-1], name)
            if not sound(kv):
                raise BenchError("%s on %s measured nothing sound: %s" % (name, kind, out.strip()))
            got[kind].append(kv)
    return {k: {f: statistics.median(r[f] for r in v) for f in fields} for k, v in got.items()}


def section_handoff(servers, opt, res):
    med = tool_rounds(servers, opt, "handoff",
                      ["--locks", str(opt.handoff_locks), "--clients", str(opt.handoff_clients),
                       "--hold-ms", opt.handoff_hold, "--idle-ms", opt.handoff_idle],
                      opt.handoff_seconds, ("acq_per_s", "p50_us", "p99_us", "p999_us"),
                      lambda kv: kv["handoffs"] > 0 and kv["unmatched"] == 0)
    label = "handoff K=%d N=%d" % (opt.handoff_locks, opt.handoff_clients)
    res.add("handoff", label + " acquisitions/s", med["latchd"]["acq_per_s"],
            med["redis"]["acq_per_s"], "acquisitions/s")
    for p in ("p50", "p99", "p999"):
        res.add("handoff", "%s latency %s" % (label, p), med["latchd"][p + "_us"],
                med["redis"][p + "_us"], "µs")
    return label


def section_queue_handoff(servers, opt, res):
    med = tool_rounds(servers, opt, "queue",
                      ["--consumers", str(opt.queue_consumers), "--producers", str(opt.queue_producers),
                       "--queues", str(opt.queue_queues)],
                      opt.queue_seconds, ("msgs_per_s", "p50_us", "p99_us", "p999_us"),
                      lambda kv: kv["messages"] > 0)
    label = "queue N=%d P=%d K=%d" % (opt.queue_consumers, opt.queue_producers, opt.queue_queues)
    res.add("queue", label + " messages/s", med["latchd"]["msgs_per_s"], med["redis"]["msgs_per_s"],
            "messages/s")
    for p in ("p50", "p99", "p999"):
        res.add("queue", "%s handoff %s" % (label, p), med["latchd"][p + "_us"],
                med["redis"][p + "_us"], "µs")
    return label


def blocked_clients(port):
    m = re.search(r"^blocked_clients:(\d+)", cli(port, "INFO", "clients"), re.M)
    return int(m.group(1)) if m else -1


def section_queue_memory(opt, res):
    """n clients parked in BLPOP on n distinct keys, on a fresh server."""
    n = opt.queue_blocked
    want = n + 64   # each side: the clients' sockets (the servers raise theirs for maxclients)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(want, soft), hard), hard))
        except (ValueError, OSError):
            pass
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < want:
            raise BenchError("need %d file descriptors for %d blocked clients (ulimit -Hn is %d)"
                             % (want, n, hard))
    per = {}
    for kind in KINDS:
        s = Server(kind, opt, ["--maxclients", str(want)])
        socks = []
        try:
            time.sleep(0.2)
            rss0, used0 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            for i in range(n):
                c = socket.create_connection(("127.0.0.1", s.port))
                c.sendall(b"*3\r\n$5\r\nBLPOP\r\n$%d\r\nblk:%d\r\n$1\r\n0\r\n" % (len(b"blk:%d" % i), i))
                socks.append(c)
            deadline = time.monotonic() + 60
            while blocked_clients(s.port) != n:
                if time.monotonic() > deadline:
                    raise BenchError("%s: %d of %d clients blocked" % (kind, blocked_clients(s.port), n))
                time.sleep(0.05)
            time.sleep(0.2)
            rss1, used1 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            per[kind] = ((rss1 - rss0) * 1024.0 / n, (used1 - used0) / float(n))
        finally:
            for c in socks:
                c.close()
            s.stop()
    label = "%dk clients blocked on %dk keys" % (n // 1000, n // 1000)
    res.add("queue", "RSS per blocked client (%s)" % label, per["latchd"][0], per["redis"][0], "bytes")
    res.add("queue", "used_memory per blocked client (%s)" % label, per["latchd"][1], per["redis"][1],
            "bytes")
    return label


def lock_load_stream(n, chunk=20000):
    """RESP for n EVALSHA lock calls holding lock:resource:<i> for 1 h, with a
    distinct 36-char UUID field per lock (Redisson's "<uuid>:<thread>")."""
    for start in range(0, n, chunk):
        parts = []
        for i in range(start, min(n, start + chunk)):
            key = b"lock:resource:%d" % i
            field = b"%08x-%04x-4%03x-a%03x-%012x:%d" % (
                i * 2654435761 & 0xffffffff, i & 0xffff, i >> 16 & 0xfff, i & 0xfff,
                i * 11400714819323198485 & 0xffffffffffff, 1 + i % 64)
            parts.append(b"*6\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n1\r\n$%d\r\n%s\r\n"
                         b"$7\r\n3600000\r\n$%d\r\n%s\r\n"
                         % (LOCK_SHA.encode(), len(key), key, len(field), field))
        yield b"".join(parts)


def pipe_load(port, stream, n, what):
    """Send stream's RESP chunks through redis-cli --pipe; n replies, none an error."""
    p = subprocess.Popen(["taskset", "-c", str(LOAD_CORE), "redis-cli", "-p", str(port), "--pipe"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for chunk in stream:
            p.stdin.write(chunk)
        out = p.communicate(timeout=600)[0].decode(errors="replace")
    except (subprocess.TimeoutExpired, BrokenPipeError):
        p.kill()
        p.wait()
        raise BenchError("redis-cli --pipe did not finish loading %s" % what)
    if not re.search(r"errors: 0, replies: %d\b" % n, out):
        raise BenchError("loading %s: %s" % (what, out[-300:]))


def load_locks(port, n):
    pipe_load(port, lock_load_stream(n), n, "%d locks" % n)


def resp_command(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


# (label, number of units measured, RESP stream, replies): a unit is one
# member of a big set or one small set.
SET_LOADS = (
    ("1M-member set of integers, per member", 1000000,
     lambda: (b"".join(resp_command(b"SADD", b"ints", *[b"%d" % (i * 7919 % 1000003)
                                                         for i in range(j, j + 1000)])
                       for j in range(c, c + 100000, 1000)) for c in range(0, 1000000, 100000)), 1000),
    ("1M-member set of 16-byte strings, per member", 1000000,
     lambda: (b"".join(resp_command(b"SADD", b"strs", *[b"member:%09d" % i for i in range(j, j + 1000)])
                       for j in range(c, c + 100000, 1000)) for c in range(0, 1000000, 100000)), 1000),
    ("100k sets of 8 integers, per set", 100000,
     lambda: (b"".join(resp_command(b"SADD", b"small:%d" % k, *[b"%d" % (k + m * 1000) for m in range(8)])
                       for k in range(c, c + 10000)) for c in range(0, 100000, 10000)), 100000),
)


def load_growth(opt, stream, replies, units, what):
    """Per kind, (RSS, used_memory) growth per unit while a fresh server
    takes stream() (replies replies) through redis-cli --pipe."""
    per = {}
    for kind in KINDS:
        s = Server(kind, opt)
        try:
            time.sleep(0.2)
            rss0, used0 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            pipe_load(s.port, stream(), replies, what)
            time.sleep(0.2)
            rss1, used1 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            per[kind] = ((rss1 - rss0) * 1024.0 / units, (used1 - used0) / float(units))
        finally:
            s.stop()
    return per


def section_sets(opt, res):
    for label, units, stream, replies in SET_LOADS:
        per = load_growth(opt, stream, replies, units, label)
        res.add("sets", "RSS, %s" % label, per["latchd"][0], per["redis"][0], "bytes")
        res.add("sets", "used_memory, %s" % label, per["latchd"][1], per["redis"][1], "bytes")


# ---- streams (issue 19) ----

def stream_fill_stream(n, key=b"s"):
    """XADD key <i>-1 f1 v f2 <i> for i in 1..n, in RESP chunks."""
    for c in range(0, n, 20000):
        yield b"".join(resp_command(b"XADD", key, b"%d-1" % i, b"f1", b"v", b"f2", b"%d" % i)
                       for i in range(c + 1, min(n, c + 20000) + 1))


def stream_consume_stream(n, batch=10):
    """XREADGROUP GROUP g c COUNT batch STREAMS s >, then XACK of the very
    IDs it returns (known: the fill numbers them), until n entries are done."""
    for c in range(0, n, 20000):
        parts = []
        for j in range(c, min(n, c + 20000), batch):
            ids = [b"%d-1" % i for i in range(j + 1, min(n, j + batch) + 1)]
            parts.append(resp_command(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"%d" % batch,
                                      b"STREAMS", b"s", b">"))
            parts.append(resp_command(b"XACK", b"s", b"g", *ids))
        yield b"".join(parts)


def section_streams(servers, opt, res):
    """XREADGROUP + XACK consumer throughput on the shared servers."""
    n, batch = opt.stream_entries, 10
    got = {k: [] for k in KINDS}
    for _ in range(opt.rounds):
        for kind in KINDS:
            port = servers[kind].port
            cli(port, "FLUSHALL")
            pipe_load(port, stream_fill_stream(n), n, "%d stream entries" % n)
            cli(port, "XGROUP", "CREATE", "s", "g", "0")
            t0, cpu0 = time.monotonic(), cpu_seconds(servers[kind].proc.pid)
            pipe_load(port, stream_consume_stream(n, batch), 2 * ((n + batch - 1) // batch), "consumer")
            got[kind].append((n / (time.monotonic() - t0), (cpu_seconds(servers[kind].proc.pid) - cpu0) * 1e6 / n))
            if cli(port, "XPENDING", "s", "g").split()[0] != "0":
                raise BenchError("%s left entries pending" % kind)
    med = {k: [statistics.median(r[i] for r in v) for i in range(2)] for k, v in got.items()}
    label = "XREADGROUP COUNT %d + XACK, %dk entries" % (batch, n // 1000)
    res.add("streams", label + " entries/s", med["latchd"][0], med["redis"][0], "entries/s")
    res.add("streams", label + " CPU/entry", med["latchd"][1], med["redis"][1], "µs server CPU")


def section_stream_memory(opt, res):
    n = opt.stream_memory_entries
    per = load_growth(opt, lambda: stream_fill_stream(n), n, n, "%d stream entries" % n)
    label = "%dk-entry stream of 2 small fields, per entry" % (n // 1000)
    res.add("streams", "RSS, %s" % label, per["latchd"][0], per["redis"][0], "bytes")
    res.add("streams", "used_memory, %s" % label, per["latchd"][1], per["redis"][1], "bytes")


def section_memory(opt, res):
    per = {}
    for kind in KINDS:
        s = Server(kind, opt)
        try:
            cli(s.port, "SCRIPT", "LOAD", vector(LOCK_SHA))
            time.sleep(0.2)
            rss0, used0 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            load_locks(s.port, opt.memory_locks)
            held = int(cli(s.port, "DBSIZE"))
            if held != opt.memory_locks:
                raise BenchError("%s holds %d locks, want %d" % (kind, held, opt.memory_locks))
            time.sleep(0.2)
            rss1, used1 = proc_status_kb(s.proc.pid, "VmRSS"), info_field(s.port, "used_memory")
            per[kind] = ((rss1 - rss0) * 1024.0 / held, (used1 - used0) / float(held))
        finally:
            s.stop()
    label = "%dk held locks" % (opt.memory_locks // 1000)
    res.add("memory", "RSS per held lock (%s)" % label, per["latchd"][0], per["redis"][0], "bytes")
    res.add("memory", "used_memory per held lock (%s)" % label, per["latchd"][1],
            per["redis"][1], "bytes")


def bgsave(port, pid):
    """Seconds from BGSAVE to its end, the most the parent's RSS grew (kB)
    meanwhile, sampled every 10 ms, and that peak RSS (kB)."""
    rss0 = peak = proc_status_kb(pid, "VmRSS")
    t0 = time.monotonic()
    if "started" not in cli(port, "BGSAVE"):
        raise BenchError("BGSAVE did not start")
    while "rdb_bgsave_in_progress:1" in cli(port, "INFO", "persistence"):
        peak = max(peak, proc_status_kb(pid, "VmRSS"))
        time.sleep(0.01)
    took = time.monotonic() - t0
    if "rdb_last_bgsave_status:ok" not in cli(port, "INFO", "persistence"):
        raise BenchError("BGSAVE failed")
    return took, peak - rss0, peak


def load_dump(kind, opt, d, n):
    """Wall and CPU seconds a fresh server takes to load d's dump.rdb of n
    keys (it answers PING once loaded)."""
    t0 = time.monotonic()
    s = Server(kind, opt, ["--dir", d], start_s=300)
    try:
        wall, cpu = time.monotonic() - t0, cpu_seconds(s.proc.pid)
        if int(cli(s.port, "DBSIZE")) != n:
            raise BenchError("%s loaded a different number of locks" % kind)
    finally:
        s.stop()
    return wall, cpu


def section_rdb(opt, res):
    """Each server saves its 1M locks; then the two files are loaded in
    alternating rounds (the machine's noise falls on both), medians."""
    n = opt.memory_locks
    per, dirs = {}, {}
    try:
        for kind in KINDS:
            d = dirs[kind] = tempfile.mkdtemp(prefix="bench-rdb-")
            s = Server(kind, opt, ["--dir", d])
            try:
                cli(s.port, "SCRIPT", "LOAD", vector(LOCK_SHA))
                load_locks(s.port, n)
                took, grew, peak = bgsave(s.port, s.proc.pid)
            finally:
                s.stop()
            size = os.path.getsize(os.path.join(d, "dump.rdb"))
            per[kind] = [took * 1000, grew * 1024.0 / n, size / float(n), peak / 1024.0]
        loads = {k: [] for k in KINDS}
        for _ in range(opt.rounds):
            for kind in KINDS:
                loads[kind].append(load_dump(kind, opt, dirs[kind], n))
        for kind in KINDS:
            per[kind] += [statistics.median(w for w, _ in loads[kind]) * 1000,
                          statistics.median(c for _, c in loads[kind]) * 1000]
    finally:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)
    label = "%dk held locks" % (n // 1000)
    for i, (fig, unit) in enumerate((("BGSAVE time", "ms"), ("parent RSS growth during BGSAVE per lock", "bytes"),
                                     ("dump file size per lock", "bytes"), ("parent peak RSS during BGSAVE", "MB"),
                                     ("start-up loading the file", "ms"),
                                     ("start-up loading the file, server CPU", "ms"))):
        res.add("rdb", "%s (%s)" % (fig, label), per["latchd"][i], per["redis"][i], unit)
    return label


AOF_WORKLOADS = [("SET", ["-t", "set"]),
                 ("EVALSHA lock", ["evalsha", LOCK_SHA, "1", "lock:__rand_int__", "30000", "owner:1"])]
# The same requests for build/bench_loadgen (redis-benchmark -t set's key and value)
LOADGEN_COMMANDS = {"SET": ["SET", "key:__rand_int__", "xxx"], "EVALSHA lock": AOF_WORKLOADS[1][1]}


def run_loadgen(server, command, pipeline, opt, conn=None):
    """(rps, server µs CPU per request, load µs CPU per request) from
    tests/bench/loadgen.c, the same shape of load as redis-benchmark's
    (-c clients, -P requests per batch, -r 1000000 keys) at less CPU per
    request, for runs where redis-benchmark's own core is the limit; conn:
    how it reaches the server (default -p its port; redis-benchmark's TLS
    flags work too)."""
    cli(server.port, "FLUSHALL")
    out, cpu, load_cpu = measured_load(
        server, [os.path.join(opt.build, "bench_loadgen")] + (conn or ["-p", str(server.port)]) +
        ["-c", str(opt.clients), "-n", str(opt.requests), "-P", str(pipeline), "-r", "1000000", "--"] + command,
        opt, "bench_loadgen %s -P%d on %s" % (command[0], pipeline, server.kind))
    m = re.search(r"^rps ([0-9.]+) errors 0$", out, re.M)
    if m is None:
        raise BenchError("bench_loadgen printed no rate for %s on %s: %s" % (command[0], server.kind, out[-300:]))
    return float(m.group(1)), cpu, load_cpu


def section_aof(opt, res):
    """Both servers with the same AOF settings, a fresh directory per run;
    everysec is also set beside latchd without persistence, with Redis's
    default automatic rewrites (the lock's 1M-request run makes ~170 MB of
    AOF: two rewrites, whose child shares the server's core), with the
    child on the other core (aof_rewrite_cpulist; the load generator's
    here) and without rewrites (the logging's own cost), and for scale
    redis-server's own everysec beside redis-server without persistence."""
    runs = [("always", 16), ("always", 1), ("everysec", 16)]
    for name, args in AOF_WORKLOADS:
        for fsync, pipeline in runs:
            kinds = [(k, ["--appendonly", "yes", "--appendfsync", fsync]) for k in KINDS]
            if fsync == "everysec":
                kinds.append(("latchd-norewrite", ["--appendonly", "yes", "--appendfsync", fsync,
                                                   "--auto-aof-rewrite-percentage", "0"]))
                kinds.append(("latchd-rewritecore", ["--appendonly", "yes", "--appendfsync", fsync,
                                                     "--aof_rewrite_cpulist", str(LOAD_CORE)]))
                kinds.append(("latchd-nopersist", []))
                kinds.append(("redis-nopersist", []))   # for scale: what everysec costs redis-server
            got = {k: [] for k, _ in kinds}
            lean = {k: [] for k, _ in kinds}
            # always: an fsync per loop iteration, a few thousand requests/s at
            # -P1. everysec runs the full count: a lock's record is ~170
            # bytes, so 1M requests make the AOF pass Redis's 64 MB rewrite
            # threshold and the rewrites it brings are part of the figure
            sized = copy.copy(opt)
            if fsync == "always":
                sized.requests = min(opt.requests, 20000 if pipeline == 1 else 200000)
            for _ in range(opt.rounds):
                for kind, extra in kinds:
                    d = tempfile.mkdtemp(prefix="bench-aof-")
                    try:
                        s = Server(kind.split("-")[0], opt, ["--dir", d] + extra)
                        try:
                            cli(s.port, "SCRIPT", "LOAD", vector(LOCK_SHA))
                            got[kind].append(run_redis_benchmark(s, args, pipeline, sized)[0])
                            if fsync == "always":
                                lean[kind].append(run_loadgen(s, LOADGEN_COMMANDS[name], pipeline, sized)[0])
                        finally:
                            s.stop()
                    finally:
                        shutil.rmtree(d, ignore_errors=True)
            med = {k: statistics.median(v) for k, v in got.items()}
            res.add("aof", "%s -P%d appendfsync %s rps" % (name, pipeline, fsync), med["latchd"],
                    med["redis"], "requests/s")
            if fsync == "always":
                res.add("aof", "%s -P%d appendfsync always rps (bench_loadgen)" % (name, pipeline),
                        statistics.median(lean["latchd"]), statistics.median(lean["redis"]),
                        "requests/s, load from tests/bench/loadgen.c")
            if fsync == "everysec":
                res.add("aof", "%s -P%d everysec vs no persistence rps" % (name, pipeline), med["latchd"],
                        med["latchd-nopersist"], "requests/s (redis column: latchd without AOF)")
                res.add("aof", "%s -P%d everysec, no auto rewrite, vs no persistence rps" % (name, pipeline),
                        med["latchd-norewrite"], med["latchd-nopersist"],
                        "requests/s (redis column: latchd without AOF; auto-aof-rewrite-percentage 0)")
                res.add("aof", "%s -P%d everysec, rewrite child off the server's core, vs no persistence rps"
                        % (name, pipeline), med["latchd-rewritecore"], med["latchd-nopersist"],
                        "requests/s (redis column: latchd without AOF; aof_rewrite_cpulist: the load's core)")
                res.add("aof", "%s -P%d redis-server everysec vs redis-server without persistence rps"
                        % (name, pipeline), med["redis"], med["redis-nopersist"],
                        "requests/s (latchd column: redis-server with everysec; redis column: without AOF)")


def pinned_to_server_core():
    """A context in which started processes land on the server core."""
    import contextlib

    @contextlib.contextmanager
    def pin():
        mine = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {SERVER_CORE})
        try:
            yield
        finally:
            os.sched_setaffinity(0, mine)
    return pin


def section_raft(opt, res):
    """Issue 22's figures; nothing (with a note) when latchd has no Raft."""
    import raft_bench
    why = raft_bench.ha_cluster.raft_support(opt.latchd)
    if why:
        print("bench: raft section skipped: %s" % why, file=sys.stderr)
        return None
    lock, unlock = vector(LOCK_SHA), vector(UNLOCK_SHA)
    pin = pinned_to_server_core()
    sized = copy.copy(opt)
    sized.requests = min(opt.requests, 200000)
    label = "3-node Raft"
    with pin():
        cluster = raft_bench.ha_cluster.LatchdRaftCluster(binary=opt.latchd, proxied=False,
                                                          election_ms=opt.raft_election_ms)
    d = tempfile.mkdtemp(prefix="bench-raft-")
    group = []
    try:
        with pin():
            cluster.boot()
        leader = cluster.nodes[cluster.wait_leader(30)]
        single = Server("latchd", opt, ["--dir", d, "--appendonly", "yes", "--appendfsync", "always"])
        group = [Server("redis", opt, ["--dir", d]) for _ in range(3)]
        for r in group[1:]:
            cli(r.port, "REPLICAOF", "127.0.0.1", str(group[0].port))
        deadline = time.monotonic() + 10
        while not re.search(r"^connected_slaves:2", cli(group[0].port, "INFO", "replication"), re.M):
            if time.monotonic() > deadline:
                raise BenchError("redis replicas did not connect")
            time.sleep(0.05)
        ports = {"raft": leader.port, "single": single.port, "redis": group[0].port}
        for port in ports.values():
            cli(port, "SCRIPT", "LOAD", lock)
            cli(port, "SCRIPT", "LOAD", unlock)

        class Target:   # what run_redis_benchmark needs of a server
            def __init__(self, kind, port, pid):
                self.kind, self.port, self.proc = kind, port, type("P", (), {"pid": pid})

        lock_rps = {}
        for name, port, pid in (("raft", leader.port, leader.proc.pid),
                                ("single", single.port, single.proc.pid)):
            t = Target(name, port, pid)
            lock_rps[name] = statistics.median(run_redis_benchmark(t, LOCK_ARGS, 16, sized)[0]
                                               for _ in range(opt.rounds))
        res.add("raft", "EVALSHA lock -P16 c=50 (redis-benchmark)", lock_rps["raft"], lock_rps["single"],
                "acquires/s (latchd: %s; redis column: one latchd, appendfsync always)" % label)
        rate = {}
        for name, port in ports.items():
            rate[name] = raft_bench.pipelined_rate(port, LOCK_SHA, UNLOCK_SHA, opt.clients, 16,
                                                   opt.raft_seconds, wait=name == "redis")
        res.add("raft", "lock+unlock 16 in flight c=50 (Python load)", rate["raft"], rate["redis"],
                "pairs/s (redis column: redis-server + 2 replicas, WAIT 1 0 after each script)")
        res.add("raft", "lock+unlock 16 in flight c=50, one node (Python load)", rate["single"],
                rate["redis"], "pairs/s (latchd: one node, appendfsync always)")
        lat = {name: raft_bench.sequential_latency(port, LOCK_SHA, UNLOCK_SHA, opt.raft_sequential,
                                                   wait=name == "redis")
               for name, port in ports.items()}
        for p in (50, 99):
            res.add("raft", "lock+unlock -P1 c=1 p%d" % p, pct(lat["raft"], p), pct(lat["redis"], p),
                    "µs (latchd: %s; redis: + 2 replicas, WAIT 1 0)" % label)
            res.add("raft", "lock+unlock -P1 c=1 p%d, one node" % p, pct(lat["single"], p),
                    pct(lat["redis"], p), "µs (latchd: one node, appendfsync always)")
        single.stop()
        times = sorted(raft_bench.failover_times(cluster, LOCK_SHA, lock.encode(), opt.raft_kills, pin))
        res.add("raft", "failover: kill -9 leader -> lock (%d kills) p50" % len(times),
                statistics.median(times), None, "ms (election timeout %d ms)" % opt.raft_election_ms)
        res.add("raft", "failover: kill -9 leader -> lock (%d kills) max" % len(times), times[-1], None,
                "ms (election timeout %d ms)" % opt.raft_election_ms)
    except RuntimeError as e:
        raise BenchError("raft: %s" % e)
    finally:
        for r in group:
            r.stop()
        cluster.stop()
        shutil.rmtree(d, ignore_errors=True)
    return label


LOCK_ARGS = ["evalsha", LOCK_SHA, "1", "lock:__rand_int__", "30000", "owner:1"]


def section_expiry(servers, opt, res):
    got = {}
    for kind in KINDS:
        out = run([sys.executable, os.path.join(HERE, "expired_lateness.py"), "--port",
                   str(servers[kind].port), "--keys", str(opt.expiry_keys), "--spread-ms", "2000"],
                  120, "expired_lateness.py on %s" % kind)
        m = re.search(r"events (\d+)/(\d+)\s+lateness ms: p50 (\S+)\s+p90 (\S+)\s+p99 (\S+)\s+"
                      r"max (\S+)", out)
        if not m:
            raise BenchError("expired_lateness.py on %s printed: %s" % (kind, out[-300:]))
        if int(m.group(1)) != int(m.group(2)):
            raise BenchError("%s reported %s of %s expired events" % (kind, m.group(1), m.group(2)))
        got[kind] = [float(m.group(i)) for i in (3, 5, 6)]
    label = "expired-event lateness (%dk keys / 2 s)" % (opt.expiry_keys // 1000)
    for i, p in enumerate(("p50", "p99", "max")):
        res.add("expiry", "%s %s" % (label, p), got["latchd"][i], got["redis"][i], "ms")
    return label


def startup_ms(kind, opt):
    """exec -> first +PONG, polling from the load core."""
    port = free_port()
    argv = server_argv(kind, opt, port)
    t0 = time.perf_counter()
    proc = spawn_on_server_core(argv)
    try:
        while True:
            if ping(port, 1.0):
                return (time.perf_counter() - t0) * 1000.0
            if proc.poll() is not None:
                raise BenchError("%s exited with %s at start" % (kind, proc.returncode))
            if time.perf_counter() - t0 > 10:
                raise BenchError("%s did not answer PING within 10 s" % kind)
    finally:
        proc.kill()
        proc.wait()


def section_startup(opt, res):
    got = {k: [] for k in KINDS}
    for _ in range(opt.startup_runs):
        for kind in KINDS:
            got[kind].append(startup_ms(kind, opt))
    res.add("startup", "start to first PING (median of %d)" % opt.startup_runs,
            statistics.median(got["latchd"]), statistics.median(got["redis"]), "ms")


def callgrind_ir_per_op(tool, size, ops):
    out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                          "--callgrind-out-file=/dev/null", tool, "--sizes", str(size), "--ops",
                          str(ops)], capture_output=True, text=True, timeout=600)
    m = re.search(r"Collected : (\d+)", out.stderr)
    d = re.search(r"ops=(\d+)", out.stdout)
    if out.returncode != 0 or not m or not d:
        raise BenchError("callgrind of %s: %s" % (tool, out.stderr[-300:]))
    if int(m.group(1)) == 0:
        raise BenchError("%s was built without valgrind/callgrind.h: re-run cmake" % tool)
    return int(m.group(1)) / (2.0 * int(d.group(1)))   # one cancel + one insert per op


def section_wheel(opt, res):
    tool = os.path.join(opt.build, "bench_wheel")
    if not os.access(tool, os.X_OK):
        raise BenchError("%s not built (cmake -DLATCHD_BENCH=ON)" % tool)
    out = run([tool, "--sizes", ",".join(str(n) for n in opt.wheel_sizes), "--ops",
               str(opt.wheel_ops)], 600, "bench_wheel")
    rows = {}
    for line in out.splitlines():
        kv = parse_kv(line, "wheel")
        rows[int(kv["size"])] = kv
    use_cg = opt.callgrind and shutil.which("valgrind")
    for n in opt.wheel_sizes:
        kv = rows[n]
        res.add("wheel", "wheel insert at %.0e timers" % n, kv["insert_ns"], None, "ns/op")
        res.add("wheel", "wheel cancel at %.0e timers" % n, kv["cancel_ns"], None, "ns/op")
        res.add("wheel", "wheel fire at %.0e timers" % n, kv["fire_ns"], None, "ns/timer")
        if use_cg:
            res.add("wheel", "wheel insert+cancel at %.0e timers, instructions" % n,
                    callgrind_ir_per_op(tool, n, 200000), None, "Ir/op (callgrind)")
    return bool(use_cg)


# ---- report ----

def target_rows(res, opt, labels):
    """(figure, measured text, target text, met) for the Targets table."""
    out = []

    def row(figure, measured, target, ok):
        out.append((figure, measured if measured is not None else "not measured", target,
                    "-" if ok is None else ("met" if ok else "**missed**")))

    def rps(name):
        return ratio(*res.get("%s rps" % name))

    def cpu(name):
        return ratio(*res.get("%s CPU/req" % name))

    def x(v):
        return None if v is None else "%.2f×" % v

    r = rps("EVALSHA lock -P16")
    row("EVALSHA lock script -P16", x(r), "≥ 3.5× redis-server", None if r is None else r >= 3.5)
    r, c = rps("EVAL lock text -P16"), cpu("EVAL lock text -P16")
    row("EVAL full text -P16", None if r is None else "%.2f× rps, %.2f× CPU/req" % (r, c),
        "≥ 3× throughput and ≤ 0.35× CPU/req", None if r is None else r >= 3 and c <= 0.35)
    p1 = [(ratio(l, rr), f) for f, (l, rr) in res.values.items()
          if f.endswith("-P1 rps") and rr and not f.startswith("TLS ")]
    if p1:
        worst = min(p1)
        rates, loads = res.get(worst[1]), res.get(worst[1][:-4] + " load CPU/req")
        busy = "" if loads[0] is None else "; redis-benchmark busy %.0f%% / %.0f%% of its core" % (
            100 * rates[0] * loads[0] / 1e6, 100 * rates[1] * loads[1] / 1e6)
        row("every workload at -P1 c=50 (worst)", "%.2f× (%s; %d workloads run%s)"
            % (worst[0], worst[1][:-4], len(p1), busy), "≥ 0.95×", worst[0] >= 0.95)
    else:
        row("every workload at -P1 c=50 (worst)", None, "≥ 0.95×", None)
    c = cpu("EVALSHA lock -P1")
    row("server CPU/req, EVALSHA lock -P1", x(c), "≤ 0.8×", None if c is None else c <= 0.8)
    c = cpu("EVALSHA lock -P16")
    row("server CPU/req, EVALSHA lock -P16", x(c), "≤ 0.3×", None if c is None else c <= 0.3)
    g, s = cpu("GET -P16"), cpu("SET -P16")
    worst = max(v for v in (g, s) if v is not None) if (g or s) else None
    row("server CPU/req, GET/SET -P16 (worse)", x(worst), "≤ 1.0×",
        None if worst is None else worst <= 1.0)
    for p in (16, 1):
        got = [(rps("%s -P%d" % (t, p)), cpu("%s -P%d" % (t, p)), t) for t in
               (name.upper() for name in DEFAULT_TESTS)]
        got = [g for g in got if g[0] is not None]
        if got:
            wr, wc = min(got), max(got, key=lambda g: g[1])
            row("redis-benchmark default tests -P%d c=50 (worst)" % p,
                "%.2f× rps (%s), %.2f× CPU/req (%s); %d tests" % (wr[0], wr[2], wc[1], wc[2], len(got)),
                "≥ 1.0× rps and ≤ 1.0× CPU/req", wr[0] >= 1.0 and wc[1] <= 1.0)
        else:
            row("redis-benchmark default tests -P%d c=50 (worst)" % p, None,
                "≥ 1.0× rps and ≤ 1.0× CPU/req", None)
    r = rps("EVALSHA Lua-only -P16")
    row("Lua-path script -P16", x(r), "≥ 1.0×", None if r is None else r >= 1.0)
    for p in (16, 1):
        got = [(rps("%s -P%d" % (name, p)), name) for name, _ in GEO_WORKLOADS]
        got = [g for g in got if g[0] is not None]
        row("GEOADD/GEOSEARCH -P%d (worse)" % p, "%.2f× (%s)" % min(got) if got else None, "≥ 1.0×",
            min(got)[0] >= 1.0 if got else None)
    f = rps("FCALL -P16")
    row("FCALL -P16 (vs the EVALSHA Lua-path ratio)", None if f is None or r is None else
        "%.2f× (EVALSHA Lua-only %.2f×)" % (f, r), "FCALL ≥ 1.0× the EVALSHA Lua-path ratio",
        None if f is None or r is None else f >= r)
    l, rr = res.get("RSS per held lock (%dk held locks)" % (opt.memory_locks // 1000))
    row("RSS per held lock", None if l is None else "%.0f B (%.2f×)" % (l, l / rr),
        "≤ 0.5× redis-server and ≤ 96 B", None if l is None else l / rr <= 0.5 and l <= 96)
    for label, _, _, _ in SET_LOADS:
        (lr, rr), (lu, ru) = res.get("RSS, %s" % label), res.get("used_memory, %s" % label)
        met = None if lr is None else lr <= rr and lu <= ru
        row("set memory, %s" % label, None if lr is None else
            "RSS %.1f B (%.2f×), used_memory %.1f B (%.2f×)" % (lr, lr / rr, lu, lu / ru),
            "≤ redis-server (RSS and used_memory)", met)
    rdb = labels.get("rdb", "?")
    figs = [res.get("%s (%s)" % (f, rdb)) for f in
            ("BGSAVE time", "parent peak RSS during BGSAVE", "dump file size per lock", "start-up loading the file")]
    done = [f for f in figs if f[0] is not None]
    row("dump file of held locks: BGSAVE time, parent peak RSS, file size, load time", None if not done else
        ", ".join("%.2f×" % (l / r) for l, r in done), "each ≤ redis-server",
        None if not done else all(l <= r for l, r in done))
    for name, _ in AOF_WORKLOADS:
        for p, want in ((16, 2.0), (1, 1.0)):
            for by in ("", " (bench_loadgen)"):
                l, rr = res.get("%s -P%d appendfsync always rps%s" % (name, p, by))
                row("AOF always: %s -P%d%s" % (name, p, by),
                    None if l is None else "%.2f× (%.0f vs %.0f)" % (l / rr, l, rr),
                    "≥ %.1f× redis-server" % want, None if l is None else l / rr >= want)
        for what, label in (("", ""), (", no auto rewrite,", ", no auto rewrite")):
            l, rr = res.get("%s -P16 everysec%s vs no persistence rps" % (name, what))
            row("AOF everysec%s: %s -P16 vs latchd without AOF" % (label, name),
                None if l is None else "%.2f×" % (l / rr), "≥ 0.90×", None if l is None else l / rr >= 0.9)
        l, rr = res.get("%s -P16 redis-server everysec vs redis-server without persistence rps" % name)
        row("for scale, redis-server's everysec: %s -P16 vs redis-server without AOF" % name,
            None if l is None else "%.2f×" % (l / rr), "-", None)
    l, rr = res.get("%s p99" % labels.get("expiry", "?"))
    row("expired-event lateness p99", None if l is None else "%.1f ms (redis %.1f ms)" % (l, rr),
        "≤ 2 ms", None if l is None else l <= 2)
    l, rr = res.get("%s latency p99" % labels.get("handoff", "?"))
    row("handoff p99", None if l is None else "%.0f µs (redis %.0f µs)" % (l, rr),
        "≤ redis-server", None if l is None else l <= rr)
    l, rr = res.get("%s messages/s" % labels.get("queue", "?"))
    row("queue messages/s (BLPOP consumers)", None if l is None else "%.2f× (%.0f vs %.0f)" % (l / rr, l, rr),
        "≥ 1.0× redis-server", None if l is None else l >= rr)
    l, rr = res.get("%s handoff p99" % labels.get("queue", "?"))
    row("queue handoff p99", None if l is None else "%.0f µs (redis %.0f µs)" % (l, rr),
        "≤ redis-server", None if l is None else l <= rr)
    l, rr = res.get("RSS per blocked client (%s)" % labels.get("queue_mem", "?"))
    row("memory per blocked client (RSS)", None if l is None else "%.0f B (redis %.0f B)" % (l, rr),
        "≤ redis-server", None if l is None else l <= rr)
    l, rr = res.get("start to first PING (median of %d)" % opt.startup_runs)
    row("start to first PING", None if l is None else "%.2f ms (redis %.2f ms)" % (l, rr),
        "≤ 3 ms", None if l is None else l <= 3)
    for name in ["TLS %s -P%d%s" % (w, p, by) for w in TLS_WORKLOADS for p in (16, 1)
                 for by in ("", " (bench_loadgen)")] + ["TLS %s -P1 %s" % (w, TLS_POLLING) for w in TLS_WORKLOADS]:
        r, c = rps(name), cpu(name)
        paired, ahead = res.get("%s rps ratio, rounds paired" % name)[0], res.get("%s rounds latchd ahead" % name)[0]
        also = "" if paired is None else " (rounds paired: median %.2f×, latchd ahead in %d of %d)" % (
            paired, ahead, opt.rounds)
        row(name + " c=%d" % opt.clients, None if r is None else "%.2f× rps, %.2f× CPU/req%s" % (r, c, also),
            "≥ 1.0× rps and ≤ 1.0× CPU/req", None if r is None else r >= 1.0 and c <= 1.0)
    l, rr = res.get("RSS per idle TLS connection (%d)" % opt.tls_idle)
    row("memory per idle TLS connection (RSS)", None if l is None else "%.0f B (redis %.0f B)" % (l, rr),
        "≤ redis-server", None if l is None else l <= rr)
    (l, rr), (lc, rc) = res.get("TLS new handshakes/s"), res.get("TLS server CPU per handshake")
    row("new TLS handshakes", None if l is None else "%.0f/s (redis %.0f/s), %.0f µs server CPU each (redis %.0f µs)"
        % (l, rr, lc, rc), "reported side by side", None)
    l, rr = res.get("EVALSHA lock -P16 c=50 (redis-benchmark)")
    row("3-node Raft: lock -P16 c=50", None if l is None else "%.0f/s (one node, appendfsync always: %.0f/s)"
        % (l, rr), "≥ 50k/s", None if l is None else l >= 50000)
    fo = [f for f in res.values if f.startswith("failover: kill -9 leader")]
    if fo:
        p50, mx = res.get(fo[0])[0], res.get(fo[-1])[0]
        row("3-node Raft: failover, kill -9 leader -> lock", "p50 %.0f ms, max %.0f ms (%s, election "
            "timeout %d ms)" % (p50, mx, fo[0].split("(")[1].split(")")[0], opt.raft_election_ms),
            "≤ 2 s", mx <= 2000)
    else:
        row("3-node Raft: failover, kill -9 leader -> lock", None, "≤ 2 s", None)
    key = "wheel insert+cancel at %.0e timers, instructions" if labels.get("wheel_cg") else None
    costs = []
    for n in opt.wheel_sizes:
        if key:
            costs.append(res.get(key % n)[0])
        else:
            i, c = res.get("wheel insert at %.0e timers" % n)[0], \
                res.get("wheel cancel at %.0e timers" % n)[0]
            costs.append(None if i is None else i + c)
    if costs and None not in costs:
        # ns at 1e7 timers are mostly cache misses on 240 MB of nodes; only
        # callgrind's instruction counts (full run) judge the algorithm.
        spread = max(costs) / min(costs)
        row("wheel cost per op (insert+cancel)", "%s: %s (max/min %.2f×)%s" % (
            "Ir" if key else "ns", " / ".join("%.1f" % v for v in costs), spread,
            "" if key else "; no verdict without callgrind"),
            "flat 1e3→1e7 (max/min ≤ 1.5×)", spread <= 1.5 if key else None)
    else:
        row("wheel cost per op (insert+cancel)", None, "flat 1e3→1e7", None)
    return out


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = m.group(1) if m else model
    except OSError:
        pass
    return "%s, %d cores, Linux %s" % (model, os.cpu_count() or 0, platform.release())


def chart(res, opt):
    """ratios.png: rps and CPU/req ratios per throughput workload."""
    pairs = []
    for f, (l, r) in res.values.items():
        if f.endswith(" rps"):
            name = f[:-4]
            pairs.append((name, ratio(l, r), ratio(*res.get(name + " CPU/req"))))
    if not pairs:
        return None
    if not shutil.which("gnuplot"):
        print("bench: gnuplot not installed (scripts/setup bench), no chart", file=sys.stderr)
        return None
    dat = os.path.join(opt.out, "ratios.dat")
    with open(dat, "w") as f:
        for name, r, c in pairs:
            f.write('"%s" %.4f %.4f\n' % (name, r or 0, c or 0))
    png = os.path.join(opt.out, "ratios.png")
    script = "\n".join([
        "set terminal pngcairo size 1400,600 font ',10' noenhanced",   # workload names hold underscores
        "set output '%s'" % png,
        "set title 'latchd / redis-server (higher rps ratio and lower CPU ratio are better)'",
        "set style data histogram", "set style histogram cluster gap 1",
        "set style fill solid 0.8 border -1", "set boxwidth 0.9",
        "set xtics rotate by -40 scale 0", "set grid ytics", "set yrange [0:*]",
        "set ylabel 'ratio latchd / redis'", "set key top left",
        "plot '%s' using 2:xtic(1) title 'throughput ratio', '' using 3 title 'server CPU/request "
        "ratio', 1 with lines lw 2 lc rgb 'black' title 'parity'" % dat, ""])
    out = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        print("bench: gnuplot failed: %s" % out.stderr[-300:], file=sys.stderr)
        return None
    return png


def report(res, opt, labels, started, argv):
    os.makedirs(opt.out, exist_ok=True)
    csv_path = os.path.join(opt.out, "results.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "figure", "latchd", "redis", "ratio", "unit"])
        for sec, fig, l, r, unit in res.rows:
            rt = ratio(l, r)
            w.writerow([sec, fig, "" if l is None else "%.4f" % l, "" if r is None else "%.4f" % r,
                        "" if rt is None else "%.4f" % rt, unit])
    png = chart(res, opt)
    lines = ["# latchd vs redis-server", "",
             "%s on %s. Command: `%s`. %d round(s), %d requests per redis-benchmark run, c=%d; "
             "servers on core %d, load on core %d; medians of alternating rounds."
             % (started.strftime("%Y-%m-%d %H:%M UTC"), machine(), " ".join(argv), opt.rounds,
                opt.requests, opt.clients, SERVER_CORE, LOAD_CORE), "",
             "| section | figure | latchd | redis-server | latchd / redis | unit |",
             "|---|---|---|---|---|---|"]
    for sec, fig, l, r, unit in res.rows:
        rt = ratio(l, r)
        lines.append("| %s | %s | %s | %s | %s | %s |" % (sec, fig, fmt(l), fmt(r), fmt_ratio(rt),
                                                          unit))
    lines += ["", "## Targets", "", "| figure | measured | target | |", "|---|---|---|---|"]
    for t in target_rows(res, opt, labels):
        lines.append("| %s | %s | %s | %s |" % t)
    if png:
        lines += ["", "![ratios](%s)" % os.path.basename(png)]
    lines += ["", "CSV: %s" % csv_path]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(opt.out, "report.md"), "w") as f:
        f.write(text)
    print(text)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a ~1 minute subset")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--only", help="regex of workload names to run (throughput and tls sections)")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma list of: " +
                    ", ".join(SECTIONS))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="where the tools are")
    ap.add_argument("--latchd", default=os.path.join(ROOT, "build", "latchd"))
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--handoff-locks", type=int, default=10)
    ap.add_argument("--handoff-clients", type=int, default=50)
    ap.add_argument("--handoff-hold", default="0-1", help="hold time range, ms")
    ap.add_argument("--handoff-idle", default="0-1", help="time between unlock and next lock, ms")
    ap.add_argument("--handoff-seconds", type=float, default=10)
    ap.add_argument("--memory-locks", type=int, default=1000000)
    ap.add_argument("--queue-consumers", type=int, default=50)
    ap.add_argument("--queue-producers", type=int, default=4)
    ap.add_argument("--queue-queues", type=int, default=10)
    ap.add_argument("--queue-seconds", type=float, default=10)
    ap.add_argument("--queue-blocked", type=int, default=10000)
    ap.add_argument("--expiry-keys", type=int, default=100000)
    ap.add_argument("--stream-entries", type=int, default=200000)
    ap.add_argument("--stream-memory-entries", type=int, default=1000000)
    ap.add_argument("--startup-runs", type=int, default=20)
    ap.add_argument("--wheel-ops", type=int, default=2000000)
    ap.add_argument("--no-callgrind", dest="callgrind", action="store_false")
    ap.add_argument("--tls-idle", type=int, default=1000, help="idle TLS connections to weigh")
    ap.add_argument("--tls-seconds", type=float, default=5, help="openssl s_time's run")
    ap.add_argument("--raft-kills", type=int, default=10, help="leader kills timed")
    ap.add_argument("--raft-election-ms", type=int, default=1000, help="raft-election-timeout")
    ap.add_argument("--raft-seconds", type=float, default=5, help="each Python-load run")
    ap.add_argument("--raft-sequential", type=int, default=1000, help="lock+unlock pairs timed at c=1")
    opt = ap.parse_args(argv)
    opt.wheel_sizes = [1000, 100000, 10000000]
    if opt.quick:
        opt.rounds, opt.requests, opt.handoff_seconds, opt.queue_seconds = 1, 100000, 3, 3
        opt.memory_locks, opt.expiry_keys, opt.wheel_ops, opt.callgrind = 200000, 100000, 500000, False
        opt.tls_idle, opt.tls_seconds = 500, 3
        opt.stream_entries, opt.stream_memory_entries = 50000, 200000
        opt.only = opt.only or QUICK_WORKLOADS
    opt.sections = [s.strip() for s in opt.sections.split(",") if s.strip()]
    bad = [s for s in opt.sections if s not in SECTIONS]
    if bad:
        ap.error("unknown section(s) %s" % ", ".join(bad))
    if os.cpu_count() < 2:
        ap.error("needs 2 cores: servers on core 0, load on core 1")
    for tool in (opt.latchd, opt.redis, "redis-cli", "redis-benchmark", "taskset") + \
            (("openssl",) if "tls" in opt.sections else ()):
        if not shutil.which(tool):
            ap.error("%s not found (scripts/bench builds latchd; scripts/setup bench installs "
                     "the rest)" % tool)
    return opt


def main(argv):
    opt = parse_args(argv)
    started = datetime.datetime.now(datetime.timezone.utc)
    os.sched_setaffinity(0, {LOAD_CORE})   # our own work stays off the server core
    signal.signal(signal.SIGTERM, lambda *a: sys.exit("bench: terminated"))
    res, labels = Results(), {}
    try:
        if {"throughput", "handoff", "expiry", "queue", "streams"} & set(opt.sections):
            servers = {k: Server(k, opt) for k in KINDS}
            if "throughput" in opt.sections:
                print("throughput (redis-benchmark)", file=sys.stderr)
                section_throughput(servers, opt, res)
            if "handoff" in opt.sections:
                print("lock handoff", file=sys.stderr)
                labels["handoff"] = section_handoff(servers, opt, res)
            if "expiry" in opt.sections:
                print("expiry lateness", file=sys.stderr)
                labels["expiry"] = section_expiry(servers, opt, res)
            if "queue" in opt.sections:
                print("producer/consumer queue (BLPOP)", file=sys.stderr)
                labels["queue"] = section_queue_handoff(servers, opt, res)
            if "streams" in opt.sections:
                if "throughput" not in opt.sections:   # XADD's rows, from the throughput table
                    only, opt.only = opt.only, r"^XADD$"
                    section_throughput(servers, opt, res)
                    opt.only = only
                print("stream consumer group", file=sys.stderr)
                section_streams(servers, opt, res)
            Server.stop_all()
        if "streams" in opt.sections:
            print("stream memory", file=sys.stderr)
            section_stream_memory(opt, res)
        if "queue" in opt.sections:
            print("blocked clients' memory", file=sys.stderr)
            labels["queue_mem"] = section_queue_memory(opt, res)
        if "memory" in opt.sections:
            print("memory", file=sys.stderr)
            section_memory(opt, res)
        if "sets" in opt.sections:
            print("set memory", file=sys.stderr)
            section_sets(opt, res)
        if "rdb" in opt.sections:
            print("dump file", file=sys.stderr)
            labels["rdb"] = section_rdb(opt, res)
        if "aof" in opt.sections:
            print("append-only file", file=sys.stderr)
            section_aof(opt, res)
        if "startup" in opt.sections:
            print("start-up", file=sys.stderr)
            section_startup(opt, res)
        if "wheel" in opt.sections:
            print("timing wheel", file=sys.stderr)
            labels["wheel_cg"] = section_wheel(opt, res)
        if "tls" in opt.sections:
            print("TLS", file=sys.stderr)
            section_tls(opt, res)
        if "raft" in opt.sections:
            print("replication on Raft", file=sys.stderr)
            labels["raft"] = section_raft(opt, res)
    except BenchError as e:
        failed = "bench: %s" % e
    else:
        failed = None
    finally:
        Server.stop_all()
    if res.rows:   # what was measured before a failure is still reported
        report(res, opt, labels, started, ["scripts/bench"] + argv)
    if failed:
        sys.exit(failed)


if __name__ == "__main__":
    main(sys.argv[1:])
