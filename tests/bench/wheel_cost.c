/* wheel_cost.c - cost per operation of store/wheel.h (insert, cancel, fire)
 * with 1e3 .. 1e7 armed timers, to show whether it stays flat as it grows.
 *
 *   wheel_cost [--sizes 1000,100000,10000000] [--ops N] [--span-ms MS]
 * For each size: arm that many nodes with deadlines spread over --span-ms
 * (1 h, like lock leases) and time the fill; then, with the wheel full,
 * time batches of cancels of random armed nodes and batches of re-inserts
 * (at least N of each, in whole batches); finally advance past the span and time the firing.
 * Prints one line per size: "wheel size=... fill_ns=... insert_ns=...
 * cancel_ns=... fire_ns=..." (ns per operation, clock_gettime MONOTONIC).
 * Under callgrind (valgrind --tool=callgrind --instr-atstart=no) only the
 * steady-state cancel+insert batches are collected, so instructions per op =
 * Ir / (2 * ops printed) for one size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef LATCHD_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include "wheel.h"

#define BATCH_MAX 4096u
#define EPOCH_MS 1700000000000ull   /* a realistic absolute "now" */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "wheel_cost: cannot allocate %zu x %zu bytes\n", n, size);
        exit(1);
    }
    return p;
}

static size_t fired;

static void count_fire(wheel_node *n, void *ctx) { fired++; }

typedef struct result { double fill, insert, cancel, fire; size_t ops; } result;

/* Pick `b` distinct random node indices into perm[0..b) (partial shuffle). */
static void pick_batch(uint32_t *perm, size_t n, size_t b)
{
    for (size_t i = 0; i < b; i++) {
        size_t j = i + (size_t)(next_rand() % (n - i));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static result measure(size_t n, size_t ops, uint64_t span)
{
    result r;
    wheel *w = xcalloc(1, sizeof *w);
    wheel_node *nodes = xcalloc(n, sizeof *nodes);
    uint32_t *perm = xcalloc(n, sizeof *perm);
    uint64_t deadlines[BATCH_MAX];
    size_t batch = n / 2 < BATCH_MAX ? n / 2 : BATCH_MAX;

    wheel_init(w, EPOCH_MS);
    for (size_t i = 0; i < n; i++) {
        wheel_node_init(&nodes[i]);
        perm[i] = (uint32_t)i;
    }
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        wheel_add(w, &nodes[i], EPOCH_MS + 1 + next_rand() % span);
    r.fill = (double)(now_ns() - t0) / (double)n;

    uint64_t cancel_ns = 0, insert_ns = 0;
    size_t done = 0;
    while (done < ops) {
        pick_batch(perm, n, batch);
        for (size_t i = 0; i < batch; i++)
            deadlines[i] = EPOCH_MS + 1 + next_rand() % span;
        CALLGRIND_START_INSTRUMENTATION;
        uint64_t a = now_ns();
        for (size_t i = 0; i < batch; i++)
            wheel_del(w, &nodes[perm[i]]);
        uint64_t b = now_ns();
        for (size_t i = 0; i < batch; i++)
            wheel_add(w, &nodes[perm[i]], deadlines[i]);
        uint64_t c = now_ns();
        CALLGRIND_STOP_INSTRUMENTATION;
        cancel_ns += b - a;
        insert_ns += c - b;
        done += batch;
    }
    r.ops = done;
    r.cancel = (double)cancel_ns / (double)done;
    r.insert = (double)insert_ns / (double)done;

    fired = 0;
    t0 = now_ns();
    wheel_advance(w, EPOCH_MS + span + 1, count_fire, NULL);
    r.fire = (double)(now_ns() - t0) / (double)n;
    if (fired != n || wheel_count(w) != 0) {
        fprintf(stderr, "wheel_cost: fired %zu of %zu timers\n", fired, n);
        exit(1);
    }
    free(perm);
    free(nodes);
    free(w);
    return r;
}

int main(int argc, char **argv)
{
    const char *sizes = "1000,100000,10000000";
    size_t ops = 2000000;
    uint64_t span = 3600000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--sizes") == 0)
            sizes = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--ops") == 0)
            ops = strtoull(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(argv[i], "--span-ms") == 0)
            span = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: wheel_cost [--sizes N,N,...] [--ops N] [--span-ms MS]\n");
            return 2;
        }
    }
    if (!ops || !span) {
        fprintf(stderr, "wheel_cost: --ops and --span-ms must be positive\n");
        return 2;
    }
    for (const char *p = sizes; *p;) {
        char *end;
        size_t n = strtoull(p, &end, 10);
        if (end == p || n < 2 || n > UINT32_MAX || (*end && *end != ',')) {
            fprintf(stderr, "wheel_cost: bad --sizes '%s'\n", sizes);
            return 2;
        }
        result r = measure(n, ops, span);
        printf("wheel size=%zu ops=%zu fill_ns=%.1f insert_ns=%.1f cancel_ns=%.1f fire_ns=%.1f\n",
               n, r.ops, r.fill, r.insert, r.cancel, r.fire);
        fflush(stdout);
        p = *end ? end + 1 : end;
    }
    return 0;
}
