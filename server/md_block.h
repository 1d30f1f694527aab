/* md_block.h - what SHA-1 and SHA-256 share (FIPS 180-4): big-endian words
 * and the Merkle-Damgard walk over 64-byte blocks with its padded tail. */
#ifndef LATCHD_MD_BLOCK_H
#define LATCHD_MD_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t md_load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Every block of data through compress into the state h (initialised by the
 * caller), then h's nwords words big-endian into out. */
static inline void md_digest(uint32_t *h, int nwords, void (*compress)(uint32_t *, const unsigned char *),
                             const void *data, size_t len, unsigned char *out)
{
    const unsigned char *p = data;
    size_t left = len;
    for (; left >= 64; p += 64, left -= 64) compress(h, p);

    /* The tail, a 1 bit, zeros, and the length in bits: one or two blocks. */
    unsigned char tail[128] = {0};
    if (left) memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t tail_len = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (unsigned char)(bits >> (8 * i));
    compress(h, tail);
    if (tail_len == 128) compress(h, tail + 64);

    for (int i = 0; i < nwords; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}

#endif
