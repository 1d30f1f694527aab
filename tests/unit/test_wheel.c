/* test_wheel.c - timing wheel: exact firing order and timing over all levels,
 * cancel/re-arm (also from inside fire()), far deadlines, next_due accuracy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wheel.h"

#define LV(l) ((uint64_t)1 << (6 * (l)))  /* span of one slot at level l */
#define HOUR UINT64_C(3600000)
#define DAY (24 * HOUR)
#define YEAR (365 * DAY)
#define NOW0 UINT64_C(1700000000123)      /* realistic, unaligned epoch ms */

typedef struct tnode {
    wheel_node n;          /* first: fire() casts back */
    uint64_t want;         /* deadline as armed by the test */
    unsigned fired;
    int armed;             /* model of wheel_node_armed */
    int late_ok;           /* re-armed overdue inside fire(): next advance */
    unsigned id;
} tnode;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(2685821657736338717);
}

static wheel *new_wheel(uint64_t now)
{
    wheel *w = malloc(sizeof *w);
    assert_non_null(w);
    wheel_init(w, now);
    return w;
}

static tnode *new_nodes(size_t n)
{
    tnode *t = calloc(n, sizeof *t);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++) {
        wheel_node_init(&t[i].n);
        t[i].id = (unsigned)i;
    }
    return t;
}

static void arm(wheel *w, tnode *t, uint64_t d)
{
    wheel_add(w, &t->n, d);
    t->want = d;
    t->armed = 1;
}

/* ---- fire() that records ids in order ---------------------------------- */

typedef struct rec {
    unsigned ids[64];
    uint64_t at[64];       /* w->now seen by fire() */
    size_t n;
    wheel *w;
    void (*hook)(struct rec *r, tnode *t);
    tnode *nodes;
} rec;

static void rec_fire(wheel_node *n, void *ctx)
{
    rec *r = ctx;
    tnode *t = (tnode *)n;

    assert_false(wheel_node_armed(n));
    assert_true(r->n < 64);
    r->ids[r->n] = t->id;
    r->at[r->n++] = r->w->now;
    t->fired++;
    t->armed = 0;
    if (r->hook)
        r->hook(r, t);
}

