/* string.c - string commands: GET/SET and their variants (SET's and
 * GETEX's option grammar is Redis 7.0's), the INCR/DECR/INCRBYFLOAT
 * counters, MGET/MSET/MSETNX, ranges (GETRANGE, SETRANGE, APPEND) and LCS. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "num.h"

static void reply_string(client *c, const store_key *k)
{
    size_t len;
    const char *v = store_string_get(k, &len);
    reply_bulk(c, v, len);
}

/* GET's core, shared with GETDEL and SET ... GET. Returns 0 after a
 * WRONGTYPE reply; *kp is the key found (NULL if none). */
static int get_generic(client *c, store_key **kp)
{
    store_key *k = db_lookup_read(c, &c->argv[1]);
    *kp = k;
    if (!db_check_type(c, k, STORE_STRING)) return 0;
    if (k)
        reply_string(c, k);
    else
        reply_null(c);
    return 1;
}

/* Redis's setKey: k is the caller's lookup of key (NULL if missing; a
 * lookup never returns an expired key, so a kept TTL is never stale).
 * Any value is replaced; the TTL goes unless kept. */
static store_key *set_key(client *c, const resp_slice *key, store_key *k, const resp_slice *val, int keepttl)
{
    store *db = client_db(c);
    if (!k) k = store_create_key(db, key->ptr, key->len, STORE_STRING);
    store_string_set(db, k, val->ptr, val->len);
    if (!keepttl) store_key_set_deadline(db, k, STORE_NO_DEADLINE);
    return k;
}

void cmd_get(client *c)
{
    store_key *k;
    get_generic(c, &k);
}

void cmd_getdel(client *c)
{
    store_key *k;
    if (!get_generic(c, &k) || !k) return;
    store_delete_key(client_db(c), k);
    db_notify(c, STORE_EV_GENERIC, "del", &c->argv[1]);
}

/* ---- SET and friends ---- */

enum {
    SET_NX = 1 << 0,
    SET_XX = 1 << 1,
    SET_GET = 1 << 2,
    SET_KEEPTTL = 1 << 3,
    SET_EX = 1 << 4,
    SET_PX = 1 << 5,
    SET_EXAT = 1 << 6,
    SET_PXAT = 1 << 7,
    SET_PERSIST = 1 << 8,   /* GETEX only */
};
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT)

typedef struct set_args {
    int flags;
    const resp_slice *expire;   /* the EX/PX/EXAT/PXAT operand, or NULL */
    int counted;                /* SETNX: reply 1/0 rather than OK/null */
} set_args;

/* Each option with the ones it can't follow. Repeating an option is fine
 * (the last expire wins), exactly as Redis 7.0 parses it. */
static const struct set_opt {
    const char *name;
    int flag, conflicts, has_operand;
} set_opts[] = {
    {"nx", SET_NX, SET_XX, 0},
    {"xx", SET_XX, SET_NX, 0},
    {"get", SET_GET, 0, 0},
    {"keepttl", SET_KEEPTTL, SET_ANY_EXPIRE, 0},
    {"ex", SET_EX, SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~SET_EX), 1},
    {"px", SET_PX, SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~SET_PX), 1},
    {"exat", SET_EXAT, SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~SET_EXAT), 1},
    {"pxat", SET_PXAT, SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~SET_PXAT), 1},
    {"persist", SET_PERSIST, SET_KEEPTTL | SET_ANY_EXPIRE, 0},
};
/* The options each command takes (Redis's COMMAND_SET / COMMAND_GET). */
#define SET_TAKES (SET_NX | SET_XX | SET_GET | SET_KEEPTTL | SET_ANY_EXPIRE)
#define GETEX_TAKES (SET_ANY_EXPIRE | SET_PERSIST)

static const struct set_opt *find_set_opt(const resp_slice *a)
{
    for (size_t i = 0; i < sizeof(set_opts) / sizeof(set_opts[0]); i++)
        if (arg_is(a, set_opts[i].name)) return &set_opts[i];
    return NULL;
}

