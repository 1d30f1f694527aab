/* rdb_save.c - a store value as Redis 7.0's rdbSaveObjectType +
 * rdbSaveObject writes it, and the DUMP payload around it. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "mem.h"
#include "num.h"
#include "persist.h"
#include "set.h"
#include "stream.h"
#include "zset.h"

enum {
    RDB_ENC_INT8 = 0xC0,
    RDB_ENC_INT16 = 0xC1,
    RDB_ENC_INT32 = 0xC2,
    RDB_ENC_LZF = 0xC3,
    QL_PLAIN = 1,    /* quicklist node containers */
    QL_PACKED = 2,
};

/* Quicklist elements this long get a node of their own, unpacked
 * (Redis 7.0's packed_threshold default, 1 GiB). */
#define PERSIST_PLAIN_THRESHOLD ((size_t)1 << 30)

/* The most a saver's buffers keep between values. */
#define SCRATCH_KEPT ((size_t)1 << 20)

/* One value's encoding: the options, the LZF table every string of it
 * shares (made on the first string worth compressing), and buffers kept
 * from value to value (a whole file's keys make no allocation each). */
typedef struct saver {
    const persist_opts *o;
    persist_lzf_table *lzf;
    persist_buf *lp;        /* a listpack being built */
    persist_buf *lzf_out;   /* a string's compressed bytes */
} saver;

/* A saver over scratch[2], buffers its caller keeps (scratch_free). */
static saver saver_over(const persist_opts *o, persist_lzf_table *lzf, persist_buf scratch[2])
{
    return (saver){o, lzf, &scratch[0], &scratch[1]};
}

static void scratch_free(persist_buf scratch[2])
{
    persist_buf_free(&scratch[0]);
    persist_buf_free(&scratch[1]);
}

static inline void put_byte(persist_buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    persist_buf_put(b, &c, 1);
}

/* rdbSaveLen's longer forms: 14 bits, then 32 or 64 bits big-endian. */
static void put_long_len(persist_buf *b, uint64_t len)
{
    unsigned char h[9];
    size_t n;
    if (len < 16384) {
        h[0] = (unsigned char)(0x40 | (len >> 8)), h[1] = (unsigned char)len, n = 2;
    } else if (len <= UINT32_MAX) {
        h[0] = 0x80, n = 5;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)(len >> (24 - 8 * i));
    } else {
        h[0] = 0x81, n = 9;
        for (int i = 0; i < 8; i++) h[1 + i] = (unsigned char)(len >> (56 - 8 * i));
    }
    persist_buf_put(b, h, n);
}

/* rdbSaveLen: 6 bits in one byte, inline, as most lengths in a file of
 * locks (each key's and each listpack's) are under 64; put_long_len else. */
static inline void put_len(persist_buf *b, uint64_t len)
{
    if (len < 64) {
        put_byte(b, (unsigned)len);
        return;
    }
    put_long_len(b, len);
}

/* rdbSaveRawString: short canonical integers that fit 32 bits as
 * integers, long strings LZF-compressed when that saves 4 bytes or more,
 * the rest as length + bytes. */
static void put_string(persist_buf *b, saver *sv, const void *p, size_t len)
{
    long long v;
    if (len <= 11 && store_str2ll(p, len, &v) && v >= INT32_MIN && v <= INT32_MAX) {
        unsigned char h[5];
        size_t n = v >= -128 && v <= 127 ? 1 : v >= -32768 && v <= 32767 ? 2 : 4;
        h[0] = (unsigned char)(n == 1 ? RDB_ENC_INT8 : n == 2 ? RDB_ENC_INT16 : RDB_ENC_INT32);
        for (size_t i = 0; i < n; i++) h[1 + i] = (unsigned char)((unsigned long long)v >> (8 * i));
        persist_buf_put(b, h, 1 + n);
        return;
    }
    if (sv->o->rdbcompression && len > 20) {
        persist_buf *out = sv->lzf_out;
        out->len = 0;
        persist_buf_reserve(out, len - 4);
        if (!sv->lzf) sv->lzf = persist_lzf_table_new();
        size_t clen = persist_lzf_compress(sv->lzf, p, len, out->p, len - 4);
        if (clen) {
            put_byte(b, RDB_ENC_LZF);
            put_len(b, clen);
            put_len(b, len);
            persist_buf_put(b, out->p, clen);
        }
        if (out->cap > SCRATCH_KEPT) persist_buf_free(out);   /* a big string's: not for the rest of the file */
        if (clen) return;
    }
    put_len(b, len);
    persist_buf_put(b, p, len);
}

