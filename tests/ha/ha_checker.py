"""The fault suite's checker: judges a history of lock/counter operations.
It owns the history format (History, Op) and the safety rules; no I/O.

A history is a list of events, each (time, process, kind, f, lock, value):
kind is "invoke", then one of "ok", "fail" (the operation certainly did not
happen: connection refused, -READONLY, -CLUSTERDOWN) or "info" (unknown: a
timeout or a closed connection after the request was sent, any other
error). As in Jepsen, an "info" operation may or may not have taken effect,
at any time after its invocation, so no rule below ever relies on one.
Times are time.monotonic() of the one process that runs every client.

Operations (f):
  acquire  value on ok: the fencing token (Redisson's fenced lock script
           INCRs the lock's token counter in the same script)
  incr     value on ok: the counter's new value (an INCR inside the
           critical section), or (value, held, pttl) when HEXISTS of our
           owner field and PTTL ran in the same transaction
  check    value on ok: (held, pttl): HEXISTS of our owner field and PTTL
           of the lock, read while we hold it
  release  value on ok: the unlock script's reply (1 released, None: the
           lock was not ours)
  read     value on ok: {"token": n, "counter": n}: the final values, read
           once every fault is healed

Rules (each violation is a string naming the rule, the lock and the ops):
  overlap     two acknowledged holds of one lock overlap in time. A hold
              runs from the acquire's ok to the release's invoke, or to
              acquire invoke + lease, whichever is first: the lease starts
              after the invoke, so after that time the lock may have
              expired legitimately.
  token       fencing tokens of one lock strictly increase in real time:
              an acquire acknowledged before another was invoked has the
              smaller token; no two acknowledged acquires share a token.
  visibility  an acknowledged acquire is seen held (ours, PTTL > 0) by a
              check or the release that completed before its lease could
              have run out.
  lost-write  no acknowledged INCR is lost: the replies of one counter are
              distinct, and the final read is at least their number and
              their maximum (tokens likewise).
"""

import collections

Op = collections.namedtuple("Op", "process f lock invoke complete status value")


class History:
    """Thread-safe event recorder. Clients call invoke() then complete()."""

    def __init__(self, clock):
        import threading
        self.clock = clock
        self.events = []
        self._lock = threading.Lock()

    def invoke(self, process, f, lock, value=None):
        with self._lock:
            self.events.append((self.clock(), process, "invoke", f, lock, value))

    def complete(self, process, kind, f, lock, value=None):
        assert kind in ("ok", "fail", "info"), kind
        with self._lock:
            self.events.append((self.clock(), process, kind, f, lock, value))


def pair(events):
    """Events -> ops. Each process has at most one operation in flight; an
    invoke with no completion (the run ended) becomes "info"."""
    pending, ops = {}, []
    for t, p, kind, f, lock, value in events:
        if kind == "invoke":
            if p in pending:
                raise ValueError("process %r invoked %s with %s in flight" % (p, f, pending[p][1]))
            pending[p] = (t, f, lock)
            continue
        if p not in pending or pending[p][1] != f:
            raise ValueError("process %r completed %s it did not invoke" % (p, f))
        t0, f0, lock0 = pending.pop(p)
        ops.append(Op(p, f, lock0, t0, t, kind, value))
    for p, (t0, f0, lock0) in pending.items():
        ops.append(Op(p, f0, lock0, t0, float("inf"), "info", None))
    ops.sort(key=lambda o: o.invoke)
    return ops


def holds(ops, lease_s):
    """Acknowledged holds: (acquire op, end time, ops done while holding)."""
    out = []
    open_ = {}
    for op in ops:
        key = (op.process, op.lock)
        if op.f == "acquire" and op.status == "ok":
            open_[key] = [op, op.invoke + lease_s, []]
            out.append(open_[key])
        elif key in open_ and op.f in ("check", "release", "incr"):
            open_[key][2].append(op)
            if op.f == "release":
                open_[key][1] = min(open_[key][1], op.invoke)
                del open_[key]
    return [tuple(h) for h in out]


