"""The checker on synthetic histories: each rule must flag its violation,
and a valid history (with unknown outcomes in it) must pass."""

import ha_checker

LEASE = 5.0


def h(*ops):
    """ops: (process, f, lock, invoke, complete, status, value)."""
    events = []
    for p, f, lock, t0, t1, status, value in ops:
        events.append((t0, p, "invoke", f, lock, None))
        if t1 is not None:
            events.append((t1, p, status, f, lock, value))
    events.sort(key=lambda e: e[0])
    return events


def cycle(p, lock, t, token, counter, dt=0.1):
    """A clean hold: acquire, incr, check, release, each taking dt."""
    return [(p, "acquire", lock, t, t + dt, "ok", token),
            (p, "incr", lock, t + dt, t + 2 * dt, "ok", counter),
            (p, "check", lock, t + 2 * dt, t + 3 * dt, "ok", (1, 4000)),
            (p, "release", lock, t + 3 * dt, t + 4 * dt, "ok", 1)]


def final(lock, t, token, counter):
    return ("final", "read", lock, t, t + 0.01, "ok", {"token": token, "counter": counter})


def kinds(violations):
    return sorted({v.split(":", 1)[0] for v in violations})


def test_valid_history_passes():
    ops = cycle("c1", "L", 0.0, 1, 1) + cycle("c2", "L", 1.0, 2, 2)
    # an acquire of unknown outcome: the token counter may have moved
    ops.append(("c3", "acquire", "L", 2.0, 2.5, "info", None))
    ops += cycle("c1", "L", 8.0, 4, 3)
    # an acquire still in flight when the run ended
    ops.append(("c2", "acquire", "L", 9.0, None, "info", None))
    ops.append(final("L", 20.0, 4, 3))
    assert ha_checker.check(h(*ops), LEASE) == []


def test_overlap_is_flagged():
    ops = cycle("c1", "L", 0.0, 1, 1, dt=0.5) + cycle("c2", "L", 0.7, 2, 2)
    assert "overlap" in kinds(ha_checker.check(h(*ops), LEASE))


def test_hold_past_its_lease_is_not_an_overlap():
    # c1 stalls past acquire invoke + lease: the lock may expire; c2 may take it.
    ops = [("c1", "acquire", "L", 0.0, 0.1, "ok", 1),
           ("c2", "acquire", "L", 5.5, 5.6, "ok", 2),
           ("c1", "release", "L", 6.0, 6.1, "info", None),
           ("c2", "release", "L", 6.0, 6.1, "ok", 1)]
    assert ha_checker.check(h(*ops), LEASE) == []


def test_token_regress_is_flagged():
    ops = cycle("c1", "L", 0.0, 5, 1) + cycle("c2", "L", 1.0, 3, 2)
    assert kinds(ha_checker.check(h(*ops), LEASE)) == ["token"]


def test_repeated_token_is_flagged():
    ops = cycle("c1", "L", 0.0, 5, 1) + cycle("c2", "L", 1.0, 5, 2)
    assert "token" in kinds(ha_checker.check(h(*ops), LEASE))


def test_concurrent_acquires_need_no_token_order():
    # both acquires in flight at once (one failed to get it): no order implied
    ops = [("c1", "acquire", "L", 0.0, 0.5, "ok", 2),
           ("c2", "acquire", "L", 0.1, 0.4, "fail", None),
           ("c1", "release", "L", 0.6, 0.7, "ok", 1)]
    assert ha_checker.check(h(*ops), LEASE) == []


def test_lost_acquire_is_flagged():
    ops = [("c1", "acquire", "L", 0.0, 0.1, "ok", 1),
           ("c1", "check", "L", 1.0, 1.1, "ok", (0, -2)),
           ("c1", "release", "L", 1.2, 1.3, "ok", None)]
    v = ha_checker.check(h(*ops), LEASE)
    assert kinds(v) == ["visibility"] and len(v) == 2


def test_lock_gone_after_its_lease_is_not_lost():
    ops = [("c1", "acquire", "L", 0.0, 0.1, "ok", 1),
           ("c1", "check", "L", 5.5, 5.6, "ok", (0, -2)),
           ("c1", "release", "L", 5.7, 5.8, "ok", None)]
    assert ha_checker.check(h(*ops), LEASE) == []


def test_lost_incr_is_flagged():
    ops = cycle("c1", "L", 0.0, 1, 7) + [final("L", 2.0, 1, 6)]
    assert kinds(ha_checker.check(h(*ops), LEASE)) == ["lost-write"]


def test_repeated_incr_reply_is_flagged():
    ops = cycle("c1", "L", 0.0, 1, 7) + cycle("c2", "L", 1.0, 2, 7)
    assert kinds(ha_checker.check(h(*ops), LEASE)) == ["lost-write"]


def test_lost_token_counter_is_flagged():
    ops = cycle("c1", "L", 0.0, 4, 1) + [final("L", 2.0, 2, 1)]
    assert kinds(ha_checker.check(h(*ops), LEASE)) == ["lost-write"]


def test_unknown_incr_may_or_may_not_count():
    for counter in (1, 2):
        ops = cycle("c1", "L", 0.0, 1, 1) + [("c1", "incr", "L", 1.0, 1.1, "info", None),
                                             final("L", 2.0, 1, counter)]
        assert ha_checker.check(h(*ops), LEASE) == []


def test_transaction_check_sees_the_lock_gone():
    # INCR + HEXISTS + PTTL in one transaction on the new leader: not held.
    ops = [("c1", "acquire", "L", 0.0, 0.1, "ok", 1),
           ("c1", "incr", "L", 0.2, 0.3, "ok", (1, 0, -2)),
           final("L", 2.0, 1, 1)]
    assert kinds(ha_checker.check(h(*ops), LEASE)) == ["visibility"]
    ops[1] = ("c1", "incr", "L", 0.2, 0.3, "ok", (1, 1, 4900))
    assert ha_checker.check(h(*ops), LEASE) == []