static void expect_ids(const rec *r, const unsigned *ids, size_t n)
{
    assert_int_equal(r->n, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(r->ids[i], ids[i]);
}

/* ---- 1e6 timers over every level --------------------------------------- */

typedef struct order_ctx {
    uint64_t lo, hi, last;
    int first;
    size_t fired;
} order_ctx;

static void order_fire(wheel_node *n, void *ctx)
{
    order_ctx *c = ctx;
    tnode *t = (tnode *)n;

    /* plain ifs: cmocka calls per assert would dominate 1e6 fires */
    if (wheel_node_armed(n) || t->fired || t->want != n->deadline)
        fail_msg("node %u armed/refired/corrupt", t->id);
    if (t->want > c->hi)
        fail_msg("early: deadline %llu > now %llu", (unsigned long long)t->want,
                 (unsigned long long)c->hi);
    if (!c->first && t->want <= c->lo)
        fail_msg("late: deadline %llu <= previous now %llu",
                 (unsigned long long)t->want, (unsigned long long)c->lo);
    if (t->want < c->last)
        fail_msg("order: %llu after %llu", (unsigned long long)t->want,
                 (unsigned long long)c->last);
    c->last = t->want;
    t->fired = 1;
    c->fired++;
}

/* Deadlines: some overdue, exact relative and absolute level boundaries +-1,
 * beyond the top level's range, the rest log-spread over all levels. */
static uint64_t gen_deadline(uint64_t *s, uint64_t now)
{
    uint64_t r = rng_next(s), kind = r % 16, l = 1 + (r >> 8) % 7;
    uint64_t adj = (r >> 16) % 3;  /* -1, 0, +1 */

    if (kind == 0)
        return now - (r >> 4) % 5000;
    if (kind == 1)
        return now + LV(l) + adj - 1;
    if (kind == 2)
        return (((now >> (6 * l)) + 1 + (r >> 20) % 3) << (6 * l)) + adj - 1;
    if (kind == 3)
        return now + LV(8) + (r >> 4) % LV(8);
    return now + rng_next(s) % LV(1 + (r >> 8) % 8);
}

/* Step sizes log-uniform up to 1/8 of the time elapsed, so every scale from 1 ms to
 * years gets many advances; sometimes exactly to next_due, sometimes 0. */
static uint64_t gen_step(uint64_t *s, const wheel *w, uint64_t elapsed)
{
    uint64_t r = rng_next(s);
    unsigned bits = 60u - (unsigned)__builtin_clzll(elapsed + 64);

    if (r % 16 == 0)
        return 0;
    if (r % 16 == 1)
        return wheel_next_due(w) - w->now;
    return 1 + rng_next(s) % ((uint64_t)1 << ((r >> 8) % bits));
}

static void test_million_random(void **state)
{
    const size_t n = 1000000;
    wheel *w = new_wheel(NOW0);
    tnode *t = new_nodes(n);
    uint64_t s = 0x9e3779b97f4a7c15u, max = 0;
    order_ctx c = {.lo = NOW0, .hi = NOW0, .first = 1};
    size_t calls = 0;
    clock_t c0 = clock();
    (void)state;

    for (size_t i = 0; i < n; i++) {
        t[i].want = gen_deadline(&s, NOW0);
        if (t[i].want > max)
            max = t[i].want;
        wheel_add(w, &t[i].n, t[i].want);
    }
    assert_int_equal(wheel_count(w), n);
    while (c.fired < n) {
        c.lo = w->now;
        c.hi = w->now + gen_step(&s, w, w->now - NOW0);
        c.last = 0;
        size_t before = c.fired, got = wheel_advance(w, c.hi, order_fire, &c);
        assert_int_equal(got, c.fired - before);
        assert_int_equal(w->now, c.hi);
        assert_int_equal(wheel_count(w), n - c.fired);
        assert_true(wheel_next_due(w) > c.hi);
        c.first = 0;
        calls++;
    }
    assert_true(w->now >= max);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(t[i].fired, 1);
    assert_int_equal(wheel_next_due(w), UINT64_MAX);
    print_message("1e6 timers: %zu advances, %.0f ms\n", calls,
                  1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC);
    free(t);
    free(w);
}

/* ---- random ops against a model, with mutation from inside fire() ------- */

typedef struct model_ctx {
    wheel *w;
    tnode *t;
    size_t n, armed;
    uint64_t hi, last, s;
} model_ctx;

static void model_fire(wheel_node *n, void *ctx)
{
    model_ctx *m = ctx;
    tnode *t = (tnode *)n, *o;
    uint64_t r = rng_next(&m->s);

    if (!t->armed || t->want > m->hi || t->want < m->last)
        fail_msg("node %u: armed %d want %llu hi %llu last %llu", t->id,
                 t->armed, (unsigned long long)t->want,
                 (unsigned long long)m->hi, (unsigned long long)m->last);
    m->last = t->want;
    t->armed = 0;
    t->late_ok = 0;
    t->fired++;
    m->armed--;
    o = &m->t[rng_next(&m->s) % m->n];
    if (r % 8 == 0) {            /* cancel another, maybe due this call */
        wheel_del(m->w, &o->n);
        m->armed -= (size_t)o->armed;
        o->armed = 0;
    } else if (r % 8 == 1) {     /* re-arm another (or itself) anywhere */
        uint64_t base = m->w->now > 100 ? m->w->now - 100 : 0;
        uint64_t d = base + (r >> 8) % 5000;
        m->armed += (size_t)!o->armed;
        arm(m->w, o, d);
        o->late_ok = d <= m->w->now;  /* overdue: fires next advance */
    }
}

/* late_ok covers only re-arms from this call: they must fire in the next. */
static void model_check(model_ctx *m)
{
    assert_int_equal(wheel_count(m->w), m->armed);
    for (size_t i = 0; i < m->n; i++) {
        tnode *t = &m->t[i];
        assert_int_equal(wheel_node_armed(&t->n), t->armed);
        if (t->armed && t->want <= m->hi && !t->late_ok)
            fail_msg("node %zu missed: deadline %llu now %llu", i,
                     (unsigned long long)t->want, (unsigned long long)m->hi);
        t->late_ok = 0;
    }
}

static void model_run(uint64_t now, uint64_t seed)
{
    model_ctx m = {.w = new_wheel(now), .n = 1500, .s = seed};
    uint64_t s = seed * 3 + 1;

    m.t = new_nodes(m.n);
    for (int op = 0; op < 60000; op++) {
        uint64_t r = rng_next(&s), i = (r >> 8) % m.n;
        tnode *t = &m.t[i];
        if (r % 10 < 5) {
            uint64_t off = rng_next(&s) % LV(1 + (r >> 20) % 5);
            m.armed += (size_t)!t->armed;
            arm(m.w, t, (r >> 40) % 16 ? m.w->now + off : m.w->now - off % 100);
            t->late_ok = 0;
        } else if (r % 10 < 7) {
            wheel_del(m.w, &t->n);
            m.armed -= (size_t)t->armed;
            t->armed = 0;
        } else {
            m.hi = m.w->now + rng_next(&s) % LV(1 + (r >> 20) % 4);
            m.last = 0;
            wheel_advance(m.w, m.hi, model_fire, &m);
            model_check(&m);
        }
    }
    free(m.t);
    free(m.w);
}

static void test_model_random(void **state)
{
    (void)state;
    model_run(0, 1);
    model_run(NOW0, 2);
    model_run(LV(7) - 3, 3);       /* crosses a top-level slot */
    model_run(LV(8) - 20000, 4);   /* crosses the 2^48 top-level wrap */
}

/* ---- cancel / re-arm ---------------------------------------------------- */

static void count_fire(wheel_node *n, void *ctx)
{
    (void)n;
    ++*(size_t *)ctx;
}

static void test_cancel_many(void **state)
{
    wheel *w = new_wheel(NOW0);
    tnode *t = new_nodes(20000);
    uint64_t s = 7;
    size_t fired = 0;
    (void)state;

    for (size_t i = 0; i < 20000; i++)
        wheel_add(w, &t[i].n, gen_deadline(&s, NOW0));
    assert_int_equal(wheel_count(w), 20000);
    for (size_t i = 0; i < 20000; i++) {
        wheel_del(w, &t[i].n);
        assert_false(wheel_node_armed(&t[i].n));
        wheel_del(w, &t[i].n);  /* second del is a no-op */
    }
    assert_int_equal(wheel_count(w), 0);
    assert_int_equal(wheel_next_due(w), UINT64_MAX);
    for (int i = 0; i < WHEEL_LEVELS; i++)
        assert_int_equal(w->occupied[i], 0);
    assert_int_equal(wheel_advance(w, NOW0 + LV(8) * 4, count_fire, &fired), 0);
    assert_int_equal(fired, 0);
    free(t);
    free(w);
}

static void test_rearm(void **state)
{
    wheel *w = new_wheel(1000);
    tnode *t = new_nodes(2);
    rec r = {.w = w};
    (void)state;

    wheel_add(w, &t[0].n, 1100);
    wheel_add(w, &t[0].n, 1050);      /* earlier */
    wheel_add(w, &t[1].n, 1100);
    wheel_add(w, &t[1].n, 1000 + 5000); /* later, other level */
    assert_int_equal(wheel_count(w), 2);
    assert_int_equal(wheel_advance(w, 1049, rec_fire, &r), 0);
    assert_int_equal(wheel_advance(w, 1050, rec_fire, &r), 1);
    assert_int_equal(r.ids[0], 0);
    assert_int_equal(wheel_advance(w, 5999, rec_fire, &r), 0);
    assert_int_equal(wheel_advance(w, 6000, rec_fire, &r), 1);
    assert_int_equal(r.ids[1], 1);
    assert_int_equal(r.at[1], 6000);
    assert_int_equal(wheel_count(w), 0);
    free(t);
    free(w);
}

/* fire(0) cancels 1 (same slot), cancels 3 (due later this call), re-arms 2
 * (same slot) to later, and arms 4 for a time inside this call. */
static void hook_mutate(rec *r, tnode *t)
{
    if (t->id != 0)
        return;
    wheel_del(r->w, &r->nodes[1].n);
    wheel_del(r->w, &r->nodes[3].n);
    wheel_add(r->w, &r->nodes[2].n, 30);
    wheel_add(r->w, &r->nodes[4].n, 12);
}

static void test_mutate_in_fire(void **state)
{
    wheel *w = new_wheel(0);
    tnode *t = new_nodes(6);
    rec r = {.w = w, .hook = hook_mutate, .nodes = t};
    static const unsigned want1[] = {0, 5, 4}, want2[] = {2};
    (void)state;

    wheel_add(w, &t[0].n, 10);
    wheel_add(w, &t[1].n, 10);
    wheel_add(w, &t[2].n, 10);
    wheel_add(w, &t[5].n, 10);
    wheel_add(w, &t[3].n, 11);
    assert_int_equal(wheel_advance(w, 20, rec_fire, &r), 3);
    expect_ids(&r, want1, 3);
    assert_int_equal(r.at[2], 12);
    assert_int_equal(t[1].fired + t[3].fired, 0);
    assert_int_equal(wheel_count(w), 1);
    r.n = 0;
    assert_int_equal(wheel_advance(w, 29, rec_fire, &r), 0);
    assert_int_equal(wheel_advance(w, 40, rec_fire, &r), 1);
    expect_ids(&r, want2, 1);
    assert_int_equal(r.at[0], 30);
    free(t);
    free(w);
}

/* A node that re-arms itself overdue from fire() must not loop forever: it
 * fires once per advance call. */
static void hook_rearm_self(rec *r, tnode *t)
{
    wheel_add(r->w, &t->n, 0);
}

static void test_rearm_overdue_in_fire(void **state)
{
    wheel *w = new_wheel(100);
    tnode *t = new_nodes(2);
    rec r = {.w = w, .hook = hook_rearm_self};
    (void)state;

    wheel_add(w, &t[0].n, 110);
    assert_int_equal(wheel_advance(w, 100 + YEAR, rec_fire, &r), 1);
    assert_int_equal(r.at[0], 110);
    assert_int_equal(wheel_next_due(w), 100 + YEAR);
    assert_int_equal(wheel_count(w), 1);
    assert_int_equal(wheel_advance(w, 100 + YEAR, rec_fire, &r), 1);
    assert_int_equal(wheel_advance(w, 100 + YEAR + 5, rec_fire, &r), 1);
    assert_int_equal(r.n, 3);
    r.hook = NULL;
    assert_int_equal(wheel_advance(w, 100 + YEAR + 5, rec_fire, &r), 1);
    assert_int_equal(wheel_count(w), 0);
    free(t);
    free(w);
}

/* Deadlines at or before now fire on the next advance (even without time
 * moving), sorted by deadline; same-ms nodes keep arming order. */
static void test_overdue_order(void **state)
{
    wheel *w = new_wheel(NOW0);
    tnode *t = new_nodes(6);
    rec r = {.w = w};
    static const unsigned want[] = {4, 1, 3, 5, 0, 2};
    (void)state;

    wheel_add(w, &t[0].n, NOW0);
    wheel_add(w, &t[1].n, NOW0 - 5);
    wheel_add(w, &t[2].n, NOW0 + 1);
    wheel_add(w, &t[3].n, NOW0 - 3);
    wheel_add(w, &t[4].n, 0);
    wheel_add(w, &t[5].n, NOW0 - 3);
    assert_int_equal(wheel_next_due(w), NOW0);
    assert_int_equal(wheel_advance(w, NOW0, rec_fire, &r), 5);
    assert_int_equal(wheel_next_due(w), NOW0 + 1);
    assert_int_equal(wheel_advance(w, NOW0 + 1, rec_fire, &r), 1);
    expect_ids(&r, want, 6);
    free(t);
    free(w);
}

/* ---- far deadlines, idle jumps ------------------------------------------ */

/* Walk with advance(next_due) and require the node to fire exactly at its
 * deadline after at most max_steps advances. */
static void walk_to(wheel *w, tnode *t, uint64_t d, unsigned max_steps)
{
    rec r = {.w = w};
    unsigned steps = 0;

    while (!t->fired) {
        uint64_t nd = wheel_next_due(w);
        assert_true(nd > w->now);
        assert_true(nd <= d);
        assert_true(++steps <= max_steps);
        wheel_advance(w, nd, rec_fire, &r);
    }
    assert_int_equal(r.n, 1);
    assert_int_equal(r.at[0], d);
}

static void test_far_deadlines(void **state)
{
    static const uint64_t starts[] = {0, NOW0, LV(8) - 10, LV(7) - 1};
    static const uint64_t offs[] = {5 * YEAR, 100 * YEAR, LV(7) * 63 + 7,
                                    LV(7) * 64, LV(7) * 64 + 1, LV(8) + 12345,
                                    LV(8) * 9 + 77, 15};
    (void)state;

    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        for (size_t j = 0; j < sizeof offs / sizeof *offs; j++) {
            wheel *w = new_wheel(starts[i]);
            tnode *t = new_nodes(1);
            uint64_t d = starts[i] + offs[j];
            wheel_add(w, &t->n, d);
            /* every 2^48 ms of clamping costs one extra top-level cascade */
            walk_to(w, t, d, WHEEL_LEVELS + (unsigned)(offs[j] >> 48));
            assert_int_equal(wheel_count(w), 0);
            free(t);
            free(w);
        }
    }
}

