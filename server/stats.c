/* stats.c - what commands cost and how they failed: INFO commandstats,
 * errorstats, latencystats, the error counters of INFO stats, and the tick
 * clock every command's duration is read from. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands/commands.h"
#include "mem.h"

/* ---- the tick clock ---- */

static double ns_per_tick = 1.0;
static pthread_once_t calibrated = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC runs at a constant rate (x86's constant_tsc): 200 µs against
 * CLOCK_MONOTONIC fix its rate to about 0.1%, once per process, and cost
 * start-up no more than that. */
static void calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint64_t n0 = mono_ns(), t0 = stats_ticks(), n1;
    do n1 = mono_ns();
    while (n1 - n0 < 200000);
    uint64_t t1 = stats_ticks();
    if (t1 > t0) ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
#endif
}

#if !defined(__x86_64__) && !defined(__i386__)
uint64_t stats_ticks_slow(void) { return mono_ns(); }
#endif

double stats_ns_per_tick(void) { return ns_per_tick; }
uint64_t stats_us_to_ticks(long long us) { return (uint64_t)((double)us * 1000.0 / ns_per_tick); }
uint64_t stats_ticks_to_us(uint64_t ticks) { return (uint64_t)((double)ticks * ns_per_tick / 1000.0); }

/* ---- latency histograms: log-linear, 16 steps per power of two ---- */

/* The buckets: stats_hist_bucket() in server.h. */
#define HIST_SUB STATS_HIST_SUB
#define HIST_BUCKETS STATS_HIST_BUCKETS


static void hist_total(struct latency_hist *h)
{
    h->total = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) h->total += h->count[i];
}

/* The highest value bucket i holds, as HDR's highest equivalent value. */
static uint64_t hist_bucket_top(size_t i)
{
    if (i < HIST_SUB) return i;
    int e = (int)(i / HIST_SUB) + 3;
    uint64_t base = (uint64_t)1 << e, step = (uint64_t)1 << (e - 4);
    return base + (i % HIST_SUB) * step + step - 1;
}

static uint64_t hist_at_percentile(const struct latency_hist *h, double pct)
{
    uint64_t want = (uint64_t)ceil(pct / 100.0 * (double)h->total), seen = 0;
    if (want == 0) want = 1;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->count[i];
        if (seen >= want) return hist_bucket_top(i);
    }
    return 0;
}

/* ---- per command ---- */

void stats_init(server *s)
{
    pthread_once(&calibrated, calibrate);
    command_table_init();
    s->cmdstats = mem_calloc(command_stat_slots(), sizeof(*s->cmdstats));
}

static void free_hists(server *s)
{
    for (size_t i = 0; i < command_stat_slots(); i++) {
        free(s->cmdstats[i].hist);
        s->cmdstats[i].hist = NULL;
    }
}

void stats_free(server *s)
{
    if (!s->cmdstats) return;
    free_hists(s);
    free(s->cmdstats);
    s->cmdstats = NULL;
    free(s->errstats);
    s->errstats = NULL;
    s->nerrstats = 0;
}

void stats_reset(server *s)
{
    free_hists(s);
    memset(s->cmdstats, 0, command_stat_slots() * sizeof(*s->cmdstats));
    s->nerrstats = 0;
    s->stat_total_errors = 0;
}

/* Redis tracks at most 128 error codes; later new ones only add to the
 * total. */
#define ERRSTATS_MAX 128

/* Redis's code of an error: its first word if it has one within the first
 * 32 bytes, else ERR. text is the error without its '-'. */
void stats_count_error(server *s, const char *text, size_t len)
{
    const char *sp = memchr(text, ' ', len < 31 ? len : 31);
    size_t n = sp ? (size_t)(sp - text) : 3;
    if (!sp) text = "ERR";
    s->stat_total_errors++;
    size_t lo = 0, hi = s->nerrstats;
    while (lo < hi) {   /* sorted, as Redis's rax lists them */
        size_t mid = (lo + hi) / 2;
        int cmp = strncmp(s->errstats[mid].code, text, n);
        if (cmp == 0 && s->errstats[mid].code[n] == '\0') {
            s->errstats[mid].count++;
            return;
        }
        if (cmp < 0 || (cmp == 0 && s->errstats[mid].code[n] == '\0')) lo = mid + 1;
        else hi = mid;
    }
    if (s->nerrstats == ERRSTATS_MAX) return;
    if (!s->errstats) s->errstats = mem_calloc(ERRSTATS_MAX, sizeof(*s->errstats));
    memmove(&s->errstats[lo + 1], &s->errstats[lo], (s->nerrstats - lo) * sizeof(*s->errstats));
    if (n >= sizeof(s->errstats[lo].code)) n = sizeof(s->errstats[lo].code) - 1;
    memcpy(s->errstats[lo].code, text, n);
    s->errstats[lo].code[n] = '\0';
    s->errstats[lo].count = 1;
    s->nerrstats++;
}

