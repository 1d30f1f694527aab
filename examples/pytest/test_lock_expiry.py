def test_a_crashed_holders_lock_expires(r):
    assert r.set("lock:orders", "worker-1", nx=True, px=30_000)
    assert not r.set("lock:orders", "worker-2", nx=True, px=30_000)
    r.execute_command("LATCHD.CLOCK", "ADVANCE", 30_000)   # no sleeping
    assert r.set("lock:orders", "worker-2", nx=True, px=30_000)


def test_a_frozen_clock_keeps_the_lease(r):
    r.execute_command("LATCHD.CLOCK", "FREEZE")
    try:
        r.set("lock:orders", "worker-1", px=5_000)
        assert r.pttl("lock:orders") == 5_000
    finally:
        r.execute_command("LATCHD.CLOCK", "RESUME")