static void test_unreachable_deadline(void **state)
{
    wheel *w = new_wheel(NOW0);
    tnode *t = new_nodes(1);
    size_t fired = 0;
    (void)state;

    wheel_add(w, &t->n, UINT64_MAX);
    for (int i = 0; i < 1000; i++) {
        uint64_t nd = wheel_next_due(w);
        assert_true(nd > w->now);
        wheel_advance(w, nd, count_fire, &fired);
    }
    assert_int_equal(fired, 0);
    assert_int_equal(wheel_count(w), 1);
    assert_true(wheel_node_armed(&t->n));
    free(t);
    free(w);
}

/* Long idle gaps must cost work, not elapsed ms: a per-ms loop would need
 * ~10^13 iterations here and never finish. */
static void test_idle_jump(void **state)
{
    wheel *w = new_wheel(NOW0);
    tnode *t = new_nodes(3);
    rec r = {.w = w};
    uint64_t b = NOW0 + HOUR + 7, c = NOW0 + 3 * DAY;
    (void)state;

    wheel_add(w, &t[0].n, NOW0 + 5);
    wheel_add(w, &t[1].n, b);
    wheel_add(w, &t[2].n, c);
    assert_int_equal(wheel_advance(w, NOW0 + HOUR, rec_fire, &r), 1);
    assert_int_equal(r.at[0], NOW0 + 5);  /* fire() sees its own ms */
    assert_true(wheel_next_due(w) > NOW0 + HOUR);
    walk_to(w, &t[1], b, WHEEL_LEVELS);
    assert_int_equal(wheel_advance(w, c - 1, rec_fire, &r), 0);
    assert_int_equal(wheel_advance(w, c, rec_fire, &r), 1);
    wheel_add(w, &t[0].n, c + 500 * YEAR);
    for (int i = 1; i <= 400; i++)
        assert_int_equal(wheel_advance(w, c + (uint64_t)i * YEAR, rec_fire, &r), 0);
    assert_int_equal(wheel_advance(w, c + 500 * YEAR, rec_fire, &r), 1);
    assert_int_equal(r.n, 3);
    free(t);
    free(w);
}

