/* value_set.c - set values (set.h): Redis 7.0's sorted integer array
 * (intset) while every member is an integer and there are few, then a
 * store_dict of members whose nodes come from the store's pool. */
#include "num.h"
#include "set.h"
#include "store_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(store_set) <= sizeof(store_value), "a set value must fit a key's value area");

/* The intset's bytes are the RDB's (little-endian): DUMP copies them. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "value_set.c keeps intsets in host order, which must be little-endian"
#endif

store_set *store_set_of(store_key *k) { return (store_set *)(void *)STORE_KV(k); }
const store_set *store_set_of_const(const store_key *k) { return (const store_set *)(const void *)STORE_KV(k); }

int store_set_is_intset(const store_set *v) { return v->width != 0; }

/* ---- memory: blocks whose size the set always knows ---- */

/* Members and small intsets are many and small: the key pool's 8-byte
 * classes cost no malloc header or 16-byte rounding (a 16-byte member is
 * a 32-byte node, an 8-member intset of small numbers 16 bytes). */
static void *pooled_alloc(store *s, size_t n)
{
    if (!store_pool_holds(&s->key_pool, n)) return store_mem_alloc(&s->used_memory, n);
    void *p = store_pool_get(&s->key_pool, n);
    if (!p) mem_oom(n);
    s->used_memory += store_pool_size(&s->key_pool, n);
    return p;
}

static void pooled_free(store *s, void *p, size_t n)
{
    if (!p) return;
    if (!store_pool_holds(&s->key_pool, n)) {
        store_mem_free(&s->used_memory, p);
        return;
    }
    s->used_memory -= store_pool_size(&s->key_pool, n);
    store_pool_put(&s->key_pool, p, n);
}

/* A block of old bytes becomes one of n (0: none), its bytes kept up to
 * the smaller size. */
static void *pooled_resize(store *s, void *p, size_t old, size_t n)
{
    if (!old) return n ? pooled_alloc(s, n) : NULL;
    if (!n) {
        pooled_free(s, p, old);
        return NULL;
    }
    int in_pool = store_pool_holds(&s->key_pool, old), to_pool = store_pool_holds(&s->key_pool, n);
    if (!in_pool && !to_pool) return store_mem_realloc(&s->used_memory, p, n);
    if (in_pool && to_pool && store_pool_size(&s->key_pool, old) == store_pool_size(&s->key_pool, n))
        return p;   /* the same class */
    void *q = pooled_alloc(s, n);
    memcpy(q, p, old < n ? old : n);
    pooled_free(s, p, old);
    return q;
}

/* ---- the intset ---- */

static unsigned width_for(long long x)
{
    if (x >= INT16_MIN && x <= INT16_MAX) return 2;
    if (x >= INT32_MIN && x <= INT32_MAX) return 4;
    return 8;
}

static long long is_get(const store_set *v, size_t i)
{
    const unsigned char *p = (const unsigned char *)v->p + i * v->width;
    int16_t a;
    int32_t b;
    int64_t c;
    switch (v->width) {
    case 2: memcpy(&a, p, 2); return a;
    case 4: memcpy(&b, p, 4); return b;
    default: memcpy(&c, p, 8); return c;
    }
}

static void is_put(store_set *v, size_t i, long long x)
{
    unsigned char *p = (unsigned char *)v->p + i * v->width;
    int16_t a = (int16_t)x;
    int32_t b = (int32_t)x;
    int64_t c = x;
    switch (v->width) {
    case 2: memcpy(p, &a, 2); break;
    case 4: memcpy(p, &b, 4); break;
    default: memcpy(p, &c, 8); break;
    }
}

/* 1 with *pos its index if x is in; else 0 with *pos where it would go. */
static int is_search(const store_set *v, long long x, size_t *pos)
{
    size_t lo = 0, hi = v->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        long long cur = is_get(v, mid);
        if (cur == x) {
            *pos = mid;
            return 1;
        }
        if (cur < x) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return 0;
}

static void is_resize(store *s, store_set *v, size_t from, size_t to)
{
    v->p = pooled_resize(s, v->p, from * v->width, to * v->width);
}

