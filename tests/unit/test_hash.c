/* test_hash.c - hash values: insertion order while small, in-place updates,
 * deletes, conversion at 129 fields / 65-byte values, HINCRBY edge cases,
 * and the one-field hash kept inside the key (a lock) and its transitions. */
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
#include "store_internal.h"   /* enc: which representation is in use */

typedef struct fixture {
    uint64_t now;
    store *s;
    store_key *k;
} fixture;

static uint64_t fake_clock(void *ctx) { return ((fixture *)ctx)->now; }

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->now = 1000;
    f->s = store_create(fake_clock, f);
    f->k = store_create_key(f->s, "h", 1, STORE_HASH);
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

static int hset(fixture *f, const char *field, const char *val)
{
    return store_hash_set(f->s, f->k, field, strlen(field), val, strlen(val));
}

static void assert_field(const store_key *k, const char *field, const char *want)
{
    size_t vlen = 999;
    const char *v = store_hash_get(k, field, strlen(field), &vlen);
    if (!want) {
        assert_null(v);
        return;
    }
    assert_non_null(v);
    assert_int_equal(vlen, strlen(want));
    assert_memory_equal(v, want, vlen);
}

/* Collects "field=value," in visiting order. */
#define COLLECT_CAP 16384   /* every buffer collect writes into has this room */

static void collect(const char *fl, size_t flen, const char *v, size_t vlen, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, COLLECT_CAP - n, "%.*s=%.*s,", (int)flen, fl, (int)vlen, v);
}

static void assert_order(const store_key *k, const char *want)
{
    char buf[COLLECT_CAP] = "";
    store_hash_foreach(k, collect, buf);
    assert_string_equal(buf, want);
}

static void test_small_insertion_order(void **state)
{
    fixture *f = *state;
    assert_int_equal(hset(f, "one", "1"), 1);
    assert_int_equal(hset(f, "two", "2"), 1);
    assert_int_equal(hset(f, "three", "3"), 1);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_SMALL);
    assert_int_equal(store_hash_len(f->k), 3);
    assert_order(f->k, "one=1,two=2,three=3,");

    assert_int_equal(hset(f, "two", "twenty-two"), 0);   /* grow in place */
    assert_order(f->k, "one=1,two=twenty-two,three=3,");
    assert_int_equal(hset(f, "two", ""), 0);             /* shrink in place */
    assert_order(f->k, "one=1,two=,three=3,");
    assert_int_equal(hset(f, "one", "9"), 0);            /* same size */
    assert_order(f->k, "one=9,two=,three=3,");
    assert_field(f->k, "two", "");
    assert_field(f->k, "four", NULL);
    assert_field(f->k, "on", NULL);                      /* prefix is not a match */
    assert_int_equal(store_hash_len(f->k), 3);
}

static void test_small_delete(void **state)
{
    fixture *f = *state;
    size_t empty = store_used_memory(f->s);
    hset(f, "a", "1");
    hset(f, "b", "2");
    hset(f, "c", "3");
    assert_int_equal(store_hash_del(f->s, f->k, "b", 1), 1);
    assert_int_equal(store_hash_del(f->s, f->k, "b", 1), 0);
    assert_order(f->k, "a=1,c=3,");
    assert_int_equal(store_hash_del(f->s, f->k, "a", 1), 1);
    assert_order(f->k, "c=3,");
    hset(f, "a", "again");
    assert_order(f->k, "c=3,a=again,");
    assert_int_equal(store_hash_del(f->s, f->k, "c", 1), 1);
    assert_int_equal(store_hash_del(f->s, f->k, "a", 1), 1);
    assert_int_equal(store_hash_len(f->k), 0);
    assert_order(f->k, "");
    assert_int_equal(store_used_memory(f->s), empty);   /* buffer released */
    assert_int_equal(store_hash_del(f->s, f->k, "zz", 2), 0);
}

static void test_binary_and_empty_fields(void **state)
{
    fixture *f = *state;
    assert_int_equal(store_hash_set(f->s, f->k, "", 0, "e", 1), 1);
    assert_int_equal(store_hash_set(f->s, f->k, "a\0b", 3, "x\0y", 3), 1);
    size_t vlen;
    const char *v = store_hash_get(f->k, "a\0b", 3, &vlen);
    assert_int_equal(vlen, 3);
    assert_memory_equal(v, "x\0y", 3);
    assert_null(store_hash_get(f->k, "a", 1, &vlen));
    assert_field(f->k, "", "e");
}

