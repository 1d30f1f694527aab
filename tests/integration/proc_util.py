"""Reading a server process's /proc entries (Linux)."""


def proc_number(pid, name, prefix, column):
    """The integer in `column` (of whitespace-split words) of the first
    line of /proc/<pid>/<name> that starts with `prefix`."""
    with open("/proc/%d/%s" % (pid, name)) as f:
        for line in f:
            if line.startswith(prefix):
                return int(line.split()[column])
    raise AssertionError("no %r line in /proc/%d/%s" % (prefix, pid, name))


def open_files_limit(pid):
    return proc_number(pid, "limits", "Max open files", 3)


def rss_kb(pid):
    return proc_number(pid, "status", "VmRSS:", 1)


def under_tool(pid):
    """"valgrind" or "asan" when the process runs under one of them (their
    allocators keep freed memory, valgrind virtualizes the fd limit), else
    None."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    if "vgpreload" in maps:
        return "valgrind"
    return "asan" if "libasan" in maps else None
