/* set.c - set commands (SADD ... SSCAN): Redis 7.0's replies (RESP3 sets
 * where Redis sends them), error texts, keyspace events, and its choice of
 * algorithm where that decides a result's order or encoding. A set key
 * never exists empty. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "num.h"
#include "set.h"
#include "persist/persist.h"

/* How many times the remaining set must outnumber SPOP's count for
 * popping one by one (else the survivors are drawn instead), and
 * SRANDMEMBER's count the set for drawing (else it is copied and trimmed):
 * Redis's SPOP_MOVE_STRATEGY_MUL and SRANDMEMBER_SUB_STRATEGY_MUL. */
#define SPOP_MOVE_MUL 5
#define SRANDMEMBER_SUB_MUL 3

static void reply_member(const char *m, size_t len, void *ctx) { reply_bulk(ctx, m, len); }

/* Every member of v, as a RESP3 set (an array in RESP2). */
static void reply_members(client *c, const store_set *v)
{
    reply_set(c, (long long)store_set_len(v));
    store_set_foreach(v, reply_member, c);
}

static store_set *set_of(store_key *k) { return store_set_of(k); }

/* ---- SADD / SREM / SMOVE ---- */

void cmd_sadd(client *c)
{
    store *db = client_db(c);
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_SET)) return;
    if (!k) {   /* setTypeCreate: the first member picks the representation */
        k = store_create_key(db, c->argv[1].ptr, c->argv[1].len, STORE_SET);
        store_set_init_for(db, set_of(k), c->argv[2].ptr, c->argv[2].len);
    }
    long long added = 0;
    for (int i = 2; i < c->argc; i++) added += store_set_add(db, set_of(k), c->argv[i].ptr, c->argv[i].len);
    if (added) db_notify(c, STORE_EV_SET, "sadd", &c->argv[1]);
    reply_int(c, added);
}

void cmd_srem(client *c)
{
    store *db = client_db(c);
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_SET)) return;
    long long removed = 0;
    for (int i = 2; k && i < c->argc; i++) {
        removed += store_set_remove(db, set_of(k), c->argv[i].ptr, c->argv[i].len);
        if (store_set_len(set_of(k)) == 0) break;
    }
    if (removed) {
        db_notify(c, STORE_EV_SET, "srem", &c->argv[1]);
        if (store_set_len(set_of(k)) == 0) db_delete_emptied(c, k);
    }
    reply_int(c, removed);
}

void cmd_smove(client *c)
{
    store *db = client_db(c);
    const resp_slice *m = &c->argv[3];
    store_key *src = db_lookup_write(c, &c->argv[1]);
    store_key *dst = db_lookup_write(c, &c->argv[2]);
    if (!src) {
        reply_int(c, 0);
        return;
    }
    if (!db_check_type(c, src, STORE_SET) || !db_check_type(c, dst, STORE_SET)) return;
    if (src == dst) {
        reply_int(c, store_set_has(set_of(src), m->ptr, m->len));
        return;
    }
    if (!store_set_remove(db, set_of(src), m->ptr, m->len)) {
        reply_int(c, 0);
        return;
    }
    db_notify(c, STORE_EV_SET, "srem", &c->argv[1]);
    if (store_set_len(set_of(src)) == 0) db_delete_emptied(c, src);   /* dst stays where it is */
    if (!dst) {
        dst = store_create_key(db, c->argv[2].ptr, c->argv[2].len, STORE_SET);
        store_set_init_for(db, set_of(dst), m->ptr, m->len);
    }
    if (store_set_add(db, set_of(dst), m->ptr, m->len)) db_notify(c, STORE_EV_SET, "sadd", &c->argv[2]);
    reply_int(c, 1);
}

/* ---- membership and size ---- */

void cmd_sismember(client *c)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_SET, &k)) return;
    reply_int(c, k && store_set_has(set_of(k), c->argv[2].ptr, c->argv[2].len));
}

void cmd_smismember(client *c)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_SET, &k)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++)
        reply_int(c, k && store_set_has(set_of(k), c->argv[i].ptr, c->argv[i].len));
}

void cmd_scard(client *c)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_SET, &k)) return;
    reply_int(c, k ? (long long)store_set_len(set_of(k)) : 0);
}

/* ---- SINTER / SINTERCARD / SINTERSTORE ---- */

