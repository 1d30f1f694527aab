/* dict.c - intrusive chained hash table with incremental rehash, after
 * Redis's dict.c: resizing never stalls one request on a big table copy. */
#include "dict.h"
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DICT_MIN_SIZE 4
#define DICT_FORCE_RATIO 5   /* grow even while iterators pause rehashing */
#define DICT_MIN_FILL 10     /* percent; below this a table shrinks */

uint32_t store_dict_keylen(size_t len)
{
    if (len > UINT32_MAX) {
        fprintf(stderr, "latchd: a key or field of %zu bytes is over the 4 GiB limit\n", len);
        abort();
    }
    return (uint32_t)len;
}

static void table_reset(store_dict_table *t)
{
    t->buckets = NULL;
    t->size = 0;
    t->used = 0;
}

/* Empty tables; where keys live is kept. */
static void dict_reset(store_dict *d)
{
    table_reset(&d->t[0]);
    table_reset(&d->t[1]);
    d->rehash_idx = -1;
    d->iterators = 0;
}

void store_dict_init(store_dict *d, size_t key_off, int how)
{
    dict_reset(d);
    d->avoid_resize = 0;
    d->key_off = (uint32_t)key_off;
    d->key_by_pointer = how == STORE_DICT_KEY_POINTER;
}

size_t store_dict_size(const store_dict *d)
{
    return d->t[0].used + d->t[1].used;
}

size_t store_dict_mem(const store_dict *d)
{
    return store_mem_size(d->t[0].buckets) + store_mem_size(d->t[1].buckets);
}

static size_t next_pow2(size_t n)
{
    size_t s = DICT_MIN_SIZE;
    while (s < n && s <= SIZE_MAX / 2) s <<= 1;
    return s;
}

/* Start moving to a table of at least `want` buckets (a no-op while a
 * rehash is running: one migration at a time, as in Redis). */
static void resize(store_dict *d, size_t want)
{
    size_t size = next_pow2(want);
    if (store_dict_rehashing(d) || size == d->t[0].size) return;
    store_dict_table t = { store_xcalloc(size, sizeof(store_dict_node *)), size, 0 };
    if (!d->t[0].buckets) {
        d->t[0] = t;
        return;
    }
    d->t[1] = t;
    d->rehash_idx = 0;
}

void store_dict_expand(store_dict *d, size_t n)
{
    if (store_dict_size(d) || store_dict_rehashing(d) || next_pow2(n) <= d->t[0].size) return;
    free(d->t[0].buckets);
    table_reset(&d->t[0]);
    resize(d, n);
}

static void grow_if_needed(store_dict *d)
{
    const store_dict_table *t0 = &d->t[0];
    if (store_dict_rehashing(d)) return;
    if (t0->size == 0) {
        resize(d, DICT_MIN_SIZE);
        return;
    }
    if (t0->used < t0->size) return;
    /* Iterators stop rehash steps, and a fork child makes each node moved
     * a page copied: only a badly overloaded table is worth a migration
     * then. */
    if ((d->iterators || d->avoid_resize) && t0->used / t0->size < DICT_FORCE_RATIO) return;
    resize(d, t0->used + 1);
}

static void shrink_if_needed(store_dict *d)
{
    const store_dict_table *t0 = &d->t[0];
    if (store_dict_rehashing(d) || d->iterators || d->avoid_resize || t0->size <= DICT_MIN_SIZE) return;
    if (t0->used * 100 / t0->size >= DICT_MIN_FILL) return;
    resize(d, t0->used);
}

static void move_chain(store_dict *d, store_dict_node *n)
{
    store_dict_table *t1 = &d->t[1];
    while (n) {
        store_dict_node *next = n->next;
        size_t idx = n->hash & (t1->size - 1);
        n->next = t1->buckets[idx];
        t1->buckets[idx] = n;
        d->t[0].used--;
        t1->used++;
        n = next;
    }
}

static void finish_rehash(store_dict *d)
{
    free(d->t[0].buckets);
    d->t[0] = d->t[1];
    table_reset(&d->t[1]);
    d->rehash_idx = -1;
}

