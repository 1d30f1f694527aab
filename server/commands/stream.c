/* stream.c - stream commands (XADD ... XREAD, consumer groups, blocking
 * reads): Redis 7.0's ID rules, options, replies and error texts, over store/stream.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "num.h"
#include "persist/persist.h"
#include "stream.h"

static const store_sid SID_MIN = {0, 0}, SID_MAX = {UINT64_MAX, UINT64_MAX};

/* Redis's string2ull: string2ll's strict form, else strtoull's looser one. */
static int parse_ull(const char *s, unsigned long long *out)
{
    long long ll;
    if (store_str2ll(s, strlen(s), &ll)) {
        if (ll < 0) return 0;
        *out = (unsigned long long)ll;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return !(errno == EINVAL || errno == ERANGE || !(*s && !*end));
}

/* Redis's streamGenericParseIDOrReply (c NULL: no reply): "-" / "+" (unless strict),
 * "<ms>" (seq = missing_seq) or "<ms>-<seq>", and with seq_given
 * "<ms>-*" (*seq_given = 0). */
static int parse_id(client *c, const resp_slice *a, store_sid *id, uint64_t missing_seq, int strict,
                    int *seq_given)
{
    char buf[128];
    if (a->len > sizeof buf - 1) goto invalid;
    memcpy(buf, a->ptr, a->len);
    buf[a->len] = 0;
    if (strict && (buf[0] == '-' || buf[0] == '+') && !buf[1]) goto invalid;
    if (seq_given) *seq_given = 1;
    if (buf[0] == '-' && !buf[1]) {
        *id = SID_MIN;
        return 1;
    }
    if (buf[0] == '+' && !buf[1]) {
        *id = SID_MAX;
        return 1;
    }
    unsigned long long ms, seq;
    char *dash = strchr(buf, '-');
    if (dash) *dash = 0;
    if (!parse_ull(buf, &ms)) goto invalid;
    if (dash) {
        if (seq_given && dash[1] == '*' && !dash[2]) {
            seq = 0;
            *seq_given = 0;
        } else if (!parse_ull(dash + 1, &seq)) {
            goto invalid;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 1;
invalid:
    if (c) reply_error(c, "ERR Invalid stream ID specified as stream command argument");
    return 0;
}

static int id_incr(store_sid *id)
{
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return 0;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 1;
}

static int id_decr(store_sid *id)
{
    if (id->seq == 0) {
        if (id->ms == 0) return 0;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 1;
}

static void reply_id(client *c, store_sid id)
{
    char buf[48];
    int n = snprintf(buf, sizeof buf, "%llu-%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
    reply_bulk(c, buf, (size_t)n);
}

static void reply_pair(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    reply_bulk(ctx, f, flen);
    reply_bulk(ctx, v, vlen);
}

/* One entry: [id, [field, value, ...]]. */
static int reply_entry(const store_sentry *e, void *ctx)
{
    client *c = ctx;
    reply_array(c, 2);
    reply_id(c, e->id);
    reply_array(c, (long long)(2 * e->pairs));
    store_sentry_foreach(e, reply_pair, c);
    return 0;
}

static int count_entry(const store_sentry *e, void *ctx)
{
    (void)e;
    (void)ctx;
    return 0;
}

/* Entries start..end as an array: counted first, then sent. */
static void reply_range(client *c, const store_stream *st, store_sid start, store_sid end, int rev,
                        size_t count)
{
    size_t n = store_stream_range(st, start, end, rev, count, count_entry, NULL);
    reply_array(c, (long long)n);
    store_stream_range(st, start, end, rev, n, reply_entry, c);
}

/* ---- XADD / XTRIM options: streamParseAddOrTrimArgsOrReply ---- */

typedef struct trim_args {
    int strategy;   /* 0 none, 1 maxlen, 2 minid */
    int approx, nomkstream, id_given, seq_given;
    long long maxlen, limit;
    store_sid minid, id;
    stream_trim_pos pos;   /* where they sit in argv */
} trim_args;

/* Returns the ID's position for XADD (the first non-option), argc for
 * XTRIM, or -1 after an error reply. */
static int trim_parse(client *c, trim_args *t, int xadd)
{
    memset(t, 0, sizeof *t);
    int i = 2, limit_given = 0;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const resp_slice *a = &c->argv[i];
        if (xadd && a->len == 1 && a->ptr[0] == '*') break;
        if ((arg_is(a, "maxlen") || arg_is(a, "minid")) && more) {
            if (t->strategy) {
                reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            int minid = arg_is(a, "minid");
            t->approx = 0;
            t->pos.approx = 0;
            t->pos.by_minid = minid;
            const resp_slice *next = &c->argv[i + 1];
            if (more >= 2 && next->len == 1 && next->ptr[0] == '~') {
                t->approx = 1;
                t->pos.approx = ++i;
            } else if (more >= 2 && next->len == 1 && next->ptr[0] == '=') {
                i++;
            }
            t->pos.threshold = i + 1;
            if (minid) {
                if (!parse_id(c, &c->argv[i + 1], &t->minid, 0, 1, NULL)) return -1;
            } else {
                if (!arg_ll_or_reply(c, &c->argv[i + 1], &t->maxlen)) return -1;
                if (t->maxlen < 0) {
                    reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
            }
            i++;
            t->strategy = minid ? 2 : 1;
        } else if (arg_is(a, "limit") && more) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &t->limit)) return -1;
            if (t->limit < 0) {
                reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            t->pos.limit = i++;
        } else if (xadd && arg_is(a, "nomkstream")) {
            t->nomkstream = 1;
        } else if (xadd) {
            if (!parse_id(c, a, &t->id, 0, 1, &t->seq_given)) return -1;
            t->id_given = 1;
            break;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (xadd) t->pos.id = i;
    if (t->limit && !t->strategy) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && !t->strategy) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (limit_given) {
        if (!t->approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (t->approx) {   /* at most 100 nodes' worth of work */
        t->limit = 100 * c->srv->cfg.stream_node_max_entries;
        if (t->limit <= 0) t->limit = 10000;
        if (t->limit > 1000000) t->limit = 1000000;
    } else {
        t->limit = 0;
    }
    return i;
}

int stream_trim_positions(client *c, int xadd, stream_trim_pos *pos)
{
    trim_args t;
    if (trim_parse(c, &t, xadd) < 0) return 0;
    *pos = t.pos;
    return 1;
}

static size_t trim_apply(client *c, store_stream *st, const trim_args *t)
{
    return store_stream_trim(client_db(c), st, t->strategy == 2, (uint64_t)t->maxlen, t->minid, t->approx,
                             t->limit);
}

void cmd_xadd(client *c)
{
    trim_args t;
    int idpos = trim_parse(c, &t, 1);
    if (idpos < 0) return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2) {
        reply_arity_error(c);
        return;
    }
    if (t.id_given && t.seq_given && !t.id.ms && !t.id.seq) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_STREAM)) return;
    if (!k) {
        if (t.nomkstream) {
            reply_null(c);
            return;
        }
        k = store_create_key(client_db(c), c->argv[1].ptr, c->argv[1].len, STORE_STREAM);
    }
    store_stream *st = store_stream_of(k);
    if (!store_sid_cmp(st->last, SID_MAX)) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    store_sid id;
    int ok = 1;
    if (t.id_given && t.seq_given) {
        id = t.id;
    } else if (t.id_given) {   /* <ms>-*: the next sequence of that millisecond */
        id = t.id;
        if (st->last.ms == t.id.ms) {
            if (st->last.seq == UINT64_MAX) ok = 0;
            else id.seq = st->last.seq + 1;
        }
    } else {
        uint64_t ms = server_now_ms(c->srv);
        id = st->last;
        if (ms > st->last.ms) id = (store_sid){ms, 0};
        else id_incr(&id);
    }
    if (!ok) {   /* Redis's streamAppendItem fails here without setting errno to EDOM */
        reply_error(c, "ERR Elements are too large to be stored");
        return;
    }
    if (store_sid_cmp(id, st->last) <= 0) {
        reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return;
    }
    int n = c->argc - fpos;
    const char *stackp[16];
    size_t stackl[16];
    const char **ptrs = n <= 16 ? stackp : malloc((size_t)n * sizeof *ptrs);
    size_t *lens = n <= 16 ? stackl : malloc((size_t)n * sizeof *lens);
    for (int i = 0; i < n; i++) {
        ptrs[i] = c->argv[fpos + i].ptr;
        lens[i] = c->argv[fpos + i].len;
    }
    store_stream_append(client_db(c), st, id, ptrs, lens, (size_t)n, c->srv->cfg.stream_node_max_entries,
                        c->srv->cfg.stream_node_max_bytes);
    if (ptrs != stackp) free(ptrs);
    if (lens != stackl) free(lens);
    reply_id(c, id);
    db_notify(c, STORE_EV_STREAM, "xadd", &c->argv[1]);
    if (t.strategy && trim_apply(c, st, &t)) db_notify(c, STORE_EV_STREAM, "xtrim", &c->argv[1]);
}

void cmd_xtrim(client *c)
{
    trim_args t;
    if (trim_parse(c, &t, 0) < 0) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_STREAM)) return;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    size_t deleted = trim_apply(c, store_stream_of(k), &t);
    if (deleted) db_notify(c, STORE_EV_STREAM, "xtrim", &c->argv[1]);
    reply_int(c, (long long)deleted);
}

/* ---- XRANGE / XREVRANGE / XLEN ---- */

/* A range bound: "(" makes it exclusive (and strict). */
static int parse_bound(client *c, const resp_slice *a, store_sid *id, uint64_t missing_seq, int *excl)
{
    *excl = a->len > 1 && a->ptr[0] == '(';
    if (!*excl) return parse_id(c, a, id, missing_seq, 0, NULL);
    resp_slice inner = {a->ptr + 1, a->len - 1};
    return parse_id(c, &inner, id, missing_seq, 1, NULL);
}

static void xrange_generic(client *c, int rev)
{
    const resp_slice *sa = &c->argv[rev ? 3 : 2], *ea = &c->argv[rev ? 2 : 3];
    store_sid start, end;
    int sx, ex;
    long long count = -1;
    if (!parse_bound(c, sa, &start, 0, &sx)) return;
    if (sx && !id_incr(&start)) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (!parse_bound(c, ea, &end, UINT64_MAX, &ex)) return;
    if (ex && !id_decr(&end)) {
        reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &count)) return;
            if (count < 0) count = 0;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_STREAM, &k)) return;
    if (!k) {
        reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    reply_range(c, store_stream_of(k), start, end, rev, count < 0 ? 0 : (size_t)count);
}

