/* hyperloglog.c - PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST: Redis
 * 7.0's HyperLogLog commands over string values (the codec is store/hll.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "hll.h"
#include "mem.h"

static const char corrupt_err[] = "INVALIDOBJ Corrupted HLL object detected";

static size_t sparse_max(const client *c) { return (size_t)c->srv->cfg.hll_sparse_max_bytes; }

/* isHLLObjectOrReply: 1 if k (a live key) holds a string readable as an
 * HLL, with its bytes; else 0 after the WRONGTYPE reply (for another type,
 * or for a string that is no HLL: Redis's own text). */
static int hll_check(client *c, const store_key *k, const uint8_t **p, size_t *len)
{
    if (!db_check_type(c, k, STORE_STRING)) return 0;
    *p = (const uint8_t *)store_string_get(k, len);
    if (hll_is_valid(*p, *len)) return 1;
    reply_error(c, "WRONGTYPE Key is not a valid HyperLogLog string value.");
    return 0;
}

/* Redis's signalModifiedKey without a keyspace event (PFCOUNT caching
 * its estimate): WATCHers and trackers of the key see a change. */
static void touch_watchers(client *c, const resp_slice *key)
{
    server_key_modified(c->srv, c->db, key->ptr, key->len, 0);
}

/* A key's HLL opened for writing. A dense one never changes size, so its
 * bytes are written in place; a sparse one is copied, as it may grow or
 * turn dense, and hll_close stores the copy back. */
typedef struct hll_open {
    store_key *k;
    hll_buf buf;
    int in_place;
} hll_open;

/* k must have passed hll_check. Like Redis's dbUnshareStringValue, this
 * makes the value "raw" whether or not anything is written. */
static void hll_open_key(client *c, store_key *k, hll_open *o)
{
    size_t len;
    uint8_t *p = (uint8_t *)store_string_mutable(client_db(c), k, &len);
    o->k = k;
    o->in_place = hll_encoding(p) == HLL_DENSE;
    if (o->in_place)
        o->buf = (hll_buf){p, len, len + 1};   /* the store's string ends in a 0 */
    else
        hll_buf_init_copy(&o->buf, p, len);
}

/* A new key (PFADD, PFMERGE onto a missing key) holding an empty HLL. */
static void hll_open_new(client *c, const resp_slice *key, hll_open *o)
{
    o->k = store_create_key(client_db(c), key->ptr, key->len, STORE_STRING);
    o->in_place = 0;
    hll_buf_init_empty(&o->buf);
}

/* Store what was written (changed: the copy differs from the value). */
static void hll_close(client *c, hll_open *o, int changed)
{
    if (o->in_place) return;
    if (changed) {
        store *db = client_db(c);
        size_t len;
        store_string_set(db, o->k, (const char *)o->buf.p, o->buf.len);
        store_string_mutable(db, o->k, &len);   /* still Redis's raw string */
    }
    hll_buf_free(&o->buf);
}

void cmd_pfadd(client *c)
{
    const resp_slice *key = &c->argv[1];
    store_key *k = db_lookup_write(c, key);
    const uint8_t *p;
    size_t len;
    hll_open o;
    int updated = 0;

    if (!k) {
        hll_open_new(c, key, &o);
        updated = 1;
    } else {
        if (!hll_check(c, k, &p, &len)) return;
        hll_open_key(c, k, &o);
    }
    for (int j = 2; j < c->argc; j++) {
        int rc = hll_add(&o.buf, c->argv[j].ptr, c->argv[j].len, sparse_max(c));
        if (rc == HLL_CORRUPT) {
            /* What was added before the bad opcode stays, as in Redis. */
            hll_close(c, &o, updated);
            reply_error(c, corrupt_err);
            return;
        }
        updated += rc;
    }
    if (updated) hll_cache_invalidate(o.buf.p);
    hll_close(c, &o, updated);
    if (updated) db_notify(c, STORE_EV_STRING, "pfadd", key);
    reply_int(c, updated ? 1 : 0);
}

/* PFCOUNT of several keys: the estimate of their union, nothing cached. */
static void pfcount_union(client *c)
{
    uint8_t *max = mem_calloc(1, HLL_REGISTERS);
    const uint8_t *p;
    size_t len;
    for (int j = 1; j < c->argc; j++) {
        store_key *k = db_lookup_read(c, &c->argv[j]);
        if (!k) continue;   /* a missing key is an empty HLL */
        if (!hll_check(c, k, &p, &len)) goto out;
        if (hll_merge(max, p, len) == HLL_CORRUPT) {
            reply_error(c, corrupt_err);
            goto out;
        }
    }
    reply_int(c, (long long)hll_count_registers(max));
out:
    free(max);
}

void cmd_pfcount(client *c)
{
    if (c->argc > 2) {
        pfcount_union(c);
        return;
    }
    store_key *k = db_lookup_read(c, &c->argv[1]);
    const uint8_t *p;
    size_t len;
    uint64_t card;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    if (!hll_check(c, k, &p, &len)) return;
    /* The estimate is cached in the value: a write, so the value is an
     * unshared raw string from here on, as in Redis. */
    uint8_t *w = (uint8_t *)store_string_mutable(client_db(c), k, &len);
    if (hll_cache_valid(w)) {
        card = hll_cache_get(w);
    } else {
        if (hll_count(w, len, &card) == HLL_CORRUPT) {
            reply_error(c, corrupt_err);
            return;
        }
        hll_cache_set(w, card);
        touch_watchers(c, &c->argv[1]);
    }
    reply_int(c, (long long)card);
}