int store_dict_rehash(store_dict *d, int n)
{
    if (!store_dict_rehashing(d)) return 0;
    if (d->iterators) return 1;   /* would move nodes under a running walk */
    size_t empty_visits = (size_t)(n > 0 ? n : 0) * 10;
    store_dict_table *t0 = &d->t[0];
    while (n-- > 0 && t0->used) {
        /* Bound the work on a sparse table: skip at most 10 empties per step. */
        while (!t0->buckets[d->rehash_idx]) {
            d->rehash_idx++;
            if (--empty_visits == 0) return 1;
        }
        move_chain(d, t0->buckets[d->rehash_idx]);
        t0->buckets[d->rehash_idx++] = NULL;
    }
    if (t0->used) return 1;
    finish_rehash(d);
    return 0;
}

void store_dict_avoid_resize(store_dict *d, int avoid) { d->avoid_resize = avoid; }

static void rehash_step(store_dict *d)
{
    if (store_dict_rehashing(d) && d->iterators == 0) store_dict_rehash(d, 1);
}

static int node_matches(const store_dict *d, const store_dict_node *n, const char *key,
                        size_t len, uint64_t h)
{
    return n->hash == (uint32_t)h && n->keylen == len &&
           (len == 0 || memcmp(store_dict_key(d, n), key, len) == 0);
}

static store_dict_node *lookup(const store_dict *d, const char *key, size_t len, uint64_t h)
{
    for (int i = 0; i < 2; i++) {
        const store_dict_table *t = &d->t[i];
        if (t->size) {
            for (store_dict_node *n = t->buckets[(uint32_t)h & (t->size - 1)]; n; n = n->next)
                if (node_matches(d, n, key, len, h)) return n;
        }
        if (!store_dict_rehashing(d)) break;
    }
    return NULL;
}

store_dict_node *store_dict_find_hashed(store_dict *d, const char *key, size_t len,
                                        uint64_t hash)
{
    if (store_dict_size(d) == 0) return NULL;
    rehash_step(d);
    return lookup(d, key, len, hash);
}

void store_dict_prefetch(const store_dict *d, const char *key, size_t len)
{
    uint64_t h = store_dict_hash(key, len);
    for (int i = 0; i < 2; i++) {
        const store_dict_table *t = &d->t[i];
        if (t->size) __builtin_prefetch(&t->buckets[(uint32_t)h & (t->size - 1)]);
    }
}

store_dict_node *store_dict_find(store_dict *d, const char *key, size_t len)
{
    if (store_dict_size(d) == 0) return NULL;
    return store_dict_find_hashed(d, key, len, store_dict_hash(key, len));
}

store_dict_node *store_dict_peek(const store_dict *d, const char *key, size_t len)
{
    if (store_dict_size(d) == 0) return NULL;
    return lookup(d, key, len, store_dict_hash(key, len));
}

void store_dict_insert_hashed(store_dict *d, store_dict_node *n)
{
    rehash_step(d);
    grow_if_needed(d);
    /* While rehashing, new nodes go to the new table so t[0] only drains. */
    store_dict_table *t = store_dict_rehashing(d) ? &d->t[1] : &d->t[0];
    size_t idx = n->hash & (t->size - 1);
    n->next = t->buckets[idx];
    t->buckets[idx] = n;
    t->used++;
}

void store_dict_insert(store_dict *d, store_dict_node *n)
{
    n->hash = store_dict_hash(store_dict_key(d, n), n->keylen);
    store_dict_insert_hashed(d, n);
}

/* Unlink the node that is `want` (when given) or matches key/len. */
static store_dict_node *unlink_from(store_dict *d, const char *key, size_t len,
                                    uint64_t h, const store_dict_node *want)
{
    for (int i = 0; i < 2; i++) {
        store_dict_table *t = &d->t[i];
        if (t->size) {
            for (store_dict_node **pp = &t->buckets[(uint32_t)h & (t->size - 1)]; *pp; pp = &(*pp)->next) {
                store_dict_node *n = *pp;
                if (want ? n != want : !node_matches(d, n, key, len, h)) continue;
                *pp = n->next;
                n->next = NULL;
                t->used--;
                return n;
            }
        }
        if (!store_dict_rehashing(d)) break;
    }
    return NULL;
}

