/* hll.h - Redis 7.0's HyperLogLog as bytes: the "HYLL" header, the sparse
 * and dense register encodings, MurmurHash64A and the estimator. No store. */
#ifndef LATCHD_HLL_H
#define LATCHD_HLL_H

#include <stddef.h>
#include <stdint.h>

/* The format is Redis's, bit for bit: a value written here is what
 * redis-server writes for the same additions, and the other way round.
 *
 *   "HYLL" | encoding (0 dense, 1 sparse) | 3 unused | cached cardinality
 *   (8 bytes little endian, its top bit set when stale) | registers
 *
 * Dense: 16384 6-bit registers packed from each byte's low bits up.
 * Sparse: opcodes ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx
 * xxxxxxxx (1..16384) and VAL 1vvvvvxx (1..4 registers of value 1..32). */
#define HLL_P 14
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_REGISTER_MAX 63
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * 6 + 7) / 8)
#define HLL_EMPTY_SIZE (HLL_HDR_SIZE + 2)   /* sparse: one XZERO of 16384 */
enum { HLL_DENSE = 0, HLL_SPARSE = 1 };

/* An error as a value: the sparse opcodes do not cover exactly 16384
 * registers (Redis's "INVALIDOBJ Corrupted HLL object detected"). */
#define HLL_CORRUPT (-1)

/* Redis's MurmurHash64A, endian neutral (the one its HLL hashes with). */
uint64_t hll_murmur64a(const void *key, size_t len, uint32_t seed);
/* The register an element lands in (*index) and its run of zeros plus
 * one (1..51): hllPatLen. */
int hll_pattern(const void *ele, size_t len, long *index);

/* isHLLObjectOrReply's test of a string: 1 if it may be read as an HLL
 * (magic, a known encoding, a dense one exactly HLL_DENSE_SIZE long). The
 * sparse opcodes are checked only as they are used, as in Redis. */
int hll_is_valid(const uint8_t *p, size_t len);
int hll_encoding(const uint8_t *p);   /* HLL_DENSE or HLL_SPARSE */

/* The cached cardinality: valid unless its top bit is set. */
int hll_cache_valid(const uint8_t *p);
uint64_t hll_cache_get(const uint8_t *p);
void hll_cache_set(uint8_t *p, uint64_t card);
void hll_cache_invalidate(uint8_t *p);

/* One register of a dense HLL's register area (p + HLL_HDR_SIZE). */
unsigned hll_dense_get(const uint8_t *regs, long i);
void hll_dense_put(uint8_t *regs, long i, unsigned val);

/* An HLL being written: bytes it owns (mem_realloc'd), len of them the
 * value, and a 0 at p[len], as Redis's sds strings have: Redis's code
 * reads that byte (an XZERO cut short at the end), so reading it here
 * gives the same answers on the same corrupted values.
 *
 * One known difference, on corrupted values only: splitting such a cut
 * XZERO leaves the split's last byte at p[len] (Redis writes it past the
 * new end). Within one command both read it alike; Redis keeps it in its
 * buffer for later commands too, while a store string ends in a 0 again,
 * so from the next command on the two can read that opcode differently. */
typedef struct hll_buf {
    uint8_t *p;
    size_t len, cap;
} hll_buf;

/* An empty HLL (sparse, 18 bytes), as PFADD on a missing key makes. */
void hll_buf_init_empty(hll_buf *h);
/* A copy of len bytes to work on. */
void hll_buf_init_copy(hll_buf *h, const void *p, size_t len);
void hll_buf_free(hll_buf *h);

/* Add an element: 1 if a register rose, 0 if none did, HLL_CORRUPT. A
 * sparse HLL turns dense when a register passes 32 or the value would
 * grow past sparse_max bytes (hll-sparse-max-bytes). As in Redis, a
 * failure may leave earlier changes of the same call in place. */
int hll_add(hll_buf *h, const void *ele, size_t len, size_t sparse_max);
/* Raise register i to val (1..63) if it is lower (PFMERGE's writes): the
 * same results and conversion as hll_add. */
int hll_set(hll_buf *h, long i, unsigned val, size_t sparse_max);
/* Sparse to dense (header, cached cardinality included, kept): 1 if
 * converted, 0 if already dense, HLL_CORRUPT (h unchanged). */
int hll_to_dense(hll_buf *h);

/* Readers of a stored value need one readable byte past its end (the
 * store's strings end in a 0), for the same reason as hll_buf.
 *
 * MAX the registers of a valid HLL (hll_is_valid) into max[16384]:
 * 0, or HLL_CORRUPT for sparse opcodes not covering 16384 registers. */
int hll_merge(uint8_t *max, const uint8_t *p, size_t len);
/* The estimate of a valid HLL (Redis's hllCount: Ertl's improved
 * estimator over the register histogram); HLL_CORRUPT as hll_merge's,
 * else 0 with *card. */
int hll_count(const uint8_t *p, size_t len, uint64_t *card);
/* The estimate of 16384 one-byte registers (PFCOUNT of several keys). */
uint64_t hll_count_registers(const uint8_t *max);

/* The sparse opcode at p: its kind, registers covered and value (0 but
 * for VAL); returns its length. An XZERO in the last byte reads the byte
 * past the end, see above.
 * PFDEBUG DECODE walks them. */
enum { HLL_OP_ZERO, HLL_OP_XZERO, HLL_OP_VAL };
size_t hll_sparse_op(const uint8_t *p, int *kind, long *runlen, int *val);

/* PFSELFTEST's checks (register access, sparse/dense agreement and error
 * bounds over 10M additions), rnd drawing the random values: NULL if all
 * pass, else Redis's TESTFAILED text written into err. */
const char *hll_selftest(uint64_t (*rnd)(void *), void *ctx, size_t sparse_max, char *err, size_t errlen);

#endif
