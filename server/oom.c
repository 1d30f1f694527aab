/* oom.c - oom-score-adj as Redis 7.0 applies it: the process's
 * /proc/self/oom_score_adj set from oom-score-adj-values, and put back. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

#define OOM_FILE "/proc/self/oom_score_adj"

static void copy_value(const char *name, const char *value, size_t vlen, void *ctx)
{
    (void)name;
    (void)vlen;
    snprintf(ctx, 64, "%s", value);
}

/* A parameter's value as CONFIG GET shows it. */
static void config_text(const latchd_config *cfg, const char *name, char out[64])
{
    out[0] = '\0';
    config_get(cfg, name, strlen(name), copy_value, out);
}

static int oom_read(server *s, int *val)
{
    char buf[64];
    int fd = open(OOM_FILE, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
    if (n < 0) {
        log_msg(s, LOG_WARNING, "Unable to read oom_score_adj: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    buf[n] = '\0';
    *val = atoi(buf);
    return 0;
}

static int oom_write(server *s, int val)
{
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%d\n", val);
    int fd = open(OOM_FILE, O_WRONLY);
    if (fd < 0 || write(fd, buf, (size_t)len) < 0) {
        log_msg(s, LOG_WARNING, "Unable to write oom_score_adj: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Redis's setOOMScoreAdj for the master class (latchd is never a replica
 * nor forks): the score before the first adjustment is kept, relative
 * values are added to it, and turning the feature off puts it back. */
int server_oom_apply(server *s)
{
    char mode[64], values[64];
    config_text(&s->cfg, "oom-score-adj", mode);
    config_text(&s->cfg, "oom-score-adj-values", values);
    if (strcmp(mode, "no") == 0) {
        if (!s->oom_adjusted) return 0;
        s->oom_adjusted = 0;
        return oom_write(s, s->oom_base);
    }
    if (!s->oom_adjusted) {
        if (oom_read(s, &s->oom_base) != 0) return -1;
        s->oom_adjusted = 1;
    }
    int val = atoi(values);   /* the master's, first of the three */
    if (strcmp(mode, "absolute") != 0) val += s->oom_base;
    if (val > 1000) val = 1000;
    if (val < -1000) val = -1000;
    return oom_write(s, val);
}

int server_oom_changed(const latchd_config *a, const latchd_config *b)
{
    static const char *const names[] = {"oom-score-adj", "oom-score-adj-values"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char x[64], y[64];
        config_text(a, names[i], x);
        config_text(b, names[i], y);
        if (strcmp(x, y) != 0) return 1;
    }
    return 0;
}