/* The reply written to c from mark on, if it is an error: its text after
 * the '-', else NULL. */
static const char *reply_error_at(const client *c, size_t mark, size_t *len)
{
    if (c->out.len <= mark + 2 || c->out.data[mark] != '-') return NULL;
    const char *p = c->out.data + mark + 1;
    const char *end = memchr(p, '\r', c->out.len - mark - 1);
    *len = end ? (size_t)(end - p) : c->out.len - mark - 1;
    return p;
}

static cmd_stat *stat_of(client *c)
{
    return &c->srv->cmdstats[command_stat_id(c->cmd, c->sub)];
}

/* The rare part of stats_record: an error reply, a slow command. */
void stats_record_slow(client *c, size_t mark, uint64_t ticks)
{
    server *s = c->srv;
    size_t elen;
    const char *err = reply_error_at(c, mark, &elen);
    if (err) {   /* a script's error from redis.call was counted as that command's */
        if (!s->stat_error_counted) stats_count_error(s, err, elen);
        stat_of(c)->failed++;
    }
    s->stat_error_counted = 0;
    if (ticks >= s->slowlog_ticks && !(c->cmd->flags & CMD_SKIP_SLOWLOG)) slowlog_push(c, ticks);
    if (ticks >= s->latency_ticks)
        latency_add_sample(s, (c->cmd->flags & CMD_FAST) ? "fast-command" : "command", stats_ticks_to_us(ticks) / 1000);
}

void stats_blocked(client *c, uint64_t ticks)
{
    cmd_stat *st = stat_of(c);
    st->calls++;
    st->ticks += ticks;
}

void stats_unblocked(client *c, size_t mark, uint64_t ticks, int failed)
{
    server *s = c->srv;
    cmd_stat *st = stat_of(c);
    size_t elen;
    const char *err = reply_error_at(c, mark, &elen);
    st->ticks += ticks;
    if (err) stats_count_error(s, err, elen);
    if (err || failed) st->failed++;
    if (s->cfg.latency_tracking) (st->hist ? st->hist->count : stats_hist_new(st))[stats_hist_bucket(ticks)]++;
    if (ticks >= s->slowlog_ticks && !(c->cmd->flags & CMD_SKIP_SLOWLOG)) slowlog_push(c, ticks);
    if (ticks >= s->latency_ticks) latency_add_sample(s, "command-unblocking", stats_ticks_to_us(ticks) / 1000);
}

uint64_t *stats_hist_new(cmd_stat *st)
{
    st->hist = mem_calloc(1, sizeof(latency_hist) + HIST_BUCKETS * sizeof(uint64_t));
    return st->hist->count;
}

void stats_rejected(client *c, size_t mark)
{
    size_t elen;
    const char *err = reply_error_at(c, mark, &elen);
    if (!err) return;
    stats_count_error(c->srv, err, elen);
    if (c->cmd) stat_of(c)->rejected++;
}

void stats_script_refused(server *s, const command *cmd, const char *refusal)
{
    /* "-OOM ..." counts as OOM; a text without its own code is an ERR */
    if (refusal[0] == '-') stats_count_error(s, refusal + 1, strlen(refusal + 1));
    else stats_count_error(s, "ERR", 3);
    if (cmd) s->cmdstats[command_stat_id(cmd, NULL)].rejected++;
}

void stats_thresholds_sync(server *s)
{
    long long us = s->cfg.slowlog_log_slower_than;
    s->slowlog_ticks = us < 0 ? UINT64_MAX : stats_us_to_ticks(us);
    long long ms = s->cfg.latency_monitor_threshold;
    s->latency_ticks = ms <= 0 ? UINT64_MAX : stats_us_to_ticks(ms * 1000);
    s->rare_ticks = s->slowlog_ticks < s->latency_ticks ? s->slowlog_ticks : s->latency_ticks;
    if (!s->cfg.latency_tracking) free_hists(s);
}

/* ---- INFO ---- */

/* Redis replaces what would break INFO's lines in a name. */
static void sanitize(char *name)
{
    for (char *p = name; *p; p++)
        if (*p == '#' || *p == ':' || *p == '\n' || *p == '\r') *p = '_';
}

static void safe_name(char *dst, size_t len, const command *cmd, const command *sub)
{
    command_fullname(sub ? cmd : NULL, sub ? sub : cmd, dst, len);
    sanitize(dst);
}

