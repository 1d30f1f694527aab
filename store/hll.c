/* hll.c - Redis 7.0's HyperLogLog over plain bytes (hll.h): hashing, the
 * sparse and dense encodings and their conversion, merging, estimating. */
#include "hll.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define HLL_Q (64 - HLL_P)   /* hash bits left for the run of zeros */
#define SPARSE_VAL_MAX 32
#define SPARSE_VAL_MAX_LEN 4
#define SPARSE_ZERO_MAX_LEN 64
#define SPARSE_XZERO_MAX_LEN 16384
#define ALPHA_INF 0.721347520444481703680   /* 0.5 / ln 2 */
#define HLL_SEED 0xadc83b19u

/* ---- hashing ---- */

uint64_t hll_murmur64a(const void *key, size_t len, uint32_t seed)
{
    const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
    const int r = 47;
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));
    uint64_t h = seed ^ (len * m);

    /* Little-endian words read byte by byte: Redis's endian-neutral form. */
    for (; data != end; data += 8) {
        uint64_t k = 0;
        for (int i = 7; i >= 0; i--) k = k << 8 | data[i];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (len & 7) {
        for (int i = (int)(len & 7) - 1; i >= 0; i--) h ^= (uint64_t)data[i] << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pattern(const void *ele, size_t len, long *index)
{
    uint64_t hash = hll_murmur64a(ele, len, HLL_SEED);
    *index = (long)(hash & (HLL_REGISTERS - 1));
    /* The bit above the Q used ones ends the count at Q + 1 at most. */
    hash = hash >> HLL_P | UINT64_C(1) << HLL_Q;
    int count = 1;
    for (uint64_t bit = 1; !(hash & bit); bit <<= 1) count++;
    return count;
}

/* ---- header ---- */

int hll_is_valid(const uint8_t *p, size_t len)
{
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return 0;
    if (p[4] > HLL_SPARSE) return 0;
    return p[4] != HLL_DENSE || len == HLL_DENSE_SIZE;
}

int hll_encoding(const uint8_t *p) { return p[4]; }

int hll_cache_valid(const uint8_t *p) { return !(p[15] & 0x80); }

uint64_t hll_cache_get(const uint8_t *p)
{
    uint64_t card = 0;
    for (int i = 7; i >= 0; i--) card = card << 8 | p[8 + i];
    return card;
}

void hll_cache_set(uint8_t *p, uint64_t card)
{
    for (int i = 0; i < 8; i++) p[8 + i] = (uint8_t)(card >> (8 * i));
}

void hll_cache_invalidate(uint8_t *p) { p[15] |= 0x80; }

/* ---- dense registers ---- */

/* Register i spans bits 6i..6i+5 counted from each byte's low bit; the
 * next byte is touched only when those bits cross into it, so the last
 * register never reads past the area (Redis leans on sds's 0 there). */
unsigned hll_dense_get(const uint8_t *regs, long i)
{
    size_t byte = (size_t)i * 6 / 8;
    unsigned fb = (unsigned)((size_t)i * 6 & 7);
    unsigned v = regs[byte] >> fb;
    if (fb > 2) v |= (unsigned)regs[byte + 1] << (8 - fb);
    return v & HLL_REGISTER_MAX;
}

void hll_dense_put(uint8_t *regs, long i, unsigned val)
{
    size_t byte = (size_t)i * 6 / 8;
    unsigned fb = (unsigned)((size_t)i * 6 & 7);
    regs[byte] = (uint8_t)((regs[byte] & ~(HLL_REGISTER_MAX << fb)) | val << fb);
    if (fb > 2)
        regs[byte + 1] = (uint8_t)((regs[byte + 1] & ~(HLL_REGISTER_MAX >> (8 - fb))) | val >> (8 - fb));
}

static int dense_raise(uint8_t *regs, long i, unsigned val)
{
    if (val <= hll_dense_get(regs, i)) return 0;
    hll_dense_put(regs, i, val);
    return 1;
}

/* Four registers in every three bytes. */
static void dense_histogram(const uint8_t *r, int *hist)
{
    for (int j = 0; j < HLL_REGISTERS / 4; j++, r += 3) {
        hist[r[0] & 63]++;
        hist[(r[0] >> 6 | r[1] << 2) & 63]++;
        hist[(r[1] >> 4 | r[2] << 4) & 63]++;
        hist[r[2] >> 2]++;
    }
}

/* ---- sparse opcodes ---- */

#define IS_ZERO(b) (((b) & 0xc0) == 0)
#define IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define IS_VAL(b) ((b) & 0x80)
#define VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define VAL_LEN(b) (((b) & 0x3) + 1)
#define VAL_OP(val, len) ((uint8_t)(0x80 | ((val) - 1) << 2 | ((len) - 1)))

size_t hll_sparse_op(const uint8_t *p, int *kind, long *runlen, int *val)
{
    *val = 0;
    if (IS_ZERO(p[0])) {
        *kind = HLL_OP_ZERO;
        *runlen = (p[0] & 0x3f) + 1;
        return 1;
    }
    if (IS_XZERO(p[0])) {
        *kind = HLL_OP_XZERO;
        *runlen = ((long)(p[0] & 0x3f) << 8 | p[1]) + 1;
        return 2;
    }
    *kind = HLL_OP_VAL;
    *runlen = VAL_LEN(p[0]);
    *val = VAL_VALUE(p[0]);
    return 1;
}

/* A run of len zero registers as one ZERO or XZERO opcode; its length. */
static int put_zeros(uint8_t *out, long len)
{
    if (len > SPARSE_ZERO_MAX_LEN) {
        out[0] = (uint8_t)(0x40 | (len - 1) >> 8);
        out[1] = (uint8_t)((len - 1) & 0xff);
        return 2;
    }
    out[0] = (uint8_t)(len - 1);
    return 1;
}

typedef void (*run_fn)(long first, long n, int val, void *ctx);

/* Every run of a sparse HLL in order, zeros included (val 0), as Redis
 * walks them: a run passing register 16384 stops the walk unreported.
 * HLL_CORRUPT unless the runs cover exactly 16384 registers. */
static int sparse_walk(const uint8_t *p, size_t len, run_fn fn, void *ctx)
{
    const uint8_t *end = p + len;
    long idx = 0, runlen;
    int kind, val;
    for (p += HLL_HDR_SIZE; p < end;) {
        p += hll_sparse_op(p, &kind, &runlen, &val);
        if (runlen + idx > HLL_REGISTERS) return HLL_CORRUPT;
        fn(idx, runlen, val, ctx);
        idx += runlen;
    }
    return idx == HLL_REGISTERS ? 0 : HLL_CORRUPT;
}

static void run_histogram(long first, long n, int val, void *ctx)
{
    (void)first;
    ((int *)ctx)[val] += (int)n;
}

static void run_max(long first, long n, int val, void *ctx)
{
    uint8_t *max = ctx;
    for (long i = first; i < first + n; i++)
        if (val > max[i]) max[i] = (uint8_t)val;
}

static void run_dense(long first, long n, int val, void *ctx)
{
    if (val)
        for (long i = first; i < first + n; i++) hll_dense_put(ctx, i, (unsigned)val);
}

/* ---- buffers ---- */

static void buf_reserve(hll_buf *h, size_t len)
{
    if (h->cap >= len + 1) return;
    h->p = mem_realloc(h->p, len + 1);
    memset(h->p + h->cap, 0, len + 1 - h->cap);
    h->cap = len + 1;
}

void hll_buf_init_empty(hll_buf *h)
{
    h->p = mem_calloc(1, HLL_EMPTY_SIZE + 1);
    h->len = HLL_EMPTY_SIZE;
    h->cap = HLL_EMPTY_SIZE + 1;
    memcpy(h->p, "HYLL", 4);
    h->p[4] = HLL_SPARSE;
    put_zeros(h->p + HLL_HDR_SIZE, HLL_REGISTERS);
}

void hll_buf_init_copy(hll_buf *h, const void *p, size_t len)
{
    h->p = mem_alloc(len + 1);
    memcpy(h->p, p, len);
    h->p[len] = 0;
    h->len = len;
    h->cap = len + 1;
}

void hll_buf_free(hll_buf *h)
{
    free(h->p);
    h->p = NULL;
    h->len = h->cap = 0;
}

int hll_to_dense(hll_buf *h)
{
    if (h->p[4] == HLL_DENSE) return 0;
    uint8_t *d = mem_calloc(1, HLL_DENSE_SIZE + 1);
    memcpy(d, h->p, HLL_HDR_SIZE);   /* magic and cached cardinality */
    d[4] = HLL_DENSE;
    if (sparse_walk(h->p, h->len, run_dense, d + HLL_HDR_SIZE) != 0) {
        free(d);
        return HLL_CORRUPT;
    }
    free(h->p);
    h->p = d;
    h->len = HLL_DENSE_SIZE;
    h->cap = HLL_DENSE_SIZE + 1;
    return 1;
}

/* ---- the sparse update, step by step as Redis's hllSparseSet: the
 * bytes it leaves (split and merged opcodes, when it gives up on sparse)
 * are part of the format others compare. ---- */

/* Adjacent VAL opcodes of one value merge while their length fits: up to
 * five opcodes are looked at from the one before the change. */
static void sparse_merge_vals(hll_buf *h, size_t p)
{
    uint8_t *s = h->p;
    size_t end = h->len;
    int scan = 5;
    while (p < end && scan--) {
        if (IS_XZERO(s[p])) {
            p += 2;
            continue;
        }
        if (IS_ZERO(s[p])) {
            p++;
            continue;
        }
        if (p + 1 < end && IS_VAL(s[p + 1]) && VAL_VALUE(s[p]) == VAL_VALUE(s[p + 1])) {
            int len = VAL_LEN(s[p]) + VAL_LEN(s[p + 1]);
            if (len <= SPARSE_VAL_MAX_LEN) {
                s[p + 1] = VAL_OP(VAL_VALUE(s[p]), len);
                memmove(s + p, s + p + 1, end - p);   /* the byte past the end too */
                s[--h->len] = 0;
                end--;
                continue;   /* the merged one may merge again */
            }
        }
        p++;
    }
}

/* The opcodes replacing the one covering [first, last] (a VAL of value
 * cur, or zeros when cur is 0) once register index holds val. */
static int split_seq(uint8_t *seq, long first, long last, long index, int cur, unsigned val)
{
    int n = 0;
    if (index != first) n += cur ? (seq[n] = VAL_OP(cur, index - first), 1) : put_zeros(seq + n, index - first);
    seq[n++] = VAL_OP(val, 1);
    if (index != last) n += cur ? (seq[n] = VAL_OP(cur, last - index), 1) : put_zeros(seq + n, last - index);
    return n;
}

static int sparse_promote(hll_buf *h, long index, unsigned val)
{
    if (hll_to_dense(h) == HLL_CORRUPT) return HLL_CORRUPT;
    /* The register was below val (or the value could not be sparse), so
     * this always raises it, as Redis asserts. */
    return dense_raise(h->p + HLL_HDR_SIZE, index, val);
}

static int sparse_set(hll_buf *h, long index, unsigned val, size_t sparse_max)
{
    if (val > SPARSE_VAL_MAX) return sparse_promote(h, index, val);
    /* Room for the worst split (XZERO into XZERO VAL XZERO) up front. */
    buf_reserve(h, h->len + 3);
    uint8_t *s = h->p;
    size_t p = HLL_HDR_SIZE, end = h->len, prev = 0, next;
    long first = 0, span = 0;
    int kind = HLL_OP_ZERO, cur = 0, has_prev = 0;
    while (p < end) {
        size_t oplen = hll_sparse_op(s + p, &kind, &span, &cur);
        if (index <= first + span - 1) break;
        prev = p, has_prev = 1;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return HLL_CORRUPT;
    next = kind == HLL_OP_XZERO ? p + 2 : p + 1;
    int has_next = next < end;

    if (kind == HLL_OP_VAL && (unsigned)cur >= val) return 0;
    if (span == 1 && kind != HLL_OP_XZERO) {
        s[p] = VAL_OP(val, 1);   /* a one-register VAL or ZERO: in place */
    } else {
        uint8_t seq[5];
        int n = split_seq(seq, first, first + span - 1, index, cur, val);
        long delta = n - (kind == HLL_OP_XZERO ? 2 : 1);
        if (delta > 0 && h->len + (size_t)delta > sparse_max) return sparse_promote(h, index, val);
        if (delta && has_next) memmove(s + next + delta, s + next, end - next);
        h->len = (size_t)((long)h->len + delta);
        s[h->len] = 0;
        /* After the new end is set, as Redis does: an XZERO cut short at
         * the end (corrupted) loses its split's last byte to it. */
        memcpy(s + p, seq, (size_t)n);
    }
    sparse_merge_vals(h, has_prev ? prev : HLL_HDR_SIZE);
    hll_cache_invalidate(h->p);
    return 1;
}

int hll_set(hll_buf *h, long i, unsigned val, size_t sparse_max)
{
    switch (h->p[4]) {
    case HLL_DENSE: return dense_raise(h->p + HLL_HDR_SIZE, i, val);
    case HLL_SPARSE: return sparse_set(h, i, val, sparse_max);
    default: return HLL_CORRUPT;
    }
}

int hll_add(hll_buf *h, const void *ele, size_t len, size_t sparse_max)
{
    long index;
    int count = hll_pattern(ele, len, &index);
    return hll_set(h, index, (unsigned)count, sparse_max);
}

/* ---- merging and estimating ---- */

int hll_merge(uint8_t *max, const uint8_t *p, size_t len)
{
    if (p[4] == HLL_SPARSE) return sparse_walk(p, len, run_max, max);
    for (long i = 0; i < HLL_REGISTERS; i++) {
        unsigned v = hll_dense_get(p + HLL_HDR_SIZE, i);
        if (v > max[i]) max[i] = (uint8_t)v;
    }
    return 0;
}

/* Ertl, "New cardinality estimation algorithms for HyperLogLog sketches"
 * (arXiv:1702.01284): sigma and tau, computed as Redis does so the
 * doubles, and the estimates, are the same. */
static double sigma(double x)
{
    if (x == 1.) return INFINITY;
    double zp, y = 1, z = x;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static double tau(double x)
{
    if (x == 0. || x == 1.) return 0.;
    double zp, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

static uint64_t estimate(const int *hist)
{
    double m = HLL_REGISTERS;
    double z = m * tau((m - hist[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += hist[j];
        z *= 0.5;
    }
    z += m * sigma(hist[0] / m);
    double e = ALPHA_INF * m * m / z;
    /* Redis rounds with llroundl and goes through a double; past the
     * long long range (every register over 51: z is 0) x86 gives
     * LLONG_MIN, which comes out as 2^63. */
    if (!(e < 9223372036854775808.0)) return UINT64_C(1) << 63;
    return (uint64_t)(double)llround(e);
}

int hll_count(const uint8_t *p, size_t len, uint64_t *card)
{
    int hist[64] = {0};
    if (p[4] == HLL_SPARSE) {
        if (sparse_walk(p, len, run_histogram, hist) != 0) return HLL_CORRUPT;
    } else {
        dense_histogram(p + HLL_HDR_SIZE, hist);
    }
    *card = estimate(hist);
    return 0;
}

uint64_t hll_count_registers(const uint8_t *max)
{
    int hist[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i++) hist[max[i] & 63]++;
    return estimate(hist);
}

/* ---- PFSELFTEST ---- */

static const char *failed(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *failed(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return err;
}

/* Redis's test 1: random values in every register read back intact. */
static const char *selftest_registers(uint8_t *regs, uint64_t (*rnd)(void *), void *ctx, char *err, size_t errlen)
{
    uint8_t *want = mem_alloc(HLL_REGISTERS);   /* no process-wide state */
    const char *res = NULL;
    for (int cycle = 0; cycle < 1000 && !res; cycle++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            want[i] = (uint8_t)(rnd(ctx) & HLL_REGISTER_MAX);
            hll_dense_put(regs, i, want[i]);
        }
        for (long i = 0; i < HLL_REGISTERS && !res; i++) {
            unsigned v = hll_dense_get(regs, i);
            if (v != want[i])
                res = failed(err, errlen, "TESTFAILED Register %ld should be %d but is %u", i, want[i], v);
        }
    }
    free(want);
    return res;
}

/* Redis's test 2: the same elements into a dense and a sparse HLL; at
 * each power of ten the sparse one is still sparse while small, both
 * agree, and the error stays within six standard errors. */
static const char *selftest_estimates(hll_buf *dense, hll_buf *sparse, uint64_t seed, size_t sparse_max, char *err,
                                      size_t errlen)
{
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    int64_t checkpoint = 1;
    for (uint64_t j = 1; j <= 10000000; j++) {
        uint64_t ele = j ^ seed;
        hll_add(dense, &ele, sizeof(ele), sparse_max);
        hll_add(sparse, &ele, sizeof(ele), sparse_max);
        if ((int64_t)j != checkpoint) continue;
        if (j < sparse_max / 2 && sparse->p[4] != HLL_SPARSE)
            return failed(err, errlen, "TESTFAILED sparse encoding not used");
        uint64_t cd = 0, cs = 0;
        hll_count(dense->p, dense->len, &cd);
        hll_count(sparse->p, sparse->len, &cs);
        if (cd != cs) return failed(err, errlen, "TESTFAILED dense/sparse disagree");
        int64_t abserr = checkpoint - (int64_t)cd;
        uint64_t maxerr = (uint64_t)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10) maxerr = 1;   /* collisions make 10 too noisy */
        if (abserr < 0) abserr = -abserr;
        if (abserr > (int64_t)maxerr)
            return failed(err, errlen, "TESTFAILED Too big error. card:%llu abserr:%llu",
                          (unsigned long long)checkpoint, (unsigned long long)abserr);
        checkpoint *= 10;
    }
    return NULL;
}

const char *hll_selftest(uint64_t (*rnd)(void *), void *ctx, size_t sparse_max, char *err, size_t errlen)
{
    hll_buf dense, sparse;
    hll_buf_init_empty(&dense);
    hll_to_dense(&dense);
    const char *res = selftest_registers(dense.p + HLL_HDR_SIZE, rnd, ctx, err, errlen);
    if (!res) {
        memset(dense.p + HLL_HDR_SIZE, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
        hll_buf_init_empty(&sparse);
        uint64_t seed = rnd(ctx) & 0xffffffffu;
        seed |= rnd(ctx) << 32;
        res = selftest_estimates(&dense, &sparse, seed, sparse_max, err, errlen);
        hll_buf_free(&sparse);
    }
    hll_buf_free(&dense);
    return res;
}