/* ---- hashes ---- */

typedef struct hash_scan {
    long long max_value;
    int fits;
} hash_scan;

static void hash_fits(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    hash_scan *h = ctx;
    if ((long long)flen > h->max_value || (long long)vlen > h->max_value) h->fits = 0;
}

static void hash_to_lp(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    persist_lp_append(ctx, f, flen);
    persist_lp_append(ctx, v, vlen);
}

typedef struct dict_out {
    persist_buf *b;
    saver *sv;
} dict_out;

static void hash_to_dict(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    dict_out *d = ctx;
    put_string(d->b, d->sv, f, flen);
    put_string(d->b, d->sv, v, vlen);
}

/* A listpack begun in sv's buffer for one value, then saved as one RDB
 * string (put_lp_string). */
static void begin_lp(saver *sv, persist_lp_writer *w)
{
    sv->lp->len = 0;
    persist_lp_begin(w, sv->lp);
}

static void put_lp_string(persist_buf *b, saver *sv, persist_lp_writer *w)
{
    persist_lp_end(w);
    put_string(b, sv, sv->lp->p, sv->lp->len);
}

/* A one-field hash (every held lock) whose field and value fit a listpack:
 * its listpack made in one visit, with no scan before it. */
typedef struct pair_lp {
    long long max_value;
    size_t len;   /* 0: does not fit */
    unsigned char lp[PERSIST_LP_PAIR_ROOM];
} pair_lp;

static void pair_to_lp(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    pair_lp *p = ctx;
    if ((long long)flen > p->max_value || (long long)vlen > p->max_value) return;
    p->len = persist_lp_pair(p->lp, f, flen, v, vlen);
}

/* 1 with p holding k's listpack when k is a one-field hash that fits one. */
static int pair_of(const store_key *k, const persist_opts *o, pair_lp *p)
{
    if (store_key_type(k) != STORE_HASH || store_hash_len(k) != 1 || o->hash_max_listpack_entries < 1) return 0;
    /* no initializer: lp is written, not zeroed, per key */
    p->max_value = o->hash_max_listpack_value < PERSIST_LP_PAIR_MAX ? o->hash_max_listpack_value : PERSIST_LP_PAIR_MAX;
    p->len = 0;
    store_hash_foreach(k, pair_to_lp, p);
    return p->len != 0;
}

static void encode_hash(const store_key *k, saver *sv, persist_buf *b)
{
    const persist_opts *o = sv->o;
    size_t n = store_hash_len(k);
    hash_scan h = {o->hash_max_listpack_value, (long long)n <= o->hash_max_listpack_entries};
    if (h.fits) store_hash_foreach(k, hash_fits, &h);
    if (h.fits) {
        persist_lp_writer w;
        put_byte(b, PERSIST_TYPE_HASH_LISTPACK);
        begin_lp(sv, &w);
        store_hash_foreach(k, hash_to_lp, &w);
        put_lp_string(b, sv, &w);
        return;
    }
    dict_out d = {b, sv};
    put_byte(b, PERSIST_TYPE_HASH);
    put_len(b, n);
    store_hash_foreach(k, hash_to_dict, &d);
}

/* ---- sorted sets ---- */

/* Redis's d2string: how a listpack holds a score. */
static size_t score_string(char *buf, size_t cap, double d)
{
    if (isnan(d)) return (size_t)snprintf(buf, cap, "nan");
    if (isinf(d)) return (size_t)snprintf(buf, cap, d < 0 ? "-inf" : "inf");
    if (d == 0) return (size_t)snprintf(buf, cap, 1.0 / d < 0 ? "-0" : "0");
    if (d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2) && (double)(long long)d == d)
        return store_ll2str(buf, (long long)d);
    return (size_t)snprintf(buf, cap, "%.17g", d);
}

