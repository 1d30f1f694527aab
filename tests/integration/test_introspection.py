"""INFO commandstats / errorstats / latencystats, SLOWLOG, LATENCY, COMMAND
GETKEYS and CLIENT LIST's fields, against latchd and redis-server alike."""
import re
import time

import pytest
import redis

from resp_util import Error, RawConn, RespMap, parse


class Q:
    """Commands over a raw connection, replies as RESP has them (redis-py's
    callbacks would reshape INFO, COMMAND, SLOWLOG ...)."""

    def __init__(self, server):
        self.c = RawConn(server.host, server.port)

    def execute_command(self, *args):
        v = parse(self.c.cmd(*args))
        if isinstance(v, Error):
            raise redis.ResponseError(bytes(v).decode())
        return v

    def __getattr__(self, name):
        def call(*args):
            return self.execute_command(name.upper().replace("_", " ").split()[0],
                                        *name.upper().split("_")[1:], *args)
        return call

    def config_set(self, k, v):
        return self.execute_command("CONFIG", "SET", k, v)


def info_section(r, name):
    """The raw lines of one INFO section, header included."""
    return r.execute_command("INFO", name).decode().split("\r\n")


def stat_line(r, section, prefix):
    for line in info_section(r, section):
        if line.startswith(prefix + ":"):
            return line.split(":", 1)[1]
    return None


def fields(text):
    return dict(kv.split("=", 1) for kv in text.split(","))


@pytest.fixture
def q(server):
    conn = Q(server)
    yield conn
    conn.c.close()


@pytest.fixture
def fresh(q):
    r = q
    r.config_set("latency-tracking", "yes")
    r.config_set("latency-tracking-info-percentiles", "50 99 99.9")
    r.config_set("slowlog-log-slower-than", "10000")
    r.config_set("slowlog-max-len", "128")
    r.config_set("latency-monitor-threshold", "0")
    r.execute_command("CONFIG", "RESETSTAT")
    r.execute_command("SLOWLOG", "RESET")
    r.execute_command("LATENCY", "RESET")
    yield r
    r.config_set("latency-monitor-threshold", "0")
    r.config_set("slowlog-log-slower-than", "10000")


def test_commandstats_counts_calls_and_errors(fresh):
    r = fresh
    r.set("a", "1")
    r.set("b", "2")
    with pytest.raises(redis.ResponseError):
        r.execute_command("SET", "k")          # rejected: arity
    with pytest.raises(redis.ResponseError):
        r.execute_command("INCR", "a", "x")    # rejected too
    r.set("s", "x")
    with pytest.raises(redis.ResponseError):
        r.incr("s")                            # ran and failed
    r.execute_command("CLIENT", "ID")
    st = fields(stat_line(r, "commandstats", "cmdstat_set"))
    assert st["calls"] == "3" and st["rejected_calls"] == "1" and st["failed_calls"] == "0"
    assert re.fullmatch(r"\d+\.\d\d", st["usec_per_call"])
    assert list(st) == ["calls", "usec", "usec_per_call", "rejected_calls", "failed_calls"]
    incr = fields(stat_line(r, "commandstats", "cmdstat_incr"))
    assert (incr["calls"], incr["rejected_calls"], incr["failed_calls"]) == ("1", "1", "1")
    assert fields(stat_line(r, "commandstats", "cmdstat_client|id"))["calls"] == "1"
    assert stat_line(r, "stats", "total_error_replies") == "3"
    assert stat_line(r, "errorstats", "errorstat_ERR") == "count=3"
    assert stat_line(r, "stats", "unexpected_error_replies") == "0"


def test_errorstats_codes_sorted_and_reset(fresh):
    r = fresh
    r.hset("h", "f", "v")
    with pytest.raises(redis.ResponseError):
        r.get("h")
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")
    with pytest.raises(redis.ResponseError):
        r.evalsha("0" * 40, 0)
    lines = [l for l in info_section(r, "errorstats") if l.startswith("errorstat_")]
    assert lines == ["errorstat_ERR:count=1", "errorstat_NOSCRIPT:count=1", "errorstat_WRONGTYPE:count=1"]
    r.execute_command("CONFIG", "RESETSTAT")
    assert [l for l in info_section(r, "errorstats") if l.startswith("errorstat_")] == []


