"""TLS as Redis 7.0 serves it: tls-port beside (or instead of) port, mutual
TLS, CONFIG GET/SET of the tls-* parameters and certificate reloads, bad
peers closed with a log line, redis-cli / redis-benchmark --tls. Both
servers run from certificates made here with the openssl CLI."""

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import KINDS, START_TIMEOUT, free_port, server_binary
from resp_util import encode_command
from tls_util import ByteWiseTLS, Certs

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="latchd-tls-")
    yield Certs(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def tls_server(server_factory, certs):
    """A fresh server of the current kind with TLS on srv.tls_port."""
    def start(*more):
        port = free_port()
        srv = server_factory(*certs.server_args(port, *more))
        srv.tls_port = port
        return srv
    return start


def tls_client(srv, certs, client_cert="client", **kw):
    kw.setdefault("socket_timeout", 10)
    c = redis.Redis(host="127.0.0.1", port=srv.tls_port, **certs.redis_kwargs(client_cert), **kw)
    srv._clients.append(c)
    return c


def handshake(port, ctx, timeout=10):
    """A TLS connection's outcome: the socket after the handshake, or the
    error that ended it."""
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return e
    try:
        s = ctx.wrap_socket(raw)
        # TLS 1.3 reports a refused client certificate on the first read
        s.sendall(encode_command("PING"))
        if s.recv(64) == b"":
            raise ConnectionError("closed")
        return s
    except (ssl.SSLError, OSError) as e:
        raw.close()
        return e


def wait_for_log(srv, text, timeout=10.0):
    """The server's log once it holds text (the server logs after the
    close the client saw, so allow it a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in srv.log():
            return True
        time.sleep(0.02)
    return False


# ------------------------------------------------------------ clients

def test_tls_commands_with_client_certificate(tls_server, certs):
    srv = tls_server()
    r = tls_client(srv, certs)
    assert r.ping()
    assert r.set("k", b"v" * 100000)
    assert r.get("k") == b"v" * 100000
    assert r.hincrby("lock:orders", "owner:1", 1) == 1
    assert r.pexpire("lock:orders", 30000)
    # the plain port serves the same data
    assert srv.client().get("k") == b"v" * 100000


def test_tls_without_client_certificate_when_not_required(tls_server, certs):
    srv = tls_server("--tls-auth-clients", "no")
    r = tls_client(srv, certs, client_cert=None)
    assert r.ping()
    assert r.incr("n") == 1


def test_tls_auth_clients_optional(tls_server, certs):
    srv = tls_server("--tls-auth-clients", "optional")
    assert tls_client(srv, certs, client_cert=None).ping()
    assert tls_client(srv, certs).ping()
    # a certificate it shows must still verify
    assert isinstance(handshake(srv.tls_port, certs.context("stranger")), Exception)


def test_tls_pipeline_and_large_replies(tls_server, certs):
    srv = tls_server()
    r = tls_client(srv, certs)
    big = os.urandom(3 * 1024 * 1024)
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.set("k%d" % i, i)
    p.set("big", big)
    for i in range(200):
        p.get("k%d" % i)
    p.get("big")
    out = p.execute()
    assert out[201:401] == [str(i).encode() for i in range(200)]
    assert out[-1] == big


def test_tls_pubsub_messages(tls_server, certs):
    srv = tls_server()
    subs = [tls_client(srv, certs).pubsub() for _ in range(3)]
    for p in subs:
        p.subscribe("ch")
        assert p.get_message(timeout=5)["type"] == "subscribe"
    payload = b"x" * 2000   # large enough to be a shared frame
    assert tls_client(srv, certs).publish("ch", payload) == 3
    for p in subs:
        msg = p.get_message(timeout=5)
        assert msg["data"] == payload
        p.close()


def test_tls_pubsub_burst_of_mixed_sizes(tls_server, certs):
    """Messages published in one pipeline reach a TLS subscriber in one
    flush: small ones copied, large ones shared, one past a record's size;
    all arrive whole and in order."""
    srv = tls_server()
    sub = tls_client(srv, certs).pubsub()
    sub.subscribe("burst")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    sizes = [10, 600, 100, 2000, 20000, 5, 16384, 700, 40000, 1]
    payloads = [bytes([65 + i]) * n for i, n in enumerate(sizes)]
    p = tls_client(srv, certs).pipeline(transaction=False)
    for m in payloads:
        p.publish("burst", m)
    assert p.execute() == [1] * len(payloads)
    got = [sub.get_message(timeout=5) for _ in payloads]
    assert [m["data"] for m in got] == payloads
    sub.close()


def test_tls_records_split_at_every_byte(tls_server, certs):
    srv = tls_server()
    c = ByteWiseTLS(srv.tls_port, certs.context())
    try:
        c.send(encode_command("SET", "split", "v" * 300) + encode_command("GET", "split"))
        want = b"+OK\r\n$300\r\n" + b"v" * 300 + b"\r\n"
        assert c.recv_until(len(want)) == want
    finally:
        c.close()


def test_tls_sessions_quiet_past_a_second_keep_working(tls_server, certs):
    """A session quiet for over a second (latchd then gives its record
    buffers back) serves, receives and takes records split across the
    quiet spell as before."""
    srv = tls_server()
    r = tls_client(srv, certs)
    sub = tls_client(srv, certs).pubsub()
    sub.subscribe("quiet")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    assert r.set("q", "1") and r.get("q") == b"1"
    half = ByteWiseTLS(srv.tls_port, certs.context(), pause=0)
    try:
        half.obj.write(encode_command("SET", "half", "h" * 100) + encode_command("GET", "half"))
        record = half.out.read()
        half.sock.sendall(record[:len(record) // 2])
        time.sleep(2.2)
        half.sock.sendall(record[len(record) // 2:])
        want = b"+OK\r\n$100\r\n" + b"h" * 100 + b"\r\n"
        assert half.recv_until(len(want)) == want
    finally:
        half.close()
    big = os.urandom(100 * 1024)   # several records each way
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.set("q%d" % i, i)
    p.set("qbig", big)
    p.get("qbig")
    out = p.execute()
    assert out[:101] == [True] * 101 and out[101] == big
    assert r.publish("quiet", "after") == 1
    assert sub.get_message(timeout=5)["data"] == b"after"
    sub.close()


def test_tls_input_behind_a_blocked_command_runs_without_new_bytes(tls_server, certs):
    """BLPOP then PING in one TLS record: the PING waits decrypted while the
    client is blocked and runs once a push unblocks it, with nothing more
    arriving on the socket."""
    srv = tls_server()
    s = handshake(srv.tls_port, certs.context())
    try:
        s.sendall(encode_command("BLPOP", "q", "0") + encode_command("PING"))
        wait = srv.client()
        deadline = time.monotonic() + 10
        while wait.info("clients")["blocked_clients"] != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert wait.rpush("q", "job") == 1
        want = b"*2\r\n$1\r\nq\r\n$3\r\njob\r\n+PONG\r\n"
        got = b""
        while len(got) < len(want):
            chunk = s.recv(4096)
            assert chunk
            got += chunk
        assert got == want
    finally:
        s.close()


def test_tls_clients_served_while_a_script_is_busy(tls_server, certs):
    """A script past busy-reply-threshold: a TLS client connected before it
    and one that connects (handshakes) during it both get BUSY, and SCRIPT
    KILL over a fresh TLS connection stops the script, as in Redis, whose
    processEventsWhileBlocked serves every connection type."""
    srv = tls_server()
    before = tls_client(srv, certs)
    assert before.ping()
    looper = srv.raw(timeout=10)
    assert looper.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == b"+OK\r\n"
    looper.send(encode_command("EVAL", "while true do end", "0"))
    time.sleep(0.4)
    with pytest.raises(redis.exceptions.ResponseError, match="BUSY"):
        before.get("x")
    fresh = tls_client(srv, certs)
    with pytest.raises(redis.exceptions.ResponseError, match="BUSY"):
        fresh.get("x")
    assert tls_client(srv, certs).execute_command("SCRIPT", "KILL") == b"OK"
    assert looper.read_reply(timeout=10).startswith(b"-ERR Script killed by user with SCRIPT KILL")
    assert fresh.ping() and before.ping()


def test_tls_big_argument_buffer_sized_once(tls_server, certs):
    """A big argument arriving a TLS record at a time gets a query buffer of
    its size, as over plain TCP (Redis's PROTO_MBULK_BIG_ARG sizing): not
    twice it, which is what client eviction and maxmemory count."""
    srv = tls_server()
    s = handshake(srv.tls_port, certs.context())
    try:
        s.sendall(encode_command("CLIENT", "SETNAME", "big"))
        assert s.recv(16) == b"+OK\r\n"
        s.sendall(b"*2\r\n$3\r\nGET\r\n$300000\r\n" + b"v" * 299000)
        watcher = srv.client()
        deadline = time.monotonic() + 10
        while True:
            mine = [cl for cl in watcher.client_list() if cl["name"] == "big"]
            if mine and int(mine[0]["qbuf"]) >= 299000:
                break
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert int(mine[0]["qbuf-free"]) < 300000 // 4   # redis-server: 28670
    finally:
        s.close()


def test_tls_only_with_port_0(certs):
    """port 0 and a tls-port: TLS only, as in Redis (latchd's port 0 alone
    still picks an ephemeral plain port); INFO's tcp_port is the TLS one."""
    for kind in KINDS:
        tls_port = free_port()
        d = tempfile.mkdtemp(prefix="latchd-tls-only-")
        argv = [server_binary(kind), "--port", "0", "--bind", "127.0.0.1", "--save", ""] + certs.server_args(tls_port)
        proc = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            r = redis.Redis(host="127.0.0.1", port=tls_port, socket_timeout=5, **certs.redis_kwargs())
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                try:
                    assert r.ping()
                    break
                except redis.ConnectionError:
                    assert time.monotonic() < deadline and proc.poll() is None, kind
                    time.sleep(0.05)
            assert r.info("server")["tcp_port"] == tls_port, kind   # Redis shows the TLS port then
            r.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------ bad peers

def test_tls_missing_client_certificate_refused(tls_server, certs):
    srv = tls_server()
    bystander = tls_client(srv, certs)
    assert bystander.ping()
    assert isinstance(handshake(srv.tls_port, certs.context(client_cert=None)), Exception)
    assert wait_for_log(srv, "Error accepting a client connection")
    assert bystander.ping()


@pytest.mark.parametrize("cert", ["expired", "stranger"])
def test_tls_bad_client_certificate_refused(tls_server, certs, cert):
    srv = tls_server()
    bystander = tls_client(srv, certs)
    assert isinstance(handshake(srv.tls_port, certs.context(cert)), Exception)
    assert wait_for_log(srv, "Error accepting a client connection")
    assert bystander.ping()
    assert isinstance(handshake(srv.tls_port, certs.context("client")), ssl.SSLSocket)


def test_tls_plaintext_client_on_tls_port_closed(tls_server, certs):
    srv = tls_server()
    bystander = tls_client(srv, certs)
    s = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
    try:
        s.sendall(encode_command("PING"))
        got = b""
        while True:   # whatever alert comes first, then the close
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
        assert b"PONG" not in got
    except ConnectionResetError:
        pass
    finally:
        s.close()
    assert wait_for_log(srv, "Error accepting a client connection")
    assert bystander.ping()


def test_tls_handshake_timeout_latchd(latchd_factory, certs):
    """latchd's handshake deadline (tls-handshake-timeout, hidden): a peer
    that stalls mid-handshake is closed with a log line; Redis has none."""
    port = free_port()
    srv = latchd_factory(*certs.server_args(port, "--tls-handshake-timeout", "200"))
    srv.tls_port = port
    bystander = tls_client(srv, certs)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(b"\x16\x03\x01\x02\x00\x01")   # a ClientHello that never finishes
        assert s.recv(4096) == b""
    finally:
        s.close()
    assert wait_for_log(srv, "TLS handshake timed out")
    assert bystander.ping()


# ------------------------------------------------------------ configuration

def test_tls_config_get_defaults(server_factory):
    r = server_factory().client(decode_responses=True)
    got = r.config_get("tls-*")
    want = {
        "tls-port": "0", "tls-session-cache-size": "20480", "tls-session-cache-timeout": "300",
        "tls-auth-clients": "yes", "tls-prefer-server-ciphers": "no", "tls-session-caching": "yes",
        "tls-cluster": "no", "tls-replication": "no",
    }
    for name in ("cert-file", "key-file", "key-file-pass", "client-cert-file", "client-key-file",
                 "client-key-file-pass", "dh-params-file", "ca-cert-file", "ca-cert-dir", "protocols",
                 "ciphers", "ciphersuites"):
        want["tls-" + name] = ""
    assert got == want


def test_tls_config_set_validation(server_factory):
    r = server_factory().client(decode_responses=True)
    for args in (("tls-auth-clients", "maybe"), ("tls-port", "70000"), ("tls-session-cache-size", "-1"),
                 ("tls-prefer-server-ciphers", "perhaps")):
        with pytest.raises(redis.ResponseError) as e:
            r.config_set(*args)
        assert "CONFIG SET failed (possibly related to argument '%s')" % args[0] in str(e.value)
    assert r.config_set("tls-auth-clients", "optional")
    assert r.config_get("tls-auth-clients") == {"tls-auth-clients": "optional"}
    # a tls-port without certificates cannot be turned on
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("tls-port", str(free_port()))
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') - Unable to update "
                            "TLS configuration. Check server logs.")


def test_tls_ca_required_unless_nothing_checks_peers(server_factory, certs):
    """Without a CA, tls-port takes only with tls-auth-clients no and
    tls-replication / tls-cluster off (Redis's tlsConfigure)."""
    r = server_factory().client(decode_responses=True)
    base = ["tls-cert-file", certs.crt("server"), "tls-key-file", certs.key("server")]
    with pytest.raises(redis.ResponseError):
        r.config_set(*base, "tls-port", str(free_port()))
    with pytest.raises(redis.ResponseError):
        r.config_set(*base, "tls-auth-clients", "no", "tls-replication", "yes", "tls-port", str(free_port()))
    port = free_port()
    assert r.config_set(*base, "tls-auth-clients", "no", "tls-port", str(port))
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10, ssl=True, ssl_cert_reqs="none")
    assert c.ping()
    c.close()


