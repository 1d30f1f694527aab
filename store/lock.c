/* lock.c - the lock scripts' semantics as direct keyspace operations.
 * Each function validates first and mutates second (see lock.h). */
#include "lock.h"

#include <limits.h>
#include <string.h>

#include "num.h"
#include "store_internal.h"

/* Far beyond any real lease, far below a deadline overflow. */
#define LOCK_MAX_TTL_MS (INT64_C(1) << 52)

int store_lock_parse_ttl(const char *s, size_t len, long long *ms)
{
    return store_str2ll(s, len, ms) && *ms > 0 && *ms <= LOCK_MAX_TTL_MS;
}

int64_t store_lock_lease_deadline(const store *s) { return s->lock_deadline; }

/* PEXPIRE key ms, for a live key and a validated positive ms. */
static void lock_pexpire(store *s, store_key *k, const char *key, size_t klen,
                         long long ms)
{
    s->lock_deadline = (int64_t)store_now(s) + ms;
    store_key_set_deadline(s, k, s->lock_deadline);
    store_notify(s, STORE_EV_GENERIC, "expire", key, klen);
}

/* The hash under key (whose name hashes to h), or NULL when missing;
 * *wrong set for other types (HEXISTS/HINCRBY would fail with WRONGTYPE). */
static store_key *lock_hash_hashed(store *s, const char *key, size_t klen, uint64_t h,
                                   int *wrong)
{
    store_key *k = store_lookup_hashed(s, key, klen, h);
    if (k) store_key_touch(s, k);   /* the script's HEXISTS looks it up */
    *wrong = k && store_key_type(k) != STORE_HASH;
    return *wrong ? NULL : k;
}

static store_key *lock_hash(store *s, const char *key, size_t klen, int *wrong)
{
    return lock_hash_hashed(s, key, klen, store_dict_hash(key, klen), wrong);
}

/* The owner's hold count: 1 with *count set, 0 if owner holds nothing,
 * STORE_LOCK_FALLBACK if the field is not an integer HINCRBY accepts. */
static int lock_holds(const store_key *k, const char *owner, size_t olen,
                      long long *count)
{
    size_t vlen;
    const char *v = store_hash_get(k, owner, olen, &vlen);
    if (!v) return 0;
    return store_str2ll(v, vlen, count) ? 1 : STORE_LOCK_FALLBACK;
}

static void lock_count(store *s, store_key *k, const char *key, size_t klen,
                       const char *owner, size_t olen, long long delta,
                       const char *event, long long *out)
{
    store_hash_incrby(s, k, owner, olen, delta, out);   /* validated: cannot fail */
    store_notify(s, STORE_EV_HASH, event, key, klen);
}

/* May owner take the lock at key? 1: yes (*kp the hash, NULL if none,
 * holding *count of owner's holds); 0: another owner holds it (*pttl);
 * or FALLBACK. Changes nothing. */
static int lock_probe(store *s, const char *key, size_t klen, uint64_t h, const char *owner,
                      size_t olen, store_key **kp, long long *pttl)
{
    int wrong;
    long long count = 0;
    store_key *k = lock_hash_hashed(s, key, klen, h, &wrong);
    *kp = k;
    if (wrong) return STORE_LOCK_FALLBACK;
    if (!k) return 1;
    int held = lock_holds(k, owner, olen, &count);
    if (held == 0) {
        int64_t d = store_key_deadline(k);
        *pttl = d == STORE_NO_DEADLINE ? -1 : d - (int64_t)store_now(s);
        if (*pttl < 0 && d != STORE_NO_DEADLINE) *pttl = 0;
        return 0;
    }
    /* HINCRBY's errors: not an integer, or at the top already */
    if (held == STORE_LOCK_FALLBACK || count == INT64_MAX) return STORE_LOCK_FALLBACK;
    return 1;
}

/* One more hold for owner (the first one creates the hash), then the lease. */
static void lock_take(store *s, store_key *k, const char *key, size_t klen, uint64_t h,
                      const char *owner, size_t olen, long long lease_ms,
                      const char *create_event)
{
    long long count;
    if (k) {
        lock_count(s, k, key, klen, owner, olen, 1, "hincrby", &count);
    } else {
        k = store_hash_key_new(s, key, klen, h, owner, olen, 1);   /* the count "1" */
        lock_count(s, k, key, klen, owner, olen, 1, create_event, &count);
    }
    lock_pexpire(s, k, key, klen, lease_ms);
}

int store_lock_acquire(store *s, const char *key, size_t klen,
                       const char *owner, size_t olen, long long lease_ms,
                       const char *create_event, long long *pttl)
{
    store_key *k;
    uint64_t h = store_dict_hash(key, klen);   /* once for probe and create */
    int r = lock_probe(s, key, klen, h, owner, olen, &k, pttl);
    if (r == 1) lock_take(s, k, key, klen, h, owner, olen, lease_ms, create_event);
    return r;
}

