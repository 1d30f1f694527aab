/* list.c - list commands (LPUSH ... LTRIM, LMOVE, LPOS, LMPOP): Redis
 * 7.0's argument checks in Redis's order, its replies and keyspace events.
 * A list key never exists empty: the removal that empties it deletes it ("del"). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "list.h"
#include "mem.h"
#include "num.h"

static void emit_elem(const char *v, size_t len, void *ctx) { reply_bulk(ctx, v, len); }

static void push_generic(client *c, int where)
{
    store_key *k = db_write_create(c, &c->argv[1], STORE_LIST);
    if (!k) return;
    for (int i = 2; i < c->argc; i++)
        store_list_push(client_db(c), k, where, c->argv[i].ptr, c->argv[i].len);
    db_notify(c, STORE_EV_LIST, where == STORE_HEAD ? "lpush" : "rpush", &c->argv[1]);
    reply_int(c, (long long)store_list_len(k));
}

void cmd_lpush(client *c) { push_generic(c, STORE_HEAD); }
void cmd_rpush(client *c) { push_generic(c, STORE_TAIL); }

/* LPUSHX/RPUSHX: only onto a list that exists; 0 otherwise. */
static void pushx_generic(client *c, int where)
{
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    push_generic(c, where);
}

void cmd_lpushx(client *c) { pushx_generic(c, STORE_HEAD); }
void cmd_rpushx(client *c) { pushx_generic(c, STORE_TAIL); }

/* Reply n elements from one end (the head, or the tail backwards) and
 * remove them: their pop event, and "del" when that emptied the list. */
static void pop_elems(client *c, store_key *k, const resp_slice *key, int head, size_t n)
{
    size_t len = store_list_len(k);
    store_list_range(k, head ? 0 : len - 1, n, !head, emit_elem, c);
    store_list_del_range(client_db(c), k, head ? 0 : len - n, n);
    db_notify(c, STORE_EV_LIST, head ? "lpop" : "rpop", key);
    if (n == len) {
        store_delete_key(client_db(c), k);
        db_notify(c, STORE_EV_GENERIC, "del", key);
    }
}

/* The popped elements are replied before they go; without a count one
 * bulk (nil when missing), with one an array (a null array when missing). */