/* The sets named by keys[0..n), looked up as Redis's lookupKeyRead (each
 * a hit or a miss), NULL for a missing one. 0 after WRONGTYPE. */
static int lookup_sets(client *c, const resp_slice *keys, int n, store_set **sets)
{
    for (int i = 0; i < n; i++) {
        store_key *k;
        if (!db_read_typed(c, &keys[i], STORE_SET, &k)) return 0;
        sets[i] = k ? set_of(k) : NULL;
    }
    return 1;
}

/* The caller's sets, made (and freed) on the stack when few. */
typedef struct set_list {
    store_set *stack[16];
    store_set **v;
} set_list;

static store_set **set_list_init(set_list *l, int n)
{
    l->v = n <= 16 ? l->stack : mem_alloc((size_t)n * sizeof(*l->v));
    return l->v;
}

static void set_list_free(set_list *l)
{
    if (l->v != l->stack) free(l->v);
}

/* Smallest first, ties in their order (glibc's qsort, which Redis's
 * sort goes through, is a stable merge sort): the first set's order is
 * the reply's. */
static void sort_by_size(store_set **sets, int n)
{
    for (int i = 1; i < n; i++) {
        store_set *x = sets[i];
        int j = i;
        for (; j > 0 && store_set_len(sets[j - 1]) > store_set_len(x); j--) sets[j] = sets[j - 1];
        sets[j] = x;
    }
}

/* Give dst's key the set v (or delete it when v is empty), as Redis's
 * *STORE commands: the deadline goes, the event is `event` or "del". */
static void store_result(client *c, const resp_slice *dst, store_set *v, const char *event)
{
    store *db = client_db(c);
    store_key *k = store_lookup(db, dst->ptr, dst->len);
    size_t n = store_set_len(v);
    if (n == 0) {
        store_set_free(db, v);
        if (k) db_release_key(c, k, dst, STORE_RELEASE_REPLACED);
        reply_int(c, 0);
        return;
    }
    if (k) {
        store_key_reset(db, k, STORE_SET);
        store_key_set_deadline(db, k, STORE_NO_DEADLINE);
    } else {
        k = store_create_key(db, dst->ptr, dst->len, STORE_SET);
    }
    store_set_replace(db, k, v);
    reply_int(c, (long long)n);
    db_notify(c, STORE_EV_SET, event, dst);
}

enum { INTER_REPLY, INTER_CARD, INTER_STORE };

struct inter {
    client *c;
    store_set **sets;
    int n, mode;
    unsigned long long found, limit;
    store_set *out;
    int done;
};

static void inter_member(const char *m, size_t len, void *ctx)
{
    struct inter *it = ctx;
    if (it->done) return;
    for (int j = 1; j < it->n; j++) {
        if (it->sets[j] == it->sets[0]) continue;
        if (!store_set_has(it->sets[j], m, len)) return;
    }
    it->found++;
    if (it->mode == INTER_REPLY) reply_bulk(it->c, m, len);
    if (it->mode == INTER_STORE) store_set_add(client_db(it->c), it->out, m, len);
    if (it->mode == INTER_CARD && it->limit && it->found >= it->limit) it->done = 1;
}

/* sinterGenericCommand: a missing set makes the result empty at once;
 * else the smallest set's members that every other one has. */
static void inter_generic(client *c, const resp_slice *keys, int n, const resp_slice *dst,
                          int mode, unsigned long long limit)
{
    set_list l;
    store_set **sets = set_list_init(&l, n);
    store_set out;
    struct inter it = { c, sets, n, mode, 0, limit, &out, 0 };
    store_set_init(&out);
    if (!lookup_sets(c, keys, n, sets)) goto done;
    int empty = 0;
    for (int i = 0; i < n; i++) empty |= sets[i] == NULL;
    if (empty) {
        if (mode == INTER_STORE) store_result(c, dst, &out, "sinterstore");
        else if (mode == INTER_CARD) reply_int(c, 0);
        else reply_set(c, 0);
        goto done;
    }
    sort_by_size(sets, n);
    if (mode == INTER_REPLY) {
        /* Redis defers the length; with no deferred replies the members
         * are counted first (SMEMBERS, one set, needs no count). */
        struct inter count = { c, sets, n, INTER_CARD, 0, 0, NULL, 0 };
        if (n > 1) store_set_foreach(sets[0], inter_member, &count);
        reply_set(c, (long long)(n > 1 ? count.found : store_set_len(sets[0])));
    }
    store_set_foreach(sets[0], inter_member, &it);
    if (mode == INTER_CARD) reply_int(c, (long long)it.found);
    if (mode == INTER_STORE) store_result(c, dst, &out, "sinterstore");
done:
    if (mode != INTER_STORE) store_set_free(client_db(c), &out);
    set_list_free(&l);
}