int store_lock_release(store *s, const char *key, size_t klen,
                       const char *owner, size_t olen, long long lease_ms)
{
    int wrong;
    long long count;
    store_key *k = lock_hash(s, key, klen, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    int held = k ? lock_holds(k, owner, olen, &count) : 0;
    if (held != 1) return held == 0 ? -1 : held;
    if (count == INT64_MIN) return STORE_LOCK_FALLBACK;   /* HINCRBY overflow error */
    lock_count(s, k, key, klen, owner, olen, -1, "hincrby", &count);
    if (count > 0) {
        lock_pexpire(s, k, key, klen, lease_ms);
        return 0;
    }
    store_delete_key(s, k);
    store_notify(s, STORE_EV_GENERIC, "del", key, klen);
    return 1;
}

int store_lock_holds(store *s, const char *key, size_t klen,
                     const char *owner, size_t olen, long long *count)
{
    int wrong;
    store_key *k = lock_hash(s, key, klen, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    *count = 0;
    return k ? lock_holds(k, owner, olen, count) : 0;
}

int store_lock_renew(store *s, const char *key, size_t klen,
                     const char *owner, size_t olen, long long lease_ms)
{
    int wrong;
    store_key *k = lock_hash(s, key, klen, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    if (!k || !store_hash_get(k, owner, olen, NULL)) return 0;
    lock_pexpire(s, k, key, klen, lease_ms);
    return 1;
}

int store_lock_delete(store *s, const char *key, size_t klen)
{
    if (!store_delete(s, key, klen)) return 0;
    store_notify(s, STORE_EV_GENERIC, "del", key, klen);
    return 1;
}

int store_lock_exists(store *s, const char *key, size_t klen)
{
    return store_lookup(s, key, klen) != NULL;
}

/* GET key: the string, NULL when missing; *wrong for other types. */
static const char *lock_string(store *s, const char *key, size_t klen,
                               size_t *vlen, store_key **kp, int *wrong)
{
    store_key *k = store_lookup(s, key, klen);
    if (k) store_key_touch(s, k);   /* the script's GET looks it up */
    *wrong = k && store_key_type(k) != STORE_STRING;
    if (kp) *kp = k;
    return k && !*wrong ? store_string_get(k, vlen) : NULL;
}

int store_lock_latch_get(store *s, const char *key, size_t klen, long long *result)
{
    int wrong;
    size_t vlen;
    const char *v = lock_string(s, key, klen, &vlen, NULL, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    if (!v) return 0;
    /* Lua's tonumber() accepts much more ("0x1", " 1 ", "1e0"); only plain
     * integers are decided here. */
    return store_str2ll(v, vlen, result) ? 1 : STORE_LOCK_FALLBACK;
}

void store_lock_latch_set(store *s, const char *key, size_t klen,
                          long long result, long long ttl_ms)
{
    char buf[24];
    store_key *k = store_put_string(s, key, klen, buf, store_ll2str(buf, result));
    store_key_set_deadline(s, k, (int64_t)store_now(s) + ttl_ms);
    store_notify(s, STORE_EV_STRING, "set", key, klen);
    store_notify(s, STORE_EV_GENERIC, "expire", key, klen);
}

static int token_equal(const char *v, size_t vlen, const char *token, size_t tlen)
{
    return v && vlen == tlen && memcmp(v, token, tlen) == 0;
}

int store_lock_token_matches(store *s, const char *key, size_t klen,
                             const char *token, size_t tlen)
{
    int wrong;
    size_t vlen;
    const char *v = lock_string(s, key, klen, &vlen, NULL, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    return token_equal(v, vlen, token, tlen);
}

int store_lock_token_delete(store *s, const char *key, size_t klen,
                            const char *token, size_t tlen)
{
    int m = store_lock_token_matches(s, key, klen, token, tlen);
    return m == 1 ? store_lock_delete(s, key, klen) : m;
}

int store_lock_token_pexpire(store *s, const char *key, size_t klen,
                             const char *token, size_t tlen, long long lease_ms)
{
    int wrong;
    size_t vlen;
    store_key *k;
    const char *v = lock_string(s, key, klen, &vlen, &k, &wrong);
    if (wrong) return STORE_LOCK_FALLBACK;
    if (!token_equal(v, vlen, token, tlen)) return 0;
    lock_pexpire(s, k, key, klen, lease_ms);
    return 1;
}

int store_lock_fenced_acquire(store *s, const char *key, size_t klen, const char *tkey,
                              size_t tklen, const char *owner, size_t olen, long long lease_ms,
                              long long *pttl, long long *token)
{
    int wrong;
    size_t vlen;
    store_key *k, *tk;
    long long cur = 0;
    /* one key for both: INCR would turn the lock into a string */
    if (klen == tklen && memcmp(key, tkey, klen) == 0) return STORE_LOCK_FALLBACK;
    uint64_t h = store_dict_hash(key, klen);
    int r = lock_probe(s, key, klen, h, owner, olen, &k, pttl);
    if (r != 1) return r;   /* a held lock leaves the counter untouched */
    const char *v = lock_string(s, tkey, tklen, &vlen, &tk, &wrong);
    if (wrong || (v && (!store_str2ll(v, vlen, &cur) || cur == LLONG_MAX)))
        return STORE_LOCK_FALLBACK;   /* INCR's errors */
    if (!tk) tk = store_create_key(s, tkey, tklen, STORE_STRING);
    char buf[24];
    store_string_set(s, tk, buf, store_ll2str(buf, cur + 1));
    store_notify(s, STORE_EV_STRING, "incrby", tkey, tklen);
    lock_take(s, k, key, klen, h, owner, olen, lease_ms, "hincrby");
    *token = cur + 1;
    return 1;
}