/* ---- next_due ----------------------------------------------------------- */

static void test_next_due_single(void **state)
{
    static const uint64_t starts[] = {0, NOW0, 4095, LV(3) - 1, LV(8) - 1};
    (void)state;

    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        wheel *w = new_wheel(starts[i]);
        tnode *t = new_nodes(1);
        assert_int_equal(wheel_next_due(w), UINT64_MAX);
        wheel_add(w, &t->n, starts[i] + 10000);
        assert_true(wheel_next_due(w) <= starts[i] + 10000);
        walk_to(w, t, starts[i] + 10000, WHEEL_LEVELS);
        assert_int_equal(wheel_next_due(w), UINT64_MAX);
        free(t);
        free(w);
    }
    /* from 0, 10000 = level 2: cascade at 8192, 9984, then fire */
    wheel *w = new_wheel(0);
    tnode *t = new_nodes(1);
    size_t fired = 0;
    wheel_add(w, &t->n, 10000);
    assert_int_equal(wheel_next_due(w), 8192);
    wheel_advance(w, 8192, count_fire, &fired);
    assert_int_equal(wheel_next_due(w), 9984);
    wheel_advance(w, 9984, count_fire, &fired);
    assert_int_equal(wheel_next_due(w), 10000);
    assert_int_equal(fired, 0);
    free(t);
    free(w);
}

