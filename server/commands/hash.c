/* hash.c - hash commands (HSET ... HSTRLEN, HRANDFIELD, HSCAN). A hash key never exists
 * empty: writers create it on demand and HDEL removes it with its last field. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "commands.h"
#include "num.h"

/* For readers: 1 with *k the hash (NULL if missing), 0 after WRONGTYPE. */
static int hash_for_read(client *c, store_key **k)
{
    *k = db_lookup_read(c, &c->argv[1]);
    return db_check_type(c, *k, STORE_HASH);
}

/* For writers that always store something: the hash, created when
 * missing; NULL after WRONGTYPE. One field and value (argv[2], argv[3])
 * get room inside the key, as a lock's hash has. */
static store_key *hash_for_write(client *c)
{
    const resp_slice *key = &c->argv[1];
    store_key *k = db_lookup_write(c, key);
    if (!db_check_type(c, k, STORE_HASH)) return NULL;
    if (k) return k;
    if (c->argc == 4)
        return store_create_hash(client_db(c), key->ptr, key->len, c->argv[2].ptr, c->argv[2].len,
                                 c->argv[3].len);
    return store_create_key(client_db(c), key->ptr, key->len, STORE_HASH);
}

static const char *field_get(const store_key *k, const resp_slice *f, size_t *vlen)
{
    *vlen = 0;
    return k ? store_hash_get(k, f->ptr, f->len, vlen) : NULL;
}

static int field_set(client *c, store_key *k, const resp_slice *f, const resp_slice *v)
{
    return store_hash_set(client_db(c), k, f->ptr, f->len, v->ptr, v->len);
}

static void reply_field(client *c, const store_key *k, const resp_slice *f)
{
    size_t vlen;
    const char *v = field_get(k, f, &vlen);
    if (v)
        reply_bulk(c, v, vlen);
    else
        reply_null(c);
}

/* HSET replies the number of new fields, the deprecated HMSET +OK. */
void cmd_hset(client *c)
{
    if (c->argc % 2) {
        reply_arity_error(c);
        return;
    }
    store_key *k = hash_for_write(c);
    long long created = 0;
    if (!k) return;
    for (int i = 2; i < c->argc; i += 2)
        created += field_set(c, k, &c->argv[i], &c->argv[i + 1]);
    db_notify(c, STORE_EV_HASH, "hset", &c->argv[1]);
    if (strcmp(c->cmd->name, "hmset") == 0)
        reply_ok(c);
    else
        reply_int(c, created);
}

void cmd_hsetnx(client *c)
{
    store_key *k = hash_for_write(c);
    size_t vlen;
    if (!k) return;
    if (field_get(k, &c->argv[2], &vlen)) {
        reply_int(c, 0);
        return;
    }
    field_set(c, k, &c->argv[2], &c->argv[3]);
    db_notify(c, STORE_EV_HASH, "hset", &c->argv[1]);
    reply_int(c, 1);
}

void cmd_hget(client *c)
{
    store_key *k;
    if (hash_for_read(c, &k)) reply_field(c, k, &c->argv[2]);
}