def test_tls_port_turned_on_by_config_set(server_factory, certs):
    srv = server_factory()
    r = srv.client(decode_responses=True)
    port = free_port()
    assert r.config_set("tls-cert-file", certs.crt("server"), "tls-key-file", certs.key("server"),
                        "tls-ca-cert-file", certs.crt("ca"), "tls-port", str(port))
    srv.tls_port = port
    assert tls_client(srv, certs).ping()
    assert r.config_set("tls-port", "0")
    assert isinstance(handshake(port, certs.context()), Exception)


def test_tls_certificate_reload_keeps_clients(tls_server, certs):
    srv = tls_server()
    old = tls_client(srv, certs)
    assert old.set("k", "v")
    before = handshake(srv.tls_port, certs.context())
    assert dict(x[0] for x in before.getpeercert()["subject"])["commonName"] == "localhost"
    r = srv.client()
    assert r.config_set("tls-cert-file", certs.crt("server2"), "tls-key-file", certs.key("server2"))
    # connected clients keep their sessions
    assert old.get("k") == b"v"
    before.sendall(encode_command("PING"))
    assert before.recv(64) == b"+PONG\r\n"
    before.close()
    after = handshake(srv.tls_port, certs.context())
    assert dict(x[0] for x in after.getpeercert()["subject"])["commonName"] == "reloaded"
    after.close()
    # a file that does not load leaves the context as it was
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("tls-cert-file", os.path.join(certs.dir, "missing.crt"))
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to "
                            "update TLS configuration. Check server logs.")
    assert r.config_get("tls-cert-file") == {"tls-cert-file": certs.crt("server2")}
    assert old.ping()
    # the client identity (for replication) must load too, once both are given
    assert r.config_set("tls-client-cert-file", certs.crt("client"))
    with pytest.raises(redis.ResponseError):
        r.config_set("tls-client-key-file", os.path.join(certs.dir, "missing.key"))
    assert r.config_set("tls-client-key-file", certs.key("client"))


