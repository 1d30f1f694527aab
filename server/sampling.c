/* sampling.c - INFO's sampled figures: the instantaneous rates (ops/sec,
 * kbps) and the clients' recent peak buffers, on a timer run while busy. */
/* Redis takes them in serverCron, which runs hz times a second whatever
 * happens. latchd's idle server sleeps (no periodic tick), so the timer
 * starts when the loop sees bytes move (server_sampling_wake, once per loop
 * iteration, not per command) and stops once STATS_SAMPLES quiet ticks
 * have pushed every sample to zero: what Redis's INFO would then say too. */
#include <string.h>

#include "server.h"

/* Redis's trackInstantaneousMetric: the rate since the last sample, in the
 * ring of STATS_SAMPLES whose mean INFO prints. */
static void track(inst_metric *m, uint64_t now_ms, uint64_t reading)
{
    uint64_t t = now_ms - m->last_ms;
    m->samples[m->idx] = t > 0 ? (long long)((reading - m->last_count) * 1000 / t) : 0;
    m->idx = (m->idx + 1) % STATS_SAMPLES;
    m->last_ms = now_ms;
    m->last_count = reading;
}

long long server_instantaneous(const server *s, int metric)
{
    long long sum = 0;
    for (int j = 0; j < STATS_SAMPLES; j++) sum += s->sampling.m[metric].samples[j];
    return sum / STATS_SAMPLES;
}

static void readings(const server *s, uint64_t out[METRIC_COUNT])
{
    out[METRIC_COMMANDS] = s->stat_commands;
    out[METRIC_NET_IN] = s->stat_net_in;
    out[METRIC_NET_OUT] = s->stat_net_out;
}

/* Redis's clientsCronTrackExpansiveClients. The input is the query buffer
 * the client holds of its own (an unfinished command's, its arguments
 * inside); the server's one read buffer a client borrows for a read is
 * nobody's. The output is what the output limits count. */
static void client_usage(const client *c, size_t *in, size_t *out)
{
    *in = (c->flags & CLIENT_READ_BUF) ? 0 : c->query.cap;
    *out = client_output_memory(c);
}

static void peak_record(server *s, uint64_t sec, size_t in, size_t out)
{
    peak_slot *p = &s->sampling.peaks[sec % CLIENTS_PEAK_SLOTS];
    if (p->sec != sec) *p = (peak_slot){.sec = sec};
    if (in > p->in) p->in = in;
    if (out > p->out) p->out = out;
}

/* Once a second while sampling, every client once, as clientsCron's
 * contract is (it spreads them over the second's ticks; one pass costs
 * the same in all). */
static void clients_pass(server *s, uint64_t sec)
{
    peak_record(s, sec, 0, 0);   /* this second's slot is fresh even with no clients */
    for (const client *c = s->clients; c; c = c->next) {
        size_t in, out;
        client_usage(c, &in, &out);
        peak_record(s, sec, in, out);
    }
}

/* Redis's getExpansiveClientsInfo: the highest of the last seconds' slots
 * (it zeroes the slot after the current one, so the current second and the
 * six before count). latchd's slots go stale while the timer sleeps: a slot
 * counts by its second, and the clients as they are now count too, as
 * Redis's cron would have seen them in the quiet seconds. */
void server_recent_max_buffers(server *s, size_t *in, size_t *out)
{
    uint64_t sec = uv_now(s->loop) / 1000;
    size_t i = 0, o = 0;
    for (int j = 0; j < CLIENTS_PEAK_SLOTS; j++) {
        const peak_slot *p = &s->sampling.peaks[j];
        if (sec - p->sec >= CLIENTS_PEAK_SLOTS - 1) continue;
        if (p->in > i) i = p->in;
        if (p->out > o) o = p->out;
    }
    for (const client *c = s->clients; c; c = c->next) {
        size_t ci, co;
        client_usage(c, &ci, &co);
        if (ci > i) i = ci;
        if (co > o) o = co;
    }
    *in = i;
    *out = o;
}

/* Redis's run_with_period(100) in a cron at hz: every 100 ms, or every
 * cron tick when hz is under 10. */
static uint64_t period_ms(const server *s)
{
    uint64_t tick = s->cfg.hz > 0 ? 1000u / (uint64_t)s->cfg.hz : 100;
    return tick > 100 ? tick : 100;
}

static void on_sample(uv_timer_t *t)
{
    server *s = t->data;
    server_sampling *sp = &s->sampling;
    if (s->cron_paused) {   /* Redis's pause_cron skips the sampling; wake restarts it */
        uv_timer_stop(t);
        sp->on = 0;
        return;
    }
    uint64_t now = uv_now(s->loop), r[METRIC_COUNT];
    readings(s, r);
    int moved = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        moved |= r[i] != sp->m[i].last_count;
        track(&sp->m[i], now, r[i]);
    }
    if (now / 1000 != sp->pass_sec) {
        sp->pass_sec = now / 1000;
        clients_pass(s, sp->pass_sec);
    }
    sp->quiet = moved ? 0 : sp->quiet + 1;
    if (sp->quiet >= STATS_SAMPLES) {   /* every sample is 0 now */
        uv_timer_stop(t);
        sp->on = 0;
    } else if (uv_timer_get_repeat(t) != period_ms(s)) {
        uv_timer_set_repeat(t, period_ms(s));   /* CONFIG SET hz */
    }
}

/* Called once per loop iteration (server.c's check handle). The bytes
 * that woke it were counted since the last sample: the first sample's
 * window starts now, as Redis's next tick would be at most a period away. */
void server_sampling_wake_slow(server *s)
{
    server_sampling *sp = &s->sampling;
    if (s->cron_paused || s->shutting_down) return;
    uint64_t now = uv_now(s->loop);
    for (int i = 0; i < METRIC_COUNT; i++) sp->m[i].last_ms = now;
    sp->on = 1;
    sp->quiet = 0;
    uv_timer_start(&s->sample_timer, on_sample, period_ms(s), period_ms(s));
}

void server_sampling_init(server *s)
{
    uv_timer_init(s->loop, &s->sample_timer);
    s->sample_timer.data = s;
    uv_unref((uv_handle_t *)&s->sample_timer);   /* never what keeps the loop alive */
    server_sampling_reset(s);
}

/* CONFIG RESETSTAT (Redis's resetServerStats): the rings emptied, the
 * counts read afresh (they were just zeroed). */
void server_sampling_reset(server *s)
{
    server_sampling *sp = &s->sampling;
    uint64_t r[METRIC_COUNT], now = uv_now(s->loop);
    readings(s, r);
    for (int i = 0; i < METRIC_COUNT; i++) sp->m[i] = (inst_metric){.last_ms = now, .last_count = r[i]};
}