typedef struct exact_ctx {
    uint64_t at;
    size_t fired;
} exact_ctx;

static void exact_fire(wheel_node *n, void *ctx)
{
    exact_ctx *e = ctx;
    assert_int_equal(n->deadline, e->at);
    e->fired++;
}

/* next_due is never after the earliest deadline, so advancing to it fires
 * exactly the nodes due at that ms; each distinct deadline costs at most
 * WHEEL_LEVELS steps. */
static void test_next_due_property(void **state)
{
    uint64_t s = 99;
    (void)state;

    for (int round = 0; round < 300; round++) {
        uint64_t now = rng_next(&s) % LV(7), min = UINT64_MAX;
        size_t n = 1 + rng_next(&s) % 40, steps = 0;
        wheel *w = new_wheel(now);
        tnode *t = new_nodes(n);
        exact_ctx e = {0, 0};
        for (size_t i = 0; i < n; i++) {
            uint64_t d = now + 1 + rng_next(&s) % LV(1 + rng_next(&s) % 7);
            wheel_add(w, &t[i].n, d);
            min = d < min ? d : min;
        }
        while (wheel_count(w)) {
            uint64_t nd = wheel_next_due(w);
            assert_true(nd > w->now);
            min = UINT64_MAX;
            for (size_t i = 0; i < n; i++)
                if (wheel_node_armed(&t[i].n) && t[i].n.deadline < min)
                    min = t[i].n.deadline;
            assert_true(nd <= min);
            e.at = nd;
            wheel_advance(w, nd, exact_fire, &e);
            steps++;
        }
        assert_int_equal(e.fired, n);
        assert_true(steps <= n * WHEEL_LEVELS);
        free(t);
        free(w);
    }
}