typedef struct zset_scan {
    long long max_value;
    int fits;
    persist_lp_writer *w;
    persist_buf *b;
    saver *sv;
} zset_scan;

static void zset_fits(const char *m, size_t mlen, double score, void *ctx)
{
    zset_scan *z = ctx;
    if ((long long)mlen > z->max_value) z->fits = 0;
}

static void zset_to_lp(const char *m, size_t mlen, double score, void *ctx)
{
    zset_scan *z = ctx;
    char buf[64];
    size_t n = score_string(buf, sizeof buf, score);
    persist_lp_append(z->w, m, mlen);
    persist_lp_append(z->w, buf, n);
}

static void zset_to_skiplist(const char *m, size_t mlen, double score, void *ctx)
{
    zset_scan *z = ctx;
    unsigned char d[8];
    uint64_t u;
    memcpy(&u, &score, 8);
    for (int i = 0; i < 8; i++) d[i] = (unsigned char)(u >> (8 * i));   /* little-endian */
    put_string(z->b, z->sv, m, mlen);
    persist_buf_put(z->b, d, 8);
}

static void encode_zset(const store_key *k, saver *sv, persist_buf *b)
{
    const persist_opts *o = sv->o;
    size_t n = store_zset_len(k);
    zset_scan z = {o->zset_max_listpack_value, (long long)n <= o->zset_max_listpack_entries, NULL, b, sv};
    if (z.fits) store_zset_visit(k, 0, n, 0, zset_fits, &z);
    if (z.fits) {
        persist_lp_writer w;
        z.w = &w;
        put_byte(b, PERSIST_TYPE_ZSET_LISTPACK);
        begin_lp(sv, &w);
        store_zset_visit(k, 0, n, 0, zset_to_lp, &z);
        put_lp_string(b, sv, &w);
        return;
    }
    /* highest first, as Redis walks its skiplist from the tail */
    put_byte(b, PERSIST_TYPE_ZSET_2);
    put_len(b, n);
    store_zset_visit(k, n - 1, n, 1, zset_to_skiplist, &z);
}

/* ---- sets: the intset blob as a string, or each member ---- */

typedef struct set_out {
    persist_buf *b;
    saver *sv;
} set_out;

static void set_member(const char *m, size_t len, void *ctx)
{
    set_out *so = ctx;
    put_string(so->b, so->sv, m, len);
}

static void encode_set(const store_key *k, saver *sv, persist_buf *b)
{
    const store_set *v = store_set_of_const(k);
    size_t count;
    unsigned width;
    const void *raw = store_set_intset_raw(v, &count, &width);
    if (raw) {   /* Redis's intset: u32 encoding, u32 length (LE), members */
        persist_buf blob = {0};
        unsigned char h[8];
        for (int i = 0; i < 4; i++) {
            h[i] = (unsigned char)(width >> (8 * i));
            h[4 + i] = (unsigned char)(count >> (8 * i));
        }
        persist_buf_put(&blob, h, 8);
        persist_buf_put(&blob, raw, count * width);
        put_byte(b, PERSIST_TYPE_SET_INTSET);
        put_string(b, sv, blob.p, blob.len);
        persist_buf_free(&blob);
        return;
    }
    set_out so = {b, sv};
    put_byte(b, PERSIST_TYPE_SET);
    put_len(b, store_set_len(v));
    store_set_foreach(v, set_member, &so);
}

/* ---- lists: quicklist nodes of listpacks ---- */

typedef struct list_out {
    persist_buf *b;
    saver *sv;
    persist_buf nodes;     /* the encoded nodes, counted in nnodes */
    size_t nnodes;
    persist_buf lp;        /* the node being filled */
    persist_lp_writer w;
    int open;
} list_out;

static void list_close_node(list_out *l)
{
    if (!l->open) return;
    persist_lp_end(&l->w);
    put_len(&l->nodes, QL_PACKED);
    put_string(&l->nodes, l->sv, l->lp.p, l->lp.len);
    l->lp.len = 0;
    l->open = 0;
    l->nnodes++;
}