/* Options from argv[first] on, of those in `takes`. */
static int parse_set_args(client *c, set_args *a, int first, int takes)
{
    memset(a, 0, sizeof(*a));
    for (int j = first; j < c->argc; j++) {
        const struct set_opt *o = find_set_opt(&c->argv[j]);
        if (!o || !(o->flag & takes) || (a->flags & o->conflicts) || (o->has_operand && j + 1 >= c->argc)) {
            reply_syntax_error(c);
            return 0;
        }
        a->flags |= o->flag;
        if (o->has_operand) a->expire = &c->argv[++j];
    }
    return 1;
}

/* The expire operand as an absolute ms deadline. It must be positive;
 * unit conversion or adding "now" must not overflow. */
static int set_deadline(client *c, const set_args *a, long long *out)
{
    long long v;
    int seconds = a->flags & (SET_EX | SET_EXAT);
    if (!arg_ll_or_reply(c, a->expire, &v)) return 0;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) goto bad;
    if (seconds) v *= 1000;
    if (a->flags & (SET_EX | SET_PX)) {
        long long now = (long long)store_now(client_db(c));
        if (v > LLONG_MAX - now) goto bad;
        v += now;
    }
    *out = v;
    return 1;
bad:
    reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd->name);
    return 0;
}

static void reply_set_outcome(client *c, const set_args *a, int done)
{
    if (a->flags & SET_GET) return;   /* the old value was the reply */
    if (a->counted)
        reply_int(c, done);
    else if (done)
        reply_ok(c);
    else
        reply_null(c);
}

static void set_generic(client *c, const set_args *a, const resp_slice *val)
{
    const resp_slice *key = &c->argv[1];
    long long deadline = 0;
    store_key *k;
    if (a->expire && !set_deadline(c, a, &deadline)) return;
    if (!(a->flags & SET_GET))
        k = db_lookup_write(c, key);
    else if (!get_generic(c, &k))   /* replies the old value, or WRONGTYPE */
        return;
    if (((a->flags & SET_NX) && k) || ((a->flags & SET_XX) && !k)) {
        reply_set_outcome(c, a, 0);
        return;
    }
    k = set_key(c, key, k, val, a->expire || (a->flags & SET_KEEPTTL));
    db_notify(c, STORE_EV_STRING, "set", key);
    if (a->expire) {
        store_key_set_deadline(client_db(c), k, deadline);
        db_notify(c, STORE_EV_GENERIC, "expire", key);
    }
    reply_set_outcome(c, a, 1);
}

void cmd_set(client *c)
{
    set_args a;
    if (parse_set_args(c, &a, 3, SET_TAKES)) set_generic(c, &a, &c->argv[2]);
}

void cmd_setnx(client *c)
{
    set_args a = {.flags = SET_NX, .counted = 1};
    set_generic(c, &a, &c->argv[2]);
}

void cmd_setex(client *c)
{
    set_args a = {.flags = SET_EX, .expire = &c->argv[2]};
    set_generic(c, &a, &c->argv[3]);
}

void cmd_psetex(client *c)
{
    set_args a = {.flags = SET_PX, .expire = &c->argv[2]};
    set_generic(c, &a, &c->argv[3]);
}

/* ---- counters ---- */

static void incr_generic(client *c, long long delta)
{
    const resp_slice *key = &c->argv[1];
    store_key *k = db_lookup_write(c, key);
    long long v;
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (!k) {
        /* a missing key counts as 0: store the result directly */
        char buf[24];
        resp_slice s = {buf, store_ll2str(buf, delta)};
        set_key(c, key, NULL, &s, 0);
        v = delta;
    } else {
        int rc = store_string_incrby(client_db(c), k, delta, &v);
        if (rc == STORE_ERR_NOT_INT) {
            reply_not_integer(c);
            return;
        }
        if (rc == STORE_ERR_OVERFLOW) {
            reply_error(c, "ERR increment or decrement would overflow");
            return;
        }
    }
    db_notify(c, STORE_EV_STRING, "incrby", key);   /* INCR, DECR and DECRBY too */
    reply_int(c, v);
}

