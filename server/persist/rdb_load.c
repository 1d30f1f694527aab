/* rdb_load.c - decoding one RDB value (every string, hash, list, set and zset
 * encoding Redis 7.0's rdbLoadObject reads, ziplist and zipmap included)
 * into a checked persist_value, then into a store. Input is untrusted. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "mem.h"
#include "num.h"
#include "persist.h"
#include "set.h"
#include "stream.h"
#include "zset.h"

typedef persist_pstr pstr;

/* Bytes decoded out of the payload (integers as text, LZF output): small
 * ones bump-allocated in blocks, large ones in blocks of their own. */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
} arena_block;

struct persist_value {
    store_type type;
    pstr *items;       /* string: 1; list: elements; hash: field, value, ...; zset: members */
    size_t n, cap;
    double *scores;    /* zset: one per member */
    const unsigned char *intset;   /* set: an intset's members (n of them), or NULL */
    unsigned width;                /* their width: 2, 4 or 8 bytes */
    size_t nscores, scap;
    arena_block *arena;
    const unsigned char *sbody;   /* stream: its checked body (after the type byte), read again when stored */
    size_t slen;
    unsigned stype;
    size_t deep_checks;   /* listpacks and intsets validated entry by entry (INFO dump_payload_sanitizations) */
};

typedef struct reader {
    const unsigned char *p;
    size_t len, pos;
    persist_value *v;
} reader;

enum {
    RDB_ENC_INT8 = 0,
    RDB_ENC_INT16 = 1,
    RDB_ENC_INT32 = 2,
    RDB_ENC_LZF = 3,
    ARENA_BLOCK = 4096,
    ZL_HDR = 10,        /* ziplist: zlbytes u32, zltail u32, zllen u16 */
    ZL_END = 0xFF,
};

#define FAIL PERSIST_ERR_FORMAT

static char *arena_alloc(persist_value *v, size_t n)
{
    arena_block *b = v->arena;
    if (n > ARENA_BLOCK / 4 || !b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        arena_block *nb = mem_alloc(sizeof *nb + cap);
        nb->used = 0;
        nb->cap = cap;
        if (n > ARENA_BLOCK / 4 && b) {   /* keep the small-allocation block in front */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            v->arena = nb;
        }
        b = nb;
    }
    char *p = b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(persist_value *v)
{
    while (v->arena) {
        arena_block *next = v->arena->next;
        free(v->arena);
        v->arena = next;
    }
}

static void push_item(persist_value *v, const char *p, size_t len)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = mem_realloc(v->items, v->cap * sizeof *v->items);
    }
    v->items[v->n++] = (pstr){len ? p : "", len};
}

static void push_score(persist_value *v, double d)
{
    if (v->nscores == v->scap) {
        v->scap = v->scap ? v->scap * 2 : 8;
        v->scores = mem_realloc(v->scores, v->scap * sizeof *v->scores);
    }
    v->scores[v->nscores++] = d;
}

static pstr int_text(persist_value *v, long long x)
{
    char *p = arena_alloc(v, 21);
    return (pstr){p, store_ll2str(p, x)};
}

/* ---- the RDB primitives ---- */

static int rd_bytes(reader *r, size_t n, const unsigned char **out)
{
    if (n > r->len - r->pos) return FAIL;
    *out = r->p + r->pos;
    r->pos += n;
    return PERSIST_OK;
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x = x << 8 | p[i];
    return x;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--) x = x << 8 | p[i];
    return x;
}

/* rdbLoadLen: *enc set when the byte is a string encoding (its low 6
 * bits returned). Counts ignore enc, as Redis's callers do. */
static int rd_len(reader *r, uint64_t *len, int *enc)
{
    const unsigned char *b, *x;
    if (rd_bytes(r, 1, &b)) return FAIL;
    *enc = 0;
    switch (b[0] >> 6) {
    case 0: *len = b[0] & 0x3F; return PERSIST_OK;
    case 1:
        if (rd_bytes(r, 1, &x)) return FAIL;
        *len = (uint64_t)(b[0] & 0x3F) << 8 | x[0];
        return PERSIST_OK;
    case 3: *enc = 1; *len = b[0] & 0x3F; return PERSIST_OK;
    }
    if (b[0] == 0x80 || b[0] == 0x81) {
        int n = b[0] == 0x80 ? 4 : 8;
        if (rd_bytes(r, n, &x)) return FAIL;
        *len = be(x, n);
        return PERSIST_OK;
    }
    return FAIL;
}

static int rd_count(reader *r, uint64_t *n)
{
    int enc;
    return rd_len(r, n, &enc);
}

/* rdbGenericLoadStringObject: raw (pointing into the payload), an
 * integer encoding (as its decimal text), or LZF (decompressed). */