/* _quicklistNodeAllowInsert, so a list pushed element by element splits
 * where Redis's does: list-max-listpack-size -1..-5 caps a node's estimated
 * size (bytes + element + 8) at 4..64 KiB; a count caps it otherwise,
 * and then 8 KiB still does. */
static int list_node_full(const list_out *l, size_t len)
{
    static const size_t classes[] = {4096, 8192, 16384, 32768, 65536};
    int fill = l->sv->o->list_max_listpack_size;
    size_t bytes = l->lp.len + 1 + len + 8;   /* the node's listpack has its terminator */
    if (fill < 0 && (size_t)-(long long)fill - 1 < 5) {
        if (bytes <= classes[-fill - 1]) return 0;
    }
    if (bytes > 8192) return 1;
    return !(fill > 0 && l->w.count < (size_t)fill);
}

static void list_elem(const char *v, size_t len, void *ctx)
{
    list_out *l = ctx;
    if (len >= PERSIST_PLAIN_THRESHOLD) {
        list_close_node(l);
        put_len(&l->nodes, QL_PLAIN);
        put_string(&l->nodes, l->sv, v, len);
        l->nnodes++;
        return;
    }
    if (l->open && list_node_full(l, len)) list_close_node(l);
    if (!l->open) {
        persist_lp_begin(&l->w, &l->lp);
        l->open = 1;
    }
    persist_lp_append(&l->w, v, len);
}

static void encode_list(const store_key *k, saver *sv, persist_buf *b)
{
    list_out l = {.b = b, .sv = sv};
    store_list_range(k, 0, store_list_len(k), 0, list_elem, &l);
    list_close_node(&l);
    put_byte(b, PERSIST_TYPE_LIST_QUICKLIST_2);
    put_len(b, l.nnodes);
    persist_buf_put(b, l.nodes.p, l.nodes.len);
    persist_buf_free(&l.nodes);
    persist_buf_free(&l.lp);
}

/* ---- streams: RDB_TYPE_STREAM_LISTPACKS_2, a listpack per node ---- */

/* A node's listpack, as Redis's streamAppendItem builds it: the master
 * entry (live count, deleted count, the first entry's fields, 0), then
 * per entry its flags, ID deltas from the node's first ID, its fields
 * (only values when they are the master's) and its lp-count. */
typedef struct snode_out {
    persist_lp_writer w;
    store_sid master;
    store_sentry first;          /* the master fields' entry */
    int started;
    uint32_t live, total;
} snode_out;

static void lp_num(persist_lp_writer *w, long long v)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%lld", v);
    persist_lp_append(w, buf, (size_t)n);
}

static int same_fields(const store_sentry *a, const store_sentry *b)
{
    if (a->pairs != b->pairs) return 0;
    store_spos pa = {a->p, a->mp}, pb = {b->p, b->mp};
    const char *fa, *fb, *va, *vb;
    size_t fal, fbl, val, vbl;
    for (size_t i = 0; i < a->pairs; i++) {
        store_sentry_pair(&pa, &fa, &fal, &va, &val);
        store_sentry_pair(&pb, &fb, &fbl, &vb, &vbl);
        if (fal != fbl || memcmp(fa, fb, fal)) return 0;
    }
    return 1;
}

static int snode_entry(const store_sentry *e, int deleted, void *ctx)
{
    snode_out *o = ctx;
    if (!o->started) {   /* the master entry, from the first one */
        o->started = 1;
        lp_num(&o->w, o->live);
        lp_num(&o->w, (long long)(o->total - o->live));
        lp_num(&o->w, (long long)e->pairs);
        store_spos pos = {e->p, e->mp};
        const char *f, *v;
        size_t fl, vl;
        for (size_t i = 0; i < e->pairs; i++) {
            store_sentry_pair(&pos, &f, &fl, &v, &vl);
            persist_lp_append(&o->w, f, fl);
        }
        lp_num(&o->w, 0);
        o->first = *e;
    }
    int same = same_fields(e, &o->first);
    lp_num(&o->w, (deleted ? 1 : 0) | (same ? 2 : 0));
    lp_num(&o->w, (long long)(e->id.ms - o->master.ms));
    lp_num(&o->w, (long long)(e->id.seq - o->master.seq));
    if (!same) lp_num(&o->w, (long long)e->pairs);
    store_spos pos = {e->p, e->mp};
    const char *f, *v;
    size_t fl, vl;
    for (size_t i = 0; i < e->pairs; i++) {
        store_sentry_pair(&pos, &f, &fl, &v, &vl);
        if (!same) persist_lp_append(&o->w, f, fl);
        persist_lp_append(&o->w, v, vl);
    }
    lp_num(&o->w, same ? (long long)e->pairs + 3 : (long long)e->pairs * 2 + 4);
    return 0;
}

