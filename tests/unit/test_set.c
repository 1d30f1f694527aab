/* test_set.c - set values: the intset (order, width upgrades, the Redis
 * spelling of integers, its raw bytes), conversion to the table (non-integer,
 * past set-max-intset-entries, one way), SCAN across a resize, uniform
 * random draws, COPY, memory returning to zero, and a seeded random run
 * against a model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "set.h"
#include "store_internal.h"   /* store_default_env */
#include "value_fixture.h"

static int setup(void **state) { return fixture_setup(state, STORE_SET, "s"); }

#define S(x) x, strlen(x)

static store_set *V(fixture *f) { return store_set_of(f->k); }

static int add(fixture *f, const char *m) { return store_set_add(f->s, V(f), S(m)); }
static int rem(fixture *f, const char *m) { return store_set_remove(f->s, V(f), S(m)); }

static void collect(const char *m, size_t len, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 8192 - n, "%.*s,", (int)len, m);
}

static void test_intset_sorted_and_upgrades(void **state)
{
    fixture *f = *state;
    char out[8192] = "";
    size_t count;
    unsigned width;
    assert_int_equal(add(f, "5"), 1);
    assert_int_equal(add(f, "-3"), 1);
    assert_int_equal(add(f, "5"), 0);
    assert_non_null(store_set_intset_raw(V(f), &count, &width));
    assert_int_equal(width, 2);
    assert_int_equal(add(f, "70000"), 1);   /* int32 */
    store_set_intset_raw(V(f), &count, &width);
    assert_int_equal(width, 4);
    assert_int_equal(add(f, "-9223372036854775808"), 1);   /* int64, at the front */
    assert_int_equal(add(f, "9223372036854775807"), 1);
    const void *raw = store_set_intset_raw(V(f), &count, &width);
    assert_int_equal(width, 8);
    assert_int_equal(count, 5);
    int64_t first;
    memcpy(&first, raw, 8);
    assert_true(first == INT64_MIN);
    store_set_foreach(V(f), collect, out);
    assert_string_equal(out, "-9223372036854775808,-3,5,70000,9223372036854775807,");
    assert_int_equal(rem(f, "9223372036854775807"), 1);
    assert_int_equal(rem(f, "-9223372036854775808"), 1);
    store_set_intset_raw(V(f), &count, &width);
    assert_int_equal(width, 8);   /* never shrinks */
    assert_true(store_set_has(V(f), S("70000")));
    assert_false(store_set_has(V(f), S("070000")));
    assert_false(store_set_has(V(f), S("4294967296")));
    assert_int_equal(rem(f, "nope"), 0);
    assert_int_equal(rem(f, "6"), 0);
    assert_true(store_set_is_intset(V(f)));
    assert_string_equal(store_key_encoding(f->k), "intset");
}

static void test_non_integer_converts_for_good(void **state)
{
    fixture *f = *state;
    add(f, "1");
    add(f, "2");
    static const char *strings[] = {"a", "01", "-0", "+1", " 1", "", "18446744073709551616"};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        store_delete_key(f->s, f->k);
        f->k = store_create_key(f->s, S("s"), STORE_SET);
        add(f, "1");
        assert_int_equal(store_set_add(f->s, V(f), S(strings[i])), 1);
        assert_false(store_set_is_intset(V(f)));
        assert_true(store_set_has(V(f), S(strings[i])));
        assert_true(store_set_has(V(f), S("1")));
        assert_int_equal(store_set_remove(f->s, V(f), S(strings[i])), 1);
        assert_false(store_set_is_intset(V(f)));
        assert_string_equal(store_key_encoding(f->k), "hashtable");
    }
}

static void test_max_entries_from_env(void **state)
{
    fixture *f = *state;
    store_env env = store_default_env;
    env.set_max_intset_entries = 3;
    store_set_env(f->s, &env);
    add(f, "1");
    add(f, "2");
    add(f, "3");
    assert_true(store_set_is_intset(V(f)));
    add(f, "4");
    assert_false(store_set_is_intset(V(f)));
    assert_int_equal(store_set_len(V(f)), 4);
    /* a restored intset past the limit becomes a table as it loads */
    int16_t raw[5] = {1, 2, 3, 4, 5};
    store_set loaded;
    store_set_load_intset(f->s, &loaded, raw, 5, 2);
    assert_false(store_set_is_intset(&loaded));
    assert_true(store_set_has(&loaded, S("5")));
    store_set_free(f->s, &loaded);
    store_set_env(f->s, NULL);
}

static void test_scratch_sets_and_replace(void **state)
{
    fixture *f = *state;
    store_set v;
    store_set_init_for(f->s, &v, S("12"));
    assert_true(store_set_is_intset(&v));
    store_set_add(f->s, &v, S("12"));
    store_set_replace(f->s, f->k, &v);
    assert_int_equal(store_set_len(V(f)), 1);
    assert_int_equal(store_set_len(&v), 0);
    store_set_init_for(f->s, &v, S("x"));
    assert_false(store_set_is_intset(&v));
    store_set_free(f->s, &v);
    store_set_init_table(f->s, &v);
    store_set_add(f->s, &v, S("7"));
    assert_false(store_set_is_intset(&v));
    store_set_free(f->s, &v);
}

struct seen {
    unsigned char hit[4096];
};

static void mark(const char *m, size_t len, void *ctx)
{
    struct seen *s = ctx;
    char buf[16];
    memcpy(buf, m, len);
    buf[len] = '\0';
    s->hit[atoi(buf + 1)] = 1;
}

/* SSCAN's promise: a member present for the whole scan is seen, even when
 * the table grows or shrinks in between calls. */
