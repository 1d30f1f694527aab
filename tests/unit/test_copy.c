/* test_copy.c - store_copy (COPY: every type and representation, within a
 * store and across two, with deadlines and memory), store_key_reset and
 * store_random_key (RANDOMKEY: fair enough, never an expired key). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "store.h"
#include "stream.h"
#include "zset.h"

typedef struct fixture {
    uint64_t now;
    store *a, *b;
    unsigned expired;
    unsigned news;
} fixture;

static uint64_t fake_clock(void *ctx) { return ((fixture *)ctx)->now; }

static void on_expired(const char *key, size_t len, void *ctx)
{
    (void)key, (void)len;
    ((fixture *)ctx)->expired++;
}

static void on_event(int cls, const char *event, const char *key, size_t klen, void *ctx)
{
    (void)key, (void)klen;
    if (cls == STORE_EV_NEW && strcmp(event, "new") == 0) ((fixture *)ctx)->news++;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->now = 1000;
    f->a = store_create(fake_clock, f);
    f->b = store_create(fake_clock, f);
    store_set_expired_hook(f->a, on_expired, f);
    store_set_event_hook(f->a, on_event, f);
    store_set_event_hook(f->b, on_event, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_destroy(f->a);
    store_destroy(f->b);
    free(f);
    return 0;
}

/* ---- a value's whole content as text, for comparing two keys ---- */

typedef struct dump {
    char buf[1 << 16];
    size_t len;
} dump;

static void dump_bytes(dump *d, const char *p, size_t len)
{
    assert_true(d->len + len + 1 < sizeof(d->buf));
    memcpy(d->buf + d->len, p, len);
    d->len += len;
    d->buf[d->len++] = '|';
}

static void dump_elem(const char *v, size_t len, void *ctx) { dump_bytes(ctx, v, len); }

static void dump_member(const char *m, size_t mlen, double score, void *ctx)
{
    char num[32];
    dump_bytes(ctx, m, mlen);
    dump_bytes(ctx, num, (size_t)snprintf(num, sizeof(num), "%.17g", score));
}

static void dump_pair(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    dump_bytes(ctx, f, flen);
    dump_bytes(ctx, v, vlen);
}

static int dump_entry(const store_sentry *e, void *ctx)
{
    char id[48];
    dump_bytes(ctx, id, (size_t)snprintf(id, sizeof(id), "%llu-%llu", (unsigned long long)e->id.ms,
                                         (unsigned long long)e->id.seq));
    store_sentry_foreach(e, dump_pair, ctx);
    return 0;
}

static void dump_key(const store_key *k, dump *d)
{
    size_t len;
    const char *v;
    d->len = 0;
    switch (store_key_type(k)) {
    case STORE_STRING:
        v = store_string_get(k, &len);
        dump_bytes(d, v, len);
        break;
    case STORE_HASH: break;   /* compared field by field */
    case STORE_SET: break;    /* compared member by member (test_set.c) */
    case STORE_LIST: store_list_range(k, 0, store_list_len(k), 0, dump_elem, d); break;
    case STORE_ZSET: store_zset_visit(k, 0, store_zset_len(k), 0, dump_member, d); break;
    case STORE_STREAM: {
        store_sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        store_stream_range(store_stream_of_const(k), lo, hi, 0, 0, dump_entry, d);
        break;
    }
    }
}

/* Every field of a hash is in the other with the same value. */
static void field_in(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    size_t got;
    const char *w = store_hash_get(ctx, f, flen, &got);
    assert_non_null(w);
    assert_int_equal(got, vlen);
    assert_memory_equal(w, v, vlen);
}

/* Copies k to name in store to and checks the copy reads the same: in the
 * same order, but for a big hash, whose dict order is its own. */
static store_key *copy_and_check(store_key *k, store *to, const char *name)
{
    static dump d1, d2;
    store_key *c = store_copy(to, k, name, strlen(name));
    assert_non_null(c);
    assert_ptr_equal(store_lookup(to, name, strlen(name)), c);
    assert_int_equal(store_key_type(c), store_key_type(k));
    if (store_key_type(k) == STORE_HASH) {
        assert_int_equal(store_hash_len(c), store_hash_len(k));
        store_hash_foreach(k, field_in, c);
        return c;
    }
    dump_key(k, &d1);
    dump_key(c, &d2);
    assert_int_equal(d1.len, d2.len);
    assert_memory_equal(d1.buf, d2.buf, d1.len);
    return c;
}

static void hash_fill(store *s, store_key *k, int n, size_t vlen)
{
    char f[16], v[256];
    memset(v, 'v', sizeof(v));
    for (int i = 0; i < n; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        store_hash_set(s, k, f, strlen(f), v, vlen);
    }
}

static void test_copy_strings(void **state)
{
    fixture *f = *state;
    char big[100];
    memset(big, 'x', sizeof(big));
    store_key *small = store_put_string(f->a, "s", 1, "short", 5);
    store_key *heap = store_put_string(f->a, "h", 1, big, sizeof(big));
    store_key *c1 = copy_and_check(small, f->a, "s2");
    store_key *c2 = copy_and_check(heap, f->b, "h2");
    /* independent values: writing the copy leaves the source as it was */
    store_string_set(f->b, c2, "y", 1);
    size_t len;
    assert_int_equal(store_string_get(heap, &len)[0], 'x');
    assert_int_equal(len, sizeof(big));
    store_string_set(f->a, c1, "other", 5);
    assert_memory_equal(store_string_get(small, NULL), "short", 5);
}

