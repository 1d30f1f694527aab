/* test_pool.c - store_pool: blocks by size class, reused after put, apart
 * from each other, all returned by release (the keyspace and Lua's
 * allocator stand on it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "pool.h"

static void test_classes_round_up_to_the_step(void **state)
{
    store_pool p;
    store_pool_init(&p, 8, 512);
    assert_int_equal(store_pool_size(&p, 1), 8);
    assert_int_equal(store_pool_size(&p, 8), 8);
    assert_int_equal(store_pool_size(&p, 105), 112);
    assert_int_equal(store_pool_size(&p, 112), 112);
    assert_int_equal(store_pool_size(&p, 512), 512);
    assert_false(store_pool_holds(&p, 0));
    assert_false(store_pool_holds(&p, 513));
    store_pool_release(&p);
}

static void test_blocks_are_apart_and_reused_by_class(void **state)
{
    store_pool p;
    store_pool_init(&p, 8, 512);
    if (!store_pool_holds(&p, 112)) {   /* sanitizer build: malloc does it all */
        store_pool_release(&p);
        skip();
    }
    enum { N = 5000 };   /* several 64 KiB chunks */
    static unsigned char *b[N];
    for (int i = 0; i < N; i++) {
        b[i] = store_pool_get(&p, 112);
        assert_non_null(b[i]);
        assert_int_equal((uintptr_t)b[i] % 8, 0);
        memset(b[i], i & 0xff, 112);
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 112; j++) assert_int_equal(b[i][j], i & 0xff);
    /* a freed block comes back for the same class, not another one */
    store_pool_put(&p, b[7], 110);
    unsigned char *other = store_pool_get(&p, 40);
    assert_ptr_not_equal(other, b[7]);
    assert_ptr_equal(store_pool_get(&p, 105), b[7]);
    store_pool_release(&p);
    assert_null(p.chunks);
    assert_non_null(store_pool_get(&p, 64));   /* usable again after release */
    store_pool_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_round_up_to_the_step),
        cmocka_unit_test(test_blocks_are_apart_and_reused_by_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
