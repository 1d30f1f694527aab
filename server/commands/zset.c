/* zset.c - sorted set commands (ZADD ... ZPOPMAX): Redis 7.0's option
 * grammar, range syntax (score: strtod, "(" exclusive; lex: "[", "(",
 * "-", "+"), errors in Redis's order, RESP2 bulk / RESP3 double scores
 * and keyspace events. A zset key never exists empty. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "num.h"
#include "zset.h"

/* ---- replies ---- */

/* How members go out: alone, with scores as ZRANGE WITHSCORES sends them
 * ([member, score] pairs in RESP3), with scores always flat, or always in
 * pairs (ZMPOP); BARE_SCORES is flat without the array's header (BZPOPMIN
 * puts them in its own, after the key). */
enum { MEMBERS, WITH_SCORES, FLAT_SCORES, PAIRED_SCORES, BARE_SCORES };

static void emit_member(const char *m, size_t mlen, double score, void *ctx)
{
    reply_bulk(ctx, m, mlen);
}

static void emit_flat(const char *m, size_t mlen, double score, void *ctx)
{
    reply_bulk(ctx, m, mlen);
    reply_double(ctx, score);
}

static void emit_pair(const char *m, size_t mlen, double score, void *ctx)
{
    reply_array(ctx, 2);
    emit_flat(m, mlen, score, ctx);
}

/* n elements from rank start, shaped by `how`. */
static void reply_members(client *c, const store_key *k, size_t start, size_t n, int reverse, int how)
{
    if (how == WITH_SCORES) how = c->proto < 3 ? FLAT_SCORES : PAIRED_SCORES;
    if (how != BARE_SCORES) reply_array(c, (long long)(how == FLAT_SCORES ? 2 * n : n));
    store_zmember_fn emit = how == MEMBERS ? emit_member : how == PAIRED_SCORES ? emit_pair : emit_flat;
    if (k) store_zset_visit(k, start, n, reverse, emit, c);
}

/* ---- ZADD / ZINCRBY ---- */

static int zadd_option(const resp_slice *a, int *flags, int *ch)
{
    static const struct { const char *name; int flag; } opts[] = {
        {"nx", STORE_ZADD_NX}, {"xx", STORE_ZADD_XX}, {"gt", STORE_ZADD_GT},
        {"lt", STORE_ZADD_LT}, {"incr", STORE_ZADD_INCR},
    };
    if (arg_is(a, "ch")) {
        *ch = 1;
        return 1;
    }
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        if (!arg_is(a, opts[i].name)) continue;
        *flags |= opts[i].flag;
        return 1;
    }
    return 0;
}

static int score_arg(const resp_slice *a, double *d) { return store_str2double(a->ptr, a->len, d); }

/* Options, then score-member pairs from argv[*first]; every score is
 * checked before anything changes. 0 after an error reply. */
static int zadd_parse(client *c, int *flags, int *ch, int *first)
{
    int j = 2;
    double d;
    while (j < c->argc && zadd_option(&c->argv[j], flags, ch)) j++;
    int pairs = c->argc - j;
    const char *err = NULL;
    if (pairs == 0 || pairs % 2)
        err = "ERR syntax error";
    else if ((*flags & STORE_ZADD_NX) && (*flags & STORE_ZADD_XX))
        err = "ERR XX and NX options at the same time are not compatible";
    else if (((*flags & (STORE_ZADD_GT | STORE_ZADD_LT)) && (*flags & STORE_ZADD_NX)) ||
             ((*flags & STORE_ZADD_GT) && (*flags & STORE_ZADD_LT)))
        err = "ERR GT, LT, and/or NX options at the same time are not compatible";
    else if ((*flags & STORE_ZADD_INCR) && pairs > 2)
        err = "ERR INCR option supports a single increment-element pair";
    for (int i = j; !err && i < c->argc; i += 2)
        if (!score_arg(&c->argv[i], &d)) err = "ERR value is not a valid float";
    if (err) reply_error(c, err);
    *first = j;
    return err == NULL;
}

