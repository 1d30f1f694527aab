/* zset_ops.c - sorted-set commands over several keys or by chance: ZUNION,
 * ZINTER, ZDIFF and their STORE forms, ZINTERCARD, ZRANDMEMBER and ZSCAN. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "num.h"
#include "set.h"
#include "zset.h"

/* ---- inputs: every type ZUNION & co. read, each as (member, score) ---- */

/* One input key; k NULL is a missing key, the empty set. A set's members
 * count as scored 1: zsrc_accepts and the three readers below are the
 * only places that branch on the type. */
typedef struct zsrc {
    store_key *k;
    double weight;
} zsrc;

static int zsrc_accepts(const store_key *k)
{
    return store_key_type(k) == STORE_ZSET || store_key_type(k) == STORE_SET;
}

static int zsrc_is_set(const zsrc *s) { return store_key_type(s->k) == STORE_SET; }

static size_t zsrc_len(const zsrc *s)
{
    if (!s->k) return 0;
    return zsrc_is_set(s) ? store_set_len(store_set_of_const(s->k)) : store_zset_len(s->k);
}

static int zsrc_find(const zsrc *s, const char *m, size_t mlen, double *score)
{
    if (!s->k) return 0;
    if (!zsrc_is_set(s)) return store_zset_score(s->k, m, mlen, score);
    if (!store_set_has(store_set_of_const(s->k), m, mlen)) return 0;
    if (score) *score = 1.0;
    return 1;
}

/* A set's members as a sorted set's, each scored 1. */
struct set_as_zset {
    store_zmember_fn fn;
    void *ctx;
};

static void set_member_scored(const char *m, size_t len, void *ctx)
{
    const struct set_as_zset *a = ctx;
    a->fn(m, len, 1.0, a->ctx);
}

static void zsrc_each(const zsrc *s, store_zmember_fn fn, void *ctx)
{
    if (!s->k) return;
    if (!zsrc_is_set(s)) {
        store_zset_visit(s->k, 0, zsrc_len(s), 0, fn, ctx);
        return;
    }
    struct set_as_zset a = {fn, ctx};
    store_set_foreach(store_set_of_const(s->k), set_member_scored, &a);
}

/* zuiCompareByCardinality, for qsort as Redis calls it (glibc's, so inputs
 * of equal size keep the order Redis gives them: SUM adds in that order). */
static int by_cardinality(const void *a, const void *b)
{
    size_t x = zsrc_len(a), y = zsrc_len(b);
    return x > y ? 1 : x < y ? -1 : 0;
}

/* ---- the result: members copied out (the destination may be an input) ---- */

void zset_result_add(zset_result *r, const char *m, size_t mlen, double score)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = mem_realloc(r->v, r->cap * sizeof(*r->v));
    }
    if (r->used + mlen > r->room) {
        r->room = (r->used + mlen) * 2 + 256;
        r->arena = mem_realloc(r->arena, r->room);
    }
    if (mlen) memcpy(r->arena + r->used, m, mlen);
    r->v[r->n] = (zset_item){r->used, NULL, mlen, score, r->n};
    r->n++;
    r->used += mlen;
}

/* The arena is final: point every item at its bytes. */
void zset_result_seal(zset_result *r)
{
    for (size_t i = 0; i < r->n; i++) r->v[i].ptr = r->arena + r->v[i].off;
}

void zset_result_free(zset_result *r)
{
    free(r->v);
    free(r->arena);
}