static void pop_generic(client *c, int where)
{
    long long count = 1;
    int has_count = c->argc == 3, head = where == STORE_HEAD;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (has_count && !arg_positive_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        if (has_count)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    size_t len = store_list_len(k), n = (unsigned long long)count < len ? (size_t)count : len;
    if (has_count) reply_array(c, (long long)n);
    pop_elems(c, k, &c->argv[1], head, n);
}

void cmd_lpop(client *c) { pop_generic(c, STORE_HEAD); }
void cmd_rpop(client *c) { pop_generic(c, STORE_TAIL); }

/* getListPositionFromObjectOrReply: LEFT is the head, RIGHT the tail. */
static int where_or_reply(client *c, const resp_slice *a, int *where)
{
    if (arg_is(a, "left")) {
        *where = STORE_HEAD;
    } else if (arg_is(a, "right")) {
        *where = STORE_TAIL;
    } else {
        reply_syntax_error(c);
        return 0;
    }
    return 1;
}

/* The popped element, copied: it leaves the source before it joins the
 * destination, which may be the same list. */
typedef struct moved {
    char small[128];
    char *ptr;
    size_t len;
} moved;

static void copy_elem(const char *v, size_t len, void *ctx)
{
    moved *m = ctx;
    m->ptr = len <= sizeof(m->small) ? m->small : mem_alloc(len);
    if (len) memcpy(m->ptr, v, len);
    m->len = len;
}

/* Redis's lmoveGenericCommand once src (a non-empty list, named srcname)
 * was found: the destination's type check, then the push and its event
 * ("new" first when the destination is made) before the source's pop
 * event and its "del" when emptied. */
static void lmove_from(client *c, store_key *src, const resp_slice *srcname, const resp_slice *dstname,
                       int from, int to)
{
    store *db = client_db(c);
    store_key *dst = db_lookup_write(c, dstname);
    if (!db_check_type(c, dst, STORE_LIST)) return;
    size_t len = store_list_len(src), at = from == STORE_HEAD ? 0 : len - 1;
    moved m;
    store_list_range(src, at, 1, 0, copy_elem, &m);
    store_list_del_range(db, src, at, 1);
    if (!dst) dst = store_create_key(db, dstname->ptr, dstname->len, STORE_LIST);
    store_list_push(db, dst, to, m.ptr, m.len);
    db_notify(c, STORE_EV_LIST, to == STORE_HEAD ? "lpush" : "rpush", dstname);
    reply_bulk(c, m.ptr, m.len);
    if (m.ptr != m.small) free(m.ptr);
    db_notify(c, STORE_EV_LIST, from == STORE_HEAD ? "lpop" : "rpop", srcname);
    if (store_list_len(src) == 0) db_delete_emptied(c, src);   /* argv[1] is the source, served or not */
}

static void lmove_generic(client *c, int from, int to)
{
    store_key *src = db_lookup_write(c, &c->argv[1]);
    if (!src) {
        reply_null(c);
        return;
    }
    if (!db_check_type(c, src, STORE_LIST)) return;
    lmove_from(c, src, &c->argv[1], &c->argv[2], from, to);
}

void cmd_lmove(client *c)
{
    int from, to;
    if (where_or_reply(c, &c->argv[3], &from) && where_or_reply(c, &c->argv[4], &to))
        lmove_generic(c, from, to);
}

void cmd_rpoplpush(client *c) { lmove_generic(c, STORE_TAIL, STORE_HEAD); }

/* ---- LPOS ---- */

typedef struct lpos_walk {
    const resp_slice *ele;
    long long *pos;             /* with COUNT: the positions found (no
                                   deferred array length: gathered first) */
    size_t npos, cap;
    long long rank, count;      /* rank LLONG_MIN: Redis's negation left it so */
    long long index, matches, found;
    size_t len;
    int reverse, done, as_array;
} lpos_walk;

/* lposCommand's loop body, element by element from the chosen end. */
static void lpos_visit(const char *v, size_t len, void *ctx)
{
    lpos_walk *w = ctx;
    long long index = w->index++;
    if (w->done || len != w->ele->len || (len && memcmp(v, w->ele->ptr, len) != 0)) return;
    w->matches++;
    if (w->matches < w->rank) return;
    long long pos = w->reverse ? (long long)w->len - index - 1 : index;
    if (!w->as_array) {
        w->found = pos;
        w->done = 1;
        return;
    }
    if (w->npos == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 16;
        w->pos = mem_realloc(w->pos, w->cap * sizeof(*w->pos));
    }
    w->pos[w->npos++] = pos;
    /* matches - rank + 1 as Redis's long arithmetic wraps it */
    long long nth = (long long)((unsigned long long)w->matches - (unsigned long long)w->rank + 1);
    if (w->count && nth >= w->count) w->done = 1;
}

/* A long of at least min, else err, a non-integer too (Redis's
 * get{Positive,Range}LongFromObjectOrReply with a message). */
static int long_min_or_reply(client *c, const resp_slice *a, long long min, long long *out,
                             const char *err)
{
    if (store_str2ll(a->ptr, a->len, out) && *out >= min) return 1;
    reply_error(c, err);
    return 0;
}

void cmd_lpos(client *c)
{
    lpos_walk w = {.ele = &c->argv[2], .rank = 1, .count = -1, .found = -1};
    long long maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const resp_slice *a = &c->argv[j];
        int more = c->argc - 1 - j;
        if (arg_is(a, "rank") && more) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &w.rank)) return;
            if (w.rank == 0) {
                reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                               "second ... or use negative to start from the end of the list");
                return;
            }
        } else if (arg_is(a, "count") && more) {
            if (!long_min_or_reply(c, &c->argv[++j], 0, &w.count, "ERR COUNT can't be negative")) return;
        } else if (arg_is(a, "maxlen") && more) {
            if (!long_min_or_reply(c, &c->argv[++j], 0, &maxlen, "ERR MAXLEN can't be negative")) return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (w.rank < 0) {
        w.reverse = 1;
        if (w.rank != LLONG_MIN) w.rank = -w.rank;
    }
    w.as_array = w.count != -1;
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_LIST, &k)) return;
    if (!k) {
        if (w.as_array)
            reply_array(c, 0);
        else
            reply_null(c);
        return;
    }
    w.len = store_list_len(k);
    size_t n = maxlen && (unsigned long long)maxlen < w.len ? (size_t)maxlen : w.len;
    store_list_range(k, w.reverse ? w.len - 1 : 0, n, w.reverse, lpos_visit, &w);
    if (w.as_array) {
        reply_array(c, (long long)w.npos);
        for (size_t i = 0; i < w.npos; i++) reply_int(c, w.pos[i]);
        free(w.pos);
    } else if (w.found >= 0) {
        reply_int(c, w.found);
    } else {
        reply_null(c);
    }
}

