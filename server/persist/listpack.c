/* listpack.c - Redis 7.0's listpack format, written (the encodings lpAppend
 * chooses) and read back with every entry checked, plus persist_buf. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "num.h"
#include "persist.h"

void persist_buf_reserve(persist_buf *b, size_t n)
{
    if (n > SIZE_MAX - b->len) mem_oom(0);
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
    b->p = mem_realloc(b->p, cap);
    b->cap = cap;
}

void persist_buf_free(persist_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

enum {
    LP_HDR = 6,            /* total bytes (u32 LE), element count (u16 LE) */
    LP_EOF = 0xFF,
    LP_COUNT_UNKNOWN = 65535,
};

/* An entry's encoding bytes (before the data) for s: an integer's whole
 * entry, or a string's length prefix. Returns the prefix length. */
static size_t lp_encode_head(const char *s, size_t len, unsigned char h[9], int *is_int)
{
    long long v;
    *is_int = len <= 20 && store_str2ll(s, len, &v);
    if (*is_int) {
        if (v >= 0 && v <= 127) {
            h[0] = (unsigned char)v;
            return 1;
        }
        if (v >= -4096 && v <= 4095) {
            unsigned long long u = v < 0 ? (unsigned long long)((1 << 13) + v) : (unsigned long long)v;
            h[0] = (unsigned char)((u >> 8) | 0xC0);
            h[1] = (unsigned char)(u & 0xff);
            return 2;
        }
        unsigned long long u = (unsigned long long)v;
        size_t n;
        if (v >= -32768 && v <= 32767) {
            h[0] = 0xF1, n = 2;
        } else if (v >= -8388608 && v <= 8388607) {
            h[0] = 0xF2, n = 3;
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            h[0] = 0xF3, n = 4;
        } else {
            h[0] = 0xF4, n = 8;
        }
        for (size_t i = 0; i < n; i++) h[1 + i] = (unsigned char)(u >> (8 * i));
        return 1 + n;
    }
    if (len < 64) {
        h[0] = (unsigned char)(0x80 | len);
        return 1;
    }
    if (len < 4096) {
        h[0] = (unsigned char)(0xE0 | (len >> 8));
        h[1] = (unsigned char)(len & 0xff);
        return 2;
    }
    h[0] = 0xF0;
    for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)((uint64_t)len >> (8 * i));
    return 5;
}

/* lpEncodeBacklen: l in 7-bit groups, most significant first; every byte
 * but the first has the high bit set (it is read from the end). */
static size_t lp_backlen(size_t l, unsigned char b[5])
{
    size_t n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    for (size_t i = 0; i < n; i++) {
        b[i] = (unsigned char)((l >> (7 * (n - 1 - i))) & 127);
        if (i > 0) b[i] |= 128;
    }
    return n;
}

/* One entry at p (room for it checked by the caller); past it. */
static unsigned char *lp_put_entry(unsigned char *p, const char *s, size_t len)
{
    unsigned char h[9];
    int is_int;
    size_t hl = lp_encode_head(s, len, h, &is_int);
    memcpy(p, h, hl);
    if (!is_int) memcpy(p + hl, s, len);
    size_t body = hl + (is_int ? 0 : len);
    return p + body + lp_backlen(body, p + body);
}

void persist_lp_begin(persist_lp_writer *w, persist_buf *b)
{
    static const unsigned char hdr[LP_HDR] = {0};
    w->b = b;
    w->start = b->len;
    w->count = 0;
    persist_buf_put(b, hdr, LP_HDR);
}

void persist_lp_append(persist_lp_writer *w, const char *s, size_t len)
{
    persist_buf_reserve(w->b, 9 + len + 5);   /* head, bytes, backlen */
    unsigned char *end = lp_put_entry(w->b->p + w->b->len, s, len);
    w->b->len = (size_t)(end - w->b->p);
    w->count++;
}

/* The header of a finished listpack: total bytes, then the entry count
 * (LP_COUNT_UNKNOWN from there up, as Redis keeps it). */
