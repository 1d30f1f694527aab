import os
import subprocess

import pytest
import redis


@pytest.fixture(scope="session")
def latchd(tmp_path_factory):
    """A fresh latchd on an ephemeral port, with the clock under test control."""
    log = tmp_path_factory.mktemp("latchd") / "latchd.log"
    proc = subprocess.Popen(
        [os.environ.get("LATCHD_BIN", "latchd"), "--port", "0",
         "--enable-clock-control", "yes", "--logfile", str(log)],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()          # "LATCHD_PORT=<n>", once listening
    if not line.startswith("LATCHD_PORT="):
        proc.kill()
        raise RuntimeError("latchd did not start: " + log.read_text())
    yield redis.Redis(port=int(line.split("=")[1]))
    proc.terminate()
    proc.wait()


@pytest.fixture
def r(latchd):
    latchd.flushall()
    return latchd