static void test_convert_at_513_fields(void **state)
{
    fixture *f = *state;
    char fl[32], v[32];
    for (int i = 0; i < 512; i++) {
        snprintf(fl, sizeof(fl), "f%d", i);
        snprintf(v, sizeof(v), "v%d", i);
        assert_int_equal(hset(f, fl, v), 1);
    }
    assert_int_equal(f->k->enc, STORE_ENC_HASH_SMALL);
    assert_int_equal(hset(f, "f0", "updated"), 0);   /* update: still 512 */
    assert_int_equal(f->k->enc, STORE_ENC_HASH_SMALL);
    assert_int_equal(hset(f, "f512", "v512"), 1);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_TABLE);
    assert_int_equal(store_hash_len(f->k), 513);
    assert_field(f->k, "f0", "updated");
    for (int i = 1; i <= 512; i++) {
        snprintf(fl, sizeof(fl), "f%d", i);
        snprintf(v, sizeof(v), "v%d", i);
        assert_field(f->k, fl, v);
    }
    /* The dict form keeps working: update, delete, visit all. */
    assert_int_equal(hset(f, "f5", "a-value-that-is-much-longer-than-before"), 0);
    assert_field(f->k, "f5", "a-value-that-is-much-longer-than-before");
    assert_int_equal(hset(f, "f5", "s"), 0);
    assert_field(f->k, "f5", "s");
    assert_int_equal(store_hash_del(f->s, f->k, "f7", 2), 1);
    assert_int_equal(store_hash_del(f->s, f->k, "f7", 2), 0);
    assert_field(f->k, "f7", NULL);
    char buf[COLLECT_CAP] = "";
    store_hash_foreach(f->k, collect, buf);
    size_t commas = 0;
    for (char *p = buf; *p; p++) commas += *p == ',';
    assert_int_equal(commas, 512);
    assert_non_null(strstr(buf, "f512=v512,"));
    /* Never converts back, even when small again (as in Redis). */
    for (int i = 0; i <= 512; i++) {
        snprintf(fl, sizeof(fl), "f%d", i);
        store_hash_del(f->s, f->k, fl, strlen(fl));
    }
    assert_int_equal(store_hash_len(f->k), 0);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_TABLE);
}

static void test_convert_at_65_byte_value(void **state)
{
    fixture *f = *state;
    char v64[65], v65[66];
    memset(v64, 'x', 64);
    v64[64] = '\0';
    memset(v65, 'y', 65);
    v65[65] = '\0';
    hset(f, "a", "1");
    hset(f, "b", v64);
    hset(f, v64, "field-of-64");
    assert_int_equal(f->k->enc, STORE_ENC_HASH_SMALL);   /* 64 is still small */
    assert_int_equal(hset(f, "a", v65), 0);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_TABLE);
    assert_int_equal(store_hash_len(f->k), 3);
    assert_field(f->k, "a", v65);
    assert_field(f->k, "b", v64);
    assert_field(f->k, v64, "field-of-64");
}

static void test_convert_at_65_byte_field(void **state)
{
    fixture *f = *state;
    char f65[66];
    memset(f65, 'z', 65);
    f65[65] = '\0';
    hset(f, "a", "1");
    assert_int_equal(hset(f, f65, "2"), 1);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_TABLE);
    assert_field(f->k, "a", "1");
    assert_field(f->k, f65, "2");
}