/* INCRBY/DECRBY: the operand is checked before the key, as in Redis. */
static void incr_by_arg(client *c, int negate)
{
    long long v;
    if (!arg_ll_or_reply(c, &c->argv[2], &v)) return;
    if (negate && v == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, negate ? -v : v);
}

void cmd_incr(client *c) { incr_generic(c, 1); }
void cmd_decr(client *c) { incr_generic(c, -1); }
void cmd_incrby(client *c) { incr_by_arg(c, 0); }
void cmd_decrby(client *c) { incr_by_arg(c, 1); }

/* ---- multi-key and length ---- */

void cmd_mget(client *c)
{
    reply_array(c, c->argc - 1);
    for (int i = 1; i < c->argc; i++) {
        store_key *k = db_lookup_read(c, &c->argv[i]);
        if (k && store_key_type(k) == STORE_STRING)
            reply_string(c, k);
        else
            reply_null(c);
    }
}

void cmd_mset(client *c)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        set_key(c, &c->argv[i], db_lookup_write(c, &c->argv[i]), &c->argv[i + 1], 0);
        db_notify(c, STORE_EV_STRING, "set", &c->argv[i]);
    }
    reply_ok(c);
}

void cmd_msetnx(client *c)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2)
        if (db_lookup_write(c, &c->argv[i])) {
            reply_int(c, 0);
            return;
        }
    for (int i = 1; i < c->argc; i += 2) {
        set_key(c, &c->argv[i], db_lookup_write(c, &c->argv[i]), &c->argv[i + 1], 0);
        db_notify(c, STORE_EV_STRING, "set", &c->argv[i]);
    }
    reply_int(c, 1);
}

void cmd_strlen(client *c)
{
    store_key *k = db_lookup_read(c, &c->argv[1]);
    size_t len = 0;
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (k) store_string_get(k, &len);
    reply_int(c, (long long)len);
}

/* ---- GETSET, GETEX ---- */

void cmd_getset(client *c)
{
    store_key *k;
    if (!get_generic(c, &k)) return;
    set_key(c, &c->argv[1], k, &c->argv[2], 0);
    db_notify(c, STORE_EV_STRING, "set", &c->argv[1]);
}

/* Redis checks the key before the expire operand, and replies the value
 * before an absolute deadline already past deletes it. */
void cmd_getex(client *c)
{
    set_args a;
    long long deadline = 0;
    store *db = client_db(c);
    if (!parse_set_args(c, &a, 2, GETEX_TAKES)) return;
    store_key *k = db_lookup_read(c, &c->argv[1]);
    if (!k) {
        reply_null(c);
        return;
    }
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (a.expire && !set_deadline(c, &a, &deadline)) return;
    reply_string(c, k);
    if ((a.flags & (SET_EXAT | SET_PXAT)) && deadline <= (long long)store_now(db)) {
        db_release_key(c, k, &c->argv[1], STORE_RELEASE_EXPIRED);
    } else if (a.expire) {
        store_key_set_deadline(db, k, deadline);
        db_notify(c, STORE_EV_GENERIC, "expire", &c->argv[1]);
    } else if ((a.flags & SET_PERSIST) && store_key_deadline(k) != STORE_NO_DEADLINE) {
        store_key_set_deadline(db, k, STORE_NO_DEADLINE);
        db_notify(c, STORE_EV_GENERIC, "persist", &c->argv[1]);
    }
}

/* ---- INCRBYFLOAT ---- */

int float_sum_or_reply(client *c, long double v, long double incr, char *buf, resp_slice *out)
{
    v += incr;
    if (isnan(v) || isinf(v)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return 0;
    }
    out->ptr = buf;
    out->len = store_ld2str(buf, v);
    return 1;
}