static int rd_string(reader *r, pstr *out)
{
    uint64_t len;
    int enc;
    const unsigned char *b;
    if (rd_len(r, &len, &enc)) return FAIL;
    if (!enc) {
        if (len > STORE_MAX_LEN || rd_bytes(r, (size_t)len, &b)) return FAIL;
        *out = (pstr){len ? (const char *)b : "", (size_t)len};
        return PERSIST_OK;
    }
    if (len <= RDB_ENC_INT32) {
        int n = 1 << len;
        if (rd_bytes(r, (size_t)n, &b)) return FAIL;
        uint64_t u = le(b, n);
        if (u >> (8 * n - 1)) u |= ~UINT64_C(0) << (8 * n);   /* sign-extend */
        *out = int_text(r->v, (long long)u);
        return PERSIST_OK;
    }
    if (len != RDB_ENC_LZF) return FAIL;
    uint64_t clen, plain;
    if (rd_count(r, &clen) || rd_count(r, &plain)) return FAIL;
    /* an LZF back reference is 2-3 bytes for at most 264: a longer claim
     * is a lie, refused before anything is allocated for it */
    if (plain > STORE_MAX_LEN || clen > r->len || plain > clen * 132) return FAIL;
    if (rd_bytes(r, (size_t)clen, &b)) return FAIL;
    if (plain == 0) {   /* lzf_decompress "makes" 0 bytes of anything: Redis takes it */
        *out = (pstr){"", 0};
        return PERSIST_OK;
    }
    char *dst = arena_alloc(r->v, (size_t)plain);
    if (persist_lzf_decompress(b, (size_t)clen, dst, (size_t)plain) != plain) return FAIL;
    *out = (pstr){dst, (size_t)plain};
    return PERSIST_OK;
}

/* ---- checks on a whole value ---- */

static int cmp_pstr(const void *a, const void *b)
{
    const pstr *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

/* Fields (every step-th item) distinct: a hash or zset cannot hold two. */
static int check_unique(const persist_value *v, size_t step)
{
    size_t n = v->n / step;
    if (n < 2) return PERSIST_OK;
    pstr *keys = mem_alloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = v->items[i * step];
    qsort(keys, n, sizeof *keys, cmp_pstr);
    int rc = PERSIST_OK;
    for (size_t i = 1; i < n && rc == PERSIST_OK; i++)
        if (cmp_pstr(&keys[i - 1], &keys[i]) == 0) rc = FAIL;
    free(keys);
    return rc;
}

/* zzlStrtod: a listpack's score text, at most 127 bytes of it, as strtod
 * reads it. NaN is refused: no sorted set can hold it. */
static int score_of(const pstr *s, double *d)
{
    char buf[128];
    size_t n = s->len < sizeof buf - 1 ? s->len : sizeof buf - 1;
    memcpy(buf, s->p, n);
    buf[n] = '\0';
    *d = strtod(buf, NULL);
    return isnan(*d) ? FAIL : PERSIST_OK;
}

/* ---- packed containers (listpack, ziplist, zipmap) into items ---- */

static void push_elem(persist_value *v, const persist_elem *e)
{
    if (e->s) {
        push_item(v, (const char *)e->s, e->len);
    } else {
        pstr t = int_text(v, e->v);
        push_item(v, t.p, t.len);
    }
}

static int load_listpack(persist_value *v, const pstr *blob)
{
    size_t count, pos = 0;
    const unsigned char *lp = (const unsigned char *)blob->p;
    v->deep_checks++;
    if (persist_lp_validate(lp, blob->len, &count)) return FAIL;
    persist_elem e;
    while (persist_lp_next(lp, &pos, &e)) push_elem(v, &e);
    return PERSIST_OK;
}

/* One ziplist entry at p (avail bytes before the end marker): its size,
 * or 0 when malformed. prevlen must be the previous entry's size. */
static size_t zl_entry(const unsigned char *p, size_t avail, size_t prevlen, persist_elem *e)
{
    size_t ph, hl, dl = 0;
    if (avail < 1) return 0;
    if (p[0] < 254) {
        ph = 1;
        if (p[0] != prevlen) return 0;
    } else {
        if (p[0] != 254 || avail < 5 || le(p + 1, 4) != prevlen) return 0;
        ph = 5;
    }
    if (avail - ph < 1) return 0;
    const unsigned char *q = p + ph;
    size_t left = avail - ph;
    unsigned b = q[0];
    e->s = NULL;
    if (b < 0xC0) {   /* strings: 00 6-bit, 01 14-bit, 10 32-bit length */
        switch (b >> 6) {
        case 0: hl = 1, dl = b & 0x3F; break;
        case 1:
            if (left < 2) return 0;
            hl = 2, dl = (size_t)(b & 0x3F) << 8 | q[1];
            break;
        default:
            if (left < 5) return 0;
            hl = 5, dl = (size_t)be(q + 1, 4);
        }
        if (dl > left - hl) return 0;
        e->s = q + hl;
        e->len = dl;
        return ph + hl + dl;
    }
    int n;
    switch (b) {
    case 0xC0: n = 2; break;
    case 0xD0: n = 4; break;
    case 0xE0: n = 8; break;
    case 0xF0: n = 3; break;
    case 0xFE: n = 1; break;
    default:
        if (b >= 0xF1 && b <= 0xFD) {   /* 4-bit immediate 0..12 */
            e->v = (b & 0x0F) - 1;
            return ph + 1;
        }
        return 0;
    }
    if (left < (size_t)n + 1) return 0;
    uint64_t u = le(q + 1, n);
    if (u >> (8 * n - 1)) u |= n < 8 ? ~UINT64_C(0) << (8 * n) : 0;
    e->v = (long long)u;
    return ph + 1 + (size_t)n;
}

static int load_ziplist(persist_value *v, const pstr *blob)
{
    const unsigned char *zl = (const unsigned char *)blob->p;
    size_t len = blob->len;
    if (len < ZL_HDR + 1 || le(zl, 4) != len || zl[len - 1] != ZL_END) return FAIL;
    size_t tail = (size_t)le(zl + 4, 4), count = (size_t)le(zl + 8, 2);
    size_t pos = ZL_HDR, prev = 0, last = ZL_HDR, n = 0;
    while (pos < len - 1) {
        persist_elem e;
        size_t sz = zl_entry(zl + pos, len - 1 - pos, prev, &e);
        if (sz == 0) return FAIL;
        push_elem(v, &e);
        last = pos;
        prev = sz;
        pos += sz;
        n++;
    }
    if (tail != last || (count != 65535 && count != n)) return FAIL;
    return PERSIST_OK;
}

/* zipmap lengths: one byte below 254, else 254 and 4 bytes (LE). */
static int zm_len(const unsigned char *zm, size_t end, size_t *pos, size_t *len)
{
    if (*pos >= end) return FAIL;
    if (zm[*pos] < 254) {
        *len = zm[(*pos)++];
        return PERSIST_OK;
    }
    if (zm[*pos] != 254 || end - *pos < 5) return FAIL;
    *len = (size_t)le(zm + *pos + 1, 4);
    *pos += 5;
    return PERSIST_OK;
}

static int load_zipmap(persist_value *v, const pstr *blob)
{
    const unsigned char *zm = (const unsigned char *)blob->p;
    size_t len = blob->len, end = len - 1, pos = 1, n = 0, flen, vlen;
    if (len < 2 || zm[end] != 0xFF) return FAIL;
    while (zm[pos] != 0xFF) {
        if (zm_len(zm, end, &pos, &flen) || flen > end - pos) return FAIL;
        push_item(v, (const char *)zm + pos, flen);
        pos += flen;
        if (zm_len(zm, end, &pos, &vlen) || pos >= end) return FAIL;
        size_t freeb = zm[pos++];
        if (vlen > end - pos || freeb > end - pos - vlen) return FAIL;
        push_item(v, (const char *)zm + pos, vlen);
        pos += vlen + freeb;
        n++;
        if (pos > end) return FAIL;
    }
    if (pos != end || (zm[0] < 254 && zm[0] != n)) return FAIL;
    return PERSIST_OK;
}

/* ---- the types ---- */

/* A zset held as member, score, ... items: split into members and scores. */
static int split_scores(persist_value *v)
{
    size_t m = 0;
    for (size_t i = 0; i < v->n; i += 2) {
        double d;
        if (score_of(&v->items[i + 1], &d)) return FAIL;
        push_score(v, d);
        v->items[m++] = v->items[i];
    }
    v->n = m;
    return PERSIST_OK;
}

/* rdbLoadDoubleValue (RDB_TYPE_ZSET): a length byte, 253 NaN, 254 +inf,
 * 255 -inf, else that many bytes of text as sscanf("%lg") reads them. */
static int rd_text_double(reader *r, double *d)
{
    const unsigned char *b, *t;
    if (rd_bytes(r, 1, &b)) return FAIL;
    switch (b[0]) {
    case 253: *d = NAN; return PERSIST_OK;
    case 254: *d = INFINITY; return PERSIST_OK;
    case 255: *d = -INFINITY; return PERSIST_OK;
    }
    char buf[256];
    if (rd_bytes(r, b[0], &t)) return FAIL;
    memcpy(buf, t, b[0]);
    buf[b[0]] = '\0';
    char *end;
    *d = strtod(buf, &end);
    return end == buf ? FAIL : PERSIST_OK;
}

static int load_zset(reader *r, int binary)
{
    uint64_t n;
    if (rd_count(r, &n) || n == 0) return FAIL;
    for (uint64_t i = 0; i < n; i++) {
        pstr m;
        double d;
        const unsigned char *b;
        if (rd_string(r, &m)) return FAIL;
        if (binary) {
            if (rd_bytes(r, 8, &b)) return FAIL;
            uint64_t u = le(b, 8);
            memcpy(&d, &u, 8);
        } else if (rd_text_double(r, &d)) {
            return FAIL;
        }
        if (isnan(d)) return FAIL;
        push_item(r->v, m.p, m.len);
        push_score(r->v, d);
    }
    return PERSIST_OK;
}

static int load_strings(reader *r, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        pstr s;
        if (rd_string(r, &s)) return FAIL;
        push_item(r->v, s.p, s.len);
    }
    return PERSIST_OK;
}

