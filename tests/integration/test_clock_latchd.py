"""latchd only: LATCHD.CLOCK (--enable-clock-control yes) drives the one
clock keys, TTLs, TIME and expiry read. ADVANCE expires what falls due (with
`expired` events) at once, FREEZE holds time still, RESUME goes on from the
frozen instant; without the flag every form is refused."""

import time

import pytest

from pubsub_util import frame
from resp_util import parse
from script_util import Script

CLOCK_ON = ("--enable-clock-control", "yes")
HOUR = 3600 * 1000
REFUSED = b"-ERR LATCHD.CLOCK is disabled: start latchd with --enable-clock-control yes\r\n"


@pytest.fixture
def clocked(latchd_factory):
    return latchd_factory(*CLOCK_ON)


@pytest.fixture
def c(clocked):
    return clocked.raw()


def clock(c):
    return parse(c.cmd("LATCHD.CLOCK", "GET"))


def time_ms(c):
    sec, usec = parse(c.cmd("TIME"))
    return int(sec) * 1000 + int(usec) // 1000


def test_latchd_clock_get_is_what_time_reads(c):
    before = clock(c)
    t = time_ms(c)
    after = clock(c)
    assert before <= t <= after


def test_latchd_clock_advance_expires_keys_at_once(c):
    # An hour of TTL: only the clock jump can expire them during this test.
    c.call("SET", "soon", "v", "PX", HOUR)
    c.call("SET", "later", "v", "PX", 2 * HOUR)
    c.call("SET", "forever", "v")
    t0 = clock(c)
    now = parse(c.cmd("LATCHD.CLOCK", "ADVANCE", HOUR))
    assert now >= t0 + HOUR
    # reclaimed by the wheel, not lazily: DBSIZE counts unreclaimed keys
    assert c.cmd("DBSIZE") == b":2\r\n"
    assert c.cmd("EXISTS", "soon", "later", "forever") == b":2\r\n"
    assert c.cmd("INFO", "stats").count(b"expired_keys:1\r\n") == 1


def test_latchd_clock_advance_emits_expired_events(clocked, c):
    assert c.cmd("CONFIG", "SET", "notify-keyspace-events", "Ex") == b"+OK\r\n"
    sub = clocked.raw()
    assert sub.cmd("SUBSCRIBE", "__keyevent@0__:expired") == frame("subscribe", "__keyevent@0__:expired", 1)
    c.call("SET", "lock", "v", "PX", HOUR)
    c.call("HSET", "h", "f", "1")
    c.call("PEXPIRE", "h", HOUR + 5)
    c.cmd("LATCHD.CLOCK", "ADVANCE", HOUR + 5)
    got = [sub.read_reply(), sub.read_reply()]
    assert got == [frame("message", "__keyevent@0__:expired", "lock"),
                   frame("message", "__keyevent@0__:expired", "h")]


def test_latchd_clock_shifts_ttl_pttl_time_but_not_deadlines(c):
    c.call("SET", "k", "v", "PX", 100000)
    deadline = parse(c.cmd("PEXPIRETIME", "k"))
    t0 = time_ms(c)
    c.cmd("LATCHD.CLOCK", "ADVANCE", 40000)
    assert time_ms(c) >= t0 + 40000
    assert parse(c.cmd("PEXPIRETIME", "k")) == deadline
    assert 59000 < parse(c.cmd("PTTL", "k")) <= 60000
    assert parse(c.cmd("TTL", "k")) in (59, 60)


def test_latchd_clock_freeze_holds_time_still(c):
    c.call("SET", "k", "v", "PX", 150)
    assert c.cmd("LATCHD.CLOCK", "FREEZE") == b"+OK\r\n"
    frozen = clock(c)
    pttl = parse(c.cmd("PTTL", "k"))
    tm = c.cmd("TIME")
    time.sleep(0.4)   # well past the key's TTL in real time
    assert clock(c) == frozen
    assert c.cmd("TIME") == tm
    assert parse(c.cmd("PTTL", "k")) == pttl
    assert c.cmd("GET", "k") == b"$1\r\nv\r\n"
    # a frozen clock still moves when told to
    assert parse(c.cmd("LATCHD.CLOCK", "ADVANCE", pttl)) == frozen + pttl
    assert c.cmd("EXISTS", "k") == b":0\r\n"
    assert c.cmd("DBSIZE") == b":0\r\n"


