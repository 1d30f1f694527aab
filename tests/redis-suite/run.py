#!/usr/bin/env python3
"""Redis 7.0.15's own Tcl test suite, run against latchd and redis-server.

Owns fetching the suite from Debian's `redis` source package, starting a
server per unit, running `runtest` on it and judging the result against the
ratchet list (tests/redis-suite/not-passing.tsv); scripts/redis-suite runs it.

Usage: run.py [--server latchd|redis|both] [--tls] [--jobs N] [--update-list]
              [--table FILE] [UNIT ...]

Exit status 0 when, for latchd, every unit ran with no `err` and no
`exception` outside the list and no listed test passed.
"""

import argparse
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(REPO, "build", "redis-suite")
LIST_FILE = os.path.join(HERE, "not-passing.tsv")
EXCLUDED_FILE = os.path.join(HERE, "excluded.tsv")
LATCHD_BIN = os.environ.get("LATCHD_BIN", os.path.join(REPO, "build", "latchd"))
REDIS_BIN = shutil.which("redis-server") or "/usr/bin/redis-server"
VERSION = "7.0.15"

# The runtest flags, the same for both servers, each with its reason.
RUNTEST_FLAGS = [
    # One test client: in external mode every client shares the one server
    # and each test starts with FLUSHALL.
    "--clients", "1",
    # An exception inside a test is reported as that test's `err` and the
    # unit goes on, so one missing command does not hide the rest of a unit.
    "--durable",
    # Replication needs a second server the external mode cannot start.
    "--tags", "-needs:repl",
    # A test that waits for something that never comes ends the unit after
    # this long instead of the default 20 minutes.
    "--timeout", "60",
]

# Server flags the suite's external mode needs, the same for both servers.
SERVER_FLAGS = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--enable-debug-command", "yes"]

# Units whose every test Redis tags external:skip (measured: 0 tests run in
# external mode on redis-server): the suite starts the server itself, from a
# config file it writes, with src/redis-server being the server under test.
OWN_MODE_UNITS = {"unit/acl", "unit/acl-v2", "unit/aofrw", "unit/auth", "unit/client-eviction",
                  "unit/cluster", "unit/cluster-scripting", "unit/cluster/links",
                  "unit/cluster/misc", "unit/info", "unit/limits", "unit/maxmemory",
                  "unit/memefficiency", "unit/networking", "unit/obuf-limits",
                  "unit/oom-score-adj", "unit/pendingquerybuf", "unit/pubsubshard",
                  "unit/shutdown", "unit/wait", "unit/tls"}

# Units whose tests only run in the suite's TLS mode (`if {$::tls}`: none
# otherwise): always run with --tls, the servers serving TLS only (port 0,
# tls-port) from the certificates tls_certs() makes, the test client
# connecting through Tcl's tls package (tcl-tls). `--tls` runs every unit
# that way.
TLS_UNITS = {"unit/tls"}

# The tests that fail only in TLS mode, listed apart: a unit's TLS run skips
# both lists' entries and judges only this one's (the other is judged by the
# plain run).
TLS_LIST_FILE = os.path.join(HERE, "not-passing-tls.tsv")


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- the suite

def apt_opts(aptdir):
    return ["-o", "Dir::Etc::SourceList=%s/sources.list" % aptdir,
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", "Dir::State::Lists=%s/lists" % aptdir,
            "-o", "Dir::Cache=%s/cache" % aptdir,
            "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root"]