void cmd_xrange(client *c) { xrange_generic(c, 0); }
void cmd_xrevrange(client *c) { xrange_generic(c, 1); }

void cmd_xlen(client *c)
{
    store_key *k;
    if (!db_read_typed(c, &c->argv[1], STORE_STREAM, &k)) return;
    reply_int(c, k ? (long long)store_stream_of(k)->len : 0);
}

/* ---- XDEL / XSETID ---- */

void cmd_xdel(client *c)
{
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_STREAM)) return;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    store_sid id;
    for (int j = 2; j < c->argc; j++)   /* every ID is checked before any goes */
        if (!parse_id(c, &c->argv[j], &id, 0, 1, NULL)) return;
    long long deleted = 0;
    store_stream *st = store_stream_of(k);
    for (int j = 2; j < c->argc; j++) {
        parse_id(c, &c->argv[j], &id, 0, 1, NULL);
        deleted += store_stream_delete(client_db(c), st, id);
    }
    if (deleted) db_notify(c, STORE_EV_STREAM, "xdel", &c->argv[1]);
    reply_int(c, deleted);
}

void cmd_xsetid(client *c)
{
    store_sid id, maxdel = SID_MIN;
    long long added = -1;
    if (!parse_id(c, &c->argv[2], &id, 0, 1, NULL)) return;
    for (int i = 3; i < c->argc; i += 2) {
        int more = c->argc - 1 - i;
        if (arg_is(&c->argv[i], "entriesadded") && more) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &added)) return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
        } else if (arg_is(&c->argv[i], "maxdeletedid") && more) {
            if (!parse_id(c, &c->argv[i + 1], &maxdel, 0, 1, NULL)) return;
            if (store_sid_cmp(id, maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (!db_check_type(c, k, STORE_STREAM)) return;
    store_stream *st = store_stream_of(k);
    if (st->len) {
        store_sid top;
        store_stream_edge(st, 1, &top);
        if (store_sid_cmp(id, top) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && st->len > (unsigned long long)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    st->last = id;
    if (added != -1) st->entries_added = (uint64_t)added;
    if (store_sid_cmp(maxdel, SID_MIN)) st->max_deleted = maxdel;
    reply_ok(c);
    db_notify(c, STORE_EV_STREAM, "xsetid", &c->argv[1]);
}

/* ---- consumer groups: the AOF's records (Redis's streamPropagate*) ----
 * XREADGROUP, XCLAIM and XAUTOCLAIM log their effects, not themselves, so
 * that a replay on any state leaves the group as it is here (and the file
 * reads as Redis's). */

static resp_slice sid_slice(char *buf, size_t cap, store_sid id)
{
    int n = snprintf(buf, cap, "%llu-%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
    return (resp_slice){buf, (size_t)n};
}

/* XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID
 * last: the entry pending as nk has it (streamPropagateXCLAIM). */
static void log_claim(client *c, const resp_slice *key, const store_sgroup *g, const store_snack *nk, resp_slice id)
{
    char t[24], n[24], last[48];
    resp_slice r[14] = {{"XCLAIM", 6}, *key, {g->name, g->nlen}, {nk->consumer->name, nk->consumer->nlen}, {"0", 1},
                        id, {"TIME", 4}, {t, store_ll2str(t, (long long)nk->delivery_time)}, {"RETRYCOUNT", 10},
                        {n, store_ll2str(n, (long long)nk->delivery_count)}, {"FORCE", 5}, {"JUSTID", 6},
                        {"LASTID", 6}, sid_slice(last, sizeof last, g->last_id)};
    aof_add(c, 14, r);
}

/* XGROUP SETID key group last ENTRIESREAD n: a last ID no claim carries
 * (streamPropagateGroupID). */
static void log_group_id(client *c, const resp_slice *key, const store_sgroup *g)
{
    char last[48], n[24];
    resp_slice r[7] = {{"XGROUP", 6}, {"SETID", 5}, *key, {g->name, g->nlen}, sid_slice(last, sizeof last, g->last_id),
                       {"ENTRIESREAD", 11}, {n, store_ll2str(n, g->entries_read)}};
    aof_add(c, 7, r);
}

/* ---- consumer groups: delivery (Redis's streamReplyWithRange with a group) ---- */

/* The consumer name of g, seen now, or made (with its event; *created
 * set, when asked). */
static store_sconsumer *consumer_get(client *c, store_sgroup *g, const resp_slice *name, const resp_slice *key,
                                     uint64_t now, int *created)
{
    store_sconsumer *con = store_sconsumer_find(g, name->ptr, name->len);
    if (created) *created = !con;
    if (con) {
        con->seen_time = now;
        return con;
    }
    con = store_sconsumer_create(client_db(c), g, name->ptr, name->len, now);
    db_notify(c, STORE_EV_STREAM, "xgroup-createconsumer", key);
    return con;
}

typedef struct deliver_ctx {
    client *c;
    const resp_slice *key;
    store_stream *st;
    store_sgroup *g;
    store_sconsumer *con;
    int noack, logging, moved;
    uint64_t now;
} deliver_ctx;

/* The group's last ID and read counter follow the entry, which becomes
 * pending for the consumer (taken from another one if XGROUP SETID made
 * it deliverable again). */
static int deliver_entry(const store_sentry *e, void *ctx)
{
    deliver_ctx *d = ctx;
    store_sgroup *g = d->g;
    if (store_sid_cmp(e->id, g->last_id) > 0) {
        if (g->entries_read != STORE_SCG_INVALID_READ && !store_stream_has_tombstones(d->st, e->id, NULL))
            g->entries_read++;
        else if (d->st->entries_added)
            g->entries_read = store_stream_distance(d->st, e->id);
        g->last_id = e->id;
        d->moved = 1;
    }
    reply_entry(e, d->c);
    if (!d->noack) {
        store *db = client_db(d->c);
        int created;
        store_snack *n = store_sidmap_put(db, &g->pel, e->id, &created);
        store_snack_assign(db, n, e->id, d->con);
        n->delivery_time = d->now;
        n->delivery_count = 1;
        if (d->logging) {
            char id[48];
            log_claim(d->c, d->key, g, n, sid_slice(id, sizeof id, e->id));
        }
    }
    return 0;
}

/* A consumer's history: its pending IDs after start, each entry (or a
 * null for one deleted since), delivered once more. */
static void deliver_history(client *c, const store_stream *st, store_sgroup *g, store_sconsumer *con, store_sid start,
                            size_t count, uint64_t now)
{
    store_sidmap_it it;
    store_sid id;
    size_t n = 0;
    store_sidmap_seek(&con->pel, start, &it);
    while ((!count || n < count) && store_sidmap_next(&con->pel, &it, &id, NULL)) n++;
    reply_array(c, (long long)n);
    store_sidmap_seek(&con->pel, start, &it);
    for (size_t i = 0; i < n && store_sidmap_next(&con->pel, &it, &id, NULL); i++) {
        if (store_stream_range(st, id, id, 0, 1, reply_entry, c)) {
            store_snack *nk = store_sidmap_get(&g->pel, id);
            nk->delivery_time = now;
            nk->delivery_count++;
        } else {
            reply_array(c, 2);
            reply_id(c, id);
            reply_null_array(c);
        }
    }
}

/* One stream's part of an XREAD/XREADGROUP reply: its name and its
 * entries after gt (a group's: delivered to consumer cname). */
static void xread_reply_stream(client *c, store_key *k, const resp_slice *key, store_sid gt, size_t count,
                               store_sgroup *g, const resp_slice *cname, int noack, int history)
{
    store_stream *st = store_stream_of(k);
    store_sid start = gt;
    id_incr(&start);
    if (c->proto == 2) reply_array(c, 2);
    reply_bulk(c, key->ptr, key->len);
    if (!g) {
        reply_range(c, st, start, SID_MAX, 0, count);
        return;
    }
    uint64_t now = server_now_ms(c->srv);
    int created, logging = c->srv->aof_on;
    store_sconsumer *con = consumer_get(c, g, cname, key, now, &created);
    if (created && noack && logging) {   /* no claim will make it (streamPropagateConsumerCreation) */
        resp_slice r[5] = {{"XGROUP", 6}, {"CREATECONSUMER", 14}, *key, {g->name, g->nlen}, *cname};
        aof_add(c, 5, r);
    }
    if (history) {   /* Redis logs nothing of a history read */
        deliver_history(c, st, g, con, start, count, now);
    } else {
        size_t n = store_stream_range(st, start, SID_MAX, 0, count, count_entry, NULL);
        reply_array(c, (long long)n);
        deliver_ctx d = {c, key, st, g, con, noack, logging, 0, now};
        store_stream_range(st, start, SID_MAX, 0, n, deliver_entry, &d);
        if (d.moved && noack && logging) log_group_id(c, key, g);
    }
    c->srv->dirty++;
}

/* ---- XREAD / XREADGROUP ---- */

/* What a blocked XREAD/XREADGROUP keeps (block_stream_data). */
typedef struct xread_wait {
    int sarg, nstreams, gidx, noack;   /* gidx: the group name's argv index, 0 for XREAD */
    size_t count;
    store_sid ids[];
} xread_wait;

#define XREAD_BLOCKED_DEFAULT_COUNT 1000

static int slice_eq(const resp_slice *a, const resp_slice *b)
{
    return a->len == b->len && !memcmp(a->ptr, b->ptr, a->len);
}

/* Redis's serveClientsBlockedOnStreamKey for one waiter (and
 * unblockDeletedStreamReadgroupClients): 1 if it replied. */
static int xread_serve_blocked(client *c, store_key *k, const resp_slice *key)
{
    xread_wait *x = block_stream_data(c);
    int i = 0;
    while (i < x->nstreams && !slice_eq(&c->argv[x->sarg + i], key)) i++;
    if (i == x->nstreams) return 0;
    int is_stream = k && store_key_type(k) == STORE_STREAM;
    if (!is_stream) {
        if (!x->gidx) return 0;
        reply_error(c, "UNBLOCKED the stream key no longer exists");
        return 1;
    }
    store_stream *st = store_stream_of(k);
    store_sgroup *g = NULL;
    store_sid gt = x->ids[i];
    if (x->gidx) {
        g = store_sgroup_find(st, c->argv[x->gidx].ptr, c->argv[x->gidx].len);
        if (!g) {
            reply_error(c, "NOGROUP the consumer group this client was blocked on no longer exists");
            return 1;
        }
        gt = g->last_id;
    }
    if (store_sid_cmp(st->last, gt) <= 0) return 0;
    if (c->proto == 2) {
        reply_array(c, 1);
    } else {
        reply_map(c, 1);
    }
    xread_reply_stream(c, k, key, gt, x->count, g, x->gidx ? &c->argv[x->gidx + 1] : NULL, x->noack, 0);
    return 1;
}

typedef struct last_ctx {
    store_sid last;
} last_ctx;

static int note_last(const store_sentry *e, void *ctx)
{
    ((last_ctx *)ctx)->last = e->id;
    return 0;
}

static void xread_generic(client *c, int xreadgroup)
{
    long long count = 0, timeout = -1;
    int sarg = 0, nstreams = 0, gidx = 0, noack = 0;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const resp_slice *a = &c->argv[i];
        if (arg_is(a, "block") && more) {
            if (c->flags & CLIENT_DETACHED) {   /* a script's calls: they never block */
                reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts", (int)c->argv[0].len,
                             c->argv[0].ptr);
                return;
            }
            if (!block_ms_or_reply(c, &c->argv[i + 1], &timeout)) return;
            i++;
        } else if (arg_is(a, "count") && more) {
            if (!arg_ll_or_reply(c, &c->argv[++i], &count)) return;
            if (count < 0) count = 0;
        } else if (arg_is(a, "streams") && more) {
            sarg = i + 1;
            nstreams = c->argc - sarg;
            if (nstreams % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
                return;
            }
            nstreams /= 2;
            break;
        } else if (arg_is(a, "group") && more >= 2) {
            if (!xreadgroup) {
                reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            gidx = i + 1;
            i += 2;
        } else if (arg_is(a, "noack")) {
            if (!xreadgroup) {
                reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            noack = 1;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (!sarg) {
        reply_syntax_error(c);
        return;
    }
    if (xreadgroup && !gidx) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return;
    }
    if (xreadgroup && c->srv->aof_on) aof_handled(c);   /* its effects are logged as they happen */
    /* Check every key and ID before replying: the IDs after "$" resolve now. */
    enum { STACK = 16 };
    store_sid stack[STACK], gstack[STACK];
    store_sgroup *grstack[STACK];
    char hstack[STACK];
    int big = nstreams > STACK;
    store_sid *ids = big ? malloc((size_t)nstreams * sizeof *ids) : stack;
    store_sid *gts = big ? malloc((size_t)nstreams * sizeof *gts) : gstack;
    store_sgroup **groups = big ? malloc((size_t)nstreams * sizeof *groups) : grstack;
    char *serve = big ? malloc((size_t)nstreams) : hstack;   /* 0 no, 1 new entries, 2 history */
    const resp_slice *gname = gidx ? &c->argv[gidx] : NULL;
    for (int i = 0; i < nstreams; i++) {
        const resp_slice *a = &c->argv[sarg + nstreams + i], *key = &c->argv[sarg + i];
        store_key *k = store_lookup(client_db(c), key->ptr, key->len);
        if (!db_check_type(c, k, STORE_STREAM)) goto out;
        groups[i] = NULL;
        if (gname) {
            if (!k || !(groups[i] = store_sgroup_find(store_stream_of(k), gname->ptr, gname->len))) {
                reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                             (int)key->len, key->ptr, (int)gname->len, gname->ptr);
                goto out;
            }
        }
        if (a->len == 1 && a->ptr[0] == '$') {
            if (xreadgroup) {
                reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
                               "of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
                               "ID would just return an empty result set.");
                goto out;
            }
            ids[i] = k ? store_stream_of(k)->last : SID_MIN;
            continue;
        }
        if (a->len == 1 && a->ptr[0] == '>') {
            if (!xreadgroup) {
                reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                               "<consumer> option.");
                goto out;
            }
            ids[i] = SID_MAX;   /* the group's last ID, when served */
            continue;
        }
        if (!parse_id(c, a, &ids[i], 0, 1, NULL)) goto out;
    }
    /* Which streams are served, decided before the reply's length is sent.
     * A group named twice (the same key twice) sees the first one's
     * delivery move its last ID. */
    int ready = 0;
    for (int i = 0; i < nstreams; i++) {
        store_key *k = db_lookup_read(c, &c->argv[sarg + i]);
        serve[i] = 0;
        if (!k) continue;
        const store_stream *st = store_stream_of(k);
        store_sid top, gt = ids[i];
        int has_top = store_stream_edge(st, 1, &top);
        if (groups[i]) {
            if (store_sid_cmp(gt, SID_MAX)) {
                serve[i] = 2;
            } else if (st->len) {
                store_sid last = groups[i]->last_id;
                for (int j = 0; j < i; j++) {
                    if (groups[j] != groups[i] || serve[j] != 1) continue;
                    last_ctx lc = {gts[j]};
                    store_sid from = gts[j];
                    id_incr(&from);
                    store_stream_range(st, from, SID_MAX, 0, (size_t)count, note_last, &lc);
                    last = lc.last;
                }
                if (store_sid_cmp(top, last) > 0) {
                    serve[i] = 1;
                    gt = last;
                }
            }
        } else if (has_top && store_sid_cmp(top, gt) > 0) {
            serve[i] = 1;
        }
        gts[i] = gt;
        ready += serve[i] != 0;
    }
    if (ready) {
        if (c->proto == 2) reply_array(c, ready);
        else reply_map(c, ready);
        for (int i = 0; i < nstreams; i++) {
            if (!serve[i]) continue;
            const resp_slice *key = &c->argv[sarg + i];
            store_key *k = store_lookup(client_db(c), key->ptr, key->len);
            xread_reply_stream(c, k, key, gts[i], (size_t)count, groups[i], gname ? gname + 1 : NULL, noack,
                               serve[i] == 2);
        }
        goto out;
    }
    if (timeout == -1 || !block_allowed(c)) {
        /* no BLOCK, or where one cannot block (MULTI): as a timeout */
        reply_null_array(c);
        goto out;
    }
    uint64_t deadline = timeout ? block_deadline_after(c->srv, (uint64_t)timeout) : 0;
    xread_wait *x = block_for_stream(c, sarg, nstreams, deadline, xread_serve_blocked,
                                     sizeof *x + (size_t)nstreams * sizeof(store_sid));
    x->sarg = sarg;
    x->nstreams = nstreams;
    x->gidx = gidx;
    x->noack = noack;
    x->count = count ? (size_t)count : XREAD_BLOCKED_DEFAULT_COUNT;
    memcpy(x->ids, ids, (size_t)nstreams * sizeof *ids);
out:
    if (big) {
        free(ids);
        free(gts);
        free(groups);
        free(serve);
    }
}

int stream_xread_keys(const resp_slice *argv, int argc, int *first)
{
    /* the key spec's rule: after the STREAMS keyword, the first half */
    for (int i = 1; i < argc; i++) {
        if (!arg_is(&argv[i], "streams")) continue;
        *first = i + 1;
        return (argc - i - 1) / 2;
    }
    return 0;
}

void cmd_xread(client *c) { xread_generic(c, 0); }
void cmd_xreadgroup(client *c) { xread_generic(c, 1); }

/* ---- XGROUP ---- */

static void reply_nogroup_for_key(client *c, const resp_slice *group, const resp_slice *key)
{
    reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)group->len, group->ptr,
                 (int)key->len, key->ptr);
}

/* Redis's xgroupCommand: every subcommand but HELP. */
static void xgroup_generic(client *c)
{
    const resp_slice *opt = &c->argv[1], *key = &c->argv[2], *gname = &c->argv[3];
    int create = arg_is(opt, "create"), setid = arg_is(opt, "setid"), mkstream = 0;
    long long entries_read = STORE_SCG_INVALID_READ;
    for (int i = 5; i < c->argc;) {
        if (create && arg_is(&c->argv[i], "mkstream")) {
            mkstream = 1;
            i++;
        } else if ((create || setid) && arg_is(&c->argv[i], "entriesread") && i + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &entries_read)) return;
            if (entries_read < 0 && entries_read != STORE_SCG_INVALID_READ) {
                reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                return;
            }
            i += 2;
        } else {
            reply_subcommand_syntax_error(c);
            return;
        }
    }
    store_key *k = db_lookup_write(c, key);
    if (!db_check_type(c, k, STORE_STREAM)) return;
    store_stream *st = k ? store_stream_of(k) : NULL;
    store_sgroup *g = NULL;
    if (!mkstream) {
        if (!st) {
            reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream automatically.");
            return;
        }
        g = store_sgroup_find(st, gname->ptr, gname->len);
        if (!g && (setid || arg_is(opt, "createconsumer") || arg_is(opt, "delconsumer"))) {
            reply_nogroup_for_key(c, gname, key);
            return;
        }
    }
    if (create && c->argc >= 5 && c->argc <= 8) {
        store_sid id;
        const resp_slice *a = &c->argv[4];
        if (a->len == 1 && a->ptr[0] == '$') id = st ? st->last : SID_MIN;
        else if (!parse_id(c, a, &id, 0, 1, NULL)) return;
        if (!st) {
            k = store_create_key(client_db(c), key->ptr, key->len, STORE_STREAM);
            st = store_stream_of(k);
        }
        if (store_sgroup_create(client_db(c), st, gname->ptr, gname->len, id, entries_read)) {
            reply_ok(c);
            db_notify(c, STORE_EV_STREAM, "xgroup-create", key);
        } else {
            reply_error(c, "BUSYGROUP Consumer Group name already exists");
        }
    } else if (setid && (c->argc == 5 || c->argc == 7)) {
        store_sid id;
        const resp_slice *a = &c->argv[4];
        if (a->len == 1 && a->ptr[0] == '$') id = st->last;
        else if (!parse_id(c, a, &id, 0, 0, NULL)) return;
        g->last_id = id;
        g->entries_read = entries_read;
        reply_ok(c);
        db_notify(c, STORE_EV_STREAM, "xgroup-setid", key);
    } else if (arg_is(opt, "destroy") && c->argc == 4) {
        if (g && store_sgroup_destroy(client_db(c), st, gname->ptr, gname->len)) {
            reply_int(c, 1);
            db_notify(c, STORE_EV_STREAM, "xgroup-destroy", key);   /* wakes its blocked readers */
        } else {
            reply_int(c, 0);
        }
    } else if (arg_is(opt, "createconsumer") && c->argc == 5) {
        const resp_slice *name = &c->argv[4];
        store_sconsumer *con = store_sconsumer_create(client_db(c), g, name->ptr, name->len, server_now_ms(c->srv));
        reply_int(c, con ? 1 : 0);
        if (con) db_notify(c, STORE_EV_STREAM, "xgroup-createconsumer", key);
    } else if (arg_is(opt, "delconsumer") && c->argc == 5) {
        const resp_slice *name = &c->argv[4];
        store_sconsumer *con = store_sconsumer_find(g, name->ptr, name->len);
        long long pending = 0;
        if (con) {
            pending = (long long)store_sconsumer_delete(client_db(c), g, con);
            db_notify(c, STORE_EV_STREAM, "xgroup-delconsumer", key);
        }
        reply_int(c, pending);
    } else {
        reply_subcommand_syntax_error(c);
    }
}

