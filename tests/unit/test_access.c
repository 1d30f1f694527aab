/* test_access.c - what OBJECT reads from the store: encodings as Redis 7.0
 * reports them for a value's history, and the access clock (LRU, LFU). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pool.h"   /* STORE_POOL_ENABLED: sizes are pool classes */
#include "store.h"
#include "zset.h"

#define T0 UINT64_C(1700000000000)

typedef struct fixture {
    uint64_t now;
    store *s;
    store_env env;
} fixture;

static uint64_t fake_clock(void *ctx) { return ((fixture *)ctx)->now; }

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->now = T0;
    f->s = store_create(fake_clock, f);
    f->env = (store_env){ .hash_max_listpack_entries = 512, .hash_max_listpack_value = 64,
                          .zset_max_listpack_entries = 128, .zset_max_listpack_value = 64,
                          .set_max_intset_entries = 512, .lfu_log_factor = 10, .lfu_decay_time = 1 };
    store_env_set_clock(&f->env, T0);
    store_set_env(f->s, &f->env);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_destroy(f->s);
    free(f);
    return 0;
}

/* Both clocks move: the store's own and the coarse one the server keeps. */
static void advance(fixture *f, uint64_t ms)
{
    f->now += ms;
    store_env_set_clock(&f->env, f->now);
}

static store_key *hset(fixture *f, const char *key, const char *field, const char *val)
{
    store_key *k = store_lookup(f->s, key, strlen(key));
    if (!k) k = store_create_hash(f->s, key, strlen(key), field, strlen(field), strlen(val));
    store_hash_set(f->s, k, field, strlen(field), val, strlen(val));
    return k;
}

static const char *enc(fixture *f, const char *key)
{
    return store_key_encoding(store_lookup(f->s, key, strlen(key)));
}

static void test_hash_turns_hashtable_for_good(void **state)
{
    fixture *f = *state;
    f->env.hash_max_listpack_entries = 2;
    hset(f, "h", "a", "1");
    store_key *k = hset(f, "h", "b", "2");
    assert_string_equal(enc(f, "h"), "listpack");
    hset(f, "h", "c", "3");
    assert_string_equal(enc(f, "h"), "hashtable");
    store_hash_del(f->s, k, "c", 1);
    store_hash_del(f->s, k, "b", 1);   /* back to one field inside the key */
    assert_string_equal(enc(f, "h"), "hashtable");
}

static void test_hash_long_field_or_value(void **state)
{
    fixture *f = *state;
    char big[66];
    memset(big, 'x', 65);
    big[65] = '\0';
    hset(f, "v", "f", big);
    assert_string_equal(enc(f, "v"), "hashtable");
    long long out;
    store_key *k = store_create_key(f->s, "i", 1, STORE_HASH);
    assert_int_equal(store_hash_incrby(f->s, k, big, 65, 1, &out), STORE_OK);   /* HINCRBY too */
    assert_string_equal(enc(f, "i"), "hashtable");
    f->env.hash_max_listpack_entries = 0;
    hset(f, "z", "a", "1");
    assert_string_equal(enc(f, "z"), "hashtable");
}

static void test_zset_skiplist_one_way(void **state)
{
    fixture *f = *state;
    int out;
    double ns;
    f->env.zset_max_listpack_entries = 2;
    store_key *k = store_create_key(f->s, "z", 1, STORE_ZSET);
    store_zset_add(f->s, k, 1, "a", 1, 0, &out, &ns);
    store_zset_add(f->s, k, 2, "b", 1, 0, &out, &ns);
    store_zset_add(f->s, k, 5, "b", 1, 0, &out, &ns);   /* re-scored: no conversion */
    assert_string_equal(store_key_encoding(k), "listpack");
    store_zset_add(f->s, k, 3, "c", 1, 0, &out, &ns);
    assert_string_equal(store_key_encoding(k), "skiplist");
    store_zset_del(f->s, k, "c", 1);
    store_zset_del(f->s, k, "b", 1);
    assert_string_equal(store_key_encoding(k), "skiplist");
}

static void test_string_encodings(void **state)
{
    fixture *f = *state;
    static const struct { const char *v, *enc; } cases[] = {
        {"0", "int"}, {"-9223372036854775808", "int"}, {"9223372036854775808", "embstr"},
        {"01", "embstr"}, {"-0", "embstr"}, {" 1", "embstr"},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "embstr"},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "raw"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        store_key *k = store_put_string(f->s, "s", 1, cases[i].v, strlen(cases[i].v));
        assert_string_equal(store_key_encoding(k), cases[i].enc);
    }
    /* A hash replaced by a string forgets it was ever big. */
    f->env.hash_max_listpack_entries = 0;
    hset(f, "t", "a", "1");
    store_key *k = store_put_string(f->s, "t", 1, "x", 1);
    assert_string_equal(store_key_encoding(k), "embstr");
}