void cmd_pfmerge(client *c)
{
    const resp_slice *dest = &c->argv[1];
    uint8_t *max = mem_calloc(1, HLL_REGISTERS);
    const uint8_t *p;
    size_t len;
    int use_dense = 0;
    hll_open o;

    /* The destination is a source too (j = 1), as in Redis. */
    for (int j = 1; j < c->argc; j++) {
        store_key *k = db_lookup_read(c, &c->argv[j]);
        if (!k) continue;
        if (!hll_check(c, k, &p, &len)) goto out;
        if (hll_encoding(p) == HLL_DENSE) use_dense = 1;
        if (hll_merge(max, p, len) == HLL_CORRUPT) {
            reply_error(c, corrupt_err);
            goto out;
        }
    }
    store_key *k = db_lookup_write(c, dest);
    if (k)
        hll_open_key(c, k, &o);   /* checked above as a source */
    else
        hll_open_new(c, dest, &o);
    /* Dense at once when any input is: no conversion halfway. */
    if (use_dense && hll_to_dense(&o.buf) == HLL_CORRUPT) {
        hll_close(c, &o, !k);
        reply_error(c, corrupt_err);
        goto out;
    }
    for (long i = 0; i < HLL_REGISTERS; i++)
        if (max[i]) hll_set(&o.buf, i, max[i], sparse_max(c));
    hll_cache_invalidate(o.buf.p);
    hll_close(c, &o, 1);
    /* Redis raises "pfadd" for a merge: a mass add, semantically. */
    db_notify(c, STORE_EV_STRING, "pfadd", dest);
    reply_ok(c);
out:
    free(max);
}

/* ---- PFDEBUG ---- */

static void reply_registers(client *c, const uint8_t *p)
{
    reply_array(c, HLL_REGISTERS);
    for (long i = 0; i < HLL_REGISTERS; i++) reply_int(c, hll_dense_get(p + HLL_HDR_SIZE, i));
}

/* "z:<n> Z:<n> v:<value>,<n>" for each opcode, unchecked, as Redis prints
 * them. */
static void reply_decoded(client *c, const uint8_t *p, size_t len)
{
    size_t cap = 64, n = 0;
    char *out = mem_alloc(cap);
    const uint8_t *end = p + len;
    for (p += HLL_HDR_SIZE; p < end;) {
        int kind, val;
        long run;
        p += hll_sparse_op(p, &kind, &run, &val);
        if (cap - n < 32) out = mem_realloc(out, cap *= 2);
        if (kind == HLL_OP_VAL)
            n += (size_t)snprintf(out + n, cap - n, "v:%d,%ld ", val, run);
        else
            n += (size_t)snprintf(out + n, cap - n, "%c:%ld ", kind == HLL_OP_ZERO ? 'z' : 'Z', run);
    }
    reply_bulk(c, out, n ? n - 1 : 0);   /* the trailing space trimmed */
    free(out);
}

/* Convert k's sparse HLL to dense for good: 1 if it was, 0 if it was
 * dense already, -1 after the corruption error. */
static int pfdebug_todense(client *c, hll_open *o)
{
    int rc = hll_to_dense(&o->buf);
    hll_close(c, o, rc == 1);
    if (rc == HLL_CORRUPT) reply_error(c, corrupt_err);
    return rc;
}

void cmd_pfdebug(client *c)
{
    const resp_slice *sub = &c->argv[1];
    store_key *k = db_lookup_write(c, &c->argv[2]);
    const uint8_t *p;
    size_t len;
    hll_open o;

    if (!k) {
        reply_error(c, "ERR The specified key does not exist");
        return;
    }
    if (!hll_check(c, k, &p, &len)) return;
    p = (const uint8_t *)store_string_mutable(client_db(c), k, &len);   /* raw, as in Redis */
    if (arg_is(sub, "getreg") || arg_is(sub, "todense")) {
        hll_open_key(c, k, &o);
        int rc = pfdebug_todense(c, &o);
        if (rc < 0) return;
        if (arg_is(sub, "todense")) {
            reply_int(c, rc);
            return;
        }
        reply_registers(c, (const uint8_t *)store_string_get(k, &len));
    } else if (arg_is(sub, "decode")) {
        if (hll_encoding(p) != HLL_SPARSE)
            reply_error(c, "ERR HLL encoding is not sparse");
        else
            reply_decoded(c, p, len);
    } else if (arg_is(sub, "encoding")) {
        reply_status(c, hll_encoding(p) == HLL_DENSE ? "dense" : "sparse");
    } else {
        /* Redis prints the name as a C string: up to a NUL. */
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)strnlen(sub->ptr, sub->len), sub->ptr);
    }
}

static uint64_t selftest_random(void *ctx) { return server_random(ctx); }

void cmd_pfselftest(client *c)
{
    char err[128];
    if (hll_selftest(selftest_random, c->srv, sparse_max(c), err, sizeof(err)))
        reply_errorf(c, "ERR %s", err);
    else
        reply_ok(c);
}
