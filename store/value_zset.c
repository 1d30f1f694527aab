/* value_zset.c - sorted set values. While small (<= 128 members of <= 64
 * bytes, Redis's listpack limits) one packed run of (member, score) entry
 * pairs in order, so no per-member allocation; past that, one-way, the
 * skiplist of zset_skiplist.c. ZADD's NX/XX/GT/LT/INCR rules live here. */
#include "store_internal.h"

#include <math.h>
#include <string.h>

int zset_lexcmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

int zset_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2)
{
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    return zset_lexcmp(m1, l1, m2, l2);
}

/* Sign of m - b, where "-" / "+" lie below / above every member. */
static int lex_vs_bound(const char *m, size_t mlen, const store_zbound *b)
{
    if (b->inf) return -b->inf;
    return zset_lexcmp(m, mlen, b->lex, b->lexlen);
}

int zset_gte_min(const store_zrange *r, double score, const char *m, size_t mlen)
{
    if (r->by_lex) {
        int c = lex_vs_bound(m, mlen, &r->min);
        return r->min.ex ? c > 0 : c >= 0;
    }
    return r->min.ex ? score > r->min.score : score >= r->min.score;
}

int zset_lte_max(const store_zrange *r, double score, const char *m, size_t mlen)
{
    if (r->by_lex) {
        int c = lex_vs_bound(m, mlen, &r->max);
        return r->max.ex ? c < 0 : c <= 0;
    }
    return r->max.ex ? score < r->max.score : score <= r->max.score;
}

/* ---- the packed form: entries member, score (8 raw bytes) ---- */

static int small(const store_key *k) { return k->enc == STORE_ENC_ZSET_SMALL; }

/* The pair at off; returns the offset of the next pair. */
static size_t pair_at(const store_packed *p, size_t off, const char **m, size_t *mlen, double *score)
{
    const char *raw;
    size_t rawlen;
    off = pack_next(p, off, m, mlen);
    off = pack_next(p, off, &raw, &rawlen);
    memcpy(score, raw, sizeof(*score));
    return off;
}

/* Offset of m's pair (p->bytes if absent), its rank and score. */
static size_t pk_find(const store_packed *p, const char *m, size_t mlen, size_t *rank, double *score)
{
    const char *em;
    size_t emlen, off = 0;
    for (*rank = 0; off < p->bytes; (*rank)++) {
        size_t next = pair_at(p, off, &em, &emlen, score);
        if (pack_entry_is(em, emlen, m, mlen)) return off;
        off = next;
    }
    return off;
}

static void pk_insert(store *s, store_packed *p, double score, const char *m, size_t mlen)
{
    const char *em;
    size_t emlen, off = 0;
    double es;
    while (off < p->bytes) {
        size_t next = pair_at(p, off, &em, &emlen, &es);
        if (zset_cmp(es, em, emlen, score, m, mlen) > 0) break;
        off = next;
    }
    /* Redis's listpack keeps scores as text, and its integer shortcut
     * writes -0 as "0": a small set never holds -0 (a skiplist does). */
    if (score == 0) score = 0;
    pack_item pair[2] = {{m, mlen}, {(const char *)&score, sizeof(score)}};
    pack_insert(s, p, off, pair, 2);
}

static void to_skiplist(store *s, store_key *k)
{
    store_zset *z = zsl_new(s);
    const char *m;
    size_t mlen, off = 0;
    double score;
    while (off < STORE_KV(k)->pk.bytes) {
        off = pair_at(&STORE_KV(k)->pk, off, &m, &mlen, &score);
        zsl_insert(s, z, score, m, mlen);
    }
    pack_free(s, &STORE_KV(k)->pk);
    STORE_KV(k)->zs = z;
    k->enc = STORE_ENC_ZSET_SKIPLIST;
}

/* Pairs from rank start: forwards, or backwards through their offsets. */
static void pk_visit(const store_packed *p, size_t start, size_t n, int reverse,
                     store_zmember_fn fn, void *ctx)
{
    uint32_t offs[2 * STORE_ZSET_SMALL_ENTRIES];
    const char *m;
    size_t mlen, off;
    double score;
    if (!reverse) {
        for (off = pack_offset(p, 2 * start); n--;) {
            off = pair_at(p, off, &m, &mlen, &score);
            fn(m, mlen, score, ctx);
        }
        return;
    }
    pack_offsets(p, offs);
    for (size_t r = start; n--; r--) {
        pair_at(p, offs[2 * r], &m, &mlen, &score);
        fn(m, mlen, score, ctx);
    }
}

/* Redis's listpack walk: the first pair at or past min, then the run of
 * pairs up to max. */
static size_t pk_span(const store_packed *p, const store_zrange *r, size_t *n)
{
    const char *m;
    size_t mlen, off = 0, first = 0;
    double score;
    *n = 0;
    for (; off < p->bytes; first++) {
        size_t next = pair_at(p, off, &m, &mlen, &score);
        if (zset_gte_min(r, score, m, mlen)) break;
        off = next;
    }
    while (off < p->bytes) {
        off = pair_at(p, off, &m, &mlen, &score);
        if (!zset_lte_max(r, score, m, mlen)) break;
        (*n)++;
    }
    return first;
}

/* ---- the API: one branch per representation ---- */

void store_zset_init(store_key *k)
{
    k->enc = STORE_ENC_ZSET_SMALL;
    memset(&STORE_KV(k)->pk, 0, sizeof(STORE_KV(k)->pk));
}

void store_zset_free(store *s, store_key *k)
{
    if (small(k))
        pack_free(s, &STORE_KV(k)->pk);
    else
        zsl_free(s, STORE_KV(k)->zs);
}

