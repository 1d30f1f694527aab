/* test_zset.c - sorted set values: Redis's order, ZADD's flags and NaN
 * rule, ranks, score and lex ranges, visits either way, rank deletes,
 * the packed form up to 128 members / 64-byte members, memory, and a
 * seeded random run (both representations) against a sorted-array model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"   /* enc: which representation is in use */
#include "value_fixture.h"
#include "zset.h"

static int setup(void **state) { return fixture_setup(state, STORE_ZSET, "z"); }

#define S(x) x, strlen(x)

static int zadd(fixture *f, double score, const char *m, int flags, double *out_score)
{
    int out;
    double ns = -1;
    assert_int_equal(store_zset_add(f->s, f->k, score, S(m), flags, &out, &ns), STORE_OK);
    if (out_score) *out_score = ns;
    return out;
}

/* "m=score," for every visited member. */
static void collect(const char *m, size_t mlen, double score, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 8192 - n, "%.*s=%g,", (int)mlen, m, score);
}

static void assert_zset(fixture *f, const char *want)
{
    char buf[8192] = "";
    store_zset_visit(f->k, 0, store_zset_len(f->k), 0, collect, buf);
    assert_string_equal(buf, want);
}

static void test_order_by_score_then_bytes(void **state)
{
    fixture *f = *state;
    zadd(f, 2, "b", 0, NULL);
    zadd(f, 1, "zz", 0, NULL);
    zadd(f, 2, "a", 0, NULL);
    zadd(f, 2, "ab", 0, NULL);
    zadd(f, -INFINITY, "low", 0, NULL);
    store_zset_add(f->s, f->k, 2, "a\0", 2, 0, &(int){0}, &(double){0});
    assert_zset(f, "low=-inf,zz=1,a=2,a=2,ab=2,b=2,");   /* "a" < "a\0" < "ab" */
    assert_int_equal(store_zset_rank(f->k, S("ab")), 4);
    assert_int_equal(store_zset_rank(f->k, S("nope")), -1);
    char rev[256] = "";
    store_zset_visit(f->k, 5, 3, 1, collect, rev);
    assert_string_equal(rev, "b=2,ab=2,a=2,");
}

static void test_add_flags(void **state)
{
    fixture *f = *state;
    double ns;
    int out;
    assert_int_equal(zadd(f, 5, "m", STORE_ZADD_XX, NULL), STORE_ZADD_NOP);
    assert_int_equal(zadd(f, 5, "m", 0, &ns), STORE_ZADD_ADDED);
    assert_int_equal(zadd(f, 5, "m", 0, &ns), 0);                  /* same score: kept */
    assert_int_equal(zadd(f, 6, "m", STORE_ZADD_NX, NULL), STORE_ZADD_NOP);
    assert_int_equal(zadd(f, 4, "m", STORE_ZADD_GT, NULL), STORE_ZADD_NOP);
    assert_int_equal(zadd(f, 7, "m", STORE_ZADD_GT, &ns), STORE_ZADD_UPDATED);
    assert_int_equal(zadd(f, 8, "m", STORE_ZADD_LT, NULL), STORE_ZADD_NOP);
    assert_int_equal(zadd(f, 2, "m", STORE_ZADD_INCR, &ns), STORE_ZADD_UPDATED);
    assert_true(ns == 9);
    assert_int_equal(zadd(f, 0, "m", STORE_ZADD_INCR, &ns), 0);    /* +0: processed, unchanged */
    assert_true(ns == 9);
    assert_int_equal(zadd(f, -1, "m", STORE_ZADD_INCR | STORE_ZADD_GT, NULL), STORE_ZADD_NOP);
    zadd(f, INFINITY, "inf", 0, NULL);
    assert_int_equal(store_zset_add(f->s, f->k, -INFINITY, S("inf"), STORE_ZADD_INCR, &out, &ns),
                     STORE_ERR_NAN);
    assert_int_equal(store_zset_add(f->s, f->k, NAN, S("x"), 0, &out, &ns), STORE_ERR_NAN);
    assert_zset(f, "m=9,inf=inf,");
}

static store_zrange by_score(double min, int minex, double max, int maxex)
{
    store_zrange r = {0};
    r.min.score = min, r.min.ex = minex, r.max.score = max, r.max.ex = maxex;
    return r;
}