/* Every member rewritten wider, from the top so none is overwritten
 * before it is read (intsetUpgradeAndAdd). */
static void is_upgrade(store *s, store_set *v, unsigned width)
{
    unsigned old = v->width;
    size_t n = v->count;
    v->p = pooled_resize(s, v->p, n * old, n * width);
    for (size_t i = n; i-- > 0;) {
        v->width = (uint8_t)old;
        long long x = is_get(v, i);
        v->width = (uint8_t)width;
        is_put(v, i, x);
    }
    v->width = (uint8_t)width;
}

static int is_add(store *s, store_set *v, long long x)
{
    size_t pos;
    unsigned w = width_for(x);
    if (w > v->width) {
        is_upgrade(s, v, w);
        /* Wider than every member: it goes to one end. */
        pos = x < 0 ? 0 : v->count;
    } else if (is_search(v, x, &pos)) {
        return 0;
    }
    is_resize(s, v, v->count, v->count + 1);
    unsigned char *p = v->p;
    memmove(p + (pos + 1) * v->width, p + pos * v->width, (v->count - pos) * v->width);
    v->count++;
    is_put(v, pos, x);
    return 1;
}

static int is_remove(store *s, store_set *v, long long x)
{
    size_t pos;
    if (width_for(x) > v->width || !is_search(v, x, &pos)) return 0;
    unsigned char *p = v->p;
    memmove(p + pos * v->width, p + (pos + 1) * v->width, (v->count - pos - 1) * v->width);
    v->count--;
    is_resize(s, v, v->count + 1, v->count);
    return 1;
}

/* Redis's string2ll: the one spelling of each integer an intset holds. */
static int member_int(const char *m, size_t len, long long *x)
{
    return len <= 20 && store_str2ll(m, len, x);
}

/* ---- the hash table: nodes are the member bytes after a dict node ---- */

typedef struct snode {
    store_dict_node n;   /* its key is data (table_new's dict) */
    char data[];
} snode;

#define SNODE_HDR offsetof(snode, data)

static snode *snode_of(store_dict_node *n) { return STORE_CONTAINER(n, snode, n); }
static store_dict *table(const store_set *v) { return v->p; }

static snode *snode_alloc(store *s, size_t len) { return pooled_alloc(s, SNODE_HDR + len); }
static void snode_free(store *s, snode *n) { pooled_free(s, n, SNODE_HDR + n->n.keylen); }

static void table_new(store *s, store_set *v)
{
    store_dict *d = pooled_alloc(s, sizeof(*d));
    store_dict_init(d, STORE_DICT_KEY_OFF(snode, n, data), STORE_DICT_KEY_INLINE);
    v->p = d;
    v->count = 0;
    v->width = 0;
}

static int table_add(store *s, store_set *v, const char *m, size_t len)
{
    store_dict *d = table(v);
    size_t before = store_dict_mem(d);   /* the find's rehash step may free a table */
    uint64_t h = store_dict_hash(m, len);
    if (store_dict_find_hashed(d, m, len, h)) {
        store_charge_dict(s, d, before);
        return 0;
    }
    snode *n = snode_alloc(s, len);
    if (len) memcpy(n->data, m, len);
    n->n.next = NULL;
    n->n.hash = (uint32_t)h;
    n->n.keylen = store_dict_keylen(len);
    store_dict_insert_hashed(d, &n->n);
    store_charge_dict(s, d, before);
    return 1;
}

static int table_remove(store *s, store_set *v, const char *m, size_t len)
{
    store_dict *d = table(v);
    size_t before = store_dict_mem(d);
    store_dict_node *n = store_dict_remove(d, m, len);
    if (n) snode_free(s, snode_of(n));
    store_charge_dict(s, d, before);
    return n != NULL;
}

struct member_visit {
    store_member_fn fn;
    void *ctx;
};

static void visit_member(store_dict_node *n, void *ctx)
{
    struct member_visit *mv = ctx;
    mv->fn(snode_of(n)->data, n->keylen, mv->ctx);
}

