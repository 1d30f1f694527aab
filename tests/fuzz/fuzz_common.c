/* fuzz_common.c - helpers every fuzz harness links: the failing check, the
 * input-seeded PRNG, the generic keyspace invariants and the fuzzing server. */
#include <stdio.h>
#include <stdlib.h>

#include "dict.h"
#include "fuzz.h"
#include "list.h"
#include "set.h"
#include "zset.h"

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
    abort();
}

/* FNV-1a over the input, then splitmix64 steps. */
void fuzz_rng_seed(fuzz_rng *r, const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ULL;
    r->state = h;
}

uint64_t fuzz_rng_next(fuzz_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

size_t fuzz_chunk_len(fuzz_rng *r, size_t left)
{
    uint64_t x = fuzz_rng_next(r);
    size_t n = (x & 3) ? 1 + (x >> 8) % 8 : 1 + (x >> 8) % 4096;
    return n < left ? n : left;
}

typedef struct key_walk {
    size_t live, fields;
    uint64_t now;
} key_walk;

static void count_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    ((key_walk *)ctx)->fields++;
}

static void check_key(store_key *k, void *ctx)
{
    key_walk *w = ctx;
    size_t len;
    int64_t deadline = store_key_deadline(k);
    w->live++;
    FUZZ_CHECK(deadline == STORE_NO_DEADLINE || (uint64_t)deadline > w->now);
    switch (store_key_type(k)) {
    case STORE_STRING:
        FUZZ_CHECK(store_string_get(k, &len) != NULL);
        return;
    case STORE_LIST:   /* like hashes, never left empty */
        FUZZ_CHECK(store_list_len(k) > 0);
        return;
    case STORE_ZSET:
        FUZZ_CHECK(store_zset_len(k) > 0);
        return;
    case STORE_SET:
        FUZZ_CHECK(store_set_len(store_set_of(k)) > 0);
        return;
    case STORE_STREAM:   /* unlike the others, a stream may stay empty */
        return;
    default:
        FUZZ_CHECK(store_key_type(k) == STORE_HASH);
    }
    w->fields = 0;
    store_hash_foreach(k, count_field, w);
    FUZZ_CHECK(w->fields > 0);
    FUZZ_CHECK(w->fields == store_hash_len(k));
}

size_t fuzz_check_store(store *s)
{
    key_walk w = {0, 0, store_now(s)};
    store_foreach(s, check_key, &w);
    FUZZ_CHECK(w.live <= store_size(s));
    FUZZ_CHECK(store_expires_count(s) <= store_size(s));
    FUZZ_CHECK(store_size(s) > 0 || store_used_memory(s) == 0);
    FUZZ_CHECK(store_expires_count(s) > 0 || store_next_due(s) == UINT64_MAX);
    return w.live;
}

static uv_loop_t *fuzz_loop(void)
{
    static uv_loop_t loop;
    static int ready;
    if (!ready) {
        FUZZ_CHECK(uv_loop_init(&loop) == 0);
        ready = 1;
    }
    return &loop;
}

void fuzz_server_start(server *s, const char *name, const char *value)
{
    static const uint8_t seed[16] = "latchd-fuzzing!";
    static int seeded;
    const char *quiet[] = {"warning"}, *nolog[] = {"/dev/null"};
    latchd_config cfg;
    char err[128];
    config_defaults(&cfg);
    FUZZ_CHECK(config_set(&cfg, "loglevel", quiet, 1, err, sizeof(err)) == 0);
    FUZZ_CHECK(config_set(&cfg, "logfile", nolog, 1, err, sizeof(err)) == 0);
    if (name) FUZZ_CHECK(config_set(&cfg, name, &value, 1, err, sizeof(err)) == 0);
    FUZZ_CHECK(server_init(s, fuzz_loop(), &cfg) == 0);
    s->frozen_now_ms = FUZZ_T0;
    s->rng = 1;   /* RANDOMKEY's draws must not vary between runs either */
    if (!seeded) {   /* SCAN order must not vary between runs */
        store_dict_set_seed(seed);
        seeded = 1;
    }
    FUZZ_CHECK(command_lookup("ping", 4) != NULL);
}

void fuzz_server_stop(server *s)
{
    server_shutdown(s);
    uv_run(s->loop, UV_RUN_DEFAULT);
    server_close(s);
}
