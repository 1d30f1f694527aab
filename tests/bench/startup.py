#!/usr/bin/env python3
"""startup.py - how long a fresh server takes from exec to its first PONG.

Starts the server N times on a free port and times spawn -> first +PONG
(polling connect + PING every 0.5 ms), then prints the median and the
spread, for latchd and redis-server alike:

    tests/bench/startup.py [--runs 20] [--latchd build/latchd] [--redis redis-server]
"""

import argparse
import os
import socket
import statistics
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_pong(port, deadline):
    while time.perf_counter() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16) == b"+PONG\r\n":
                    return time.perf_counter()
        except OSError:
            time.sleep(0.0005)
    raise RuntimeError("no PONG on port %d" % port)


def one_run(argv, port):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv + ["--port", str(port), "--bind", "127.0.0.1"], cwd=d,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return (first_pong(port, t0 + 10) - t0) * 1000
        finally:
            proc.terminate()
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--latchd", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "latchd"))
    ap.add_argument("--redis", default="redis-server")
    args = ap.parse_args()
    servers = {"latchd": [args.latchd], "redis-server": [args.redis, "--save", "", "--appendonly", "no"]}
    for name, argv in servers.items():
        ms = [one_run(argv, free_port()) for _ in range(args.runs)]
        print("%-12s median %.2f ms  min %.2f  max %.2f  (%d runs, exec to first PONG)"
              % (name, statistics.median(ms), min(ms), max(ms), len(ms)))


if __name__ == "__main__":
    main()