void cmd_smembers(client *c) { inter_generic(c, &c->argv[1], 1, NULL, INTER_REPLY, 0); }
void cmd_sinter(client *c) { inter_generic(c, &c->argv[1], c->argc - 1, NULL, INTER_REPLY, 0); }
void cmd_sinterstore(client *c) { inter_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], INTER_STORE, 0); }

void cmd_sintercard(client *c)
{
    long long numkeys, limit = 0;
    if (!store_str2ll(c->argv[1].ptr, c->argv[1].len, &numkeys) || numkeys < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "limit") && j + 1 < c->argc) {
            j++;
            if (!store_str2ll(c->argv[j].ptr, c->argv[j].len, &limit) || limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    inter_generic(c, &c->argv[2], (int)numkeys, NULL, INTER_CARD, (unsigned long long)limit);
}

/* ---- SUNION / SDIFF and their STORE forms ---- */

enum { OP_UNION, OP_DIFF };

struct fold {
    store *db;
    store_set *out;
    store_set **sets;
    int n;
    long long card;
};

static void unadd_member(const char *m, size_t len, void *ctx)
{
    struct fold *f = ctx;
    f->card -= store_set_remove(f->db, f->out, m, len);
}

/* Members of sets[0] in none of the others (a missing set is empty). */
static void diff_member(const char *m, size_t len, void *ctx)
{
    struct fold *f = ctx;
    for (int j = 1; j < f->n; j++)
        if (f->sets[j] && store_set_has(f->sets[j], m, len)) return;
    f->card += store_set_add(f->db, f->out, m, len);
}

/* Largest first, ties in their order (the stable sort Redis gets). */
static void sort_by_size_desc(store_set **sets, int n)
{
    for (int i = 1; i < n; i++) {
        store_set *x = sets[i];
        size_t xl = x ? store_set_len(x) : 0;
        int j = i;
        for (; j > 0 && (sets[j - 1] ? store_set_len(sets[j - 1]) : 0) < xl; j--) sets[j] = sets[j - 1];
        sets[j] = x;
    }
}

/* sunionDiffGenericCommand: the result is built in a fresh set (an intset
 * until a member says otherwise), whose order the reply follows. SDIFF
 * picks Redis's cheaper algorithm: probe the others for each member of the
 * first (sorted largest first), or copy the first and remove the rest. */
static void union_diff(store *db, store_set **sets, int n, int op, store_set *out)
{
    struct fold f = { db, out, sets, n, 0 };
    int same = 0;
    for (int j = 1; j < n; j++) same |= sets[0] && sets[j] == sets[0];
    if (op == OP_UNION) {
        for (int j = 0; j < n; j++)
            if (sets[j]) store_set_add_all(db, out, sets[j]);
        return;
    }
    if (!sets[0] || same) return;
    long long one = 0, two = 0;
    for (int j = 0; j < n; j++) {
        if (!sets[j]) continue;
        one += (long long)store_set_len(sets[0]);
        two += (long long)store_set_len(sets[j]);
    }
    if (one / 2 <= two) {
        if (n > 1) sort_by_size_desc(sets + 1, n - 1);
        store_set_foreach(sets[0], diff_member, &f);
        return;
    }
    f.card = (long long)store_set_add_all(db, out, sets[0]);
    for (int j = 1; j < n && f.card > 0; j++)
        if (sets[j]) store_set_foreach(sets[j], unadd_member, &f);
}

static void union_diff_generic(client *c, const resp_slice *keys, int n, const resp_slice *dst, int op)
{
    set_list l;
    store_set **sets = set_list_init(&l, n);
    store_set out;
    store_set_init(&out);
    if (lookup_sets(c, keys, n, sets)) {
        union_diff(client_db(c), sets, n, op, &out);
        if (dst) {
            store_result(c, dst, &out, op == OP_UNION ? "sunionstore" : "sdiffstore");
        } else {
            reply_members(c, &out);
            store_set_release(client_db(c), &out);
        }
    }
    set_list_free(&l);
}

void cmd_sunion(client *c) { union_diff_generic(c, &c->argv[1], c->argc - 1, NULL, OP_UNION); }
void cmd_sunionstore(client *c) { union_diff_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], OP_UNION); }
void cmd_sdiff(client *c) { union_diff_generic(c, &c->argv[1], c->argc - 1, NULL, OP_DIFF); }
void cmd_sdiffstore(client *c) { union_diff_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], OP_DIFF); }