void zset_add_members(client *c, int flags, int ch, int first, int stride, zset_score_fn score_of)
{
    int out;
    long long added = 0, updated = 0, processed = 0;
    double score = 0, newscore = 0;
    int incr = flags & STORE_ZADD_INCR;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_ZSET)) return;
    if (!k && !(flags & STORE_ZADD_XX))   /* XX on a missing key: nothing to do */
        k = store_create_key(client_db(c), c->argv[1].ptr, c->argv[1].len, STORE_ZSET);
    for (int i = first; k && i < c->argc; i += stride) {
        const resp_slice *m = &c->argv[i + stride - 1];
        score_of(&c->argv[i], &score);
        if (store_zset_add(client_db(c), k, score, m->ptr, m->len, flags, &out, &newscore) != STORE_OK) {
            reply_error(c, "ERR resulting score is not a number (NaN)");
            return;   /* only INCR gets here, and before changing anything */
        }
        added += (out & STORE_ZADD_ADDED) != 0;
        updated += (out & STORE_ZADD_UPDATED) != 0;
        processed += !(out & STORE_ZADD_NOP);
    }
    if (added || updated) db_notify(c, STORE_EV_ZSET, incr ? "zincr" : "zadd", &c->argv[1]);
    if (!incr)
        reply_int(c, ch ? added + updated : added);
    else if (processed)
        reply_double(c, newscore);
    else
        reply_null(c);
}

static void zadd_generic(client *c, int flags)
{
    int ch = 0, first;
    if (zadd_parse(c, &flags, &ch, &first)) zset_add_members(c, flags, ch, first, 2, score_arg);
}

void cmd_zadd(client *c) { zadd_generic(c, 0); }
void cmd_zincrby(client *c) { zadd_generic(c, STORE_ZADD_INCR); }

/* ---- single-member reads and ZREM ---- */

void cmd_zcard(client *c)
{
    store_key *k;
    if (db_read_typed(c, &c->argv[1], STORE_ZSET, &k))
        reply_int(c, k ? (long long)store_zset_len(k) : 0);
}

static void reply_score(client *c, const store_key *k, const resp_slice *m)
{
    double score;
    if (k && store_zset_score(k, m->ptr, m->len, &score))
        reply_double(c, score);
    else
        reply_null(c);
}

void cmd_zscore(client *c)
{
    store_key *k;
    if (db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) reply_score(c, k, &c->argv[2]);
}

void cmd_zmscore(client *c)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_score(c, k, &c->argv[i]);
}

static void rank_generic(client *c, int reverse)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    long long r = k ? store_zset_rank(k, c->argv[2].ptr, c->argv[2].len) : -1;
    if (r < 0)
        reply_null(c);
    else
        reply_int(c, reverse ? (long long)store_zset_len(k) - 1 - r : r);
}

void cmd_zrank(client *c) { rank_generic(c, 0); }
void cmd_zrevrank(client *c) { rank_generic(c, 1); }

/* Redis stops at the member that empties the set. */
void cmd_zrem(client *c)
{
    long long deleted = 0;
    int emptied = 0;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_ZSET)) return;
    for (int i = 2; k && i < c->argc && !emptied; i++) {
        deleted += store_zset_del(client_db(c), k, c->argv[i].ptr, c->argv[i].len);
        emptied = store_zset_len(k) == 0;
    }
    if (deleted) db_notify(c, STORE_EV_ZSET, "zrem", &c->argv[1]);
    if (emptied) db_delete_emptied(c, k);
    reply_int(c, deleted);
}

/* ---- ranges ---- */

enum { BY_AUTO, BY_RANK, BY_SCORE, BY_LEX };

/* zslParseRange: Redis hands the argument to strtod as a C string, so it
 * ends at the first NUL, may start with spaces or be empty (0); it must
 * be consumed to its end and not be NaN. */
static int parse_score_bound(const resp_slice *a, store_zbound *b)
{
    char stackbuf[128], *end;
    size_t skip = a->len && a->ptr[0] == '(', len = strnlen(a->ptr + skip, a->len - skip);
    char *buf = len < sizeof(stackbuf) ? stackbuf : mem_alloc(len + 1);
    memcpy(buf, a->ptr + skip, len);
    buf[len] = '\0';
    b->score = strtod(buf, &end);
    int ok = *end == '\0' && !isnan(b->score);
    if (buf != stackbuf) free(buf);
    b->ex = (int)skip;
    return ok;
}

