/* test_store.c - the keyspace with a fake clock: expired keys are never
 * visible, the wheel reclaims on time, rename/flush/types/memory, events. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define T0 UINT64_C(1700000000123)

typedef struct fixture {
    uint64_t now;
    store *s;
    unsigned hooks;
    char last[64];
    uint64_t fired_at[256];   /* per key id "k<id>": clock when reclaimed */
    int lookup_in_hook;       /* hook checks the key is already gone */
} fixture;

static uint64_t fake_clock(void *ctx) { return ((fixture *)ctx)->now; }

static void on_expired(const char *key, size_t len, void *ctx)
{
    fixture *f = ctx;
    f->hooks++;
    snprintf(f->last, sizeof(f->last), "%.*s", (int)len, key);
    unsigned id;
    if (sscanf(f->last, "k%u", &id) == 1 && id < 256) f->fired_at[id] = f->now;
    if (f->lookup_in_hook) assert_null(store_lookup(f->s, key, len));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->now = T0;
    f->s = store_create(fake_clock, f);
    store_set_expired_hook(f->s, on_expired, f);
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

static store_key *put(store *s, const char *k, const char *v)
{
    return store_put_string(s, k, strlen(k), v, strlen(v));
}

static store_key *get(store *s, const char *k) { return store_lookup(s, k, strlen(k)); }

static void assert_str(const store_key *k, const char *want)
{
    size_t len;
    const char *v = store_string_get(k, &len);
    assert_non_null(v);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(v, want, len);
}

/* store_peek tells a key past its deadline from a missing one, and
 * reclaims nothing: the expired hook has not run. */
static void test_peek_does_not_reclaim(void **state)
{
    fixture *f = *state;
    assert_int_equal(store_peek(f->s, "k", 1), STORE_ABSENT);
    store_key *k = put(f->s, "k", "v");
    assert_int_equal(store_peek(f->s, "k", 1), STORE_PRESENT);
    store_key_set_deadline(f->s, k, (int64_t)(T0 + 100));
    assert_int_equal(store_peek(f->s, "k", 1), STORE_PRESENT);
    f->now = T0 + 100;
    assert_int_equal(store_peek(f->s, "k", 1), STORE_PRESENT_EXPIRED);
    assert_int_equal(f->hooks, 0);
    assert_int_equal(store_size(f->s), 1);
    assert_null(get(f->s, "k"));
    assert_int_equal(f->hooks, 1);
    assert_int_equal(store_peek(f->s, "k", 1), STORE_ABSENT);
}

static void test_lookup_hides_expired(void **state)
{
    fixture *f = *state;
    f->lookup_in_hook = 1;
    store_key *k = put(f->s, "lock", "v");
    store_key_set_deadline(f->s, k, (int64_t)(T0 + 100));
    assert_int_equal(store_expires_count(f->s), 1);

    f->now = T0 + 99;
    assert_ptr_equal(get(f->s, "lock"), k);
    f->now = T0 + 100;   /* deadline <= now: gone */
    assert_null(get(f->s, "lock"));
    assert_int_equal(f->hooks, 1);
    assert_string_equal(f->last, "lock");
    assert_null(get(f->s, "lock"));
    assert_int_equal(store_delete(f->s, "lock", 4), 0);
    assert_int_equal(f->hooks, 1);   /* exactly once */
    assert_int_equal(store_size(f->s), 0);
    assert_int_equal(store_expires_count(f->s), 0);
    /* Its timer went with it: the wheel has nothing left to fire. */
    assert_true(store_next_due(f->s) == UINT64_MAX);
    f->now += 1000;
    assert_int_equal(store_expire_due(f->s), 0);
    assert_int_equal(f->hooks, 1);
}

static void test_size_counts_unreclaimed(void **state)
{
    fixture *f = *state;
    store_key_set_deadline(f->s, put(f->s, "a", "1"), (int64_t)(T0 + 5));
    put(f->s, "b", "2");
    f->now = T0 + 10;
    assert_int_equal(store_size(f->s), 2);   /* like DBSIZE */
    assert_int_equal(f->hooks, 0);
    assert_int_equal(store_expire_due(f->s), 1);
    assert_int_equal(store_size(f->s), 1);
    assert_int_equal(f->hooks, 1);
}

static void test_expire_due_on_time(void **state)
{
    fixture *f = *state;
    char name[16];
    uint64_t want[200];
    uint64_t x = 12345;
    assert_true(store_next_due(f->s) == UINT64_MAX);
    for (unsigned i = 0; i < 200; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        /* ms to weeks ahead, so several wheel levels cascade */
        want[i] = T0 + 1 + ((x >> 33) % (i < 100 ? 5000 : 1209600000ULL));
        snprintf(name, sizeof(name), "k%u", i);
        store_key_set_deadline(f->s, put(f->s, name, "x"), (int64_t)want[i]);
    }
    assert_int_equal(store_expires_count(f->s), 200);
    size_t total = 0;
    for (;;) {
        uint64_t due = store_next_due(f->s);
        if (due == UINT64_MAX) break;
        assert_true(due > f->now - 1);
        /* One ms before the next work, nothing is reclaimed. */
        if (due > f->now + 1) {
            f->now = due - 1;
            assert_int_equal(store_expire_due(f->s), 0);
        }
        f->now = due;
        total += store_expire_due(f->s);
    }
    assert_int_equal(total, 200);
    for (unsigned i = 0; i < 200; i++)
        assert_true(f->fired_at[i] == want[i]);   /* at the right ms */
    assert_int_equal(store_size(f->s), 0);
    assert_int_equal(store_expires_count(f->s), 0);
    assert_int_equal(f->hooks, 200);
}

static void test_deadline_reset_and_persist(void **state)
{
    fixture *f = *state;
    store_key *a = put(f->s, "a", "1"), *b = put(f->s, "b", "2");
    store_key_set_deadline(f->s, a, (int64_t)(T0 + 100));
    store_key_set_deadline(f->s, a, (int64_t)(T0 + 500));   /* re-set */
    store_key_set_deadline(f->s, b, (int64_t)(T0 + 100));
    store_key_set_deadline(f->s, b, STORE_NO_DEADLINE);     /* persist */
    assert_int_equal(store_expires_count(f->s), 1);
    assert_true(store_key_deadline(a) == (int64_t)(T0 + 500));
    assert_true(store_key_deadline(b) == STORE_NO_DEADLINE);
    assert_true(store_next_due(f->s) > T0 + 100);

    f->now = T0 + 100;
    assert_int_equal(store_expire_due(f->s), 0);
    assert_non_null(get(f->s, "a"));
    assert_non_null(get(f->s, "b"));
    f->now = T0 + 499;
    assert_int_equal(store_expire_due(f->s), 0);
    f->now = T0 + 500;
    assert_int_equal(store_expire_due(f->s), 1);
    assert_string_equal(f->last, "a");
    f->now = T0 + 100000;
    assert_int_equal(store_expire_due(f->s), 0);
    assert_non_null(get(f->s, "b"));
    assert_true(store_next_due(f->s) == UINT64_MAX);
}

static void test_past_deadline(void **state)
{
    fixture *f = *state;
    store_key *k = put(f->s, "p", "1");
    store_key_set_deadline(f->s, k, (int64_t)T0);   /* == now: already due */
    assert_null(get(f->s, "p"));
    assert_int_equal(f->hooks, 1);
    k = put(f->s, "q", "1");
    store_key_set_deadline(f->s, k, 0);
    assert_int_equal(store_expire_due(f->s), 1);
    assert_int_equal(f->hooks, 2);
}

static void test_rename(void **state)
{
    fixture *f = *state;
    store_key *a = put(f->s, "a", "value-of-a-long-enough-for-heap");
    store_key_set_deadline(f->s, a, (int64_t)(T0 + 100));
    store_key *c = store_create_key(f->s, "c", 1, STORE_HASH);
    store_hash_set(f->s, c, "f", 1, "v", 1);
    store_key_set_deadline(f->s, c, (int64_t)(T0 + 50));
    assert_int_equal(store_expires_count(f->s), 2);

    store_key *b = store_rename(f->s, a, "c", 1);   /* replaces the hash */
    assert_null(get(f->s, "a"));
    assert_ptr_equal(get(f->s, "c"), b);
    assert_int_equal(store_key_type(b), STORE_STRING);
    assert_str(b, "value-of-a-long-enough-for-heap");
    assert_true(store_key_deadline(b) == (int64_t)(T0 + 100));
    assert_int_equal(store_size(f->s), 1);
    assert_int_equal(store_expires_count(f->s), 1);
    size_t len;
    assert_memory_equal(store_key_name(b, &len), "c", 1);
    assert_int_equal(len, 1);
    assert_ptr_equal(store_rename(f->s, b, "c", 1), b);   /* same name */

    f->now = T0 + 50;   /* the old destination's timer is gone */
    assert_int_equal(store_expire_due(f->s), 0);
    f->now = T0 + 100;
    assert_int_equal(store_expire_due(f->s), 1);
    assert_string_equal(f->last, "c");

    /* No deadline moves as no deadline, over a key that had one. */
    store_key *x = put(f->s, "x", "1"), *y = put(f->s, "y", "2");
    store_key_set_deadline(f->s, y, (int64_t)(T0 + 200));
    x = store_rename(f->s, x, "y", 1);
    assert_true(store_key_deadline(x) == STORE_NO_DEADLINE);
    assert_int_equal(store_expires_count(f->s), 0);
    assert_str(x, "1");
}

static void test_flush(void **state)
{
    fixture *f = *state;
    size_t start = store_used_memory(f->s);
    char name[16];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "k%d", i);
        store_key *k = put(f->s, name, "some value that is not inline");
        if (i % 2) store_key_set_deadline(f->s, k, (int64_t)(T0 + 10 + (uint64_t)i));
    }
    store_flush(f->s);
    assert_int_equal(store_size(f->s), 0);
    assert_int_equal(store_expires_count(f->s), 0);
    assert_int_equal(store_used_memory(f->s), start);
    assert_true(store_next_due(f->s) == UINT64_MAX);
    f->now = T0 + 10000;
    assert_int_equal(store_expire_due(f->s), 0);
    assert_int_equal(f->hooks, 0);
    assert_null(get(f->s, "k1"));
    store_key_set_deadline(f->s, put(f->s, "again", "1"), (int64_t)(f->now + 5));
    f->now += 5;
    assert_int_equal(store_expire_due(f->s), 1);
}