def test_errorstats_script_errors_counted_once(fresh):
    r = fresh
    r.hset("h", "f", "v")
    with pytest.raises(redis.ResponseError):
        r.eval("return redis.call('incr', KEYS[1])", 1, "h")
    assert stat_line(r, "errorstats", "errorstat_WRONGTYPE") == "count=1"
    assert stat_line(r, "stats", "total_error_replies") == "1"
    assert fields(stat_line(r, "commandstats", "cmdstat_eval"))["failed_calls"] == "1"
    assert fields(stat_line(r, "commandstats", "cmdstat_incr"))["failed_calls"] == "1"


def test_info_all_has_commandstats_default_has_not(fresh):
    r = fresh
    r.set("x", "y")
    default = r.execute_command("INFO").decode()
    everything = r.execute_command("INFO", "ALL").decode()
    assert "# Errorstats" in default and "# Commandstats" not in default and "# Latencystats" not in default
    assert "cmdstat_set:" in everything and "latency_percentiles_usec_set:" in everything
    headers = [l for l in everything.split("\r\n") if l.startswith("# ")]
    assert headers == ["# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU",
                       "# Modules", "# Commandstats", "# Errorstats", "# Latencystats", "# Cluster", "# Keyspace"]


def test_latencystats_percentiles(fresh):
    r = fresh
    r.execute_command("DEBUG", "SLEEP", "0.02")
    r.set("k", "v")
    r.config_set("latency-tracking-info-percentiles", "0 50 100")
    line = stat_line(r, "latencystats", "latency_percentiles_usec_debug")
    assert re.fullmatch(r"p0=\d+\.\d{3},p50=\d+\.\d{3},p100=\d+\.\d{3}", line)
    assert float(fields(line)["p50"]) >= 20000
    assert float(fields(stat_line(r, "latencystats", "latency_percentiles_usec_set"))["p50"]) < 20000
    r.config_set("latency-tracking", "no")
    assert stat_line(r, "latencystats", "latency_percentiles_usec_set") is None


def test_slowlog_entries_and_trimming(fresh):
    r = fresh
    r.config_set("slowlog-log-slower-than", "0")
    r.client_setname("slowpoke")
    r.execute_command("SET", "k", "v" * 200)
    args = ["SADD", "s"] + [str(i) for i in range(40)]
    r.execute_command(*args)
    entries = r.execute_command("SLOWLOG", "GET", "2")
    newest, older = entries
    assert newest[3][:2] == [b"SADD", b"s"] and len(newest[3]) == 32
    assert newest[3][-1] == b"... (11 more arguments)"
    assert older[3][2] == b"v" * 128 + b"... (72 more bytes)"
    assert older[0] + 1 == newest[0]
    assert isinstance(newest[1], int) and isinstance(newest[2], int)
    assert newest[5] == b"slowpoke" and re.fullmatch(rb"127\.0\.0\.1:\d+", newest[4])
    assert r.execute_command("SLOWLOG", "LEN") >= 3
    with pytest.raises(redis.ResponseError, match="count should be greater than or equal to -1"):
        r.execute_command("SLOWLOG", "GET", "-2")
    r.config_set("slowlog-max-len", "2")
    r.ping()
    assert r.execute_command("SLOWLOG", "LEN") == 2
    r.config_set("slowlog-log-slower-than", "-1")
    r.execute_command("SLOWLOG", "RESET")
    r.ping()
    assert r.execute_command("SLOWLOG", "LEN") == 0


def test_slowlog_exec_not_logged_its_commands_are(fresh):
    r = fresh
    r.config_set("slowlog-log-slower-than", "100000")
    r.execute_command("MULTI")
    r.execute_command("DEBUG", "SLEEP", "0.15")
    r.ping()
    r.execute_command("EXEC")
    names = [e[3][0].lower() for e in r.execute_command("SLOWLOG", "GET", "-1")]
    assert names == [b"debug"]


def test_latency_monitor_events(fresh):
    r = fresh
    r.config_set("latency-monitor-threshold", "50")
    r.execute_command("DEBUG", "SLEEP", "0.06")
    latest = r.execute_command("LATENCY", "LATEST")
    assert len(latest) == 1 and latest[0][0] == b"command" and 50 <= latest[0][2] <= latest[0][3]
    hist = r.execute_command("LATENCY", "HISTORY", "command")
    assert len(hist) == 1 and hist[0][1] >= 50
    assert r.execute_command("LATENCY", "HISTORY", "nosuch") == []
    assert len(r.execute_command("LATENCY", "DOCTOR")) > 0
    assert r.execute_command("LATENCY", "RESET", "nosuch") == 0
    assert r.execute_command("LATENCY", "RESET") == 1
    assert r.execute_command("LATENCY", "LATEST") == []


