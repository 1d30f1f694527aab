/* disk_fault.c - an LD_PRELOAD shim for the AOF fault tests: while the file
 * named by $LATCHD_FAULT_FILE exists, write() to an AOF incr file fails
 * with ENOSPC and fsync()/fdatasync() of one with EIO, as a full or broken
 * disk would; while $LATCHD_FAULT_SYNC_FILE exists only the syncs fail, and
 * while $LATCHD_SYNC_GATE_FILE exists they wait (a disk that has stopped
 * answering), and each takes $LATCHD_SYNC_DELAY_US more (a slow disk). Any server (latchd, redis-server) runs under it unchanged.
 * For the Raft tests: with $LATCHD_RAFT_WRITE_GATE set to a file name, a
 * libraft log segment's writes wait while that file exists in the
 * segment's directory (one node's disk stalls, the others' do not). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The switch file named by $env exists. */
static int switched(const char *env)
{
    const char *sw = getenv(env);
    return sw && access(sw, F_OK) == 0;
}

/* The file fd is open on, into path[PATH_MAX]: 0, or -1 (not a file). */
static int fd_path(int fd, char *path)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, PATH_MAX - 1);
    if (n <= 0) return -1;
    path[n] = '\0';
    return 0;
}

/* Only the AOF's incr files: the log, sockets and the RDB keep working. */
static int is_incr(int fd)
{
    char path[PATH_MAX];
    return fd_path(fd, path) == 0 && strstr(path, ".incr") != NULL;
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

/* fd is a libraft segment ("open-N") whose directory holds the gate file. */
static int raft_gated(int fd)
{
    const char *gate = getenv("LATCHD_RAFT_WRITE_GATE");
    char path[PATH_MAX];
    if (!gate || fd_path(fd, path) != 0) return 0;
    char *slash = strrchr(path, '/');
    if (!slash || strncmp(slash + 1, "open-", 5) != 0) return 0;
    if ((size_t)(slash + 1 - path) + strlen(gate) >= sizeof path) return 0;
    strcpy(slash + 1, gate);
    return access(path, F_OK) == 0;
}

/* libraft writes its log with io_submit through syscall(2). A gated write
 * submitted not to block (RWF_NOWAIT, from the loop's thread) is refused
 * with EAGAIN, so libraft hands it to its thread pool, where the blocking
 * submit waits for the gate to go: the loop runs on, the write stays
 * pending. */
__attribute__((visibility("default"))) long syscall(long nr, ...)
{
    static long (*real)(long, ...);
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    long a[6];   /* a system call takes at most six: forwarded as they came */
    va_start(ap, nr);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_io_submit && a[1] >= 1) {
        struct iocb *cb = ((struct iocb **)a[2])[0];
        if (raft_gated((int)cb->aio_fildes)) {
            if (cb->aio_rw_flags & RWF_NOWAIT) {
                errno = EAGAIN;
                return -1;
            }
            while (raft_gated((int)cb->aio_fildes)) usleep(1000);
        }
    }
    return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