def fetch_suite():
    """The extracted source tree of Debian's redis 7.0.15 (patches applied),
    downloaded once into build/redis-suite/ with a private apt state so the
    system's apt configuration is left alone."""
    src = os.path.join(BUILD, "redis-%s" % VERSION)
    if os.path.isfile(os.path.join(src, "runtest")):
        return src
    aptdir = os.path.join(BUILD, "apt")
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(aptdir, d), exist_ok=True)
    with open(os.path.join(aptdir, "sources.list"), "w") as f:
        for suite, uri in (("bookworm", "http://deb.debian.org/debian"),
                           ("bookworm-updates", "http://deb.debian.org/debian"),
                           ("bookworm-security", "http://deb.debian.org/debian-security")):
            f.write("deb-src %s %s main\n" % (uri, suite))
    opts = apt_opts(aptdir)
    dl = os.path.join(BUILD, "download")
    shutil.rmtree(dl, ignore_errors=True)
    os.makedirs(dl)
    subprocess.run(["apt-get"] + opts + ["-qq", "update"], check=True)
    subprocess.run(["apt-get"] + opts + ["-qq", "source", "--download-only", "redis"],
                   cwd=dl, check=True)
    dscs = [f for f in os.listdir(dl) if f.endswith(".dsc")]
    if len(dscs) != 1 or not dscs[0].startswith("redis_%s-" % VERSION):
        sys.exit("redis-suite: expected Debian's redis %s source, got %s" % (VERSION, dscs))
    tmp = src + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(["dpkg-source", "--no-check", "-x", dscs[0], tmp], cwd=dl, check=True,
                   stdout=subprocess.DEVNULL)
    os.rename(tmp, src)
    shutil.rmtree(dl)
    log("redis-suite: Redis %s test suite from Debian's %s" % (VERSION, dscs[0]))
    return src


def suite_tree(src, kind, slot=0):
    """A runtest tree per server kind and per unit running at once (tests/tmp,
    which runtest empties when it starts and ends, and the server binary the
    suite starts are its own): src/redis-server is that server, the tools
    are redis-tools' ones."""
    tree = os.path.join(BUILD, "tree-" + kind + ("-%d" % slot if slot else ""))
    if not os.path.isdir(tree):
        tmp = tree + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(os.path.join(tmp, "src"))
        shutil.copytree(os.path.join(src, "tests"), os.path.join(tmp, "tests"), symlinks=True)
        shutil.copy(os.path.join(src, "runtest"), tmp)
        os.rename(tmp, tree)
    links = {"redis-server": LATCHD_BIN if kind == "latchd" else REDIS_BIN}
    for tool in ("redis-cli", "redis-benchmark", "redis-check-aof", "redis-check-rdb"):
        links[tool] = shutil.which(tool) or "/usr/bin/" + tool
    for name, target in links.items():
        path = os.path.join(tree, "src", name)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(os.path.abspath(target), path)
    return tree


def tls_certs(tree):
    """tests/tls/ as Redis's utils/gen-test-certs.sh makes it: a CA, a
    server-only, a client-only and a generic certificate (RSA: a test
    encrypts the key with `openssl rsa`), and DH parameters (RFC 7919's
    ffdhe2048, which takes no time to make)."""
    with _certs_lock:   # units running side by side share the tree
        _make_certs(os.path.join(tree, "tests", "tls"))


_certs_lock = threading.Lock()