def test_latency_histogram(fresh):
    r = fresh
    r.set("a", "b")
    r.set("a", "c")
    r.execute_command("CLIENT", "ID")
    h = r.execute_command("LATENCY", "HISTOGRAM", "set", "client", "nosuch")
    h = {h[i]: h[i + 1] for i in range(0, len(h), 2)}
    assert set(h) == {b"set", b"client|id"}
    s = h[b"set"]
    assert s[0] == b"calls" and s[1] == 2 and s[2] == b"histogram_usec"
    buckets = s[3]
    assert buckets[-1] == 2 and all(isinstance(v, int) for v in buckets)
    assert all(buckets[i] < buckets[i + 2] for i in range(0, len(buckets) - 2, 2))


@pytest.mark.parametrize("argv,keys", [
    (["get", "key"], [b"key"]),
    (["set", "k1", "v"], [b"k1"]),
    (["mset", "a", "1", "b", "2"], [b"a", b"b"]),
    (["eval", "return 1", "2", "x", "y", "arg"], [b"x", b"y"]),
    (["eval", "return 1", "0"], []),
    (["zunionstore", "dst", "2", "a", "b", "WEIGHTS", "1", "2"], [b"dst", b"a", b"b"]),
    (["zunion", "2", "a", "b"], [b"a", b"b"]),
    (["sort", "k", "LIMIT", "0", "1", "BY", "w*", "STORE", "dst"], [b"k", b"dst"]),
    (["lcs", "key1", "key2"], [b"key1", b"key2"]),
])
def test_command_getkeys(q, argv, keys):
    r = q
    assert r.execute_command("COMMAND", "GETKEYS", *argv) == keys


@pytest.mark.parametrize("argv,err", [
    (["nosuch", "a"], "Invalid command specified"),
    (["ping", "x"], "The command has no key arguments"),
    (["set", "k"], "Invalid number of arguments specified for command"),
    (["get"], "wrong number of arguments for 'command|getkeys' command"),
    (["zunion", "5", "a"], "Invalid arguments specified for command"),
])
def test_command_getkeys_errors(q, argv, err):
    r = q
    with pytest.raises(redis.ResponseError, match=err):
        r.execute_command("COMMAND", "GETKEYS", *argv)


def test_command_info_eval_movablekeys(q):
    r = q
    info = r.execute_command("COMMAND", "INFO", "eval")
    assert b"movablekeys" in info[0][2]


@pytest.mark.parametrize("argv,want", [
    (["set", "k1", "v1"], [[b"k1", [b"OW", b"update"]]]),
    (["set", "k1", "v1", "GET"], [[b"k1", [b"RW", b"access", b"update"]]]),
    (["mset", "k1", "v1", "k2", "v2"], [[b"k1", [b"OW", b"update"]], [b"k2", [b"OW", b"update"]]]),
    (["LMOVE", "k1", "k2", "left", "right"], [[b"k1", [b"RW", b"access", b"delete"]], [b"k2", [b"RW", b"insert"]]]),
    (["sort", "k1", "store", "k2"], [[b"k1", [b"RO", b"access"]], [b"k2", [b"OW", b"update"]]]),
    (["eval", "return 1", "1", "x"], [[b"x", [b"RW", b"access", b"update"]]]),
    (["eval", "return 1", "0"], []),
])
def test_command_getkeysandflags(q, argv, want):
    assert q.execute_command("COMMAND", "GETKEYSANDFLAGS", *argv) == want


def test_command_getkeysandflags_errors(q):
    with pytest.raises(redis.ResponseError, match="The command has no key arguments"):
        q.execute_command("COMMAND", "GETKEYSANDFLAGS", "ping", "x")
    with pytest.raises(redis.ResponseError, match="Invalid arguments specified for command"):
        q.execute_command("COMMAND", "GETKEYSANDFLAGS", "zunion", "5", "a")


def _by_name(entries):
    """COMMAND's entries by name, subcommands sorted (Redis lists them in
    its hash table's order)."""
    def norm(e):
        e = list(e)
        e[9] = sorted(norm(s) for s in e[9])
        return e
    return {e[0]: norm(e) for e in entries}