static int load_quicklist(reader *r, int v2)
{
    uint64_t nodes;
    if (rd_count(r, &nodes) || nodes == 0) return FAIL;
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = 2;
        pstr blob;
        if (v2 && (rd_count(r, &container) || (container != 1 && container != 2))) return FAIL;
        if (rd_string(r, &blob) || blob.len == 0) return FAIL;
        if (container == 1) {   /* plain: the element itself */
            push_item(r->v, blob.p, blob.len);
            continue;
        }
        /* an empty node is skipped, as Redis does; an empty list is not */
        if ((v2 ? load_listpack : load_ziplist)(r->v, &blob)) return FAIL;
    }
    return PERSIST_OK;
}

/* The types held in one packed blob (a listpack, ziplist or zipmap): a
 * list's elements, a hash's field/value pairs, a zset's member/score pairs. */
static const struct packed_type {
    unsigned char rdb;
    store_type type;
    int (*load)(persist_value *v, const pstr *blob);
} packed_types[] = {
    {PERSIST_TYPE_LIST_ZIPLIST, STORE_LIST, load_ziplist},
    {PERSIST_TYPE_HASH_ZIPMAP, STORE_HASH, load_zipmap},
    {PERSIST_TYPE_HASH_ZIPLIST, STORE_HASH, load_ziplist},
    {PERSIST_TYPE_HASH_LISTPACK, STORE_HASH, load_listpack},
    {PERSIST_TYPE_ZSET_ZIPLIST, STORE_ZSET, load_ziplist},
    {PERSIST_TYPE_ZSET_LISTPACK, STORE_ZSET, load_listpack},
};