static void xgroup_help(client *c)
{
    static const char *const lines[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_xgroup(client *c) { subcommand_dispatch(c); }

const command xgroup_subcommands[] = {
    {"create", xgroup_generic, -5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, "stream", "5.0.0", "Create a consumer group.", "key group id|$ [MKSTREAM] [ENTRIESREAD entries_read]", NULL},
    {"createconsumer", xgroup_generic, 5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, "stream", "6.2.0", "Create a consumer in a consumer group.", "key group consumer", NULL},
    {"delconsumer", xgroup_generic, 5, CMD_WRITE, 2, 2, 1, "stream", "5.0.0", "Delete a consumer from a consumer group.", "key group consumer", NULL},
    {"destroy", xgroup_generic, 4, CMD_WRITE, 2, 2, 1, "stream", "5.0.0", "Destroy a consumer group.", "key group", NULL},
    {"help", xgroup_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "stream", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"setid", xgroup_generic, -5, CMD_WRITE, 2, 2, 1, "stream", "5.0.0", "Set a consumer group to an arbitrary last delivered ID value.", "key group id|$ [ENTRIESREAD entries_read]", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

/* ---- XACK / XPENDING ---- */

/* Strict IDs from argv[first..] into ids (stack or allocated: ids_free). */
static store_sid *parse_ids(client *c, int first, store_sid *stack, size_t nstack, int reply)
{
    size_t n = (size_t)(c->argc - first);
    store_sid *ids = n <= nstack ? stack : malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        if (!parse_id(reply ? c : NULL, &c->argv[first + (int)i], &ids[i], 0, 1, NULL)) {
            if (ids != stack) free(ids);
            return NULL;
        }
    }
    return ids;
}

/* The stream argv[1] and its group argv[2]: 1 with both (*g NULL when
 * either is missing), 0 after WRONGTYPE. */
static int key_group(client *c, store_key **k, store_sgroup **g)
{
    *k = db_lookup_read(c, &c->argv[1]);
    *g = NULL;
    if (!*k) return 1;
    if (!db_check_type(c, *k, STORE_STREAM)) return 0;
    *g = store_sgroup_find(store_stream_of(*k), c->argv[2].ptr, c->argv[2].len);
    return 1;
}

void cmd_xack(client *c)
{
    store_key *k;
    store_sgroup *g;
    if (!key_group(c, &k, &g)) return;
    if (!g) {
        reply_int(c, 0);
        return;
    }
    store_sid stack[16];
    store_sid *ids = parse_ids(c, 3, stack, 16, 1);
    if (!ids) return;
    long long acked = 0;
    for (int j = 3; j < c->argc; j++) acked += store_snack_ack(client_db(c), g, ids[j - 3]);
    c->srv->dirty += acked;
    reply_int(c, acked);
    if (ids != stack) free(ids);
}

static void reply_nogroup(client *c)
{
    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)c->argv[1].len, c->argv[1].ptr,
                 (int)c->argv[2].len, c->argv[2].ptr);
}

/* XPENDING's extended form: the entries of pel (a group's or a
 * consumer's) in start..end idle for at least minidle, count at most. */
static size_t pending_walk(client *c, const store_sgroup *g, const store_sidmap *pel, store_sid start, store_sid end,
                           long long count, long long minidle, uint64_t now, int emit)
{
    store_sidmap_it it;
    store_sid id;
    size_t n = 0;
    store_sidmap_seek(pel, start, &it);
    while (count && store_sidmap_next(pel, &it, &id, NULL) && store_sid_cmp(id, end) <= 0) {
        const store_snack *nk = store_sidmap_get(&g->pel, id);
        long long idle = (long long)now - (long long)nk->delivery_time;
        if (minidle && idle < minidle) continue;
        n++;
        count--;
        if (!emit) continue;
        reply_array(c, 4);
        reply_id(c, id);
        reply_bulk(c, nk->consumer->name, nk->consumer->nlen);
        reply_int(c, idle < 0 ? 0 : idle);
        reply_int(c, (long long)nk->delivery_count);
    }
    return n;
}

void cmd_xpending(client *c)
{
    int justinfo = c->argc == 3;
    store_sid start = SID_MIN, end = SID_MAX;
    long long count = 0, minidle = 0;
    const resp_slice *cname = NULL;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc >= 6) {
        int si = 3, sx, ex;
        if (arg_is(&c->argv[3], "idle")) {
            if (!arg_ll_or_reply(c, &c->argv[4], &minidle)) return;
            if (c->argc < 8) {
                reply_syntax_error(c);
                return;
            }
            si += 2;
        }
        if (!arg_ll_or_reply(c, &c->argv[si + 2], &count)) return;
        if (count < 0) count = 0;
        if (!parse_bound(c, &c->argv[si], &start, 0, &sx)) return;
        if (sx && !id_incr(&start)) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (!parse_bound(c, &c->argv[si + 1], &end, UINT64_MAX, &ex)) return;
        if (ex && !id_decr(&end)) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc) cname = &c->argv[si + 3];
    }
    store_key *k;
    store_sgroup *g;
    if (!key_group(c, &k, &g)) return;
    if (!g) {
        reply_nogroup(c);
        return;
    }
    if (justinfo) {
        reply_array(c, 4);
        reply_int(c, (long long)g->pel.count);
        store_sid lo, hi;
        if (!store_sidmap_edge(&g->pel, 0, &lo)) {
            reply_null(c);
            reply_null(c);
            reply_null_array(c);
            return;
        }
        store_sidmap_edge(&g->pel, 1, &hi);
        reply_id(c, lo);
        reply_id(c, hi);
        long long n = 0;
        for (uint32_t i = 0; i < g->nconsumers; i++) n += g->consumers[i]->pel.count > 0;
        reply_array(c, n);
        for (uint32_t i = 0; i < g->nconsumers; i++) {
            const store_sconsumer *con = g->consumers[i];
            if (!con->pel.count) continue;
            reply_array(c, 2);
            reply_bulk(c, con->name, con->nlen);
            reply_bulk_ll(c, (long long)con->pel.count);
        }
        return;
    }
    const store_sidmap *pel = &g->pel;
    if (cname) {
        const store_sconsumer *con = store_sconsumer_find(g, cname->ptr, cname->len);
        if (!con) {
            reply_array(c, 0);
            return;
        }
        pel = &con->pel;
    }
    uint64_t now = server_now_ms(c->srv);
    reply_array(c, (long long)pending_walk(c, g, pel, start, end, count, minidle, now, 0));
    pending_walk(c, g, pel, start, end, count, minidle, now, 1);
}