/* ---- LMPOP ---- */

/* mpopGenericCommand's reply for the first non-empty list: [key, [elements]]. */
static void mpop_list(client *c, store_key *k, const resp_slice *key, int where, long long count)
{
    size_t len = store_list_len(k), n = (unsigned long long)count < len ? (size_t)count : len;
    reply_array(c, 2);
    reply_bulk(c, key->ptr, key->len);
    reply_array(c, (long long)n);
    pop_elems(c, k, key, where == STORE_HEAD, n);
}

int list_mpop_parse_or_reply(client *c, int numkeys_idx, const char *end0, const char *end1, int *end,
                             long long *count)
{
    long long numkeys;
    *count = -1;
    if (!long_min_or_reply(c, &c->argv[numkeys_idx], 1, &numkeys, "ERR numkeys should be greater than 0")) return 0;
    if (numkeys >= c->argc - numkeys_idx - 1) {   /* where_idx = numkeys_idx + numkeys + 1 must be an argument */
        reply_syntax_error(c);
        return 0;
    }
    int where_idx = (int)numkeys + numkeys_idx + 1;
    if (arg_is(&c->argv[where_idx], end0)) {
        *end = 0;
    } else if (arg_is(&c->argv[where_idx], end1)) {
        *end = 1;
    } else {
        reply_syntax_error(c);
        return 0;
    }
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (*count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (!long_min_or_reply(c, &c->argv[++j], 1, count, "ERR count should be greater than 0"))
                return 0;
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    if (*count == -1) *count = 1;
    return where_idx;
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] */
void cmd_lmpop(client *c)
{
    long long count;
    int right, where_idx = list_mpop_parse_or_reply(c, 1, "left", "right", &right, &count);
    if (!where_idx) return;
    int where = right ? STORE_TAIL : STORE_HEAD;
    for (int j = 2; j < where_idx; j++) {
        store_key *k = db_lookup_write(c, &c->argv[j]);
        if (!k) continue;
        if (!db_check_type(c, k, STORE_LIST)) return;
        if (store_list_len(k) == 0) continue;
        mpop_list(c, k, &c->argv[j], where, count);
        return;
    }
    reply_null_array(c);
}

void cmd_llen(client *c)
{
    store_key *k;
    if (db_read_typed(c, &c->argv[1], STORE_LIST, &k))
        reply_int(c, k ? (long long)store_list_len(k) : 0);
}

/* The key is looked at before the index, as in Redis. */
void cmd_lindex(client *c)
{
    store_key *k;
    long long idx;
    size_t len;
    if (!db_read_typed(c, &c->argv[1], STORE_LIST, &k)) return;
    if (!k) {
        reply_null(c);
        return;
    }
    if (!arg_ll_or_reply(c, &c->argv[2], &idx)) return;
    const char *v = store_list_index(k, idx, &len);
    if (v)
        reply_bulk(c, v, len);
    else
        reply_null(c);
}

/* argv[2..3] as start/stop: 0 after an error reply. */
static int parse_start_stop(client *c, long long *start, long long *end)
{
    return arg_ll_or_reply(c, &c->argv[2], start) && arg_ll_or_reply(c, &c->argv[3], end);
}

void cmd_lrange(client *c)
{
    long long start, end;
    size_t first, n = 0;
    store_key *k;
    if (!parse_start_stop(c, &start, &end)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_LIST, &k)) return;
    if (k && !arg_index_range(start, end, store_list_len(k), &first, &n)) n = 0;
    reply_array(c, (long long)n);
    if (n) store_list_range(k, first, n, 0, emit_elem, c);
}

/* As LINDEX: the key before the index. */
void cmd_lset(client *c)
{
    long long idx;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (!db_check_type(c, k, STORE_LIST) || !arg_ll_or_reply(c, &c->argv[2], &idx)) return;
    if (!store_list_set(client_db(c), k, idx, c->argv[3].ptr, c->argv[3].len)) {
        reply_error(c, "ERR index out of range");
        return;
    }
    db_notify(c, STORE_EV_LIST, "lset", &c->argv[1]);
    reply_ok(c);
}

void cmd_linsert(client *c)
{
    int after;
    if (arg_is(&c->argv[2], "after")) {
        after = 1;
    } else if (arg_is(&c->argv[2], "before")) {
        after = 0;
    } else {
        reply_syntax_error(c);
        return;
    }
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    long long len = store_list_insert(client_db(c), k, after, c->argv[3].ptr, c->argv[3].len,
                                      c->argv[4].ptr, c->argv[4].len);
    if (len > 0) db_notify(c, STORE_EV_LIST, "linsert", &c->argv[1]);
    reply_int(c, len);
}