static void test_put_string_over_hash(void **state)
{
    fixture *f = *state;
    store_key *k = store_create_key(f->s, "h", 1, STORE_HASH);
    store_hash_set(f->s, k, "field", 5, "1", 1);
    store_key_set_deadline(f->s, k, (int64_t)(T0 + 1000));
    store_key *k2 = put(f->s, "h", "now a string");
    assert_ptr_equal(k2, k);
    assert_int_equal(store_key_type(k2), STORE_STRING);
    assert_str(k2, "now a string");
    assert_true(store_key_deadline(k2) == (int64_t)(T0 + 1000));   /* kept */
    assert_int_equal(store_size(f->s), 1);

    /* inline -> heap -> inline, and a value that aliases the old one */
    put(f->s, "h", "a much longer value that lives on the heap");
    assert_str(k2, "a much longer value that lives on the heap");
    size_t len;
    const char *v = store_string_get(k2, &len);
    store_put_string(f->s, "h", 1, v + 2, len - 2);
    assert_str(k2, "much longer value that lives on the heap");
    v = store_string_get(k2, &len);
    store_put_string(f->s, "h", 1, v, 4);
    assert_str(k2, "much");
    v = store_string_get(k2, &len);
    store_put_string(f->s, "h", 1, v + 1, 2);
    assert_str(k2, "uc");
    put(f->s, "h", "");
    assert_str(k2, "");
    assert_null(store_string_get(store_create_key(f->s, "hh", 2, STORE_HASH), &len));
}

