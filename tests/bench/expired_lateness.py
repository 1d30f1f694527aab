#!/usr/bin/env python3
"""expired_lateness.py - how late "expired" keyspace events arrive.

Subscribes to __keyevent@0__:expired, sets N keys whose absolute deadlines
(PXAT) are spread evenly over a window that starts a little in the future,
then records, for each event, arrival time minus the key's deadline. The
receive loop only timestamps raw chunks; parsing happens after the last
event, so the reader's own speed does not distort the numbers. Client and
server must share a clock (same machine).

    tests/bench/expired_lateness.py --port 6379 [--keys 100000] [--spread-ms 2000]

Works against latchd and redis-server alike; prints p50/p90/p99/max.
"""

import argparse
import socket
import sys
import time


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def connect(host, port):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def command(s, *args):
    s.sendall(encode(*args))
    data = s.recv(65536)
    if data.startswith(b"-"):
        sys.exit("server said %r to %r" % (data, args[:2]))
    return data


def send_keys(host, port, deadlines):
    """SET k<i> 1 PXAT <deadline> for every key, pipelined, replies drained."""
    s = connect(host, port)
    batch = 5000
    for start in range(0, len(deadlines), batch):
        chunk = deadlines[start:start + batch]
        s.sendall(b"".join(encode("SET", "k%d" % (start + i), "1", "PXAT", d) for i, d in enumerate(chunk)))
        want, got = len(chunk) * 5, 0    # each reply is "+OK\r\n"
        while got < want:
            got += len(s.recv(1 << 20))
    s.close()


def parse_events(chunks):
    """(arrival, key) for every message in the timestamped raw chunks."""
    data = b"".join(c for _, c in chunks)
    ends, total = [], 0
    for t, c in chunks:
        total += len(c)
        ends.append((total, t))
    out, pos, ci = [], 0, 0
    marker = b"*3\r\n$7\r\nmessage\r\n"
    while True:
        pos = data.find(marker, pos)
        if pos < 0:
            return out
        p = data.index(b"\r\n", pos + len(marker))          # channel length line
        clen = int(data[pos + len(marker) + 1:p])
        p += 2 + clen + 2
        q = data.index(b"\r\n", p)
        klen = int(data[p + 1:q])
        key = data[q + 2:q + 2 + klen]
        end = q + 2 + klen + 2
        while ends[ci][0] < end:
            ci += 1
        out.append((ends[ci][1], key))
        pos = end


def percentile(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p / 100.0))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--spread-ms", type=int, default=2000)
    ap.add_argument("--lead-ms", type=int, default=1500, help="first deadline this far after the start")
    ap.add_argument("--timeout", type=float, default=30.0, help="give up this long after the last deadline")
    ap.add_argument("--idle", type=float, default=2.0, help="stop after this long without events past the last deadline")
    args = ap.parse_args()

    admin = connect(args.host, args.port)
    command(admin, "FLUSHALL")
    command(admin, "CONFIG", "SET", "notify-keyspace-events", "Ex")
    sub = connect(args.host, args.port)
    command(sub, "SUBSCRIBE", "__keyevent@0__:expired")

    start_ms = int(time.time() * 1000) + args.lead_ms
    deadlines = [start_ms + i * args.spread_ms // args.keys for i in range(args.keys)]
    send_keys(args.host, args.port, deadlines)
    if time.time() * 1000 > start_ms:
        sys.exit("setting the keys took longer than --lead-ms; raise it")

    # Receive until every key is reported, or nothing came for --idle
    # seconds after the last deadline (or --timeout after it, at worst).
    chunks, counted, quiet_since = [], 0, None
    last = deadlines[-1] / 1000.0
    sub.settimeout(0.1)
    while counted < args.keys and time.time() < last + args.timeout:
        try:
            c = sub.recv(1 << 20)
        except socket.timeout:
            now = time.time()
            quiet_since = quiet_since or now
            if now > last and now - quiet_since > args.idle:
                break
            continue
        if not c:
            break
        chunks.append((time.time(), c))
        counted += c.count(b"$7\r\nmessage\r\n")   # a frame cut at a chunk edge is missed: stops late, not early
        quiet_since = None
    events = parse_events(chunks)
    late_ms = sorted((t * 1000.0 - deadlines[int(k[1:])]) for t, k in events)
    command(admin, "CONFIG", "SET", "notify-keyspace-events", "")
    if not late_ms:
        sys.exit("no events received")
    print("events %d/%d  lateness ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f  min %.1f" % (
        len(late_ms), args.keys, percentile(late_ms, 50), percentile(late_ms, 90), percentile(late_ms, 99),
        late_ms[-1], late_ms[0]))


if __name__ == "__main__":
    main()