static int load_packed(reader *r, const struct packed_type *pt)
{
    pstr blob;
    r->v->type = pt->type;
    if (rd_string(r, &blob) || pt->load(r->v, &blob)) return FAIL;
    if (pt->type == STORE_LIST) return PERSIST_OK;
    if (r->v->n % 2) return FAIL;
    return pt->type == STORE_ZSET ? split_scores(r->v) : PERSIST_OK;
}

/* intsetValidateIntegrity, deep: a known width, the length the header
 * says, and members strictly increasing (so distinct). */
static int load_intset(reader *r)
{
    pstr blob;
    if (rd_string(r, &blob)) return FAIL;
    r->v->deep_checks++;
    if (blob.len < 8) return FAIL;
    const unsigned char *b = (const unsigned char *)blob.p;
    uint64_t width = le(b, 4), count = le(b + 4, 4);
    if ((width != 2 && width != 4 && width != 8) || count == 0 || blob.len - 8 != count * width)
        return FAIL;
    long long prev = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t u = le(b + 8 + i * width, (int)width);
        long long x = width == 2 ? (int16_t)u : width == 4 ? (int32_t)u : (long long)u;
        if (i && x <= prev) return FAIL;
        prev = x;
    }
    r->v->type = STORE_SET;
    r->v->intset = b + 8;
    r->v->width = (unsigned)width;
    r->v->n = count;
    return PERSIST_OK;
}

/* ---- streams: RDB_TYPE_STREAM_LISTPACKS(_2) ----
 * Read twice: once to check everything (load_body), once into the store
 * (persist_value_store), the same code with st NULL the first time. */

static int rd_sid_raw(reader *r, store_sid *id)
{
    const unsigned char *b;
    if (rd_bytes(r, 16, &b)) return FAIL;
    id->ms = be(b, 8);
    id->seq = be(b + 8, 8);
    return PERSIST_OK;
}

static int rd_ms(reader *r, uint64_t *ms)
{
    const unsigned char *b;
    if (rd_bytes(r, 8, &b)) return FAIL;
    *ms = le(b, 8);
    return PERSIST_OK;
}

static int rd_sid(reader *r, store_sid *id)
{
    return rd_count(r, &id->ms) || rd_count(r, &id->seq) ? FAIL : PERSIST_OK;
}

/* A listpack entry as an integer (lpGetInteger), or FAIL. */
static int lp_int(const unsigned char *lp, size_t *pos, long long *x)
{
    persist_elem e;
    if (!persist_lp_next(lp, pos, &e)) return FAIL;
    if (!e.s) {
        *x = e.v;
        return PERSIST_OK;
    }
    return store_str2ll((const char *)e.s, e.len, x) ? PERSIST_OK : FAIL;
}

static int lp_str(persist_value *v, const unsigned char *lp, size_t *pos, pstr *out)
{
    persist_elem e;
    if (!persist_lp_next(lp, pos, &e)) return FAIL;
    *out = e.s ? (pstr){(const char *)e.s, e.len} : int_text(v, e.v);
    return PERSIST_OK;
}

/* Growing scratch arrays of one stream's load. */
typedef struct stream_scratch {
    pstr *master, *items;
    size_t mcap, icap;
    const char **ptrs;
    size_t *lens;
    size_t pcap;
    store_sid *pel;
    char *owned;
    size_t pelcap;
    pstr *names;
    size_t ncap;
} stream_scratch;

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    while (*cap < need) *cap = *cap ? *cap * 2 : 16;
    return mem_realloc(p, *cap * size);
}

static void scratch_free(stream_scratch *x)
{
    free(x->master);
    free(x->items);
    free(x->ptrs);
    free(x->lens);
    free(x->pel);
    free(x->owned);
    free(x->names);
}

