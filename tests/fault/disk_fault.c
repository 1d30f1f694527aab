/* disk_fault.c - an LD_PRELOAD shim for the AOF fault tests: while the file
 * named by $LATCHD_FAULT_FILE exists, write() to an AOF incr file fails
 * with ENOSPC and fsync()/fdatasync() of one with EIO, as a full or broken
 * disk would; while $LATCHD_FAULT_SYNC_FILE exists only the syncs fail, and
 * while $LATCHD_SYNC_GATE_FILE exists they wait (a disk that has stopped
 * answering), and each takes $LATCHD_SYNC_DELAY_US more (a slow disk). Any server (latchd, redis-server) runs under it unchanged. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The switch file named by $env exists. */
static int switched(const char *env)
{
    const char *sw = getenv(env);
    return sw && access(sw, F_OK) == 0;
}

/* Only the AOF's incr files: the log, sockets and the RDB keep working. */
static int is_incr(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return strstr(path, ".incr") != NULL;
}

static int failing(int fd) { return switched("LATCHD_FAULT_FILE") && is_incr(fd); }

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (failing(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, count);
}

/* fsync and fdatasync: held while gated, EIO while failing, else the real call. */
static int sync_or_fail(const char *name, int fd)
{
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    while (switched("LATCHD_SYNC_GATE_FILE") && is_incr(fd)) usleep(1000);
    const char *delay = getenv("LATCHD_SYNC_DELAY_US");
    if (delay && is_incr(fd)) usleep((useconds_t)atoi(delay));
    if (failing(fd) || (switched("LATCHD_FAULT_SYNC_FILE") && is_incr(fd))) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

__attribute__((visibility("default"))) int fdatasync(int fd) { return sync_or_fail("fdatasync", fd); }
__attribute__((visibility("default"))) int fsync(int fd) { return sync_or_fail("fsync", fd); }