void cmd_incrbyfloat(client *c)
{
    const resp_slice *key = &c->argv[1];
    store_key *k = db_lookup_write(c, key);
    long double v = 0, incr;
    size_t len;
    const char *cur;
    char buf[STORE_LD_STR_MAX];
    if (!db_check_type(c, k, STORE_STRING)) return;
    if ((k && (cur = store_string_get(k, &len), !store_str2ld(cur, len, &v))) ||
        !store_str2ld(c->argv[2].ptr, c->argv[2].len, &incr)) {
        reply_error(c, "ERR value is not a valid float");
        return;
    }
    resp_slice out;
    if (!float_sum_or_reply(c, v, incr, buf, &out)) return;
    k = set_key(c, key, k, &out, 1);   /* Redis's dbOverwrite: the TTL stays */
    store_string_set_form(k, STORE_STR_NOINT);
    db_notify(c, STORE_EV_STRING, "incrbyfloat", key);
    reply_bulk(c, out.ptr, out.len);
}

/* ---- ranges ---- */

/* Redis's checkStringLength: a string may not grow past proto-max-bulk-len
 * (nor past what the store holds). */
int string_length_ok(client *c, long long size, long long more)
{
    if (more > config_max_bulk(&c->srv->cfg) - size) {
        reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return 0;
    }
    return 1;
}

void cmd_append(client *c)
{
    const resp_slice *key = &c->argv[1], *val = &c->argv[2];
    store_key *k = db_lookup_write(c, key);
    size_t cur, total = val->len;
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (!k) {
        set_key(c, key, NULL, val, 0);
    } else {
        store_string_get(k, &cur);
        if (!string_length_ok(c, (long long)cur, (long long)val->len)) return;
        char *p = store_string_writable(client_db(c), k, cur + val->len, &total);
        if (val->len) memcpy(p + cur, val->ptr, val->len);
    }
    db_notify(c, STORE_EV_STRING, "append", key);
    reply_int(c, (long long)total);
}

void cmd_setrange(client *c)
{
    const resp_slice *key = &c->argv[1], *val = &c->argv[3];
    long long off;
    size_t len = 0;
    if (!arg_ll_or_reply(c, &c->argv[2], &off)) return;
    if (off < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    store_key *k = db_lookup_write(c, key);
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (k) store_string_get(k, &len);
    if (val->len == 0) {   /* nothing set: nothing made, the length as it is */
        reply_int(c, (long long)len);
        return;
    }
    if (!string_length_ok(c, off, (long long)val->len)) return;
    if (!k) k = store_create_key(client_db(c), key->ptr, key->len, STORE_STRING);
    char *p = store_string_writable(client_db(c), k, (size_t)off + val->len, &len);
    memcpy(p + off, val->ptr, val->len);
    db_notify(c, STORE_EV_STRING, "setrange", key);
    reply_int(c, (long long)len);
}

/* GETRANGE and SUBSTR: Redis's index arithmetic, ends clamped. */
void cmd_getrange(client *c)
{
    long long start, end;
    store_key *k;
    size_t len;
    if (!arg_ll_or_reply(c, &c->argv[2], &start) || !arg_ll_or_reply(c, &c->argv[3], &end)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_STRING, &k)) return;
    const char *p = k ? store_string_get(k, &len) : "";
    if (!k) len = 0;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    long long n = (long long)len;
    if (start < 0) start += n;
    if (end < 0) end += n;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= n) end = n - 1;
    if (start > end || n == 0)
        reply_bulk(c, "", 0);
    else
        reply_bulk(c, p + start, (size_t)(end - start + 1));
}

/* ---- LCS ---- */

typedef struct lcs_job {
    const char *a, *b;
    uint32_t alen, blen;
    const uint32_t *t;   /* (alen+1) x (blen+1) lengths of the prefixes' LCS */
    long long minlen;
    int withlen;
} lcs_job;

#define LCS_AT(j, i, k) ((j)->t[(size_t)(k) + (size_t)(i) * ((j)->blen + 1)])

/* Walks the table back from the end as Redis does, writing the LCS into
 * out (when not NULL) and replying each match range of at least minlen
 * (when c is not NULL); returns the number of such ranges. */
