/* value_string.c - string values: up to 15 bytes live inside the key entry,
 * longer ones in one NUL-terminated buffer; INCRBY on decimal text. */
#include "num.h"
#include "store_internal.h"

#include <string.h>

void store_string_init(store_key *k)
{
    k->enc = STORE_ENC_STR_INLINE;
    k->slen = 0;
    STORE_KV(k)->inl[0] = '\0';
}

void store_string_free(store *s, store_key *k)
{
    if (k->enc == STORE_ENC_STR_HEAP) store_mem_free(&s->used_memory, STORE_KV(k)->str.ptr);
}

const char *store_string_get(const store_key *k, size_t *len)
{
    if (k->type != STORE_STRING) {
        if (len) *len = 0;
        return NULL;
    }
    if (k->enc == STORE_ENC_STR_INLINE) {
        if (len) *len = k->slen;
        return STORE_KV(k)->inl;
    }
    if (len) *len = STORE_KV(k)->str.len;
    return STORE_KV(k)->str.ptr;
}

/* A heap string keeps its buffer when the new text fits and would not
 * leave most of it idle; memmove copes with val pointing into it. */
static int reuse_heap(const store_key *k, size_t vlen)
{
    if (k->type != STORE_STRING || k->enc != STORE_ENC_STR_HEAP) return 0;
    size_t cap = store_mem_size(STORE_KV(k)->str.ptr);
    return vlen + 1 <= cap && (vlen + 1) * 2 >= cap;
}

/* Any value (string or hash) becomes the string val. The new value is
 * built before the old one is freed, so val may point into the old one. */
void store_string_set(store *s, store_key *k, const char *val, size_t vlen)
{
    store_value nv;
    uint8_t enc = STORE_ENC_STR_INLINE;

    k->big = 0;   /* a new value: SET's encoding, not a writer's "raw" */
    if (reuse_heap(k, vlen)) {
        memmove(STORE_KV(k)->str.ptr, val, vlen);
        STORE_KV(k)->str.ptr[vlen] = '\0';
        STORE_KV(k)->str.len = vlen;
        return;
    }
    if (vlen <= STORE_STR_INLINE_MAX) {
        if (vlen) memcpy(nv.inl, val, vlen);
        nv.inl[vlen] = '\0';
    } else {
        enc = STORE_ENC_STR_HEAP;
        nv.str.ptr = store_mem_alloc(&s->used_memory, vlen + 1);
        memcpy(nv.str.ptr, val, vlen);
        nv.str.ptr[vlen] = '\0';
        nv.str.len = vlen;
    }
    store_value_free(s, k);
    *STORE_KV(k) = nv;
    k->type = STORE_STRING;
    k->enc = enc;
    k->slen = enc == STORE_ENC_STR_INLINE ? (uint8_t)vlen : 0;
}

char *store_string_mutable(store *s, store_key *k, size_t *len)
{
    (void)s;
    k->big = 1;
    return (char *)store_string_get(k, len);
}

store_key *store_put_string(store *s, const char *key, size_t len,
                            const char *val, size_t vlen)
{
    uint64_t h = store_dict_hash(key, len);   /* once for find + insert */
    store_key *k = store_lookup_hashed(s, key, len, h);
    if (!k) k = store_key_new(s, key, len, h, STORE_STRING, 0);
    store_string_set(s, k, val, vlen);
    return k;
}

int store_string_incrby(store *s, store_key *k, long long delta, long long *out)
{
    size_t len;
    const char *cur = store_string_get(k, &len);
    long long v;
    char buf[24];

    if (!cur || !store_str2ll(cur, len, &v)) return STORE_ERR_NOT_INT;
    if (store_add_overflows(v, delta)) return STORE_ERR_OVERFLOW;
    v += delta;
    store_string_set(s, k, buf, store_ll2str(buf, v));
    if (out) *out = v;
    return STORE_OK;
}

void store_string_dup(store *s, store_key *dst, const store_key *src)
{
    size_t len;
    const char *v = store_string_get(src, &len);
    store_string_set(s, dst, v, len);
}
