/* test_hll.c - the HyperLogLog codec (store/hll.c) against bytes and
 * estimates taken from redis-server 7.0.15: hashing, sparse splits and
 * merges, promotion to dense, the estimator's edges, corrupted values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hll.h"

#define STALE "\x00\x00\x00\x00\x00\x00\x00\x80"
#define SPARSE_HDR "HYLL\x01\x00\x00\x00" STALE
#define DENSE_HDR "HYLL\x00\x00\x00\x00" STALE

static void assert_bytes(const hll_buf *h, const char *want, size_t len)
{
    assert_int_equal(h->len, len);
    assert_memory_equal(h->p, want, len);
}

static void test_pattern(void **state)
{
    (void)state;
    /* PFADD h a b c on redis-server decodes to v:1 at 8436, v:2 at
     * 12711 and v:1 at 15780. */
    long idx[3];
    int count[3];
    for (int i = 0; i < 3; i++) count[i] = hll_pattern(&"abc"[i], 1, &idx[i]);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        if (idx[i] == 8436 && count[i] == 1) seen |= 1;
        if (idx[i] == 12711 && count[i] == 2) seen |= 2;
        if (idx[i] == 15780 && count[i] == 1) seen |= 4;
    }
    assert_int_equal(seen, 7);
}

static void test_add_sparse_bytes(void **state)
{
    (void)state;
    hll_buf h;
    hll_buf_init_empty(&h);
    assert_bytes(&h, "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff", 18);
    assert_int_equal(hll_add(&h, "a", 1, 3000), 1);
    assert_int_equal(hll_add(&h, "b", 1, 3000), 1);
    assert_int_equal(hll_add(&h, "c", 1, 3000), 1);
    assert_int_equal(hll_add(&h, "c", 1, 3000), 0);
    assert_bytes(&h, SPARSE_HDR "\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a", 27);
    assert_int_equal(h.p[h.len], 0);
    uint64_t card;
    assert_int_equal(hll_count(h.p, h.len, &card), 0);
    assert_int_equal(card, 3);
    hll_buf_free(&h);
}

/* Neighbouring VALs of one value merge into one opcode (up to 4). */
static void test_sparse_vals_merge(void **state)
{
    (void)state;
    hll_buf h;
    hll_buf_init_empty(&h);
    for (long i = 100; i < 106; i++) assert_int_equal(hll_set(&h, i, 5, 3000), 1);
    /* XZERO 100, VAL 5 x4, VAL 5 x2, XZERO 16278 */
    assert_bytes(&h, SPARSE_HDR "\x40\x63\x93\x91\x7f\x95", 22);
    assert_int_equal(hll_set(&h, 102, 4, 3000), 0);
    assert_int_equal(hll_set(&h, 102, 6, 3000), 1);   /* splits the run */
    /* VAL 5 x2, VAL 6, VAL 5 x1 + x2 merged */
    assert_bytes(&h, SPARSE_HDR "\x40\x63\x91\x94\x92\x7f\x95", 23);
    hll_buf_free(&h);
}

static void test_promotion(void **state)
{
    (void)state;
    hll_buf h;
    hll_buf_init_empty(&h);
    assert_int_equal(hll_set(&h, 7, 33, 3000), 1);   /* not a sparse value */
    assert_int_equal(hll_encoding(h.p), HLL_DENSE);
    assert_int_equal(h.len, HLL_DENSE_SIZE);
    assert_int_equal(hll_dense_get(h.p + HLL_HDR_SIZE, 7), 33);
    hll_buf_free(&h);

    hll_buf_init_empty(&h);
    for (long i = 0; h.p[4] == HLL_SPARSE; i += 100) {
        assert_int_equal(hll_set(&h, i, 1, 30), 1);
        if (h.p[4] == HLL_SPARSE) assert_true(h.len <= 30);
    }
    assert_int_equal(h.len, HLL_DENSE_SIZE);
    hll_buf_free(&h);
}

