/* hash_one.c - a hash of one small field kept in the key entry's value
 * area ([u8 tag][field][value], the value's length in the key's slen): a
 * held lock costs one allocation. A field that starts with a lowercase UUID
 * in its canonical text (Redisson's "<uuid>:<thread>") keeps those 36
 * characters as their 16 bytes, and a ":<thread id>" after them as a
 * varint, which puts a lock in a smaller pool class whatever its thread. */
#include "store_internal.h"

#include <assert.h>
#include <string.h>

enum {
    HDR = 1,
    PACKED = 0x80,        /* tag bit: a packed UUID, then the field's rest;
                             the low bits are the rest's stored length */
    THREAD = 0x40,        /* with PACKED: the rest is ":<decimal>", stored
                             as the number's LEB128 varint */
    REST_MASK = 0x3f,     /* a rest is at most 64 - 36 bytes */
    UUID_TEXT = 36,
    UUID_BYTES = 16,
    THREAD_DIGITS = 19,   /* any 19-digit number fits a uint64_t */
};
_Static_assert(STORE_HASH_SMALL_VALUE - UUID_TEXT <= REST_MASK, "a packed field's rest no longer fits the tag");

static unsigned char *area(const store_key *k) { return (unsigned char *)STORE_KV(k); }

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;   /* upper case too: it would not come back the same */
}