static void put_sid_raw(persist_buf *b, store_sid id)
{
    unsigned char raw[16];
    for (int i = 0; i < 8; i++) {
        raw[i] = (unsigned char)(id.ms >> (56 - 8 * i));
        raw[8 + i] = (unsigned char)(id.seq >> (56 - 8 * i));
    }
    persist_buf_put(b, raw, 16);
}

static void put_ms(persist_buf *b, uint64_t ms)
{
    unsigned char t[8];
    for (int i = 0; i < 8; i++) t[i] = (unsigned char)(ms >> (8 * i));
    persist_buf_put(b, t, 8);
}

static void encode_stream(const store_key *k, saver *sv, persist_buf *b)
{
    const store_stream *st = store_stream_of_const(k);
    size_t nodes = store_stream_nodes(st);
    persist_buf lp = {0};
    put_byte(b, PERSIST_TYPE_STREAM_LISTPACKS_2);
    put_len(b, nodes);
    for (size_t i = 0; i < nodes; i++) {
        const store_snode *n = &st->nodes[i];
        snode_out o = {.master = n->first, .live = n->live, .total = n->total};
        lp.len = 0;
        persist_lp_begin(&o.w, &lp);
        store_stream_node_walk(st, i, snode_entry, &o);
        persist_lp_end(&o.w);
        persist_buf key = {0};
        put_sid_raw(&key, n->first);
        put_string(b, sv, key.p, key.len);
        persist_buf_free(&key);
        put_string(b, sv, lp.p, lp.len);
    }
    persist_buf_free(&lp);
    put_len(b, st->len);
    put_len(b, st->last.ms);
    put_len(b, st->last.seq);
    put_len(b, st->first.ms);
    put_len(b, st->first.seq);
    put_len(b, st->max_deleted.ms);
    put_len(b, st->max_deleted.seq);
    put_len(b, st->entries_added);
    put_len(b, st->ngroups);
    for (uint32_t i = 0; i < st->ngroups; i++) {
        const store_sgroup *g = st->groups[i];
        put_string(b, sv, g->name, g->nlen);
        put_len(b, g->last_id.ms);
        put_len(b, g->last_id.seq);
        put_len(b, (uint64_t)g->entries_read);
        put_len(b, g->pel.count);
        store_sidmap_it it;
        store_sid id;
        void *v;
        store_sidmap_seek(&g->pel, (store_sid){0, 0}, &it);
        while (store_sidmap_next(&g->pel, &it, &id, &v)) {
            const store_snack *nk = v;
            put_sid_raw(b, id);
            put_ms(b, nk->delivery_time);
            put_len(b, nk->delivery_count);
        }
        put_len(b, g->nconsumers);
        for (uint32_t j = 0; j < g->nconsumers; j++) {
            const store_sconsumer *con = g->consumers[j];
            put_string(b, sv, con->name, con->nlen);
            put_ms(b, con->seen_time);
            put_len(b, con->pel.count);
            store_sidmap_seek(&con->pel, (store_sid){0, 0}, &it);
            while (store_sidmap_next(&con->pel, &it, &id, NULL)) put_sid_raw(b, id);
        }
    }
}

