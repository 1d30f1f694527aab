"""liblatchd as installed (latchd only): `cmake --install` of the build that
made LATCHD_BIN into a temporary prefix, then tests/embed/example.c (the
README's example) built against it with pkg-config, shared and static, and
run: two embedded servers in one process, one on the caller's uv loop and
one on its own thread, each answering PING, SET/GET and a lock script over
TCP, plus a native lock the RESP script sees."""
import glob
import os
import subprocess

import pytest

from conftest import LATCHD_BIN, REPO

BUILD = os.path.dirname(LATCHD_BIN)
EXAMPLE = os.path.join(REPO, "tests", "embed", "example.c")

pytestmark = pytest.mark.skipif(not os.path.isfile(os.path.join(BUILD, "CMakeCache.txt")),
                                reason="LATCHD_BIN is not in a CMake build directory")


def sanitizer_flags():
    """An instrumented library needs the sanitizer runtime in the program too."""
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        return ["-fsanitize=address,undefined"] if "LATCHD_SANITIZE:BOOL=ON" in f.read() else []


INSTALL_LOG = {}


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("prefix"))
    run = subprocess.run(["cmake", "--install", BUILD, "--prefix", root], check=True,
                         capture_output=True, text=True)
    INSTALL_LOG[root] = run.stdout
    return root


def pkg_config(prefix, *args):
    pcdir = os.path.dirname(glob.glob(os.path.join(prefix, "**", "latchd.pc"), recursive=True)[0])
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    out = subprocess.run(["pkg-config"] + list(args), env=env, check=True, capture_output=True, text=True)
    return out.stdout.split()


def build_and_run(prefix, package, extra=()):
    exe = os.path.join(prefix, "example-" + package)
    cmd = (["cc", "-Wall", "-Wextra", "-Werror", "-o", exe, EXAMPLE]
           + pkg_config(prefix, "--cflags", "--libs", package) + list(extra) + sanitizer_flags())
    subprocess.run(cmd, check=True)
    run = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    return exe, run.stdout


def needed_libs(exe):
    out = subprocess.run(["readelf", "-d", exe], check=True, capture_output=True, text=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def check_output(out):
    lines = out.splitlines()
    assert lines[0].startswith("native acquire: LATCHD_OK token=1 holds=1")
    assert lines[-1] == "ok"
    assert out.count("PING     -> +PONG") == 2
    assert "EVAL     -> $-1" in out      # loop server: the script took the lock
    assert "EVAL     -> :" in out        # threaded server: held natively, PTTL
    assert "native release: LATCHD_OK holds=0" in out


def test_latchd_install_layout(prefix):
    files = {os.path.relpath(p, prefix) for p in glob.glob(os.path.join(prefix, "**"), recursive=True)}
    assert "bin/latchd" in files and "include/latchd.h" in files
    assert any(f.endswith("/liblatchd.a") for f in files)
    assert any(f.endswith("/liblatchd.so") for f in files)
    assert any(f.endswith("pkgconfig/latchd.pc") for f in files)
    assert any(f.endswith("pkgconfig/latchd-static.pc") for f in files)


def test_latchd_public_header_includes_only_stdint_stddef_uv(prefix):
    with open(os.path.join(prefix, "include", "latchd.h")) as f:
        includes = [l.split()[1] for l in f if l.startswith("#include")]
    assert includes == ["<stddef.h>", "<stdint.h>", "<uv.h>"]


def test_latchd_shared_library_exports_only_the_api(prefix):
    lib = glob.glob(os.path.join(prefix, "**", "liblatchd.so"), recursive=True)[0]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True)
    names = [l.split()[-1] for l in out.stdout.splitlines() if l.split()[-2] in ("T", "D", "B", "R")]
    assert names and all(n.startswith("latchd_") for n in names), names


def test_latchd_installs_each_file_once(prefix):
    # "-- Installing: path" / "-- Up-to-date: path": a path twice means two
    # install rules write it (the header once came from both libraries).
    paths = [l.split(": ", 1)[1] for l in INSTALL_LOG[prefix].splitlines()
             if l.startswith(("-- Installing: ", "-- Up-to-date: "))]
    assert paths and len(paths) == len(set(paths)), paths
    assert sum(p.endswith("/include/latchd.h") for p in paths) == 1


def test_latchd_static_archive_exports_only_the_api(prefix):
    lib = glob.glob(os.path.join(prefix, "**", "liblatchd.a"), recursive=True)[0]
    out = subprocess.run(["nm", "-g", "--defined-only", lib], check=True, capture_output=True, text=True)
    names = [l.split()[-1] for l in out.stdout.splitlines() if len(l.split()) == 3]
    assert "latchd_create" in names and "latchd_lock_acquire" in names
    assert [n for n in names if not n.startswith("latchd_")] == []


def test_latchd_pkg_config_cflags_name_only_latchd_and_libuv(prefix):
    uv = subprocess.run(["pkg-config", "--cflags", "libuv"], check=True, capture_output=True,
                        text=True).stdout.split()
    for package in ("latchd", "latchd-static"):
        cflags = pkg_config(prefix, "--cflags", package)
        include = [f for f in cflags if f not in uv]
        assert len(include) == 1 and include[0].startswith("-I") and include[0].endswith("include"), cflags
        assert not any("lua" in f for f in cflags), cflags


def test_latchd_example_against_installed_shared_library(prefix):
    libdir = pkg_config(prefix, "--variable=libdir", "latchd")[0]
    exe, out = build_and_run(prefix, "latchd", ["-Wl,-rpath," + libdir])
    assert any(n.startswith("liblatchd.so") for n in needed_libs(exe))
    check_output(out)


def test_latchd_example_against_installed_static_library(prefix):
    exe, out = build_and_run(prefix, "latchd-static")
    assert not any(n.startswith("liblatchd") for n in needed_libs(exe))
    check_output(out)


def test_latchd_pkg_config_static_lists_the_archives_dependencies(prefix):
    libs = pkg_config(prefix, "--static", "--libs", "latchd")
    for needed in ("-llatchd", "-luv", "-lpthread", "-lm"):
        assert needed in libs


def test_latchd_readme_example_is_the_tested_program():
    with open(EXAMPLE) as f:
        source = f.read()
    main = source[source.index("int main(void)"):]
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    assert "```c\n" + main + "```" in readme
