/* log.c - Redis-style log lines ("pid:M date level-char message") to the
 * server's configured logfile or stdout, filtered by its loglevel. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

static FILE *log_open(const server *s, int *close_after)
{
    const char *path = s ? s->cfg.logfile : "";
    *close_after = 0;
    if (!path || !path[0]) return stdout;
    FILE *f = fopen(path, "a");
    if (!f) return stdout;
    *close_after = 1;
    return f;
}

void log_msg(const server *s, int level, const char *fmt, ...)
{
    if (s && level < s->cfg.loglevel) return;
    char msg[1024], date[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    size_t off = strftime(date, sizeof(date), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(date + off, sizeof(date) - off, "%03d", (int)(tv.tv_usec / 1000));

    int close_after;
    FILE *f = log_open(s, &close_after);
    fprintf(f, "%d:M %s %c %s\n", (int)getpid(), date, ".-*#"[level & 3], msg);
    fflush(f);
    if (close_after) fclose(f);
}
