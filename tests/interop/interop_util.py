"""Helpers for driving the command-line tools of the interop suite: finding
redis-cli / redis-benchmark, and running redis-cli's REPL on a pseudo
terminal the way a person at a keyboard does."""

import fcntl
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import termios
import time

import pytest

# linenoise draws a hint after the typed text in grey (SGR 90 on 49)
HINT = re.compile(rb"\x1b\[0;90;49m(.*?)\x1b\[0m", re.S)
REFRESH = b"\r\x1b[0K"       # linenoise redraws the whole line after each key


def tool(name):
    """The path of a client tool; scripts/setup installs redis-tools, so a
    missing one is a failure, not a skip."""
    path = shutil.which(name)
    if path is None:
        pytest.fail("%s not found on PATH: run scripts/setup test (Debian package redis-tools)"
                    % name, pytrace=False)
    return path


def run(argv, stdin=None, timeout=60):
    """Run a tool to completion; returns (exit status, stdout, stderr) as text."""
    p = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def _take_terminal():
    """In the child, after setsid: make the pty its controlling terminal, so
    ^C typed into it raises SIGINT as at a real terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Repl:
    """redis-cli in interactive mode on a pty. The window size is set before
    it starts so linenoise reads it with an ioctl instead of asking the
    terminal for the cursor position."""

    def __init__(self, argv, rows=50, cols=250):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(os.environ, TERM="xterm", HOME=os.environ.get("HOME", "/tmp"))
        env["REDISCLI_HISTFILE"] = "/dev/null"   # keep the user's history out of it
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True,
                                     preexec_fn=_take_terminal)
        os.close(slave)
        self.fd = master
        self.out = b""

    def _read(self, wait):
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:          # EIO: the child closed the terminal
            data = b""
        if not data:
            raise EOFError("redis-cli closed its terminal; output so far: %r" % self.out[-2000:])
        self.out += data
        return data

    def read_until(self, needle, timeout=10.0):
        """Everything new up to and including `needle` (bytes)."""
        start = len(self.out)
        deadline = time.monotonic() + timeout
        while needle not in self.out[start:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r from redis-cli within %.0fs; got %r"
                                     % (needle, timeout, self.out[start:][-2000:]))
            self._read(left)
        end = self.out.index(needle, start) + len(needle)
        return self.out[start:end]

    def settle(self, quiet=0.3, timeout=10.0):
        """Everything new until the terminal has been quiet for `quiet` s."""
        start = len(self.out)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(quiet):
            pass
        return self.out[start:]

    def type(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def command(self, text, prompt):
        """Type `text` and Enter; return what redis-cli printed as the reply
        (the lines between the echoed input line and the next prompt)."""
        self.type(text + "\r")
        drawn = self.read_until(b"\n" + prompt)[:-len(prompt)]
        last = drawn.rsplit(REFRESH, 1)[-1]
        assert text.encode() in last, "line not redrawn with %r: %r" % (text, drawn[-500:])
        return last.split(b"\r\n", 1)[1]

    def hint_for(self, text, timeout=10.0):
        """Type `text`, return the hint linenoise draws after it (b"" when it
        draws none), then erase the line with ^U."""
        self.type(text)
        deadline = time.monotonic() + timeout
        while True:
            self.settle(quiet=0.1)
            last = self.out.rsplit(REFRESH, 1)[-1]
            if text.encode() in last:
                break
            assert time.monotonic() < deadline, "line not redrawn with %r: %r" % (text, last)
        self.type("\x15")
        self.settle(quiet=0.1)
        m = HINT.search(last)
        return m.group(1) if m else b""

    def close(self, timeout=5.0):
        if self.proc.poll() is None:
            try:
                self.type("\x04")           # ^D on an empty line ends the REPL
                self.proc.wait(timeout)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout)
        os.close(self.fd)
        return self.proc.returncode