static void free_snode(store_dict_node *n, void *ctx) { snode_free(ctx, snode_of(n)); }

static void add_int(store *s, store_set *v, long long x)
{
    char buf[STORE_SET_INT_BUF];
    table_add(s, v, buf, store_ll2str(buf, x));
}

/* setTypeConvert: the intset's members move to a new table, for good. */
static void to_table(store *s, store_set *v)
{
    store_set is = *v;
    table_new(s, v);
    for (size_t i = 0; i < is.count; i++) add_int(s, v, is_get(&is, i));
    pooled_free(s, is.p, (size_t)is.count * is.width);
}

/* ---- the API ---- */

void store_set_init(store_set *v)
{
    v->p = NULL;
    v->count = 0;
    v->width = 2;
}

void store_set_init_for(store *s, store_set *v, const char *m, size_t len)
{
    long long x;
    if (member_int(m, len, &x))
        store_set_init(v);
    else
        table_new(s, v);
}

void store_set_init_table(store *s, store_set *v) { table_new(s, v); }

void store_set_free(store *s, store_set *v)
{
    if (store_set_is_intset(v)) {
        pooled_free(s, v->p, (size_t)v->count * v->width);
    } else {
        store_dict *d = table(v);
        size_t before = store_dict_mem(d);
        store_dict_clear(d, free_snode, s);
        store_charge_dict(s, d, before);
        pooled_free(s, d, sizeof(*d));
    }
    store_set_init(v);
}

void store_set_replace(store *s, store_key *k, store_set *v)
{
    store_value_release(s, k, STORE_RELEASE_REPLACED);   /* Redis's dbOverwrite */
    *store_set_of(k) = *v;
    store_set_init(v);
}

void store_set_release(store *s, store_set *v)
{
    if (s->release) {
        /* The hook takes values from keys: a bare entry stands for one. */
        size_t area = sizeof(store_value) + STORE_CLOCK_BYTES;
        store_key *k = store_xcalloc(1, store_value_off(0) + area);
        k->type = STORE_SET;
        k->enc = STORE_ENC_SET;
        k->area = (uint8_t)area;
        *store_set_of(k) = *v;
        store_set_init(v);
        store_value_release(s, k, STORE_RELEASE_REPLACED);
        free(k);
        return;
    }
    store_set_free(s, v);
}

size_t store_set_len(const store_set *v)
{
    return store_set_is_intset(v) ? v->count : store_dict_size(table(v));
}

int store_set_has(const store_set *v, const char *m, size_t len)
{
    long long x;
    size_t pos;
    if (!store_set_is_intset(v)) return store_dict_peek(table(v), m, len) != NULL;
    return member_int(m, len, &x) && width_for(x) <= v->width && is_search(v, x, &pos);
}

int store_set_add(store *s, store_set *v, const char *m, size_t len)
{
    long long x;
    if (!store_set_is_intset(v)) return table_add(s, v, m, len);
    if (!member_int(m, len, &x)) {
        to_table(s, v);
        return table_add(s, v, m, len);
    }
    if (!is_add(s, v, x)) return 0;
    if ((long long)v->count > store_env_of(s)->set_max_intset_entries) to_table(s, v);
    return 1;
}

int store_set_remove(store *s, store_set *v, const char *m, size_t len)
{
    long long x;
    if (!store_set_is_intset(v)) return table_remove(s, v, m, len);
    return member_int(m, len, &x) && is_remove(s, v, x);
}

void store_set_foreach(const store_set *v, store_member_fn fn, void *ctx)
{
    if (store_set_is_intset(v)) {
        char buf[STORE_SET_INT_BUF];
        for (size_t i = 0; i < v->count; i++) fn(buf, store_ll2str(buf, is_get(v, i)), ctx);
        return;
    }
    struct member_visit mv = { fn, ctx };
    /* foreach only bumps the iterator count; the dict itself is heap. */
    store_dict_foreach(table(v), visit_member, &mv);
}

