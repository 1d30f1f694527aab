/* hash_one.c - a hash of one small field kept in the key entry's value
 * area ([u8 tag][field][value], the value's length in the key's slen): a
 * held lock costs one allocation. A field that starts with a lowercase UUID
 * in its canonical text (Redisson's "<uuid>:<thread>") keeps those 36
 * characters as their 16 bytes, which puts a lock in a smaller pool class. */
#include "store_internal.h"

#include <assert.h>
#include <string.h>

enum {
    HDR = 1,
    PACKED = 0x80,        /* tag bit: a packed UUID, then the field's rest;
                             the low bits are the rest's length */
    UUID_TEXT = 36,
    UUID_BYTES = 16,
};

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

/* Bytes the stored field takes after the tag. */
static size_t stored_field(const unsigned char *a)
{
    if (a[0] & PACKED) return UUID_BYTES + (a[0] & ~PACKED);
    return a[0];
}

int hone_fits_size(size_t flen, size_t vlen)
{
    return flen <= STORE_HASH_SMALL_VALUE && vlen <= STORE_HASH_SMALL_VALUE;
}

size_t hone_area(const char *f, size_t flen, size_t vlen)
{
    return HDR + (uuid_prefix(f, flen) ? flen - UUID_TEXT + UUID_BYTES : flen) + vlen;
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
    if (uuid_prefix(f, flen)) {
        img[0] = (unsigned char)(PACKED | (flen - UUID_TEXT));
        uuid_pack(f, p);
        p += UUID_BYTES;
        f += UUID_TEXT;
        flen -= UUID_TEXT;
    } else {
        img[0] = (unsigned char)flen;
    }
    if (flen) memcpy(p, f, flen);
    if (vlen) memcpy(p + flen, v, vlen);
    memcpy(area(k), img, (size_t)(p - img) + flen + vlen);
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
    size_t rest = a[0] & ~PACKED;
    *v = hone_value(k, vlen);
    if (!(a[0] & PACKED)) {
        *f = (const char *)a + HDR;
        *flen = a[0];
        return;
    }
    uuid_unpack(a + HDR, buf);
    if (rest) memcpy(buf + UUID_TEXT, a + HDR + UUID_BYTES, rest);
    *f = buf;
    *flen = UUID_TEXT + rest;
}

int hone_is(const store_key *k, const char *f, size_t flen)
{
    const unsigned char *a = area(k);
    size_t rest = a[0] & ~PACKED;
    char text[UUID_TEXT];
    if (!(a[0] & PACKED)) return a[0] == flen && (flen == 0 || memcmp(a + HDR, f, flen) == 0);
    if (flen != UUID_TEXT + rest) return 0;
    if (rest && memcmp(a + HDR + UUID_BYTES, f + UUID_TEXT, rest) != 0) return 0;
    uuid_unpack(a + HDR, text);
    return memcmp(text, f, UUID_TEXT) == 0;
}
