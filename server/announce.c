/* announce.c - tells a test harness which port latchd bound: a
 * "LATCHD_PORT=<n>" line on stdout and, if asked, a port file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
