/* siphash.c - SipHash-1-3 for the dicts, keyed by a seed set once per
 * process (latchd.h says why that is safe) so clients cannot aim keys. */
#include "dict.h"

#include <string.h>

/* Fixed default so tests and single runs are deterministic; the server
 * replaces it with random bytes at start-up. */
static uint8_t sip_key[16] = {
    'l', 'a', 't', 'c', 'h', 'd', '-', 's', 'i', 'p', 'h', 'a', 's', 'h', '-', 'k',
};

void store_dict_set_seed(const uint8_t seed[16])
{
    memcpy(sip_key, seed, sizeof(sip_key));
}

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

/* Little-endian load regardless of host order or alignment. */
static inline uint64_t load64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

#define SIPROUND                                                        \
    do {                                                                \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);       \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                          \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                          \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);       \
    } while (0)

/* Generic in the round counts so a self-test can check the published
 * SipHash-2-4 vectors; the dicts use 1-3 (as Redis does) for speed. */
static inline uint64_t siphash(const uint8_t *in, size_t len, const uint8_t k[16],
                               int crounds, int drounds)
{
    uint64_t k0 = load64(k), k1 = load64(k + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    const uint8_t *end = in + (len & ~(size_t)7);
    uint64_t b = (uint64_t)len << 56;

    for (; in != end; in += 8) {
        uint64_t m = load64(in);
        v3 ^= m;
        for (int i = 0; i < crounds; i++) SIPROUND;
        v0 ^= m;
    }
    for (size_t i = 0; i < (len & 7); i++) b |= (uint64_t)in[i] << (8 * i);
    v3 ^= b;
    for (int i = 0; i < crounds; i++) SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < drounds; i++) SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t store_dict_hash(const char *key, size_t len)
{
    return siphash((const uint8_t *)key, len, sip_key, 1, 3);
}

uint64_t store_siphash24(const void *in, size_t len, const uint8_t k[16])
{
    return siphash(in, len, k, 2, 4);
}
