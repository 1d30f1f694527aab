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
    int raw = level & LOG_RAW;
    level &= ~LOG_RAW;
    if (s && level < s->cfg.loglevel) return;
    char msg[2048], date[64];
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
    if (raw) fprintf(f, "%s", msg);
    else fprintf(f, "%d:M %s %c %s\n", (int)getpid(), date, ".-*#"[level & 3], msg);
    fflush(f);
    if (close_after) fclose(f);
}

/* latchd's own picture, in the place and with the "Port:" and "PID:"
 * lines of Redis's logo, which harnesses (Redis's test suite) wait for. */
static const char banner[] =
    "\n"
    "       __      __       __        __\n"
    "      / /___ _/ /______/ /_  ____/ /     latchd %s (Redis %s compatible) %d bit\n"
    "     / / __ `/ __/ ___/ __ \\/ __  /\n"
    "    / / /_/ / /_/ /__/ / / / /_/ /      Running in standalone mode\n"
    "   /_/\\__,_/\\__/\\___/_/ /_/\\__,_/       Port: %d\n"
    "                                         PID: %ld\n"
    "\n";

void log_banner(const server *s, int port)
{
    int show = s->cfg.always_show_logo || (!s->cfg.logfile[0] && isatty(STDOUT_FILENO));
    if (!show) {
        log_msg(s, LOG_NOTICE, "Running mode=standalone, port=%d.", port);
        return;
    }
    log_msg(s, LOG_NOTICE | LOG_RAW, banner, LATCHD_VERSION, LATCHD_REDIS_VERSION, (int)sizeof(void *) * 8, port,
            (long)getpid());
}
