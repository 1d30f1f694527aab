/* zset_skiplist.c - big sorted sets: a skiplist with spans (O(log n) rank
 * and range lookups) whose nodes also sit in a member dict (O(1) score
 * lookups). One allocation per member: node, levels, then member bytes. */
#include "store_internal.h"

#include <string.h>

#define ZSL_MAX_LEVEL 32   /* enough for 2^64 elements at p = 1/4 */

typedef struct zsl_node zsl_node;

typedef struct zsl_level {
    zsl_node *forward;
    size_t span;           /* elements the link skips, itself included */
} zsl_level;

struct zsl_node {
    store_dict_node d;     /* in members, keyed by member */
    const char *member;    /* the bytes after the levels */
    double score;
    zsl_node *backward;
    zsl_level level[];
};

struct store_zset {
    store_dict members;
    zsl_node *header;
    zsl_node *tail;
    size_t length;
    int level;
};

static zsl_node *node_of(store_dict_node *d) { return STORE_CONTAINER(d, zsl_node, d); }

static int node_cmp(const zsl_node *n, double score, const char *m, size_t mlen)
{
    return zset_cmp(n->score, n->member, n->d.keylen, score, m, mlen);
}

/* Each level up with probability 1/4: two random bits a level. The levels
 * only need to be spread out, not unpredictable. */
static int random_level(store *s)
{
    uint64_t x = s->zsl_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->zsl_rng = x;
    uint64_t r = x;
    int level = 1;
    while ((r & 3) == 0 && level < ZSL_MAX_LEVEL) {
        level++;
        r >>= 2;
    }
    return level;
}

static zsl_node *node_new(store *s, int level, double score, const char *m, size_t mlen)
{
    size_t head = sizeof(zsl_node) + (size_t)level * sizeof(zsl_level);
    zsl_node *n = store_mem_alloc(&s->used_memory, head + mlen);
    char *member = (char *)n + head;
    if (mlen) memcpy(member, m, mlen);
    n->d.next = NULL;
    n->member = member;
    n->d.keylen = store_dict_keylen(mlen);
    n->score = score;
    n->backward = NULL;
    memset(n->level, 0, (size_t)level * sizeof(zsl_level));
    return n;
}

store_zset *zsl_new(store *s)
{
    store_zset *z = store_mem_alloc(&s->used_memory, sizeof(*z));
    store_dict_init(&z->members, STORE_DICT_KEY_OFF(zsl_node, d, member), STORE_DICT_KEY_POINTER);
    z->header = node_new(s, ZSL_MAX_LEVEL, 0, NULL, 0);
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
    return z;
}

void zsl_free(store *s, store_zset *z)
{
    size_t before = store_dict_mem(&z->members);
    store_dict_clear(&z->members, NULL, NULL);
    store_charge_dict(s, &z->members, before);
    for (zsl_node *n = z->header, *next; n; n = next) {
        next = n->level[0].forward;
        store_mem_free(&s->used_memory, n);
    }
    store_mem_free(&s->used_memory, z);
}

size_t zsl_len(const store_zset *z) { return z->length; }

static zsl_node *find(const store_zset *z, const char *m, size_t mlen)
{
    store_dict_node *d = store_dict_peek(&z->members, m, mlen);
    return d ? node_of(d) : NULL;
}

int zsl_score(const store_zset *z, const char *m, size_t mlen, double *score)
{
    zsl_node *n = find(z, m, mlen);
    if (n && score) *score = n->score;
    return n != NULL;
}