/* "-", "+", "[incl" or "(excl", as ZRANGE BYLEX spells them. */
static store_zbound lex(const char *v)
{
    store_zbound b = {0};
    if (!strcmp(v, "-") || !strcmp(v, "+")) b.inf = v[0] == '-' ? -1 : 1;
    b.lex = v + 1, b.lexlen = strlen(v) - 1, b.ex = v[0] != '[';
    return b;
}

static void assert_span(fixture *f, const store_zrange *r, size_t first, size_t n)
{
    size_t got_n = 99, got = store_zset_span(f->k, r, &got_n);
    assert_int_equal(got_n, n);
    if (n) assert_int_equal(got, first);
}

static void fill(fixture *f, int members, int same_score)
{
    char m[16];
    for (int i = 0; i < members; i++) {
        snprintf(m, sizeof(m), "m%03d", i);
        zadd(f, same_score ? 0 : i, m, 0, NULL);
    }
}

static void ranges(fixture *f, int members)
{
    store_zrange r = by_score(10, 0, 20, 0);
    assert_span(f, &r, 10, 11);
    r = by_score(10, 1, 20, 1);
    assert_span(f, &r, 11, 9);
    r = by_score(-INFINITY, 0, INFINITY, 0);
    assert_span(f, &r, 0, (size_t)members);
    r = by_score(5, 1, 5, 0);
    assert_span(f, &r, 0, 0);
    r = by_score(30, 0, 20, 0);
    assert_span(f, &r, 0, 0);
    r = by_score(members, 0, INFINITY, 0);
    assert_span(f, &r, 0, 0);
}

static void test_score_ranges_small_and_big(void **state)
{
    fixture *f = *state;
    fill(f, 100, 0);
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SMALL);
    ranges(f, 100);
    fill(f, 1000, 0);
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SKIPLIST);
    ranges(f, 1000);
}

static void lex_ranges(fixture *f)
{
    store_zrange r = {.by_lex = 1, .min = lex("[m010"), .max = lex("(m020")};
    assert_span(f, &r, 10, 10);
    r.min = lex("-"), r.max = lex("+");
    assert_span(f, &r, 0, store_zset_len(f->k));
    r.min = lex("+"), r.max = lex("+");
    assert_span(f, &r, 0, 0);
    r.min = lex("(m0"), r.max = lex("[m001");   /* a prefix sorts first */
    assert_span(f, &r, 0, 2);
}

static void test_lex_ranges_small_and_big(void **state)
{
    fixture *f = *state;
    fill(f, 50, 1);
    lex_ranges(f);
    fill(f, 300, 1);
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SKIPLIST);
    lex_ranges(f);
}

static void test_long_member_converts(void **state)
{
    fixture *f = *state;
    char m[66];
    memset(m, 'x', 64);
    m[64] = '\0';
    zadd(f, 1, m, 0, NULL);
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SMALL);
    m[64] = 'y', m[65] = '\0';
    zadd(f, 2, m, 0, NULL);
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SKIPLIST);
    assert_int_equal(store_zset_rank(f->k, m, 65), 1);
}

static void test_delete_ranks(void **state)
{
    fixture *f = *state;
    fill(f, 10, 0);
    store_zset_del_ranks(f->s, f->k, 2, 3);
    assert_zset(f, "m000=0,m001=1,m005=5,m006=6,m007=7,m008=8,m009=9,");
    fill(f, 200, 0);
    store_zset_del_ranks(f->s, f->k, 0, 198);
    assert_zset(f, "m198=198,m199=199,");
    assert_int_equal(store_zset_del(f->s, f->k, S("m198")), 1);
    assert_int_equal(store_zset_del(f->s, f->k, S("m198")), 0);
    assert_int_equal(store_zset_len(f->k), 1);
}

static void test_memory_per_member(void **state)
{
    fixture *f = *state;
    store_delete_key(f->s, f->k);
    size_t empty = store_used_memory(f->s);
    f->k = store_create_key(f->s, S("z"), STORE_ZSET);
    size_t key_only = store_used_memory(f->s);
    char m[64];
    for (int i = 0; i < 128; i++) {
        snprintf(m, sizeof(m), "6f1d8a2e-5a3c-4e0b-9a57-2f1d3c4b5a%02d:%d", i % 100, i / 100);
        zadd(f, 1700000030000.0 + i, m, 0, NULL);
    }
    size_t per = (store_used_memory(f->s) - key_only) / 128;
    printf("small zset: %zu bytes per 38-byte member + score\n", per);
    assert_true(per <= 38 + 10 + 1);
    fill(f, 2000, 0);
    printf("skiplist zset: %zu bytes per member\n", (store_used_memory(f->s) - key_only) / 2128);
    store_delete_key(f->s, f->k);
    assert_int_equal(store_used_memory(f->s), empty);
    f->k = store_create_key(f->s, S("z"), STORE_ZSET);
}