static void test_copy_hashes(void **state)
{
    fixture *f = *state;
    store_key *one = store_create_hash(f->a, "one", 3, "field", 5, 5);
    store_hash_set(f->a, one, "field", 5, "value", 5);
    store_key *small = store_create_key(f->a, "small", 5, STORE_HASH);
    hash_fill(f->a, small, 10, 8);
    store_key *table = store_create_key(f->a, "table", 5, STORE_HASH);
    hash_fill(f->a, table, 200, 8);
    store_key *wide = store_create_key(f->a, "wide", 4, STORE_HASH);
    hash_fill(f->a, wide, 3, 200);   /* a value past 64 bytes: a dict of 3 */

    copy_and_check(one, f->a, "one2");
    copy_and_check(small, f->b, "small2");
    store_key *t2 = copy_and_check(table, f->a, "table2");
    copy_and_check(wide, f->b, "wide2");
    assert_int_equal(store_hash_len(t2), 200);
    assert_int_equal(store_hash_del(f->a, t2, "f7", 2), 1);
    assert_non_null(store_hash_get(table, "f7", 2, NULL));
}

static void test_copy_lists(void **state)
{
    fixture *f = *state;
    char v[32];
    store_key *small = store_create_key(f->a, "small", 5, STORE_LIST);
    store_key *chunks = store_create_key(f->a, "chunks", 6, STORE_LIST);
    for (int i = 0; i < 5; i++) store_list_push(f->a, small, STORE_TAIL, v, (size_t)snprintf(v, sizeof(v), "e%d", i));
    for (int i = 0; i < 1000; i++)
        store_list_push(f->a, chunks, i % 2 ? STORE_TAIL : STORE_HEAD, v, (size_t)snprintf(v, sizeof(v), "elem-%d", i));
    copy_and_check(small, f->b, "small");   /* the same name, in another store */
    store_key *c = copy_and_check(chunks, f->a, "chunks2");
    /* the copy's chunks are its own: it keeps working as a list */
    store_list_push(f->a, c, STORE_HEAD, "new", 3);
    store_list_del_range(f->a, c, 500, 300);
    assert_int_equal(store_list_len(c), 701);
    assert_int_equal(store_list_len(chunks), 1000);
}

static void test_copy_zsets(void **state)
{
    fixture *f = *state;
    char m[32];
    int out;
    double ns;
    store_key *small = store_create_key(f->a, "small", 5, STORE_ZSET);
    store_key *big = store_create_key(f->a, "big", 3, STORE_ZSET);
    for (int i = 0; i < 10; i++)
        store_zset_add(f->a, small, i * 1.5, m, (size_t)snprintf(m, sizeof(m), "m%d", i), 0, &out, &ns);
    for (int i = 0; i < 300; i++)
        store_zset_add(f->a, big, (i * 7) % 31, m, (size_t)snprintf(m, sizeof(m), "m%d", i), 0, &out, &ns);
    copy_and_check(small, f->b, "small2");
    store_key *c = copy_and_check(big, f->a, "big2");
    assert_int_equal(store_zset_rank(c, "m5", 2), store_zset_rank(big, "m5", 2));
    assert_int_equal(store_zset_del(f->a, c, "m5", 2), 1);
    assert_int_equal(store_zset_len(big), 300);
}

static void test_copy_streams(void **state)
{
    fixture *f = *state;
    char v[32];
    store_key *k = store_create_key(f->a, "st", 2, STORE_STREAM);
    store_stream *st = store_stream_of(k);
    for (int i = 1; i <= 200; i++) {
        const char *items[2] = {"f", v};
        size_t lens[2] = {1, (size_t)snprintf(v, sizeof(v), "v%d", i)};
        store_stream_append(f->a, st, (store_sid){(uint64_t)i, 0}, items, lens, 2, 10, 4096);
    }
    for (int i = 5; i <= 200; i += 7) assert_int_equal(store_stream_delete(f->a, st, (store_sid){(uint64_t)i, 0}), 1);
    store_key *c = copy_and_check(k, f->b, "st2");
    store_stream *cs = store_stream_of(c);
    assert_int_equal(cs->len, st->len);
    assert_int_equal(cs->entries_added, 200);
    assert_int_equal(store_sid_cmp(cs->max_deleted, st->max_deleted), 0);
    assert_int_equal(store_sid_cmp(cs->first, st->first), 0);
    /* the copy's nodes are its own */
    const char *items[2] = {"f", "new"};
    size_t lens[2] = {1, 3};
    store_stream_append(f->b, cs, (store_sid){300, 0}, items, lens, 2, 10, 4096);
    size_t before = cs->len, src = st->len;
    assert_int_equal(before, src + 1);
    assert_int_equal(store_stream_trim(f->b, cs, 0, 5, (store_sid){0, 0}, 0, 0), before - 5);
    assert_int_equal(cs->len, 5);
    store_sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    assert_int_equal(store_stream_range(st, lo, hi, 0, 0, dump_entry, &(dump){0}), src);
    assert_int_equal(store_stream_range(st, lo, hi, 1, 0, dump_entry, &(dump){0}), src);
}

