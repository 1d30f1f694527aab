/* test_orphan.c - lazy freeing's store side: free efforts as Redis
 * estimates them, an orphaned value freed through another store, its
 * bytes and pooled blocks given back to its own store on settling, and the
 * release hook expired and replaced values go through. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "set.h"
#include "store.h"

static uint64_t clock0(void *ctx)
{
    (void)ctx;
    return 1000;
}

#define S(x) x, strlen(x)

static store_key *big_set(store *s, const char *name, int n)
{
    store_key *k = store_create_key(s, S(name), STORE_SET);
    char m[32];
    for (int i = 0; i < n; i++) {
        snprintf(m, sizeof(m), "member:%d", i);   /* not integers: the table, pooled members */
        assert_int_equal(store_set_add(s, store_set_of(k), S(m)), 1);
    }
    return k;
}

static void test_efforts(void **state)
{
    (void)state;
    store *s = store_create(clock0, NULL);
    store_key *str = store_put_string(s, S("str"), S("a long enough string value, still one allocation"));
    assert_int_equal(store_key_free_effort(str), 1);
    store_key *small = store_create_key(s, S("ints"), STORE_SET);
    for (int i = 0; i < 100; i++) {
        char m[16];
        snprintf(m, sizeof(m), "%d", i);
        store_set_add(s, store_set_of(small), S(m));
    }
    assert_int_equal(store_key_free_effort(small), 1);   /* an intset: one block */
    store_key *big = big_set(s, "big", 1000);
    assert_int_equal(store_key_free_effort(big), 1000);
    store_destroy(s);
}

static void test_orphan_settles_bytes_and_blocks(void **state)
{
    (void)state;
    store *s = store_create(clock0, NULL), *freer = store_create(clock0, NULL);
    size_t empty = store_used_memory(s);
    store_key *k = big_set(s, "big", 5000);
    size_t full = store_used_memory(s);
    assert_true(full > empty + 5000 * 16);
    store_orphan *o = store_key_orphan(s, k);
    assert_null(store_lookup(s, S("big")));
    assert_int_equal(store_size(s), 0);
    /* the value's bytes stay charged until settled; only the entry went */
    size_t pending = store_used_memory(s);
    assert_true(pending > empty && pending < full);
    size_t freed = store_orphan_free(freer, o);
    assert_int_equal(store_used_memory(freer), 0);   /* the freer is charged nothing */
    assert_int_equal(pending - freed, empty);
    store_orphan_settle(s, o);
    assert_int_equal(store_used_memory(s), empty);
    /* the same set again takes the same bytes: the blocks came home */
    big_set(s, "big", 5000);
    assert_int_equal(store_used_memory(s), full);
    store_destroy(s);
    store_destroy(freer);
}

static void test_orphan_dropped_after_its_store(void **state)
{
    (void)state;
    store *s = store_create(clock0, NULL), *freer = store_create(clock0, NULL);
    store_orphan *o = store_key_orphan(s, big_set(s, "big", 500));
    assert_true(store_orphan_free(freer, o) > 0);
    store_destroy(s);   /* its pool goes whole, the orphan's blocks with it */
    store_orphan_drop(o);
    store_destroy(freer);
}

static uint64_t now_ms = 1000;
static uint64_t clock_var(void *ctx)
{
    (void)ctx;
    return now_ms;
}

/* A hook as the server's: big values taken, the rest left to the store. */
struct taker {
    store_orphan *taken[16];
    int n, asked[2];
};

static int take_big(store *s, store_key *k, store_release_why why, void *ctx)
{
    struct taker *t = ctx;
    t->asked[why]++;
    if (store_key_free_effort(k) <= 64) return 0;
    t->taken[t->n++] = store_value_orphan(s, k);
    return 1;
}

static void test_release_hook_takes_expired_and_replaced_values(void **state)
{
    (void)state;
    now_ms = 1000;
    store *s = store_create(clock_var, NULL), *freer = store_create(clock0, NULL);
    struct taker t = {0};
    size_t empty = store_used_memory(s);
    store_set_release_hook(s, take_big, &t);

    store_key_set_deadline(s, big_set(s, "wheel", 200), 1500);   /* the wheel's */
    store_key_set_deadline(s, big_set(s, "lookup", 200), 1500);  /* a lookup's */
    now_ms = 2000;
    assert_null(store_lookup(s, S("lookup")));
    assert_int_equal(store_expire_due(s), 1);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.asked[STORE_RELEASE_EXPIRED], 2);

    store_release_key(s, big_set(s, "past", 200), STORE_RELEASE_EXPIRED);   /* EXPIRE in the past */
    store_key *k = big_set(s, "over", 200);
    store_string_set(s, k, S("a string now"));                   /* SET over it */
    size_t len;
    assert_memory_equal(store_string_get(k, &len), "a string now", 12);
    big_set(s, "dst", 200);
    store_rename(s, store_put_string(s, S("src"), S("v")), S("dst"));   /* RENAME onto it */
    k = big_set(s, "reset", 200);
    store_key_reset(s, k, STORE_LIST);                            /* SORT ... STORE onto it */
    store_delete_key(s, k);
    store_set scratch;                                            /* SUNION's result */
    store_set_init_table(s, &scratch);
    store_set_add_all(s, &scratch, store_set_of(big_set(s, "from", 200)));
    store_set_release(s, &scratch);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.asked[STORE_RELEASE_REPLACED], 5);

    store_string_set(s, store_create_key(s, S("small"), STORE_SET), S("x"));   /* asked, left */
    assert_int_equal(t.n, 7);
    assert_int_equal(t.asked[STORE_RELEASE_REPLACED], 6);

    /* settled before the store is flushed: an orphan's blocks may be its pool's */
    for (const char *const *name = (const char *const[]){"dst", "over", "from", "small", NULL}; *name; name++)
        assert_int_equal(store_delete(s, S(*name)), 1);
    for (int i = 0; i < t.n; i++) {
        assert_true(store_orphan_free(freer, t.taken[i]) > 0);
        store_orphan_settle(s, t.taken[i]);
    }
    assert_int_equal(store_used_memory(s), empty);
    store_destroy(s);
    store_destroy(freer);
}

static void test_without_a_hook_values_go_at_once(void **state)
{
    (void)state;
    store *s = store_create(clock0, NULL);
    size_t empty = store_used_memory(s);
    store_key *k = big_set(s, "over", 200);
    store_string_set(s, k, S("x"));
    store_delete_key(s, k);
    assert_int_equal(store_used_memory(s), empty);
    store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_efforts),
        cmocka_unit_test(test_orphan_settles_bytes_and_blocks),
        cmocka_unit_test(test_orphan_dropped_after_its_store),
        cmocka_unit_test(test_release_hook_takes_expired_and_replaced_values),
        cmocka_unit_test(test_without_a_hook_values_go_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