static void test_dense_registers(void **state)
{
    (void)state;
    uint8_t *r = calloc(1, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    for (long i = 0; i < HLL_REGISTERS; i++) hll_dense_put(r, i, (unsigned)(i * 7 % 64));
    for (long i = 0; i < HLL_REGISTERS; i++) assert_int_equal(hll_dense_get(r, i), i * 7 % 64);
    hll_dense_put(r, HLL_REGISTERS - 1, 63);
    assert_int_equal(r[HLL_DENSE_SIZE - HLL_HDR_SIZE - 1] >> 2, 63);
    free(r);
}

static void test_to_dense_and_corrupt(void **state)
{
    (void)state;
    hll_buf h;
    hll_buf_init_copy(&h, SPARSE_HDR "\x7f\xfe", 18);   /* 16383 registers */
    assert_int_equal(hll_to_dense(&h), HLL_CORRUPT);
    assert_bytes(&h, SPARSE_HDR "\x7f\xfe", 18);
    uint64_t card;
    assert_int_equal(hll_count(h.p, h.len, &card), HLL_CORRUPT);
    hll_buf_free(&h);

    hll_buf_init_copy(&h, SPARSE_HDR "\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a", 27);
    assert_int_equal(hll_to_dense(&h), 1);
    assert_int_equal(hll_to_dense(&h), 0);
    assert_memory_equal(h.p, DENSE_HDR, 16);   /* the header is kept */
    assert_int_equal(hll_dense_get(h.p + HLL_HDR_SIZE, 12711), 2);
    assert_int_equal(hll_count(h.p, h.len, &card), 0);
    assert_int_equal(card, 3);
    hll_buf_free(&h);
}

/* An XZERO cut short by the end reads the byte past it, and its split
 * loses its last byte to the new end: redis-server's bytes exactly. */
static void test_xzero_cut_short(void **state)
{
    (void)state;
    hll_buf h;
    hll_buf_init_copy(&h, SPARSE_HDR "\x7f", 17);   /* XZERO of 16129 */
    assert_int_equal(hll_set(&h, 100, 3, 3000), 1);
    assert_bytes(&h, SPARSE_HDR "\x40\x63\x88\x7e", 20);
    assert_int_equal(h.p[h.len], 0x9b);
    assert_int_equal(hll_set(&h, 16200, 3, 3000), HLL_CORRUPT);
    hll_buf_free(&h);
}

static void test_estimates(void **state)
{
    (void)state;
    uint8_t *v = calloc(1, HLL_DENSE_SIZE + 1);
    uint64_t card;
    memcpy(v, DENSE_HDR, 16);
    assert_true(hll_is_valid(v, HLL_DENSE_SIZE));
    assert_false(hll_is_valid(v, HLL_DENSE_SIZE - 1));
    assert_int_equal(hll_count(v, HLL_DENSE_SIZE, &card), 0);
    assert_int_equal(card, 0);
    memset(v + 16, 0x55, HLL_DENSE_SIZE - 16);
    assert_int_equal(hll_count(v, HLL_DENSE_SIZE, &card), 0);
    assert_int_equal(card, UINT64_C(24785312075));
    memset(v + 16, 0xff, HLL_DENSE_SIZE - 16);   /* every register 63: z is 0 */
    assert_int_equal(hll_count(v, HLL_DENSE_SIZE, &card), 0);
    assert_int_equal(card, UINT64_C(1) << 63);
    free(v);
}

static void test_cache(void **state)
{
    (void)state;
    uint8_t v[16] = "HYLL";
    assert_true(hll_cache_valid(v));
    hll_cache_set(v, UINT64_C(0x0102030405060708));
    assert_int_equal(v[8], 8);
    assert_int_equal(hll_cache_get(v), UINT64_C(0x0102030405060708));
    hll_cache_invalidate(v);
    assert_false(hll_cache_valid(v));
    assert_int_equal(v[15], 0x81);
}

static uint64_t xorshift(void *ctx)
{
    uint64_t *s = ctx;
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_selftest(void **state)
{
    (void)state;
    uint64_t seed = 42;
    char err[128];
    assert_null(hll_selftest(xorshift, &seed, 3000, err, sizeof(err)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_add_sparse_bytes),
        cmocka_unit_test(test_sparse_vals_merge),
        cmocka_unit_test(test_promotion),
        cmocka_unit_test(test_dense_registers),
        cmocka_unit_test(test_to_dense_and_corrupt),
        cmocka_unit_test(test_xzero_cut_short),
        cmocka_unit_test(test_estimates),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_selftest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