static void test_string_incrby(void **state)
{
    fixture *f = *state;
    long long out = 0;
    store_key *k = put(f->s, "n", "10");
    assert_int_equal(store_string_incrby(f->s, k, 5, &out), STORE_OK);
    assert_true(out == 15);
    assert_str(k, "15");
    assert_int_equal(store_string_incrby(f->s, k, -20, &out), STORE_OK);
    assert_str(k, "-5");

    static const char *bad[] = { "abc", " 1", "1 ", "+1", "01", "1.5", "", "-0",
                                 "9223372036854775808" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        put(f->s, "n", bad[i]);
        assert_int_equal(store_string_incrby(f->s, k, 1, &out), STORE_ERR_NOT_INT);
        assert_str(k, bad[i]);   /* untouched */
    }
    put(f->s, "n", "9223372036854775806");
    assert_int_equal(store_string_incrby(f->s, k, 1, &out), STORE_OK);
    assert_true(out == LLONG_MAX);
    assert_int_equal(store_string_incrby(f->s, k, 1, &out), STORE_ERR_OVERFLOW);
    assert_str(k, "9223372036854775807");
    assert_int_equal(store_string_incrby(f->s, k, LLONG_MIN, &out), STORE_OK);
    assert_str(k, "-1");
    assert_int_equal(store_string_incrby(f->s, k, LLONG_MIN + 1, &out), STORE_OK);
    assert_str(k, "-9223372036854775808");
    assert_int_equal(store_string_incrby(f->s, k, -1, &out), STORE_ERR_OVERFLOW);
    assert_int_equal(store_string_incrby(f->s, k, LLONG_MAX, &out), STORE_OK);
    assert_str(k, "-1");
    /* A fresh string key (empty) is not an integer. */
    store_key *e = store_create_key(f->s, "e", 1, STORE_STRING);
    assert_int_equal(store_string_incrby(f->s, e, 1, &out), STORE_ERR_NOT_INT);
}