/* ---- XCLAIM / XAUTOCLAIM ---- */

/* Claimed IDs, replied after the claims: stack room for the usual few. */
typedef struct sid_list {
    store_sid *v, stack[32];
    size_t n, cap;
} sid_list;

static void sid_list_init(sid_list *l)
{
    l->v = l->stack;
    l->n = 0;
    l->cap = sizeof l->stack / sizeof l->stack[0];
}

static void sid_list_push(sid_list *l, store_sid id)
{
    if (l->n == l->cap) {
        l->cap *= 2;
        if (l->v == l->stack) {
            l->v = malloc(l->cap * sizeof *l->v);
            memcpy(l->v, l->stack, sizeof l->stack);
        } else {
            l->v = realloc(l->v, l->cap * sizeof *l->v);
        }
    }
    l->v[l->n++] = id;
}

static void sid_list_free(sid_list *l)
{
    if (l->v != l->stack) free(l->v);
}

/* One claim (XCLAIM's and XAUTOCLAIM's): id pending in g goes to the
 * consumer argv[3] (looked up or made once, in *con), delivered at time,
 * its count set to retrycount (>= 0) or counted unless justid. */
static void claim_one(client *c, store_sgroup *g, store_snack *nk, store_sid id, store_sconsumer **con,
                      uint64_t time, long long retrycount, int justid, uint64_t now, sid_list *claimed)
{
    if (!*con) *con = consumer_get(c, g, &c->argv[3], &c->argv[1], now, NULL);
    store_snack_assign(client_db(c), nk, id, *con);
    nk->delivery_time = time;
    if (retrycount >= 0) nk->delivery_count = (uint64_t)retrycount;
    else if (!justid) nk->delivery_count++;
    sid_list_push(claimed, id);
    c->srv->dirty++;
}

