/* value_stream.c - stream values (stream.h): nodes of packed entries in
 * ID order, found by binary search over their first IDs, and trimming. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "stream.h"

store_stream *store_stream_of(store_key *k) { return STORE_KV(k)->st; }
const store_stream *store_stream_of_const(const store_key *k) { return STORE_KV(k)->st; }

static const char *item_skip(const char *p)
{
    size_t len;
    p += pack_varint_get(p, &len);
    return p + len;
}

void store_sentry_pair(store_spos *pos, const char **f, size_t *flen, const char **v, size_t *vlen)
{
    const char *fp = pos->mp ? pos->mp : pos->p;
    fp += pack_varint_get(fp, flen);
    *f = fp;
    fp += *flen;
    if (pos->mp) pos->mp = item_skip(fp);   /* past the first entry's value */
    else pos->p = fp;
    pos->p += pack_varint_get(pos->p, vlen);
    *v = pos->p;
    pos->p += *vlen;
}

void store_sentry_foreach(const store_sentry *e, store_field_fn fn, void *ctx)
{
    store_spos pos = {e->p, e->mp};
    const char *f, *v;
    size_t flen, vlen;
    for (size_t i = 0; i < e->pairs; i++) {
        store_sentry_pair(&pos, &f, &flen, &v, &vlen);
        fn(f, flen, v, vlen, ctx);
    }
}

/* The items of node n's first entry (its header skipped), and how many pairs. */
static const char *master_items(const store_snode *n, size_t *pairs)
{
    const char *p = n->buf + 1;
    size_t x;
    p += pack_varint_get(p, &x);
    p += pack_varint_get(p, &x);
    p += pack_varint_get(p, pairs);
    return p;
}

/* Decode the entry at p of node n into e; *deleted its flag; returns the next entry. */
static const char *entry_read(const store_snode *n, const char *p, store_sentry *e, int *deleted)
{
    size_t dms, seq;
    unsigned flags = (unsigned char)*p++;
    *deleted = flags & STORE_SENTRY_DELETED;
    p += pack_varint_get(p, &dms);
    p += pack_varint_get(p, &seq);
    p += pack_varint_get(p, &e->pairs);
    e->id.ms = n->first.ms + dms;
    e->id.seq = seq;
    e->p = p;
    e->mp = NULL;
    size_t items = 2 * e->pairs;
    if (flags & STORE_SENTRY_SAME) {
        size_t mpairs;
        e->mp = master_items(n, &mpairs);
        items = e->pairs;
    }
    for (size_t i = 0; i < items; i++) p = item_skip(p);
    return p;
}

/* The n items' fields (f[0], f[2], ...) are those of node nd's first entry. */
static int same_fields(const store_snode *nd, const char *const *f, const size_t *lens, size_t n)
{
    size_t pairs;
    const char *p = master_items(nd, &pairs);
    if (pairs != n / 2) return 0;
    for (size_t i = 0; i < n; i += 2) {
        size_t len;
        p += pack_varint_get(p, &len);
        if (len != lens[i] || memcmp(p, f[i], len)) return 0;
        p = item_skip(p + len);
    }
    return 1;
}

static void node_free(store *s, store_snode *n) { store_mem_free(&s->used_memory, n->buf); }

/* Drop nodes [i, i + cnt) from the array. */
static void nodes_remove(store *s, store_stream *st, uint32_t i, uint32_t cnt)
{
    for (uint32_t j = i; j < i + cnt; j++) node_free(s, &st->nodes[j]);
    memmove(st->nodes + i, st->nodes + i + cnt, (st->nnodes - i - cnt) * sizeof *st->nodes);
    st->nnodes -= cnt;
}

static void first_refresh(store_stream *st)
{
    if (!store_stream_edge(st, 0, &st->first)) st->first = (store_sid){0, 0};
}

static store_snode *node_push(store *s, store_stream *st, store_sid first);
static void node_put(store *s, store_snode *nd, store_sid id, const char *const *f, const size_t *lens, size_t n,
                     int deleted);

void store_stream_append(store *s, store_stream *st, store_sid id, const char *const *f,
                         const size_t *lens, size_t n, long long max_entries, long long max_bytes)
{
    size_t payload = 0;
    for (size_t i = 0; i < n; i++) payload += lens[i];
    store_snode *nd = st->nnodes ? &st->nodes[st->nnodes - 1] : NULL;
    /* Redis's rule: a node is full at max_bytes (with the new entry's
     * fields and values) or at max_entries entries, deleted ones counted. */
    if (!nd || (max_bytes && nd->bytes + payload >= (unsigned long long)max_bytes) ||
        (max_entries && nd->total >= (unsigned long long)max_entries))
        nd = node_push(s, st, id);
    node_put(s, nd, id, f, lens, n, 0);
    st->len++;
    st->last = id;
    st->entries_added++;
    if (st->len == 1) st->first = id;
}

