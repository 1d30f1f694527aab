/* keys.c - commands on keys whatever their type: EXISTS, DEL, TYPE,
 * KEYS, SCAN, RENAME and the TTL family (EXPIRE*, TTL*, PERSIST). */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"

static const char *type_name(const store_key *k)
{
    static const char *names[] = {
        [STORE_STRING] = "string", [STORE_HASH] = "hash", [STORE_LIST] = "list", [STORE_ZSET] = "zset", [STORE_SET] = "set", [STORE_STREAM] = "stream",
    };
    return k ? names[store_key_type(k)] : "none";
}

void cmd_exists(client *c)
{
    long long n = 0;
    for (int i = 1; i < c->argc; i++)
        if (db_lookup_read_flags(c, &c->argv[i], DB_NOTOUCH)) n++;
    reply_int(c, n);
}

/* DEL, or UNLINK (lazy: big values freed on the lazyfree thread). */
static void del_keys(client *c, int lazy)
{
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        if (lazy ? !lazyfree_delete(c->srv, client_db(c), c->argv[i].ptr, c->argv[i].len)
                 : !store_delete(client_db(c), c->argv[i].ptr, c->argv[i].len))
            continue;
        db_notify(c, STORE_EV_GENERIC, "del", &c->argv[i]);
        n++;
    }
    reply_int(c, n);
}

void cmd_del(client *c) { del_keys(c, c->srv->cfg.lazyfree_lazy_user_del); }
void cmd_unlink(client *c) { del_keys(c, 1); }

void cmd_type(client *c)
{
    reply_status(c, type_name(db_lookup_read_flags(c, &c->argv[1], DB_NOTOUCH)));
}

/* ---- KEYS and SCAN ---- */

/* The reply's length comes before its elements, so keys are gathered
 * first. The stack part covers SCAN's usual COUNT without malloc. */
#define KEYSET_STACK 128

typedef struct keyset {
    store_key **v;
    size_t n, cap;
    const resp_slice *pat;   /* KEYS filters while collecting; NULL: take all */
    store_key *stack[KEYSET_STACK];
} keyset;

/* "*" matches everything; skipping the matcher is Redis's shortcut too. */
static const resp_slice *real_pattern(const resp_slice *pat)
{
    return (pat && !(pat->len == 1 && pat->ptr[0] == '*')) ? pat : NULL;
}

static void keyset_init(keyset *ks, const resp_slice *pat)
{
    ks->v = ks->stack;
    ks->n = 0;
    ks->cap = KEYSET_STACK;
    ks->pat = real_pattern(pat);
}

static void keyset_free(keyset *ks)
{
    if (ks->v != ks->stack) free(ks->v);
}

static int key_matches(store_key *k, const resp_slice *pat)
{
    size_t len;
    const char *name = store_key_name(k, &len);
    return !pat || glob_match(pat->ptr, pat->len, name, len, 0);
}

int keys_scan_match(const resp_slice *pat, const char *s, size_t len)
{
    pat = real_pattern(pat);
    return !pat || glob_match(pat->ptr, pat->len, s, len, 0);
}

store_key *keys_scan_key_or_reply(client *c, store_type t, uint64_t *cursor, scan_opts *o)
{
    store_key *k;
    if (!keys_scan_parse_cursor(&c->argv[2], cursor)) {
        reply_error(c, "ERR invalid cursor");
        return NULL;
    }
    if (!db_read_typed(c, &c->argv[1], t, &k)) return NULL;
    if (!k) {   /* Redis's emptyscan, before the options are read */
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return NULL;
    }
    return keys_scan_parse_opts(c, 3, 0, o) ? k : NULL;
}

static void keyset_add(store_key *k, void *ctx)
{
    keyset *ks = ctx;
    if (!key_matches(k, ks->pat)) return;
    if (ks->n == ks->cap) {
        ks->cap *= 2;
        if (ks->v == ks->stack) {
            ks->v = mem_alloc(ks->cap * sizeof(*ks->v));
            memcpy(ks->v, ks->stack, sizeof(ks->stack));
        } else {
            ks->v = mem_realloc(ks->v, ks->cap * sizeof(*ks->v));
        }
    }
    ks->v[ks->n++] = k;
}