/* One node's listpack: checked, and appended to st unless NULL. */
static int load_stream_node(reader *r, stream_scratch *x, store *s, store_stream *st, store_sid master,
                            const pstr *blob, store_sid *prev, int *any, uint64_t *live_total)
{
    const unsigned char *lp = (const unsigned char *)blob->p;
    size_t count, pos = 0;
    long long live, deleted, nmaster, zero;
    if (!st) r->v->deep_checks++;   /* decoding; storing reads it again */
    if (persist_lp_validate(lp, blob->len, &count) || !count) return FAIL;
    if (lp_int(lp, &pos, &live) || lp_int(lp, &pos, &deleted) || lp_int(lp, &pos, &nmaster)) return FAIL;
    if (live < 0 || deleted < 0 || nmaster < 0 || (size_t)nmaster > count) return FAIL;
    x->master = grow(x->master, &x->mcap, (size_t)nmaster + 1, sizeof *x->master);
    for (long long i = 0; i < nmaster; i++)
        if (lp_str(r->v, lp, &pos, &x->master[i])) return FAIL;
    if (lp_int(lp, &pos, &zero) || zero != 0) return FAIL;
    long long seen_live = 0, seen_deleted = 0;
    int first_entry = 1;
    while (pos < blob->len) {
        persist_elem peek;
        size_t at = pos;
        if (!persist_lp_next(lp, &at, &peek)) break;
        long long flags, dms, dseq, nf, lpcount;
        if (lp_int(lp, &pos, &flags) || lp_int(lp, &pos, &dms) || lp_int(lp, &pos, &dseq)) return FAIL;
        if (flags & ~3LL) return FAIL;
        store_sid id = {master.ms + (uint64_t)dms, master.seq + (uint64_t)dseq};
        if (dms < 0 || store_sid_cmp(id, master) < 0 || (*any && store_sid_cmp(id, *prev) <= 0)) return FAIL;
        int same = (flags & 2) != 0;
        if (same) {
            nf = nmaster;
        } else if (lp_int(lp, &pos, &nf) || nf < 0 || (size_t)nf > count) {
            return FAIL;
        }
        x->items = grow(x->items, &x->icap, 2 * (size_t)nf + 1, sizeof *x->items);
        for (long long i = 0; i < nf; i++) {
            if (same) x->items[2 * i] = x->master[i];
            else if (lp_str(r->v, lp, &pos, &x->items[2 * i])) return FAIL;
            if (lp_str(r->v, lp, &pos, &x->items[2 * i + 1])) return FAIL;
        }
        if (lp_int(lp, &pos, &lpcount) || lpcount != (same ? nf + 3 : 2 * nf + 4)) return FAIL;
        if (flags & 1) seen_deleted++;
        else seen_live++;
        if (st && live) {   /* a node of deleted entries only is dropped, as Redis would have */
            size_t n = 2 * (size_t)nf;
            if (n > x->pcap) {
                size_t cap = x->pcap;
                x->ptrs = grow(x->ptrs, &cap, n, sizeof *x->ptrs);
                x->lens = mem_realloc(x->lens, cap * sizeof *x->lens);
                x->pcap = cap;
            }
            for (size_t i = 0; i < n; i++) {
                x->ptrs[i] = x->items[i].p;
                x->lens[i] = x->items[i].len;
            }
            store_stream_append_raw(s, st, id, x->ptrs, x->lens, n, flags & 1, first_entry, master);
        }
        first_entry = 0;
        *prev = id;
        *any = 1;
    }
    if (seen_live != live || seen_deleted != deleted) return FAIL;
    *live_total += (uint64_t)live;
    return PERSIST_OK;
}

static int cmp_sid(const void *a, const void *b) { return store_sid_cmp(*(const store_sid *)a, *(const store_sid *)b); }

/* Names (n of them in x->names) distinct. */
static int names_unique(stream_scratch *x, size_t n)
{
    qsort(x->names, n, sizeof *x->names, cmp_pstr);
    for (size_t i = 1; i < n; i++)
        if (!cmp_pstr(&x->names[i - 1], &x->names[i])) return FAIL;
    return PERSIST_OK;
}

static int load_stream_groups(reader *r, stream_scratch *x, store *s, store_stream *st, unsigned type)
{
    uint64_t ngroups;
    if (rd_count(r, &ngroups)) return FAIL;
    pstr *gnames = NULL;
    size_t gcap = 0;
    int rc = FAIL;
    for (uint64_t gi = 0; gi < ngroups; gi++) {
        pstr name;
        store_sid last;
        uint64_t read, npel, ncons;
        if (rd_string(r, &name) || rd_sid(r, &last)) goto out;
        if (type == PERSIST_TYPE_STREAM_LISTPACKS_2) {
            if (rd_count(r, &read)) goto out;
        } else {
            read = (uint64_t)STORE_SCG_INVALID_READ;
        }
        gnames = grow(gnames, &gcap, (size_t)gi + 1, sizeof *gnames);
        gnames[gi] = name;
        store_sgroup *g = NULL;
        if (st) {
            long long er = (long long)read;
            if (type != PERSIST_TYPE_STREAM_LISTPACKS_2) er = store_stream_distance(st, last);
            g = store_sgroup_create(s, st, name.p, name.len, last, er);
        }
        if (rd_count(r, &npel) || npel > r->len) goto out;
        x->pel = grow(x->pel, &x->pelcap, (size_t)npel + 1, sizeof *x->pel);
        x->owned = mem_realloc(x->owned, x->pelcap);
        memset(x->owned, 0, (size_t)npel + 1);
        for (uint64_t i = 0; i < npel; i++) {
            store_sid id;
            uint64_t t, cnt;
            if (rd_sid_raw(r, &id) || rd_ms(r, &t) || rd_count(r, &cnt)) goto out;
            if (i && store_sid_cmp(id, x->pel[i - 1]) <= 0) goto out;   /* written in order, each once */
            x->pel[i] = id;
            if (g) {
                int created;
                store_snack *nk = store_sidmap_put(s, &g->pel, id, &created);
                nk->delivery_time = t;
                nk->delivery_count = cnt;
            }
        }
        if (rd_count(r, &ncons) || ncons > r->len) goto out;   /* each takes bytes: a huge count is a lie */
        x->names = grow(x->names, &x->ncap, (size_t)ncons + 1, sizeof *x->names);
        uint64_t owned = 0;
        for (uint64_t ci = 0; ci < ncons; ci++) {
            pstr cname;
            uint64_t seen, n;
            if (rd_string(r, &cname) || rd_ms(r, &seen) || rd_count(r, &n)) goto out;
            x->names[ci] = cname;
            store_sconsumer *con = g ? store_sconsumer_create(s, g, cname.p, cname.len, seen) : NULL;
            store_sid prev = {0, 0};
            for (uint64_t i = 0; i < n; i++) {
                store_sid id;
                if (rd_sid_raw(r, &id) || (i && store_sid_cmp(id, prev) <= 0)) goto out;
                prev = id;
                store_sid *at = bsearch(&id, x->pel, (size_t)npel, sizeof *x->pel, cmp_sid);
                if (!at || x->owned[at - x->pel]) goto out;   /* in the group's PEL, one owner */
                x->owned[at - x->pel] = 1;
                owned++;
                if (con) {
                    store_snack *nk = store_sidmap_get(&g->pel, id);
                    store_snack_assign(s, nk, id, con);
                }
            }
        }
        if (owned != npel || names_unique(x, (size_t)ncons)) goto out;
    }
    x->names = grow(x->names, &x->ncap, (size_t)ngroups + 1, sizeof *x->names);
    if (ngroups) memcpy(x->names, gnames, (size_t)ngroups * sizeof *gnames);
    rc = names_unique(x, (size_t)ngroups);
out:
    free(gnames);
    return rc;
}

