/* slowlog.c - SLOWLOG: the commands that took longer than
 * slowlog-log-slower-than, newest first, at most slowlog-max-len. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "mem.h"
#include "scripting/script.h"

/* Redis keeps this much of a command: 32 arguments, 128 bytes of each. */
#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_ARGLEN 128

typedef struct slowlog_entry {
    struct slowlog_entry *newer, *older;
    long long id, time_s, usec;
    int argc;
    resp_slice *argv;   /* owned copies */
    char *peer, *name;
} slowlog_entry;

struct slowlog {
    slowlog_entry *newest, *oldest;
    long long len, next_id;
};

void slowlog_init(server *s) { s->slowlog = mem_calloc(1, sizeof(*s->slowlog)); }

static void entry_free(slowlog_entry *e)
{
    for (int i = 0; i < e->argc; i++) free((void *)e->argv[i].ptr);
    free(e->argv);
    free(e->peer);
    free(e->name);
    free(e);
}

static void drop_oldest(struct slowlog *l)
{
    slowlog_entry *e = l->oldest;
    l->oldest = e->newer;
    if (l->oldest) l->oldest->older = NULL;
    else l->newest = NULL;
    l->len--;
    entry_free(e);
}

void slowlog_trim(server *s)
{
    if (!s->slowlog) return;
    while (s->slowlog->len > s->cfg.slowlog_max_len) drop_oldest(s->slowlog);
}

static void slowlog_reset(server *s)
{
    while (s->slowlog->len) drop_oldest(s->slowlog);
}

void slowlog_free(server *s)
{
    if (!s->slowlog) return;
    slowlog_reset(s);
    free(s->slowlog);
    s->slowlog = NULL;
}

static char *dup_text(const char *p, size_t len)
{
    char *d = mem_alloc(len + 1);
    memcpy(d, p, len);
    d[len] = '\0';
    return d;
}

static resp_slice text_slice(const char *fmt, long long n)
{
    char buf[64];
    int len = snprintf(buf, sizeof(buf), fmt, n);
    return (resp_slice){dup_text(buf, (size_t)len), (size_t)len};
}

/* Commands a script runs are not logged: the script is, as in Redis. */
void slowlog_push(client *c, uint64_t ticks)
{
    server *s = c->srv;
    if (c == s->scripts->self) return;
    slowlog_entry *e = mem_calloc(1, sizeof(*e));
    struct slowlog *l = s->slowlog;
    e->argc = c->argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : c->argc;
    e->argv = mem_alloc(sizeof(*e->argv) * (size_t)(e->argc ? e->argc : 1));
    for (int i = 0; i < e->argc; i++) {
        const resp_slice *a = &c->argv[i];
        if (e->argc != c->argc && i == e->argc - 1) {
            e->argv[i] = text_slice("... (%lld more arguments)", c->argc - e->argc + 1);
        } else if (a->len > SLOWLOG_MAX_ARGLEN) {
            char buf[SLOWLOG_MAX_ARGLEN + 64];
            memcpy(buf, a->ptr, SLOWLOG_MAX_ARGLEN);
            int n = snprintf(buf + SLOWLOG_MAX_ARGLEN, 64, "... (%zu more bytes)", a->len - SLOWLOG_MAX_ARGLEN);
            e->argv[i] = (resp_slice){dup_text(buf, SLOWLOG_MAX_ARGLEN + (size_t)n), SLOWLOG_MAX_ARGLEN + (size_t)n};
        } else {
            e->argv[i] = (resp_slice){dup_text(a->ptr, a->len), a->len};
        }
    }
    e->id = l->next_id++;
    e->time_s = (long long)(server_clock_ms(s) / 1000);
    e->usec = (long long)stats_ticks_to_us(ticks);
    e->peer = dup_text(c->addr, strlen(c->addr));
    e->name = dup_text(c->name ? c->name : "", c->name ? strlen(c->name) : 0);
    e->older = l->newest;
    if (l->newest) l->newest->newer = e;
    else l->oldest = e;
    l->newest = e;
    l->len++;
    slowlog_trim(s);
}

static void slowlog_get(client *c)
{
    struct slowlog *l = c->srv->slowlog;
    long long count = 10;
    if (c->argc == 3) {
        if (!arg_ll_or_reply(c, &c->argv[2], &count)) return;
        if (count < -1) {
            reply_error(c, "ERR count should be greater than or equal to -1");
            return;
        }
        if (count == -1) count = l->len;
    }
    if (count > l->len) count = l->len;
    reply_array(c, count);
    slowlog_entry *e = l->newest;
    for (long long i = 0; i < count; i++, e = e->older) {
        reply_array(c, 6);
        reply_int(c, e->id);
        reply_int(c, e->time_s);
        reply_int(c, e->usec);
        reply_array(c, e->argc);
        for (int j = 0; j < e->argc; j++) reply_bulk(c, e->argv[j].ptr, e->argv[j].len);
        reply_bulk_cstr(c, e->peer);
        reply_bulk_cstr(c, e->name);
    }
}

static void slowlog_len(client *c) { reply_int(c, c->srv->slowlog->len); }

static void slowlog_reset_cmd(client *c)
{
    slowlog_reset(c->srv);
    reply_ok(c);
}

static void slowlog_help(client *c)
{
    static const char *const lines[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_slowlog(client *c) { subcommand_dispatch(c); }

const command slowlog_subcommands[] = {
    {"get", slowlog_get, -2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.2.12", "Get the slow log's entries", "[count]", NULL},
    {"len", slowlog_len, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.2.12", "Get the slow log's length", NULL, NULL},
    {"reset", slowlog_reset_cmd, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.2.12", "Clear all entries from the slow log", NULL, NULL},
    {"help", slowlog_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "6.2.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