store_dict_node *store_dict_remove(store_dict *d, const char *key, size_t len)
{
    if (store_dict_size(d) == 0) return NULL;
    rehash_step(d);
    store_dict_node *n = unlink_from(d, key, len, store_dict_hash(key, len), NULL);
    if (n) shrink_if_needed(d);
    return n;
}

void store_dict_unlink(store_dict *d, store_dict_node *n)
{
    rehash_step(d);
    if (unlink_from(d, NULL, 0, n->hash, n)) shrink_if_needed(d);
}

/* Walks a chain saving next first, so fn may free the node it is given. */
static void visit_chain(store_dict_node *n, store_dict_visit_fn fn, void *ctx)
{
    while (n) {
        store_dict_node *next = n->next;
        fn(n, ctx);
        n = next;
    }
}

void store_dict_clear(store_dict *d, store_dict_visit_fn free_node, void *ctx)
{
    for (int i = 0; i < 2; i++) {
        store_dict_table *t = &d->t[i];
        for (size_t b = 0; free_node && b < t->size; b++)
            visit_chain(t->buckets[b], free_node, ctx);
        free(t->buckets);
    }
    dict_reset(d);
}

/* How many buckets ahead a walk asks for its nodes: a whole-table walk
 * (a snapshot child's) is otherwise one cache miss after another, as the
 * nodes lie wherever they were allocated. */
#define WALK_PREFETCH 8

static void prefetch_node(const store_dict_node *n)
{
    if (!n) return;
    __builtin_prefetch(n);
    __builtin_prefetch((const char *)n + 64);   /* a key entry's second line (a lock's is 88 bytes) */
}

void store_dict_foreach(store_dict *d, store_dict_visit_fn fn, void *ctx)
{
    d->iterators++;   /* a rehash step inside fn (via find) would move nodes */
    for (int i = 0; i < 2; i++) {
        const store_dict_table *t = &d->t[i];
        for (size_t b = 0; b < t->size; b++) {
            if (b + WALK_PREFETCH < t->size) prefetch_node(t->buckets[b + WALK_PREFETCH]);
            visit_chain(t->buckets[b], fn, ctx);
        }
    }
    d->iterators--;
}

/* ---- a whole-table walk in memory order ---- */

/* Buckets whose nodes one memory-order pass sorts and visits together: the
 * two scratch arrays are 2 * 8 * WALK_WINDOW bytes (4 MiB). */
#define WALK_WINDOW ((size_t)1 << 18)
#define WALK_SORTED_MIN 65536   /* smaller tables stay in cache: bucket order */
#define PAGE_SHIFT 12

static uintptr_t page_of(const store_dict_node *n) { return (uintptr_t)n >> PAGE_SHIFT; }

/* Sorts the n nodes in a by page (LSD radix, 8 bits a pass, stable) with
 * tmp as the other buffer; returns whichever of the two holds the result. */
static store_dict_node **sort_by_page(store_dict_node **a, store_dict_node **tmp, size_t n)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t p = page_of(a[i]);
        if (p < lo) lo = p;
        if (p > hi) hi = p;
    }
    for (unsigned shift = 0; shift < sizeof(uintptr_t) * 8 && (hi - lo) >> shift; shift += 8) {
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++) at[((page_of(a[i]) - lo) >> shift) & 255]++;
        for (size_t d = 0, sum = 0; d < 256; d++) {
            size_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[at[((page_of(a[i]) - lo) >> shift) & 255]++] = a[i];
        store_dict_node **t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* One window's nodes: chain heads first, then the nodes after them, each
 * round sorted by page. */
static void walk_window(const store_dict_table *t, size_t from, size_t to, store_dict_node **buf[2],
                        store_dict_visit_fn fn, void *ctx)
{
    store_dict_node **cur = buf[0], **other = buf[1];
    size_t n = 0;
    for (size_t b = from; b < to; b++)
        if (t->buckets[b]) cur[n++] = t->buckets[b];
    while (n) {
        store_dict_node **sorted = sort_by_page(cur, other, n);
        store_dict_node **next_round = sorted == cur ? other : cur;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + WALK_PREFETCH < n) prefetch_node(sorted[i + WALK_PREFETCH]);
            store_dict_node *next = sorted[i]->next;   /* fn may free the node */
            fn(sorted[i], ctx);
            if (next) next_round[m++] = next;
        }
        cur = next_round;
        other = sorted;
        n = m;
    }
}

