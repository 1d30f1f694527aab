/* value_hash.c - hash values: one small field inside the key entry, else
 * packed and insertion-ordered while Redis would keep a listpack, converted
 * once to a dict past hash-max-listpack-entries / -value, as Redis does. */
#include "num.h"
#include "store_internal.h"

#include <string.h>

void store_hash_init(store_key *k)
{
    k->enc = STORE_ENC_HASH_SMALL;
    STORE_KV(k)->hs.buf = NULL;
    STORE_KV(k)->hs.count = 0;
    STORE_KV(k)->hs.bytes = 0;
}

void store_hash_free(store *s, store_key *k)
{
    if (k->enc == STORE_ENC_HASH_SMALL)
        hsmall_free(s, &STORE_KV(k)->hs);
    else if (k->enc == STORE_ENC_HASH_TABLE)
        htable_free(s, STORE_KV(k)->ht);
}

/* The inline field moves out to a packed buffer (for a second field, or a
 * value that outgrew the key's room). */
static void one_to_small(store *s, store_key *k)
{
    const char *f, *v;
    size_t flen, vlen;
    hone_buf buf;
    char copy[2 * STORE_HASH_SMALL_VALUE];   /* the area becomes the buffer's handle */
    hone_read(k, buf, &f, &flen, &v, &vlen);
    memcpy(copy, f, flen);
    memcpy(copy + flen, v, vlen);
    store_hash_init(k);
    hsmall_set(s, &STORE_KV(k)->hs, copy, flen, copy + flen, vlen);
}

struct one_field {
    const char *f, *v;
    size_t flen, vlen;
};

static void note_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    struct one_field *o = ctx;
    *o = (struct one_field){ f, v, flen, vlen };
}

/* A packed hash down to one field moves back inside the key if it fits. */
static void small_to_one(store *s, store_key *k)
{
    store_hsmall h = STORE_KV(k)->hs;
    struct one_field o;
    hsmall_foreach(&h, note_field, &o);
    if (!hone_fits(k, o.f, o.flen, o.vlen)) return;
    hone_put(k, o.f, o.flen, o.v, o.vlen);
    hsmall_free(s, &h);
}

static void copy_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    void **args = ctx;
    htable_set(args[0], args[1], f, flen, v, vlen);
}

/* One-way, as in Redis: a hash that once grew big stays a dict. */
static void convert_to_table(store *s, store_key *k)
{
    store_dict *d = htable_new(s);
    void *args[2] = { s, d };
    hsmall_foreach(&STORE_KV(k)->hs, copy_field, args);
    hsmall_free(s, &STORE_KV(k)->hs);
    STORE_KV(k)->ht = d;
    k->enc = STORE_ENC_HASH_TABLE;
}

/* The packed form is kept while Redis would keep its listpack (the key's
 * big bit, set by note_set), so fields come back in insertion order as
 * Redis's do; store_hash_set converts once it would not. */
static int hash_set(store *s, store_key *k, const char *field, size_t flen,
                    const char *val, size_t vlen)
{
    if (k->enc == STORE_ENC_HASH_ONE) {
        int same = hone_is(k, field, flen);
        if (same && hone_fits(k, field, flen, vlen)) {
            hone_put(k, field, flen, val, vlen);
            return 0;
        }
        one_to_small(s, k);
    } else if (k->enc == STORE_ENC_HASH_SMALL && STORE_KV(k)->hs.count == 0 &&
               hone_fits(k, field, flen, vlen)) {
        hone_put(k, field, flen, val, vlen);
        return 1;
    }
    if (k->enc == STORE_ENC_HASH_TABLE) return htable_set(s, STORE_KV(k)->ht, field, flen, val, vlen);

    int added = hsmall_set(s, &STORE_KV(k)->hs, field, flen, val, vlen);
    if (STORE_KV(k)->hs.count == 1) small_to_one(s, k);   /* a value that shrank */
    return added;
}

/* hashTypeSet's checks under the configured thresholds: a field or value
 * too long, or one field too many, and Redis has a hashtable from now on. */
static void note_set(store *s, store_key *k, size_t flen, size_t vlen)
{
    if (k->big) return;
    const store_env *env = store_env_of(s);
    if ((long long)flen > env->hash_max_listpack_value || (long long)vlen > env->hash_max_listpack_value ||
        (long long)store_hash_len(k) > env->hash_max_listpack_entries)
        k->big = 1;
}

int store_hash_set(store *s, store_key *k, const char *field, size_t flen,
                   const char *val, size_t vlen)
{
    int added = hash_set(s, k, field, flen, val, vlen);
    note_set(s, k, flen, vlen);
    if (k->big && k->enc == STORE_ENC_HASH_SMALL) convert_to_table(s, k);
    return added;
}

