"""latchd only: the README's "Using latchd as a test double" examples are
the files under examples/, included verbatim, and each one is run here (the
pytest fixture with pytest, the Vitest/Jest global setup with node, the
shell wrapper with sh), so none of them can rot. The "Using it" block is
run too, with a slow stand-in for scripts/run, so it must wait for latchd."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import LATCHD_BIN, REPO, STOP_TIMEOUT, free_port, server_binary

EXAMPLES = os.path.join(REPO, "examples")
PYTEST_FILES = ["pytest/conftest.py", "pytest/test_lock_expiry.py"]
NODE_SETUP = "node/latchd-global-setup.mjs"
SHELL_WRAPPER = "shell/with-latchd.sh"


def example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return f.read()


def env():
    server_binary("latchd")
    return dict(os.environ, LATCHD_BIN=LATCHD_BIN)


def node():
    path = shutil.which("node")
    if not path:
        pytest.fail("node not found: scripts/setup test installs nodejs", pytrace=False)
    return path


@pytest.mark.parametrize("name", PYTEST_FILES + [NODE_SETUP, SHELL_WRAPPER])
def test_latchd_readme_includes_example_verbatim(name):
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    assert example(name) in readme, "README.md must include examples/%s verbatim" % name


def test_latchd_pytest_example_passes(tmp_path):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          os.path.join(EXAMPLES, "pytest")],
                         cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_latchd_node_global_setup_is_valid_module():
    run = subprocess.run([node(), "--check", os.path.join(EXAMPLES, NODE_SETUP)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


# Runs the global setup as a test runner would: REDIS_URL must name a live
# latchd, and the returned teardown must stop it.
NODE_DRIVER = r"""
import net from 'node:net';
const { default: setup } = await import(process.argv[1]);
let provided;
const teardown = await setup({ provide: (k, v) => { provided = [k, v]; } });
const url = new URL(process.env.REDIS_URL);
const reply = await new Promise((resolve, reject) => {
  const s = net.connect(Number(url.port), url.hostname, () => s.write('PING\r\n'));
  s.on('data', (d) => { resolve(d.toString()); s.end(); });
  s.on('error', reject);
});
await teardown();
console.log(JSON.stringify({ reply, provided, port: Number(url.port) }));
"""


def test_latchd_node_global_setup_starts_and_stops_latchd():
    run = subprocess.run([node(), "--input-type=module", "-e", NODE_DRIVER,
                          os.path.join(EXAMPLES, NODE_SETUP)],
                         env=env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    import json
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["reply"] == "+PONG\r\n"
    assert out["provided"] == ["redisUrl", "redis://127.0.0.1:%d" % out["port"]]
    assert not port_open(out["port"])


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


PING_FROM_ENV = (
    "import os, socket\n"
    "s = socket.create_connection((os.environ['REDIS_HOST'], int(os.environ['REDIS_PORT'])))\n"
    "s.sendall(b'LATCHD.CLOCK ADVANCE 0\\r\\n')\n"
    "print(s.recv(100).decode().strip(), os.environ['REDIS_URL'], os.environ['REDIS_PORT'])\n")


def test_latchd_shell_wrapper_runs_a_command_against_latchd():
    run = subprocess.run([os.path.join(EXAMPLES, SHELL_WRAPPER), sys.executable, "-c", PING_FROM_ENV],
                         env=env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    reply, url, port = run.stdout.split()
    assert reply.startswith(":") and int(reply[1:]) > 0   # the clock, so clock control is on
    assert url == "redis://127.0.0.1:%s" % port
    assert not port_open(int(port))   # stopped once the command is done


def test_latchd_shell_wrapper_keeps_the_exit_status():
    run = subprocess.run([os.path.join(EXAMPLES, SHELL_WRAPPER), "sh", "-c", "exit 3"],
                         env=env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 3, run.stderr


# Prints where latchd is and its own pid, then waits to be stopped.
WAIT_FOREVER = (
    "import os, sys, time\n"
    "print(os.environ['REDIS_PORT'], os.getpid(), flush=True)\n"
    "time.sleep(60)\n")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:   # a zombie is gone too
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def default_signals():
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize("signum,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
                         ids=["SIGTERM", "SIGINT"])
def test_latchd_shell_wrapper_stops_latchd_when_signalled(tmp_path, signum, status):
    # stderr to a file: a latchd left running would hold a pipe open forever.
    # Its own session, so whatever the wrapper leaves behind can be killed.
    # Default signal dispositions, as a service manager starts it: a shell
    # cannot trap a signal it inherited ignored (POSIX), and a test run started
    # in the background inherits SIGINT ignored.
    with open(tmp_path / "stderr", "w") as err:
        wrapper = subprocess.Popen([os.path.join(EXAMPLES, SHELL_WRAPPER), sys.executable, "-c", WAIT_FOREVER],
                                   env=env(), stdout=subprocess.PIPE, stderr=err, text=True,
                                   start_new_session=True, preexec_fn=default_signals)
    try:
        port, child = map(int, wrapper.stdout.readline().split())
        assert port_open(port)
        wrapper.send_signal(signum)   # the wrapper alone, as a service manager would
        assert wrapper.wait(timeout=30) == status, (tmp_path / "stderr").read_text()
        assert not port_open(port)
        assert not pid_alive(child)   # the command is stopped too, not left running
        assert (tmp_path / "stderr").read_text() == ""
    finally:
        try:
            os.killpg(wrapper.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        wrapper.wait()
        wrapper.stdout.close()


def test_latchd_shell_wrapper_says_when_latchd_is_missing(tmp_path):
    run = subprocess.run([os.path.join(EXAMPLES, SHELL_WRAPPER), "true"],
                         env=dict(os.environ, LATCHD_BIN=str(tmp_path / "no-latchd")),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 127
    assert run.stderr == ("with-latchd.sh: no latchd binary at '%s' (put latchd on PATH or set LATCHD_BIN)\n"
                          % (tmp_path / "no-latchd"))
    assert run.stdout == ""


def using_it_block():
    """The ```sh block under the README's "## Using it" heading."""
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    section = readme.split("\n## Using it\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


# Stands in for scripts/run: slow to start, as the first run is while it
# builds, so a block that does not wait for latchd fails.
SLOW_RUN = """#!/bin/sh
echo $$ >"$(dirname "$0")/run.pid"
sleep 1.5
exec "$LATCHD_BIN" "$@"
"""


def test_latchd_readme_using_it_block_waits_for_latchd(tmp_path):
    block = using_it_block()
    assert block.startswith("scripts/run --port 6380 &"), block
    assert "until redis-cli -p 6380 PING" in block
    port = free_port()
    # Pasted as is, but on a free port and with a shorter benchmark.
    script = block.replace("6380", str(port)).replace("-n 100000", "-n 2000")
    (tmp_path / "scripts").mkdir()
    run_stub = tmp_path / "scripts" / "run"
    run_stub.write_text(SLOW_RUN)
    run_stub.chmod(0o755)
    try:
        run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env(),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        # latchd logs to the same stdout: keep what the client tools printed.
        lines = [l for l in run.stdout.splitlines() if l.strip()
                 and not re.match(r"\d+:M ", l) and not l.startswith("LATCHD_PORT=")]
        assert lines[:3] == ["PONG", "1", "1"], run.stdout
        assert 0 < int(lines[3]) <= 30000
        assert any("PING_INLINE:" in l and "requests per second" in l for l in lines), run.stdout
        pid = int((tmp_path / "scripts" / "run.pid").read_text())
        deadline = time.monotonic() + STOP_TIMEOUT
        while pid_alive(pid) and time.monotonic() < deadline:   # SHUTDOWN ends the block
            time.sleep(0.05)
        assert not pid_alive(pid)
        assert not port_open(port)
    finally:
        pidfile = tmp_path / "scripts" / "run.pid"
        if pidfile.exists() and pid_alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