static void encode_value(const store_key *k, saver *sv, persist_buf *out)
{
    switch (store_key_type(k)) {
    case STORE_STRING: {
        size_t len;
        const char *v = store_string_get(k, &len);
        put_byte(out, PERSIST_TYPE_STRING);
        put_string(out, sv, v, len);
        break;
    }
    case STORE_HASH: encode_hash(k, sv, out); break;
    case STORE_LIST: encode_list(k, sv, out); break;
    case STORE_ZSET: encode_zset(k, sv, out); break;
    case STORE_SET: encode_set(k, sv, out); break;
    case STORE_STREAM: encode_stream(k, sv, out); break;
    }
}

void persist_value_encode(const store_key *k, const persist_opts *o, persist_buf *out)
{
    persist_buf scratch[2] = {{0}};
    saver sv = saver_over(o, NULL, scratch);
    encode_value(k, &sv, out);
    persist_lzf_table_free(sv.lzf);
    scratch_free(scratch);
}

/* The DUMP trailer over out[start..]: RDB version and CRC64. */
static void put_trailer(persist_buf *out, size_t start)
{
    unsigned char trailer[10] = {PERSIST_RDB_VERSION & 0xff, PERSIST_RDB_VERSION >> 8};
    persist_buf_put(out, trailer, 2);
    uint64_t crc = persist_crc64(0, out->p + start, out->len - start);
    for (int i = 0; i < 8; i++) trailer[2 + i] = (unsigned char)(crc >> (8 * i));
    persist_buf_put(out, trailer + 2, 8);
}

void persist_dump(const store_key *k, const persist_opts *o, persist_buf *out)
{
    size_t start = out->len;
    persist_value_encode(k, o, out);
    put_trailer(out, start);
}

void persist_functions_dump(const persist_pstr *codes, size_t n, int rdbcompression,
                            persist_buf *out)
{
    persist_opts o = {.rdbcompression = rdbcompression};
    persist_buf scratch[2] = {{0}};
    saver sv = saver_over(&o, NULL, scratch);
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        put_byte(out, PERSIST_OPCODE_FUNCTION2);
        put_string(out, &sv, codes[i].p, codes[i].len);
    }
    persist_lzf_table_free(sv.lzf);
    scratch_free(scratch);
    put_trailer(out, start);
}

int persist_payload_check(const unsigned char *p, size_t len)
{
    if (len < 10) return PERSIST_ERR_CHECKSUM;
    const unsigned char *footer = p + len - 10;
    unsigned version = footer[0] | (unsigned)footer[1] << 8;
    if (version > PERSIST_RDB_VERSION) return PERSIST_ERR_CHECKSUM;
    uint64_t crc = persist_crc64(0, p, len - 8), got = 0;
    for (int i = 0; i < 8; i++) got |= (uint64_t)footer[2 + i] << (8 * i);
    return crc == got ? PERSIST_OK : PERSIST_ERR_CHECKSUM;
}

/* ---- whole files: rdbSaveRio's layout ---- */

enum {
    RDB_OP_AUX = 0xFA,
    RDB_OP_RESIZEDB = 0xFB,
    RDB_OP_EXPIRETIME_MS = 0xFC,
    RDB_OP_SELECTDB = 0xFE,
    RDB_OP_EOF = 0xFF,
    RDB_FLUSH_AT = 64 * 1024,   /* bytes buffered before the sink gets them */
};

/* The CRC runs over every byte as it leaves, so the file is never held
 * whole in memory. */
static void rdb_flush(persist_rdb_writer *w)
{
    if (!w->buf.len) return;
    if (w->opts.rdbchecksum) w->crc = persist_crc64(w->crc, w->buf.p, w->buf.len);
    if (!w->failed && w->sink(w->buf.p, w->buf.len, w->sink_ctx) != 0) w->failed = 1;
    w->buf.len = 0;
}

static void put_aux(persist_rdb_writer *w, saver *sv, const char *name, const char *value)
{
    put_byte(&w->buf, RDB_OP_AUX);
    put_string(&w->buf, sv, name, strlen(name));
    put_string(&w->buf, sv, value, strlen(value));
}

