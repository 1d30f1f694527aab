/* zset.h - sorted set values: binary-safe members ordered by (score,
 * member bytes) as Redis orders them; ranks are 0-based from the lowest. */
#ifndef LATCHD_STORE_ZSET_H
#define LATCHD_STORE_ZSET_H

#include "store.h"

enum { STORE_ERR_NAN = -3 };   /* a score would become NaN (inf - inf) */

/* ZADD's input flags (Redis's ZADD_IN_*) and result flags (ZADD_OUT_*). */
enum {
    STORE_ZADD_NX = 1 << 0,
    STORE_ZADD_XX = 1 << 1,
    STORE_ZADD_GT = 1 << 2,
    STORE_ZADD_LT = 1 << 3,
    STORE_ZADD_INCR = 1 << 4,
};
enum {
    STORE_ZADD_ADDED = 1 << 0,
    STORE_ZADD_UPDATED = 1 << 1,
    STORE_ZADD_NOP = 1 << 2,     /* NX/XX/GT/LT said no */
};

/* One end of a range. By score: value, exclusive. By lex: the member
 * bytes, or inf -1 / +1 for "-" / "+" (below / above every member). */
typedef struct store_zbound {
    double score;
    const char *lex;
    size_t lexlen;
    int inf;
    int ex;
} store_zbound;

typedef struct store_zrange {
    int by_lex;
    store_zbound min, max;
} store_zrange;

typedef void (*store_zmember_fn)(const char *m, size_t mlen, double score, void *ctx);

size_t store_zset_len(const store_key *k);
/* Redis's zsetAdd: *out gets STORE_ZADD_ADDED/UPDATED/NOP (0: kept as is),
 * *newscore the score now held unless NOP. STORE_ERR_NAN (nothing changed)
 * or STORE_OK. */
int store_zset_add(store *s, store_key *k, double score, const char *m, size_t mlen,
                   int flags, int *out, double *newscore);
/* 1 with *score set if m is a member. */
int store_zset_score(const store_key *k, const char *m, size_t mlen, double *score);
int store_zset_del(store *s, store_key *k, const char *m, size_t mlen);
/* -1 if m is not a member. */
long long store_zset_rank(const store_key *k, const char *m, size_t mlen);
/* The run of elements in range, as Redis finds it: the first element at or
 * past min, then every one up to max. Returns its first rank; *n its size. */
size_t store_zset_span(const store_key *k, const store_zrange *r, size_t *n);
/* Visit n elements from rank start, towards higher ranks or (reverse)
 * lower ones. The ranks must exist. */
void store_zset_visit(const store_key *k, size_t start, size_t n, int reverse,
                      store_zmember_fn fn, void *ctx);
/* Remove the n elements from rank start (callers delete an emptied key). */
void store_zset_del_ranks(store *s, store_key *k, size_t start, size_t n);
/* ZSCAN: as store_hash_scan, over members and scores (a packed set whole,
 * in rank order, returning 0). fn must not change the set. */
uint64_t store_zset_scan(store_key *k, uint64_t cursor, store_zmember_fn fn, void *ctx);
/* Redis's order of members: by score, then member bytes (memcmp, a prefix
 * first); <0, 0, >0. For callers sorting members they hold themselves. */
int store_zset_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2);

#endif
