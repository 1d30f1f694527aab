/* value_hash.c - hash values: packed and insertion-ordered while small,
 * converted once to a dict past Redis's listpack limits (128 / 64 bytes). */
#include "num.h"
#include "store_internal.h"

void store_hash_init(store_key *k)
{
    k->enc = STORE_ENC_HASH_SMALL;
    k->v.hs.buf = NULL;
    k->v.hs.count = 0;
    k->v.hs.bytes = 0;
}

void store_hash_free(store *s, store_key *k)
{
    if (k->enc == STORE_ENC_HASH_SMALL)
        hsmall_free(s, &k->v.hs);
    else
        htable_free(s, k->v.ht);
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
    hsmall_foreach(&k->v.hs, copy_field, args);
    hsmall_free(s, &k->v.hs);
    k->v.ht = d;
    k->enc = STORE_ENC_HASH_TABLE;
}

int store_hash_set(store *s, store_key *k, const char *field, size_t flen,
                   const char *val, size_t vlen)
{
    if (k->enc == STORE_ENC_HASH_SMALL &&
        (flen > STORE_HASH_SMALL_VALUE || vlen > STORE_HASH_SMALL_VALUE))
        convert_to_table(s, k);
    if (k->enc == STORE_ENC_HASH_TABLE) return htable_set(s, k->v.ht, field, flen, val, vlen);

    int added = hsmall_set(s, &k->v.hs, field, flen, val, vlen);
    if (k->v.hs.count > STORE_HASH_SMALL_ENTRIES) convert_to_table(s, k);
    return added;
}

const char *store_hash_get(const store_key *k, const char *field, size_t flen, size_t *vlen)
{
    if (k->enc == STORE_ENC_HASH_SMALL) return hsmall_get(&k->v.hs, field, flen, vlen);
    return htable_get(k->v.ht, field, flen, vlen);
}

int store_hash_del(store *s, store_key *k, const char *field, size_t flen)
{
    if (k->enc == STORE_ENC_HASH_SMALL) return hsmall_del(s, &k->v.hs, field, flen);
    return htable_del(s, k->v.ht, field, flen);
}

size_t store_hash_len(const store_key *k)
{
    if (k->enc == STORE_ENC_HASH_SMALL) return k->v.hs.count;
    return store_dict_size(k->v.ht);
}

void store_hash_foreach(const store_key *k, store_field_fn fn, void *ctx)
{
    if (k->enc == STORE_ENC_HASH_SMALL)
        hsmall_foreach(&k->v.hs, fn, ctx);
    else
        htable_foreach(k->v.ht, fn, ctx);
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