/* The claimed entries (or their IDs only). */
static void reply_claimed(client *c, const store_stream *st, const sid_list *l, int justid)
{
    reply_array(c, (long long)l->n);
    for (size_t i = 0; i < l->n; i++) {
        if (justid) reply_id(c, l->v[i]);
        else store_stream_range(st, l->v[i], l->v[i], 0, 1, reply_entry, c);
    }
}

static int ll_or_reply_msg(client *c, const resp_slice *a, long long *out, const char *msg)
{
    if (store_str2ll(a->ptr, a->len, out)) return 1;
    reply_errorf(c, "ERR %s", msg);
    return 0;
}

void cmd_xclaim(client *c)
{
    store_key *k;
    store_sgroup *g;
    long long minidle, retrycount = -1, deliverytime = -1;
    int force = 0, justid = 0;
    if (!key_group(c, &k, &g)) return;
    if (!g) {
        reply_nogroup(c);
        return;
    }
    store_stream *st = store_stream_of(k);
    if (!ll_or_reply_msg(c, &c->argv[4], &minidle, "Invalid min-idle-time argument for XCLAIM")) return;
    if (minidle < 0) minidle = 0;
    int j, nids;
    store_sid id, last_id = SID_MIN;
    for (j = 5; j < c->argc; j++)   /* the IDs run up to the first option */
        if (!parse_id(NULL, &c->argv[j], &id, 0, 1, NULL)) break;
    nids = j - 5;
    uint64_t now = server_now_ms(c->srv);
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const resp_slice *a = &c->argv[j];
        if (arg_is(a, "force")) {
            force = 1;
        } else if (arg_is(a, "justid")) {
            justid = 1;
        } else if (arg_is(a, "idle") && more) {
            if (!ll_or_reply_msg(c, &c->argv[++j], &deliverytime, "Invalid IDLE option argument for XCLAIM")) return;
            deliverytime = (long long)now - deliverytime;
        } else if (arg_is(a, "time") && more) {
            if (!ll_or_reply_msg(c, &c->argv[++j], &deliverytime, "Invalid TIME option argument for XCLAIM")) return;
        } else if (arg_is(a, "retrycount") && more) {
            if (!ll_or_reply_msg(c, &c->argv[++j], &retrycount, "Invalid RETRYCOUNT option argument for XCLAIM"))
                return;
        } else if (arg_is(a, "lastid") && more) {
            if (!parse_id(c, &c->argv[++j], &last_id, 0, 1, NULL)) return;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)a->len, a->ptr);
            return;
        }
    }
    int logging = c->srv->aof_on, log_last = 0;
    if (logging) aof_handled(c);
    if (store_sid_cmp(last_id, g->last_id) > 0) {
        g->last_id = last_id;
        c->srv->dirty++;
        log_last = 1;   /* unless a claim's LASTID carries it */
    }
    if (deliverytime == -1 || deliverytime < 0 || deliverytime > (long long)now) deliverytime = (long long)now;
    store *db = client_db(c);
    store_sconsumer *con = NULL;
    sid_list claimed;
    sid_list_init(&claimed);
    for (int i = 0; i < nids; i++) {
        parse_id(NULL, &c->argv[5 + i], &id, 0, 1, NULL);
        store_snack *nk = store_sidmap_get(&g->pel, id);
        if (!store_stream_exists(st, id)) {   /* deleted since: out of the PEL */
            if (nk) {
                if (logging) log_claim(c, &c->argv[1], g, nk, c->argv[5 + i]);
                log_last = 0;
                store_snack_ack(db, g, id);
                c->srv->dirty++;
            }
            continue;
        }
        if (force && !nk) {   /* streamCreateNACK's: delivered once, now */
            int created;
            nk = store_sidmap_put(db, &g->pel, id, &created);
            nk->delivery_time = now;
            nk->delivery_count = 1;
        }
        if (!nk) continue;
        if (nk->consumer && minidle && (long long)now - (long long)nk->delivery_time < minidle) continue;
        claim_one(c, g, nk, id, &con, (uint64_t)deliverytime, retrycount, justid, now, &claimed);
        if (logging) log_claim(c, &c->argv[1], g, nk, c->argv[5 + i]);
        log_last = 0;
    }
    if (log_last && logging) log_group_id(c, &c->argv[1], g);
    reply_claimed(c, st, &claimed, justid);
    sid_list_free(&claimed);
}

