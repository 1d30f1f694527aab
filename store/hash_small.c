/* hash_small.c - the small hash: one packed buffer scanned linearly, like
 * Redis's listpack, so a one-field lock hash costs a single allocation. */
#include "store_internal.h"

#include <string.h>

#define ENTRY_HDR 8   /* u32 field length, u32 value length */

/* Entries are not aligned: read and write the lengths bytewise. */
static uint32_t rd32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static void wr32(char *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }

static size_t entry_len(const char *e)
{
    return ENTRY_HDR + (size_t)rd32(e) + rd32(e + 4);
}

/* Offset of field f's entry, or h->bytes when it is absent. */
static size_t find(const store_hsmall *h, const char *f, size_t flen)
{
    size_t off = 0;
    for (uint32_t i = 0; i < h->count; i++) {
        const char *e = h->buf + off;
        if (rd32(e) == flen && (flen == 0 || memcmp(e + ENTRY_HDR, f, flen) == 0)) return off;
        off += entry_len(e);
    }
    return h->bytes;
}

const char *hsmall_get(const store_hsmall *h, const char *f, size_t flen, size_t *vlen)
{
    size_t off = find(h, f, flen);
    if (off == h->bytes) return NULL;
    const char *e = h->buf + off;
    if (vlen) *vlen = rd32(e + 4);
    return e + ENTRY_HDR + rd32(e);
}

static void append(store *s, store_hsmall *h, const char *f, size_t flen,
                   const char *v, size_t vlen)
{
    size_t need = h->bytes + ENTRY_HDR + flen + vlen;
    h->buf = store_mem_realloc(&s->used_memory, h->buf, need);
    char *e = h->buf + h->bytes;
    wr32(e, (uint32_t)flen);
    wr32(e + 4, (uint32_t)vlen);
    if (flen) memcpy(e + ENTRY_HDR, f, flen);
    if (vlen) memcpy(e + ENTRY_HDR + flen, v, vlen);
    h->bytes = (uint32_t)need;
    h->count++;
}

/* Resize the value at off in place, shifting the later entries, so the
 * field keeps its position (HGETALL order is insertion order). */
static void replace_value(store *s, store_hsmall *h, size_t off, const char *v, size_t vlen)
{
    size_t old = rd32(h->buf + off + 4);
    size_t voff = off + ENTRY_HDR + rd32(h->buf + off);
    size_t tail = voff + old, tail_len = h->bytes - tail;
    size_t nbytes = h->bytes - old + vlen;

    if (vlen > old) h->buf = store_mem_realloc(&s->used_memory, h->buf, nbytes);
    if (vlen != old) memmove(h->buf + voff + vlen, h->buf + tail, tail_len);
    if (vlen < old) h->buf = store_mem_realloc(&s->used_memory, h->buf, nbytes);
    if (vlen) memmove(h->buf + voff, v, vlen);
    wr32(h->buf + off + 4, (uint32_t)vlen);
    h->bytes = (uint32_t)nbytes;
}

int hsmall_set(store *s, store_hsmall *h, const char *f, size_t flen,
               const char *v, size_t vlen)
{
    size_t off = find(h, f, flen);
    if (off == h->bytes) {
        append(s, h, f, flen, v, vlen);
        return 1;
    }
    replace_value(s, h, off, v, vlen);
    return 0;
}

int hsmall_del(store *s, store_hsmall *h, const char *f, size_t flen)
{
    size_t off = find(h, f, flen);
    if (off == h->bytes) return 0;
    size_t elen = entry_len(h->buf + off);
    memmove(h->buf + off, h->buf + off + elen, h->bytes - off - elen);
    h->bytes -= (uint32_t)elen;
    h->count--;
    if (h->bytes == 0) {
        store_mem_free(&s->used_memory, h->buf);
        h->buf = NULL;
    } else {
        h->buf = store_mem_realloc(&s->used_memory, h->buf, h->bytes);
    }
    return 1;
}

void hsmall_foreach(const store_hsmall *h, store_field_fn fn, void *ctx)
{
    size_t off = 0;
    for (uint32_t i = 0; i < h->count; i++) {
        const char *e = h->buf + off;
        uint32_t flen = rd32(e);
        fn(e + ENTRY_HDR, flen, e + ENTRY_HDR + flen, rd32(e + 4), ctx);
        off += entry_len(e);
    }
}

void hsmall_free(store *s, store_hsmall *h)
{
    store_mem_free(&s->used_memory, h->buf);
    h->buf = NULL;
    h->count = 0;
    h->bytes = 0;
}
