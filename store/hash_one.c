/* hash_one.c - a hash of one small field kept in the key entry's value
 * area ([u8 flen][field][value], the value's length in the key's slen):
 * a held lock costs one allocation. */
#include "store_internal.h"

#include <string.h>

enum { HDR = 1 };

static unsigned char *area(const store_key *k) { return (unsigned char *)STORE_KV(k); }

int hone_fits_size(size_t flen, size_t vlen)
{
    return flen <= STORE_HASH_SMALL_VALUE && vlen <= STORE_HASH_SMALL_VALUE;
}

int hone_fits(const store_key *k, size_t flen, size_t vlen)
{
    return hone_fits_size(flen, vlen) && HDR + flen + vlen <= store_value_room(k);
}

void hone_put(store_key *k, const char *f, size_t flen, const char *v, size_t vlen)
{
    unsigned char *a = area(k);
    /* memmove: an update may pass the field (or value) read from here */
    if (flen) memmove(a + HDR, f, flen);
    if (vlen) memmove(a + HDR + flen, v, vlen);
    a[0] = (unsigned char)flen;
    k->slen = (uint8_t)vlen;
    k->enc = STORE_ENC_HASH_ONE;
}

void hone_read(const store_key *k, const char **f, size_t *flen, const char **v, size_t *vlen)
{
    const unsigned char *a = area(k);
    *flen = a[0];
    *vlen = k->slen;
    *f = (const char *)a + HDR;
    *v = (const char *)a + HDR + a[0];
}

int hone_is(const store_key *k, const char *f, size_t flen)
{
    const unsigned char *a = area(k);
    return a[0] == flen && (flen == 0 || memcmp(a + HDR, f, flen) == 0);
}
