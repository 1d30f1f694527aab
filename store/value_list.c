/* value_list.c - list values: packed chunks of up to 128 entries / 8 KiB
 * (pack.c). A list that fits one chunk keeps it inside the key entry;
 * past that, an array of chunks. No list allocates per element. */
#include "store_internal.h"

#include <string.h>

struct store_list {
    store_packed *chunks;
    size_t nchunks, cap;
    size_t count;          /* elements over all chunks */
};

/* An element's place: chunk ci, entry idx within it. */
typedef struct list_pos {
    size_t ci, idx;
} list_pos;

size_t store_list_chunks(const store_key *k) { return STORE_KV(k)->ql->nchunks; }

void store_list_init(store_key *k)
{
    k->enc = STORE_ENC_LIST_SMALL;
    memset(&STORE_KV(k)->pk, 0, sizeof(STORE_KV(k)->pk));
}

void store_list_free(store *s, store_key *k)
{
    if (k->enc == STORE_ENC_LIST_SMALL) {
        pack_free(s, &STORE_KV(k)->pk);
        return;
    }
    store_list *l = STORE_KV(k)->ql;
    for (size_t i = 0; i < l->nchunks; i++) pack_free(s, &l->chunks[i]);
    store_mem_free(&s->used_memory, l->chunks);
    store_mem_free(&s->used_memory, l);
}

/* Both representations seen as an array of chunks. */
static store_packed *chunks_of(const store_key *k, size_t *n)
{
    if (k->enc == STORE_ENC_LIST_SMALL) {
        *n = 1;
        return (store_packed *)&STORE_KV(k)->pk;
    }
    *n = STORE_KV(k)->ql->nchunks;
    return STORE_KV(k)->ql->chunks;
}

size_t store_list_len(const store_key *k)
{
    return k->enc == STORE_ENC_LIST_SMALL ? STORE_KV(k)->pk.count : STORE_KV(k)->ql->count;
}

/* Walks chunk by chunk, from whichever end is nearer. i < length. */
static list_pos locate(const store_key *k, size_t i)
{
    size_t n, len = store_list_len(k);
    const store_packed *c = chunks_of(k, &n);
    list_pos p = {0, i};
    if (i < len / 2) {
        while (p.idx >= c[p.ci].count) p.idx -= c[p.ci++].count;
        return p;
    }
    size_t back = len - i;   /* 1 = the last element */
    p.ci = n - 1;
    while (back > c[p.ci].count) back -= c[p.ci--].count;
    p.idx = c[p.ci].count - back;
    return p;
}

/* From 0-based or negative (from the tail) to an index inside the list. */
static int normalize(const store_key *k, long long idx, size_t *out)
{
    long long len = (long long)store_list_len(k);
    if (idx < 0) idx += len;
    if (idx < 0 || idx >= len) return 0;
    *out = (size_t)idx;
    return 1;
}

/* ---- chunk array upkeep ---- */

static void to_chunks(store *s, store_key *k)
{
    store_list *l = store_mem_alloc(&s->used_memory, sizeof(*l));
    l->cap = 4;
    l->chunks = store_mem_alloc(&s->used_memory, l->cap * sizeof(*l->chunks));
    l->chunks[0] = STORE_KV(k)->pk;
    l->nchunks = 1;
    l->count = STORE_KV(k)->pk.count;
    STORE_KV(k)->ql = l;
    k->enc = STORE_ENC_LIST_CHUNKS;
}

/* A new empty chunk at ci (later ones move up). */
static void chunk_open(store *s, store_list *l, size_t ci)
{
    if (l->nchunks == l->cap) {
        l->cap *= 2;
        l->chunks = store_mem_realloc(&s->used_memory, l->chunks, l->cap * sizeof(*l->chunks));
    }
    memmove(&l->chunks[ci + 1], &l->chunks[ci], (l->nchunks - ci) * sizeof(*l->chunks));
    memset(&l->chunks[ci], 0, sizeof(*l->chunks));
    l->nchunks++;
}

/* Drop chunk ci, which is empty (so it holds no buffer). */
static void chunk_close(store_list *l, size_t ci)
{
    memmove(&l->chunks[ci], &l->chunks[ci + 1], (l->nchunks - ci - 1) * sizeof(*l->chunks));
    l->nchunks--;
}

static int overfull(const store_packed *c)
{
    return c->count > 1 &&
           (c->count > STORE_LIST_CHUNK_ENTRIES || c->bytes > STORE_LIST_CHUNK_BYTES);
}