void cmd_xautoclaim(client *c)
{
    long long minidle, count = 100;
    store_sid start;
    int sx, justid = 0;
    if (!ll_or_reply_msg(c, &c->argv[4], &minidle, "Invalid min-idle-time argument for XAUTOCLAIM")) return;
    if (minidle < 0) minidle = 0;
    if (!parse_bound(c, &c->argv[5], &start, 0, &sx)) return;
    if (sx && !id_incr(&start)) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "count") && more) {
            long long max = LLONG_MAX / 16;   /* Redis's LONG_MAX / max(sizeof(streamID), 10) */
            if (!store_str2ll(c->argv[j + 1].ptr, c->argv[j + 1].len, &count) || count < 1 || count > max) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            j++;
        } else if (arg_is(&c->argv[j], "justid")) {
            justid = 1;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    store_key *k;
    store_sgroup *g;
    if (!key_group(c, &k, &g)) return;
    if (!g) {
        reply_nogroup(c);
        return;
    }
    store_stream *st = store_stream_of(k);
    store *db = client_db(c);
    uint64_t now = server_now_ms(c->srv);
    long long attempts = count * 10;
    int logging = c->srv->aof_on;
    if (logging) aof_handled(c);
    char idtext[48];
    store_sconsumer *con = NULL;
    sid_list claimed, deleted;
    sid_list_init(&claimed);
    sid_list_init(&deleted);
    store_sidmap_it it;
    store_sid id;
    void *v;
    store_sidmap_seek(&g->pel, start, &it);
    while (attempts-- && count && store_sidmap_next(&g->pel, &it, &id, &v)) {
        store_snack *nk = v;
        if (!store_stream_exists(st, id)) {
            if (logging) log_claim(c, &c->argv[1], g, nk, sid_slice(idtext, sizeof idtext, id));
            store_snack_ack(db, g, id);
            sid_list_push(&deleted, id);
            c->srv->dirty++;
            count--;
            store_sidmap_seek(&g->pel, id, &it);   /* the map changed under the iterator */
            continue;
        }
        if (minidle && (long long)now - (long long)nk->delivery_time < minidle) continue;
        claim_one(c, g, nk, id, &con, now, -1, justid, now, &claimed);
        if (logging) log_claim(c, &c->argv[1], g, nk, sid_slice(idtext, sizeof idtext, id));
        count--;
    }
    if (!store_sidmap_next(&g->pel, &it, &id, NULL)) id = SID_MIN;   /* the next call's cursor */
    reply_array(c, 3);
    reply_id(c, id);
    reply_claimed(c, st, &claimed, justid);
    reply_array(c, (long long)deleted.n);
    for (size_t i = 0; i < deleted.n; i++) reply_id(c, deleted.v[i]);
    sid_list_free(&claimed);
    sid_list_free(&deleted);
}

