/* fuzz_hll.c - libFuzzer target for the HyperLogLog codec (store/hll.c):
 * the input is a value (any bytes, usually a corrupted HLL) and the ops run
 * on it. Nothing may crash or read out of bounds, and an HLL that reads as
 * valid must stay valid, with exactly the registers the ops raised. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hll.h"

/* Input: byte 0 picks hll-sparse-max-bytes, byte 1 the op count, then the
 * value; the PRNG seeded from the whole input draws the ops. */
static void check_registers(const hll_buf *h, const uint8_t *want)
{
    uint8_t *got = calloc(1, HLL_REGISTERS);
    FUZZ_CHECK(hll_merge(got, h->p, h->len) == 0);
    FUZZ_CHECK(memcmp(got, want, HLL_REGISTERS) == 0);
    free(got);
}

/* A sparse value whose last opcode is an XZERO cut short (its second byte
 * past the end): Redis reads that byte from the string's terminator and so
 * do we, so it counts, but an update may then leave it corrupt (as Redis's
 * would): no register model for it. */
static int ends_in_cut_xzero(const hll_buf *h)
{
    if (h->p[4] != HLL_SPARSE) return 0;
    size_t p = HLL_HDR_SIZE;
    while (p < h->len) {
        int kind, val;
        long runlen;
        size_t n = hll_sparse_op(h->p + p, &kind, &runlen, &val);
        if (p + n > h->len) return 1;
        p += n;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t sparse_max = (size_t)data[0] * 24;
    int ops = data[1] % 32;
    fuzz_rng r;
    fuzz_rng_seed(&r, data, size);
    hll_buf h;
    hll_buf_init_copy(&h, data + 2, size - 2);
    if (!hll_is_valid(h.p, h.len)) {
        hll_buf_free(&h);
        return 0;
    }
    uint64_t card;
    uint8_t *want = calloc(1, HLL_REGISTERS);
    /* Valid opcodes: the model is the registers they decode to. */
    int valid = hll_count(h.p, h.len, &card) == 0 && !ends_in_cut_xzero(&h);
    if (valid) FUZZ_CHECK(hll_merge(want, h.p, h.len) == 0);
    for (int i = 0; i < ops; i++) {
        uint64_t x = fuzz_rng_next(&r);
        int rc;
        if (x & 1) {
            long idx;
            unsigned val = (unsigned)hll_pattern(&x, sizeof(x), &idx);
            rc = hll_add(&h, &x, sizeof(x), sparse_max);
            if (valid && val > want[idx]) want[idx] = (uint8_t)val;
        } else {
            long idx = (long)(x >> 8) % HLL_REGISTERS;
            unsigned val = 1 + (unsigned)(x >> 40) % 63;   /* PFMERGE sets 1..63 */
            rc = hll_set(&h, idx, val, sparse_max);
            if (valid && val > want[idx]) want[idx] = (uint8_t)val;
        }
        if (valid) FUZZ_CHECK(rc >= 0);
        if ((x >> 4 & 15) == 0) {
            rc = hll_to_dense(&h);
            if (valid) FUZZ_CHECK(rc >= 0);
        }
        FUZZ_CHECK(hll_is_valid(h.p, h.len) || !valid);
        if (valid) check_registers(&h, want);
        if (h.p[4] == HLL_DENSE) FUZZ_CHECK(h.len == HLL_DENSE_SIZE);
    }
    if (valid && hll_is_valid(h.p, h.len)) {
        /* The estimate depends on the registers only: the sparse and the
         * dense form of them agree, as PFSELFTEST checks. */
        uint64_t a, b;
        FUZZ_CHECK(hll_count(h.p, h.len, &a) == 0);
        FUZZ_CHECK(hll_count_registers(want) == a);
        if (hll_to_dense(&h) >= 0) {
            FUZZ_CHECK(hll_count(h.p, h.len, &b) == 0);
            FUZZ_CHECK(a == b);
        }
    }
    free(want);
    hll_buf_free(&h);
    return 0;
}