static void test_count(void **state)
{
    wheel *w = new_wheel(50);
    tnode *t = new_nodes(4);
    size_t fired = 0;
    (void)state;

    assert_int_equal(wheel_count(w), 0);
    wheel_add(w, &t[0].n, 60);
    wheel_add(w, &t[1].n, 70);
    wheel_add(w, &t[2].n, 50 + DAY);
    assert_int_equal(wheel_count(w), 3);
    wheel_add(w, &t[1].n, 65);  /* re-arm does not count twice */
    assert_int_equal(wheel_count(w), 3);
    wheel_del(w, &t[2].n);
    wheel_del(w, &t[3].n);      /* never armed */
    assert_int_equal(wheel_count(w), 2);
    assert_int_equal(wheel_advance(w, 60, count_fire, &fired), 1);
    assert_int_equal(wheel_count(w), 1);
    assert_int_equal(wheel_advance(w, 1000, count_fire, &fired), 1);
    assert_int_equal(wheel_count(w), 0);
    assert_int_equal(fired, 2);
    free(t);
    free(w);
}

/* wheel_any: only armed nodes, NULL when empty, and every node reachable
 * while no slot holds more than the 8 it steps along: nodes spread over
 * four levels, five of them sharing one slot. */
static void test_any(void **state)
{
    enum { N = 40 };
    wheel *w = new_wheel(0);   /* now 0: a node's level is its deadline's top digit */
    tnode *t = new_nodes(N);
    uint64_t rng = 42;
    unsigned seen[N] = {0};
    (void)state;

    assert_null(wheel_any(w, 7));
    for (unsigned i = 0; i < N; i++)   /* i/10 is the level; 0..4 share slot 1 */
        wheel_add(w, &t[i].n, i < 5 ? 1 : LV(i / 10) * (1 + i % 10) * 5);
    wheel_del(w, &t[3].n);
    for (int d = 0; d < 20000; d++) {
        wheel_node *n = wheel_any(w, rng_next(&rng));
        assert_non_null(n);
        assert_true(wheel_node_armed(n));
        seen[((tnode *)n)->id]++;
    }
    for (unsigned i = 0; i < N; i++)
        if (i == 3) assert_int_equal(seen[i], 0);
        else if (!seen[i]) fail_msg("node %u (deadline %llu) never drawn", i, (unsigned long long)t[i].n.deadline);
    for (unsigned i = 0; i < N; i++) wheel_del(w, &t[i].n);
    assert_null(wheel_any(w, 7));
    free(t);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_random),
        cmocka_unit_test(test_model_random),
        cmocka_unit_test(test_cancel_many),
        cmocka_unit_test(test_rearm),
        cmocka_unit_test(test_mutate_in_fire),
        cmocka_unit_test(test_rearm_overdue_in_fire),
        cmocka_unit_test(test_overdue_order),
        cmocka_unit_test(test_far_deadlines),
        cmocka_unit_test(test_unreachable_deadline),
        cmocka_unit_test(test_idle_jump),
        cmocka_unit_test(test_next_due_single),
        cmocka_unit_test(test_next_due_property),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_any),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