void zsl_insert(store *s, store_zset *z, double score, const char *m, size_t mlen)
{
    zsl_node *update[ZSL_MAX_LEVEL], *x = z->header;
    size_t rank[ZSL_MAX_LEVEL];
    for (int i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (x->level[i].forward && node_cmp(x->level[i].forward, score, m, mlen) < 0) {
            rank[i] += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    int level = random_level(s);
    for (int i = z->level; i < level; i++) {
        rank[i] = 0;
        update[i] = z->header;
        update[i]->level[i].span = z->length;
    }
    if (level > z->level) z->level = level;

    x = node_new(s, level, score, m, mlen);
    for (int i = 0; i < level; i++) {
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = rank[0] - rank[i] + 1;
    }
    for (int i = level; i < z->level; i++) update[i]->level[i].span++;
    x->backward = update[0] == z->header ? NULL : update[0];
    if (x->level[0].forward)
        x->level[0].forward->backward = x;
    else
        z->tail = x;
    z->length++;

    size_t before = store_dict_mem(&z->members);
    store_dict_insert(&z->members, &x->d);
    store_charge_dict(s, &z->members, before);
}

/* Take x out of the skiplist; update[i] is its predecessor path. */
static void unlink_node(store_zset *z, zsl_node *x, zsl_node **update)
{
    for (int i = 0; i < z->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span--;
        }
    }
    if (x->level[0].forward)
        x->level[0].forward->backward = x->backward;
    else
        z->tail = x->backward;
    while (z->level > 1 && !z->header->level[z->level - 1].forward) z->level--;
    z->length--;
}

static void free_node(store *s, store_zset *z, zsl_node *x)
{
    size_t before = store_dict_mem(&z->members);
    store_dict_unlink(&z->members, &x->d);
    store_charge_dict(s, &z->members, before);
    store_mem_free(&s->used_memory, x);
}

int zsl_delete(store *s, store_zset *z, const char *m, size_t mlen)
{
    zsl_node *n = find(z, m, mlen), *update[ZSL_MAX_LEVEL], *x = z->header;
    if (!n) return 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && node_cmp(x->level[i].forward, n->score, m, mlen) < 0)
            x = x->level[i].forward;
        update[i] = x;
    }
    unlink_node(z, n, update);
    free_node(s, z, n);
    return 1;
}

long long zsl_rank(const store_zset *z, const char *m, size_t mlen)
{
    zsl_node *n = find(z, m, mlen), *x = z->header;
    size_t rank = 0;
    if (!n) return -1;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && node_cmp(x->level[i].forward, n->score, m, mlen) <= 0) {
            rank += x->level[i].span;
            x = x->level[i].forward;
        }
        if (x == n) return (long long)rank - 1;
    }
    return -1;
}

/* Ranges cut the order into a prefix and the rest: the elements below
 * min (upto_max 0) or those up to max (upto_max 1). */
static int in_prefix(const store_zrange *r, const zsl_node *f, int upto_max)
{
    if (upto_max) return zset_lte_max(r, f->score, f->member, f->d.keylen);
    return !zset_gte_min(r, f->score, f->member, f->d.keylen);
}

/* The prefix's last node (the header if it is empty), its 1-based rank in
 * *rank. */
static zsl_node *prefix_end(const store_zset *z, const store_zrange *r, int upto_max, size_t *rank)
{
    zsl_node *x = z->header;
    *rank = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && in_prefix(r, x->level[i].forward, upto_max)) {
            *rank += x->level[i].span;
            x = x->level[i].forward;
        }
    }
    return x;
}

size_t zsl_span(const store_zset *z, const store_zrange *r, size_t *n)
{
    size_t first, last;
    zsl_node *x = prefix_end(z, r, 0, &first)->level[0].forward;
    *n = 0;
    if (!x || !zset_lte_max(r, x->score, x->member, x->d.keylen)) return first;
    prefix_end(z, r, 1, &last);
    /* Ordered ranges give last > first; a lex range over mixed scores is
     * not ordered (Redis calls it undefined): count the first alone. */
    *n = last > first ? last - first : 1;
    return first;
}

/* The node at 1-based rank r (1 <= r <= length). */
static zsl_node *node_at(const store_zset *z, size_t r)
{
    zsl_node *x = z->header;
    size_t traversed = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= r) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        if (traversed == r) return x;
    }
    return NULL;
}

void zsl_visit(const store_zset *z, size_t start, size_t n, int reverse,
               store_zmember_fn fn, void *ctx)
{
    if (n == 0) return;
    for (zsl_node *x = node_at(z, start + 1); x && n--; x = reverse ? x->backward : x->level[0].forward)
        fn(x->member, x->d.keylen, x->score, ctx);
}

struct member_visit {
    store_zmember_fn fn;
    void *ctx;
};

static void visit_member(store_dict_node *d, void *ctx)
{
    struct member_visit *mv = ctx;
    const zsl_node *x = node_of(d);
    mv->fn(x->member, d->keylen, x->score, mv->ctx);
}

uint64_t zsl_scan(store_zset *z, uint64_t cursor, store_zmember_fn fn, void *ctx)
{
    struct member_visit mv = { fn, ctx };
    return store_dict_scan(&z->members, cursor, visit_member, &mv);
}

void zsl_delete_ranks(store *s, store_zset *z, size_t start, size_t n)
{
    zsl_node *update[ZSL_MAX_LEVEL], *x = z->header;
    size_t traversed = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= start) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    /* the path to the first victim is the path to every later one too */
    for (x = x->level[0].forward; x && n--;) {
        zsl_node *next = x->level[0].forward;
        unlink_node(z, x, update);
        free_node(s, z, x);
        x = next;
    }
}