static int load_stream(reader *r, unsigned type, store *s, store_stream *st)
{
    stream_scratch x = {0};
    uint64_t nodes, len, added, live = 0;
    store_sid prev = {0, 0}, last, first = {0, 0}, maxdel = {0, 0};
    int any = 0, rc = FAIL;
    if (rd_count(r, &nodes)) goto out;
    for (uint64_t i = 0; i < nodes; i++) {
        pstr key, blob;
        if (rd_string(r, &key) || key.len != 16) goto out;
        store_sid master = {be((const unsigned char *)key.p, 8), be((const unsigned char *)key.p + 8, 8)};
        if (any && store_sid_cmp(master, prev) <= 0) goto out;
        if (rd_string(r, &blob) || load_stream_node(r, &x, s, st, master, &blob, &prev, &any, &live)) goto out;
    }
    if (rd_count(r, &len) || rd_sid(r, &last)) goto out;
    if (type == PERSIST_TYPE_STREAM_LISTPACKS_2) {
        if (rd_sid(r, &first) || rd_sid(r, &maxdel) || rd_count(r, &added)) goto out;
    } else {
        added = len;
    }
    if (len != live || (any && store_sid_cmp(last, prev) < 0)) goto out;
    if (st) {
        st->len = len;
        st->last = last;
        st->entries_added = added;
        st->max_deleted = maxdel;
        if (type == PERSIST_TYPE_STREAM_LISTPACKS_2) st->first = first;
        else if (!store_stream_edge(st, 0, &st->first)) st->first = (store_sid){0, 0};
    }
    rc = load_stream_groups(r, &x, s, st, type);
out:
    scratch_free(&x);
    return rc;
}

static int load_body(reader *r, unsigned type)
{
    persist_value *v = r->v;
    uint64_t n;
    for (size_t i = 0; i < sizeof packed_types / sizeof packed_types[0]; i++)
        if (packed_types[i].rdb == type) return load_packed(r, &packed_types[i]);
    switch (type) {
    case PERSIST_TYPE_STRING:
        v->type = STORE_STRING;
        return load_strings(r, 1);
    case PERSIST_TYPE_LIST:
        v->type = STORE_LIST;
        if (rd_count(r, &n) || n == 0) return FAIL;
        return load_strings(r, n);
    case PERSIST_TYPE_LIST_QUICKLIST:
    case PERSIST_TYPE_LIST_QUICKLIST_2:
        v->type = STORE_LIST;
        return load_quicklist(r, type == PERSIST_TYPE_LIST_QUICKLIST_2);
    case PERSIST_TYPE_HASH:
        v->type = STORE_HASH;
        if (rd_count(r, &n) || n == 0 || n > SIZE_MAX / 2) return FAIL;
        return load_strings(r, n * 2);
    case PERSIST_TYPE_ZSET:
    case PERSIST_TYPE_ZSET_2:
        v->type = STORE_ZSET;
        return load_zset(r, type == PERSIST_TYPE_ZSET_2);
    case PERSIST_TYPE_SET:
        v->type = STORE_SET;
        if (rd_count(r, &n) || n == 0) return FAIL;
        return load_strings(r, n);
    case PERSIST_TYPE_SET_INTSET: return load_intset(r);
    case PERSIST_TYPE_STREAM_LISTPACKS:
    case PERSIST_TYPE_STREAM_LISTPACKS_2: {
        size_t start = r->pos;
        v->type = STORE_STREAM;
        if (load_stream(r, type, NULL, NULL)) return FAIL;
        v->sbody = r->p + start;
        v->slen = r->pos - start;
        v->stype = type;
        v->n = 1;   /* an empty stream is a value */
        return PERSIST_OK;
    }
    }
    return FAIL;   /* modules, Redis 7.2's streams: latchd has no such values */
}

/* What every decoded value must be, whatever carried it. */
static int value_check(const persist_value *v, int rc)
{
    if (rc == PERSIST_OK && v->n == 0) rc = FAIL;   /* Redis refuses empty keys */
    if (rc == PERSIST_OK && v->type == STORE_HASH) rc = check_unique(v, 2);
    if (rc == PERSIST_OK && v->type == STORE_ZSET) rc = check_unique(v, 1);
    if (rc == PERSIST_OK && v->type == STORE_SET && !v->intset) rc = check_unique(v, 1);
    return rc;
}