/* zslParseLexRangeItem: "[x" / "(x" / "-" / "+" (which, read as C
 * strings, may be followed by a NUL and anything). */
static int parse_lex_bound(const resp_slice *a, store_zbound *b)
{
    memset(b, 0, sizeof(*b));
    if (a->len == 0) return 0;
    switch (a->ptr[0]) {
    case '-':
    case '+':
        if (a->len > 1 && a->ptr[1] != '\0') return 0;
        b->inf = a->ptr[0] == '-' ? -1 : 1;
        b->ex = 1;
        return 1;
    case '(':
    case '[':
        b->lex = a->ptr + 1;
        b->lexlen = a->len - 1;
        b->ex = a->ptr[0] == '(';
        return 1;
    default:
        return 0;
    }
}

static int parse_range(client *c, int by, const resp_slice *min, const resp_slice *max, store_zrange *r)
{
    memset(r, 0, sizeof(*r));
    r->by_lex = by == BY_LEX;
    if (by == BY_SCORE && !(parse_score_bound(min, &r->min) && parse_score_bound(max, &r->max))) {
        reply_error(c, "ERR min or max is not a float");
        return 0;
    }
    if (by == BY_LEX && !(parse_lex_bound(min, &r->min) && parse_lex_bound(max, &r->max))) {
        reply_error(c, "ERR min or max not valid string range item");
        return 0;
    }
    return 1;
}

typedef struct zrange_req {
    int by, rev, withscores;
    long long offset, limit;   /* limit < 0: no limit */
    int store;                 /* ZRANGESTORE: no WITHSCORES */
} zrange_req;

/* Options after "key min max" (the key at argv[base]), as
 * zrangeGenericCommand reads them: BY* and REV only where the command
 * leaves them open. 0 after an error. */
