/* latency.c - LATENCY: the latency monitor's events (command,
 * fast-command, ...) over latency-monitor-threshold, 160 seconds of each,
 * and the per-command histograms of stats.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "mem.h"

#define LATENCY_TS_LEN 160   /* Redis's history per event */
#define LATENCY_EVENTS 16

typedef struct latency_sample {
    long long time_s, ms;
} latency_sample;

typedef struct latency_event {
    char name[32];
    latency_sample ring[LATENCY_TS_LEN];
    int idx;              /* the next slot */
    long long max;        /* all time */
} latency_event;

struct latency_events {
    latency_event ev[LATENCY_EVENTS];
    int n;
};

void latency_init(server *s) { s->latency = mem_calloc(1, sizeof(*s->latency)); }

void latency_free(server *s)
{
    free(s->latency);
    s->latency = NULL;
}

static latency_event *find_event(server *s, const char *name, size_t len)
{
    for (int i = 0; i < s->latency->n; i++)
        if (strlen(s->latency->ev[i].name) == len && !memcmp(s->latency->ev[i].name, name, len)) return &s->latency->ev[i];
    return NULL;
}

/* Samples of one second are one, the highest, as in Redis. */
void latency_add_sample(server *s, const char *event, uint64_t ms)
{
    latency_event *e = find_event(s, event, strlen(event));
    if (!e) {
        if (s->latency->n == LATENCY_EVENTS) return;
        e = &s->latency->ev[s->latency->n++];
        memset(e, 0, sizeof(*e));
        snprintf(e->name, sizeof(e->name), "%s", event);
    }
    long long now = (long long)(server_clock_ms(s) / 1000);
    if ((long long)ms > e->max) e->max = (long long)ms;
    int prev = (e->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    if (e->ring[prev].time_s == now) {
        if ((long long)ms > e->ring[prev].ms) e->ring[prev].ms = (long long)ms;
        return;
    }
    e->ring[e->idx] = (latency_sample){now, (long long)ms};
    e->idx = (e->idx + 1) % LATENCY_TS_LEN;
}

static const latency_sample *latest(const latency_event *e)
{
    return &e->ring[(e->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
}

static void latency_latest(client *c)
{
    struct latency_events *l = c->srv->latency;
    reply_array(c, l->n);
    for (int i = 0; i < l->n; i++) {
        const latency_sample *ls = latest(&l->ev[i]);
        reply_array(c, 4);
        reply_bulk_cstr(c, l->ev[i].name);
        reply_int(c, ls->time_s);
        reply_int(c, ls->ms);
        reply_int(c, l->ev[i].max);
    }
}

static void latency_history(client *c)
{
    latency_event *e = find_event(c->srv, c->argv[2].ptr, c->argv[2].len);
    long long n = 0;
    if (!e) {
        reply_array(c, 0);
        return;
    }
    for (int j = 0; j < LATENCY_TS_LEN; j++) n += e->ring[j].time_s != 0;
    reply_array(c, n);
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        const latency_sample *ls = &e->ring[(e->idx + j) % LATENCY_TS_LEN];
        if (!ls->time_s) continue;
        reply_array(c, 2);
        reply_int(c, ls->time_s);
        reply_int(c, ls->ms);
    }
}

static void drop_event(struct latency_events *l, latency_event *e)
{
    size_t i = (size_t)(e - l->ev);
    memmove(&l->ev[i], &l->ev[i + 1], (size_t)(l->n - (int)i - 1) * sizeof(*e));
    l->n--;
}

static void latency_reset(client *c)
{
    struct latency_events *l = c->srv->latency;
    long long n = 0;
    if (c->argc == 2) {
        n = l->n;
        l->n = 0;
    }
    for (int i = 2; i < c->argc; i++) {
        latency_event *e = find_event(c->srv, c->argv[i].ptr, c->argv[i].len);
        if (e) drop_event(l, e), n++;
    }
    reply_int(c, n);
}

/* A text summary: each event's latest, average and highest; Redis's
 * doctor gives advice in prose, latchd the figures. */
static void latency_doctor(client *c)
{
    struct latency_events *l = c->srv->latency;
    resp_buf b;
    resp_buf_init(&b);
    if (!l->n) {
        resp_buf_appendf(&b, "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
                             "in the slightest bit. I honestly think you ought to sleep tonight.\n");
    }
    for (int i = 0; i < l->n; i++) {
        const latency_event *e = &l->ev[i];
        long long sum = 0, n = 0;
        for (int j = 0; j < LATENCY_TS_LEN; j++)
            if (e->ring[j].time_s) sum += e->ring[j].ms, n++;
        resp_buf_appendf(&b, "%d. %s: %lld latency spikes (average %lldms) worst all time event %lldms.\n", i + 1,
                         e->name, n, n ? sum / n : 0, e->max);
    }
    reply_verbatim(c, b.data ? b.data : "", b.len);
    resp_buf_free(&b);
}

static void latency_graph(client *c)
{
    latency_event *e = find_event(c->srv, c->argv[2].ptr, c->argv[2].len);
    if (!e) {
        reply_errorf(c, "ERR No samples available for event '%.*s'", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    long long lo = -1, hi = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        if (!e->ring[j].time_s) continue;
        if (lo < 0 || e->ring[j].ms < lo) lo = e->ring[j].ms;
        if (e->ring[j].ms > hi) hi = e->ring[j].ms;
    }
    resp_buf b;
    resp_buf_init(&b);
    resp_buf_appendf(&b, "%s - high %lld ms, low %lld ms (all time high %lld ms)\n", e->name, hi, lo, e->max);
    for (int j = 0; j < 80; j++) resp_buf_append(&b, "-", 1);
    resp_buf_append(&b, "\n", 1);
    reply_verbatim(c, b.data, b.len);
    resp_buf_free(&b);
}

static void histogram_one(client *c, const command *cmd, const command *sub, long long *n, int write)
{
    const struct latency_hist *h = stats_hist(c->srv, command_stat_id(cmd, sub));
    if (!h) return;
    (*n)++;
    if (!write) return;
    char name[96];
    command_fullname(sub ? cmd : NULL, sub ? sub : cmd, name, sizeof(name));
    reply_bulk_cstr(c, name);
    stats_hist_reply(c, h);
}

/* Every command with calls, or the ones named ("client" is each of its
 * subcommands, "client|id" one); unknown names are skipped. */
static long long histogram_walk(client *c, int write)
{
    long long n = 0;
    if (c->argc == 2) {
        for (size_t i = 0; i < command_stat_slots(); i++) {
            const command *cmd, *sub;
            command_stat_at(i, &cmd, &sub);
            histogram_one(c, cmd, sub, &n, write);
        }
        return n;
    }
    for (int i = 2; i < c->argc; i++) {
        const resp_slice *a = &c->argv[i];
        const char *bar = memchr(a->ptr, '|', a->len);
        const command *cmd = command_lookup(a->ptr, bar ? (size_t)(bar - a->ptr) : a->len);
        if (!cmd) continue;
        if (bar) {
            const command *sub = cmd->subs ? subcommand_lookup(cmd, bar + 1, a->len - (size_t)(bar + 1 - a->ptr)) : NULL;
            if (sub) histogram_one(c, cmd, sub, &n, write);
        } else if (cmd->subs) {
            for (const command *sub = cmd->subs; sub->name; sub++) histogram_one(c, cmd, sub, &n, write);
        } else {
            histogram_one(c, cmd, NULL, &n, write);
        }
    }
    return n;
}

static void latency_histogram(client *c)
{
    reply_map(c, histogram_walk(c, 0));
    histogram_walk(c, 1);
}

static void latency_help(client *c)
{
    static const char *const lines[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_latency(client *c) { subcommand_dispatch(c); }

#define ALS (CMD_ADMIN | CMD_LOADING | CMD_STALE)
const command latency_subcommands[] = {
    {"doctor", latency_doctor, 2, ALS, 0, 0, 0, "server", "2.8.13", "Return a human readable latency analysis report.", NULL, NULL},
    {"graph", latency_graph, 3, ALS, 0, 0, 0, "server", "2.8.13", "Return a latency graph for the event.", "event", NULL},
    {"help", latency_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13", "Show helpful text about the different subcommands.", NULL, NULL},
    {"histogram", latency_histogram, -2, ALS, 0, 0, 0, "server", "7.0.0", "Return the cumulative distribution of latencies of a subset of commands or all.", "[command [command ...]]", NULL},
    {"history", latency_history, 3, ALS, 0, 0, 0, "server", "2.8.13", "Return timestamp-latency samples for the event.", "event", NULL},
    {"latest", latency_latest, 2, ALS, 0, 0, 0, "server", "2.8.13", "Return the latest latency samples for all events.", NULL, NULL},
    {"reset", latency_reset, -2, ALS, 0, 0, 0, "server", "2.8.13", "Reset latency data for one or more events.", "[event [event ...]]", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
