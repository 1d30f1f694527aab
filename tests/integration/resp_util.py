"""Tiny RESP2/RESP3 helpers for the integration tests.

The reader works on raw bytes and returns the *exact* bytes of one reply, so
tests can assert what went over the wire; ``parse`` turns those bytes into
Python values when a test cares about structure rather than bytes.
"""

import socket
import time


class ConnectionClosed(Exception):
    """The server closed the connection before a complete reply arrived."""


class Incomplete(Exception):
    """Internal: the buffer does not hold a complete reply yet."""


# ---------------------------------------------------------------- encoding

def _b(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, (int, float)):
        return str(x).encode()
    raise TypeError("cannot encode %r" % (x,))


def encode_command(*args):
    """Encode a command as a RESP multibulk request."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _b(a)
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


# ---------------------------------------------------------------- framing

_LINE_TYPES = b"+-:_,#("
_BULK_TYPES = b"$=!"
_AGG_TYPES = b"*~>"
_MAP_TYPES = b"%|"


def _line(buf, pos):
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete()
    return buf[pos:end], end + 2


def reply_end(buf, pos=0):
    """Return the offset just past the reply starting at buf[pos].

    Raises Incomplete if buf does not yet hold the whole reply and
    ValueError if the bytes are not valid RESP.
    """
    if pos >= len(buf):
        raise Incomplete()
    t = buf[pos]
    line, nxt = _line(buf, pos + 1)
    if t in _LINE_TYPES:
        return nxt
    if t in _BULK_TYPES:
        n = int(line)
        if n < 0:
            if t != ord("$") or n != -1:
                raise ValueError("bad bulk length %r" % line)
            return nxt
        if len(buf) < nxt + n + 2:
            raise Incomplete()
        if buf[nxt + n:nxt + n + 2] != b"\r\n":
            raise ValueError("bulk not terminated by CRLF: %r" % buf[pos:nxt + n + 2])
        return nxt + n + 2
    if t in _AGG_TYPES or t in _MAP_TYPES:
        n = int(line)
        if n < 0:
            if t != ord("*") or n != -1:
                raise ValueError("bad aggregate length %r" % line)
            return nxt
        if t in _MAP_TYPES:
            n *= 2
        p = nxt
        for _ in range(n):
            p = reply_end(buf, p)
        if t == ord("|"):
            # an attribute is followed by the reply it annotates
            p = reply_end(buf, p)
        return p
    raise ValueError("unknown RESP type byte %r in %r" % (chr(t), buf[pos:pos + 40]))


# ---------------------------------------------------------------- decoding

class Status(bytes):
    """A simple string reply (+...)."""


class Error(bytes):
    """An error reply (-... or !...)."""


class Verbatim(bytes):
    """A RESP3 verbatim string; .format holds the 3-byte format."""
    format = b""


class RespSet(list):
    """A RESP3 set (~) kept in wire order."""


class Push(list):
    """A RESP3 push (>)."""


class RespMap(list):
    """A RESP3 map (%) as a list of (key, value) pairs in wire order."""

    def to_dict(self):
        return {(tuple(k) if isinstance(k, list) else k): v for k, v in self}


def _parse(buf, pos):
    t = buf[pos]
    line, nxt = _line(buf, pos + 1)
    c = chr(t)
    if c == "+":
        return Status(line), nxt
    if c == "-":
        return Error(line), nxt
    if c in ":(":
        return int(line), nxt
    if c == "_":
        return None, nxt
    if c == ",":
        return float(line.replace(b"inf", b"Infinity")), nxt
    if c == "#":
        return line == b"t", nxt
    if c in "$=!":
        n = int(line)
        if n < 0:
            return None, nxt
        data = buf[nxt:nxt + n]
        if c == "!":
            return Error(data), nxt + n + 2
        if c == "=":
            v = Verbatim(data[4:])
            v.format = data[:3]
            return v, nxt + n + 2
        return bytes(data), nxt + n + 2
    if c in "*~>":
        n = int(line)
        if n < 0:
            return None, nxt
        items = []
        p = nxt
        for _ in range(n):
            v, p = _parse(buf, p)
            items.append(v)
        if c == "~":
            return RespSet(items), p
        if c == ">":
            return Push(items), p
        return items, p
    if c in "%|":
        n = int(line)
        pairs = RespMap()
        p = nxt
        for _ in range(n):
            k, p = _parse(buf, p)
            v, p = _parse(buf, p)
            pairs.append((k, v))
        if c == "|":
            return _parse(buf, p)  # drop attributes
        return pairs, p
    raise ValueError("unknown RESP type byte %r" % c)


def parse(data):
    """Decode exactly one complete reply given as bytes."""
    v, end = _parse(data, 0)
    if end != len(data):
        raise ValueError("trailing bytes after reply: %r" % data[end:])
    return v


def flat_pairs(v):
    """Turn a RESP2 flat [k, v, k, v] array or a RESP3 map into a dict."""
    if isinstance(v, RespMap):
        return v.to_dict()
    assert isinstance(v, list) and len(v) % 2 == 0, v
    return {v[i]: v[i + 1] for i in range(0, len(v), 2)}


# ---------------------------------------------------------------- socket

class RawConn:
    """A raw TCP connection speaking bytes, with a RESP reply reader."""

    def __init__(self, host, port, timeout=5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = b""
        self.eof = False

    # -- plumbing
    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def local_port(self):
        return self.sock.getsockname()[1]

    def send(self, data):
        self.sock.sendall(_b(data))

    def send_may_close(self, data):
        """Send, tolerating a server that hangs up before taking it all
        (after a protocol error, over a limit): what it replied before
        closing is still there to read."""
        try:
            self.sock.sendall(_b(data))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("timed out waiting for data; have %r" % self.buf[:200])
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 16)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
            raise ConnectionClosed("connection closed; unconsumed bytes %r" % self.buf[:200])
        self.buf += chunk

    # -- replies
    def read_reply(self, timeout=None):
        """Return the exact bytes of the next complete reply."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                end = reply_end(self.buf, 0)
            except Incomplete:
                self._fill(deadline)
                continue
            out, self.buf = self.buf[:end], self.buf[end:]
            return out

    def read_replies(self, n, timeout=None):
        return [self.read_reply(timeout) for _ in range(n)]

    def cmd(self, *args):
        """Send one multibulk command and return the reply's exact bytes."""
        self.send(encode_command(*args))
        return self.read_reply()

    def call(self, *args):
        """Send one multibulk command and return the decoded reply."""
        return parse(self.cmd(*args))

    def inline(self, line):
        """Send an inline command line (CRLF appended) and return reply bytes."""
        self.send(_b(line) + b"\r\n")
        return self.read_reply()

    def read_available(self, wait=0.2):
        """Return whatever arrives within `wait` seconds (b"" if nothing)."""
        deadline = time.monotonic() + wait
        while not self.eof:
            try:
                self._fill(deadline)
            except (socket.timeout, ConnectionClosed):
                break
        out, self.buf = self.buf, b""
        return out

    def read_until_closed(self, timeout=None):
        """Read until EOF; return every byte received. Fails on timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self.eof:
            try:
                self._fill(deadline)
            except ConnectionClosed:
                break
        out, self.buf = self.buf, b""
        return out

    def is_closed(self, wait=1.0):
        """True if the peer closes the connection within `wait` seconds
        (bytes that arrive meanwhile are kept in the buffer)."""
        deadline = time.monotonic() + wait
        while not self.eof:
            try:
                self._fill(deadline)
            except socket.timeout:
                return False
            except ConnectionClosed:
                return True
        return True


def wait_for(predicate, timeout=2.0, interval=0.02):
    """Poll predicate() until it is truthy; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)