int persist_value_decode(const unsigned char *p, size_t len, persist_value **out, size_t *deep_checks)
{
    persist_value *v = mem_calloc(1, sizeof *v);
    reader r = {p, len, 0, v};
    const unsigned char *t;
    int rc = value_check(v, rd_bytes(&r, 1, &t) ? FAIL : load_body(&r, t[0]) ? FAIL : PERSIST_OK);
    if (deep_checks) *deep_checks = v->deep_checks;
    if (rc != PERSIST_OK) {
        persist_value_free(v);
        return rc;
    }
    *out = v;
    return PERSIST_OK;
}

store_type persist_value_type(const persist_value *v) { return v->type; }
size_t persist_value_deep_checks(const persist_value *v) { return v->deep_checks; }

store_key *persist_value_store(persist_value *v, store *s, const char *key, size_t klen)
{
    store_key *k = NULL;
    pstr *it = v->items;
    switch (v->type) {
    case STORE_STRING: k = store_put_string(s, key, klen, it[0].p, it[0].len); break;
    case STORE_HASH:
        k = store_create_hash(s, key, klen, it[0].p, it[0].len, it[1].len);
        for (size_t i = 0; i < v->n; i += 2) store_hash_set(s, k, it[i].p, it[i].len, it[i + 1].p, it[i + 1].len);
        break;
    case STORE_LIST:
        k = store_create_key(s, key, klen, STORE_LIST);
        for (size_t i = 0; i < v->n; i++) store_list_push(s, k, STORE_TAIL, it[i].p, it[i].len);
        break;
    case STORE_ZSET:
        k = store_create_key(s, key, klen, STORE_ZSET);
        for (size_t i = 0; i < v->n; i++) {
            int out;
            double now;
            store_zset_add(s, k, v->scores[i], it[i].p, it[i].len, 0, &out, &now);
        }
        break;
    case STORE_STREAM: {
        k = store_create_key(s, key, klen, STORE_STREAM);
        reader r = {v->sbody, v->slen, 0, v};
        load_stream(&r, v->stype, s, store_stream_of(k));   /* checked when decoded */
        break;
    }
    case STORE_SET:
        k = store_create_key(s, key, klen, STORE_SET);
        if (v->intset) {   /* as it was: its width too, so a DUMP of it is the same */
            store_set_load_intset(s, store_set_of(k), v->intset, v->n, v->width);
            break;
        }
        /* rdbLoadObject: an intset while members are integers and few */
        for (size_t i = 0; i < v->n; i++) store_set_add(s, store_set_of(k), it[i].p, it[i].len);
        break;
    }
    persist_value_free(v);
    return k;
}

void persist_value_free(persist_value *v)
{
    if (!v) return;
    arena_free(v);
    free(v->items);
    free(v->scores);
    free(v);
}

/* ---- whole files: rdbLoadRio ---- */

enum {
    RDB_OP_MODULE_AUX = 0xF7,
    RDB_OP_IDLE = 0xF8,
    RDB_OP_FREQ = 0xF9,
    RDB_OP_AUX = 0xFA,
    RDB_OP_RESIZEDB = 0xFB,
    RDB_OP_EXPIRETIME_MS = 0xFC,
    RDB_OP_EXPIRETIME = 0xFD,
    RDB_OP_SELECTDB = 0xFE,
    RDB_OP_EOF = 0xFF,
};

/* One key: its name and value read into a new persist_value, handed on. */
static int load_key(reader *r, unsigned type, int db, int64_t deadline, persist_rdb_key_fn fn,
                    const persist_rdb_hooks *hooks, void *ctx)
{
    persist_value *v = mem_calloc(1, sizeof *v);
    pstr key;
    r->v = v;
    int rc = rd_string(r, &key) ? FAIL : PERSIST_OK;
    if (rc == PERSIST_OK && hooks && hooks->next_key) hooks->next_key(db, key.p, key.len, ctx);
    if (rc == PERSIST_OK) rc = value_check(v, load_body(r, type) ? FAIL : PERSIST_OK);
    r->v = NULL;
    if (rc != PERSIST_OK) {
        persist_value_free(v);
        return rc;
    }
    return fn(db, key.p, key.len, v, deadline, ctx);   /* fn owns v, and copies key first */
}

/* The trailer: 8 bytes of CRC64 over everything up to and including the
 * EOF opcode; zero means the writer had rdbchecksum off. */
static int load_trailer(reader *r, unsigned version, int check_crc)
{
    const unsigned char *b;
    if (version < 5) return PERSIST_OK;
    size_t covered = r->pos;
    if (rd_bytes(r, 8, &b)) return FAIL;
    uint64_t want = le(b, 8);
    if (check_crc && want && want != persist_crc64(0, r->p, covered)) return PERSIST_ERR_CHECKSUM;
    return PERSIST_OK;
}

int persist_rdb_load(const unsigned char *p, size_t len, int check_crc, persist_rdb_key_fn fn,
                     persist_rdb_lib_fn lib, void *ctx)
{
    size_t used;
    return persist_rdb_load_prefix(p, len, check_crc, fn, lib, NULL, ctx, &used);
}

