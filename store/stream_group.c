/* stream_group.c - streams' consumer groups (stream.h): the ID-ordered
 * chunked maps that hold PELs, groups and consumers, and the lag rules. */
#include <string.h>

#include "store_internal.h"
#include "stream.h"

#define STORE_SIDMAP_CHUNK 64

/* A run of entries in ID order: [store_sid][vsize bytes] each, from
 * slot off on (acknowledging in order takes the front: no memmove). */
struct store_sidchunk {
    uint32_t n, cap, off;
    uint32_t pad;   /* the entries' IDs are 8-byte aligned */
    char e[];
};

static size_t esize(const store_sidmap *m) { return sizeof(store_sid) + m->vsize; }

static store_sid *ekey(const store_sidmap *m, struct store_sidchunk *c, uint32_t i)
{
    return (store_sid *)(void *)(c->e + (c->off + i) * esize(m));
}

static void *eval(const store_sidmap *m, struct store_sidchunk *c, uint32_t i)
{
    return c->e + (c->off + i) * esize(m) + sizeof(store_sid);
}

void store_sidmap_init(store_sidmap *m, uint32_t vsize)
{
    memset(m, 0, sizeof *m);
    m->vsize = vsize;
}

void store_sidmap_free(store *s, store_sidmap *m)
{
    for (uint32_t i = 0; i < m->nchunks; i++) store_mem_free(&s->used_memory, m->chunks[i]);
    store_mem_free(&s->used_memory, m->chunks);
    store_sidmap_init(m, m->vsize);
}

/* The last chunk whose first ID <= id (0 when id is below them all). */
static uint32_t chunk_find(const store_sidmap *m, store_sid id)
{
    long lo = 0, hi = (long)m->nchunks - 1, ans = 0;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (store_sid_cmp(*ekey(m, m->chunks[mid], 0), id) <= 0) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return (uint32_t)ans;
}

