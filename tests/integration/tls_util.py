"""TLS test material: a CA and certificates made with the openssl CLI (as
Redis's utils/gen-test-certs.sh does), the server flags that use them, and
a client that sends its TLS records one byte per write."""

import os
import socket
import ssl
import subprocess
import time


def _run(*argv, stdin=None):
    subprocess.run(argv, check=True, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Certs:
    """Files under dir: ca, server (CN localhost), server2 (CN reloaded,
    for CONFIG SET reloads), client, expired (a client certificate past
    its end), stranger (a client certificate of another CA), and each one's
    .key; the other CA is other-ca."""

    def __init__(self, dir):
        self.dir = dir
        for ca in ("ca", "other-ca"):
            self._key(ca)
            _run("openssl", "req", "-x509", "-new", "-nodes", "-sha256", "-key", self.key(ca), "-days", "30",
                 "-subj", "/O=latchd test/CN=%s" % ca, "-out", self.crt(ca))
        self._cert("server", "localhost", "ca", 30, server=True)
        self._cert("server2", "reloaded", "ca", 30, server=True)
        self._cert("client", "client", "ca", 30)
        self._cert("expired", "expired", "ca", -1)
        self._cert("stranger", "stranger", "other-ca", 30)

    def crt(self, name):
        return os.path.join(self.dir, name + ".crt")

    def key(self, name):
        return os.path.join(self.dir, name + ".key")

    def _key(self, name):
        _run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", self.key(name))

    def _cert(self, name, cn, ca, days, server=False):
        self._key(name)
        ext = os.path.join(self.dir, name + ".ext")
        with open(ext, "w") as f:
            f.write("subjectAltName = DNS:localhost, IP:127.0.0.1\n" if server else "basicConstraints = CA:FALSE\n")
        csr = subprocess.run(["openssl", "req", "-new", "-sha256", "-subj", "/O=latchd test/CN=%s" % cn,
                              "-key", self.key(name)], check=True, capture_output=True).stdout
        # -days -1 ends the certificate a day before it starts: expired
        _run("openssl", "x509", "-req", "-sha256", "-CA", self.crt(ca), "-CAkey", self.key(ca), "-CAcreateserial",
             "-days", str(days), "-extfile", ext, "-out", self.crt(name), stdin=csr)

    def server_args(self, tls_port, *more):
        """The flags both servers take to serve TLS on tls_port."""
        return ["--tls-port", str(tls_port), "--tls-cert-file", self.crt("server"),
                "--tls-key-file", self.key("server"), "--tls-ca-cert-file", self.crt("ca")] + list(more)

    def context(self, client_cert="client"):
        """An ssl context that trusts the CA and shows client_cert (None: none)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.load_verify_locations(self.crt("ca"))
        if client_cert:
            ctx.load_cert_chain(self.crt(client_cert), self.key(client_cert))
        return ctx

    def redis_kwargs(self, client_cert="client"):
        kw = {"ssl": True, "ssl_ca_certs": self.crt("ca"), "ssl_cert_reqs": "required"}
        if client_cert:
            kw.update(ssl_certfile=self.crt(client_cert), ssl_keyfile=self.key(client_cert))
        return kw

    def cli_args(self, client_cert="client"):
        """redis-cli / redis-benchmark's TLS flags."""
        args = ["--tls", "--cacert", self.crt("ca")]
        if client_cert:
            args += ["--cert", self.crt(client_cert), "--key", self.key(client_cert)]
        return args


class ByteWiseTLS:
    """A TLS client over a plain socket whose every record leaves one byte
    per send (a short pause after each, so the server's reads split them
    too): the server must put records back together from any split."""

    def __init__(self, port, ctx, pause=0.0002, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pause = pause
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_side=False)
        while True:
            try:
                self.obj.do_handshake()
                self._flush()
                return
            except ssl.SSLWantReadError:
                self._flush()
                self._fill()

    def _flush(self):
        for b in self.out.read():
            self.sock.sendall(bytes([b]))
            if self.pause:
                time.sleep(self.pause)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.inc.write(data)

    def send(self, payload):
        self.obj.write(payload)
        self._flush()

    def recv_until(self, want):
        got = b""
        while len(got) < want:
            try:
                got += self.obj.read(65536)
            except ssl.SSLWantReadError:
                self._fill()
        return got

    def close(self):
        self.sock.close()