static int by_member_then_seq(const void *a, const void *b)
{
    const zset_item *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_score(const void *a, const void *b)
{
    const zset_item *x = a, *y = b;
    return store_zset_cmp(x->score, x->ptr, x->len, y->score, y->ptr, y->len);
}

/* ---- the operations ---- */

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

/* zunionInterAggregate: inf + -inf is 0 by Redis's convention. */
static void aggregate(double *target, double val, int agg)
{
    if (agg == AGG_SUM) {
        *target = *target + val;
        if (isnan(*target)) *target = 0.0;
    } else if (agg == AGG_MIN) {
        *target = val < *target ? val : *target;
    } else {
        *target = val > *target ? val : *target;
    }
}

typedef struct zop {
    zsrc *src;
    long long nsrc;
    int op, agg;
    int card_only;
    long long limit;              /* ZINTERCARD: stop at this many (0: all) */
    unsigned long long card;
    int weighted_first;           /* the union's current input */
    zset_result res;
} zop;

static void union_visit(const char *m, size_t mlen, double score, void *ctx)
{
    zop *o = ctx;
    double s = o->src[o->weighted_first].weight * score;
    if (isnan(s)) s = 0;
    zset_result_add(&o->res, m, mlen, s);
}

static void inter_visit(const char *m, size_t mlen, double score, void *ctx)
{
    zop *o = ctx;
    if (o->card_only && o->limit && o->card >= (unsigned long long)o->limit) return;
    double s = o->src[0].weight * score, value;
    if (isnan(s)) s = 0;
    for (long long j = 1; j < o->nsrc; j++) {
        if (o->src[j].k == o->src[0].k) {
            value = score * o->src[j].weight;
        } else if (zsrc_find(&o->src[j], m, mlen, &value)) {
            value *= o->src[j].weight;
        } else {
            return;
        }
        aggregate(&s, value, o->agg);
    }
    if (o->card_only)
        o->card++;
    else
        zset_result_add(&o->res, m, mlen, s);
}

/* A member of the first input in none of the others keeps its score. */
static void diff_visit(const char *m, size_t mlen, double score, void *ctx)
{
    zop *o = ctx;
    for (long long j = 1; j < o->nsrc; j++)
        if (o->src[j].k == o->src[0].k || zsrc_find(&o->src[j], m, mlen, NULL)) return;
    zset_result_add(&o->res, m, mlen, score);
}

/* Union: every (member, score) of every input in input order, then each
 * member's scores aggregated in that order. */
static void run_union(zop *o)
{
    for (long long i = 0; i < o->nsrc; i++) {
        o->weighted_first = (int)i;
        zsrc_each(&o->src[i], union_visit, o);
    }
    zset_result_seal(&o->res);
    if (o->res.n < 2) return;
    qsort(o->res.v, o->res.n, sizeof(zset_item), by_member_then_seq);
    size_t kept = 0;
    for (size_t i = 0; i < o->res.n; i++) {
        zset_item *it = &o->res.v[i];
        if (kept && it->len == o->res.v[kept - 1].len &&
            memcmp(it->ptr, o->res.v[kept - 1].ptr, it->len) == 0) {
            aggregate(&o->res.v[kept - 1].score, it->score, o->agg);
            continue;
        }
        o->res.v[kept++] = *it;
    }
    o->res.n = kept;
}

static void run(zop *o)
{
    if (o->op == OP_UNION) {
        run_union(o);
    } else {
        /* Redis skips it all when the first (smallest) input is empty */
        if (zsrc_len(&o->src[0]) > 0)
            zsrc_each(&o->src[0], o->op == OP_INTER ? inter_visit : diff_visit, o);
        zset_result_seal(&o->res);
    }
    if (o->res.n > 1) qsort(o->res.v, o->res.n, sizeof(zset_item), by_score);   /* v may be NULL */
}

/* ---- replies and the destination ---- */

static void reply_result(client *c, const zset_result *r, int withscores)
{
    reply_array(c, (long long)(withscores && c->proto < 3 ? 2 * r->n : r->n));
    for (size_t i = 0; i < r->n; i++) {
        if (withscores && c->proto >= 3) reply_array(c, 2);
        reply_bulk(c, r->v[i].ptr, r->v[i].len);
        if (withscores) reply_double(c, r->v[i].score);
    }
}

void zset_result_store(client *c, const resp_slice *dst, const zset_result *r, const char *event)
{
    store *db = client_db(c);
    store_key *k = db_lookup_write(c, dst);
    if (r->n == 0) {
        reply_int(c, 0);
        if (k) db_release_key(c, k, dst, STORE_RELEASE_REPLACED);
        return;
    }
    /* setKey: a new value (new encoding history) without the old TTL */
    if (k) {
        store_key_reset(db, k, STORE_ZSET);
        store_key_set_deadline(db, k, STORE_NO_DEADLINE);
    } else {
        k = store_create_key(db, dst->ptr, dst->len, STORE_ZSET);
    }
    for (size_t i = 0; i < r->n; i++) {
        int out;
        double ns;
        store_zset_add(db, k, r->v[i].score, r->v[i].ptr, r->v[i].len, 0, &out, &ns);
    }
    reply_int(c, (long long)r->n);
    db_notify(c, STORE_EV_ZSET, event, dst);
}

/* zunionInterDiffGenericCommand: numkeys at argv[nk], then the keys, then
 * WEIGHTS / AGGREGATE (not for ZDIFF), WITHSCORES (not when storing) or
 * LIMIT (ZINTERCARD only); every key is read and type-checked before the
 * options are looked at, as in Redis. */
static void zop_generic(client *c, const resp_slice *dst, int nk, int op, int card_only)
{
    zop o = {.op = op, .agg = AGG_SUM, .card_only = card_only};
    int withscores = 0, j;
    if (!arg_ll_or_reply(c, &c->argv[nk], &o.nsrc)) return;
    if (o.nsrc < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cmd->name);
        return;
    }
    if (o.nsrc > c->argc - (nk + 1)) {
        reply_syntax_error(c);
        return;
    }
    o.src = mem_calloc((size_t)o.nsrc, sizeof(*o.src));
    for (j = nk + 1; j - (nk + 1) < o.nsrc; j++) {
        zsrc *s = &o.src[j - (nk + 1)];
        s->k = db_lookup_read(c, &c->argv[j]);
        s->weight = 1.0;
        if (s->k && !zsrc_accepts(s->k)) {
            reply_wrongtype(c);
            goto out;
        }
    }
    while (j < c->argc) {
        const resp_slice *a = &c->argv[j];
        int remaining = c->argc - j;
        if (op != OP_DIFF && !card_only && remaining >= o.nsrc + 1 && arg_is(a, "weights")) {
            j++;
            for (long long i = 0; i < o.nsrc; i++, j++) {
                if (!store_str2double(c->argv[j].ptr, c->argv[j].len, &o.src[i].weight)) {
                    reply_error(c, "ERR weight value is not a float");
                    goto out;
                }
            }
        } else if (op != OP_DIFF && !card_only && remaining >= 2 && arg_is(a, "aggregate")) {
            const resp_slice *v = &c->argv[j + 1];
            if (arg_is(v, "sum")) {
                o.agg = AGG_SUM;
            } else if (arg_is(v, "min")) {
                o.agg = AGG_MIN;
            } else if (arg_is(v, "max")) {
                o.agg = AGG_MAX;
            } else {
                reply_syntax_error(c);
                goto out;
            }
            j += 2;
        } else if (!dst && !card_only && arg_is(a, "withscores")) {
            withscores = 1;
            j++;
        } else if (card_only && remaining >= 2 && arg_is(a, "limit")) {
            const resp_slice *v = &c->argv[j + 1];
            if (!store_str2ll(v->ptr, v->len, &o.limit) || o.limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                goto out;
            }
            j += 2;
        } else {
            reply_syntax_error(c);
            goto out;
        }
    }
    if (op != OP_DIFF) qsort(o.src, (size_t)o.nsrc, sizeof(*o.src), by_cardinality);
    run(&o);
    if (dst) {
        static const char *const events[] = {"zunionstore", "zinterstore", "zdiffstore"};
        zset_result_store(c, dst, &o.res, events[op]);
    } else if (card_only) {
        reply_int(c, (long long)o.card);
    } else {
        reply_result(c, &o.res, withscores);
    }
out:
    zset_result_free(&o.res);
    free(o.src);
}