def _pairs(m):
    """A map's pairs, from a RESP3 map or a RESP2 flat array."""
    return list(m) if isinstance(m, RespMap) else list(zip(m[::2], m[1::2]))


def _docs(flat):
    def norm(d):
        d = dict(_pairs(d))
        if b"subcommands" in d:
            d[b"subcommands"] = sorted((k, repr(norm(v))) for k, v in _pairs(d[b"subcommands"]))
        return d
    return {k: norm(v) for k, v in _pairs(flat)}


# Subcommands only one side has: CLIENT SETINFO (7.2's, which clients send on
# connect) on latchd; SCRIPT DEBUG (the Lua debugger) on Redis.
UNSHARED = {b"client", b"script"}


@pytest.mark.parametrize("proto", [2, 3])
def test_command_info_and_docs_are_redis_own(server, reference_redis, proto):
    mine, ref = RawConn(server.host, server.port), RawConn(reference_redis.host, reference_redis.port)
    for c in (mine, ref):
        c.cmd("HELLO", str(proto))
    ours, theirs = _by_name(parse(mine.cmd("COMMAND"))), _by_name(parse(ref.cmd("COMMAND")))
    shared = set(ours) & set(theirs) - UNSHARED
    assert len(shared) > 200
    assert [n for n in sorted(shared) if ours[n] != theirs[n]] == []
    ours, theirs = _docs(parse(mine.cmd("COMMAND", "DOCS"))), _docs(parse(ref.cmd("COMMAND", "DOCS")))
    assert [n for n in sorted(shared) if ours[n] != theirs[n]] == []
    # one command's bytes, whole, in this protocol
    assert mine.cmd("COMMAND", "DOCS", "set") == ref.cmd("COMMAND", "DOCS", "set")
    assert mine.cmd("COMMAND", "INFO", "lmove") == ref.cmd("COMMAND", "INFO", "lmove")


CLIENT_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
                 "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
                 "events", "cmd", "user", "redir", "resp"]


def test_client_list_fields_as_redis(q):
    r = q
    line = r.execute_command("CLIENT", "LIST").decode().strip().split("\n")[-1]
    kv = [f.split("=", 1) for f in line.split(" ")]
    assert [k for k, _ in kv] == CLIENT_FIELDS
    d = dict(kv)
    assert d["qbuf"] == "26" and d["argv-mem"] == "10" and d["multi-mem"] == "0"
    assert d["obl"] == "0" and d["oll"] == "0" and d["omem"] == "0" and d["cmd"] == "client|list"
    info = r.execute_command("CLIENT", "INFO").decode().strip()
    assert [f.split("=", 1)[0] for f in info.split(" ")] == CLIENT_FIELDS
    assert dict(f.split("=", 1) for f in info.split(" "))["qbuf"] == "26"


def redis_cli(server, *args, seconds=None):
    """redis-cli's output; with seconds, what it printed until stopped."""
    import subprocess
    argv = ["stdbuf", "-o0", "redis-cli", "-p", str(server.port)] + list(args)
    try:
        out = subprocess.run(argv, capture_output=True, timeout=seconds or 20)
        return out.stdout.decode()
    except subprocess.TimeoutExpired as e:
        return (e.stdout or b"").decode()


def test_redis_cli_stat_bigkeys_latency_history(server, r):
    r.set("small", "x")
    r.set("big", "y" * 500)
    r.hset("h", mapping={"a": "1", "b": "2"})
    stat = redis_cli(server, "--stat", "-i", "0.2", seconds=1.5).splitlines()
    assert stat[0].startswith("------- data ------") and "requests" in stat[1]
    assert re.match(r"3\s+\S+\s+\d+\s+0\s+\d+ \(\+\d+\)", stat[2])
    big = redis_cli(server, "--bigkeys")
    assert "Biggest string found '\"big\"' has 500 bytes" in big
    assert "2 strings with 501 bytes" in big and "1 hashs with 2 fields" in big
    hist = redis_cli(server, "--latency-history", "-i", "1", seconds=2.5).splitlines()
    samples = [l for l in hist[:-1] if not l.startswith(" -- ")]   # the last may be cut; " -- 1.00 seconds range" ends each
    assert len(samples) > 2 and all(re.fullmatch(r"\d+ \d+ \d+\.\d\d \d+", l) for l in samples)
    assert any(re.fullmatch(r" -- \d+\.\d\d seconds range", l) for l in hist)