static void check_incrby(fixture *f, int big)
{
    long long out = 0;
    if (big) { /* force the dict form first */
        char v65[66];
        memset(v65, 'q', 65);
        v65[65] = '\0';
        hset(f, "pad", v65);
        assert_int_equal(f->k->enc, STORE_ENC_HASH_TABLE);
    }
    assert_int_equal(store_hash_incrby(f->s, f->k, "n", 1, 5, &out), STORE_OK);
    assert_true(out == 5);   /* missing counts as 0 */
    assert_field(f->k, "n", "5");
    assert_int_equal(store_hash_incrby(f->s, f->k, "n", 1, -7, &out), STORE_OK);
    assert_field(f->k, "n", "-2");

    static const char *bad[] = { "abc", "", " 1", "1 ", "01", "+1", "1.0", "-0",
                                 "9223372036854775808" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hset(f, "s", bad[i]);
        assert_int_equal(store_hash_incrby(f->s, f->k, "s", 1, 1, &out), STORE_ERR_NOT_INT);
        assert_field(f->k, "s", bad[i]);
    }
    hset(f, "m", "9223372036854775807");
    assert_int_equal(store_hash_incrby(f->s, f->k, "m", 1, 1, &out), STORE_ERR_OVERFLOW);
    assert_field(f->k, "m", "9223372036854775807");
    assert_int_equal(store_hash_incrby(f->s, f->k, "m", 1, 0, &out), STORE_OK);
    assert_int_equal(store_hash_incrby(f->s, f->k, "m", 1, LLONG_MIN, &out), STORE_OK);
    assert_field(f->k, "m", "-1");
    assert_int_equal(store_hash_incrby(f->s, f->k, "m", 1, LLONG_MIN + 1, &out), STORE_OK);
    assert_true(out == LLONG_MIN);
    assert_field(f->k, "m", "-9223372036854775808");
    assert_int_equal(store_hash_incrby(f->s, f->k, "m", 1, -1, &out), STORE_ERR_OVERFLOW);
    assert_int_equal(store_hash_incrby(f->s, f->k, "new", 3, LLONG_MIN, &out), STORE_OK);
    assert_field(f->k, "new", "-9223372036854775808");
}

static void test_incrby_small(void **state)
{
    fixture *f = *state;
    check_incrby(f, 0);
    assert_int_equal(f->k->enc, STORE_ENC_HASH_SMALL);
}

static void test_incrby_table(void **state)
{
    check_incrby(*state, 1);
}

static void test_lock_reentry_keeps_order(void **state)
{
    fixture *f = *state;
    long long out;
    const char *owner = "8743b520-63cd-4409-a7a6-5d1633f5c74f:1";
    for (int i = 0; i < 12; i++)   /* 1 -> 12 crosses a digit boundary */
        assert_int_equal(store_hash_incrby(f->s, f->k, owner, strlen(owner), 1, &out), STORE_OK);
    hset(f, "other", "x");
    assert_int_equal(store_hash_incrby(f->s, f->k, owner, strlen(owner), -3, &out), STORE_OK);
    assert_order(f->k, "8743b520-63cd-4409-a7a6-5d1633f5c74f:1=9,other=x,");
}

static void test_hash_memory_returns(void **state)
{
    fixture *f = *state;
    size_t start = store_used_memory(f->s);
    char fl[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(fl, sizeof(fl), "field:%d", i);
        hset(f, fl, i % 2 ? "odd" : "an even value, somewhat longer");
    }
    assert_true(store_used_memory(f->s) > start + 5000 * 40);
    for (int i = 0; i < 5000; i++) {
        snprintf(fl, sizeof(fl), "field:%d", i);
        assert_int_equal(store_hash_del(f->s, f->k, fl, strlen(fl)), 1);
    }
    store_delete_key(f->s, f->k);
    f->k = store_create_key(f->s, "h", 1, STORE_HASH);
    assert_int_equal(store_used_memory(f->s), start);
}

/* ---- one field inside the key entry (store_create_hash) ---- */

#define OWNER "8743b520-63cd-4409-a7a6-5d1633f5c74f:1"

/* A lock's hash made the way lock.c and HINCRBY make it; *bare is the
 * used_memory of the key alone. */
static store_key *lock_key(fixture *f, const char *name, size_t *bare)
{
    size_t before = store_used_memory(f->s);
    store_key *k = store_create_hash(f->s, name, strlen(name), OWNER, strlen(OWNER), 1);
    *bare = store_used_memory(f->s) - before;
    return k;
}

static long long incr(fixture *f, store_key *k, const char *field, long long by)
{
    long long out = 0;
    assert_int_equal(store_hash_incrby(f->s, k, field, strlen(field), by, &out), STORE_OK);
    return out;
}