void cmd_zunion(client *c) { zop_generic(c, NULL, 1, OP_UNION, 0); }
void cmd_zinter(client *c) { zop_generic(c, NULL, 1, OP_INTER, 0); }
void cmd_zdiff(client *c) { zop_generic(c, NULL, 1, OP_DIFF, 0); }
void cmd_zintercard(client *c) { zop_generic(c, NULL, 1, OP_INTER, 1); }
void cmd_zunionstore(client *c) { zop_generic(c, &c->argv[1], 2, OP_UNION, 0); }
void cmd_zinterstore(client *c) { zop_generic(c, &c->argv[1], 2, OP_INTER, 0); }
void cmd_zdiffstore(client *c) { zop_generic(c, &c->argv[1], 2, OP_DIFF, 0); }

/* ---- ZRANDMEMBER ---- */

/* A count argument as Redis's getRangeLongFromObjectOrReply(-LONG_MAX,
 * LONG_MAX) reads it (ZRANDMEMBER, HRANDFIELD), then the optional
 * WITHSCORES / WITHVALUES word `with` (counts past +-LONG_MAX/2 are refused
 * with it: the reply would be twice as long). 0 after the error. */
int zset_rand_count_or_reply(client *c, const char *with, long long *count, int *withx)
{
    const resp_slice *a = &c->argv[2];
    if (!store_str2ll(a->ptr, a->len, count)) {
        reply_not_integer(c);
        return 0;
    }
    if (*count == LLONG_MIN) {
        reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                       "9223372036854775807");
        return 0;
    }
    *withx = 0;
    if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], with))) {
        reply_syntax_error(c);
        return 0;
    }
    if (c->argc == 4) {
        *withx = 1;
        if (*count < -LLONG_MAX / 2 || *count > LLONG_MAX / 2) {
            reply_error(c, "ERR value is out of range");
            return 0;
        }
    }
    return 1;
}