def test_tls_protocols_and_ciphers(tls_server, certs):
    srv = tls_server("--tls-protocols", "TLSv1.2", "--tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256")
    s = handshake(srv.tls_port, certs.context())
    assert s.version() == "TLSv1.2"
    assert s.cipher()[0] == "ECDHE-ECDSA-AES128-GCM-SHA256"
    s.close()
    r = srv.client()
    with pytest.raises(redis.ResponseError):
        r.config_set("tls-protocols", "TLSv9")
    assert r.config_set("tls-protocols", "TLSv1.3")
    s = handshake(srv.tls_port, certs.context())
    assert s.version() == "TLSv1.3"
    s.close()


# ------------------------------------------------------------ embedding

EMBED_DRIVER = os.path.join(os.path.dirname(os.environ.get("LATCHD_BIN") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "latchd")),
    "embed_lock_driver")


@pytest.mark.skipif(not os.access(EMBED_DRIVER, os.X_OK), reason="embed_lock_driver is built next to latchd")
@pytest.mark.parametrize("mode", ["thread", "loop"])
def test_tls_embedded_latchd(certs, mode):
    """liblatchd: latchd_set(srv, "tls-port", ...) and the certificates
    before latchd_start serve TLS as the flags do; a lock taken by the
    native call is seen over TLS."""
    port = free_port()
    pairs = ["tls-port", str(port), "tls-cert-file", certs.crt("server"), "tls-key-file", certs.key("server"),
             "tls-ca-cert-file", certs.crt("ca")]
    proc = subprocess.Popen([EMBED_DRIVER, mode] + pairs, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    try:
        assert proc.stdout.readline().split()[0] == "port"
        proc.stdin.write("acquire lock:emb owner:1 30000\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("LATCHD_OK holds=1")
        r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10, **certs.redis_kwargs())
        assert r.hgetall("lock:emb") == {b"owner:1": b"1"}
        assert 0 < r.pttl("lock:emb") <= 30000
        r.close()
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    # latchd_set checks as CONFIG SET does
    bad = subprocess.run([EMBED_DRIVER, mode, "tls-auth-clients", "sometimes"], capture_output=True, text=True,
                         timeout=10)
    assert bad.returncode == 2 and "tls-auth-clients" in bad.stderr


# ------------------------------------------------------------ redis-cli, redis-benchmark

@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="needs redis-cli")
def test_tls_redis_cli(tls_server, certs):
    srv = tls_server()
    base = ["redis-cli", "-p", str(srv.tls_port)] + certs.cli_args()
    assert subprocess.run(base + ["SET", "cli", "yes"], capture_output=True, text=True, timeout=30).stdout == "OK\n"
    assert subprocess.run(base + ["GET", "cli"], capture_output=True, text=True, timeout=30).stdout == "yes\n"


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="needs redis-benchmark")
def test_tls_redis_benchmark(tls_server, certs):
    srv = tls_server()
    out = subprocess.run(["redis-benchmark", "-p", str(srv.tls_port)] + certs.cli_args() +
                         ["-n", "2000", "-c", "10", "-P", "4", "-t", "ping,set,get", "-q"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("requests per second") == 4   # PING_INLINE, PING_MBULK, SET, GET
    assert srv.client().dbsize() == 1
