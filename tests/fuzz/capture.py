#!/usr/bin/python3
"""Regenerate the fuzz seed corpora from real client traffic.

A recording proxy sits in front of a real redis-server; redis-cli,
redis-benchmark and python3-redis talk through it, and every connection's
client-to-server bytes become one seed file in tests/fuzz/corpus/<target>/
for each target (all three read a client's byte stream). Files are capped
at 4 KiB, the fuzzers' -max_len.

    /usr/bin/python3 tests/fuzz/capture.py
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = ("resp", "store", "dispatch")
MAX_SEED = 4096


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """A TCP proxy that keeps what each client sent, per connection."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.label = "capture"
        self.streams = []   # (label, bytearray)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(("127.0.0.1", self.upstream))
            sent = bytearray()
            self.streams.append((self.label, sent))
            threading.Thread(target=self._pump, args=(client, server, sent), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    @staticmethod
    def _pump(src, dst, record):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if record is not None:
                    record += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass


def cli(port, *args, stdin=None):
    subprocess.run(["redis-cli", "-p", str(port)] + list(args), input=stdin,
                   stdout=subprocess.DEVNULL, check=True)


def drive_redis_cli(port):
    script = b"\n".join([
        b"PING", b"SET lock:order 8743c9c0:1 NX PX 30000", b"GET lock:order",
        b"HSET lock:res 8743c9c0-1c2e:1 1", b"HINCRBY lock:res 8743c9c0-1c2e:1 1",
        b"PEXPIRE lock:res 30000", b"PTTL lock:res", b"HGETALL lock:res",
        b"HDEL lock:res 8743c9c0-1c2e:1", b"EXISTS lock:res", b"INCR counter",
        b"DECRBY counter 5", b"MSET a 1 b 2", b"MGET a b nosuch", b"EXPIRE a 10",
        b"TTL a", b"PERSIST a", b"RENAME a c", b"TYPE c", b"SCAN 0 MATCH * COUNT 10",
        b"KEYS *", b"DEL b c counter", b"CLIENT SETNAME worker-1", b"CLIENT INFO",
        b"CONFIG GET maxclients", b"INFO keyspace", b"DBSIZE", b"FLUSHALL",
    ]) + b"\n"
    cli(port, stdin=script)
    cli(port, "HELLO", "3")
    cli(port, "COMMAND", "DOCS", "set")


def drive_benchmark(port):
    subprocess.run(["redis-benchmark", "-p", str(port), "-n", "12", "-c", "1", "-P", "3",
                    "-t", "ping,set,get,incr,hset", "-q"],
                   stdout=subprocess.DEVNULL, check=True)


def drive_python(port):
    r = redis.Redis(port=port)
    r.set("lock", "owner", nx=True, px=30000)
    r.hset("lock:h", mapping={"uuid:1": 1})
    r.hincrby("lock:h", "uuid:1", 1)
    r.pexpire("lock:h", 30000)
    p = r.pipeline(transaction=False)
    for i in range(20):
        p.set("k%d" % i, b"\x00\xff" * i, ex=60)
        p.get("k%d" % i)
    p.execute()
    r.hgetall("lock:h")
    r.delete("lock", "lock:h")
    r.close()


def drive_inline(port):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b'PING\r\nSET "a key" "x\\ty\\x41"\r\nGET \'a key\'\r\nHSET h f v\nQUIT\r\n')
        while s.recv(4096):
            pass


def main():
    out = tempfile.mkdtemp(prefix="latchd-capture-")
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", out],
                              stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        rec = Recorder(port)
        for label, drive in (("redis-cli", drive_redis_cli), ("benchmark", drive_benchmark),
                             ("redis-py", drive_python), ("inline", drive_inline)):
            rec.label = label
            drive(rec.port)
        time.sleep(0.5)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(out, ignore_errors=True)
    counts = {}
    for label, data in rec.streams:
        if not data:
            continue
        counts[label] = counts.get(label, 0) + 1
        name = "%s-%d" % (label, counts[label])
        for t in TARGETS:
            d = os.path.join(HERE, "corpus", t)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name), "wb") as f:
                f.write(bytes(data[:MAX_SEED]))
    print("captured %d streams into %s" % (sum(counts.values()), os.path.join(HERE, "corpus")),
          file=sys.stderr)


if __name__ == "__main__":
    main()