LATCHD_EXTRA_INFO = {"latchd_version", "libuv_version"}


@pytest.mark.parametrize("section", ["server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                                     "errorstats", "cluster"])
def test_info_fields_latchd_only(latchd_factory, reference_redis, section):
    """Each section's field names in Redis 7.0.15's order, values of the
    same shape (a number where Redis has one); latchd's own fields aside."""
    ours = Q(latchd_factory()).execute_command("INFO", section).decode()
    theirs = Q(reference_redis).execute_command("INFO", section).decode()

    def pairs(text):
        return [l.split(":", 1) for l in text.split("\r\n") if l and not l.startswith("#")]

    mine = [(k, v) for k, v in pairs(ours) if k not in LATCHD_EXTRA_INFO]
    ref = pairs(theirs)
    ref_keys = [k for k, _ in ref]
    assert [k for k, _ in mine if k in ref_keys] == [k for k in ref_keys if k in dict(mine)]
    missing = [k for k in ref_keys if k not in dict(mine)]
    # persistence: latchd keeps nothing on disk and prints only its fields of it
    if section != "persistence":
        assert missing == []
    num = re.compile(r"-?\d+(\.\d+)?%?$")
    for k, v in ref:
        if k in dict(mine) and num.match(v):
            assert num.match(dict(mine)[k]), (k, dict(mine)[k])


def test_total_reads_and_writes_processed_count_each_round_trip(server, q):
    def counts():
        return [int(stat_line(q, "stats", f)) for f in ("total_reads_processed", "total_writes_processed")]
    before = counts()
    c = RawConn(server.host, server.port)
    for _ in range(20):
        assert c.cmd("PING") == b"+PONG\r\n"   # one read and one write each
    reads, writes = (a - b for a, b in zip(counts(), before))
    assert reads >= 20 and writes >= 20
    q.execute_command("CONFIG", "RESETSTAT")
    assert counts()[0] <= 2


def test_lolwut_is_the_version_line(server):
    c = RawConn(server.host, server.port)
    assert c.cmd("LOLWUT") == b"$18\r\nRedis ver. 7.0.15\n\r\n"
    assert c.cmd("LOLWUT", "VERSION", "7", "1", "2") == b"$18\r\nRedis ver. 7.0.15\n\r\n"
    assert c.cmd("LOLWUT", "VERSION", "x") == b"-ERR value is not an integer or out of range\r\n"
    c.cmd("HELLO", "3")
    assert c.cmd("LOLWUT") == b"=22\r\ntxt:Redis ver. 7.0.15\n\r\n"


def test_blocked_command_counted_when_it_replies(server, q):
    """A blocked BLPOP is a call when it blocks, and the rest (failed_calls,
    errorstats, the slow log with its own arguments) when it replies."""
    q.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    q.execute_command("CONFIG", "RESETSTAT")
    q.execute_command("SLOWLOG", "RESET")
    rd = RawConn(server.host, server.port)
    rid = parse(rd.cmd("CLIENT", "ID"))
    rd.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n")
    for _ in range(100):
        if stat_line(q, "clients", "blocked_clients") == "1":
            break
        time.sleep(0.01)
    assert fields(stat_line(q, "commandstats", "cmdstat_blpop"))["calls"] == "1"   # counted as it blocks
    q.execute_command("RPUSH", "l", "x")
    assert parse(rd.read_reply()) == [b"l", b"x"]
    assert fields(stat_line(q, "commandstats", "cmdstat_blpop"))["calls"] == "1"
    entries = [e[3] for e in q.execute_command("SLOWLOG", "GET", "10")]
    assert [b"BLPOP", b"l", b"0"] in entries
    rd.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n")
    for _ in range(100):
        if stat_line(q, "clients", "blocked_clients") == "1":
            break
        time.sleep(0.01)
    assert q.execute_command("CLIENT", "UNBLOCK", rid, "ERROR") == 1
    assert rd.read_reply().startswith(b"-UNBLOCKED")
    st = fields(stat_line(q, "commandstats", "cmdstat_blpop"))
    assert (st["calls"], st["failed_calls"]) == ("2", "1")
    assert fields(stat_line(q, "errorstats", "errorstat_UNBLOCKED"))["count"] == "1"
    q.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