def test_latchd_clock_resume_goes_on_from_the_frozen_instant(c):
    c.cmd("LATCHD.CLOCK", "FREEZE")
    frozen = clock(c)
    c.cmd("LATCHD.CLOCK", "ADVANCE", HOUR)
    time.sleep(0.1)
    assert c.cmd("LATCHD.CLOCK", "RESUME") == b"+OK\r\n"
    resumed = clock(c)
    assert frozen + HOUR <= resumed   # the advance is kept, the frozen time is not made up
    assert resumed < frozen + HOUR + 5000
    # running again: real time passes and expires keys by the wheel's timer
    c.call("SET", "k", "v", "PX", 50)
    deadline = time.monotonic() + 5
    while c.cmd("DBSIZE") != b":0\r\n" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert c.cmd("DBSIZE") == b":0\r\n"
    assert clock(c) > resumed
    assert c.cmd("LATCHD.CLOCK", "RESUME") == b"+OK\r\n"   # not frozen: nothing to do


def test_latchd_clock_advance_respects_active_expire_off(c):
    c.call("SET", "k", "v", "PX", 1000)
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    c.cmd("LATCHD.CLOCK", "ADVANCE", 2000)
    assert c.cmd("DBSIZE") == b":1\r\n"      # not reclaimed actively...
    assert c.cmd("GET", "k") == b"$-1\r\n"   # ...but never visible
    assert c.cmd("DBSIZE") == b":0\r\n"
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"


def test_latchd_clock_expires_a_redisson_lock_lease(c):
    lock = Script.vector("149c5a8b")   # RedissonLock.tryLockInnerAsync 3.19+
    assert lock(c, ["orders"], [30000, "owner-a:1"]) is None
    assert 0 < lock(c, ["orders"], [30000, "owner-b:1"]) <= 30000   # held: the remaining lease
    c.cmd("LATCHD.CLOCK", "ADVANCE", 30000)
    assert c.cmd("EXISTS", "orders") == b":0\r\n"
    assert lock(c, ["orders"], [30000, "owner-b:1"]) is None
    assert c.cmd("HGETALL", "orders") == b"*2\r\n$9\r\nowner-b:1\r\n$1\r\n1\r\n"


def test_latchd_clock_argument_errors(c):
    assert c.cmd("LATCHD.CLOCK", "ADVANCE", "-1") == \
        b"-ERR the clock only moves forward: milliseconds must be >= 0\r\n"
    assert c.cmd("LATCHD.CLOCK", "ADVANCE", "soon") == b"-ERR value is not an integer or out of range\r\n"
    assert c.cmd("LATCHD.CLOCK", "ADVANCE", str(1 << 62)) == \
        b"-ERR milliseconds would move the clock past its range\r\n"
    assert c.cmd("LATCHD.CLOCK", "ADVANCE") == \
        b"-ERR wrong number of arguments for 'latchd.clock|advance' command\r\n"
    assert c.cmd("LATCHD.CLOCK", "BACK") == b"-ERR unknown subcommand 'BACK'. Try LATCHD.CLOCK HELP.\r\n"
    assert parse(c.cmd("LATCHD.CLOCK", "HELP"))[0] == \
        b"LATCHD.CLOCK <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert c.cmd("EVAL", "return redis.call('latchd.clock', 'get')", "0").startswith(
        b"-ERR This Redis command is not allowed from script")


def test_latchd_clock_refused_when_disabled(latchd_factory):
    srv = latchd_factory()
    c = srv.raw()
    for args in (("GET",), ("ADVANCE", "1000"), ("FREEZE",), ("RESUME",), ("HELP",)):
        assert c.cmd("LATCHD.CLOCK", *args) == REFUSED
    assert c.cmd("CONFIG", "GET", "enable-clock-control") == \
        b"*2\r\n$20\r\nenable-clock-control\r\n$2\r\nno\r\n"
    assert c.cmd("CONFIG", "SET", "enable-clock-control", "yes") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'enable-clock-control') - "
        b"can't set immutable config\r\n")
    c.call("SET", "k", "v", "PX", HOUR)
    assert 0 < parse(c.cmd("PTTL", "k")) <= HOUR


def test_latchd_relative_expiry_reads_the_clock_once(latchd_factory):
    """A relative deadline of 1 ms is never already past when set: PEXPIRE
    and RESTORE read the clock once per command (Redis 7.0 reads it twice,
    so a millisecond that ticks between the readings deletes the key).
    With active expiry off every key stays counted by DBSIZE."""
    r = latchd_factory().client()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    payload = r.set("src", "v") and r.dump("src")
    r.delete("src")
    n = 20000
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.set("e%d" % i, "v")
        p.pexpire("e%d" % i, 1)
        p.restore("r%d" % i, 1, payload)
    p.execute()
    assert r.dbsize() == 2 * n
    assert r.info("stats")["expired_keys"] == 0
    r.close()