/* The first position in c whose ID >= id. */
static uint32_t pos_find(const store_sidmap *m, struct store_sidchunk *c, store_sid id)
{
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (store_sid_cmp(*ekey(m, c, mid), id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void *store_sidmap_get(const store_sidmap *m, store_sid id)
{
    if (!m->nchunks) return NULL;
    struct store_sidchunk *c = m->chunks[chunk_find(m, id)];
    uint32_t p = pos_find(m, c, id);
    if (p < c->n && !store_sid_cmp(*ekey(m, c, p), id)) return eval(m, c, p);
    return NULL;
}

static struct store_sidchunk *chunk_new(store *s, const store_sidmap *m, uint32_t cap)
{
    struct store_sidchunk *c = store_mem_alloc(&s->used_memory, sizeof *c + cap * esize(m));
    c->n = c->off = 0;
    c->cap = cap;
    return c;
}

/* A new empty chunk at index at. */
static void chunk_insert(store *s, store_sidmap *m, uint32_t at, struct store_sidchunk *c)
{
    if (m->nchunks == m->ccap) {
        m->ccap = m->ccap ? m->ccap * 2 : 4;
        m->chunks = store_mem_realloc(&s->used_memory, m->chunks, m->ccap * sizeof *m->chunks);
    }
    memmove(m->chunks + at + 1, m->chunks + at, (m->nchunks - at) * sizeof *m->chunks);
    m->chunks[at] = c;
    m->nchunks++;
}

void *store_sidmap_put(store *s, store_sidmap *m, store_sid id, int *created)
{
    *created = 0;
    if (!m->nchunks) chunk_insert(s, m, 0, chunk_new(s, m, 4));
    uint32_t ci = chunk_find(m, id);
    struct store_sidchunk *c = m->chunks[ci];
    uint32_t p = pos_find(m, c, id);
    if (p < c->n && !store_sid_cmp(*ekey(m, c, p), id)) return eval(m, c, p);
    size_t es = esize(m);
    if (c->n == STORE_SIDMAP_CHUNK) {
        if (p == c->n && ci == m->nchunks - 1) {   /* appending: a fresh chunk keeps the full one full */
            c = chunk_new(s, m, 4);
            chunk_insert(s, m, ++ci, c);
            p = 0;
        } else {   /* split in halves */
            struct store_sidchunk *r = chunk_new(s, m, STORE_SIDMAP_CHUNK);
            uint32_t half = c->n / 2;
            r->n = c->n - half;
            memcpy(r->e, c->e + (c->off + half) * es, r->n * es);
            c->n = half;
            chunk_insert(s, m, ci + 1, r);
            if (p > half) {
                c = r;
                p -= half;
                ci++;
            }
        }
    }
    if (c->off && c->off + c->n == c->cap) {   /* room at the front: close it up */
        memmove(c->e, c->e + c->off * es, c->n * es);
        c->off = 0;
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap * 2 > STORE_SIDMAP_CHUNK ? STORE_SIDMAP_CHUNK : c->cap * 2;
        struct store_sidchunk *g = store_mem_realloc(&s->used_memory, c, sizeof *c + cap * es);
        g->cap = cap;
        m->chunks[ci] = g;
        c = g;
    }
    char *base = c->e + c->off * es;
    memmove(base + (p + 1) * es, base + p * es, (c->n - p) * es);
    c->n++;
    *ekey(m, c, p) = id;
    void *v = eval(m, c, p);
    memset(v, 0, m->vsize);
    m->count++;
    *created = 1;
    return v;
}

int store_sidmap_del(store *s, store_sidmap *m, store_sid id)
{
    if (!m->nchunks) return 0;
    uint32_t ci = chunk_find(m, id);
    struct store_sidchunk *c = m->chunks[ci];
    uint32_t p = pos_find(m, c, id);
    if (p >= c->n || store_sid_cmp(*ekey(m, c, p), id)) return 0;
    size_t es = esize(m);
    if (p == 0) {
        c->off++;
    } else {
        char *base = c->e + c->off * es;
        memmove(base + p * es, base + (p + 1) * es, (c->n - p - 1) * es);
    }
    c->n--;
    m->count--;
    if (!c->n) {
        store_mem_free(&s->used_memory, c);
        memmove(m->chunks + ci, m->chunks + ci + 1, (m->nchunks - ci - 1) * sizeof *m->chunks);
        m->nchunks--;
        if (!m->nchunks) store_sidmap_free(s, m);
    }
    return 1;
}

void store_sidmap_seek(const store_sidmap *m, store_sid id, store_sidmap_it *it)
{
    it->ci = it->ei = 0;
    if (!m->nchunks) return;
    it->ci = chunk_find(m, id);
    it->ei = pos_find(m, m->chunks[it->ci], id);
    if (it->ei == m->chunks[it->ci]->n) {
        it->ci++;
        it->ei = 0;
    }
}

int store_sidmap_next(const store_sidmap *m, store_sidmap_it *it, store_sid *id, void **val)
{
    if (it->ci >= m->nchunks) return 0;
    struct store_sidchunk *c = m->chunks[it->ci];
    *id = *ekey(m, c, it->ei);
    if (val) *val = eval(m, c, it->ei);
    if (++it->ei == c->n) {
        it->ci++;
        it->ei = 0;
    }
    return 1;
}

int store_sidmap_edge(const store_sidmap *m, int last, store_sid *id)
{
    if (!m->count) return 0;
    struct store_sidchunk *c = m->chunks[last ? m->nchunks - 1 : 0];
    *id = *ekey(m, c, last ? c->n - 1 : 0);
    return 1;
}

/* ---- groups and consumers: arrays sorted by name as rax orders keys
 * (bytes compared, a prefix first) ---- */

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

/* The index of name in arr (n elements with name and nlen, sorted), or
 * where it would go as -(index) - 1. */
#define NAMED_FIND(arr, n, name, len)                                          \
    do {                                                                        \
        long lo_ = 0, hi_ = (long)(n) - 1;                                      \
        while (lo_ <= hi_) {                                                    \
            long mid_ = (lo_ + hi_) / 2;                                        \
            int c_ = name_cmp((arr)[mid_]->name, (arr)[mid_]->nlen, name, len); \
            if (!c_) return mid_;                                               \
            if (c_ < 0) lo_ = mid_ + 1;                                         \
            else hi_ = mid_ - 1;                                                \
        }                                                                       \
        return -lo_ - 1;                                                        \
    } while (0)

static long group_index(const store_stream *st, const char *name, size_t len)
{
    NAMED_FIND(st->groups, st->ngroups, name, len);
}

static long consumer_index(const store_sgroup *g, const char *name, size_t len)
{
    NAMED_FIND(g->consumers, g->nconsumers, name, len);
}

/* Room for one more pointer at index at of a sorted array. */
static void **slot_open(store *s, void ***arr, uint32_t *n, uint32_t *cap, long at)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 2;
        *arr = store_mem_realloc(&s->used_memory, *arr, *cap * sizeof **arr);
    }
    memmove(*arr + at + 1, *arr + at, (*n - (uint32_t)at) * sizeof **arr);
    (*n)++;
    return *arr + at;
}

store_sgroup *store_sgroup_find(const store_stream *st, const char *name, size_t len)
{
    long i = group_index(st, name, len);
    return i >= 0 ? st->groups[i] : NULL;
}

store_sgroup *store_sgroup_create(store *s, store_stream *st, const char *name, size_t len, store_sid last,
                                  long long entries_read)
{
    long i = group_index(st, name, len);
    if (i >= 0) return NULL;
    store_sgroup *g = store_mem_alloc(&s->used_memory, sizeof *g + len);
    memset(g, 0, sizeof *g);
    g->last_id = last;
    g->entries_read = entries_read;
    store_sidmap_init(&g->pel, sizeof(store_snack));
    g->nlen = (uint32_t)len;
    memcpy(g->name, name, len);
    *slot_open(s, (void ***)&st->groups, &st->ngroups, &st->gcap, -i - 1) = g;
    return g;
}

static void consumer_free(store *s, store_sconsumer *c)
{
    store_sidmap_free(s, &c->pel);
    store_mem_free(&s->used_memory, c);
}

static void group_free(store *s, store_sgroup *g)
{
    for (uint32_t i = 0; i < g->nconsumers; i++) consumer_free(s, g->consumers[i]);
    store_mem_free(&s->used_memory, g->consumers);
    store_sidmap_free(s, &g->pel);
    store_mem_free(&s->used_memory, g);
}

int store_sgroup_destroy(store *s, store_stream *st, const char *name, size_t len)
{
    long i = group_index(st, name, len);
    if (i < 0) return 0;
    group_free(s, st->groups[i]);
    memmove(st->groups + i, st->groups + i + 1, (st->ngroups - (uint32_t)i - 1) * sizeof *st->groups);
    st->ngroups--;
    return 1;
}

store_sconsumer *store_sconsumer_find(const store_sgroup *g, const char *name, size_t len)
{
    long i = consumer_index(g, name, len);
    return i >= 0 ? g->consumers[i] : NULL;
}

store_sconsumer *store_sconsumer_create(store *s, store_sgroup *g, const char *name, size_t len, uint64_t now)
{
    long i = consumer_index(g, name, len);
    if (i >= 0) return NULL;
    store_sconsumer *c = store_mem_alloc(&s->used_memory, sizeof *c + len);
    c->seen_time = now;
    store_sidmap_init(&c->pel, 0);
    c->nlen = (uint32_t)len;
    memcpy(c->name, name, len);
    *slot_open(s, (void ***)&g->consumers, &g->nconsumers, &g->ccap, -i - 1) = c;
    return c;
}

uint64_t store_sconsumer_delete(store *s, store_sgroup *g, store_sconsumer *c)
{
    uint64_t pending = c->pel.count;
    store_sidmap_it it;
    store_sid id;
    store_sidmap_seek(&c->pel, (store_sid){0, 0}, &it);
    while (store_sidmap_next(&c->pel, &it, &id, NULL)) store_sidmap_del(s, &g->pel, id);
    long i = consumer_index(g, c->name, c->nlen);
    memmove(g->consumers + i, g->consumers + i + 1, (g->nconsumers - (uint32_t)i - 1) * sizeof *g->consumers);
    g->nconsumers--;
    consumer_free(s, c);
    return pending;
}

void store_snack_assign(store *s, store_snack *n, store_sid id, store_sconsumer *to)
{
    if (n->consumer == to) return;
    if (n->consumer) store_sidmap_del(s, &n->consumer->pel, id);
    int created;
    store_sidmap_put(s, &to->pel, id, &created);
    n->consumer = to;
}

int store_snack_ack(store *s, store_sgroup *g, store_sid id)
{
    store_snack *n = store_sidmap_get(&g->pel, id);
    if (!n) return 0;
    if (n->consumer) store_sidmap_del(s, &n->consumer->pel, id);
    store_sidmap_del(s, &g->pel, id);
    return 1;
}

/* ---- lag ---- */

static int sid_zero(store_sid id) { return !id.ms && !id.seq; }

int store_stream_has_tombstones(const store_stream *st, store_sid start, const store_sid *end)
{
    if (!st->len || sid_zero(st->max_deleted)) return 0;
    if (store_sid_cmp(st->first, st->max_deleted) > 0) return 0;
    store_sid e = end ? *end : (store_sid){UINT64_MAX, UINT64_MAX};
    return store_sid_cmp(start, st->max_deleted) <= 0 && store_sid_cmp(st->max_deleted, e) <= 0;
}

long long store_stream_distance(const store_stream *st, store_sid id)
{
    if (!st->entries_added) return 0;
    if (!st->len && store_sid_cmp(id, st->last) < 1) return (long long)st->entries_added;
    int cmp_last = store_sid_cmp(id, st->last);
    if (!cmp_last) return (long long)st->entries_added;
    if (cmp_last > 0) return STORE_SCG_INVALID_READ;
    int cmp_first = store_sid_cmp(id, st->first);
    if (sid_zero(st->max_deleted) || store_sid_cmp(st->max_deleted, st->first) < 0) {
        if (cmp_first < 0) return (long long)(st->entries_added - st->len);
        if (!cmp_first) return (long long)(st->entries_added - st->len + 1);
    }
    return STORE_SCG_INVALID_READ;
}

long long store_sgroup_lag(const store_stream *st, const store_sgroup *g, int *valid)
{
    *valid = 1;
    if (!st->entries_added) return 0;
    if (g->entries_read != STORE_SCG_INVALID_READ && !store_stream_has_tombstones(st, g->last_id, NULL))
        return (long long)st->entries_added - g->entries_read;
    long long read = store_stream_distance(st, g->last_id);
    if (read != STORE_SCG_INVALID_READ) return (long long)st->entries_added - read;
    *valid = 0;
    return 0;
}

static int found_one(const store_sentry *e, void *ctx)
{
    (void)e;
    (void)ctx;
    return 1;
}

int store_stream_exists(const store_stream *st, store_sid id)
{
    return store_stream_range(st, id, id, 0, 1, found_one, NULL) == 1;
}

/* ---- the stream's side: freeing and copying its groups ---- */

void store_stream_groups_free(store *s, store_stream *st)
{
    for (uint32_t i = 0; i < st->ngroups; i++) group_free(s, st->groups[i]);
    store_mem_free(&s->used_memory, st->groups);
    st->groups = NULL;
    st->ngroups = st->gcap = 0;
}

static void sidmap_copy(store *s, store_sidmap *dst, const store_sidmap *src)
{
    *dst = *src;
    dst->chunks = NULL;
    dst->ccap = dst->nchunks;
    if (!src->nchunks) return;
    dst->chunks = store_mem_alloc(&s->used_memory, src->nchunks * sizeof *dst->chunks);
    for (uint32_t i = 0; i < src->nchunks; i++) {
        size_t sz = sizeof(struct store_sidchunk) + src->chunks[i]->cap * esize(src);
        dst->chunks[i] = store_mem_alloc(&s->used_memory, sz);
        memcpy(dst->chunks[i], src->chunks[i], sz);
    }
}

void store_stream_groups_dup(store *s, store_stream *dst, const store_stream *src)
{
    dst->groups = NULL;
    dst->ngroups = dst->gcap = 0;
    for (uint32_t i = 0; i < src->ngroups; i++) {
        const store_sgroup *a = src->groups[i];
        store_sgroup *b = store_sgroup_create(s, dst, a->name, a->nlen, a->last_id, a->entries_read);
        for (uint32_t j = 0; j < a->nconsumers; j++) {
            const store_sconsumer *ac = a->consumers[j];
            store_sconsumer *bc = store_sconsumer_create(s, b, ac->name, ac->nlen, ac->seen_time);
            sidmap_copy(s, &bc->pel, &ac->pel);
        }
        sidmap_copy(s, &b->pel, &a->pel);
        /* the copied NACKs still name a's consumers: point them at b's */
        store_sidmap_it it;
        store_sid id;
        void *v;
        store_sidmap_seek(&b->pel, (store_sid){0, 0}, &it);
        while (store_sidmap_next(&b->pel, &it, &id, &v)) {
            store_snack *n = v;
            if (n->consumer) n->consumer = store_sconsumer_find(b, n->consumer->name, n->consumer->nlen);
        }
    }
}

/* Redis's estimate: every node and group is an allocation, and so is each
 * PEL entry, the first group's PEL standing for every group's. */
size_t store_stream_free_effort(const store_stream *st)
{
    size_t effort = st->nnodes;
    if (st->ngroups) effort += (size_t)st->ngroups * (1 + st->groups[0]->pel.count);
    return effort;
}
