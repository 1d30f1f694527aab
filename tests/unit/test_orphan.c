/* test_orphan.c - lazy freeing's store side: free efforts as Redis
 * estimates them, and an orphaned value freed through another store, its
 * bytes and pooled blocks given back to its own store on settling. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_efforts),
        cmocka_unit_test(test_orphan_settles_bytes_and_blocks),
        cmocka_unit_test(test_orphan_dropped_after_its_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