void stats_info_commandstats(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Commandstats\r\n");
    for (size_t i = 0; i < command_stat_slots(); i++) {
        const cmd_stat *st = &s->cmdstats[i];
        const command *cmd, *sub;
        char name[96];
        if (!st->calls && !st->failed && !st->rejected) continue;
        command_stat_at(i, &cmd, &sub);
        safe_name(name, sizeof(name), cmd, sub);
        long long usec = (long long)stats_ticks_to_us(st->ticks);
        resp_buf_appendf(b, "cmdstat_%s:calls=%llu,usec=%lld,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
            name, (unsigned long long)st->calls, usec, st->calls ? (double)(float)((float)usec / (float)st->calls) : 0.0,
            (unsigned long long)st->rejected, (unsigned long long)st->failed);
    }
}

void stats_info_errorstats(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Errorstats\r\n");
    for (size_t i = 0; i < s->nerrstats; i++) {
        char name[sizeof(s->errstats[i].code)];
        memcpy(name, s->errstats[i].code, sizeof(name));
        sanitize(name);
        resp_buf_appendf(b, "errorstat_%s:count=%llu\r\n", name, (unsigned long long)s->errstats[i].count);
    }
}

typedef struct pct_list {
    double v[32];
    int n;
} pct_list;

static void read_percentiles(const char *name, const char *value, size_t vlen, void *ctx)
{
    (void)name;
    (void)vlen;
    pct_list *l = ctx;
    const char *p = value;
    char *end;
    while (*p && l->n < 32) {
        double v = strtod(p, &end);
        if (end == p) break;
        l->v[l->n++] = v;
        p = end;
    }
}

/* Redis prints a percentile with %f and trims the trailing zeros. */
static void percentile_label(char *dst, size_t len, double v)
{
    snprintf(dst, len, "%f", v);
    char *dot = strchr(dst, '.');
    if (!dot) return;
    char *e = dst + strlen(dst) - 1;
    while (e > dot && *e == '0') *e-- = '\0';
    if (e == dot) *e = '\0';
}

void stats_info_latencystats(server *s, resp_buf *b)
{
    pct_list pcts = {.n = 0};
    resp_buf_appendf(b, "# Latencystats\r\n");
    if (!s->cfg.latency_tracking) return;
    config_get(&s->cfg, "latency-tracking-info-percentiles", strlen("latency-tracking-info-percentiles"),
               read_percentiles, &pcts);
    for (size_t i = 0; i < command_stat_slots(); i++) {
        latency_hist *h = s->cmdstats[i].hist;
        const command *cmd, *sub;
        char name[96];
        if (!h) continue;
        hist_total(h);
        if (!h->total) continue;
        command_stat_at(i, &cmd, &sub);
        safe_name(name, sizeof(name), cmd, sub);
        resp_buf_appendf(b, "latency_percentiles_usec_%s:", name);
        for (int j = 0; j < pcts.n; j++) {
            char label[64];
            percentile_label(label, sizeof(label), pcts.v[j]);
            double us = (double)hist_at_percentile(h, pcts.v[j]) * ns_per_tick / 1000.0;
            resp_buf_appendf(b, "%sp%s=%.3f", j ? "," : "", label, us);
        }
        resp_buf_appendf(b, "\r\n");
    }
}

/* LATENCY HISTOGRAM's map for one command: its calls, then Redis's
 * cumulative distribution at 1024 ns and each power of two above, in µs
 * (1, 2, 4, ...), the steps that add nothing left out. */
void stats_hist_reply(client *c, const struct latency_hist *h)
{
    long long at_us[40], cum[40];
    int n = 0;
    uint64_t seen = 0, last = 0;
    size_t bucket = 0;
    for (int e = 10; e < 50 && last < h->total; e++) {
        double limit_ns = (double)((uint64_t)1 << e);
        while (bucket < HIST_BUCKETS && (double)hist_bucket_top(bucket) * ns_per_tick < limit_ns)
            seen += h->count[bucket++];
        if (e == 49) seen = h->total;
        if (seen > last) {
            at_us[n] = (long long)(((uint64_t)1 << e) / 1000);
            cum[n++] = (long long)seen;
            last = seen;
        }
    }
    reply_map(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_int(c, (long long)h->total);
    reply_bulk_cstr(c, "histogram_usec");
    reply_map(c, n);
    for (int i = 0; i < n; i++) {
        reply_int(c, at_us[i]);
        reply_int(c, cum[i]);
    }
}

const latency_hist *stats_hist(server *s, size_t id)
{
    latency_hist *h = s->cmdstats[id].hist;
    if (h) hist_total(h);
    return h && h->total ? h : NULL;
}