static void test_one_field_lives_in_the_key(void **state)
{
    fixture *f = *state;
    size_t bare, start = store_used_memory(f->s);
    store_key *k = lock_key(f, "lock:a", &bare);
    assert_int_equal(incr(f, k, OWNER, 1), 1);
    assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_int_equal(store_used_memory(f->s), start + bare);   /* no second allocation */
    assert_int_equal(store_hash_len(k), 1);
    assert_field(k, OWNER, "1");
    assert_field(k, "other", NULL);
    assert_order(k, OWNER "=1,");
    for (int i = 2; i <= 120; i++) assert_int_equal(incr(f, k, OWNER, 1), i);   /* 1 -> 3 digits */
    assert_field(k, OWNER, "120");
    for (int i = 119; i >= 1; i--) assert_int_equal(incr(f, k, OWNER, -1), i);
    assert_field(k, OWNER, "1");
    assert_int_equal(store_hash_del(f->s, k, "nope", 4), 0);
    assert_int_equal(store_hash_del(f->s, k, OWNER, strlen(OWNER)), 1);
    assert_int_equal(store_hash_len(k), 0);
    assert_order(k, "");
    store_delete_key(f->s, k);
    assert_int_equal(store_used_memory(f->s), start);
}

/* A field that starts with a lowercase canonical UUID is kept packed: it
 * reads back byte for byte, matches only itself, and makes the key smaller
 * than the same field with one upper-case digit (kept as text). */
static void test_one_field_uuid_packed(void **state)
{
    fixture *f = *state;
    static const char *const fields[] = {
        "8743b520-63cd-4409-a7a6-5d1633f5c74f",                    /* no rest */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:1",
        "00000000-0000-0000-0000-000000000000:ffffffffffffffffffffffffff",   /* 64 bytes */
        "8743B520-63cd-4409-a7a6-5d1633f5c74f:1",                  /* upper case: text */
        "8743b520-63cd-4409-a7a6-5d1633f5c74g:1",                  /* not hex: text */
        "8743b520-63cd4-409-a7a6-5d1633f5c74f:1",                  /* dash moved: text */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:0",                  /* thread ids: varints */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:127",
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:128",
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:9999999999999999999",
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:0123",               /* leading zero: text */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:18446744073709551615", /* 20 digits: text */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:",                   /* no digits: text */
        "8743b520-63cd-4409-a7a6-5d1633f5c74f:12a",
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t bare, start = store_used_memory(f->s), flen = strlen(fields[i]);
        store_key *k = store_create_hash(f->s, "lock:u", 6, fields[i], flen, 1);
        assert_int_equal(store_hash_set(f->s, k, fields[i], flen, "1", 1), 1);
        assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
        bare = store_used_memory(f->s) - start;
        char want[80];
        snprintf(want, sizeof want, "%s=1,", fields[i]);
        assert_order(k, want);
        assert_field(k, fields[i], "1");
        /* one nibble or one byte of the rest different: another field */
        char other[80];
        memcpy(other, fields[i], flen + 1);
        other[3] = other[3] == '0' ? '1' : '0';
        assert_null(store_hash_get(k, other, flen, NULL));
        memcpy(other, fields[i], flen + 1);
        other[flen - 1] ^= 1;
        assert_null(store_hash_get(k, other, flen, NULL));
        assert_null(store_hash_get(k, fields[i], flen - 1, NULL));
        /* a second field moves it out (unpacked) and back in */
        assert_int_equal(store_hash_set(f->s, k, "x", 1, "2", 1), 1);
        assert_field(k, fields[i], "1");
        assert_int_equal(store_hash_del(f->s, k, "x", 1), 1);
        assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
        assert_order(k, want);
        assert_int_equal(store_used_memory(f->s), start + bare);
        store_delete_key(f->s, k);
    }
    size_t start = store_used_memory(f->s);
    store_key *packed = store_create_hash(f->s, "lock:p", 6, fields[1], strlen(fields[1]), 1);
    size_t packed_mem = store_used_memory(f->s) - start;
    store_key *text = store_create_hash(f->s, "lock:t", 6, fields[3], strlen(fields[3]), 1);
    assert_true(packed_mem < store_used_memory(f->s) - start - packed_mem);
    store_delete_key(f->s, packed);
    store_delete_key(f->s, text);
}

/* Redisson's "<uuid>:<thread id>": the id is a varint, so a lock costs
 * the same for thread 1 as for thread 16383, and ":01" is not ":1". */
