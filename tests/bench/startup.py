#!/usr/bin/python3
"""startup.py - time from exec to the first PING reply, for latchd and
redis-server, on its own: the same measurement as `scripts/bench
--sections startup` (bench.py's startup_ms), without the rest of the run.

    tests/bench/startup.py [--runs 20] [--latchd build/latchd] [--redis redis-server]
"""
import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import KINDS, ROOT, startup_ms  # noqa: E402  (one measurement for both tools)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--latchd", default=os.environ.get("LATCHD_BIN", os.path.join(ROOT, "build", "latchd")))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    opt = ap.parse_args()
    for kind in KINDS:
        startup_ms(kind, opt)   # warm the page cache first
        times = [startup_ms(kind, opt) for _ in range(opt.runs)]
        print("%-7s exec -> first PONG over %d runs: median %.2f ms, min %.2f ms, max %.2f ms"
              % (kind, opt.runs, statistics.median(times), min(times), max(times)))


if __name__ == "__main__":
    main()