size_t store_zset_len(const store_key *k)
{
    return small(k) ? STORE_KV(k)->pk.count / 2 : zsl_len(STORE_KV(k)->zs);
}

int store_zset_score(const store_key *k, const char *m, size_t mlen, double *score)
{
    size_t rank;
    double sc;
    if (!small(k)) return zsl_score(STORE_KV(k)->zs, m, mlen, score);
    if (pk_find(&STORE_KV(k)->pk, m, mlen, &rank, &sc) == STORE_KV(k)->pk.bytes) return 0;
    if (score) *score = sc;
    return 1;
}

static void insert(store *s, store_key *k, double score, const char *m, size_t mlen)
{
    if (small(k) &&
        (store_zset_len(k) + 1 > STORE_ZSET_SMALL_ENTRIES || mlen > STORE_ZSET_SMALL_VALUE))
        to_skiplist(s, k);
    if (small(k))
        pk_insert(s, &STORE_KV(k)->pk, score, m, mlen);
    else
        zsl_insert(s, STORE_KV(k)->zs, score, m, mlen);
}

int store_zset_del(store *s, store_key *k, const char *m, size_t mlen)
{
    size_t rank;
    double score;
    if (!small(k)) return zsl_delete(s, STORE_KV(k)->zs, m, mlen);
    size_t off = pk_find(&STORE_KV(k)->pk, m, mlen, &rank, &score);
    if (off == STORE_KV(k)->pk.bytes) return 0;
    pack_delete(s, &STORE_KV(k)->pk, off, 2);
    return 1;
}

int store_zset_add(store *s, store_key *k, double score, const char *m, size_t mlen,
                   int flags, int *out, double *newscore)
{
    double cur;
    *out = 0;
    if (isnan(score)) return STORE_ERR_NAN;
    if (!store_zset_score(k, m, mlen, &cur)) {
        if (flags & STORE_ZADD_XX) {
            *out = STORE_ZADD_NOP;
            return STORE_OK;
        }
        store_zset_note_add(s, k, mlen);   /* never for a re-scored member */
        insert(s, k, score, m, mlen);
        *out = STORE_ZADD_ADDED;
        *newscore = score;
        return STORE_OK;
    }
    if (flags & STORE_ZADD_NX) {
        *out = STORE_ZADD_NOP;
        return STORE_OK;
    }
    if (flags & STORE_ZADD_INCR) {
        score += cur;
        if (isnan(score)) return STORE_ERR_NAN;
    }
    if (((flags & STORE_ZADD_LT) && score >= cur) || ((flags & STORE_ZADD_GT) && score <= cur)) {
        *out = STORE_ZADD_NOP;
        return STORE_OK;
    }
    *newscore = score;
    if (score != cur) {   /* -0 and 0 compare equal: the stored one stays */
        store_zset_del(s, k, m, mlen);
        insert(s, k, score, m, mlen);
        *out = STORE_ZADD_UPDATED;
    }
    return STORE_OK;
}

long long store_zset_rank(const store_key *k, const char *m, size_t mlen)
{
    size_t rank;
    double score;
    if (!small(k)) return zsl_rank(STORE_KV(k)->zs, m, mlen);
    if (pk_find(&STORE_KV(k)->pk, m, mlen, &rank, &score) == STORE_KV(k)->pk.bytes) return -1;
    return (long long)rank;
}

size_t store_zset_span(const store_key *k, const store_zrange *r, size_t *n)
{
    return small(k) ? pk_span(&STORE_KV(k)->pk, r, n) : zsl_span(STORE_KV(k)->zs, r, n);
}

void store_zset_visit(const store_key *k, size_t start, size_t n, int reverse,
                      store_zmember_fn fn, void *ctx)
{
    if (n == 0) return;
    if (small(k))
        pk_visit(&STORE_KV(k)->pk, start, n, reverse, fn, ctx);
    else
        zsl_visit(STORE_KV(k)->zs, start, n, reverse, fn, ctx);
}

void store_zset_del_ranks(store *s, store_key *k, size_t start, size_t n)
{
    if (n == 0) return;
    if (small(k))
        pack_delete(s, &STORE_KV(k)->pk, pack_offset(&STORE_KV(k)->pk, 2 * start), 2 * n);
    else
        zsl_delete_ranks(s, STORE_KV(k)->zs, start, n);
}

uint64_t store_zset_scan(store_key *k, uint64_t cursor, store_zmember_fn fn, void *ctx)
{
    if (!small(k)) return zsl_scan(STORE_KV(k)->zs, cursor, fn, ctx);
    store_zset_visit(k, 0, store_zset_len(k), 0, fn, ctx);
    return 0;
}

int store_zset_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2)
{
    return zset_cmp(s1, m1, l1, s2, m2, l2);
}

static void dup_member(const char *m, size_t mlen, double score, void *ctx)
{
    void **args = ctx;
    zsl_insert(args[0], args[1], score, m, mlen);
}

/* A skiplist is rebuilt member by member (its levels are drawn anew);
 * a packed set is one buffer copy. */
void store_zset_dup(store *s, store_key *dst, const store_key *src)
{
    if (small(src)) {
        pack_dup(s, &STORE_KV(src)->pk, &STORE_KV(dst)->pk);
        return;
    }
    const store_zset *from = STORE_KV(src)->zs;
    store_zset *z = zsl_new(s);
    void *args[2] = { s, z };
    zsl_visit(from, 0, zsl_len(from), 0, dup_member, args);
    STORE_KV(dst)->zs = z;
    dst->enc = STORE_ENC_ZSET_SKIPLIST;
}