/* ---- XINFO ---- */

/* XINFO's key: 1 with *k, or 0 after "no such key" / WRONGTYPE. */
static int xinfo_key(client *c, store_key **k)
{
    *k = db_lookup_read(c, &c->argv[2]);
    if (!*k) {
        reply_error(c, "ERR no such key");
        return 0;
    }
    return db_check_type(c, *k, STORE_STREAM);
}

static void reply_edge(client *c, const store_stream *st, int last)
{
    store_sid id;
    if (!store_stream_edge(st, last, &id)) {
        reply_null(c);
        return;
    }
    store_stream_range(st, id, id, 0, 1, reply_entry, c);
}

static void reply_entries_read(client *c, const store_sgroup *g)
{
    if (g->entries_read != STORE_SCG_INVALID_READ) reply_int(c, g->entries_read);
    else reply_null(c);
}

static void reply_lag(client *c, const store_stream *st, const store_sgroup *g)
{
    int valid;
    long long lag = store_sgroup_lag(st, g, &valid);
    if (valid) reply_int(c, lag);
    else reply_null(c);
}

/* At most count (0: all) of pel's first entries, FULL's "pending" arrays:
 * [id, consumer, delivery time, deliveries] for the group's, [id, delivery
 * time, deliveries] for a consumer's. */
