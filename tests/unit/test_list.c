/* test_list.c - list values: both ends, ranges either way, LSET/LINSERT/
 * LREM, the one-chunk form and chunking past 128 entries / 8 KiB, memory
 * accounting, and a seeded random run against a plain array model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "store_internal.h"   /* enc: which representation is in use */
#include "value_fixture.h"

static int setup(void **state) { return fixture_setup(state, STORE_LIST, "l"); }

#define S(x) x, strlen(x)

static void push(fixture *f, int where, const char *v) { store_list_push(f->s, f->k, where, S(v)); }

/* Collects "a,b,c," from a visit. */
static void collect(const char *v, size_t len, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 8192 - n, "%.*s,", (int)len, v);
}

static void assert_list(fixture *f, const char *want)
{
    char fwd[8192] = "";
    store_list_range(f->k, 0, store_list_len(f->k), 0, collect, fwd);
    assert_string_equal(fwd, want);
}

static void test_push_both_ends_and_index(void **state)
{
    fixture *f = *state;
    push(f, STORE_TAIL, "b");
    push(f, STORE_HEAD, "a");
    push(f, STORE_TAIL, "c");
    assert_int_equal(store_list_len(f->k), 3);
    assert_list(f, "a,b,c,");
    size_t len;
    assert_memory_equal(store_list_index(f->k, 0, &len), "a", 1);
    assert_memory_equal(store_list_index(f->k, -1, &len), "c", 1);
    assert_memory_equal(store_list_index(f->k, -3, &len), "a", 1);
    assert_null(store_list_index(f->k, 3, &len));
    assert_null(store_list_index(f->k, -4, &len));
    char rev[64] = "";
    store_list_range(f->k, 2, 3, 1, collect, rev);
    assert_string_equal(rev, "c,b,a,");
}

static void test_empty_and_binary_elements(void **state)
{
    fixture *f = *state;
    store_list_push(f->s, f->k, STORE_TAIL, "", 0);
    store_list_push(f->s, f->k, STORE_TAIL, "a\0b", 3);
    size_t len = 9;
    assert_non_null(store_list_index(f->k, 0, &len));
    assert_int_equal(len, 0);
    assert_memory_equal(store_list_index(f->k, 1, &len), "a\0b", 3);
    assert_int_equal(len, 3);
}

static void test_set_insert_remove(void **state)
{
    fixture *f = *state;
    const char *init[] = {"x", "a", "x", "b", "x", "c"};
    for (int i = 0; i < 6; i++) push(f, STORE_TAIL, init[i]);
    assert_int_equal(store_list_set(f->s, f->k, 1, S("A")), 1);
    assert_int_equal(store_list_set(f->s, f->k, -1, S("C")), 1);
    assert_int_equal(store_list_set(f->s, f->k, 6, S("no")), 0);
    assert_list(f, "x,A,x,b,x,C,");
    assert_int_equal(store_list_insert(f->s, f->k, 0, S("x"), S("p")), 7);
    assert_int_equal(store_list_insert(f->s, f->k, 1, S("C"), S("q")), 8);
    assert_int_equal(store_list_insert(f->s, f->k, 1, S("none"), S("r")), -1);
    assert_list(f, "p,x,A,x,b,x,C,q,");
    assert_int_equal(store_list_remove(f->s, f->k, -1, S("x")), 1);
    assert_list(f, "p,x,A,x,b,C,q,");
    assert_int_equal(store_list_remove(f->s, f->k, 1, S("x")), 1);
    assert_list(f, "p,A,x,b,C,q,");
    assert_int_equal(store_list_remove(f->s, f->k, 0, S("x")), 1);
    assert_int_equal(store_list_remove(f->s, f->k, 0, S("x")), 0);
    store_list_del_range(f->s, f->k, 1, 3);
    assert_list(f, "p,q,");
}

/* 128 short elements share one buffer held in the key; the 129th push,
 * or more than 8 KiB, splits the list into chunks. */
