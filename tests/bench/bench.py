#!/usr/bin/env python3
"""bench.py - latchd against redis-server, side by side, as ratios.

Both servers run on this machine pinned to one core (taskset -c 0) and the
load generator on another (-c 1). Rounds alternate latchd / redis so drift
in a noisy machine hits both alike. For each workload it reports median
throughput (redis-benchmark's own figure) and median server CPU time per
request (utime+stime of the server process from /proc over the run,
divided by the requests sent), which is the figure redis-benchmark's own
ceiling does not hide at -P16. Writes CSV next to a markdown table.

    tests/bench/bench.py [--quick] [--rounds N] [--requests N] [--out DIR]
"""

import argparse
import csv
import os
import re
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "..", "shared", "protocol", "vectors")
LOCK_SHA = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
UNLOCK_SHA = "3ffe249c16dee540ac8ab32e39bd408626b9aff7"
LUA_ONLY = "return redis.call('hexists', KEYS[1], ARGV[1])"   # no native path
TICK = os.sysconf("SC_CLK_TCK")


def vector(sha):
    with open(os.path.join(VECTORS, sha + ".lua"), "rb") as f:
        return f.read().decode()


def workloads():
    lock = vector(LOCK_SHA)
    lua_sha = __import__("hashlib").sha1(LUA_ONLY.encode()).hexdigest()
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
        ("SCRIPT LOAD", ["script", "load", lock]),
    ], [lock, vector(UNLOCK_SHA), LUA_ONLY]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(kind, binary):
    port = free_port()
    args = [binary, "--port", str(port), "--save", "", "--appendonly", "no"]
    if kind == "redis":
        args = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(["taskset", "-c", "0"] + args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.02)
    proc.kill()
    sys.exit("%s did not start" % kind)


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True,
                          check=True, text=True).stdout


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime + stime


def run_one(proc, port, args, pipeline, requests, clients):
    cli(port, "FLUSHALL")
    before = cpu_seconds(proc.pid)
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-c",
                          str(clients), "-n", str(requests), "-P", str(pipeline), "-r",
                          "1000000", "-q", "--csv"] + args, capture_output=True, text=True).stdout
    cpu = cpu_seconds(proc.pid) - before
    m = re.search(r'^"[^"]*","([0-9.]+)"', out, re.M)
    if not m:
        sys.exit("redis-benchmark printed no result for %s: %s" % (args[:2], out[-300:]))
    return float(m.group(1)), cpu * 1e6 / requests


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer requests and rounds (~1 minute)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--latchd", default=os.path.join(ROOT, "build", "latchd"))
    ap.add_argument("--only", help="regex of workload names to run")
    opt = ap.parse_args()
    if opt.quick:
        opt.rounds, opt.requests = 1, 200000
    work, scripts = workloads()
    if opt.only:
        work = [w for w in work if re.search(opt.only, w[0])]
    servers = {k: start(k, opt.latchd) for k in ("latchd", "redis")}
    try:
        for _, port in servers.values():
            for body in scripts:
                cli(port, "SCRIPT", "LOAD", body)
        rows = []
        for name, args in work:
            for pipeline in (1, 16):
                res = {"latchd": [], "redis": []}
                for _ in range(opt.rounds):
                    for kind in ("latchd", "redis"):   # alternating A/B
                        proc, port = servers[kind]
                        res[kind].append(run_one(proc, port, args, pipeline, opt.requests, opt.clients))
                med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
                       for k, v in res.items()}
                rows.append((name, pipeline, med["latchd"], med["redis"]))
                print("%-18s -P%-2d latchd %9.0f rps %6.2f us/req | redis %9.0f rps %6.2f us/req"
                      % (name, pipeline, med["latchd"][0], med["latchd"][1], med["redis"][0],
                         med["redis"][1]), file=sys.stderr)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    report(rows, opt)


def report(rows, opt):
    os.makedirs(opt.out, exist_ok=True)
    with open(os.path.join(opt.out, "redis-benchmark.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "pipeline", "latchd_rps", "redis_rps", "latchd_cpu_us_per_req",
                    "redis_cpu_us_per_req"])
        for name, p, l, r in rows:
            w.writerow([name, p, "%.0f" % l[0], "%.0f" % r[0], "%.3f" % l[1], "%.3f" % r[1]])
    print("| workload | -P | latchd rps | redis rps | rps ratio | latchd CPU µs/req | "
          "redis CPU µs/req | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for name, p, l, r in rows:
        print("| %s | %d | %.0f | %.0f | %.2f× | %.2f | %.2f | %.2f× |"
              % (name, p, l[0], r[0], l[0] / r[0], l[1], r[1], l[1] / r[1] if r[1] else 0))
    print("\n%d rounds of %d requests, c=%d, servers on core 0, redis-benchmark on core 1; "
          "medians. CSV: %s" % (opt.rounds, opt.requests, opt.clients,
                                os.path.join(opt.out, "redis-benchmark.csv")))


if __name__ == "__main__":
    main()