/* ---- SPOP / SRANDMEMBER ---- */

static const char *random_member(client *c, store_set *v, char buf[STORE_SET_INT_BUF], size_t *len)
{
    return store_set_random(v, server_random(c->srv), buf, len);
}

/* SPOP's records (Redis's): an SREM per member drawn (encoded at once,
 * before the member is freed), or DEL when it took everything. */
static void spop_log_member(client *c, const char *m, size_t len)
{
    resp_slice srem[3] = {{"SREM", 4}, c->argv[1], {m, len}};
    aof_handled(c);
    aof_add(c, 3, srem);
}

static void spop_log_each(const char *m, size_t len, void *ctx) { spop_log_member(ctx, m, len); }

/* spopWithCountCommand's three cases: all of it, one by one, or (few
 * would remain) the survivors drawn into a new set that replaces it. */
static void spop_count(client *c, store_key *k, unsigned long long count)
{
    store *db = client_db(c);
    store_set *v = set_of(k);
    unsigned long long size = store_set_len(v);
    char buf[STORE_SET_INT_BUF];
    size_t len;
    db_notify(c, STORE_EV_SET, "spop", &c->argv[1]);
    if (count >= size) {
        store_set *sets[1] = { v };
        store_set out;
        store_set_init(&out);
        union_diff(db, sets, 1, OP_UNION, &out);   /* the reply a SUNION of it gives */
        reply_members(c, &out);
        store_set_release(db, &out);
        db_release_key(c, k, &c->argv[1], STORE_RELEASE_REPLACED);   /* Redis's dbDelete */
        if (c->srv->aof_on) {
            resp_slice del[2] = {{"DEL", 3}, c->argv[1]};
            aof_handled(c);
            aof_add(c, 2, del);
        }
        return;
    }
    reply_set(c, (long long)count);
    unsigned long long remaining = size - count;
    int logged = c->srv->aof_on;
    if (remaining * SPOP_MOVE_MUL > count) {
        while (count--) {
            const char *m = random_member(c, v, buf, &len);
            reply_bulk(c, m, len);
            if (logged) spop_log_member(c, m, len);
            store_set_remove(db, v, m, len);   /* m (in v) is compared before it is freed */
        }
        return;
    }
    store_set kept;
    for (unsigned long long i = 0; i < remaining; i++) {
        const char *m = random_member(c, v, buf, &len);
        if (i == 0) store_set_init_for(db, &kept, m, len);   /* setTypeCreate of the first */
        store_set_add(db, &kept, m, len);
        store_set_remove(db, v, m, len);
    }
    store_set_foreach(v, reply_member, c);
    if (logged) store_set_foreach(v, spop_log_each, c);
    store_set_replace(db, k, &kept);
}

void cmd_spop(client *c)
{
    long long count = 0;
    char buf[STORE_SET_INT_BUF];
    size_t len;
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_positive_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        if (c->argc == 3) reply_set(c, 0);
        else reply_null(c);
        return;
    }
    if (!db_check_type(c, k, STORE_SET)) return;
    if (c->argc == 3) {
        if (count == 0) reply_set(c, 0);
        else spop_count(c, k, (unsigned long long)count);
        return;
    }
    store_set *v = set_of(k);
    const char *m = random_member(c, v, buf, &len);
    reply_bulk(c, m, len);
    if (c->srv->aof_on) spop_log_member(c, m, len);
    store_set_remove(client_db(c), v, m, len);
    db_notify(c, STORE_EV_SET, "spop", &c->argv[1]);
    if (store_set_len(v) == 0) db_delete_emptied(c, k);
}

/* srandmemberWithCountCommand: repeats allowed (a negative count) are
 * independent draws; distinct ones are the whole set, the set copied and
 * trimmed at random to count, or draws until count distinct, by how count
 * compares with the size. The distinct picks go out in a hash table's
 * order, as Redis's scratch dict. */