void persist_rdb_begin(persist_rdb_writer *w, const persist_opts *o, const persist_rdb_aux *aux,
                       persist_rdb_sink sink, void *sink_ctx)
{
    *w = (persist_rdb_writer){.opts = *o, .sink = sink, .sink_ctx = sink_ctx};
    char magic[16], num[32];
    snprintf(magic, sizeof magic, "REDIS%04d", PERSIST_RDB_VERSION);
    persist_buf_put(&w->buf, magic, strlen(magic));
    saver sv = saver_over(&w->opts, NULL, w->scratch);   /* AUX values are short: never compressed */
    put_aux(w, &sv, "redis-ver", aux->redis_ver);
    put_aux(w, &sv, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    snprintf(num, sizeof num, "%lld", aux->ctime);
    put_aux(w, &sv, "ctime", num);
    snprintf(num, sizeof num, "%lld", aux->used_mem);
    put_aux(w, &sv, "used-mem", num);
    put_aux(w, &sv, "aof-base", "0");
}

static void put_key(store_key *k, void *ctx)
{
    persist_rdb_writer *w = ctx;
    int64_t deadline = store_key_deadline(k);
    if (deadline != STORE_NO_DEADLINE) {
        unsigned char ms[9] = {RDB_OP_EXPIRETIME_MS};
        for (int i = 0; i < 8; i++) ms[1 + i] = (unsigned char)((uint64_t)deadline >> (8 * i));
        persist_buf_put(&w->buf, ms, sizeof ms);
    }
    /* the value's type byte goes before the key, its body after; one LZF
     * table serves the whole file */
    saver sv = saver_over(&w->opts, w->lzf, w->scratch);
    size_t klen;
    const char *name = store_key_name(k, &klen);
    pair_lp p;
    if (pair_of(k, &w->opts, &p)) {   /* a held lock: its type is known, so straight into buf */
        put_byte(&w->buf, PERSIST_TYPE_HASH_LISTPACK);
        put_string(&w->buf, &sv, name, klen);
        put_string(&w->buf, &sv, p.lp, p.len);
    } else {
        w->value.len = 0;
        encode_value(k, &sv, &w->value);
        put_byte(&w->buf, w->value.p[0]);
        put_string(&w->buf, &sv, name, klen);
        persist_buf_put(&w->buf, w->value.p + 1, w->value.len - 1);
    }
    w->lzf = sv.lzf;
    if (w->buf.len >= RDB_FLUSH_AT) rdb_flush(w);
    if (w->after_key) w->after_key(w->sink_ctx);
}

void persist_rdb_functions(persist_rdb_writer *w, const persist_pstr *codes, size_t n)
{
    saver sv = saver_over(&w->opts, w->lzf, w->scratch);
    for (size_t i = 0; i < n; i++) {
        put_byte(&w->buf, PERSIST_OPCODE_FUNCTION2);
        put_string(&w->buf, &sv, codes[i].p, codes[i].len);
    }
    w->lzf = sv.lzf;
}

void persist_rdb_db(persist_rdb_writer *w, int id, store *st)
{
    size_t n = store_size(st);
    if (!n) return;
    put_byte(&w->buf, RDB_OP_SELECTDB);
    put_len(&w->buf, (uint64_t)id);
    put_byte(&w->buf, RDB_OP_RESIZEDB);
    put_len(&w->buf, n);
    put_len(&w->buf, store_expires_count(st));
    store_walk(st, put_key, w);
}

int persist_rdb_end(persist_rdb_writer *w)
{
    put_byte(&w->buf, RDB_OP_EOF);
    w->crc = w->opts.rdbchecksum ? persist_crc64(w->crc, w->buf.p, w->buf.len) : 0;
    unsigned char crc[8];
    for (int i = 0; i < 8; i++) crc[i] = (unsigned char)(w->crc >> (8 * i));
    if (!w->failed && w->sink(w->buf.p, w->buf.len, w->sink_ctx) != 0) w->failed = 1;
    if (!w->failed && w->sink(crc, sizeof crc, w->sink_ctx) != 0) w->failed = 1;
    persist_buf_free(&w->buf);
    persist_buf_free(&w->value);
    scratch_free(w->scratch);
    persist_lzf_table_free(w->lzf);
    w->lzf = NULL;
    return w->failed ? PERSIST_ERR_IO : PERSIST_OK;
}
