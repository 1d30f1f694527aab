/* sha1.c - one-call SHA-1 over a buffer, written from FIPS 180-4.
 * Our own rather than libcrypto's: linking and relocating libcrypto would
 * be most of latchd's exec-to-listen time, for one function. */
#include <stdint.h>
#include <string.h>

#include "script.h"

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static uint32_t load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* One 64-byte block into the state h[5] (FIPS 180-4, 6.1.2). */
static void compress(uint32_t h[5], const unsigned char block[64])
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++) w[t] = load_be32(block + 4 * t);
    for (int t = 16; t < 80; t++) w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) f = (b & c) | (~b & d), k = 0x5a827999;
        else if (t < 40) f = b ^ c ^ d, k = 0x6ed9eba1;
        else if (t < 60) f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
        else f = b ^ c ^ d, k = 0xca62c1d6;
        uint32_t tmp = rol(a, 5) + f + e + k + w[t];
        e = d, d = c, c = rol(b, 30), b = a, a = tmp;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void sha1_digest(const void *data, size_t len, unsigned char out[SHA1_DIGEST_LEN])
{
    uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
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

    for (int i = 0; i < 5; i++) store_be32(out + 4 * i, h[i]);
}