static void lp_put_header(unsigned char hdr[LP_HDR], size_t total, size_t count)
{
    if (count > LP_COUNT_UNKNOWN) count = LP_COUNT_UNKNOWN;
    for (int i = 0; i < 4; i++) hdr[i] = (unsigned char)((uint64_t)total >> (8 * i));
    hdr[4] = (unsigned char)(count & 0xff);
    hdr[5] = (unsigned char)(count >> 8);
}

void persist_lp_end(persist_lp_writer *w)
{
    unsigned char eof = LP_EOF;
    persist_buf_put(w->b, &eof, 1);
    lp_put_header(w->b->p + w->start, w->b->len - w->start, w->count);
}

size_t persist_lp_pair(unsigned char out[PERSIST_LP_PAIR_ROOM], const char *a, size_t alen, const char *b,
                       size_t blen)
{
    unsigned char *p = lp_put_entry(out + LP_HDR, a, alen);
    p = lp_put_entry(p, b, blen);
    *p++ = LP_EOF;
    size_t total = (size_t)(p - out);
    lp_put_header(out, total, 2);
    return total;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The entry at p (avail bytes before the terminator): its encoding +
 * data size and decoded element; 0 when invalid or out of bounds. */
static size_t lp_entry(const unsigned char *p, size_t avail, persist_elem *e)
{
    unsigned b = p[0];
    size_t hl, dl = 0;
    e->s = NULL;
    e->len = 0;
    if (!(b & 0x80)) {
        e->v = b;
        return 1;
    }
    if ((b & 0xC0) == 0x80) {
        hl = 1, dl = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
        if (avail < 2) return 0;
        unsigned u = ((b & 0x1F) << 8) | p[1];
        e->v = u >= (1 << 12) ? (long long)u - (1 << 13) : (long long)u;
        return 2;
    } else if ((b & 0xF0) == 0xE0) {
        if (avail < 2) return 0;
        hl = 2, dl = ((size_t)(b & 0x0F) << 8) | p[1];
    } else if (b == 0xF0) {
        if (avail < 5) return 0;
        hl = 5, dl = (size_t)le(p + 1, 4);
    } else if (b >= 0xF1 && b <= 0xF4) {
        static const int bytes[] = {2, 3, 4, 8};
        int n = bytes[b - 0xF1];
        if (avail < (size_t)n + 1) return 0;
        uint64_t u = le(p + 1, n);
        if (n < 8 && (u >> (8 * n - 1))) u |= ~UINT64_C(0) << (8 * n);   /* sign-extend */
        e->v = (long long)u;
        return (size_t)n + 1;
    } else {
        return 0;   /* 0xF5..0xFE are no encoding; 0xFF is the end, not an entry */
    }
    if (dl > avail - hl) return 0;
    e->s = p + hl;
    e->len = dl;
    return hl + dl;
}

int persist_lp_validate(const unsigned char *lp, size_t len, size_t *count)
{
    if (len < LP_HDR + 1 || le(lp, 4) != len || lp[len - 1] != LP_EOF) return PERSIST_ERR_FORMAT;
    size_t pos = LP_HDR, n = 0, end = len - 1;
    while (pos < end) {
        persist_elem e;
        size_t enc = lp_entry(lp + pos, end - pos, &e);
        if (enc == 0) return PERSIST_ERR_FORMAT;
        unsigned char want[5];
        size_t bl = lp_backlen(enc, want);
        if (bl > end - pos - enc || memcmp(lp + pos + enc, want, bl) != 0) return PERSIST_ERR_FORMAT;
        pos += enc + bl;
        n++;
    }
    size_t hdr_count = (size_t)le(lp + 4, 2);
    if (hdr_count != LP_COUNT_UNKNOWN && hdr_count != n) return PERSIST_ERR_FORMAT;
    *count = n;
    return PERSIST_OK;
}

int persist_lp_next(const unsigned char *lp, size_t *pos, persist_elem *e)
{
    if (*pos == 0) *pos = LP_HDR;
    if (lp[*pos] == LP_EOF) return 0;
    /* validated: the entry fits, so no bound is needed beyond the terminator */
    size_t enc = lp_entry(lp + *pos, SIZE_MAX / 2, e);
    unsigned char bl[5];
    *pos += enc + lp_backlen(enc, bl);
    return 1;
}