static void test_small_then_chunked(void **state)
{
    fixture *f = *state;
    char v[16];
    for (int i = 0; i < 128; i++) {
        snprintf(v, sizeof(v), "%d", i);
        push(f, STORE_TAIL, v);
    }
    assert_int_equal(f->k->enc, STORE_ENC_LIST_SMALL);
    push(f, STORE_TAIL, "128");
    assert_int_equal(f->k->enc, STORE_ENC_LIST_CHUNKS);
    assert_int_equal(store_list_len(f->k), 129);
    size_t len;
    assert_memory_equal(store_list_index(f->k, 128, &len), "128", 3);
    assert_memory_equal(store_list_index(f->k, -129, &len), "0", 1);

    store *s = f->s;
    store_key *k = store_create_key(s, S("big"), STORE_LIST);
    char blob[5000];
    memset(blob, 'z', sizeof(blob));
    store_list_push(s, k, STORE_TAIL, blob, sizeof(blob));
    assert_int_equal(k->enc, STORE_ENC_LIST_SMALL);   /* one element is never split */
    store_list_push(s, k, STORE_TAIL, blob, sizeof(blob));
    assert_int_equal(k->enc, STORE_ENC_LIST_CHUNKS);
    assert_non_null(store_list_index(k, 1, &len));
    assert_int_equal(len, sizeof(blob));
}

static size_t used(fixture *f) { return store_used_memory(f->s); }

/* What a small list costs per element, and that every byte comes back. */
static void test_memory_per_element(void **state)
{
    fixture *f = *state;
    store_delete_key(f->s, f->k);
    size_t empty = used(f);
    f->k = store_create_key(f->s, S("l"), STORE_LIST);
    size_t key_only = used(f);
    char v[64];
    for (int i = 0; i < 128; i++) {
        snprintf(v, sizeof(v), "6f1d8a2e-5a3c-4e0b-9a57-2f1d3c4b5a%02d:1", i % 100);   /* 38 bytes */
        push(f, STORE_TAIL, v);
    }
    size_t per = (used(f) - key_only) / 128;
    printf("small list: %zu bytes per 38-byte element (%zu for the key)\n", per, key_only - empty);
    assert_true(per <= 38 + 2);
    store_delete_key(f->s, f->k);
    assert_int_equal(used(f), empty);
    f->k = store_create_key(f->s, S("l"), STORE_LIST);
    for (int i = 0; i < 5000; i++) push(f, i % 3 ? STORE_TAIL : STORE_HEAD, v);
    printf("chunked list: %zu bytes per 38-byte element\n", (used(f) - key_only) / 5000);
    store_list_del_range(f->s, f->k, 0, 5000);
    assert_int_equal(store_list_len(f->k), 0);
    store_delete_key(f->s, f->k);
    assert_int_equal(used(f), empty);
    f->k = store_create_key(f->s, S("l"), STORE_LIST);
}

/* ---- random operations against an array model ---- */

typedef struct model {
    char **v;
    size_t *len;
    size_t n;
} model;

#define MODEL_MAX 4000

static void model_insert(model *m, size_t at, const char *v, size_t len)
{
    memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof(*m->v));
    memmove(&m->len[at + 1], &m->len[at], (m->n - at) * sizeof(*m->len));
    m->v[at] = malloc(len + 1);
    memcpy(m->v[at], v, len);
    m->len[at] = len;
    m->n++;
}

static void model_delete(model *m, size_t at, size_t cnt)
{
    for (size_t i = at; i < at + cnt; i++) free(m->v[i]);
    memmove(&m->v[at], &m->v[at + cnt], (m->n - at - cnt) * sizeof(*m->v));
    memmove(&m->len[at], &m->len[at + cnt], (m->n - at - cnt) * sizeof(*m->len));
    m->n -= cnt;
}

typedef struct check {
    model *m;
    size_t i;
    int step;
} check;

static void check_elem(const char *v, size_t len, void *ctx)
{
    check *c = ctx;
    assert_int_equal(len, c->m->len[c->i]);
    if (len) assert_memory_equal(v, c->m->v[c->i], len);
    c->i += (size_t)c->step;
}

static void assert_model(fixture *f, model *m)
{
    assert_int_equal(store_list_len(f->k), m->n);
    if (!m->n) return;
    check fwd = {m, 0, 1}, back = {m, m->n - 1, -1};
    store_list_range(f->k, 0, m->n, 0, check_elem, &fwd);
    store_list_range(f->k, m->n - 1, m->n, 1, check_elem, &back);
}