uint64_t store_set_scan(store_set *v, uint64_t cursor, store_member_fn fn, void *ctx)
{
    if (store_set_is_intset(v)) {
        store_set_foreach(v, fn, ctx);
        return 0;
    }
    struct member_visit mv = { fn, ctx };
    return store_dict_scan(table(v), cursor, visit_member, &mv);
}

/* splitmix64: the caller's one random word made into as many as needed. */
static uint64_t mix_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Chains are rarely longer (load factor <= 1); a longer one is drawn from
 * a little less often than its share. */
#define FAIR_CHAIN 8

/* Uniform over members, not buckets: a random bucket, then a random slot
 * of FAIR_CHAIN, retried until the slot holds a member, so every member
 * has the same chance whatever its chain's length (store_dict_random
 * favours members of short chains). */
static store_dict_node *table_random(store_dict *d, uint64_t rnd)
{
    const store_dict_table *t0 = &d->t[0], *t1 = &d->t[1];
    uint64_t st = rnd;
    for (;;) {
        size_t lo = d->rehash_idx == -1 ? 0 : (size_t)d->rehash_idx;
        size_t span = t0->size + t1->size - lo;
        size_t i = lo + (size_t)(mix_next(&st) % span);
        store_dict_node *n = i < t0->size ? t0->buckets[i] : t1->buckets[i - t0->size];
        if (!n) continue;
        size_t len = 0;
        for (store_dict_node *c = n; c; c = c->next) len++;
        size_t pick = (size_t)(mix_next(&st) % (len > FAIR_CHAIN ? len : FAIR_CHAIN));
        if (pick >= len) continue;
        while (pick--) n = n->next;
        return n;
    }
}

const char *store_set_random(store_set *v, uint64_t rnd, char buf[STORE_SET_INT_BUF],
                             size_t *len)
{
    assert(store_set_len(v) > 0);
    if (store_set_is_intset(v)) {
        uint64_t st = rnd;
        *len = store_ll2str(buf, is_get(v, (size_t)(mix_next(&st) % v->count)));
        return buf;
    }
    store_dict_node *n = table_random(table(v), rnd);
    *len = n->keylen;
    return snode_of(n)->data;
}

struct add_all {
    store *s;
    store_set *dst;
    size_t added;
};

static void add_member(const char *m, size_t len, void *ctx)
{
    struct add_all *a = ctx;
    a->added += (size_t)store_set_add(a->s, a->dst, m, len);
}

size_t store_set_add_all(store *s, store_set *dst, const store_set *src)
{
    struct add_all a = { s, dst, 0 };
    store_set_foreach(src, add_member, &a);
    return a.added;
}

void store_set_dup(store *s, store_set *dst, const store_set *src)
{
    if (store_set_is_intset(src)) {
        *dst = *src;
        dst->p = NULL;
        if (src->count) {
            dst->p = pooled_alloc(s, (size_t)src->count * src->width);
            memcpy(dst->p, src->p, (size_t)src->count * src->width);
        }
        return;
    }
    table_new(s, dst);
    store_set_add_all(s, dst, src);
}

const void *store_set_intset_raw(const store_set *v, size_t *count, unsigned *width)
{
    if (!store_set_is_intset(v)) return NULL;
    *count = v->count;
    *width = v->width;
    return v->p;
}

void store_set_load_intset(store *s, store_set *v, const void *raw, size_t count, unsigned width)
{
    v->p = NULL;
    v->count = (uint32_t)count;
    v->width = (uint8_t)width;
    if (count) {
        v->p = pooled_alloc(s, count * width);
        memcpy(v->p, raw, count * width);
    }
    if ((long long)count > store_env_of(s)->set_max_intset_entries) to_table(s, v);
}

/* ---- the key's side (store.c's per-type hooks) ---- */

void store_set_key_init(store_key *k)
{
    k->enc = STORE_ENC_SET;
    store_set_init(store_set_of(k));
}

void store_set_key_free(store *s, store_key *k) { store_set_free(s, store_set_of(k)); }

void store_set_key_dup(store *s, store_key *dst, const store_key *src)
{
    store_set_dup(s, store_set_of(dst), store_set_of_const(src));
}