static int zrange_options(client *c, int base, zrange_req *q)
{
    for (int j = base + 3; j < c->argc; j++) {
        const resp_slice *a = &c->argv[j];
        if (!q->store && arg_is(a, "withscores")) {
            q->withscores = 1;
        } else if (arg_is(a, "limit") && c->argc - j - 1 >= 2) {
            if (!arg_ll_or_reply(c, a + 1, &q->offset) || !arg_ll_or_reply(c, a + 2, &q->limit))
                return 0;
            j += 2;
        } else if (q->rev < 0 && arg_is(a, "rev")) {
            q->rev = 1;
        } else if (q->by == BY_AUTO && arg_is(a, "bylex")) {
            q->by = BY_LEX;
        } else if (q->by == BY_AUTO && arg_is(a, "byscore")) {
            q->by = BY_SCORE;
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    if (q->rev < 0) q->rev = 0;
    if (q->by == BY_AUTO) q->by = BY_RANK;
    if (q->limit != -1 && q->by == BY_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return 0;
    }
    if (q->withscores && q->by == BY_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return 0;
    }
    return 1;
}

/* OFFSET/LIMIT over a run of n elements from rank first, walked from its
 * low or (rev) high end: the start rank, *n the count. */
static size_t limit_span(const zrange_req *q, size_t first, size_t *n)
{
    if (q->offset < 0 || (unsigned long long)q->offset >= *n) {
        *n = 0;
        return first;
    }
    size_t skip = (size_t)q->offset, start = q->rev ? first + *n - 1 - skip : first + skip;
    *n -= skip;
    if (q->limit >= 0 && (unsigned long long)q->limit < *n) *n = (size_t)q->limit;
    return start;
}

static void gather_member(const char *m, size_t mlen, double score, void *ctx)
{
    zset_result_add(ctx, m, mlen, score);
}

/* ZRANGESTORE's end: the range copied out, then written to dst. */
static void zrange_store(client *c, const resp_slice *dst, const store_key *k, size_t first,
                         size_t n, int rev)
{
    zset_result res = {0};
    if (k) store_zset_visit(k, first, n, rev, gather_member, &res);
    zset_result_seal(&res);
    zset_result_store(c, dst, &res, "zrangestore");
    zset_result_free(&res);
}

/* ZRANGE, ZRANGESTORE and the older spellings: the source key at
 * argv[base], dst for ZRANGESTORE (else NULL); by / rev fixed by the
 * command, or BY_AUTO / -1 for ZRANGE's options to choose. */
static void zrange_generic(client *c, int base, const resp_slice *dst, int by, int rev)
{
    zrange_req q = {by, rev, 0, 0, -1, dst != NULL};
    long long start = 0, end = 0;
    size_t first = 0, n = 0;
    store_zrange r;
    store_key *k;
    if (!zrange_options(c, base, &q)) return;
    int swap = q.rev && q.by != BY_RANK;   /* "max min" order */
    const resp_slice *min = &c->argv[base + (swap ? 2 : 1)], *max = &c->argv[base + (swap ? 1 : 2)];
    if (q.by == BY_RANK && !(arg_ll_or_reply(c, min, &start) && arg_ll_or_reply(c, max, &end))) return;
    if (!parse_range(c, q.by, min, max, &r)) return;
    if (!db_read_typed(c, &c->argv[base], STORE_ZSET, &k)) return;
    if (k && q.by == BY_RANK && arg_index_range(start, end, store_zset_len(k), &first, &n)) {
        if (q.rev) first = store_zset_len(k) - 1 - first;
    } else if (k && q.by != BY_RANK) {
        first = store_zset_span(k, &r, &n);
        first = limit_span(&q, first, &n);
    }
    if (dst)
        zrange_store(c, dst, k, first, n, q.rev);
    else
        reply_members(c, k, first, n, q.rev, q.withscores ? WITH_SCORES : MEMBERS);
}

void cmd_zrange(client *c) { zrange_generic(c, 1, NULL, BY_AUTO, -1); }
void cmd_zrangestore(client *c) { zrange_generic(c, 2, &c->argv[1], BY_AUTO, -1); }
void cmd_zrevrange(client *c) { zrange_generic(c, 1, NULL, BY_RANK, 1); }
void cmd_zrangebyscore(client *c) { zrange_generic(c, 1, NULL, BY_SCORE, 0); }
void cmd_zrevrangebyscore(client *c) { zrange_generic(c, 1, NULL, BY_SCORE, 1); }
void cmd_zrangebylex(client *c) { zrange_generic(c, 1, NULL, BY_LEX, 0); }
void cmd_zrevrangebylex(client *c) { zrange_generic(c, 1, NULL, BY_LEX, 1); }

/* ZCOUNT / ZLEXCOUNT: the range is parsed before the key is looked up. */
static void count_generic(client *c, int by)
{
    store_zrange r;
    store_key *k;
    size_t n = 0;
    if (!parse_range(c, by, &c->argv[2], &c->argv[3], &r)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    if (k) store_zset_span(k, &r, &n);
    reply_int(c, (long long)n);
}

void cmd_zcount(client *c) { count_generic(c, BY_SCORE); }
void cmd_zlexcount(client *c) { count_generic(c, BY_LEX); }

/* ZREMRANGEBY{RANK,SCORE,LEX}: the range is parsed before the key is
 * looked up. */
static void zremrange_generic(client *c, int by, const char *event)
{
    long long start = 0, end = 0;
    size_t first = 0, n = 0;
    store_zrange r;
    if (by == BY_RANK && !(arg_ll_or_reply(c, &c->argv[2], &start) && arg_ll_or_reply(c, &c->argv[3], &end)))
        return;
    if (!parse_range(c, by, &c->argv[2], &c->argv[3], &r)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_ZSET)) return;
    if (k && by == BY_RANK && !arg_index_range(start, end, store_zset_len(k), &first, &n)) n = 0;
    if (k && by != BY_RANK) first = store_zset_span(k, &r, &n);
    if (n) {
        store_zset_del_ranks(client_db(c), k, first, n);
        db_notify(c, STORE_EV_ZSET, event, &c->argv[1]);
        if (store_zset_len(k) == 0) db_delete_emptied(c, k);
    }
    reply_int(c, (long long)n);
}

void cmd_zremrangebyrank(client *c) { zremrange_generic(c, BY_RANK, "zremrangebyrank"); }
void cmd_zremrangebyscore(client *c) { zremrange_generic(c, BY_SCORE, "zremrangebyscore"); }
void cmd_zremrangebylex(client *c) { zremrange_generic(c, BY_LEX, "zremrangebylex"); }

/* Pop up to count members from the low (or max: high) end of key's k,
 * replied as `how` says: its event, and "del" when that emptied it. */
static void zpop_members(client *c, store_key *k, const resp_slice *key, int max, long long count,
                         int how)
{
    size_t len = store_zset_len(k), n = (unsigned long long)count < len ? (size_t)count : len;
    reply_members(c, k, max ? len - 1 : 0, n, max, how);
    store_zset_del_ranks(client_db(c), k, max ? len - n : 0, n);
    db_notify(c, STORE_EV_ZSET, max ? "zpopmax" : "zpopmin", key);
    if (n == len) {
        store_delete_key(client_db(c), k);
        db_notify(c, STORE_EV_GENERIC, "del", key);
    }
}

/* ZPOPMIN/ZPOPMAX key [count]: flat [member, score, ...], except RESP3
 * with a count, which nests the pairs. */
static void zpop_generic(client *c, int max)
{
    long long count = -1;
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_positive_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_ZSET)) return;
    if (!k || count == 0) {
        reply_array(c, 0);
        return;
    }
    zpop_members(c, k, &c->argv[1], max, count < 0 ? 1 : count, count < 0 ? FLAT_SCORES : WITH_SCORES);
}