static void srandmember_count(client *c, store_set *v, long long l)
{
    store *db = client_db(c);
    unsigned long long count = l < 0 ? (unsigned long long)-l : (unsigned long long)l;
    unsigned long long size = store_set_len(v);
    char buf[STORE_SET_INT_BUF];
    size_t len;
    if (l < 0 || count == 1) {
        reply_array(c, (long long)count);
        while (count-- && client_output_room(c)) {
            const char *m = random_member(c, v, buf, &len);
            reply_bulk(c, m, len);
        }
        return;
    }
    if (count >= size) {
        reply_array(c, (long long)size);
        store_set_foreach(v, reply_member, c);
        return;
    }
    store_set pick;
    store_set_init_table(db, &pick);
    if (count * SRANDMEMBER_SUB_MUL > size) {
        store_set_add_all(db, &pick, v);
        while (store_set_len(&pick) > count) {
            const char *m = random_member(c, &pick, buf, &len);
            store_set_remove(db, &pick, m, len);
        }
    } else {
        while (store_set_len(&pick) < count) {
            const char *m = random_member(c, v, buf, &len);
            store_set_add(db, &pick, m, len);
        }
    }
    reply_array(c, (long long)count);
    store_set_foreach(&pick, reply_member, c);
    store_set_free(db, &pick);
}

void cmd_srandmember(client *c)
{
    long long l = 0;
    char buf[STORE_SET_INT_BUF];
    size_t len;
    store_key *k;
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 3) {
        if (!arg_ll_or_reply(c, &c->argv[2], &l)) return;
        if (l == LLONG_MIN) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            return;
        }
    }
    if (!db_read_typed(c, &c->argv[1], STORE_SET, &k)) return;
    if (!k) {
        if (c->argc == 3) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    if (c->argc == 3) {
        if (l == 0) reply_array(c, 0);
        else srandmember_count(c, set_of(k), l);
        return;
    }
    const char *m = random_member(c, set_of(k), buf, &len);
    reply_bulk(c, m, len);
}

/* ---- SSCAN ---- */

/* The members collected, back to back in one buffer (an intset's text is
 * in a buffer reused for the next member), ends[i] past the i-th. */
struct scan_collect {
    char *bytes;
    size_t used, room;
    size_t *ends;
    size_t n, cap;
};

static void scan_member(const char *m, size_t len, void *ctx)
{
    struct scan_collect *sc = ctx;
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? sc->cap * 2 : 16;
        sc->ends = mem_realloc(sc->ends, sc->cap * sizeof(*sc->ends));
    }
    if (sc->room - sc->used < len) {
        sc->room = (sc->used + len) * 2;
        sc->bytes = mem_realloc(sc->bytes, sc->room);
    }
    if (len) memcpy(sc->bytes + sc->used, m, len);
    sc->used += len;
    sc->ends[sc->n++] = sc->used;
}

/* scanGenericCommand on a set: a table ~COUNT members at a time (at most
 * COUNT*10 buckets a call), an intset all at once with cursor 0; MATCH
 * filters what was collected. */
void cmd_sscan(client *c)
{
    uint64_t cursor;
    scan_opts o;
    store_key *k;
    if (!keys_scan_parse_cursor(&c->argv[2], &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    if (!db_read_typed(c, &c->argv[1], STORE_SET, &k)) return;
    if (!k) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    if (!keys_scan_parse_opts(c, 3, 0, &o)) return;
    struct scan_collect sc = { NULL, 0, 0, NULL, 0, 0 };
    store_set *v = set_of(k);
    if (store_set_is_intset(v)) {
        cursor = store_set_scan(v, cursor, scan_member, &sc);
    } else {
        long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
        do {
            cursor = store_set_scan(v, cursor, scan_member, &sc);
        } while (cursor && maxiter-- && sc.n < (unsigned long long)o.count);
    }
    size_t kept = 0;
    for (size_t i = 0, start = 0; i < sc.n; start = sc.ends[i++])
        kept += keys_scan_match(o.pat, sc.bytes + start, sc.ends[i] - start);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)cursor);
    reply_array(c, (long long)kept);
    for (size_t i = 0, start = 0; i < sc.n; start = sc.ends[i++]) {
        const char *m = sc.bytes + start;
        size_t len = sc.ends[i] - start;
        if (keys_scan_match(o.pat, m, len)) reply_bulk(c, m, len);
    }
    free(sc.bytes);
    free(sc.ends);
}
