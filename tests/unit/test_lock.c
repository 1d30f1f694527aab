/* test_lock.c - the native lock operations on a keyspace with a fake
 * clock: holds, leases, latches, tokens, events, and FALLBACK-before-change. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "num.h"

#define T0 UINT64_C(1700000000000)

typedef struct fixture {
    uint64_t now;
    store *s;
    char events[512];   /* "cls:event:key " log */
} fixture;

static uint64_t fake_clock(void *ctx) { return ((fixture *)ctx)->now; }

static void on_event(int cls, const char *event, const char *key, size_t klen, void *ctx)
{
    fixture *f = ctx;
    size_t used = strlen(f->events);
    snprintf(f->events + used, sizeof(f->events) - used, "%d:%s:%.*s ", cls, event, (int)klen, key);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    f->now = T0;
    f->s = store_create(fake_clock, f);
    store_set_event_hook(f->s, on_event, f);
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

#define S(x) x, strlen(x)

static int acquire(fixture *f, const char *key, const char *owner, long long lease, long long *pttl)
{
    return store_lock_acquire(f->s, S(key), S(owner), lease, "hincrby", pttl);
}

static long long count_of(fixture *f, const char *key, const char *owner)
{
    store_key *k = store_lookup(f->s, S(key));
    if (!k) return -1;
    size_t len;
    long long n = 0;
    const char *v = store_hash_get(k, S(owner), &len);   /* not NUL-terminated */
    if (v) assert_true(store_str2ll(v, len, &n));
    return n;
}

static int64_t ttl_of(fixture *f, const char *key)
{
    store_key *k = store_lookup(f->s, S(key));
    return k ? store_key_deadline(k) - (int64_t)f->now : -2;
}

static void test_acquire_reenter_and_contend(void **state)
{
    fixture *f = *state;
    long long pttl = 99;
    assert_int_equal(acquire(f, "L", "a", 30000, &pttl), 1);
    assert_string_equal(f->events, "16384:new:L 64:hincrby:L 4:expire:L ");
    f->now += 1000;
    assert_int_equal(acquire(f, "L", "a", 30000, &pttl), 1);
    assert_int_equal(count_of(f, "L", "a"), 2);
    assert_int_equal(ttl_of(f, "L"), 30000);
    f->now += 500;
    assert_int_equal(acquire(f, "L", "b", 30000, &pttl), 0);
    assert_int_equal(pttl, 29500);
    assert_int_equal(count_of(f, "L", "b"), 0);
}

static void test_acquire_without_deadline_reports_minus_one(void **state)
{
    fixture *f = *state;
    long long pttl = 0, out;
    store_key *k = store_create_key(f->s, S("L"), STORE_HASH);
    store_hash_incrby(f->s, k, S("other"), 1, &out);
    assert_int_equal(acquire(f, "L", "a", 1000, &pttl), 0);
    assert_int_equal(pttl, -1);
}

static void test_acquire_first_hold_event_name(void **state)
{
    fixture *f = *state;
    long long pttl;
    assert_int_equal(store_lock_acquire(f->s, S("L"), S("a"), 100, "hset", &pttl), 1);
    assert_string_equal(f->events, "16384:new:L 64:hset:L 4:expire:L ");
}

/* Every refusal happens before any change, so Lua can redo the call. */
static void test_fallback_changes_nothing(void **state)
{
    fixture *f = *state;
    long long pttl, r, out;
    store_put_string(f->s, S("str"), S("v"));
    store_key *k = store_create_key(f->s, S("H"), STORE_HASH);
    store_hash_set(f->s, k, S("a"), S("notanumber"));
    store_hash_incrby(f->s, k, S("max"), INT64_MAX, &out);
    store_put_string(f->s, S("latch"), S("0x1"));
    f->events[0] = '\0';
    assert_int_equal(acquire(f, "str", "a", 100, &pttl), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_release(f->s, S("str"), S("a"), 100), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_renew(f->s, S("str"), S("a"), 100), STORE_LOCK_FALLBACK);
    assert_int_equal(acquire(f, "H", "a", 100, &pttl), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_release(f->s, S("H"), S("a"), 100), STORE_LOCK_FALLBACK);
    assert_int_equal(acquire(f, "H", "max", 100, &pttl), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_latch_get(f->s, S("H"), &r), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_latch_get(f->s, S("latch"), &r), STORE_LOCK_FALLBACK);
    assert_int_equal(store_lock_token_delete(f->s, S("H"), S("t")), STORE_LOCK_FALLBACK);
    assert_string_equal(f->events, "");
    assert_int_equal(store_key_deadline(store_lookup(f->s, S("H"))), STORE_NO_DEADLINE);
}

static void test_release_counts_down_then_deletes(void **state)
{
    fixture *f = *state;
    long long pttl;
    acquire(f, "L", "a", 30000, &pttl);
    acquire(f, "L", "a", 30000, &pttl);
    assert_int_equal(store_lock_release(f->s, S("L"), S("b"), 5000), -1);
    f->events[0] = '\0';
    assert_int_equal(store_lock_release(f->s, S("L"), S("a"), 5000), 0);
    assert_int_equal(ttl_of(f, "L"), 5000);
    assert_int_equal(store_lock_release(f->s, S("L"), S("a"), 5000), 1);
    assert_null(store_lookup(f->s, S("L")));
    assert_string_equal(f->events, "64:hincrby:L 4:expire:L 64:hincrby:L 4:del:L ");
    assert_int_equal(store_lock_release(f->s, S("L"), S("a"), 5000), -1);
}

static void test_holds_reads_without_changing(void **state)
{
    fixture *f = *state;
    long long n = 42, pttl;
    assert_int_equal(store_lock_holds(f->s, S("L"), S("a"), &n), 0);
    assert_int_equal(n, 0);
    acquire(f, "L", "a", 30000, &pttl);
    acquire(f, "L", "a", 30000, &pttl);
    f->events[0] = '\0';
    assert_int_equal(store_lock_holds(f->s, S("L"), S("a"), &n), 1);
    assert_int_equal(n, 2);
    assert_int_equal(store_lock_holds(f->s, S("L"), S("b"), &n), 0);
    assert_int_equal(n, 0);
    assert_string_equal(f->events, "");
    store_key *k = store_lookup(f->s, S("L"));
    store_hash_set(f->s, k, S("c"), S("x"));
    assert_int_equal(store_lock_holds(f->s, S("L"), S("c"), &n), STORE_LOCK_FALLBACK);
    store_string_set(f->s, k, S("v"));
    assert_int_equal(store_lock_holds(f->s, S("L"), S("a"), &n), STORE_LOCK_FALLBACK);
}

static void test_renew_only_for_the_holder(void **state)
{
    fixture *f = *state;
    long long pttl;
    assert_int_equal(store_lock_renew(f->s, S("L"), S("a"), 100), 0);
    acquire(f, "L", "a", 100, &pttl);
    assert_int_equal(store_lock_renew(f->s, S("L"), S("b"), 9000), 0);
    assert_int_equal(ttl_of(f, "L"), 100);
    assert_int_equal(store_lock_renew(f->s, S("L"), S("a"), 9000), 1);
    assert_int_equal(ttl_of(f, "L"), 9000);
}

/* What the caller logs as PEXPIREAT: the deadline the last lease set. */
static void test_lease_deadline_is_the_last_lease_set(void **state)
{
    fixture *f = *state;
    long long pttl;
    assert_int_equal(acquire(f, "L", "a", 100, &pttl), 1);
    assert_int_equal(store_lock_lease_deadline(f->s), (int64_t)T0 + 100);
    f->now += 7;
    assert_int_equal(acquire(f, "M", "b", 300, &pttl), 1);
    assert_int_equal(store_lock_lease_deadline(f->s), (int64_t)T0 + 307);
    assert_int_equal(store_key_deadline(store_lookup(f->s, S("M"))), (int64_t)T0 + 307);
    assert_int_equal(acquire(f, "L", "b", 500, &pttl), 0);   /* refused: no lease set */
    assert_int_equal(store_lock_lease_deadline(f->s), (int64_t)T0 + 307);
    assert_int_equal(store_lock_renew(f->s, S("L"), S("a"), 9000), 1);
    assert_int_equal(store_lock_lease_deadline(f->s), (int64_t)T0 + 9007);
}

static void test_expired_lock_is_free(void **state)
{
    fixture *f = *state;
    long long pttl;
    acquire(f, "L", "a", 100, &pttl);
    f->now += 100;
    assert_int_equal(acquire(f, "L", "b", 100, &pttl), 1);
    assert_int_equal(count_of(f, "L", "a"), 0);
}

static void test_latch_records_result(void **state)
{
    fixture *f = *state;
    long long r = -5;
    assert_int_equal(store_lock_latch_get(f->s, S("latch"), &r), 0);
    store_lock_latch_set(f->s, S("latch"), 1, 13500);
    assert_string_equal(f->events, "16384:new:latch 8:set:latch 4:expire:latch ");
    assert_int_equal(store_lock_latch_get(f->s, S("latch"), &r), 1);
    assert_int_equal(r, 1);
    assert_int_equal(ttl_of(f, "latch"), 13500);
}

static void test_tokens(void **state)
{
    fixture *f = *state;
    store_put_string(f->s, S("t"), S("tok"));
    assert_int_equal(store_lock_token_delete(f->s, S("t"), S("other")), 0);
    assert_int_equal(store_lock_token_pexpire(f->s, S("t"), S("other"), 100), 0);
    assert_int_equal(store_lock_token_pexpire(f->s, S("t"), S("tok"), 100), 1);
    assert_int_equal(ttl_of(f, "t"), 100);
    assert_int_equal(store_lock_token_delete(f->s, S("t"), S("tok")), 1);
    assert_int_equal(store_lock_token_delete(f->s, S("t"), S("tok")), 0);
    assert_int_equal(store_lock_token_matches(f->s, S("t"), S("tok")), 0);
}

/* What the store itself logs when it creates key: "<cls>:new:<key> " where
 * it raises Redis 7.0's "new" event (as the pub/sub branch's does), else
 * nothing. Found by creating a probe key. */
static const char *created(fixture *f, const char *key, char *buf, size_t len)
{
    char saved[sizeof(f->events)];
    int cls = 0;
    memcpy(saved, f->events, sizeof(saved));
    f->events[0] = '\0';
    store_delete_key(f->s, store_create_key(f->s, S("new-probe"), STORE_STRING));
    int has_new = sscanf(f->events, "%d:new:new-probe ", &cls) == 1;
    memcpy(f->events, saved, sizeof(saved));
    snprintf(buf, len, has_new ? "%d:new:%s " : "", cls, key);
    return buf;
}

static int fenced(fixture *f, const char *owner, long long lease, long long *pttl, long long *token)
{
    return store_lock_fenced_acquire(f->s, S("L"), S("tok"), S(owner), lease, pttl, token);
}

static const char *string_of(fixture *f, const char *key)
{
    static char buf[64];
    size_t len;
    store_key *k = store_lookup(f->s, S(key));
    const char *v = k ? store_string_get(k, &len) : NULL;
    snprintf(buf, sizeof(buf), "%.*s", v ? (int)len : 4, v ? v : "none");
    return buf;
}

/* Every acquire takes a token, re-entries too; a refused one takes none.
 * Events in the script's order: incr, hincrby, pexpire. */
static void test_fenced_tokens(void **state)
{
    fixture *f = *state;
    long long pttl = 7, token = 7;
    char want[256], tok_new[64], lock_new[64];
    assert_int_equal(fenced(f, "a", 30000, &pttl, &token), 1);
    assert_int_equal(token, 1);
    snprintf(want, sizeof(want), "%s8:incrby:tok %s64:hincrby:L 4:expire:L ",
             created(f, "tok", tok_new, sizeof(tok_new)), created(f, "L", lock_new, sizeof(lock_new)));
    assert_string_equal(f->events, want);
    assert_int_equal(fenced(f, "a", 10000, &pttl, &token), 1);
    assert_int_equal(token, 2);
    assert_int_equal(count_of(f, "L", "a"), 2);
    assert_int_equal(ttl_of(f, "L"), 10000);
    f->now += 400;
    f->events[0] = '\0';
    assert_int_equal(fenced(f, "b", 30000, &pttl, &token), 0);
    assert_int_equal(pttl, 9600);
    assert_string_equal(string_of(f, "tok"), "2");
    assert_string_equal(f->events, "");
    /* the counter keeps its TTL, as INCR does, and may start anywhere */
    store_key *t = store_lookup(f->s, S("tok"));
    store_string_set(f->s, t, S("-5"));
    store_key_set_deadline(f->s, t, (int64_t)f->now + 777);
    assert_int_equal(fenced(f, "a", 100, &pttl, &token), 1);
    assert_int_equal(token, -4);
    assert_int_equal(ttl_of(f, "tok"), 777);
}

/* Whatever INCR or HINCRBY would refuse goes to Lua before any change. */
static void test_fenced_fallback_changes_nothing(void **state)
{
    fixture *f = *state;
    long long pttl, token;
    const char *bad[] = {"x", "01", "+1", " 1", "9223372036854775807"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        store_put_string(f->s, S("tok"), S(bad[i]));
        f->events[0] = '\0';
        assert_int_equal(fenced(f, "a", 100, &pttl, &token), STORE_LOCK_FALLBACK);
        assert_null(store_lookup(f->s, S("L")));
        assert_string_equal(f->events, "");
    }
    store_delete(f->s, S("tok"));
    store_create_key(f->s, S("tok"), STORE_HASH);
    f->events[0] = '\0';
    assert_int_equal(fenced(f, "a", 100, &pttl, &token), STORE_LOCK_FALLBACK);
    store_delete(f->s, S("tok"));
    assert_int_equal(store_lock_fenced_acquire(f->s, S("L"), S("L"), S("a"), 100, &pttl, &token),
                     STORE_LOCK_FALLBACK);
    store_put_string(f->s, S("L"), S("not a hash"));
    f->events[0] = '\0';
    assert_int_equal(fenced(f, "a", 100, &pttl, &token), STORE_LOCK_FALLBACK);
    assert_string_equal(f->events, "");
    assert_null(store_lookup(f->s, S("tok")));
    /* held by another: answered natively even with a broken counter */
    store_delete(f->s, S("L"));
    acquire(f, "L", "b", 5000, &pttl);
    store_put_string(f->s, S("tok"), S("x"));
    assert_int_equal(fenced(f, "a", 100, &pttl, &token), 0);
    assert_int_equal(pttl, 5000);
}

static void test_parse_ttl(void **state)
{
    long long ms;
    assert_true(store_lock_parse_ttl(S("30000"), &ms));
    assert_int_equal(ms, 30000);
    assert_false(store_lock_parse_ttl(S("0"), &ms));
    assert_false(store_lock_parse_ttl(S("-1"), &ms));
    assert_false(store_lock_parse_ttl(S("1.5"), &ms));
    assert_false(store_lock_parse_ttl(S(""), &ms));
    assert_false(store_lock_parse_ttl(S("9223372036854775807"), &ms));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_acquire_reenter_and_contend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_without_deadline_reports_minus_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_first_hold_event_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_counts_down_then_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holds_reads_without_changing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renew_only_for_the_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease_deadline_is_the_last_lease_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_lock_is_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latch_records_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fenced_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fenced_fallback_changes_nothing, setup, teardown),
        cmocka_unit_test(test_parse_ttl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
