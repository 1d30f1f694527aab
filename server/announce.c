/* announce.c - tells a test harness which port latchd bound: a
 * "LATCHD_PORT=<n>" line on stdout and, if asked, a port file; and a
 * supervisor (systemd, upstart) that latchd is ready, as Redis does. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <stddef.h>

#include "server.h"

/* Written whole under a temporary name and renamed into place, so a
 * reader polling for the file never sees it half written. */
static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) return ENAMETOOLONG;
    FILE *f = fopen(tmp, "w");
    if (!f) return errno;
    int bad = fprintf(f, "%d\n", port) < 0;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    int why = errno;
    if (fclose(f) != 0 && !bad) bad = 1, why = errno;
    if (!bad && rename(tmp, path) == 0) return 0;
    if (!bad) why = errno;
    unlink(tmp);
    return why ? why : EIO;
}

/* The file first: once the stdout line is out, the file is there too. */
int announce_port(const server *s)
{
    int why = s->cfg.port_file[0] ? write_port_file(s->cfg.port_file, s->port) : 0;
    if (why != 0) {
        log_msg(s, LOG_WARNING, "Failed to write port file %s: %s", s->cfg.port_file, strerror(why));
        return -1;
    }
    /* Its own line, flushed now: stdout may be a pipe the harness reads
     * while latchd keeps running. */
    printf("LATCHD_PORT=%d\n", s->port);
    fflush(stdout);
    return 0;
}

/* sd_notify's protocol: one datagram to $NOTIFY_SOCKET ("@" = abstract). */
static int notify_systemd(const server *s, const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!path || !path[0] || strlen(path) >= sizeof(sa.sun_path)) return -1;
    memcpy(sa.sun_path, path, strlen(path));
    if (path[0] == '@') sa.sun_path[0] = '\0';
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    ssize_t n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    close(fd);
    if (n < 0) log_msg(s, LOG_WARNING, "Can't send notification to systemd: %s", strerror(errno));
    return n < 0 ? -1 : 0;
}

void announce_supervisor(const server *s)
{
    int mode = s->cfg.supervised;
    if (mode == CONFIG_SUPERVISED_AUTO)
        mode = getenv("UPSTART_JOB") ? CONFIG_SUPERVISED_UPSTART
               : getenv("NOTIFY_SOCKET") ? CONFIG_SUPERVISED_SYSTEMD : CONFIG_SUPERVISED_NO;
    if (mode == CONFIG_SUPERVISED_SYSTEMD) {
        log_msg(s, LOG_NOTICE, "supervised by systemd. Please make sure you set appropriate values for "
                               "TimeoutStartSec and TimeoutStopSec in your service unit.");
        notify_systemd(s, "STATUS=Ready to accept connections\nREADY=1\n");
    } else if (mode == CONFIG_SUPERVISED_UPSTART && getenv("UPSTART_JOB")) {
        /* upstart's "expect stop": the job is up once the process stops itself */
        log_msg(s, LOG_NOTICE, "supervised by upstart, will stop to signal readiness.");
        raise(SIGSTOP);
        unsetenv("UPSTART_JOB");
    }
}