static long long lcs_walk(const lcs_job *j, char *out, client *c)
{
    uint32_t i = j->alen, k = j->blen, idx = LCS_AT(j, j->alen, j->blen);
    uint32_t as = j->alen, ae = 0, bs = 0, be = 0;   /* as == alen: no range open */
    long long ranges = 0;
    while (i > 0 && k > 0) {
        int emit = 0;
        if (j->a[i - 1] == j->b[k - 1]) {
            if (out) out[idx - 1] = j->a[i - 1];
            if (as == j->alen) {
                as = ae = i - 1;
                bs = be = k - 1;
            } else if (as == i && bs == k) {
                as--;
                bs--;
            } else {
                emit = 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            idx--, i--, k--;
        } else {
            if (LCS_AT(j, i - 1, k) > LCS_AT(j, i, k - 1))
                i--;
            else
                k--;
            if (as != j->alen) emit = 1;
        }
        if (!emit) continue;
        uint32_t mlen = ae - as + 1;
        if (j->minlen == 0 || mlen >= j->minlen) {
            ranges++;
            if (c) {
                reply_array(c, 2 + j->withlen);
                reply_array(c, 2);
                reply_int(c, as);
                reply_int(c, ae);
                reply_array(c, 2);
                reply_int(c, bs);
                reply_int(c, be);
                if (j->withlen) reply_int(c, mlen);
            }
        }
        as = j->alen;
    }
    return ranges;
}

static void lcs_reply(client *c, const lcs_job *j, int getlen, int getidx)
{
    uint32_t len = LCS_AT(j, j->alen, j->blen);
    if (getidx) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "matches");
        reply_array(c, lcs_walk(j, NULL, NULL));
        lcs_walk(j, NULL, c);
        reply_bulk_cstr(c, "len");
        reply_int(c, len);
    } else if (getlen) {
        reply_int(c, len);
    } else {
        char *out = mem_alloc(len ? len : 1);
        lcs_walk(j, out, NULL);
        reply_bulk(c, out, len);
        free(out);
    }
}

void cmd_lcs(client *c)
{
    store_key *ka = db_lookup_read(c, &c->argv[1]);
    store_key *kb = db_lookup_read(c, &c->argv[2]);
    lcs_job j = {.a = "", .b = ""};
    int getlen = 0, getidx = 0;
    size_t alen = 0, blen = 0;
    if ((ka && store_key_type(ka) != STORE_STRING) || (kb && store_key_type(kb) != STORE_STRING)) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    if (ka) j.a = store_string_get(ka, &alen);
    if (kb) j.b = store_string_get(kb, &blen);
    for (int i = 3; i < c->argc; i++) {
        const resp_slice *o = &c->argv[i];
        if (arg_is(o, "idx")) {
            getidx = 1;
        } else if (arg_is(o, "len")) {
            getlen = 1;
        } else if (arg_is(o, "withmatchlen")) {
            j.withlen = 1;
        } else if (arg_is(o, "minmatchlen") && i + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[++i], &j.minlen)) return;
            if (j.minlen < 0) j.minlen = 0;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (getlen && getidx) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    j.alen = (uint32_t)alen;
    j.blen = (uint32_t)blen;
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    unsigned long long bytes = cells * sizeof(uint32_t);
    uint32_t *t = NULL;
    if (bytes < SIZE_MAX && bytes / cells == sizeof(uint32_t)) {
        if (bytes > (unsigned long long)c->srv->cfg.proto_max_bulk_len) {
            reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
            return;
        }
        t = malloc(bytes);   /* transient and maybe huge: a failure is an error reply, as in Redis */
    }
    if (!t) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    for (uint32_t x = 0; x <= j.alen; x++)
        for (uint32_t y = 0; y <= j.blen; y++) {
            uint32_t *cell = &t[(size_t)y + (size_t)x * (j.blen + 1)];
            if (x == 0 || y == 0)
                *cell = 0;
            else if (j.a[x - 1] == j.b[y - 1])
                *cell = t[(size_t)(y - 1) + (size_t)(x - 1) * (j.blen + 1)] + 1;
            else {
                uint32_t l1 = t[(size_t)y + (size_t)(x - 1) * (j.blen + 1)];
                uint32_t l2 = cell[-1];
                *cell = l1 > l2 ? l1 : l2;
            }
        }
    j.t = t;
    lcs_reply(c, &j, getlen, getidx);
    free(t);
}