def check(events, lease_s):
    """All violations of the rules above, as a list of strings (empty: the
    history is valid)."""
    ops = pair(events)
    bad = []
    by_lock = collections.defaultdict(list)
    for h in holds(ops, lease_s):
        by_lock[h[0].lock].append(h)

    # overlap: sort by start; any hold starting before an earlier one ends.
    for lock, hs in by_lock.items():
        hs = sorted(hs, key=lambda h: h[0].complete)
        for i, (a, a_end, _) in enumerate(hs):
            for b, b_end, _ in hs[i + 1:]:
                if b.complete >= a_end:
                    break
                if b.complete < a_end and a.complete < b_end:
                    bad.append("overlap: %s held by %s [%.3f, %.3f] and by %s [%.3f, %.3f]"
                               % (lock, a.process, a.complete, a_end, b.process, b.complete, b_end))

    # token: real-time order implies token order; tokens unique.
    for lock, hs in by_lock.items():
        acq = sorted((h[0] for h in hs), key=lambda o: o.invoke)
        seen = {}
        for o in acq:
            if o.value in seen:
                bad.append("token: %s token %r acknowledged twice (%s at %.3f, %s at %.3f)"
                           % (lock, o.value, seen[o.value].process, seen[o.value].complete,
                              o.process, o.complete))
            seen.setdefault(o.value, o)
        # Sweep: before each acquire's invoke, the largest token of those
        # already acknowledged must be smaller than its own.
        done = sorted(acq, key=lambda o: o.complete)
        j, top = 0, None
        for b in acq:
            while j < len(done) and done[j].complete < b.invoke:
                if top is None or done[j].value > top.value:
                    top = done[j]
                j += 1
            if top is not None and not top.value < b.value:
                bad.append("token: %s token %r (%s, ok at %.3f) then %r (%s, invoked at %.3f)"
                           % (lock, top.value, top.process, top.complete, b.value, b.process, b.invoke))

    # visibility: checks and releases done while the lease surely ran.
    for lock, hs in by_lock.items():
        for a, _end, inside in hs:
            for op in inside:
                if op.status != "ok" or op.complete >= a.invoke + lease_s:
                    continue
                seen = op.value if op.f == "check" else \
                    op.value[1:] if op.f == "incr" and isinstance(op.value, tuple) else None
                if seen is not None and not (seen[0] == 1 and seen[1] > 0):
                    bad.append("visibility: %s acquired by %s (ok at %.3f) seen as %r at %.3f"
                               % (lock, a.process, a.complete, op.value, op.complete))
                if op.f == "release" and op.value != 1:
                    bad.append("visibility: %s acquired by %s (ok at %.3f) released with %r at %.3f"
                               % (lock, a.process, a.complete, op.value, op.complete))

    # lost-write: per counter, acknowledged values distinct and all present.
    acked = collections.defaultdict(list)
    for op in ops:
        if op.status == "ok" and op.f in ("incr", "acquire"):
            v = op.value[0] if isinstance(op.value, tuple) else op.value
            acked[(op.lock, "counter" if op.f == "incr" else "token")].append((v, op))
    final = {}
    for op in ops:
        if op.f == "read" and op.status == "ok":
            for what, v in op.value.items():
                final[(op.lock, what)] = v
    for (lock, what), got in sorted(acked.items(), key=lambda kv: kv[0]):
        values = [v for v, _ in got]
        if what == "counter":   # token duplicates are reported above
            first = {}
            for v, op in got:
                if v in first:
                    bad.append("lost-write: %s counter INCR reply %d repeated (%s at %.3f, %s at %.3f)"
                               % (lock, v, first[v].process, first[v].complete, op.process, op.complete))
                first.setdefault(v, op)
        if (lock, what) in final:
            v = final[(lock, what)]
            if v < len(values) or v < max(values):
                bad.append("lost-write: %s %s final %d < %d acknowledged INCRs (max reply %d)"
                           % (lock, what, v, len(values), max(values)))
    return bad


def context(events, violation, before=2.0, after=0.5):
    """The operations on the violation's lock around the times it names,
    one line each, to read a violation by."""
    import re
    lock = violation.split()[1]
    times = [float(t) for t in re.findall(r"at (\d+\.\d+)", violation)]
    if not times:
        return []
    t0, t1 = min(times) - before, max(times) + after
    return ["%.3f-%.3f %s %s %s %r" % (o.invoke, o.complete, o.process, o.f, o.status, o.value)
            for o in pair(events) if o.lock == lock and t0 <= o.invoke <= t1]


def tally(violations):
    """Violations per rule, for the report."""
    return dict(collections.Counter(v.split(":", 1)[0] for v in violations))


def summary(events):
    """Counts per (f, status) for the report."""
    c = collections.Counter((op.f, op.status) for op in pair(events))
    return dict(sorted(("%s:%s" % k, n) for k, n in c.items()))