static void test_copy_deadline_and_events(void **state)
{
    fixture *f = *state;
    store_key *k = store_put_string(f->a, "k", 1, "v", 1);
    store_key_set_deadline(f->a, k, 5000);
    unsigned news = f->news;
    store_key *c = store_copy(f->b, k, "k", 1);
    assert_int_equal(f->news, news + 1);   /* "new" on the destination */
    assert_int_equal(store_key_deadline(c), 5000);
    assert_int_equal(store_expires_count(f->b), 1);
    store_key *p = store_put_string(f->a, "p", 1, "v", 1);
    assert_int_equal(store_key_deadline(store_copy(f->a, p, "p2", 2)), STORE_NO_DEADLINE);
    f->now = 5000;
    assert_null(store_lookup(f->b, "k", 1));
    assert_int_equal(store_expires_count(f->b), 0);
}

static void test_copy_memory_returns(void **state)
{
    fixture *f = *state;
    store_key *k = store_create_key(f->a, "l", 1, STORE_LIST);
    for (int i = 0; i < 500; i++) store_list_push(f->a, k, STORE_TAIL, "0123456789", 10);
    store_key *h = store_create_key(f->a, "h", 1, STORE_HASH);
    hash_fill(f->a, h, 200, 8);
    size_t before = store_used_memory(f->b);
    store_copy(f->b, k, "l", 1);
    store_copy(f->b, h, "h", 1);
    assert_true(store_used_memory(f->b) > before);
    assert_int_equal(store_delete(f->b, "l", 1), 1);
    assert_int_equal(store_delete(f->b, "h", 1), 1);
    assert_int_equal(store_used_memory(f->b), before);
}

static void test_key_reset(void **state)
{
    fixture *f = *state;
    store_key *k = store_create_key(f->a, "k", 1, STORE_HASH);
    hash_fill(f->a, k, 200, 8);
    store_key_set_deadline(f->a, k, 9000);
    size_t before = store_used_memory(f->a);
    store_key_reset(f->a, k, STORE_LIST);
    assert_true(store_used_memory(f->a) < before);
    assert_int_equal(store_key_type(k), STORE_LIST);
    assert_int_equal(store_list_len(k), 0);
    assert_int_equal(store_key_deadline(k), 9000);
    store_list_push(f->a, k, STORE_TAIL, "x", 1);
    assert_ptr_equal(store_lookup(f->a, "k", 1), k);
}

static void test_random_key_empty(void **state)
{
    fixture *f = *state;
    assert_null(store_random_key(f->a, 1));
}

static void test_random_key_reaches_every_key(void **state)
{
    fixture *f = *state;
    enum { N = 50, DRAWS = 20000 };
    int seen[N] = {0};
    char name[16];
    for (int i = 0; i < N; i++) store_put_string(f->a, name, (size_t)snprintf(name, sizeof(name), "k%d", i), "v", 1);
    uint64_t rnd = 12345;
    for (int d = 0; d < DRAWS; d++) {
        rnd = rnd * UINT64_C(6364136223846793005) + 1;
        store_key *k = store_random_key(f->a, rnd);
        assert_non_null(k);
        int id = atoi(store_key_name(k, NULL) + 1);
        assert_true(id >= 0 && id < N);
        seen[id]++;
    }
    /* 400 expected each. A bucket, then a key of its chain: a key sharing
     * its bucket is drawn less often than one alone, so fair enough is
     * every key drawn, none starved (under an eighth) or favoured (3x). */
    for (int i = 0; i < N; i++) assert_true(seen[i] > DRAWS / N / 8 && seen[i] < DRAWS / N * 3);
}

static void test_random_key_skips_expired(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int i = 0; i < 20; i++) {
        store_key *k = store_put_string(f->a, name, (size_t)snprintf(name, sizeof(name), "x%d", i), "v", 1);
        store_key_set_deadline(f->a, k, 2000);
    }
    store_put_string(f->a, "live", 4, "v", 1);
    f->now = 2000;
    for (uint64_t r = 1; r < 200; r++) {
        store_key *k = store_random_key(f->a, r * UINT64_C(0x9e3779b97f4a7c15));
        assert_non_null(k);
        assert_string_equal(store_key_name(k, NULL), "live");
    }
    assert_true(f->expired > 0);   /* the ones drawn were reclaimed, with the hook */
    assert_int_equal(store_size(f->a), 21 - f->expired);
    store_delete(f->a, "live", 4);
    assert_null(store_random_key(f->a, 7));   /* only expired keys left: all reclaimed */
    assert_int_equal(store_size(f->a), 0);
    assert_int_equal(f->expired, 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_hashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_zsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_deadline_and_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_memory_returns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_key_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_key_reaches_every_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_key_skips_expired, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