/* Short values repeat (so LREM/LINSERT find matches); a few are long
 * enough to make chunks split on bytes. */
static size_t random_value(char *buf, unsigned r)
{
    if (r % 17 == 0) {
        size_t len = 1000 + r % 3000;
        memset(buf, 'A' + (int)(r % 3), len);
        return len;
    }
    return (size_t)snprintf(buf, 16, "v%u", r % 7);
}

static void random_op(fixture *f, model *m, unsigned r)
{
    char buf[4096];
    size_t len = random_value(buf, r >> 8), n = m->n;
    switch (r % 8) {
    case 0: case 1:
        if (n < MODEL_MAX) {
            store_list_push(f->s, f->k, r & 8 ? STORE_HEAD : STORE_TAIL, buf, len);
            model_insert(m, r & 8 ? 0 : n, buf, len);
        }
        break;
    case 2:
        if (n) {
            size_t start = (r >> 4) % n, cnt = 1 + (r >> 12) % (n - start);
            if (cnt > 50) cnt = 50;
            store_list_del_range(f->s, f->k, start, cnt);
            model_delete(m, start, cnt);
        }
        break;
    case 3:
        if (n) {
            size_t at = (r >> 4) % n;
            assert_int_equal(store_list_set(f->s, f->k, (long long)at, buf, len), 1);
            model_delete(m, at, 1);
            model_insert(m, at, buf, len);
        }
        break;
    case 4: {
        char pivot[16];
        size_t plen = (size_t)snprintf(pivot, sizeof(pivot), "v%u", (r >> 4) % 7);
        int after = (r >> 7) & 1;
        size_t at = 0;
        while (at < n && !(m->len[at] == plen && !memcmp(m->v[at], pivot, plen))) at++;
        long long got = store_list_insert(f->s, f->k, after, pivot, plen, buf, len);
        if (at == n || n >= MODEL_MAX) {
            assert_int_equal(got, at == n ? -1 : (long long)n + 1);
            if (at < n) model_insert(m, at + (size_t)after, buf, len);
            break;
        }
        model_insert(m, at + (size_t)after, buf, len);
        assert_int_equal(got, (long long)m->n);
        break;
    }
    case 5: {
        long long count = (long long)((r >> 4) % 7) - 3;
        size_t want = 0, limit = count ? (size_t)(count < 0 ? -count : count) : SIZE_MAX;
        for (size_t k = 0; k < m->n && want < limit; k++) {
            size_t i = count < 0 ? m->n - 1 - k : k;
            if (m->len[i] != len || memcmp(m->v[i], buf, len)) continue;
            model_delete(m, i, 1);
            want++;
            k--;   /* the same k names the next candidate either way */
        }
        assert_int_equal(store_list_remove(f->s, f->k, count, buf, len), want);
        break;
    }
    default: {   /* burst of pushes to grow past the chunk limits */
        for (int i = 0; i < 40 && m->n < MODEL_MAX; i++) {
            len = (size_t)snprintf(buf, 16, "v%u", (r + (unsigned)i) % 7);
            store_list_push(f->s, f->k, i & 1 ? STORE_HEAD : STORE_TAIL, buf, len);
            model_insert(m, i & 1 ? 0 : m->n, buf, len);
        }
    }
    }
}

static void test_random_against_model(void **state)
{
    fixture *f = *state;
    model m = {calloc(MODEL_MAX + 1, sizeof(char *)), calloc(MODEL_MAX + 1, sizeof(size_t)), 0};
    uint64_t x = 88172645463325252ULL;
    size_t most = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random_op(f, &m, (unsigned)(x >> 16));
        if (m.n > most) most = m.n;
        if (i % 25 == 0) assert_model(f, &m);
        for (size_t j = 0; j < m.n && i % 500 == 0; j++) {
            size_t len;
            const char *v = store_list_index(f->k, (long long)j - (long long)m.n, &len);
            assert_int_equal(len, m.len[j]);
            if (len) assert_memory_equal(v, m.v[j], len);
        }
    }
    assert_model(f, &m);
    assert_true(most > 1000);   /* it went well past one chunk */
    model_delete(&m, 0, m.n);
    free(m.v);
    free(m.len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_push_both_ends_and_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_binary_elements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_insert_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_then_chunked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_per_element, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