static void emit_rand(client *c, const char *m, size_t mlen, double score, int withscores)
{
    if (withscores && c->proto >= 3) reply_array(c, 2);
    reply_bulk(c, m, mlen);
    if (withscores) reply_double(c, score);
}

typedef struct rand_pick {
    client *c;
    int withscores;
} rand_pick;

static void emit_pick(const char *m, size_t mlen, double score, void *ctx)
{
    rand_pick *p = ctx;
    emit_rand(p->c, m, mlen, score, p->withscores);
}

/* A uniform draw in [0, n). */
static size_t draw(client *c, size_t n) { return (size_t)(server_random(c->srv) % n); }

void cmd_zrandmember(client *c)
{
    long long count;
    int withscores = 0;
    store_key *k;
    if (c->argc >= 3 && !zset_rand_count_or_reply(c, "withscores", &count, &withscores)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    rand_pick p = {c, withscores};
    if (c->argc < 3) {
        if (!k) {
            reply_null(c);
            return;
        }
        store_zset_visit(k, draw(c, store_zset_len(k)), 1, 0, emit_pick, &p);
        return;
    }
    if (!k || count == 0) {
        reply_array(c, 0);
        return;
    }
    size_t size = store_zset_len(k);
    /* a negative count: that many draws, members may repeat */
    if (count < 0 || count == 1) {
        unsigned long long n = count < 0 ? (unsigned long long)-count : 1;
        reply_array(c, (long long)(withscores && c->proto < 3 ? 2 * n : n));
        while (n-- && client_output_room(c)) store_zset_visit(k, draw(c, size), 1, 0, emit_pick, &p);
        return;
    }
    size_t n = (unsigned long long)count < size ? (size_t)count : size;
    reply_array(c, (long long)(withscores && c->proto < 3 ? 2 * n : n));
    if (n == size) {   /* Redis's zuiNext walks from the highest rank down */
        store_zset_visit(k, size - 1, size, 1, emit_pick, &p);
        return;
    }
    /* n distinct members, each subset as likely (Knuth's selection
     * sampling: rank i is taken with probability needed / left) */
    for (size_t i = 0, need = n; need; i++) {
        if (draw(c, size - i) >= need) continue;
        store_zset_visit(k, i, 1, 0, emit_pick, &p);
        need--;
    }
}

/* ---- ZSCAN ---- */

/* What one scan call gathered: members (or fields) and the score (or
 * value) text beside each, as Redis lists them, before MATCH filters. */
typedef struct scan_batch {
    zset_result items;
    const resp_slice *pat;
} scan_batch;

static void scan_member(const char *m, size_t mlen, double score, void *ctx)
{
    scan_batch *b = ctx;
    zset_result_add(&b->items, m, mlen, score);
}

/* Redis answers a scan with [cursor, [member, score, ...]]; scores as
 * %.17g text (its listpack and ld2string print the same digits). */
void cmd_zscan(client *c)
{
    uint64_t cursor;
    scan_opts o;
    store_key *k = keys_scan_key_or_reply(c, STORE_ZSET, &cursor, &o);
    if (!k) return;
    scan_batch b = {.pat = o.pat};
    long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
    do {
        cursor = store_zset_scan(k, cursor, scan_member, &b);
    } while (cursor && maxiter-- && 2 * b.items.n < (unsigned long long)o.count);
    zset_result_seal(&b.items);
    size_t kept = 0;
    for (size_t i = 0; i < b.items.n; i++)
        if (keys_scan_match(o.pat, b.items.v[i].ptr, b.items.v[i].len)) b.items.v[kept++] = b.items.v[i];
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)cursor);
    reply_array(c, (long long)(2 * kept));
    for (size_t i = 0; i < kept; i++) {
        char buf[64];
        double d = b.items.v[i].score;
        int len = isinf(d) ? snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf")
                           : snprintf(buf, sizeof(buf), "%.17g", d);
        reply_bulk(c, b.items.v[i].ptr, b.items.v[i].len);
        reply_bulk(c, buf, (size_t)len);
    }
    zset_result_free(&b.items);
}