/* ---- random operations against a sorted-array model ---- */

#define MODEL_MAX 600

typedef struct zmodel {
    double score[MODEL_MAX];
    char member[MODEL_MAX][80];
    size_t mlen[MODEL_MAX];
    size_t n;
} zmodel;

static long find(const zmodel *m, const char *mb, size_t mlen)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->mlen[i] == mlen && !memcmp(m->member[i], mb, mlen)) return (long)i;
    return -1;
}

static void model_del(zmodel *m, size_t i)
{
    memmove(&m->score[i], &m->score[i + 1], (m->n - i - 1) * sizeof(m->score[0]));
    memmove(&m->member[i], &m->member[i + 1], (m->n - i - 1) * sizeof(m->member[0]));
    memmove(&m->mlen[i], &m->mlen[i + 1], (m->n - i - 1) * sizeof(m->mlen[0]));
    m->n--;
}

static void model_add(zmodel *m, double score, const char *mb, size_t mlen)
{
    size_t i = 0;
    while (i < m->n && zset_cmp(m->score[i], m->member[i], m->mlen[i], score, mb, mlen) < 0) i++;
    memmove(&m->score[i + 1], &m->score[i], (m->n - i) * sizeof(m->score[0]));
    memmove(&m->member[i + 1], &m->member[i], (m->n - i) * sizeof(m->member[0]));
    memmove(&m->mlen[i + 1], &m->mlen[i], (m->n - i) * sizeof(m->mlen[0]));
    m->score[i] = score;
    memcpy(m->member[i], mb, mlen);
    m->mlen[i] = mlen;
    m->n++;
}

typedef struct zcheck {
    const zmodel *m;
    size_t i;
    int step;
} zcheck;

static void check_member(const char *mb, size_t mlen, double score, void *ctx)
{
    zcheck *c = ctx;
    assert_int_equal(mlen, c->m->mlen[c->i]);
    assert_memory_equal(mb, c->m->member[c->i], mlen);
    assert_true(score == c->m->score[c->i]);
    c->i += (size_t)c->step;
}

static void assert_model(fixture *f, const zmodel *m)
{
    assert_int_equal(store_zset_len(f->k), m->n);
    if (!m->n) return;
    zcheck fwd = {m, 0, 1}, back = {m, m->n - 1, -1};
    store_zset_visit(f->k, 0, m->n, 0, check_member, &fwd);
    store_zset_visit(f->k, m->n - 1, m->n, 1, check_member, &back);
}

static void random_op(fixture *f, zmodel *m, unsigned r)
{
    char mb[80];
    size_t mlen = (size_t)snprintf(mb, 16, "k%u", (r >> 4) % 700);
    if (r % 97 == 0) mlen = 70;   /* long members force the skiplist */
    if (mlen == 70) memset(mb, 'L', 70);
    double score = (double)((r >> 14) % 40) / 4;
    long at = find(m, mb, mlen);
    switch (r % 6) {
    case 0: case 1: case 2: {
        int out;
        double ns;
        if (at < 0 && m->n == MODEL_MAX) break;
        assert_int_equal(store_zset_add(f->s, f->k, score, mb, mlen, 0, &out, &ns), STORE_OK);
        if (at >= 0) model_del(m, (size_t)at);
        model_add(m, score, mb, mlen);
        break;
    }
    case 3:
        assert_int_equal(store_zset_del(f->s, f->k, mb, mlen), at >= 0);
        if (at >= 0) model_del(m, (size_t)at);
        break;
    case 4: {
        assert_int_equal(store_zset_rank(f->k, mb, mlen), at);
        store_zrange rg = by_score(score, r & 1, score + (double)(r % 5), (r >> 1) & 1);
        size_t first = 0, n = 0, got_n;
        while (first < m->n && !zset_gte_min(&rg, m->score[first], "", 0)) first++;
        while (first + n < m->n && zset_lte_max(&rg, m->score[first + n], "", 0)) n++;
        size_t got = store_zset_span(f->k, &rg, &got_n);
        assert_int_equal(got_n, n);
        if (n) assert_int_equal(got, first);
        break;
    }
    default:
        if (m->n) {
            size_t start = (r >> 3) % m->n, n = 1 + (r >> 11) % (m->n - start);
            if (n > 20) n = 20;
            store_zset_del_ranks(f->s, f->k, start, n);
            while (n--) model_del(m, start);
        }
    }
}