const char *store_hash_get(const store_key *k, const char *field, size_t flen, size_t *vlen)
{
    if (k->enc == STORE_ENC_HASH_ONE) {
        size_t vl;
        if (!hone_is(k, field, flen)) return NULL;
        const char *v = hone_value(k, &vl);
        if (vlen) *vlen = vl;
        return v;
    }
    if (k->enc == STORE_ENC_HASH_SMALL) return hsmall_get(&STORE_KV(k)->hs, field, flen, vlen);
    return htable_get(STORE_KV(k)->ht, field, flen, vlen);
}

int store_hash_del(store *s, store_key *k, const char *field, size_t flen)
{
    if (k->enc == STORE_ENC_HASH_ONE) {
        if (!hone_is(k, field, flen)) return 0;
        store_hash_init(k);   /* empty: the caller deletes the key */
        return 1;
    }
    if (k->enc == STORE_ENC_HASH_TABLE) return htable_del(s, STORE_KV(k)->ht, field, flen);
    int removed = hsmall_del(s, &STORE_KV(k)->hs, field, flen);
    if (removed && STORE_KV(k)->hs.count == 1) small_to_one(s, k);
    return removed;
}

size_t store_hash_len(const store_key *k)
{
    if (k->enc == STORE_ENC_HASH_ONE) return 1;
    if (k->enc == STORE_ENC_HASH_SMALL) return STORE_KV(k)->hs.count;
    return store_dict_size(STORE_KV(k)->ht);
}

void store_hash_foreach(const store_key *k, store_field_fn fn, void *ctx)
{
    if (k->enc == STORE_ENC_HASH_ONE) {
        const char *f, *v;
        size_t flen, vlen;
        hone_buf buf;
        hone_read(k, buf, &f, &flen, &v, &vlen);
        fn(f, flen, v, vlen, ctx);
        return;
    }
    if (k->enc == STORE_ENC_HASH_SMALL)
        hsmall_foreach(&STORE_KV(k)->hs, fn, ctx);
    else
        htable_foreach(STORE_KV(k)->ht, fn, ctx);
}

struct nth_field {
    size_t left;
    store_field_fn fn;
    void *ctx;
};

static void visit_nth(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    struct nth_field *nf = ctx;
    if (nf->left-- == 0) nf->fn(f, flen, v, vlen, nf->ctx);
}

void store_hash_random(store_key *k, uint64_t rnd, store_field_fn fn, void *ctx)
{
    if (k->enc == STORE_ENC_HASH_TABLE) {
        htable_random(STORE_KV(k)->ht, rnd, fn, ctx);
        return;
    }
    struct nth_field nf = { (size_t)(rnd % store_hash_len(k)), fn, ctx };
    store_hash_foreach(k, visit_nth, &nf);
}

uint64_t store_hash_scan(store_key *k, uint64_t cursor, store_field_fn fn, void *ctx)
{
    if (k->enc != STORE_ENC_HASH_TABLE) {
        store_hash_foreach(k, fn, ctx);
        return 0;
    }
    return htable_scan(STORE_KV(k)->ht, cursor, fn, ctx);
}

int store_hash_incrby(store *s, store_key *k, const char *field, size_t flen,
                      long long delta, long long *out)
{
    size_t vlen;
    const char *cur = store_hash_get(k, field, flen, &vlen);
    long long v = 0;   /* a missing field counts as 0 */
    char buf[24];

    if (cur && !store_str2ll(cur, vlen, &v)) return STORE_ERR_NOT_INT;
    if (store_add_overflows(v, delta)) return STORE_ERR_OVERFLOW;
    v += delta;
    store_hash_set(s, k, field, flen, buf, store_ll2str(buf, v));
    if (out) *out = v;
    return STORE_OK;
}

static void put_one(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    hone_put(ctx, f, flen, v, vlen);
}

/* Each representation is copied as it is: a hash that grew into a dict
 * stays one in the copy, as Redis's hashTypeDup keeps the encoding. */
void store_hash_dup(store *s, store_key *dst, const store_key *src)
{
    if (src->enc == STORE_ENC_HASH_ONE) {
        store_hash_foreach(src, put_one, dst);
    } else if (src->enc == STORE_ENC_HASH_SMALL) {
        const store_hsmall *h = &STORE_KV(src)->hs;
        store_hsmall *d = &STORE_KV(dst)->hs;
        *d = *h;
        if (h->bytes) {
            d->buf = store_mem_alloc(&s->used_memory, h->bytes);
            memcpy(d->buf, h->buf, h->bytes);
        }
    } else {
        store_dict *d = htable_new(s);
        void *args[2] = { s, d };
        htable_foreach(STORE_KV(src)->ht, copy_field, args);
        STORE_KV(dst)->ht = d;
        dst->enc = STORE_ENC_HASH_TABLE;
    }
}
