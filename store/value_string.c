/* value_string.c - string values: up to 15 bytes live inside the key entry,
 * longer ones in one NUL-terminated buffer; INCRBY on decimal text, and
 * writes in place (APPEND, SETRANGE, the bitmaps). */
#include "num.h"
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* A string's slen: the inline length in the low bits, its store_str_form
 * in the top two (a heap string's length is in the value, so its low
 * bits are 0). */
#define STR_LEN_MASK 0x3f
#define STR_FORM_SHIFT 6
_Static_assert(STORE_STR_INLINE_MAX <= STR_LEN_MASK, "inline length overlaps the form bits");

static size_t inline_len(const store_key *k) { return k->slen & STR_LEN_MASK; }

void store_string_init(store_key *k)
{
    k->enc = STORE_ENC_STR_INLINE;
    k->slen = 0;   /* empty, STORE_STR_AS_SET */
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
        if (len) *len = inline_len(k);
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

    k->big = 0;   /* a new value, no history */
    if (reuse_heap(k, vlen)) {
        memmove(STORE_KV(k)->str.ptr, val, vlen);
        STORE_KV(k)->str.ptr[vlen] = '\0';
        STORE_KV(k)->str.len = vlen;
        k->slen = 0;   /* STORE_STR_AS_SET: a new value */
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
    store_value_release(s, k, STORE_RELEASE_REPLACED);
    *STORE_KV(k) = nv;
    k->type = STORE_STRING;
    k->enc = enc;
    k->slen = enc == STORE_ENC_STR_INLINE ? (uint8_t)vlen : 0;   /* STORE_STR_AS_SET */
}

char *store_string_mutable(store *s, store_key *k, size_t *len)
{
    size_t cur;
    store_string_get(k, &cur);
    return store_string_writable(s, k, cur, len);
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

/* Redis's dupStringObject keeps the encoding: the form goes with it. */
void store_string_dup(store *s, store_key *dst, const store_key *src)
{
    size_t len;
    const char *v = store_string_get(src, &len);
    store_string_set(s, dst, v, len);
    store_string_set_form(dst, store_string_form(src));
}

store_str_form store_string_form(const store_key *k)
{
    return (store_str_form)(k->slen >> STR_FORM_SHIFT);
}

void store_string_set_form(store_key *k, store_str_form f)
{
    k->slen = (uint8_t)((k->slen & STR_LEN_MASK) | (unsigned)f << STR_FORM_SHIFT);
}

/* Room for n bytes and a NUL, as sds's greedy growth gives it (double up
 * to 1 MiB, then 1 MiB more), so appending costs amortized O(1). */
static size_t greedy_room(size_t n)
{
    size_t mib = (size_t)1 << 20;
    return (n < mib ? n * 2 : n + mib) + 1;
}

char *store_string_writable(store *s, store_key *k, size_t len, size_t *outlen)
{
    size_t cur;
    char *p = (char *)store_string_get(k, &cur);
    if (len > STORE_MAX_LEN) abort();
    if (len > cur) {
        if (k->enc == STORE_ENC_STR_INLINE && len <= STORE_STR_INLINE_MAX) {
            memset(p + cur, 0, len - cur + 1);
            k->slen = (uint8_t)((k->slen & ~STR_LEN_MASK) | len);
        } else if (k->enc == STORE_ENC_STR_INLINE) {
            /* made from nothing (SETRANGE, SETBIT on a new key): its exact
             * size, as Redis creates it */
            char *buf = store_mem_alloc(&s->used_memory, cur ? greedy_room(len) : len + 1);
            memcpy(buf, p, cur);
            memset(buf + cur, 0, len - cur + 1);
            STORE_KV(k)->str.ptr = buf;
            STORE_KV(k)->str.len = len;
            k->enc = STORE_ENC_STR_HEAP;
            k->slen &= ~STR_LEN_MASK;
            p = buf;
        } else {
            if (len + 1 > store_mem_size(p)) p = store_mem_realloc(&s->used_memory, p, greedy_room(len));
            memset(p + cur, 0, len - cur + 1);
            STORE_KV(k)->str.ptr = p;
            STORE_KV(k)->str.len = len;
        }
        cur = len;
    }
    store_string_set_form(k, STORE_STR_RAW);
    if (outlen) *outlen = cur;
    return p;
}