void store_dict_walk(store_dict *d, store_dict_visit_fn fn, void *ctx)
{
    store_dict_node **buf[2] = {NULL, NULL};
    if (store_dict_size(d) >= WALK_SORTED_MIN) {
        buf[0] = malloc(WALK_WINDOW * sizeof(*buf[0]));
        buf[1] = malloc(WALK_WINDOW * sizeof(*buf[1]));
    }
    if (!buf[0] || !buf[1]) {   /* small, or no scratch: bucket order */
        free(buf[0]);
        free(buf[1]);
        store_dict_foreach(d, fn, ctx);
        return;
    }
    d->iterators++;
    for (int i = 0; i < 2; i++) {
        const store_dict_table *t = &d->t[i];
        for (size_t from = 0; from < t->size; from += WALK_WINDOW)
            walk_window(t, from, t->size - from > WALK_WINDOW ? from + WALK_WINDOW : t->size, buf, fn, ctx);
    }
    d->iterators--;
    free(buf[0]);
    free(buf[1]);
}

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16);
    return (v >> 32) | (v << 32);
}

/* Increment the high bits first (reversed), so buckets that split or merge
 * on a resize are visited together and none is skipped. */
static uint64_t rev_incr(uint64_t v, uint64_t mask)
{
    v |= ~mask;
    return rev64(rev64(v) + 1);
}

static void scan_bucket(const store_dict_table *t, uint64_t v, store_dict_visit_fn fn, void *ctx)
{
    visit_chain(t->buckets[v & (t->size - 1)], fn, ctx);
}

uint64_t store_dict_scan(store_dict *d, uint64_t v, store_dict_visit_fn fn, void *ctx)
{
    if (store_dict_size(d) == 0) return 0;
    d->iterators++;
    if (!store_dict_rehashing(d)) {
        scan_bucket(&d->t[0], v, fn, ctx);
        v = rev_incr(v, d->t[0].size - 1);
    } else {
        const store_dict_table *small = &d->t[0], *large = &d->t[1];
        if (small->size > large->size) {
            small = &d->t[1];
            large = &d->t[0];
        }
        uint64_t m0 = small->size - 1, m1 = large->size - 1;
        scan_bucket(small, v, fn, ctx);
        /* Then every large-table bucket that folds onto that small one. */
        do {
            scan_bucket(large, v, fn, ctx);
            v = rev_incr(v, m1);
        } while (v & (m0 ^ m1));
    }
    d->iterators--;
    return v;
}

/* splitmix64: turns the caller's one random word into as many as needed. */
static uint64_t mix_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static store_dict_node *random_bucket(const store_dict *d, uint64_t *st)
{
    const store_dict_table *t0 = &d->t[0], *t1 = &d->t[1];
    if (!store_dict_rehashing(d)) return t0->buckets[mix_next(st) & (t0->size - 1)];
    /* Buckets below rehash_idx are already empty: draw from the rest. */
    size_t lo = (size_t)d->rehash_idx, span = t0->size + t1->size - lo;
    size_t i = lo + (size_t)(mix_next(st) % span);
    return i < t0->size ? t0->buckets[i] : t1->buckets[i - t0->size];
}

/* Uniform over the nodes, not over the buckets: a bucket and a slot in
 * it are drawn together and a slot past the chain's end draws again, so
 * a node in a chain of two is as likely as a lone one (a bucket-then-node
 * draw halves it, which Redis's chi-square tests catch). Chains longer
 * than RANDOM_SLOTS are rare at the load the dict keeps; their nodes are
 * drawn a little less often. */
#define RANDOM_SLOTS 8

store_dict_node *store_dict_random(store_dict *d, uint64_t rnd)
{
    if (store_dict_size(d) == 0) return NULL;
    rehash_step(d);
    uint64_t st = rnd;
    for (;;) {
        store_dict_node *head = random_bucket(d, &st);
        if (!head) continue;
        size_t len = 0;
        for (store_dict_node *n = head; n; n = n->next) len++;
        size_t slot = (size_t)(mix_next(&st) % (len > RANDOM_SLOTS ? len : RANDOM_SLOTS));
        if (slot >= len) continue;
        while (slot--) head = head->next;
        return head;
    }
}