void cmd_hmget(client *c)
{
    store_key *k;
    if (!hash_for_read(c, &k)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_field(c, k, &c->argv[i]);
}

void cmd_hexists(client *c)
{
    store_key *k;
    size_t vlen;
    if (hash_for_read(c, &k)) reply_int(c, field_get(k, &c->argv[2], &vlen) != NULL);
}

void cmd_hstrlen(client *c)
{
    store_key *k;
    size_t vlen;
    if (!hash_for_read(c, &k)) return;
    field_get(k, &c->argv[2], &vlen);
    reply_int(c, (long long)vlen);
}

void cmd_hlen(client *c)
{
    store_key *k;
    if (hash_for_read(c, &k)) reply_int(c, k ? (long long)store_hash_len(k) : 0);
}

void cmd_hdel(client *c)
{
    store *db = client_db(c);
    store_key *k = db_lookup_write(c, &c->argv[1]);
    long long n = 0;
    if (!db_check_type(c, k, STORE_HASH)) return;
    for (int i = 2; k && i < c->argc; i++)
        n += store_hash_del(db, k, c->argv[i].ptr, c->argv[i].len);
    if (n) db_notify(c, STORE_EV_HASH, "hdel", &c->argv[1]);
    if (k && store_hash_len(k) == 0) {
        store_delete_key(db, k);
        db_notify(c, STORE_EV_GENERIC, "del", &c->argv[1]);
    }
    reply_int(c, n);
}

void cmd_hincrby(client *c)
{
    long long incr, v;
    if (!arg_ll_or_reply(c, &c->argv[3], &incr)) return;
    store_key *k = hash_for_write(c);
    if (!k) return;
    int rc = store_hash_incrby(client_db(c), k, c->argv[2].ptr, c->argv[2].len, incr, &v);
    if (rc == STORE_ERR_NOT_INT) {
        reply_error(c, "ERR hash value is not an integer");
    } else if (rc == STORE_ERR_OVERFLOW) {
        reply_error(c, "ERR increment or decrement would overflow");
    } else {
        db_notify(c, STORE_EV_HASH, "hincrby", &c->argv[1]);
        reply_int(c, v);
    }
}

/* Redis's checks in its order: the increment, then the key's type, then
 * the field's text; INCRBYFLOAT's number formatting. */
void cmd_hincrbyfloat(client *c)
{
    long double incr, v = 0;
    size_t vlen;
    char buf[STORE_LD_STR_MAX];
    if (!store_str2ld(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(c, "ERR value is not a valid float");
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    store_key *k = hash_for_write(c);
    if (!k) return;
    const char *cur = field_get(k, &c->argv[2], &vlen);
    if (cur && !store_str2ld(cur, vlen, &v)) {
        reply_error(c, "ERR hash value is not a float");
        return;
    }
    resp_slice out;
    if (!float_sum_or_reply(c, v, incr, buf, &out)) return;
    field_set(c, k, &c->argv[2], &out);
    db_notify(c, STORE_EV_HASH, "hincrbyfloat", &c->argv[1]);
    reply_bulk(c, out.ptr, out.len);
}

/* ---- whole-hash replies: the client is the foreach context ---- */

static void emit_pair(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    reply_bulk(ctx, f, flen);
    reply_bulk(ctx, v, vlen);
}

static void emit_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    reply_bulk(ctx, f, flen);
}

static void emit_value(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    reply_bulk(ctx, v, vlen);
}

/* HGETALL is a map (flat array in RESP2); HKEYS/HVALS are arrays. A
 * missing key is the empty reply of the same shape. */
static void hash_walk(client *c, store_field_fn emit, int as_map)
{
    store_key *k;
    if (!hash_for_read(c, &k)) return;
    long long n = k ? (long long)store_hash_len(k) : 0;
    if (as_map)
        reply_map(c, n);
    else
        reply_array(c, n);
    if (k) store_hash_foreach(k, emit, c);
}

void cmd_hgetall(client *c) { hash_walk(c, emit_pair, 1); }
void cmd_hkeys(client *c) { hash_walk(c, emit_field, 0); }
void cmd_hvals(client *c) { hash_walk(c, emit_value, 0); }

/* ---- HRANDFIELD and HSCAN: the fields gathered first ---- */

/* Fields and values copied out as consecutive items (field 2i, value
 * 2i + 1): a one-field hash hands them over from a buffer of its own. */
static void gather_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    zset_result_add(ctx, f, flen, 0);
    zset_result_add(ctx, v, vlen, 0);
}

/* A field, with its value as a RESP3 pair or flat in RESP2. */
static void reply_field_value(client *c, const char *f, size_t flen, const char *v, size_t vlen,
                              int withvalues)
{
    if (withvalues && c->proto >= 3) reply_array(c, 2);
    reply_bulk(c, f, flen);
    if (withvalues) reply_bulk(c, v, vlen);
}

static void reply_hfield(client *c, const zset_result *fs, size_t i, int withvalues)
{
    reply_field_value(c, fs->v[2 * i].ptr, fs->v[2 * i].len, fs->v[2 * i + 1].ptr,
                      fs->v[2 * i + 1].len, withvalues);
}

static size_t draw(client *c, size_t n) { return (size_t)(server_random(c->srv) % n); }

typedef struct rand_reply {
    client *c;
    int withvalues;
} rand_reply;

static void reply_drawn(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    rand_reply *rr = ctx;
    reply_field_value(rr->c, f, flen, v, vlen, rr->withvalues);
}

/* Redis's shapes: no count, one bulk (nil when missing); a negative count,
 * that many draws that may repeat; a positive one, that many distinct
 * fields (all of them, in order, when it covers the hash), each subset as
 * likely. */
void cmd_hrandfield(client *c)
{
    long long count = 1;
    int withvalues = 0;
    store_key *k;
    if (c->argc >= 3 && !zset_rand_count_or_reply(c, "withvalues", &count, &withvalues)) return;
    if (!hash_for_read(c, &k)) return;
    if (!k) {
        if (c->argc >= 3)
            reply_array(c, 0);
        else
            reply_null(c);
        return;
    }
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    if (c->argc < 3 || count < 0 || count == 1) {
        /* draws that may repeat: one field at a time, nothing gathered */
        unsigned long long n = count < 0 ? (unsigned long long)-count : 1;
        rand_reply rr = {c, c->argc < 3 ? 0 : withvalues};
        if (c->argc >= 3) reply_array(c, (long long)(withvalues && c->proto < 3 ? 2 * n : n));
        while (n-- && client_output_room(c)) store_hash_random(k, server_random(c->srv), reply_drawn, &rr);
        return;
    }
    /* distinct fields: gathered, then each subset as likely */
    zset_result fs = {0};
    store_hash_foreach(k, gather_field, &fs);
    zset_result_seal(&fs);
    size_t size = fs.n / 2, n = (unsigned long long)count < size ? (size_t)count : size;
    reply_array(c, (long long)(withvalues && c->proto < 3 ? 2 * n : n));
    for (size_t i = 0, need = n; need; i++) {
        if (n < size && draw(c, size - i) >= need) continue;   /* selection sampling */
        reply_hfield(c, &fs, i, withvalues);
        need--;
    }
    zset_result_free(&fs);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count]: a packed hash whole in
 * one call (cursor 0), a table a few buckets at a time; a flat reply. */
void cmd_hscan(client *c)
{
    uint64_t cursor;
    scan_opts o;
    store_key *k = keys_scan_key_or_reply(c, STORE_HASH, &cursor, &o);
    if (!k) return;
    zset_result fs = {0};
    long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
    do {
        cursor = store_hash_scan(k, cursor, gather_field, &fs);
    } while (cursor && maxiter-- && fs.n < (unsigned long long)o.count);
    zset_result_seal(&fs);
    size_t kept = 0;
    for (size_t i = 0; i < fs.n; i += 2) {
        if (!keys_scan_match(o.pat, fs.v[i].ptr, fs.v[i].len)) continue;
        fs.v[kept++] = fs.v[i];
        fs.v[kept++] = fs.v[i + 1];
    }
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)cursor);
    reply_array(c, (long long)kept);
    for (size_t i = 0; i < kept; i++) reply_bulk(c, fs.v[i].ptr, fs.v[i].len);
    zset_result_free(&fs);
}