def _make_certs(d):
    if os.path.isfile(os.path.join(d, "redis.dh")):
        return
    os.makedirs(d, exist_ok=True)

    def ssl(*args, stdin=None):
        return subprocess.run(["openssl"] + list(args), cwd=d, input=stdin, check=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout

    ssl("genrsa", "-out", "ca.key", "2048")
    ssl("req", "-x509", "-new", "-nodes", "-sha256", "-key", "ca.key", "-days", "3650",
        "-subj", "/O=Redis Test/CN=Certificate Authority", "-out", "ca.crt")
    with open(os.path.join(d, "openssl.cnf"), "w") as f:
        f.write("[ server_cert ]\nkeyUsage = digitalSignature, keyEncipherment\nnsCertType = server\n"
                "[ client_cert ]\nkeyUsage = digitalSignature, keyEncipherment\nnsCertType = client\n")
    for name, cn, ext in (("server", "Server-only", ["-extfile", "openssl.cnf", "-extensions", "server_cert"]),
                          ("client", "Client-only", ["-extfile", "openssl.cnf", "-extensions", "client_cert"]),
                          ("redis", "Generic-cert", [])):
        ssl("genrsa", "-out", name + ".key", "2048")
        csr = ssl("req", "-new", "-sha256", "-subj", "/O=Redis Test/CN=" + cn, "-key", name + ".key")
        ssl("x509", "-req", "-sha256", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAserial", "ca.txt",
            "-CAcreateserial", "-days", "365", *ext, "-out", name + ".crt", stdin=csr)
    ssl("genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048", "-out", "redis.dh")


def all_units(src):
    with open(os.path.join(src, "tests", "test_helper.tcl")) as f:
        text = f.read()
    body = re.search(r"set ::all_tests \{(.*?)\}", text, re.S).group(1)
    return [u for u in body.split() if u.startswith("unit/")]


# ---------------------------------------------------------------- lists

def read_tsv(path):
    """{unit: {test: reason}} from a `unit<TAB>test<TAB>reason` file; a test
    of `*` stands for the whole unit."""
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(parts):
                sys.exit("%s:%d: expected unit<TAB>test<TAB>reason" % (path, n))
            entries.setdefault(parts[0], {})[parts[1]] = parts[2]
    return entries


def write_list(path, entries):
    with open(path) as f:
        header = [l for l in f.read().splitlines() if l.startswith("#")]
    with open(path, "w") as f:
        f.write("\n".join(header) + "\n")
        for unit in sorted(entries):
            for test in sorted(entries[unit], key=lambda t: (t != "*", t)):
                f.write("%s\t%s\t%s\n" % (unit, test, entries[unit][test]))


# ---------------------------------------------------------------- servers

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


_bases_lock = threading.Lock()
_bases_taken = set()   # the bases of units running now (--jobs)


def free_port_range(width=140):
    """A base port with the `width` ports around it free, and the same
    10000 above (the suite checks both): its test server listens below its
    --baseport and the servers it starts above, and its defaults (21079,
    21111) may be taken by another run. Both ranges lie below the kernel's
    ephemeral ports (32768 up), where connections come and go; like the
    suite's own check, a port in TIME_WAIT counts as free."""
    for _ in range(200):
        base = 20100 + 200 * (int.from_bytes(os.urandom(2), "little") % 12)
        with _bases_lock:
            if base in _bases_taken:
                continue
            _bases_taken.add(base)
        socks = []
        try:
            for port in range(base - 40, base - 40 + width):
                for p in (port, port + 10000):
                    s = socket.socket()
                    socks.append(s)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind(("127.0.0.1", p))
            return base
        except OSError:
            with _bases_lock:
                _bases_taken.discard(base)
            time.sleep(0.05)
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range for the suite")


class Server:
    """One server for a unit in external mode, on a free port."""

    def __init__(self, kind, workdir, tls_dir=None):
        self.kind = kind
        self.port = free_port()
        binary = LATCHD_BIN if kind == "latchd" else REDIS_BIN
        self.logpath = os.path.join(workdir, "%s-%d.log" % (kind, self.port))
        self.logf = open(self.logpath, "w")
        listen = ["--port", str(self.port)]
        if tls_dir:
            # as the suite's own servers in TLS mode (tests/support/server.tcl)
            listen = ["--port", "0", "--tls-port", str(self.port)]
            for opt, name in (("cert", "server.crt"), ("key", "server.key"),
                              ("client-cert", "client.crt"), ("client-key", "client.key"),
                              ("dh-params", "redis.dh"), ("ca-cert", "ca.crt")):
                listen += ["--tls-%s-file" % opt, os.path.join(tls_dir, name)]
        # a directory of its own: what the unit saves (dump.rdb, the AOF
        # directory) must not meet another unit's running beside it
        self.dir = tempfile.mkdtemp(dir=workdir, prefix="%s-%d." % (kind, self.port))
        self.proc = subprocess.Popen([binary] + listen + SERVER_FLAGS,
                                     stdout=self.logf, stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("%s exited at start (status %s), log %s"
                                   % (kind, self.proc.returncode, self.logpath))
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("%s did not listen on %d" % (kind, self.port))

    def stop(self):
        """The server's exit status if it died by itself, else None."""
        died = self.proc.poll()
        if died is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return died


# ---------------------------------------------------------------- one run

RESULT_RE = re.compile(r"^\[(ok|err|exception|skip|ignore)\]: (.*)$")


class Result:
    def __init__(self):
        self.ok, self.err, self.skip, self.ignore = [], {}, [], []
        self.exception = None
        self.timed_out = None   # the test in progress when the suite gave up
        self.block_errors = []  # block_key()s of server blocks that failed
        self.crash = None
        self.output = ""


def block_key(message):
    """How the list names a server block that fails outside its tests: "!"
    and the start of the error (a --durable err loses its first 10
    characters, so the same cut is made everywhere). The arguments an
    unknown command names are left out (a test may choose them at random),
    and so is an assertion's context (it names the suite's path)."""
    message = message.split(", with args beginning with:")[0].split(" (context: ")[0]
    return "!" + " ".join(message.split())[:100]


def parse(output, res):
    lines = output.splitlines()
    for i, line in enumerate(lines):
        m = RESULT_RE.match(line)
        if not m:
            continue
        status, data = m.groups()
        if status == "ok":
            res.ok.append(re.sub(r" \(\d+ ms\)$", "", data))
        elif status == "err":
            detail = lines[i + 1] if i + 1 < len(lines) else ""
            name, n = re.subn(r" in tests/\S+\.tcl$", "", data)
            if n:
                res.err[name] = detail
            else:
                # --durable reports a start_server block that failed outside
                # its tests as an err named by the error: the rest of that
                # block never ran, the unit went on.
                res.block_errors.append(block_key(data))
        elif status == "exception":
            res.exception = (data + " " + (lines[i + 1] if i + 1 < len(lines) else "")).strip()
        elif status == "skip":
            res.skip.append(data)
        else:
            res.ignore.append(data)
    m = re.search(r"^\[TIMEOUT\].*\n.*\(IN PROGRESS\) (.*)$", output, re.M)
    if m:
        res.timed_out = m.group(1).strip()
        res.exception = "timed out in: " + res.timed_out
    elif "[TIMEOUT]" in output:
        res.exception = "timed out"


def own_mode_refusal(tree, workdir):
    """Why latchd cannot stand in for src/redis-server with the suite's
    default config (tests/assets/default.conf), or None. The suite waits two
    minutes for Redis's " PID: <pid>" start-up line before it gives up on a
    server, so this is found out first, in a second."""
    d = tempfile.mkdtemp(dir=workdir)
    conf = os.path.join(d, "redis.conf")
    shutil.copy(os.path.join(tree, "tests", "assets", "default.conf"), conf)
    with open(conf, "a") as f:
        f.write("\nport %d\npidfile %s/pid\n" % (free_port(), d))
    p = subprocess.Popen([LATCHD_BIN, conf], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        out = p.communicate(timeout=1.5)[0]
    except subprocess.TimeoutExpired:
        p.terminate()
        out = p.communicate()[0]
    shutil.rmtree(d)
    text = out.decode("utf-8", "replace")
    if " PID: %d" % p.pid in text:
        return None
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if p.returncode not in (None, 0, -signal.SIGTERM) and lines:
        bad = [l for l in lines if l.startswith(">>>") or "Bad directive" in l]
        return "latchd refuses the suite's config: " + " ".join(bad[:2] or lines[:2])
    return "latchd does not log Redis's \" PID: <pid>\" start-up line the suite waits for"


def run_unit(tree, kind, unit, skip=(), only=(), workdir=None, tls=False):
    """Run one unit against a fresh server of `kind`, in the suite's TLS mode
    when tls; a Result. The suite's output is kept in workdir as
    <kind>-<unit>[-tls][-listed].out."""
    res = Result()
    tls = tls or unit in TLS_UNITS
    tls_dir = os.path.join(tree, "tests", "tls") if tls else None
    if tls:
        tls_certs(tree)
    own = unit in OWN_MODE_UNITS
    if own and kind == "latchd":
        res.exception = own_mode_refusal(tree, workdir)
        if res.exception:
            return res
    server = None
    if not own:
        try:
            server = Server(kind, workdir, tls_dir)
        except RuntimeError as e:
            res.exception = str(e)
            return res
    base = free_port_range()
    argv = ["./runtest", "--single", unit] + RUNTEST_FLAGS + [
        "--baseport", str(base), "--portcount", "100"]
    if tls:
        argv.append("--tls")
    if server:
        argv += ["--host", "127.0.0.1", "--port", str(server.port)]
    with tempfile.NamedTemporaryFile("w", dir=workdir, suffix=".skip", delete=False) as f:
        f.write("".join(t + "\n" for t in skip))
    argv += ["--skipfile", f.name]
    for t in only:
        argv += ["--only", t]
    env = dict(os.environ, TERM="dumb")
    try:
        p = subprocess.run(argv, cwd=tree, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=1800, start_new_session=True)
        res.output = p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        res.output = (e.stdout or b"").decode("utf-8", "replace")
        res.exception = "the unit ran past 30 minutes"
    with _bases_lock:
        _bases_taken.discard(base)
    parse(res.output, res)
    os.unlink(f.name)
    if not (res.exception or "Testing " + unit in res.output):
        res.exception = "the suite did not start: " + " ".join(res.output.split("\n")[1:3])
    out = "%s-%s%s%s.out" % (kind, unit.replace("/", "_"), "-tls" if tls else "",
                             "-listed" if only else "")
    with open(os.path.join(workdir, out), "w") as f:
        f.write(res.output)
    if server:
        died = server.stop()
        if died is not None:
            res.crash = "%s exited with status %s during the unit (log %s)" % (
                kind, died, server.logpath)
    return res


# ---------------------------------------------------------------- judging

def reason_for(detail):
    """A reason for a newly failing test, from the first line of its error."""
    # A --durable err loses its message's first 10 characters ("ERR unknow").
    m = re.search(r"(?:unknown|^n) command '([^']*)'", detail)
    if m:
        return "needs %s" % m.group(1).upper()
    m = re.search(r"(?:unknown|^n|: n) subcommand (?:or wrong number of arguments for )?'([^']*)'\. "
                  r"Try (\S+) HELP", detail)
    if m:
        return "needs %s %s" % (m.group(2).upper(), m.group(1).upper())
    m = re.search(r"Unsupported CONFIG parameter: (\S+)|number of arguments for CONFIG SET - '([^']*)'", detail)
    if m:
        return "needs config %s" % (m.group(1) or m.group(2))
    detail = " ".join(detail.split())
    detail = detail.split(" (context: ")[0]   # it names the suite's path
    return "differs: " + (detail[:120] or "no detail")


def passed(res):
    """The test names that passed: a name can stand for several tests (unit/
    scripting runs each of its tests through EVAL and through FCALL), and
    it passed only if none of them failed."""
    return set(res.ok) - set(res.err)


def passes_again(tree, unit, names, excluded, workdir, tls):
    """Which of `names` pass when run once more on their own: a timing test
    on a loaded machine can fail (or pass) once by chance, so a verdict
    that changes the list or fails the run is taken twice."""
    if not names:
        return set()
    again = run_unit(tree, "latchd", unit, skip=list(excluded), only=list(names), workdir=workdir,
                     tls=tls)
    return passed(again) & set(names)


def judge_latchd(tree, unit, listed, excluded, workdir, update, tls=False, listed_apart=None):
    """Run one unit against latchd both ways: (problems, ok count, new list,
    listed tests skipped, excluded tests skipped). A unit listed whole counts
    the tests its listed pass reached (at least 1). listed_apart (the plain
    list, in a TLS run) is skipped like excluded but counted as listed."""
    problems = []
    apart = [t for t in (listed_apart or {}) if t != "*" and not t.startswith("!")]
    excluded = dict(excluded, **{t: "" for t in apart})
    if update and "*" in listed:
        listed = {}   # derived again from a run of the whole unit
    whole = "*" in listed
    new_listed = dict(listed)
    skip = list(excluded) + [t for t in listed if t != "*" and not t.startswith("!")]
    main = None
    # --update-list reruns a unit that timed out in a test with that test
    # listed, so the tests after it are judged too.
    # --update-list reruns the unit until a run with every listed test
    # skipped adds nothing: skipping a test can change what later ones meet
    # (a hang, a block that fails differently).
    for _ in range(8 if update else 1):
        if whole:
            break
        main = run_unit(tree, "latchd", unit, skip=skip, workdir=workdir, tls=tls)
        if main.crash:
            problems.append("%s: %s" % (unit, main.crash))
        flaky = passes_again(tree, unit, main.err, excluded, workdir, tls)
        for name in [n for n in main.err if n in flaky]:   # the order they ran: the first may explain the rest
            log("redis-suite: %s: failed once, passed on its own: %s -- %s"
                % (unit, name, " ".join(main.err[name].split())[:300]))
        failed = {n: d for n, d in main.err.items() if n not in flaky}
        if not update:
            for name, detail in failed.items():
                problems.append("%s: [err] %s -- %s" % (unit, name, detail.strip()))
            # A listed block failure must still happen; any other must not.
            for key in main.block_errors:
                if key not in listed:
                    problems.append("%s: a server block failed outside its tests: %s" % (unit, key[1:]))
            for key in [k for k in listed if k.startswith("!") and k not in main.block_errors]:
                problems.append("%s: listed server block failure no longer happens, take it off "
                                "the list: %s" % (unit, key[1:]))
            if main.exception:
                problems.append("%s: [exception] %s" % (unit, main.exception))
            break
        for key in [k for k in new_listed if k.startswith("!")]:
            del new_listed[key]
        for key in main.block_errors:
            new_listed[key] = "a server block stops: " + reason_for(key[1:])
        for name, detail in failed.items():
            new_listed[name] = reason_for(detail)
        if main.timed_out:
            new_listed[main.timed_out] = "hangs (the suite's --timeout)"
        if main.exception and not main.timed_out:
            new_listed = {"*": "the unit stops: " + reason_for(main.exception)}
            break
        if not failed and not main.timed_out:
            break
        skip = list(excluded) + [t for t in new_listed if not t.startswith("!")]
    tests = [t for t in listed if t != "*" and not t.startswith("!")]
    if whole or tests:
        # The listed tests on their own: one that passes must leave the list.
        other = run_unit(tree, "latchd", unit, skip=list(excluded),
                         only=[] if whole else tests, workdir=workdir, tls=tls)
        if other.crash:
            problems.append("%s: %s" % (unit, other.crash))
        if whole and not other.exception and other.ok:
            if update:
                new_listed = {n: reason_for(d) for n, d in other.err.items()}
            else:
                problems.append("%s: listed as a whole but now runs (%d ok): list its failing "
                                "tests instead (scripts/redis-suite --update-list %s)"
                                % (unit, len(other.ok), unit))
        # A server block of the listed tests that failed means they did not
        # run, whatever --durable then prints (unit/tls: REPLICAOF inside a
        # nested start_server, after which its test still shows as ok).
        ok_once = set() if other.block_errors and not whole else passed(other)
        ok_twice = passes_again(tree, unit, [t for t in tests if t in ok_once], excluded, workdir, tls)
        for name in tests:
            if name in ok_once and name not in ok_twice:
                log("redis-suite: %s: listed test passed once, failed on its own: %s" % (unit, name))
            elif name in ok_once:
                if update:
                    new_listed.pop(name, None)
                else:
                    problems.append("%s: listed test now passes, take it off the list: %s"
                                    % (unit, name))
    ok = len(main.ok) if main else 0
    skipped = main.skip if main else []
    n_excluded = sum(1 for t in skipped if t in excluded and t not in apart)
    n_listed = len(skipped) - n_excluded + sum(1 for k in listed if k.startswith("!"))
    if whole:
        n_listed = max(1, len(other.ok) + len(other.err))
    return problems, ok, new_listed, n_listed, n_excluded


def run_one(opt, unit, kinds, slots, listed, plain, excluded, workdir):
    """One unit on the servers asked for, in a tree set of its own taken from
    slots: (row, problems, new list entries), its lines logged when it ends
    (units may run side by side)."""
    trees = slots.get()
    try:
        return run_one_in(opt, unit, kinds, trees, listed, plain, excluded, workdir)
    finally:
        slots.put(trees)


def run_one_in(opt, unit, kinds, trees, listed, plain, excluded, workdir):
    row = {"unit": unit, "listed": len(listed.get(unit, {}))}
    ex = excluded.get(unit, {})
    problems, new = [], listed.get(unit, {})
    lines = []
    if "redis" in kinds:
        r = run_unit(trees["redis"], "redis", unit, skip=list(ex), workdir=workdir, tls=opt.tls)
        row["redis"] = "%d%s" % (len(r.ok), "" if not (r.err or r.exception) else
                                 " (%d err%s)" % (len(r.err), ", exception" if r.exception else ""))
        if r.err or r.exception or r.crash:
            lines.append("redis-suite: %s fails on redis-server too: %s" % (
                unit, "; ".join(list(r.err)[:5] + [r.exception or r.crash or ""])))
    if "latchd" in kinds and "*" in plain.get(unit, {}):
        # listed whole for the plain run: that run judges it
        row.update(latchd="-", skipped=1, excluded=0)
        lines.append("redis-suite: %-28s latchd ok -     listed whole in %s" % (
            unit, os.path.basename(LIST_FILE)))
    elif "latchd" in kinds:
        started = time.time()
        problems, ok, new, n_listed, n_excluded = judge_latchd(
            trees["latchd"], unit, listed.get(unit, {}), ex, workdir, opt.update_list,
            tls=opt.tls, listed_apart=plain.get(unit) if opt.tls else None)
        row["skipped"], row["excluded"] = n_listed, n_excluded
        if opt.update_list:
            row["listed"] = len(new)
        row["latchd"] = str(ok) if "*" not in (new if opt.update_list else listed.get(unit, {})) else "-"
        lines.append("redis-suite: %-28s latchd ok %-5s listed %-4d %s (%.0f s)" % (
            unit, row["latchd"], row["listed"], "FAIL" if problems else "pass",
            time.time() - started))
    else:
        lines.append("redis-suite: %-28s redis ok %s" % (unit, row["redis"]))
    for line in lines:
        log(line)
    return row, problems, new


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", choices=("latchd", "redis", "both"), default="latchd")
    ap.add_argument("--tls", action="store_true",
                    help="every unit in the suite's TLS mode, judged against not-passing-tls.tsv")
    ap.add_argument("--jobs", type=int, default=1,
                    help="units run side by side (each has its own servers and ports)")
    ap.add_argument("--update-list", action="store_true",
                    help="rewrite the list from this run instead of failing")
    ap.add_argument("--table", help="write the per-unit markdown table here")
    ap.add_argument("units", nargs="*")
    opt = ap.parse_args()

    src = fetch_suite()
    units = opt.units or all_units(src)
    unknown = [u for u in units if u not in all_units(src)]
    if unknown:
        sys.exit("redis-suite: no such unit: %s" % " ".join(unknown))
    list_file = TLS_LIST_FILE if opt.tls else LIST_FILE
    plain = read_tsv(LIST_FILE)
    listed = read_tsv(list_file)
    excluded = read_tsv(EXCLUDED_FILE)
    kinds = ["redis", "latchd"] if opt.server == "both" else [opt.server]
    jobs = max(1, opt.jobs)
    slots = queue.Queue()
    for slot in range(jobs):
        slots.put({k: suite_tree(src, k, slot) for k in kinds})
    workdir = os.path.join(BUILD, "work")
    os.makedirs(workdir, exist_ok=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(lambda u: run_one(opt, u, kinds, slots, listed, plain, excluded,
                                               workdir), units))
    rows = [d[0] for d in done]
    problems = [p for d in done for p in d[1]]

    if opt.update_list:
        for unit, (_, _, new) in zip(units, done):
            if new:
                listed[unit] = new
            else:
                listed.pop(unit, None)
        write_list(list_file, listed)
        log("redis-suite: wrote %s" % os.path.relpath(list_file, REPO))
    if opt.table:
        with open(opt.table, "w") as f:
            f.write("| unit | redis-server ok | latchd ok | latchd still listed |\n|---|---|---|---|\n")
            for r in rows:
                f.write("| %s | %s | %s | %s |\n" % (r["unit"], r.get("redis", ""),
                                                      r.get("latchd", ""), r["listed"]))
    for p in problems:
        log("redis-suite: FAIL " + p)
    if "latchd" in kinds:
        total_ok = sum(int(r["latchd"]) for r in rows if r.get("latchd", "-") != "-")
        n_listed = sum(r["skipped"] for r in rows)
        n_excluded = sum(r["excluded"] for r in rows)
        whole = sum(1 for r in rows if r.get("latchd") == "-")
        mode = " in TLS mode" if opt.tls else ""
        log("redis-suite: %d units%s, %d ok on latchd, %d problems" % (len(rows), mode, total_ok,
                                                                       len(problems)))
        # What scripts/test's summary reads: the skips with their reasons,
        # then the closing line.
        lists = "tests/redis-suite/not-passing.tsv" + (" and not-passing-tls.tsv" if opt.tls else "")
        log("redis-suite: skipped %d: on the not-yet-passing list%s (%s; %d units listed whole)"
            % (n_listed, mode, lists, whole))
        log("redis-suite: skipped %d: fails on redis-server 7.0.15 too%s (tests/redis-suite/excluded.tsv)"
            % (n_excluded, mode))
        log("redis suite: %d passed, %d failed, %d skipped" % (total_ok, len(problems),
                                                               n_listed + n_excluded))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