static void count_key(store_key *k, void *ctx)
{
    size_t len;
    const char *name = store_key_name(k, &len);
    assert_true(len >= 4 && memcmp(name, "live", 4) == 0);
    (*(size_t *)ctx)++;
}

static void test_scan_foreach_skip_expired(void **state)
{
    fixture *f = *state;
    char name[16];
    for (int i = 0; i < 500; i++) {
        snprintf(name, sizeof(name), "%s%d", i % 5 ? "live" : "dead", i);
        store_key *k = put(f->s, name, "v");
        store_key_set_deadline(f->s, k, (int64_t)(T0 + (i % 5 ? 100000 : 5)));
    }
    f->now = T0 + 5;
    size_t n = 0;
    store_foreach(f->s, count_key, &n);
    assert_int_equal(n, 400);
    n = 0;
    uint64_t cur = 0;
    do cur = store_scan(f->s, cur, count_key, &n); while (cur);
    assert_int_equal(n, 400);
    assert_int_equal(store_size(f->s), 500);   /* skipped, not deleted */
    assert_int_equal(f->hooks, 0);
    assert_int_equal(store_expire_due(f->s), 100);
    assert_int_equal(store_size(f->s), 400);
}

static void fill_everything(fixture *f)
{
    char name[32], field[80], val[200];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "str:%d", i);
        memset(val, 'a' + i % 26, sizeof(val));
        store_key *k = store_put_string(f->s, name, strlen(name), val, (size_t)(i % 150));
        if (i % 3 == 0) store_key_set_deadline(f->s, k, (int64_t)(T0 + 1000 + (uint64_t)i));
    }
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "hash:%d", i);
        store_key *k = store_create_key(f->s, name, strlen(name), STORE_HASH);
        int fields = i < 10 ? 5 : 300;   /* small ones and converted ones */
        for (int j = 0; j < fields; j++) {
            int n = snprintf(field, sizeof(field), "field-%d", j);
            store_hash_set(f->s, k, field, (size_t)n, val, (size_t)(j % 70));
        }
        long long out;
        store_hash_incrby(f->s, k, "ctr", 3, 7, &out);
    }
}