static int uuid_dash_at(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

/* 1 if f starts with xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in lowercase hex:
 * exactly the text uuid_unpack writes, so a packed field reads back as it
 * was written. */
static int uuid_prefix(const char *f, size_t flen)
{
    if (flen < UUID_TEXT) return 0;
    for (size_t i = 0; i < UUID_TEXT; i++)
        if (uuid_dash_at(i) ? f[i] != '-' : hex_value(f[i]) < 0) return 0;
    return 1;
}

static void uuid_pack(const char *text, unsigned char *out)
{
    size_t nibble = 0;
    for (size_t i = 0; i < UUID_TEXT; i++) {
        if (uuid_dash_at(i)) continue;
        unsigned char h = (unsigned char)hex_value(text[i]);
        if (nibble % 2 == 0) out[nibble / 2] = (unsigned char)(h << 4);
        else out[nibble / 2] |= h;
        nibble++;
    }
}

static void uuid_unpack(const unsigned char *in, char *text)
{
    static const char digits[] = "0123456789abcdef";
    size_t nibble = 0;
    for (size_t i = 0; i < UUID_TEXT; i++) {
        if (uuid_dash_at(i)) {
            text[i] = '-';
            continue;
        }
        unsigned char b = in[nibble / 2];
        text[i] = digits[nibble % 2 ? b & 15 : b >> 4];
        nibble++;
    }
}

/* 1 with *n if r is ':' and a decimal without leading zeros: the text
 * thread_format writes back, byte for byte. */
static int thread_suffix(const char *r, size_t rlen, uint64_t *n)
{
    if (rlen < 2 || rlen > 1 + THREAD_DIGITS || r[0] != ':' || (r[1] == '0' && rlen > 2)) return 0;
    uint64_t v = 0;
    for (size_t i = 1; i < rlen; i++) {
        if (r[i] < '0' || r[i] > '9') return 0;
        v = v * 10 + (uint64_t)(r[i] - '0');
    }
    *n = v;
    return 1;
}

static size_t varint_put(uint64_t n, unsigned char *out)
{
    size_t i = 0;
    do {
        unsigned char b = n & 0x7f;
        n >>= 7;
        if (out) out[i] = (unsigned char)(b | (n ? 0x80 : 0));
        i++;
    } while (n);
    return i;
}

static uint64_t varint_get(const unsigned char *in)
{
    uint64_t n = 0;
    for (unsigned shift = 0;; shift += 7, in++) {
        n |= (uint64_t)(*in & 0x7f) << shift;
        if (!(*in & 0x80)) return n;
    }
}

/* ":<n>" into out (room for 1 + THREAD_DIGITS); its length. */
static size_t thread_format(const unsigned char *varint, char *out)
{
    char digits[THREAD_DIGITS + 1];
    uint64_t n = varint_get(varint);
    size_t d = 0;
    do {
        digits[d++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    out[0] = ':';
    for (size_t i = 0; i < d; i++) out[1 + i] = digits[d - 1 - i];
    return 1 + d;
}

/* The tag of a field with a UUID prefix and rest r, and the bytes the rest
 * takes stored (written to out unless NULL). */
static unsigned rest_pack(const char *r, size_t rlen, unsigned char *out, size_t *stored)
{
    uint64_t n;
    if (thread_suffix(r, rlen, &n)) {
        *stored = varint_put(n, out);
        return PACKED | THREAD | (unsigned)*stored;
    }
    if (out && rlen) memcpy(out, r, rlen);
    *stored = rlen;
    return PACKED | (unsigned)rlen;
}

/* Bytes the stored field takes after the tag. */
static size_t stored_field(const unsigned char *a)
{
    if (a[0] & PACKED) return UUID_BYTES + (a[0] & REST_MASK);
    return a[0];
}

int hone_fits_size(size_t flen, size_t vlen)
{
    return flen <= STORE_HASH_SMALL_VALUE && vlen <= STORE_HASH_SMALL_VALUE;
}

size_t hone_area(const char *f, size_t flen, size_t vlen)
{
    size_t rest = flen;
    if (uuid_prefix(f, flen)) {
        rest_pack(f + UUID_TEXT, flen - UUID_TEXT, NULL, &rest);
        rest += UUID_BYTES;
    }
    return HDR + rest + vlen;
}

int hone_fits(const store_key *k, const char *f, size_t flen, size_t vlen)
{
    return hone_fits_size(flen, vlen) && hone_area(f, flen, vlen) <= store_value_room(k);
}

size_t hone_used(const store_key *k)
{
    return HDR + stored_field(area(k)) + k->slen;
}

void hone_put(store_key *k, const char *f, size_t flen, const char *v, size_t vlen)
{
    /* Built aside: f or v may be the ones read from this area. */
    unsigned char img[HDR + 2 * STORE_HASH_SMALL_VALUE], *p = img + HDR;
    assert(hone_fits_size(flen, vlen));
    size_t stored = flen;
    if (uuid_prefix(f, flen)) {
        uuid_pack(f, p);
        p += UUID_BYTES;
        img[0] = (unsigned char)rest_pack(f + UUID_TEXT, flen - UUID_TEXT, p, &stored);
    } else {
        img[0] = (unsigned char)flen;
        if (flen) memcpy(p, f, flen);
    }
    if (vlen) memcpy(p + stored, v, vlen);
    memcpy(area(k), img, (size_t)(p - img) + stored + vlen);
    k->slen = (uint8_t)vlen;
    k->enc = STORE_ENC_HASH_ONE;
}

const char *hone_value(const store_key *k, size_t *vlen)
{
    const unsigned char *a = area(k);
    *vlen = k->slen;
    return (const char *)a + HDR + stored_field(a);
}

void hone_read(const store_key *k, hone_buf buf, const char **f, size_t *flen,
               const char **v, size_t *vlen)
{
    const unsigned char *a = area(k);
    size_t rest = a[0] & REST_MASK;
    *v = hone_value(k, vlen);
    if (!(a[0] & PACKED)) {
        *f = (const char *)a + HDR;
        *flen = a[0];
        return;
    }
    uuid_unpack(a + HDR, buf);
    if (a[0] & THREAD) rest = thread_format(a + HDR + UUID_BYTES, buf + UUID_TEXT);
    else if (rest) memcpy(buf + UUID_TEXT, a + HDR + UUID_BYTES, rest);
    *f = buf;
    *flen = UUID_TEXT + rest;
}

int hone_is(const store_key *k, const char *f, size_t flen)
{
    const unsigned char *a = area(k);
    size_t rest = a[0] & REST_MASK;
    char text[UUID_TEXT];
    uint64_t n;
    if (!(a[0] & PACKED)) return a[0] == flen && (flen == 0 || memcmp(a + HDR, f, flen) == 0);
    if (flen < UUID_TEXT) return 0;
    if (a[0] & THREAD) {
        if (!thread_suffix(f + UUID_TEXT, flen - UUID_TEXT, &n) || n != varint_get(a + HDR + UUID_BYTES)) return 0;
    } else {
        if (flen != UUID_TEXT + rest) return 0;
        if (rest && memcmp(a + HDR + UUID_BYTES, f + UUID_TEXT, rest) != 0) return 0;
    }
    uuid_unpack(a + HDR, text);
    return memcmp(text, f, UUID_TEXT) == 0;
}