/* After chunk ci grew: split it until every part fits. `at` says where to
 * cut first: right after a head push or before a tail push, so chunks
 * filled by pushes stay full; 0 means the middle. */
static void rebalance(store *s, store_key *k, size_t ci, size_t at)
{
    size_t n;
    if (!overfull(&chunks_of(k, &n)[ci])) return;
    if (k->enc == STORE_ENC_LIST_SMALL) to_chunks(s, k);
    store_list *l = STORE_KV(k)->ql;
    if (at < 1 || at >= l->chunks[ci].count) at = l->chunks[ci].count / 2;
    chunk_open(s, l, ci + 1);
    pack_split(s, &l->chunks[ci], at, &l->chunks[ci + 1]);
    /* the later part first: splitting it does not move chunk ci */
    rebalance(s, k, ci + 1, 0);
    rebalance(s, k, ci, 0);
}

static void insert_at(store *s, store_key *k, list_pos p, const char *v, size_t len, size_t at)
{
    size_t n;
    store_packed *c = &chunks_of(k, &n)[p.ci];
    pack_item it = {v, len};
    pack_insert(s, c, pack_offset(c, p.idx), &it, 1);
    if (k->enc == STORE_ENC_LIST_CHUNKS) STORE_KV(k)->ql->count++;
    rebalance(s, k, p.ci, at);
}

/* Remove cnt entries of chunk ci from byte offset off; 1 if that emptied
 * the chunk and it was dropped (the next chunk is now ci). */
static int drop_entries(store *s, store_key *k, size_t ci, size_t off, size_t cnt)
{
    size_t n;
    store_packed *c = &chunks_of(k, &n)[ci];
    pack_delete(s, c, off, cnt);
    if (k->enc != STORE_ENC_LIST_CHUNKS) return 0;
    STORE_KV(k)->ql->count -= cnt;
    if (c->count) return 0;
    chunk_close(STORE_KV(k)->ql, ci);
    return 1;
}

/* ---- the API ---- */

void store_list_push(store *s, store_key *k, int where, const char *v, size_t len)
{
    size_t n;
    const store_packed *c = chunks_of(k, &n);
    if (n == 0) {   /* emptied by removals but not deleted yet */
        chunk_open(s, STORE_KV(k)->ql, 0);
        c = chunks_of(k, &n);
    }
    if (where == STORE_HEAD) {
        insert_at(s, k, (list_pos){0, 0}, v, len, 1);
    } else {
        list_pos p = {n - 1, c[n - 1].count};
        insert_at(s, k, p, v, len, p.idx);
    }
}

const char *store_list_index(const store_key *k, long long idx, size_t *len)
{
    size_t i, n;
    const char *data;
    if (!normalize(k, idx, &i)) return NULL;
    list_pos p = locate(k, i);
    const store_packed *c = &chunks_of(k, &n)[p.ci];
    pack_next(c, pack_offset(c, p.idx), &data, len);
    return data;
}

/* Towards the head from p: chunk by chunk, each one's entries backwards. */
static void visit_back(const store_packed *c, list_pos p, size_t n, store_elem_fn fn, void *ctx)
{
    uint32_t offs[STORE_LIST_CHUNK_ENTRIES];
    const char *data;
    size_t len, ci = p.ci, j = p.idx + 1;
    for (;;) {
        pack_offsets(&c[ci], offs);
        for (; j-- > 0 && n; n--) {
            pack_next(&c[ci], offs[j], &data, &len);
            fn(data, len, ctx);
        }
        if (!n) return;
        j = c[--ci].count;
    }
}

void store_list_range(const store_key *k, size_t start, size_t n, int reverse,
                      store_elem_fn fn, void *ctx)
{
    size_t nc, len;
    const char *data;
    if (n == 0) return;
    const store_packed *c = chunks_of(k, &nc);
    list_pos p = locate(k, start);
    if (reverse) {
        visit_back(c, p, n, fn, ctx);
        return;
    }
    size_t off = pack_offset(&c[p.ci], p.idx);
    while (n--) {
        while (off == c[p.ci].bytes) {
            p.ci++;
            off = 0;
        }
        off = pack_next(&c[p.ci], off, &data, &len);
        fn(data, len, ctx);
    }
}