static void test_scan_across_resize(void **state)
{
    fixture *f = *state;
    char m[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        add(f, m);
    }
    struct seen seen = {{0}};
    uint64_t cursor = 0;
    int calls = 0;
    do {
        cursor = store_set_scan(V(f), cursor, mark, &seen);
        if (++calls == 10)
            for (int i = 1000; i < 4000; i++) {   /* grow */
                snprintf(m, sizeof(m), "m%d", i);
                add(f, m);
            }
        if (calls == 400)
            for (int i = 1000; i < 4000; i++) {   /* and shrink */
                snprintf(m, sizeof(m), "m%d", i);
                rem(f, m);
            }
    } while (cursor);
    for (int i = 0; i < 1000; i++) assert_true(seen.hit[i]);
    /* an intset: everything at once */
    store_delete_key(f->s, f->k);
    f->k = store_create_key(f->s, S("s"), STORE_SET);
    add(f, "1");
    add(f, "2");
    char out[8192] = "";
    assert_int_equal(store_set_scan(V(f), 0, collect, out), 0);
    assert_string_equal(out, "1,2,");
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static double chi_square_of(fixture *f, int members, int draws)
{
    int counts[256] = {0};
    uint64_t x = 88172645463325252ULL;
    char buf[STORE_SET_INT_BUF];
    size_t len;
    for (int i = 0; i < draws; i++) {
        const char *m = store_set_random(V(f), rng_next(&x), buf, &len);
        char tmp[16];
        memcpy(tmp, m, len);
        tmp[len] = '\0';
        counts[atoi(tmp[0] == 'm' ? tmp + 1 : tmp)]++;
    }
    double e = (double)draws / members, chi = 0;
    for (int i = 0; i < members; i++) chi += (counts[i] - e) * (counts[i] - e) / e;
    return chi;
}

/* Uniform over members in both representations, whatever the chains:
 * chi-square with 99 degrees of freedom under 160 (p ~ 0.0001). */
static void test_random_is_uniform(void **state)
{
    fixture *f = *state;
    char m[16];
    for (int i = 0; i < 100; i++) {
        snprintf(m, sizeof(m), "%d", i);
        add(f, m);
    }
    assert_true(store_set_is_intset(V(f)));
    assert_true(chi_square_of(f, 100, 100000) < 160);
    store_delete_key(f->s, f->k);
    f->k = store_create_key(f->s, S("s"), STORE_SET);
    for (int i = 0; i < 100; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        add(f, m);
    }
    assert_true(chi_square_of(f, 100, 100000) < 160);
}

static void test_copy_and_memory(void **state)
{
    fixture *f = *state;
    size_t empty = store_used_memory(f->s);
    char m[32];
    for (int i = 0; i < 600; i++) {   /* past 512: a table */
        snprintf(m, sizeof(m), "%d", i * 7);
        add(f, m);
    }
    assert_false(store_set_is_intset(V(f)));
    store_key *c = store_copy(f->s, f->k, S("c"));
    assert_int_equal(store_set_len(store_set_of(c)), 600);
    assert_false(store_set_is_intset(store_set_of(c)));
    assert_true(store_set_has(store_set_of(c), S("4193")));
    store_delete_key(f->s, c);
    /* a 16-byte member costs its 32-byte pooled node and a bucket slot */
    size_t before = store_used_memory(f->s);
    for (int i = 0; i < 1000; i++) {
        snprintf(m, sizeof(m), "member-%09d", i);
        add(f, m);
    }
    assert_true((store_used_memory(f->s) - before) / 1000 <= 32 + 16);
    store_delete_key(f->s, f->k);
    f->k = store_create_key(f->s, S("s"), STORE_SET);
    add(f, "1");
    store_key *ci = store_copy(f->s, f->k, S("ci"));
    assert_true(store_set_is_intset(store_set_of(ci)));
    store_delete_key(f->s, ci);
    store_delete_key(f->s, f->k);
    f->k = store_create_key(f->s, S("s"), STORE_SET);
    assert_int_equal(store_used_memory(f->s), empty);
}

/* A model: a bitmap of which of 300 values (half integers, half
 * strings) are in. */
static void test_random_against_model(void **state)
{
    fixture *f = *state;
    unsigned char in[300] = {0};
    uint64_t x = 2463534242ULL;
    char m[16];
    for (int i = 0; i < 20000; i++) {
        uint64_t r = rng_next(&x);
        int which = (int)(r % 300);
        int strings = (i / 5000) % 2;   /* phases: integers only, then mixed */
        if (!strings && which >= 150) which -= 150;
        if (which < 150) snprintf(m, sizeof(m), "%d", which * 1000 - 70000);
        else snprintf(m, sizeof(m), "s%d", which);
        if ((r >> 20) % 3) {
            assert_int_equal(add(f, m), !in[which]);
            in[which] = 1;
        } else {
            assert_int_equal(rem(f, m), in[which]);
            in[which] = 0;
        }
        size_t n = 0;
        for (int j = 0; j < 300; j++) n += in[j];
        assert_int_equal(store_set_len(V(f)), n);
        if (i % 97 == 0)
            for (int j = 0; j < 300; j++) {
                if (j < 150) snprintf(m, sizeof(m), "%d", j * 1000 - 70000);
                else snprintf(m, sizeof(m), "s%d", j);
                assert_int_equal(store_set_has(V(f), S(m)), in[j]);
            }
        if (n == 0) {
            store_delete_key(f->s, f->k);
            f->k = store_create_key(f->s, S("s"), STORE_SET);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_intset_sorted_and_upgrades, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_integer_converts_for_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_entries_from_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scratch_sets_and_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_across_resize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_is_uniform, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_and_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
