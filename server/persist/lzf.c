/* lzf.c - LZF compression as Redis writes it (liblzf with HLOG 16 and
 * VERY_FAST, so DUMP output is byte-equal to redis-server's) and LZF
 * decompression with every bound checked, for untrusted payloads. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "persist.h"

enum {
    LZF_HLOG = 16,
    LZF_HSIZE = 1 << LZF_HLOG,
    LZF_MAX_LIT = 1 << 5,               /* a literal run holds 1..32 bytes */
    LZF_MAX_OFF = 1 << 13,              /* a back reference reaches 8 KiB */
    LZF_MAX_REF = (1 << 8) + (1 << 3),  /* and copies up to 264 bytes */
};

/* liblzf's hash of the next three bytes (VERY_FAST variant). */
static unsigned lzf_idx(unsigned h)
{
    return ((h >> (3 * 8 - LZF_HLOG)) - h * 5) & (LZF_HSIZE - 1);
}

struct persist_lzf_table {
    uint32_t slot[LZF_HSIZE];   /* a position + 1 (0: empty), as offsets: half of liblzf's pointers */
};

persist_lzf_table *persist_lzf_table_new(void) { return mem_calloc(1, sizeof(persist_lzf_table)); }

void persist_lzf_table_free(persist_lzf_table *t) { free(t); }

/* Every slot a call wrote is the hash of some 3-byte window of its input:
 * clearing those leaves the table as it was made, in O(inlen). */
static void lzf_table_reset(persist_lzf_table *t, const unsigned char *in, size_t inlen)
{
    for (size_t i = 0; i + 2 < inlen; i++)
        t->slot[lzf_idx(((unsigned)in[i] << 16) | ((unsigned)in[i + 1] << 8) | in[i + 2])] = 0;
}

size_t persist_lzf_compress(persist_lzf_table *t, const void *in, size_t inlen, void *out,
                            size_t outcap)
{
    if (inlen == 0 || outcap == 0 || inlen > UINT32_MAX - 1) return 0;
    const unsigned char *base = in, *ip = base, *in_end = base + inlen;
    unsigned char *o0 = out, *op = o0, *out_end = o0 + outcap;
    /* Redis leaves its table uninitialised: an empty slot never matches
     * there either (the "ref > in_data" test), so the output is the same. */
    uint32_t *htab = t->slot;
    size_t result = 0;
    int lit = 0;
    op++;   /* room for the first run's length byte */
    unsigned hval = inlen >= 2 ? ((unsigned)ip[0] << 8) | ip[1] : 0;
    while (inlen >= 3 && ip < in_end - 2) {
        hval = (hval << 8) | ip[2];
        uint32_t *slot = &htab[lzf_idx(hval)];
        uint32_t prev = *slot;
        *slot = (uint32_t)(ip - base) + 1;
        const unsigned char *ref = prev ? base + prev - 1 : NULL;
        size_t off = ref ? (size_t)(ip - ref - 1) : 0;
        if (ref && ref > base && off < LZF_MAX_OFF && ref[2] == ip[2] && ref[0] == ip[0] &&
            ref[1] == ip[1]) {
            size_t len = 2, maxlen = (size_t)(in_end - ip) - len;
            if (maxlen > LZF_MAX_REF) maxlen = LZF_MAX_REF;
            if (op + 3 + 1 >= out_end && op - !lit + 3 + 1 >= out_end) goto done;
            op[-lit - 1] = (unsigned char)(lit - 1);   /* close the literal run */
            op -= !lit;                                  /* or drop it if empty */
            /* liblzf compares 16 bytes unrolled before its bounded loop,
             * which can take a match 1-2 bytes past maxlen: kept, since
             * the output must be liblzf's. */
            int broke = 0;
            if (maxlen > 16) {
                for (int i = 0; i < 16; i++) {
                    len++;
                    if (ref[len] != ip[len]) {
                        broke = 1;
                        break;
                    }
                }
            }
            if (!broke) {
                do
                    len++;
                while (len < maxlen && ref[len] == ip[len]);
            }
            len -= 2;
            ip++;
            if (len < 7) {
                *op++ = (unsigned char)((off >> 8) + (len << 5));
            } else {
                *op++ = (unsigned char)((off >> 8) + (7 << 5));
                *op++ = (unsigned char)(len - 7);
            }
            *op++ = (unsigned char)off;
            lit = 0;
            op++;
            ip += len + 1;
            if (ip >= in_end - 2) break;
            /* re-hash the two positions just before ip (VERY_FAST) */
            ip -= 2;
            hval = ((unsigned)ip[0] << 8) | ip[1];
            hval = (hval << 8) | ip[2];
            htab[lzf_idx(hval)] = (uint32_t)(ip - base) + 1;
            ip++;
            hval = (hval << 8) | ip[2];
            htab[lzf_idx(hval)] = (uint32_t)(ip - base) + 1;
            ip++;
        } else {
            if (op >= out_end) goto done;
            lit++;
            *op++ = *ip++;
            if (lit == LZF_MAX_LIT) {
                op[-lit - 1] = (unsigned char)(lit - 1);
                lit = 0;
                op++;
            }
        }
    }
    if (op + 3 > out_end) goto done;
    while (ip < in_end) {
        lit++;
        *op++ = *ip++;
        if (lit == LZF_MAX_LIT) {
            op[-lit - 1] = (unsigned char)(lit - 1);
            lit = 0;
            op++;
        }
    }
    op[-lit - 1] = (unsigned char)(lit - 1);
    op -= !lit;
    result = (size_t)(op - o0);
done:
    lzf_table_reset(t, base, inlen);
    return result;
}

size_t persist_lzf_decompress(const void *in, size_t inlen, void *out, size_t outcap)
{
    const unsigned char *ip = in, *in_end = ip + inlen;
    unsigned char *o0 = out, *op = o0, *out_end = o0 + outcap;
    while (ip < in_end) {
        unsigned ctrl = *ip++;
        if (ctrl < (1 << 5)) {   /* a literal run of ctrl + 1 bytes */
            size_t n = ctrl + 1;
            if ((size_t)(out_end - op) < n || (size_t)(in_end - ip) < n) return 0;
            memcpy(op, ip, n);
            op += n;
            ip += n;
        } else {                 /* a back reference */
            size_t len = ctrl >> 5;
            if (len == 7) {
                if (ip >= in_end) return 0;
                len += *ip++;
            }
            if (ip >= in_end) return 0;
            size_t back = ((size_t)(ctrl & 0x1f) << 8) + *ip++ + 1;
            len += 2;
            if ((size_t)(op - o0) < back || (size_t)(out_end - op) < len) return 0;
            const unsigned char *ref = op - back;
            for (size_t i = 0; i < len; i++) op[i] = ref[i];   /* may overlap: bytewise */
            op += len;
        }
    }
    return (size_t)(op - o0);
}
