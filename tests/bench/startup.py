#!/usr/bin/python3
"""startup.py - time from exec to the first PING reply, for latchd and
redis-server: each is started RUNS times on a fresh port, polled with
connect + PING until +PONG arrives, then stopped. Prints the median,
min and max in milliseconds.

    tests/bench/startup.py [--runs 20] [--latchd build/latchd] [--redis redis-server]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench import free_port  # noqa: E402  (bench.py's, one helper for both)

POLL_S = 0.0002   # between refused connects: fine-grained, yet not spinning a core


def ping_once(port):
    """True once the server answers PING; False while nobody listens."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def argv_for(kind, binary, port, workdir):
    if kind == "redis":
        return [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", workdir, "--logfile", ""]
    return [binary, "--port", str(port), "--bind", "127.0.0.1"]


def one_start(kind, binary, workdir, timeout=10.0):
    """Milliseconds from exec to the first +PONG."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv_for(kind, binary, port, workdir), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=workdir)
    try:
        while not ping_once(port):
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %d" % (kind, proc.returncode))
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("%s did not answer PING in %.0f s" % (kind, timeout))
            time.sleep(POLL_S)
        return (time.perf_counter() - t0) * 1000.0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--latchd", default=os.environ.get("LATCHD_BIN", os.path.join(REPO, "build", "latchd")))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        for kind, binary in (("latchd", args.latchd), ("redis", args.redis)):
            one_start(kind, binary, workdir)   # warm the page cache first
            times = [one_start(kind, binary, workdir) for _ in range(args.runs)]
            print("%-7s exec -> first PONG over %d runs: median %.2f ms, min %.2f ms, max %.2f ms"
                  % (kind, args.runs, statistics.median(times), min(times), max(times)))


if __name__ == "__main__":
    main()
