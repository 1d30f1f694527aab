/* stream.c - stream commands (XADD ... XREAD): Redis 7.0's ID rules,
 * trimming options, replies and error texts, over store/stream.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "num.h"
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

/* Redis's streamGenericParseIDOrReply: "-" / "+" (unless strict),
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
    reply_error(c, "ERR Invalid stream ID specified as stream command argument");
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
            const resp_slice *next = &c->argv[i + 1];
            if (more >= 2 && next->len == 1 && next->ptr[0] == '~') {
                t->approx = 1;
                i++;
            } else if (more >= 2 && next->len == 1 && next->ptr[0] == '=') {
                i++;
            }
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
            i++;
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

/* ---- XREAD ---- */

void cmd_xread(client *c)
{
    long long count = 0;
    int sarg = 0, nstreams = 0, block = 0;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const resp_slice *a = &c->argv[i];
        if (arg_is(a, "block") && more) {
            if (c->flags & CLIENT_DETACHED) {   /* a script's calls: they never block */
                reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts", (int)c->argv[0].len,
                             c->argv[0].ptr);
                return;
            }
            long long timeout;
            if (!block_ms_or_reply(c, &c->argv[i + 1], &timeout)) return;
            block = 1;
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
            reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
            return;
        } else if (arg_is(a, "noack")) {
            reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
            return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (!sarg) {
        reply_syntax_error(c);
        return;
    }
    /* Check every key and ID before replying: the IDs after "$" resolve now. */
    store_sid stack[16];
    store_sid *ids = nstreams <= 16 ? stack : malloc((size_t)nstreams * sizeof *ids);
    int ready = 0;
    for (int i = 0; i < nstreams; i++) {
        const resp_slice *a = &c->argv[sarg + nstreams + i];
        store_key *k = store_lookup(client_db(c), c->argv[sarg + i].ptr, c->argv[sarg + i].len);
        if (!db_check_type(c, k, STORE_STREAM)) goto out;
        if (a->len == 1 && a->ptr[0] == '$') {
            ids[i] = k ? store_stream_of(k)->last : SID_MIN;
            continue;
        }
        if (a->len == 1 && a->ptr[0] == '>') {
            reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
            goto out;
        }
        if (!parse_id(c, a, &ids[i], 0, 1, NULL)) goto out;
    }
    for (int i = 0; i < nstreams; i++) {
        store_key *k = db_lookup_read(c, &c->argv[sarg + i]);
        store_sid top;
        if (k && store_stream_edge(store_stream_of(k), 1, &top) && store_sid_cmp(top, ids[i]) > 0) ready++;
        else ids[i] = SID_MAX;   /* nothing for this one */
    }
    if (!ready) {
        /* Inside EXEC Redis cannot block either: it answers as if the
         * timeout passed. Elsewhere the wait needs the blocking machinery,
         * which is other work: refused until it lands. */
        if (block && block_allowed(c)) reply_error(c, "ERR BLOCK is not supported yet");
        else reply_null_array(c);
        goto out;
    }
    if (c->proto == 2) reply_array(c, ready);
    else reply_map(c, ready);
    for (int i = 0; i < nstreams; i++) {
        if (!store_sid_cmp(ids[i], SID_MAX)) continue;
        store_key *k = store_lookup(client_db(c), c->argv[sarg + i].ptr, c->argv[sarg + i].len);
        store_sid start = ids[i];
        id_incr(&start);
        if (c->proto == 2) reply_array(c, 2);
        reply_bulk(c, c->argv[sarg + i].ptr, c->argv[sarg + i].len);
        reply_range(c, store_stream_of(k), start, SID_MAX, 0, (size_t)count);
    }
out:
    if (ids != stack) free(ids);
}

/* ---- XINFO (no consumer groups exist yet: GROUPS is empty) ---- */

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
        reply_array(c, 0);
        return;
    }
    reply_bulk_cstr(c, "groups");
    reply_int(c, 0);
    reply_bulk_cstr(c, "first-entry");
    reply_edge(c, st, 0);
    reply_bulk_cstr(c, "last-entry");
    reply_edge(c, st, 1);
}

static void xinfo_groups(client *c)
{
    store_key *k;
    if (!xinfo_key(c, &k)) return;
    reply_array(c, 0);
}

static void xinfo_consumers(client *c)
{
    store_key *k;
    if (!xinfo_key(c, &k)) return;
    reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)c->argv[3].len,
                 c->argv[3].ptr, (int)c->argv[2].len, c->argv[2].ptr);
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