static void delete_all(store_key *k, void *ctx)
{
    store_key **list = ctx;
    while (*list) list++;
    *list = k;
}

static void test_used_memory_returns_to_start(void **state)
{
    fixture *f = *state;
    size_t start = store_used_memory(f->s);
    fill_everything(f);
    assert_true(store_used_memory(f->s) > start + 2000 * 80);
    store_key **list = calloc(store_size(f->s) + 1, sizeof(*list));
    store_foreach(f->s, delete_all, list);
    for (store_key **p = list; *p; p++) store_delete_key(f->s, *p);
    free(list);
    assert_int_equal(store_size(f->s), 0);
    assert_int_equal(store_expires_count(f->s), 0);
    assert_int_equal(store_used_memory(f->s), start);

    /* And through expiry and store_delete. */
    fill_everything(f);
    f->now = T0 + 100000;
    assert_true(store_expire_due(f->s) > 0);
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "str:%d", i);
        store_delete(f->s, name, strlen(name));
    }
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "hash:%d", i);
        assert_int_equal(store_delete(f->s, name, strlen(name)), 1);
    }
    assert_int_equal(store_size(f->s), 0);
    assert_int_equal(store_used_memory(f->s), start);
}

static void test_create_delete(void **state)
{
    fixture *f = *state;
    store_key *k = store_create_key(f->s, "k", 1, STORE_HASH);
    assert_int_equal(store_key_type(k), STORE_HASH);
    assert_int_equal(store_hash_len(k), 0);
    assert_ptr_equal(get(f->s, "k"), k);
    assert_int_equal(store_delete(f->s, "k", 1), 1);
    assert_int_equal(store_delete(f->s, "k", 1), 0);
    /* Binary-safe names, including the empty one. */
    assert_non_null(store_put_string(f->s, "a\0b", 3, "x", 1));
    assert_null(store_lookup(f->s, "a", 1));
    assert_non_null(store_lookup(f->s, "a\0b", 3));
    assert_null(store_lookup(f->s, "a\0c", 3));
    assert_non_null(store_put_string(f->s, "", 0, "empty", 5));
    assert_str(store_lookup(f->s, "", 0), "empty");
    assert_int_equal(store_now(f->s), T0);
}

static void test_many_keys(void **state)
{
    fixture *f = *state;
    char name[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(name, sizeof(name), "key:%d", i);
        store_key *k = store_put_string(f->s, name, (size_t)n, name, (size_t)n);
        if (i % 2) store_key_set_deadline(f->s, k, (int64_t)(T0 + 1 + (uint64_t)(i % 1000)));
    }
    assert_int_equal(store_size(f->s), 100000);
    for (int i = 0; i < 100000; i += 7) {
        int n = snprintf(name, sizeof(name), "key:%d", i);
        store_key *k = store_lookup(f->s, name, (size_t)n);
        assert_non_null(k);
        assert_str(k, name);
    }
    f->now = T0 + 1000;
    assert_int_equal(store_expire_due(f->s), 50000);
    assert_int_equal(store_size(f->s), 50000);
}

/* A typical lock: a hash with one "<uuid>:<thread>" -> "1" field and a TTL.
 * Prints what it costs; fails if it ever exceeds a generous bound. */
/* ---- keyspace events raised by the store itself ---- */

typedef struct events {
    char log[256];
} events;