static void reply_keyset(client *c, const keyset *ks)
{
    reply_array(c, (long long)ks->n);
    for (size_t i = 0; i < ks->n && client_output_room(c); i++) {
        size_t len;
        const char *name = store_key_name(ks->v[i], &len);
        reply_bulk(c, name, len);
    }
}

void cmd_keys(client *c)
{
    keyset ks;
    keyset_init(&ks, &c->argv[1]);
    store_foreach(client_db(c), keyset_add, &ks);
    reply_keyset(c, &ks);
    keyset_free(&ks);
}

/* Redis reads the cursor with strtoul: no leading space, an optional sign
 * ('-' wraps around), digits up to the end or a NUL, no overflow. With no
 * digits at all strtoul stops at the first byte, so only "" (or a NUL) is 0. */
int keys_scan_parse_cursor(const resp_slice *a, uint64_t *out)
{
    const char *p = a->ptr, *end = a->ptr + a->len;
    uint64_t v = 0;
    int neg = 0;
    if (p < end && isspace((unsigned char)*p)) return 0;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    const char *digits = p;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (p == digits) p = a->ptr;
    if (p < end && *p != '\0') return 0;
    *out = neg ? -v : v;
    return 1;
}

int keys_scan_parse_opts(client *c, int first, int with_type, scan_opts *o)
{
    o->count = 10;
    o->pat = o->type = NULL;
    for (int i = first; i < c->argc; i += 2) {
        if (i + 1 >= c->argc) {
            reply_syntax_error(c);
            return 0;
        }
        const resp_slice *opt = &c->argv[i], *val = &c->argv[i + 1];
        if (arg_is(opt, "count")) {
            if (!arg_ll_or_reply(c, val, &o->count)) return 0;
            if (o->count < 1) {
                reply_syntax_error(c);
                return 0;
            }
        } else if (arg_is(opt, "match")) {
            o->pat = val;
        } else if (with_type && arg_is(opt, "type")) {
            o->type = val;
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    return 1;
}

/* MATCH and TYPE apply after collection, as in Redis, so COUNT bounds the
 * keys looked at rather than the keys returned. */
static void scan_filter(client *c, keyset *ks, const scan_opts *o)
{
    const resp_slice *pat = o->pat;
    size_t kept = 0;
    for (size_t i = 0; i < ks->n; i++) {
        store_key *k = ks->v[i];
        if (!key_matches(k, pat)) continue;
        if (o->type) {
            /* Redis 7.0 learns the type through a read lookup: a hit */
            c->srv->stat_keyspace_hits++;
            if (!arg_is(o->type, type_name(k))) continue;
        }
        ks->v[kept++] = k;
    }
    ks->n = kept;
}

void cmd_scan(client *c)
{
    uint64_t cursor;
    scan_opts o;
    keyset ks;
    if (!keys_scan_parse_cursor(&c->argv[1], &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    if (!keys_scan_parse_opts(c, 2, 1, &o)) return;
    keyset_init(&ks, NULL);
    /* Like Redis: stop at ~COUNT keys, but give up after COUNT*10 buckets
     * so a sparse table doesn't make one call walk it all. */
    long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
    do {
        cursor = store_scan(client_db(c), cursor, keyset_add, &ks);
    } while (cursor && maxiter-- && ks.n < (unsigned long long)o.count);
    scan_filter(c, &ks, &o);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)cursor);
    reply_keyset(c, &ks);
    keyset_free(&ks);
}

/* ---- RENAME ---- */

static void reply_renamed(client *c, int nx, int done)
{
    if (nx)
        reply_int(c, done);
    else
        reply_ok(c);
}

static void rename_generic(client *c, int nx)
{
    const resp_slice *src = &c->argv[1], *dst = &c->argv[2];
    store_key *k = db_lookup_write(c, src);
    if (!k) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (src->len == dst->len && memcmp(src->ptr, dst->ptr, src->len) == 0) {
        reply_renamed(c, nx, 0);
        return;
    }
    /* Looked up even without NX so an expired target is reclaimed (and
     * counted as expired) before being replaced, as in Redis. */
    if (db_lookup_write(c, dst) && nx) {
        reply_renamed(c, nx, 0);
        return;
    }
    store_rename(client_db(c), k, dst->ptr, dst->len);
    db_notify(c, STORE_EV_GENERIC, "rename_from", src);
    db_notify(c, STORE_EV_GENERIC, "rename_to", dst);
    reply_renamed(c, nx, 1);
}

void cmd_rename(client *c) { rename_generic(c, 0); }
void cmd_renamenx(client *c) { rename_generic(c, 1); }

/* ---- EXPIRE family ---- */

enum { EXP_NX = 1, EXP_XX = 2, EXP_GT = 4, EXP_LT = 8 };

static int expire_option(const resp_slice *a)
{
    static const struct { const char *name; int flag; } opts[] = {
        {"nx", EXP_NX}, {"xx", EXP_XX}, {"gt", EXP_GT}, {"lt", EXP_LT},
    };
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (arg_is(a, opts[i].name)) return opts[i].flag;
    return 0;
}

static void reply_unsupported(client *c, const resp_slice *opt)
{
    /* Redis prints the option as a C string; the message may be long, so
     * build it in a heap buffer only when the stack one is too small. */
    static const char prefix[] = "ERR Unsupported option ";
    char stackbuf[256];
    size_t olen = strnlen(opt->ptr, opt->len), n = sizeof(prefix) - 1 + olen;
    char *msg = n < sizeof(stackbuf) ? stackbuf : mem_alloc(n + 1);
    memcpy(msg, prefix, sizeof(prefix) - 1);
    memcpy(msg + sizeof(prefix) - 1, opt->ptr, olen);
    msg[n] = '\0';
    reply_error(c, msg);
    if (msg != stackbuf) free(msg);
}

static int parse_expire_flags(client *c, int *flags)
{
    *flags = 0;
    for (int i = 3; i < c->argc; i++) {
        int f = expire_option(&c->argv[i]);
        if (!f) {
            reply_unsupported(c, &c->argv[i]);
            return 0;
        }
        *flags |= f;
    }
    if ((*flags & EXP_NX) && (*flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return 0;
    }
    if ((*flags & EXP_GT) && (*flags & EXP_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return 0;
    }
    return 1;
}

static void reply_bad_expire(client *c)
{
    reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
}

/* argv[2] in the command's unit, made absolute ms; negative is allowed
 * (it deletes), only overflow is an error. */
static int parse_deadline(client *c, int seconds, long long base, long long *when)
{
    if (!arg_ll_or_reply(c, &c->argv[2], when)) return 0;
    if (seconds && (*when > LLONG_MAX / 1000 || *when < LLONG_MIN / 1000)) goto bad;
    if (seconds) *when *= 1000;
    if (*when > LLONG_MAX - base) goto bad;
    *when += base;
    return 1;
bad:
    reply_bad_expire(c);
    return 0;
}

/* NX/XX/GT/LT against the current deadline; no deadline counts as an
 * infinite TTL (so GT never passes, LT always does). */
static int expire_allowed(int flags, int64_t cur, long long when)
{
    int none = cur == STORE_NO_DEADLINE;
    if ((flags & EXP_NX) && !none) return 0;
    if ((flags & EXP_XX) && none) return 0;
    if ((flags & EXP_GT) && (none || when <= cur)) return 0;
    if ((flags & EXP_LT) && !none && when >= cur) return 0;
    return 1;
}

static void expire_generic(client *c, int seconds, int relative)
{
    store *db = client_db(c);
    /* one reading of the clock: a relative deadline is never already past */
    long long now = (long long)store_now(db), when, base = relative ? now : 0;
    int flags;
    if (!parse_expire_flags(c, &flags) || !parse_deadline(c, seconds, base, &when)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k || !expire_allowed(flags, store_key_deadline(k), when)) {
        reply_int(c, 0);
        return;
    }
    /* a deadline already past deletes the key, and says so */
    if (when <= now) {
        db_release_key(c, k, &c->argv[1], STORE_RELEASE_EXPIRED);
    } else {
        store_key_set_deadline(db, k, when);
        db_notify(c, STORE_EV_GENERIC, "expire", &c->argv[1]);
    }
    reply_int(c, 1);
}

void cmd_expire(client *c) { expire_generic(c, 1, 1); }
void cmd_pexpire(client *c) { expire_generic(c, 0, 1); }
void cmd_expireat(client *c) { expire_generic(c, 1, 0); }
void cmd_pexpireat(client *c) { expire_generic(c, 0, 0); }

/* ---- TTL family ---- */

static void ttl_generic(client *c, int ms, int absolute)
{
    store_key *k = db_lookup_read_flags(c, &c->argv[1], DB_NOTOUCH);
    if (!k) {
        reply_int(c, -2);
        return;
    }
    int64_t deadline = store_key_deadline(k);
    if (deadline == STORE_NO_DEADLINE) {
        reply_int(c, -1);
        return;
    }
    long long t = absolute ? deadline : deadline - (long long)store_now(client_db(c));
    if (t < 0) t = 0;
    /* seconds round to nearest, as Redis's (t+500)/1000, without its
     * overflow near LLONG_MAX */
    reply_int(c, ms ? t : t / 1000 + (t % 1000 >= 500));
}

void cmd_ttl(client *c) { ttl_generic(c, 0, 0); }
void cmd_pttl(client *c) { ttl_generic(c, 1, 0); }
void cmd_expiretime(client *c) { ttl_generic(c, 0, 1); }
void cmd_pexpiretime(client *c) { ttl_generic(c, 1, 1); }

void cmd_persist(client *c)
{
    store_key *k = db_lookup_write(c, &c->argv[1]);
    int had = k && store_key_deadline(k) != STORE_NO_DEADLINE;
    if (had) {
        store_key_set_deadline(client_db(c), k, STORE_NO_DEADLINE);
        db_notify(c, STORE_EV_GENERIC, "persist", &c->argv[1]);
    }
    reply_int(c, had);
}

/* ---- COPY and RANDOMKEY ---- */

void cmd_copy(client *c)
{
    const resp_slice *src = &c->argv[1], *dst = &c->argv[2];
    store *to = client_db(c);
    int replace = 0;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[i], "db") && i + 1 < c->argc) {
            if (!(to = db_index_or_reply(c, &c->argv[++i], NULL))) return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (to == client_db(c) && src->len == dst->len && memcmp(src->ptr, dst->ptr, src->len) == 0) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    store_key *k = db_lookup_read(c, src);
    if (!k) {
        reply_int(c, 0);
        return;
    }
    /* A write lookup, as Redis's: an expired destination is reclaimed
     * (and counted) first. Replacing it raises no "del", as in Redis. */
    store_key *old = store_lookup(to, dst->ptr, dst->len);
    if (old && !replace) {
        reply_int(c, 0);
        return;
    }
    if (old) store_release_key(to, old, STORE_RELEASE_REPLACED);
    store_copy(to, k, dst->ptr, dst->len);
    store_notify(to, STORE_EV_GENERIC, "copy_to", dst->ptr, dst->len);
    reply_int(c, 1);
}

/* The value changes database: copied, then deleted at the source (the
 * two databases keep their own memory accounting). */
void cmd_move(client *c)
{
    const resp_slice *key = &c->argv[1];
    store *from = client_db(c), *to = db_index_or_reply(c, &c->argv[2], NULL);
    if (!to) return;
    if (to == from) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    store_key *k = db_lookup_write(c, key);
    if (!k || store_lookup(to, key->ptr, key->len)) {
        reply_int(c, 0);
        return;
    }
    store_key_keep_access(store_copy(to, k, key->ptr, key->len), k);   /* Redis moves the object itself */
    store_delete_key(from, k);
    store_notify(from, STORE_EV_GENERIC, "move_from", key->ptr, key->len);
    store_notify(to, STORE_EV_GENERIC, "move_to", key->ptr, key->len);
    reply_int(c, 1);
}

void cmd_randomkey(client *c)
{
    store_key *k = store_random_key(client_db(c), server_random(c->srv));
    if (!k) {
        reply_null(c);
        return;
    }
    size_t len;
    const char *name = store_key_name(k, &len);
    reply_bulk(c, name, len);
}