void cmd_lrem(client *c)
{
    long long count;
    if (!arg_ll_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    size_t removed = k ? store_list_remove(client_db(c), k, count, c->argv[3].ptr, c->argv[3].len) : 0;
    if (removed) {
        db_notify(c, STORE_EV_LIST, "lrem", &c->argv[1]);
        if (store_list_len(k) == 0) db_delete_emptied(c, k);
    }
    reply_int(c, (long long)removed);
}

void cmd_ltrim(client *c)
{
    long long start, end;
    size_t first = 0, n = 0;
    if (!parse_start_stop(c, &start, &end)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (k) {
        size_t len = store_list_len(k);
        if (!arg_index_range(start, end, len, &first, &n)) first = n = 0;
        store_list_del_range(client_db(c), k, first + n, len - first - n);   /* the tail first */
        store_list_del_range(client_db(c), k, 0, first);
        db_notify(c, STORE_EV_LIST, "ltrim", &c->argv[1]);
        if (n == 0) db_delete_emptied(c, k);
    }
    reply_ok(c);
}

/* ---- blocking forms (Redis 7.0's blockingPopGenericCommand and
 * blmoveGenericCommand): the non-blocking command when a key has data,
 * else the client waits (block.c) and is served by the functions below,
 * with its own argv back in place. ---- */

/* BLPOP/BRPOP: [key, element]. */
static void reply_pop_one(client *c, store_key *k, const resp_slice *key, int head)
{
    reply_array(c, 2);
    reply_bulk(c, key->ptr, key->len);
    pop_elems(c, k, key, head, 1);
}

static void serve_blpop(client *c, store_key *k, const resp_slice *key) { reply_pop_one(c, k, key, 1); }
static void serve_brpop(client *c, store_key *k, const resp_slice *key) { reply_pop_one(c, k, key, 0); }

/* BLMPOP timeout numkeys key ... LEFT|RIGHT [COUNT n]: argv was checked
 * before, so parsing it again cannot fail. */
static void serve_blmpop(client *c, store_key *k, const resp_slice *key)
{
    long long count;
    int right;
    list_mpop_parse_or_reply(c, 2, "left", "right", &right, &count);
    mpop_list(c, k, key, right ? STORE_TAIL : STORE_HEAD, count);
}

void cmd_blpop(client *c) { block_pop_or_wait(c, BLOCK_LIST, 1, c->argc - 2, c->argc - 1, serve_blpop); }
void cmd_brpop(client *c) { block_pop_or_wait(c, BLOCK_LIST, 1, c->argc - 2, c->argc - 1, serve_brpop); }

void cmd_blmpop(client *c)
{
    long long count;
    int right, where_idx = list_mpop_parse_or_reply(c, 2, "left", "right", &right, &count);
    if (where_idx) block_pop_or_wait(c, BLOCK_LIST, 3, where_idx - 3, 1, serve_blmpop);
}

/* BLMOVE src dst from to timeout / BRPOPLPUSH src dst timeout, served:
 * a destination of another type is WRONGTYPE, and the element stays. */
static void serve_blmove(client *c, store_key *k, const resp_slice *key)
{
    int from = STORE_TAIL, to = STORE_HEAD;
    if (c->argc == 6) {
        where_or_reply(c, &c->argv[3], &from);
        where_or_reply(c, &c->argv[4], &to);
    }
    lmove_from(c, k, key, &c->argv[2], from, to);
}

static void blmove_generic(client *c, int from, int to, uint64_t deadline)
{
    store_key *src = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, src, STORE_LIST)) return;
    if (src) {
        lmove_from(c, src, &c->argv[1], &c->argv[2], from, to);
    } else if (!block_allowed(c)) {
        reply_null(c);
    } else {
        block_for_keys(c, BLOCK_LIST, 1, 1, deadline, serve_blmove);
    }
}

void cmd_blmove(client *c)
{
    int from, to;
    uint64_t deadline;
    if (where_or_reply(c, &c->argv[3], &from) && where_or_reply(c, &c->argv[4], &to) &&
        block_timeout_or_reply(c, &c->argv[5], &deadline))
        blmove_generic(c, from, to, deadline);
}

void cmd_brpoplpush(client *c)
{
    uint64_t deadline;
    if (block_timeout_or_reply(c, &c->argv[3], &deadline)) blmove_generic(c, STORE_TAIL, STORE_HEAD, deadline);
}
