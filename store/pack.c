/* pack.c - packed entries ([varint length][bytes] back to back in one
 * buffer), the element storage of small lists, list chunks and small zsets. */
#include "store_internal.h"

#include <string.h>

/* LEB128: 7 bits a byte, low first, the top bit set on all but the last.
 * An element up to 127 bytes pays one byte of overhead. */
size_t pack_varint_len(size_t v)
{
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t pack_varint_put(char *p, size_t v)
{
    size_t n = 0;
    while (v >= 128) {
        p[n++] = (char)((v & 127) | 128);
        v >>= 7;
    }
    p[n++] = (char)v;
    return n;
}

size_t pack_varint_get(const char *p, size_t *v)
{
    size_t n = 0, r = 0;
    unsigned shift = 0;
    unsigned char b;
    do {
        b = (unsigned char)p[n++];
        r |= (size_t)(b & 127) << shift;
        shift += 7;
    } while (b & 128);
    *v = r;
    return n;
}

size_t pack_next(const store_packed *p, size_t off, const char **data, size_t *len)
{
    size_t hdr = pack_varint_get(p->buf + off, len);
    *data = p->buf + off + hdr;
    return off + hdr + *len;
}

size_t pack_offset(const store_packed *p, size_t idx)
{
    size_t off = 0, len;
    const char *data;
    if (idx >= p->count) return p->bytes;
    while (idx--) off = pack_next(p, off, &data, &len);
    return off;
}

void pack_offsets(const store_packed *p, uint32_t *offs)
{
    size_t off = 0, len;
    const char *data;
    for (uint32_t i = 0; i < p->count; i++) {
        offs[i] = (uint32_t)off;
        off = pack_next(p, off, &data, &len);
    }
}

int pack_entry_is(const char *data, size_t len, const char *v, size_t vlen)
{
    return len == vlen && (len == 0 || memcmp(data, v, len) == 0);
}

/* Lengths are 32-bit to keep a packed run 16 bytes (it lives in the key
 * entry); a single run past 4 GiB is not something a lock server holds. */
static uint32_t checked_bytes(size_t n)
{
    if (n > UINT32_MAX) mem_oom(n);
    return (uint32_t)n;
}

void pack_insert(store *s, store_packed *p, size_t off, const pack_item *items, int n)
{
    size_t add = 0;
    for (int i = 0; i < n; i++) add += pack_varint_len(items[i].len) + items[i].len;
    uint32_t nbytes = checked_bytes(p->bytes + add);
    p->buf = store_mem_realloc(&s->used_memory, p->buf, nbytes);
    memmove(p->buf + off + add, p->buf + off, p->bytes - off);
    char *w = p->buf + off;
    for (int i = 0; i < n; i++) {
        w += pack_varint_put(w, items[i].len);
        if (items[i].len) memcpy(w, items[i].ptr, items[i].len);
        w += items[i].len;
    }
    p->bytes = nbytes;
    p->count += (uint32_t)n;
}

/* Shrink to exactly nbytes; an empty run holds no buffer at all. */
static void fit(store *s, store_packed *p, uint32_t nbytes)
{
    p->bytes = nbytes;
    if (nbytes == 0) {
        store_mem_free(&s->used_memory, p->buf);
        p->buf = NULL;
    } else {
        p->buf = store_mem_realloc(&s->used_memory, p->buf, nbytes);
    }
}

void pack_delete(store *s, store_packed *p, size_t off, size_t n)
{
    size_t end = off, len;
    const char *data;
    for (size_t i = 0; i < n; i++) end = pack_next(p, end, &data, &len);
    memmove(p->buf + off, p->buf + end, p->bytes - end);
    p->count -= (uint32_t)n;
    fit(s, p, (uint32_t)(p->bytes - (end - off)));
}

void pack_split(store *s, store_packed *p, size_t idx, store_packed *dst)
{
    size_t off = pack_offset(p, idx);
    dst->bytes = (uint32_t)(p->bytes - off);
    dst->count = p->count - (uint32_t)idx;
    dst->buf = dst->bytes ? store_mem_alloc(&s->used_memory, dst->bytes) : NULL;
    if (dst->bytes) memcpy(dst->buf, p->buf + off, dst->bytes);
    p->count = (uint32_t)idx;
    fit(s, p, (uint32_t)off);
}

void pack_dup(store *s, const store_packed *src, store_packed *dst)
{
    *dst = *src;
    if (!src->bytes) return;
    dst->buf = store_mem_alloc(&s->used_memory, src->bytes);
    memcpy(dst->buf, src->buf, src->bytes);
}

void pack_free(store *s, store_packed *p)
{
    store_mem_free(&s->used_memory, p->buf);
    p->buf = NULL;
    p->count = 0;
    p->bytes = 0;
}