static void reply_full_pel(client *c, const store_sgroup *g, const store_sidmap *pel, long long count, int group)
{
    size_t n = pel->count;
    if (count && (size_t)count < n) n = (size_t)count;
    reply_array(c, (long long)n);
    store_sidmap_it it;
    store_sid id;
    store_sidmap_seek(pel, SID_MIN, &it);
    for (size_t i = 0; i < n && store_sidmap_next(pel, &it, &id, NULL); i++) {
        const store_snack *nk = store_sidmap_get(&g->pel, id);
        reply_array(c, group ? 4 : 3);
        reply_id(c, id);
        if (group) reply_bulk(c, nk->consumer->name, nk->consumer->nlen);
        reply_int(c, (long long)nk->delivery_time);
        reply_int(c, (long long)nk->delivery_count);
    }
}

static void xinfo_full_groups(client *c, const store_stream *st, long long count)
{
    reply_array(c, st->ngroups);
    for (uint32_t i = 0; i < st->ngroups; i++) {
        const store_sgroup *g = st->groups[i];
        reply_map(c, 7);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_bulk_cstr(c, "last-delivered-id");
        reply_id(c, g->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_bulk_cstr(c, "lag");
        reply_lag(c, st, g);
        reply_bulk_cstr(c, "pel-count");
        reply_int(c, (long long)g->pel.count);
        reply_bulk_cstr(c, "pending");
        reply_full_pel(c, g, &g->pel, count, 1);
        reply_bulk_cstr(c, "consumers");
        reply_array(c, g->nconsumers);
        for (uint32_t j = 0; j < g->nconsumers; j++) {
            const store_sconsumer *con = g->consumers[j];
            reply_map(c, 4);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, con->name, con->nlen);
            reply_bulk_cstr(c, "seen-time");
            reply_int(c, (long long)con->seen_time);
            reply_bulk_cstr(c, "pel-count");
            reply_int(c, (long long)con->pel.count);
            reply_bulk_cstr(c, "pending");
            reply_full_pel(c, g, &con->pel, count, 0);
        }
    }
}

static void xinfo_stream(client *c)
{
    store_key *k;
    if (!xinfo_key(c, &k)) return;
    int full = 0;
    long long count = 10;   /* FULL's default, so a huge stream does not stall the server */
    int optc = c->argc - 3;
    if (optc) {
        if ((optc != 1 && optc != 3) || !arg_is(&c->argv[3], "full") || (optc == 3 && !arg_is(&c->argv[4], "count"))) {
            reply_subcommand_syntax_error(c);
            return;
        }
        if (optc == 3) {
            if (!arg_ll_or_reply(c, &c->argv[5], &count)) return;
            if (count < 0) count = 10;
        }
        full = 1;
    }
    const store_stream *st = store_stream_of_const(k);
    reply_map(c, full ? 9 : 10);
    reply_bulk_cstr(c, "length");
    reply_int(c, (long long)st->len);
    reply_bulk_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)store_stream_nodes(st));
    reply_bulk_cstr(c, "radix-tree-nodes");   /* a rax of n keys has about n + 1 nodes */
    reply_int(c, (long long)store_stream_nodes(st) + 1);
    reply_bulk_cstr(c, "last-generated-id");
    reply_id(c, st->last);
    reply_bulk_cstr(c, "max-deleted-entry-id");
    reply_id(c, st->max_deleted);
    reply_bulk_cstr(c, "entries-added");
    reply_int(c, (long long)st->entries_added);
    reply_bulk_cstr(c, "recorded-first-entry-id");
    reply_id(c, st->first);
    if (full) {
        reply_bulk_cstr(c, "entries");
        reply_range(c, st, SID_MIN, SID_MAX, 0, (size_t)count);
        reply_bulk_cstr(c, "groups");
        xinfo_full_groups(c, st, count);
        return;
    }
    reply_bulk_cstr(c, "groups");
    reply_int(c, st->ngroups);
    reply_bulk_cstr(c, "first-entry");
    reply_edge(c, st, 0);
    reply_bulk_cstr(c, "last-entry");
    reply_edge(c, st, 1);
}

static void xinfo_groups(client *c)
{
    store_key *k;
    if (!xinfo_key(c, &k)) return;
    const store_stream *st = store_stream_of_const(k);
    reply_array(c, st->ngroups);
    for (uint32_t i = 0; i < st->ngroups; i++) {
        const store_sgroup *g = st->groups[i];
        reply_map(c, 6);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_bulk_cstr(c, "consumers");
        reply_int(c, g->nconsumers);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)g->pel.count);
        reply_bulk_cstr(c, "last-delivered-id");
        reply_id(c, g->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_bulk_cstr(c, "lag");
        reply_lag(c, st, g);
    }
}

static void xinfo_consumers(client *c)
{
    store_key *k;
    if (!xinfo_key(c, &k)) return;
    const store_sgroup *g = store_sgroup_find(store_stream_of_const(k), c->argv[3].ptr, c->argv[3].len);
    if (!g) {
        reply_nogroup_for_key(c, &c->argv[3], &c->argv[2]);
        return;
    }
    uint64_t now = server_now_ms(c->srv);
    reply_array(c, g->nconsumers);
    for (uint32_t i = 0; i < g->nconsumers; i++) {
        const store_sconsumer *con = g->consumers[i];
        long long idle = (long long)now - (long long)con->seen_time;
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, con->name, con->nlen);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)con->pel.count);
        reply_bulk_cstr(c, "idle");
        reply_int(c, idle < 0 ? 0 : idle);
    }
}

static void xinfo_help(client *c)
{
    static const char *const lines[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_xinfo(client *c) { subcommand_dispatch(c); }

const command xinfo_subcommands[] = {
    {"consumers", xinfo_consumers, 4, CMD_READONLY, 2, 2, 1, "stream", "5.0.0", "List the consumers in a consumer group", "key groupname", NULL},
    {"groups", xinfo_groups, 3, CMD_READONLY, 2, 2, 1, "stream", "5.0.0", "List the consumer groups of a stream", "key", NULL},
    {"help", xinfo_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "stream", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"stream", xinfo_stream, -3, CMD_READONLY, 2, 2, 1, "stream", "5.0.0", "Get information about a stream", "key [FULL [COUNT count]]", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