static void test_one_field_thread_id_packed(void **state)
{
    fixture *f = *state;
    static const char *const owners[] = {OWNER, "8743b520-63cd-4409-a7a6-5d1633f5c74f:16383"};
    size_t mem[2];
    for (int i = 0; i < 2; i++) {
        size_t start = store_used_memory(f->s);
        store_key *k = store_create_hash(f->s, "lock:t", 6, owners[i], strlen(owners[i]), 1);
        assert_int_equal(store_hash_set(f->s, k, owners[i], strlen(owners[i]), "1", 1), 1);
        mem[i] = store_used_memory(f->s) - start;
        if (i == 0) assert_null(store_hash_get(k, OWNER "0", strlen(OWNER) + 1, NULL));
        assert_null(store_hash_get(k, "8743b520-63cd-4409-a7a6-5d1633f5c74f:01", 39, NULL));
        store_delete_key(f->s, k);
    }
    if (STORE_POOL_ENABLED) assert_int_equal(mem[0], mem[1]);   /* one pool class (not under ASan) */
}

static void test_one_field_to_two_and_back(void **state)
{
    fixture *f = *state;
    size_t bare, start = store_used_memory(f->s);
    store_key *k = lock_key(f, "lock:b", &bare);
    incr(f, k, OWNER, 1);
    assert_int_equal(store_hash_set(f->s, k, "second", 6, "2", 1), 1);
    assert_int_not_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_int_equal(store_hash_len(k), 2);
    assert_order(k, OWNER "=1,second=2,");
    assert_true(store_used_memory(f->s) > start + bare);
    /* back to one field: it moves inside again and the buffer goes */
    assert_int_equal(store_hash_del(f->s, k, "second", 6), 1);
    assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_order(k, OWNER "=1,");
    assert_int_equal(store_used_memory(f->s), start + bare);
    /* the other way round: the first field goes, the second stays */
    assert_int_equal(store_hash_set(f->s, k, "second", 6, "2", 1), 1);
    assert_int_equal(store_hash_del(f->s, k, OWNER, strlen(OWNER)), 1);
    assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_order(k, "second=2,");
    assert_int_equal(incr(f, k, "second", 5), 7);
    /* an emptied one-field hash takes a new first field */
    assert_int_equal(store_hash_del(f->s, k, "second", 6), 1);
    assert_int_equal(store_hash_set(f->s, k, "x", 1, "y", 1), 1);
    assert_order(k, "x=y,");
    store_delete_key(f->s, k);
    assert_int_equal(store_used_memory(f->s), start);
}

static void test_one_field_big_values(void **state)
{
    fixture *f = *state;
    size_t bare, start = store_used_memory(f->s);
    store_key *k = lock_key(f, "lock:c", &bare);
    char v64[65], v65[66];
    memset(v64, 'v', 64);
    v64[64] = '\0';
    memset(v65, 'w', 65);
    v65[65] = '\0';
    incr(f, k, OWNER, 1);
    /* outgrows the key's room: out to a packed buffer, value intact */
    assert_int_equal(store_hash_set(f->s, k, OWNER, strlen(OWNER), v64, 64), 0);
    assert_int_equal(k->enc, STORE_ENC_HASH_SMALL);
    assert_field(k, OWNER, v64);
    /* shrinks again: back inside */
    assert_int_equal(store_hash_set(f->s, k, OWNER, strlen(OWNER), "3", 1), 0);
    assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_field(k, OWNER, "3");
    assert_int_equal(store_used_memory(f->s), start + bare);
    /* past Redis's 64-byte limit: a table, for good */
    assert_int_equal(store_hash_set(f->s, k, OWNER, strlen(OWNER), v65, 65), 0);
    assert_int_equal(k->enc, STORE_ENC_HASH_TABLE);
    assert_field(k, OWNER, v65);
    assert_int_equal(store_hash_set(f->s, k, OWNER, strlen(OWNER), "1", 1), 0);
    assert_int_equal(k->enc, STORE_ENC_HASH_TABLE);
    assert_field(k, OWNER, "1");
    store_delete_key(f->s, k);
    /* a first field too long for the key never goes inside */
    k = store_create_hash(f->s, "lock:d", 6, v65, 65, 1);
    assert_int_equal(store_hash_set(f->s, k, v65, 65, "1", 1), 1);
    assert_int_equal(k->enc, STORE_ENC_HASH_TABLE);
    assert_field(k, v65, "1");
    store_delete_key(f->s, k);
    assert_int_equal(store_used_memory(f->s), start);
}