static void on_event(int cls, const char *event, const char *key, size_t klen, void *ctx)
{
    events *e = ctx;
    size_t used = strlen(e->log);
    snprintf(e->log + used, sizeof(e->log) - used, "%s%d:%s:%.*s", used ? " " : "", cls, event, (int)klen, key);
}

static void test_new_key_events(void **state)
{
    fixture *f = *state;
    events e = {{0}};
    store_set_event_hook(f->s, on_event, &e);
    store_create_key(f->s, "h", 1, STORE_HASH);
    put(f->s, "s", "v");
    put(f->s, "s", "w");   /* an existing key is not new */
    store_rename(f->s, get(f->s, "s"), "t", 1);
    store_notify(f->s, STORE_EV_HASH, "hset", "h", 1);
    assert_string_equal(e.log, "16384:new:h 16384:new:s 16384:new:t 64:hset:h");
    store_set_event_hook(f->s, NULL, NULL);
    store_notify(f->s, STORE_EV_HASH, "hset", "h", 1);   /* no hook: nothing happens */
}

static void test_lock_key_memory(void **state)
{
    fixture *f = *state;
    const char *field = "b3e1c2d4-5f6a-4b7c-8d9e-0f1a2b3c4d5e:42";
    size_t start = store_used_memory(f->s);
    store_key *k = store_create_key(f->s, "lock:order:12345", 16, STORE_HASH);
    store_hash_set(f->s, k, field, strlen(field), "1", 1);
    store_key_set_deadline(f->s, k, (int64_t)(T0 + 30000));
    long long out;
    store_hash_incrby(f->s, k, field, strlen(field), 1, &out);   /* re-entry */
    size_t used = store_used_memory(f->s) - start;
    print_message("single-field lock key (16-byte name, 39-byte field): %zu bytes "
                  "(malloc_usable_size) + 8 per bucket slot\n", used);
    assert_true(used <= 192);
}

/* store_string_writable: grows zero-filled from inline to heap and
 * within the heap, keeps the bytes, never shortens, and counts memory. */
static void test_string_writable(void **state)
{
    fixture *f = *state;
    store_key *k = store_put_string(f->s, "k", 1, "ab", 2);
    size_t len, used = store_used_memory(f->s);
    char *p = store_string_writable(f->s, k, 10, &len);
    assert_int_equal(len, 10);
    assert_memory_equal(p, "ab\0\0\0\0\0\0\0\0", 11);   /* NUL-terminated too */
    assert_int_equal(store_used_memory(f->s), used);      /* still inside the key */
    p = store_string_writable(f->s, k, 4, &len);          /* shorter: as it is */
    assert_int_equal(len, 10);
    p[9] = 'z';
    p = store_string_writable(f->s, k, 100, &len);        /* to the heap */
    assert_int_equal(len, 100);
    assert_memory_equal(p, "ab\0\0\0\0\0\0\0z", 10);
    for (size_t i = 10; i <= 100; i++) assert_int_equal(p[i], 0);
    assert_true(store_used_memory(f->s) > used);
    /* appending a byte at a time reallocates only now and then */
    size_t reallocs = 0;
    const char *last = p;
    for (size_t n = 101; n <= 5000; n++) {
        p = store_string_writable(f->s, k, n, &len);
        p[n - 1] = (char)('a' + n % 26);
        if (p != last) reallocs++, last = p;
    }
    assert_true(reallocs < 20);
    const char *v = store_string_get(k, &len);
    assert_int_equal(len, 5000);
    assert_int_equal(v[4999], (char)('a' + 5000 % 26));
    assert_int_equal(v[5000], 0);
    store_delete_key(f->s, k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lookup_hides_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peek_does_not_reclaim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_counts_unreclaimed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expire_due_on_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_reset_and_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_past_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_string_over_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_incrby, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_foreach_skip_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_used_memory_returns_to_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_key_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_key_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_writable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
