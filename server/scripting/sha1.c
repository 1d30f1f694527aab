/* sha1.c - one-call SHA-1 over a buffer, written from FIPS 180-4.
 * Our own rather than libcrypto's: linking and relocating libcrypto would
 * be most of latchd's exec-to-listen time, for one function. */
#include <stdint.h>
#include <string.h>

#include "md_block.h"
#include "script.h"

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

/* One 64-byte block into the state h[5] (FIPS 180-4, 6.1.2). */
static void compress(uint32_t *h, const unsigned char *block)
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++) w[t] = md_load_be32(block + 4 * t);
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
    md_digest(h, 5, compress, data, len, out);
}