void cmd_zpopmin(client *c) { zpop_generic(c, 0); }
void cmd_zpopmax(client *c) { zpop_generic(c, 1); }

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: the first existing
 * key answers [key, [[member, score], ...]] (nested in RESP2 too). */
void cmd_zmpop(client *c)
{
    long long count;
    int max, where_idx = list_mpop_parse_or_reply(c, 1, "min", "max", &max, &count);
    if (!where_idx) return;
    for (int j = 2; j < where_idx; j++) {
        store_key *k = db_lookup_write(c, &c->argv[j]);
        if (!k) continue;
        if (!db_check_type(c, k, STORE_ZSET)) return;
        reply_array(c, 2);
        reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        zpop_members(c, k, &c->argv[j], max, count, PAIRED_SCORES);
        return;
    }
    reply_null_array(c);
}

/* ---- BZPOPMIN, BZPOPMAX, BZMPOP (Redis 7.0's blockingGenericZpopCommand):
 * ZPOP's answer when a key has members, else the client waits (block.c)
 * and is served below with its argv back in place. ---- */

/* BZPOPMIN/BZPOPMAX: [key, member, score]. */
static void reply_bzpop(client *c, store_key *k, const resp_slice *key, int max)
{
    reply_array(c, 3);
    reply_bulk(c, key->ptr, key->len);
    zpop_members(c, k, key, max, 1, BARE_SCORES);
}

/* ZMPOP's [key, [[member, score], ...]]. */
static void reply_bzmpop(client *c, store_key *k, const resp_slice *key, int max, long long count)
{
    reply_array(c, 2);
    reply_bulk(c, key->ptr, key->len);
    zpop_members(c, k, key, max, count, PAIRED_SCORES);
}

static void serve_bzpopmin(client *c, store_key *k, const resp_slice *key) { reply_bzpop(c, k, key, 0); }
static void serve_bzpopmax(client *c, store_key *k, const resp_slice *key) { reply_bzpop(c, k, key, 1); }

static void serve_bzmpop(client *c, store_key *k, const resp_slice *key)
{
    long long count;
    int max;
    list_mpop_parse_or_reply(c, 2, "min", "max", &max, &count);   /* checked before */
    reply_bzmpop(c, k, key, max, count);
}

void cmd_bzpopmin(client *c) { block_pop_or_wait(c, BLOCK_ZSET, 1, c->argc - 2, c->argc - 1, serve_bzpopmin); }
void cmd_bzpopmax(client *c) { block_pop_or_wait(c, BLOCK_ZSET, 1, c->argc - 2, c->argc - 1, serve_bzpopmax); }

void cmd_bzmpop(client *c)
{
    long long count;
    int max, where_idx = list_mpop_parse_or_reply(c, 2, "min", "max", &max, &count);
    if (where_idx) block_pop_or_wait(c, BLOCK_ZSET, 3, where_idx - 3, 1, serve_bzmpop);
}