/* The forms commands leave a string in (store.h): raw after an in-place
 * write whatever it holds, never int after INCRBYFLOAT; a new SET value
 * forgets the form, COPY keeps it. */
static void test_string_forms(void **state)
{
    fixture *f = *state;
    store_key *k = store_put_string(f->s, "s", 1, "123", 3);
    assert_string_equal(store_key_encoding(k), "int");
    store_string_writable(f->s, k, 3, NULL);
    assert_int_equal(store_string_form(k), STORE_STR_RAW);
    assert_string_equal(store_key_encoding(k), "raw");
    store_key *c = store_copy(f->s, k, "c", 1);
    assert_string_equal(store_key_encoding(c), "raw");
    store_string_set(f->s, k, "123", 3);
    assert_string_equal(store_key_encoding(k), "int");
    store_string_set_form(k, STORE_STR_NOINT);
    assert_string_equal(store_key_encoding(k), "embstr");
    long long out;
    assert_int_equal(store_string_incrby(f->s, k, 1, &out), STORE_OK);
    assert_string_equal(store_key_encoding(k), "int");
    /* a heap string reusing its buffer is a new value too */
    const char *big = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    store_string_set(f->s, k, big, 50);
    store_string_set_form(k, STORE_STR_NOINT);
    store_string_set(f->s, k, big, 40);
    assert_int_equal(store_string_form(k), STORE_STR_AS_SET);
}

static void test_lru_idle_and_touch(void **state)
{
    fixture *f = *state;
    store_key *k = store_put_string(f->s, "k", 1, "v", 1);
    advance(f, 5000);
    assert_int_equal(store_key_idle_seconds(f->s, k), 5);
    store_key_touch(f->s, k);
    assert_int_equal(store_key_idle_seconds(f->s, k), 0);
    advance(f, 3000);
    k = store_rename(f->s, k, "renamed", 7);   /* the value's clock moves with it */
    assert_int_equal(store_key_idle_seconds(f->s, k), 3);
}

static void test_lru_clock_wraps_once(void **state)
{
    fixture *f = *state;
    /* Just before the 24-bit seconds clock wraps. */
    f->now = ((UINT64_C(1) << 24) * 100 - 2) * 1000;
    store_env_set_clock(&f->env, f->now);
    store_key *k = store_put_string(f->s, "k", 1, "v", 1);
    advance(f, 10000);
    assert_int_equal(store_key_idle_seconds(f->s, k), 10 - 1);   /* Redis's estimate: one short */
}

static void test_lfu_counter(void **state)
{
    fixture *f = *state;
    f->env.lfu = 1;
    f->env.lfu_log_factor = 0;   /* every access counts */
    store_key *k = store_put_string(f->s, "k", 1, "v", 1);
    assert_int_equal(store_key_freq(f->s, k), 5);   /* LFU_INIT_VAL */
    for (int i = 0; i < 300; i++) store_key_touch(f->s, k);
    assert_int_equal(store_key_freq(f->s, k), 255);   /* saturates */
    advance(f, 10 * 60000);
    assert_int_equal(store_key_freq(f->s, k), 245);   /* one per lfu-decay-time minute */
    f->env.lfu_decay_time = 0;
    assert_int_equal(store_key_freq(f->s, k), 255);
    f->env.lfu_log_factor = 1000000;   /* nearly never past the initial value */
    store_key *n = store_put_string(f->s, "n", 1, "v", 1);
    for (int i = 0; i < 100; i++) store_key_touch(f->s, n);
    assert_in_range(store_key_freq(f->s, n), 6, 7);   /* the first step above 5 is certain */
}

/* The access clock takes no room a held lock had: a 20-byte name and a
 * Redisson field with a thread id under 100 still make 88 bytes. */
static void test_lock_still_88_bytes(void **state)
{
    fixture *f = *state;
    if (sizeof(void *) != 8) skip();
    const char *field = "b3e1c2d4-5f6a-4b7c-8d9e-0f1a2b3c4d5e:42";
    size_t start = store_used_memory(f->s);
    store_key *k = store_create_hash(f->s, "lock:resource:123456", 20, field, strlen(field), 1);
    store_hash_set(f->s, k, field, strlen(field), "1", 1);
    /* the pool's classes make it 88; without the pool (ASan) it is the bytes asked for */
    if (STORE_POOL_ENABLED) assert_int_equal(store_used_memory(f->s) - start, 88);
    store_key_touch(f->s, k);
    size_t vlen;
    assert_memory_equal(store_hash_get(k, field, strlen(field), &vlen), "1", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hash_turns_hashtable_for_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_long_field_or_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zset_skiplist_one_way, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_encodings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lru_idle_and_touch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lru_clock_wraps_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lfu_counter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_still_88_bytes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