/* Index of the last node whose first ID <= id, or -1. */
static long node_find(const store_stream *st, store_sid id)
{
    long lo = 0, hi = (long)st->nnodes - 1, ans = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (store_sid_cmp(st->nodes[mid].first, id) <= 0) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

/* Offsets of a node's entries, for walking it backwards: a stack buffer
 * covers default-sized nodes, a bigger one is allocated. */
#define OFFS_STACK 256

size_t store_stream_range(const store_stream *st, store_sid start, store_sid end, int rev,
                          size_t count, store_sentry_fn fn, void *ctx)
{
    size_t seen = 0;
    if (store_sid_cmp(start, end) > 0 || !st->nnodes) return 0;
    store_sentry e;
    int del;
    if (!rev) {
        long i = node_find(st, start);
        if (i < 0) i = 0;
        for (; i < (long)st->nnodes; i++) {
            const store_snode *n = &st->nodes[i];
            if (store_sid_cmp(n->first, end) > 0) return seen;
            if (store_sid_cmp(n->last, start) < 0 || !n->live) continue;
            const char *p = n->buf, *stop = n->buf + n->bytes;
            while (p < stop) {
                p = entry_read(n, p, &e, &del);
                if (del || store_sid_cmp(e.id, start) < 0) continue;
                if (store_sid_cmp(e.id, end) > 0) return seen;
                seen++;
                if (fn(&e, ctx) || seen == count) return seen;
            }
        }
        return seen;
    }
    uint32_t stack[OFFS_STACK];
    for (long i = node_find(st, end); i >= 0; i--) {
        const store_snode *n = &st->nodes[i];
        if (store_sid_cmp(n->last, start) < 0) return seen;
        if (!n->live) continue;
        uint32_t *offs = n->total <= OFFS_STACK ? stack : store_xmalloc(n->total * sizeof *offs);
        const char *p = n->buf;
        for (uint32_t j = 0; j < n->total; j++) {
            offs[j] = (uint32_t)(p - n->buf);
            p = entry_read(n, p, &e, &del);
        }
        int done = 0;
        for (uint32_t j = n->total; j-- > 0 && !done;) {
            entry_read(n, n->buf + offs[j], &e, &del);
            if (del || store_sid_cmp(e.id, end) > 0) continue;
            if (store_sid_cmp(e.id, start) < 0) {
                done = 1;
                break;
            }
            seen++;
            if (fn(&e, ctx) || seen == count) done = 1;
        }
        if (offs != stack) free(offs);
        if (done) return seen;
    }
    return seen;
}

int store_stream_delete(store *s, store_stream *st, store_sid id)
{
    long i = node_find(st, id);
    if (i < 0) return 0;
    store_snode *n = &st->nodes[i];
    char *p = n->buf, *stop = n->buf + n->bytes;
    store_sentry e;
    int del;
    while (p < stop) {
        char *at = p;
        p = (char *)entry_read(n, p, &e, &del);
        int c = store_sid_cmp(e.id, id);
        if (c > 0) return 0;
        if (c < 0 || del) continue;
        *at |= STORE_SENTRY_DELETED;
        n->live--;
        st->len--;
        if (!n->live) nodes_remove(s, st, (uint32_t)i, 1);
        if (store_sid_cmp(id, st->max_deleted) > 0) st->max_deleted = id;
        if (!store_sid_cmp(id, st->first)) first_refresh(st);
        return 1;
    }
    return 0;
}

size_t store_stream_trim(store *s, store_stream *st, int by_minid, uint64_t maxlen,
                         store_sid minid, int approx, long long limit)
{
    size_t deleted = 0;
    uint32_t whole = 0;
    while (whole < st->nnodes) {
        store_snode *n = &st->nodes[whole];
        if (by_minid ? store_sid_cmp(n->last, minid) >= 0 : st->len - deleted - n->live < maxlen) break;
        if (limit && deleted + n->live > (unsigned long long)limit) break;
        deleted += n->live;
        whole++;
    }
    if (whole) nodes_remove(s, st, 0, whole);
    st->len -= deleted;
    if (!approx && st->nnodes) {
        store_snode *n = &st->nodes[0];
        char *p = n->buf, *stop = n->buf + n->bytes;
        store_sentry e;
        int del;
        while (p < stop && (by_minid || st->len > maxlen)) {
            char *at = p;
            p = (char *)entry_read(n, p, &e, &del);
            if (del) continue;
            if (by_minid && store_sid_cmp(e.id, minid) >= 0) break;
            *at |= STORE_SENTRY_DELETED;
            n->live--;
            st->len--;
            deleted++;
        }
        if (!n->live) nodes_remove(s, st, 0, 1);
    }
    if (deleted) first_refresh(st);
    return deleted;
}

int store_stream_edge(const store_stream *st, int last, store_sid *id)
{
    if (!st->len) return 0;
    store_sentry e;
    int del;
    /* nodes with no live entry are removed, so the edge node has one */
    const store_snode *n = &st->nodes[last ? st->nnodes - 1 : 0];
    const char *p = n->buf, *stop = n->buf + n->bytes;
    int found = 0;
    while (p < stop) {
        p = entry_read(n, p, &e, &del);
        if (del) continue;
        *id = e.id;
        found = 1;
        if (!last) break;
    }
    return found;
}

size_t store_stream_nodes(const store_stream *st) { return st->nnodes; }

void store_stream_node_walk(const store_stream *st, size_t i, store_sentry_all_fn fn, void *ctx)
{
    const store_snode *n = &st->nodes[i];
    const char *p = n->buf, *stop = n->buf + n->bytes;
    store_sentry e;
    int del;
    while (p < stop) {
        p = entry_read(n, p, &e, &del);
        if (fn(&e, del, ctx)) return;
    }
}

/* A new node at the tail starting at first. */
static store_snode *node_push(store *s, store_stream *st, store_sid first)
{
    store_snode *nd = st->nnodes ? &st->nodes[st->nnodes - 1] : NULL;
    if (nd && nd->cap > nd->bytes) {   /* a full node takes no more: give back its slack */
        nd->buf = store_mem_realloc(&s->used_memory, nd->buf, nd->bytes);
        nd->cap = nd->bytes;
    }
    if (st->nnodes == st->ncap) {
        st->ncap = st->ncap ? st->ncap * 2 : 4;
        st->nodes = store_mem_realloc(&s->used_memory, st->nodes, st->ncap * sizeof *st->nodes);
    }
    nd = &st->nodes[st->nnodes++];
    memset(nd, 0, sizeof *nd);
    nd->first = first;
    return nd;
}

/* Entry id with n items at the end of node nd. */
static void node_put(store *s, store_snode *nd, store_sid id, const char *const *f, const size_t *lens, size_t n,
                     int deleted)
{
    int same = nd->total && same_fields(nd, f, lens, n);   /* values only: Redis's SAMEFIELDS */
    size_t need = 1 + 3 * 10;   /* flag, three varints at most, the items */
    for (size_t i = same; i < n; i += 1 + same) need += pack_varint_len(lens[i]) + lens[i];
    if (nd->bytes + need > nd->cap) {
        size_t cap = nd->cap ? nd->cap * 2 : 64;
        while (cap < nd->bytes + need) cap *= 2;
        nd->buf = store_mem_realloc(&s->used_memory, nd->buf, cap);
        nd->cap = (uint32_t)cap;
    }
    char *w = nd->buf + nd->bytes;
    *w++ = (char)((deleted ? STORE_SENTRY_DELETED : 0) | (same ? STORE_SENTRY_SAME : 0));
    w += pack_varint_put(w, id.ms - nd->first.ms);
    w += pack_varint_put(w, id.seq);
    w += pack_varint_put(w, n / 2);
    for (size_t i = same; i < n; i += 1 + same) {
        w += pack_varint_put(w, lens[i]);
        memcpy(w, f[i], lens[i]);
        w += lens[i];
    }
    nd->bytes = (uint32_t)(w - nd->buf);
    nd->last = id;
    nd->live += !deleted;
    nd->total++;
}

void store_stream_append_raw(store *s, store_stream *st, store_sid id, const char *const *f, const size_t *lens,
                             size_t n, int deleted, int new_node, store_sid node_first)
{
    store_snode *nd = new_node || !st->nnodes ? node_push(s, st, node_first) : &st->nodes[st->nnodes - 1];
    node_put(s, nd, id, f, lens, n, deleted);
}

/* ---- the key's side (store.c's per-type hooks) ---- */

void store_stream_key_init(store *s, store_key *k)
{
    k->enc = STORE_ENC_STREAM;
    store_stream *st = store_mem_alloc(&s->used_memory, sizeof *st);
    memset(st, 0, sizeof *st);
    STORE_KV(k)->st = st;
}

void store_stream_key_free(store *s, store_key *k)
{
    store_stream *st = STORE_KV(k)->st;
    store_stream_groups_free(s, st);
    for (uint32_t i = 0; i < st->nnodes; i++) node_free(s, &st->nodes[i]);
    store_mem_free(&s->used_memory, st->nodes);
    store_mem_free(&s->used_memory, st);
}

void store_stream_key_dup(store *s, store_key *dst, const store_key *src)
{
    const store_stream *a = STORE_KV(src)->st;
    store_stream *b = STORE_KV(dst)->st;
    store_snode *nodes = b->nodes;
    *b = *a;
    b->nodes = nodes;
    b->ncap = b->nnodes;
    store_stream_groups_dup(s, b, a);
    if (!b->nnodes) return;
    b->nodes = store_mem_alloc(&s->used_memory, b->nnodes * sizeof *b->nodes);
    for (uint32_t i = 0; i < b->nnodes; i++) {
        b->nodes[i] = a->nodes[i];
        b->nodes[i].cap = a->nodes[i].bytes;
        b->nodes[i].buf = store_mem_alloc(&s->used_memory, a->nodes[i].bytes ? a->nodes[i].bytes : 1);
        memcpy(b->nodes[i].buf, a->nodes[i].buf, a->nodes[i].bytes);
    }
}