static void test_one_field_expiry_rename_and_retype(void **state)
{
    fixture *f = *state;
    size_t bare, start = store_used_memory(f->s);
    store_key *k = lock_key(f, "lock:e", &bare);
    incr(f, k, OWNER, 2);
    store_key_set_deadline(f->s, k, (int64_t)f->now + 30000);
    k = store_rename(f->s, k, "lock:renamed", 12);
    assert_null(store_lookup(f->s, "lock:e", 6));
    assert_int_equal(k->enc, STORE_ENC_HASH_ONE);
    assert_field(k, OWNER, "2");
    assert_int_equal(store_key_deadline(k), (int64_t)f->now + 30000);
    f->now += 29999;
    assert_int_equal(store_expire_due(f->s), 0);
    assert_non_null(store_lookup(f->s, "lock:renamed", 12));
    f->now += 1;
    assert_int_equal(store_expire_due(f->s), 1);
    assert_null(store_lookup(f->s, "lock:renamed", 12));
    assert_int_equal(store_used_memory(f->s), start);
    /* a string replaces a one-field hash in place */
    k = lock_key(f, "lock:f", &bare);
    incr(f, k, OWNER, 1);
    store_string_set(f->s, k, "now a string, longer than fifteen", 33);
    assert_int_equal(store_key_type(k), STORE_STRING);
    size_t len;
    assert_memory_equal(store_string_get(k, &len), "now a string, longer than fifteen", 33);
    store_delete_key(f->s, k);
    assert_int_equal(store_used_memory(f->s), start);
}

static void count_field(const char *fl, size_t flen, const char *v, size_t vlen, void *ctx)
{
    int *seen = ctx;
    char num[16];
    assert_true(flen > 1 && flen < sizeof(num) && fl[0] == 'f');
    memcpy(num, fl + 1, flen - 1);   /* field bytes have no NUL */
    num[flen - 1] = '\0';
    int i = atoi(num);
    assert_true(i >= 0 && i < 700);
    seen[i]++;
}

/* HSCAN: a packed hash in one call returning 0; a table by cursor, every
 * field at least once while the table grows between calls. */
static void test_scan_small_and_table(void **state)
{
    fixture *f = *state;
    store_key *k = f->k;
    char fl[16];
    int seen[700] = {0};
    for (int i = 0; i < 3; i++) {
        snprintf(fl, sizeof(fl), "f%d", i);
        store_hash_set(f->s, k, fl, strlen(fl), "v", 1);
    }
    assert_int_equal(store_hash_scan(k, 0, count_field, seen), 0);
    assert_int_equal(seen[0] + seen[1] + seen[2], 3);
    memset(seen, 0, sizeof(seen));
    for (int i = 3; i < 600; i++) {
        snprintf(fl, sizeof(fl), "f%d", i);
        store_hash_set(f->s, k, fl, strlen(fl), "v", 1);
    }
    assert_int_equal(k->enc, STORE_ENC_HASH_TABLE);
    uint64_t cursor = 0;
    int calls = 0, next = 600;
    do {
        cursor = store_hash_scan(k, cursor, count_field, seen);
        if (next < 700) {
            snprintf(fl, sizeof(fl), "f%d", next++);
            store_hash_set(f->s, k, fl, strlen(fl), "v", 1);
        }
        calls++;
    } while (cursor);
    assert_true(calls > 1);
    for (int i = 0; i < 600; i++) assert_true(seen[i] >= 1);
}

/* HRANDFIELD's draw: every field comes up, packed or in a table. */
static void test_random_draws_every_field(void **state)
{
    fixture *f = *state;
    char fl[16];
    for (int round = 0; round < 2; round++) {
        int n = round ? 600 : 10, seen[600] = {0}, distinct = 0;
        for (int i = 0; i < n; i++) {
            snprintf(fl, sizeof(fl), "f%d", i);
            store_hash_set(f->s, f->k, fl, strlen(fl), "v", 1);
        }
        assert_int_equal(f->k->enc, round ? STORE_ENC_HASH_TABLE : STORE_ENC_HASH_SMALL);
        uint64_t x = 88172645463325252ull;
        for (int d = 0; d < 40 * n; d++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            store_hash_random(f->k, x, count_field, seen);
        }
        for (int i = 0; i < n; i++) distinct += seen[i] > 0;
        assert_int_equal(distinct, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_small_insertion_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_small_and_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_draws_every_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_and_empty_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_at_513_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_at_65_byte_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_at_65_byte_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incrby_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incrby_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_reentry_keeps_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash_memory_returns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_lives_in_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_uuid_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_thread_id_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_to_two_and_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_big_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_field_expiry_rename_and_retype, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