static void test_random_against_model(void **state)
{
    fixture *f = *state;
    zmodel *m = calloc(1, sizeof(*m));
    uint64_t x = 0x2545F4914F6CDD1DULL;
    int big = 0;
    for (int i = 0; i < 30000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random_op(f, m, (unsigned)(x >> 20));
        big |= f->k->enc == STORE_ENC_ZSET_SKIPLIST;
        if (i % 50 == 0) assert_model(f, m);
        if (m->n == 0 && f->k->enc == STORE_ENC_ZSET_SKIPLIST) {   /* start small again */
            store_delete_key(f->s, f->k);
            f->k = store_create_key(f->s, S("z"), STORE_ZSET);
        }
    }
    assert_model(f, m);
    assert_true(big);
    free(m);
}

/* Counts visits per member ("m<i>"), to check every one comes at least once. */
static void count_visit(const char *m, size_t mlen, double score, void *ctx)
{
    int *seen = ctx;
    char num[16];
    assert_true(mlen > 1 && mlen < sizeof(num) && m[0] == 'm');
    memcpy(num, m + 1, mlen - 1);   /* member bytes have no NUL */
    num[mlen - 1] = '\0';
    int i = atoi(num);
    assert_true(i >= 0 && i < 300);
    assert_true(score == i);
    seen[i]++;
}

/* ZSCAN: a packed set in one call (cursor 0, rank order); a skiplist by
 * cursor, every member at least once even as its member dict grows. */
static void test_scan_small_and_big(void **state)
{
    fixture *f = *state;
    char buf[8192] = "";
    zadd(f, 2, "b", 0, NULL);
    zadd(f, 1, "a", 0, NULL);
    assert_int_equal(store_zset_scan(f->k, 0, collect, buf), 0);
    assert_string_equal(buf, "a=1,b=2,");
    store_zset_del_ranks(f->s, f->k, 0, 2);
    int seen[300] = {0};
    char m[16];
    for (int i = 0; i < 200; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        zadd(f, i, m, 0, NULL);
    }
    assert_int_equal(f->k->enc, STORE_ENC_ZSET_SKIPLIST);
    uint64_t cursor = 0;
    int calls = 0, next = 200;
    do {
        cursor = store_zset_scan(f->k, cursor, count_visit, seen);
        if (next < 300) {   /* grow between calls: the dict resizes */
            snprintf(m, sizeof(m), "m%d", next);
            zadd(f, next++, m, 0, NULL);
        }
        calls++;
    } while (cursor);
    assert_true(calls > 1);
    for (int i = 0; i < 200; i++) assert_true(seen[i] >= 1);
}

static void test_cmp_is_redis_order(void **state)
{
    (void)state;
    assert_true(store_zset_cmp(1, S("b"), 2, S("a")) < 0);
    assert_true(store_zset_cmp(2, S("a"), 2, S("ab")) < 0);     /* a prefix first */
    assert_true(store_zset_cmp(2, S("ab"), 2, S("a")) > 0);
    assert_int_equal(store_zset_cmp(-0.0, S("x"), 0, S("x")), 0);
}

/* A value made anew in an existing key (ZUNIONSTORE's setKey) starts a
 * new encoding history: a former skiplist reports listpack again. */
static void test_reset_forgets_big(void **state)
{
    fixture *f = *state;
    char m[80];
    memset(m, 'x', sizeof(m));
    store_zset_add(f->s, f->k, 1, m, sizeof(m), 0, &(int){0}, &(double){0});
    assert_string_equal(store_key_encoding(f->k), "skiplist");
    store_key_reset(f->s, f->k, STORE_ZSET);
    zadd(f, 1, "a", 0, NULL);
    assert_string_equal(store_key_encoding(f->k), "listpack");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_by_score_then_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_score_ranges_small_and_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lex_ranges_small_and_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_member_converts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_per_member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_small_and_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmp_is_redis_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_forgets_big, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