int persist_rdb_load_prefix(const unsigned char *p, size_t len, int check_crc, persist_rdb_key_fn fn,
                            persist_rdb_lib_fn lib, const persist_rdb_hooks *hooks, void *ctx, size_t *used)
{
    reader r = {p, len, 0, NULL};
    persist_value scratch = {0};   /* where AUX strings that need memory go */
    const unsigned char *b;
    if (rd_bytes(&r, 9, &b) || memcmp(b, "REDIS", 5)) return FAIL;
    unsigned version = 0;
    for (int i = 5; i < 9; i++) {
        if (b[i] < '0' || b[i] > '9') return FAIL;
        version = version * 10 + (unsigned)(b[i] - '0');
    }
    if (version < 1 || version > PERSIST_RDB_VERSION) return FAIL;
    int db = 0, rc = PERSIST_OK;
    int64_t deadline = STORE_NO_DEADLINE;
    uint64_t n;
    pstr a, v;
    while (rc == PERSIST_OK) {
        if (rd_bytes(&r, 1, &b)) {
            rc = FAIL;
            break;
        }
        switch (b[0]) {
        case RDB_OP_EOF:
            rc = load_trailer(&r, version, check_crc);
            goto done;
        case RDB_OP_SELECTDB:
            rc = rd_count(&r, &n) || n > INT_MAX ? FAIL : PERSIST_OK;
            db = (int)n;
            break;
        case RDB_OP_RESIZEDB: {
            uint64_t keys;
            rc = rd_count(&r, &keys) || rd_count(&r, &n) ? FAIL : PERSIST_OK;
            if (rc == PERSIST_OK && hooks && hooks->resize && keys <= len && n <= keys)
                hooks->resize(db, keys, n, ctx);
            break;
        }
        case RDB_OP_AUX:
            r.v = &scratch;
            rc = rd_string(&r, &a) || rd_string(&r, &v) ? FAIL : PERSIST_OK;
            r.v = NULL;
            break;
        case RDB_OP_EXPIRETIME_MS:
        case RDB_OP_EXPIRETIME: {
            int ms = b[0] == RDB_OP_EXPIRETIME_MS;
            if (rd_bytes(&r, ms ? 8 : 4, &b)) {
                rc = FAIL;
                break;
            }
            deadline = ms ? (int64_t)le(b, 8) : (int64_t)le(b, 4) * 1000;
            continue;   /* it belongs to the key that follows */
        }
        case RDB_OP_IDLE: rc = rd_count(&r, &n) ? FAIL : PERSIST_OK; continue;
        case RDB_OP_FREQ: rc = rd_bytes(&r, 1, &b) ? FAIL : PERSIST_OK; continue;
        case PERSIST_OPCODE_FUNCTION2:
            r.v = &scratch;
            rc = rd_string(&r, &a) ? FAIL : lib ? lib(a.p, a.len, ctx) : FAIL;
            r.v = NULL;
            break;
        case PERSIST_OPCODE_FUNCTION:   /* 7.0-rc's records: never in a GA file */
        case RDB_OP_MODULE_AUX:
            rc = FAIL;
            break;
        default:
            rc = load_key(&r, b[0], db, deadline, fn, hooks, ctx);
        }
        deadline = STORE_NO_DEADLINE;
    }
done:
    arena_free(&scratch);
    *used = r.pos;
    return rc;
}

/* ---- function libraries ---- */

/* One 7.0-rc record (name, engine, optional description, code) as the
 * GA payload "#!<engine> name=<name>\n<code>", as rdbFunctionLoad does. */
static int load_old_function(reader *r)
{
    pstr name, engine, desc, blob;
    uint64_t has_desc;
    if (rd_string(r, &name) || rd_string(r, &engine) || rd_count(r, &has_desc)) return FAIL;
    if (has_desc && rd_string(r, &desc)) return FAIL;
    if (rd_string(r, &blob)) return FAIL;
    size_t n = 2 + engine.len + 6 + name.len + 1 + blob.len;
    char *code = arena_alloc(r->v, n), *at = code;
    memcpy(at, "#!", 2), at += 2;
    memcpy(at, engine.p, engine.len), at += engine.len;
    memcpy(at, " name=", 6), at += 6;
    memcpy(at, name.p, name.len), at += name.len;
    *at++ = '\n';
    memcpy(at, blob.p, blob.len);
    push_item(r->v, code, n);
    return PERSIST_OK;
}

int persist_functions_decode(const unsigned char *p, size_t len, persist_value **out)
{
    persist_value *v = mem_calloc(1, sizeof *v);
    reader r = {p, len, 0, v};
    int rc = PERSIST_OK;
    while (rc == PERSIST_OK && len - r.pos > 10) {
        const unsigned char *t;
        pstr code;
        if (rd_bytes(&r, 1, &t)) rc = FAIL;
        else if (t[0] == PERSIST_OPCODE_FUNCTION) rc = load_old_function(&r);
        else if (t[0] != PERSIST_OPCODE_FUNCTION2) rc = PERSIST_ERR_NOT_FUNCTION;
        else if (rd_string(&r, &code)) rc = FAIL;
        else push_item(v, code.p, code.len);
    }
    if (rc != PERSIST_OK) {
        persist_value_free(v);
        return rc;
    }
    *out = v;
    return PERSIST_OK;
}

size_t persist_value_count(const persist_value *v) { return v->n; }

void persist_value_item(const persist_value *v, size_t i, const char **p, size_t *len)
{
    *p = v->items[i].p;
    *len = v->items[i].len;
}