void store_list_del_range(store *s, store_key *k, size_t start, size_t n)
{
    if (n == 0) return;
    list_pos p = locate(k, start);
    while (n) {
        size_t nc;
        store_packed *c = &chunks_of(k, &nc)[p.ci];
        size_t take = c->count - p.idx < n ? c->count - p.idx : n;
        n -= take;
        if (!drop_entries(s, k, p.ci, pack_offset(c, p.idx), take)) p.ci++;
        p.idx = 0;
    }
}

int store_list_set(store *s, store_key *k, long long idx, const char *v, size_t len)
{
    size_t i, n;
    if (!normalize(k, idx, &i)) return 0;
    list_pos p = locate(k, i);
    store_packed *c = &chunks_of(k, &n)[p.ci];
    size_t off = pack_offset(c, p.idx);
    pack_item it = {v, len};
    pack_delete(s, c, off, 1);
    pack_insert(s, c, off, &it, 1);
    rebalance(s, k, p.ci, 0);
    return 1;
}

long long store_list_insert(store *s, store_key *k, int after, const char *pivot,
                            size_t plen, const char *v, size_t len)
{
    size_t nc, elen;
    const char *data;
    const store_packed *c = chunks_of(k, &nc);
    for (size_t ci = 0; ci < nc; ci++) {
        size_t off = 0;
        for (size_t j = 0; j < c[ci].count; j++) {
            off = pack_next(&c[ci], off, &data, &elen);
            if (!pack_entry_is(data, elen, pivot, plen)) continue;
            insert_at(s, k, (list_pos){ci, j + (after != 0)}, v, len, 0);
            return (long long)store_list_len(k);
        }
    }
    return -1;
}

static size_t remove_forward(store *s, store_key *k, size_t limit, const char *v, size_t len)
{
    size_t removed = 0, nc, ci = 0, elen;
    const char *data;
    chunks_of(k, &nc);
    while (ci < nc && removed < limit) {
        const store_packed *c = &chunks_of(k, &nc)[ci];
        size_t off = 0;
        int closed = 0;
        while (off < c->bytes && removed < limit && !closed) {
            size_t next = pack_next(c, off, &data, &elen);
            if (!pack_entry_is(data, elen, v, len)) {
                off = next;
                continue;
            }
            removed++;
            closed = drop_entries(s, k, ci, off, 1);   /* the next entry slides to off */
        }
        chunks_of(k, &nc);
        if (!closed) ci++;
    }
    return removed;
}

static size_t remove_backward(store *s, store_key *k, size_t limit, const char *v, size_t len)
{
    uint32_t offs[STORE_LIST_CHUNK_ENTRIES];
    size_t removed = 0, nc, elen;
    const char *data;
    chunks_of(k, &nc);
    for (size_t ci = nc; ci-- > 0 && removed < limit;) {
        const store_packed *c = &chunks_of(k, &nc)[ci];
        pack_offsets(c, offs);
        /* deleting from the back leaves the earlier offsets valid */
        for (size_t j = c->count; j-- > 0 && removed < limit;) {
            pack_next(c, offs[j], &data, &elen);
            if (!pack_entry_is(data, elen, v, len)) continue;
            removed++;
            if (drop_entries(s, k, ci, offs[j], 1)) break;
        }
    }
    return removed;
}

size_t store_list_remove(store *s, store_key *k, long long count, const char *v, size_t len)
{
    if (count >= 0) return remove_forward(s, k, count ? (size_t)count : SIZE_MAX, v, len);
    /* -count without overflowing at LLONG_MIN */
    return remove_backward(s, k, (size_t)(-(count + 1)) + 1, v, len);
}

/* Chunk for chunk: the copy is laid out as the original is. */
void store_list_dup(store *s, store_key *dst, const store_key *src)
{
    if (src->enc == STORE_ENC_LIST_SMALL) {
        pack_dup(s, &STORE_KV(src)->pk, &STORE_KV(dst)->pk);
        return;
    }
    const store_list *from = STORE_KV(src)->ql;
    store_list *l = store_mem_alloc(&s->used_memory, sizeof(*l));
    l->cap = from->nchunks ? from->nchunks : 1;
    l->chunks = store_mem_alloc(&s->used_memory, l->cap * sizeof(*l->chunks));
    for (size_t i = 0; i < from->nchunks; i++) pack_dup(s, &from->chunks[i], &l->chunks[i]);
    l->nchunks = from->nchunks;
    l->count = from->count;
    STORE_KV(dst)->ql = l;
    dst->enc = STORE_ENC_LIST_CHUNKS;
}
