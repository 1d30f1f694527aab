/* string.c - string commands: GET/SET and their variants (SET's option
 * grammar is Redis 7.0's), the INCR/DECR counters, MGET/MSET and STRLEN. */
#include <limits.h>
#include <string.h>

#include "commands.h"
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
    {"ex", SET_EX, SET_KEEPTTL | (SET_ANY_EXPIRE & ~SET_EX), 1},
    {"px", SET_PX, SET_KEEPTTL | (SET_ANY_EXPIRE & ~SET_PX), 1},
    {"exat", SET_EXAT, SET_KEEPTTL | (SET_ANY_EXPIRE & ~SET_EXAT), 1},
    {"pxat", SET_PXAT, SET_KEEPTTL | (SET_ANY_EXPIRE & ~SET_PXAT), 1},
};

static const struct set_opt *find_set_opt(const resp_slice *a)
{
    for (size_t i = 0; i < sizeof(set_opts) / sizeof(set_opts[0]); i++)
        if (arg_is(a, set_opts[i].name)) return &set_opts[i];
    return NULL;
}

static int parse_set_args(client *c, set_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int j = 3; j < c->argc; j++) {
        const struct set_opt *o = find_set_opt(&c->argv[j]);
        if (!o || (a->flags & o->conflicts) || (o->has_operand && j + 1 >= c->argc)) {
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
    if (parse_set_args(c, &a)) set_generic(c, &a, &c->argv[2]);
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

void cmd_strlen(client *c)
{
    store_key *k = db_lookup_read(c, &c->argv[1]);
    size_t len = 0;
    if (!db_check_type(c, k, STORE_STRING)) return;
    if (k) store_string_get(k, &len);
    reply_int(c, (long long)len);
}
