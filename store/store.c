/* store.c - the keyspace: one allocation per key (entry + name inline)
 * indexed by a store_dict; expiry is checked on every access. */
#include "store_internal.h"
#include "stream.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

store *store_create(store_clock_fn clock, void *clock_ctx)
{
    store *s = store_xcalloc(1, sizeof(*s));
    store_dict_init(&s->keys, STORE_DICT_KEY_OFF(store_key, node, name), STORE_DICT_KEY_INLINE);
    store_pool_init(&s->key_pool, 8, STORE_KEY_POOLED);
    s->clock = clock;
    s->clock_ctx = clock_ctx;
    s->zsl_rng = UINT64_C(0x9e3779b97f4a7c15);
    s->lfu_rng = UINT64_C(0x2545f4914f6cdd1d);
    wheel_init(&s->wheel, clock(clock_ctx));
    return s;
}

void store_destroy(store *s)
{
    if (!s) return;
    store_flush(s);
    free(s);
}

void store_set_env(store *s, const store_env *env) { s->env = env; }

void store_set_expired_hook(store *s, store_expired_fn fn, void *ctx)
{
    s->expired = fn;
    s->expired_ctx = ctx;
}

void store_set_release_hook(store *s, store_release_fn fn, void *ctx)
{
    s->release = fn;
    s->release_ctx = ctx;
}

void store_set_event_hook(store *s, store_event_fn fn, void *ctx)
{
    s->event = fn;
    s->event_ctx = ctx;
}

void store_notify(store *s, int cls, const char *event, const char *key,
                  size_t klen)
{
    if (s->event) s->event(cls, event, key, klen, s->event_ctx);
}

uint64_t store_now(store *s) { return s->clock(s->clock_ctx); }
size_t store_size(const store *s) { return store_dict_size(&s->keys); }
void store_reserve(store *s, size_t n) { store_dict_expand(&s->keys, n); }
void store_prefetch(const store *s, const char *key, size_t len) { store_dict_prefetch(&s->keys, key, len); }
int store_rehash(store *s, int buckets) { return store_dict_rehash(&s->keys, buckets); }
int store_rehashing(const store *s) { return store_dict_rehashing(&s->keys); }
void store_avoid_resize(store *s, int avoid) { store_dict_avoid_resize(&s->keys, avoid); }
size_t store_expires_count(const store *s) { return s->expires; }

/* Keys and values only, at malloc_usable_size: the keyspace's own bucket
 * array is bookkeeping that does not return to zero when keys are deleted
 * (tables shrink to 4 buckets, not to nothing). */
size_t store_used_memory(const store *s) { return s->used_memory; }

static store_key *key_of(store_dict_node *n)
{
    return STORE_CONTAINER(n, store_key, node);
}

void store_value_free(store *s, store_key *k)
{
    switch (k->type) {
    case STORE_STRING: store_string_free(s, k); break;
    case STORE_HASH: store_hash_free(s, k); break;
    case STORE_LIST: store_list_free(s, k); break;
    case STORE_ZSET: store_zset_free(s, k); break;
    case STORE_SET: store_set_key_free(s, k); break;
    case STORE_STREAM: store_stream_key_free(s, k); break;
    }
}

/* The area a value needs when it moves to a new entry (RENAME). */
static size_t value_used(const store_key *k)
{
    return k->enc == STORE_ENC_HASH_ONE ? hone_used(k) : sizeof(store_value);
}

static size_t entry_size(const store_key *k)
{
    return store_value_off(k->node.keylen) + k->area;
}

/* The entry alone (its value already released or moved). */
void store_entry_free(store *s, store_key *k)
{
    size_t size = entry_size(k);
    if (!store_pool_holds(&s->key_pool, size)) {
        store_mem_free(&s->used_memory, k);
        return;
    }
    s->used_memory -= store_pool_size(&s->key_pool, size);
    store_pool_put(&s->key_pool, k, size);
}

void store_key_free(store *s, store_key *k)
{
    store_value_free(s, k);
    store_entry_free(s, k);
}

static void free_node(store_dict_node *n, void *ctx)
{
    store_key_free(ctx, key_of(n));
}

void store_flush(store *s)
{
    store_dict_clear(&s->keys, free_node, s);
    store_pool_release(&s->key_pool);   /* every entry was just put back */
    /* Every armed node was just freed: forget them all at once. */
    wheel_init(&s->wheel, s->wheel.now);
    s->expires = 0;
}

/* The entry with its name and a value area of at least `area` bytes, not
 * yet in the dict, with no value. */
static store_key *key_alloc(store *s, const char *name, size_t len, uint64_t h, size_t area)
{
    if (area < sizeof(store_value)) area = sizeof(store_value);
    area += STORE_CLOCK_BYTES;
    size_t off = store_value_off(len), size = off + area;
    store_key *k;
    if (store_pool_holds(&s->key_pool, size)) {
        size_t got = store_pool_size(&s->key_pool, size);
        k = store_pool_get(&s->key_pool, size);
        if (!k) mem_oom(size);
        s->used_memory += got;
        area = got - off;   /* the class's slack is room too; callers ask for < 256 - 8 */
    } else {
        k = store_mem_alloc(&s->used_memory, size);
    }
    assert(area <= UINT8_MAX);   /* callers ask for at most a 129-byte one-field hash */
    k->area = (uint8_t)area;
    if (len) memcpy(k->name, name, len);
    k->name[len] = '\0';
    k->node.next = NULL;
    k->node.hash = h;
    k->node.keylen = store_dict_keylen(len);
    k->big = 0;
    wheel_node_init(&k->timer);
    store_clock_put((unsigned char *)k + off + area - STORE_CLOCK_BYTES, store_clock_new(s));
    return k;
}

store_key *store_lookup_hashed(store *s, const char *key, size_t len, uint64_t h)
{
    store_dict_node *n = store_dict_find_hashed(&s->keys, key, len, h);
    if (!n) return NULL;
    store_key *k = key_of(n);
    /* Only keys with a deadline pay for reading the clock. */
    if (wheel_node_armed(&k->timer) && store_key_is_expired(k, store_now(s))) {
        int hold = store_env_of(s)->hold_expired;
        if (hold == STORE_SEE_EXPIRED) return k;
        if (!hold) store_reclaim(s, k);
        return NULL;
    }
    return k;
}

store_key *store_lookup(store *s, const char *key, size_t len)
{
    if (store_dict_size(&s->keys) == 0) return NULL;
    return store_lookup_hashed(s, key, len, store_dict_hash(key, len));
}

size_t store_value_room(const store_key *k) { return k->area - STORE_CLOCK_BYTES; }

store_key *store_lookup_raw(store *s, const char *key, size_t len)
{
    if (store_dict_size(&s->keys) == 0) return NULL;
    store_dict_node *n = store_dict_find(&s->keys, key, len);
    return n ? key_of(n) : NULL;
}

store_presence store_peek(store *s, const char *key, size_t len)
{
    if (store_dict_size(&s->keys) == 0) return STORE_ABSENT;
    store_dict_node *n = store_dict_find(&s->keys, key, len);
    if (!n) return STORE_ABSENT;
    store_key *k = key_of(n);
    if (wheel_node_armed(&k->timer) && store_key_is_expired(k, store_now(s))) return STORE_PRESENT_EXPIRED;
    return STORE_PRESENT;
}

/* An empty value of type t in k's (unused or freed) value area. */
static void value_init(store *s, store_key *k, store_type t)
{
    k->type = (uint8_t)t;
    switch (t) {
    case STORE_STRING: store_string_init(k); break;
    case STORE_HASH: store_hash_init(k); break;
    case STORE_LIST: store_list_init(k); break;
    case STORE_ZSET: store_zset_init(k); break;
    case STORE_SET: store_set_key_init(k); break;
    case STORE_STREAM: store_stream_key_init(s, k); break;
    }
}

store_key *store_key_new(store *s, const char *key, size_t len, uint64_t h, store_type t,
                         size_t area)
{
    store_key *k = key_alloc(s, key, len, h, area);
    value_init(s, k, t);
    store_dict_insert_hashed(&s->keys, &k->node);
    store_notify(s, STORE_EV_NEW, "new", k->name, len);
    return k;
}

static store_key *create_key(store *s, const char *key, size_t len, store_type t, size_t area)
{
    uint64_t h = store_dict_hash(key, len);
    /* Callers have just looked the key up; checking again would be a second
     * probe on every create, so only debug (and sanitizer) builds verify. */
    assert(!store_lookup_hashed(s, key, len, h));
    return store_key_new(s, key, len, h, t, area);
}

store_key *store_create_key(store *s, const char *key, size_t len, store_type t)
{
    return create_key(s, key, len, t, 0);
}

/* Room for a first field inside the key, when it may live there. */
static size_t hash_area(const char *field, size_t flen, size_t vlen)
{
    return hone_fits_size(flen, vlen) ? hone_area(field, flen, vlen) : 0;
}

store_key *store_create_hash(store *s, const char *key, size_t len, const char *field,
                             size_t flen, size_t vlen)
{
    return create_key(s, key, len, STORE_HASH, hash_area(field, flen, vlen));
}

store_key *store_hash_key_new(store *s, const char *key, size_t len, uint64_t h,
                              const char *field, size_t flen, size_t vlen)
{
    assert(!store_lookup_hashed(s, key, len, h));
    return store_key_new(s, key, len, h, STORE_HASH, hash_area(field, flen, vlen));
}

void store_delete_key(store *s, store_key *k)
{
    store_key_unlink(s, k);
    store_key_free(s, k);
}

void store_release_key(store *s, store_key *k, store_release_why why)
{
    store_key_unlink(s, k);
    store_value_release(s, k, why);
    store_entry_free(s, k);
}

int store_delete(store *s, const char *key, size_t len)
{
    store_key *k = store_lookup(s, key, len);
    if (!k) return 0;
    store_delete_key(s, k);
    return 1;
}

static int same_name(const store_key *k, const char *name, size_t len)
{
    return k->node.keylen == len && (len == 0 || memcmp(k->name, name, len) == 0);
}

store_key *store_rename(store *s, store_key *k, const char *newname, size_t newlen)
{
    if (same_name(k, newname, newlen)) return k;   /* RENAME k k is a no-op */
    uint64_t h = store_dict_hash(newname, newlen);
    store_key *dst = store_lookup_hashed(s, newname, newlen, h);
    if (dst) store_release_key(s, dst, STORE_RELEASE_REPLACED);

    size_t used = value_used(k);
    store_key *nk = key_alloc(s, newname, newlen, h, used);
    /* The value moves as-is: its buffers change owner. */
    memcpy(STORE_KV(nk), STORE_KV(k), used);
    nk->type = k->type;
    nk->enc = k->enc;
    nk->slen = k->slen;
    nk->big = k->big;
    store_key_keep_access(nk, k);   /* Redis moves the object, access time and all */
    int64_t deadline = store_key_deadline(k);
    store_key_unlink(s, k);
    store_entry_free(s, k);
    store_dict_insert_hashed(&s->keys, &nk->node);
    if (deadline != STORE_NO_DEADLINE) store_key_set_deadline(s, nk, deadline);
    store_notify(s, STORE_EV_NEW, "new", nk->name, newlen);   /* the name is added, as Redis's dbAdd */
    return nk;
}

/* ---- lazy freeing ---- */

struct store_orphan {
    size_t freed;
    store_pool_spill spill;   /* pooled blocks freed, on their way home */
    store_key *k;             /* a bare entry holding the value, outside any pool */
};

size_t store_key_free_effort(const store_key *k)
{
    const store_value *v = STORE_KV(k);
    switch (k->enc) {
    case STORE_ENC_HASH_TABLE: return store_dict_size(v->ht);
    case STORE_ENC_LIST_CHUNKS: return store_list_chunks(k);
    case STORE_ENC_ZSET_SKIPLIST: return zsl_len(v->zs);
    case STORE_ENC_SET: {
        const store_set *set = store_set_of_const(k);
        return store_set_is_intset(set) ? 1 : store_set_len(set);
    }
    case STORE_ENC_STREAM: return store_stream_free_effort(store_stream_of_const(k));
    default: return 1;
    }
}

store_orphan *store_value_orphan(store *s, store_key *k)
{
    (void)s;
    size_t used = value_used(k), off = store_value_off(0);
    store_orphan *o = store_xcalloc(1, sizeof(*o));
    o->k = store_xcalloc(1, off + used + STORE_CLOCK_BYTES);
    o->k->type = k->type;
    o->k->enc = k->enc;
    o->k->slen = k->slen;
    o->k->big = k->big;
    o->k->area = (uint8_t)(used + STORE_CLOCK_BYTES);
    /* The value moves as-is: its buffers change owner (as store_rename). */
    memcpy(STORE_KV(o->k), STORE_KV(k), used);
    return o;
}

store_orphan *store_key_orphan(store *s, store_key *k)
{
    store_key_unlink(s, k);
    store_orphan *o = store_value_orphan(s, k);
    store_entry_free(s, k);
    return o;
}

size_t store_orphan_free(store *freer, store_orphan *o)
{
    size_t before = freer->used_memory;
    store_value_free(freer, o->k);
    free(o->k);
    o->k = NULL;
    o->freed = before - freer->used_memory;   /* modulo 2^N: freer was charged nothing */
    freer->used_memory = before;
    store_pool_take(&freer->key_pool, &o->spill);
    return o->freed;
}

void store_orphan_settle(store *s, store_orphan *o)
{
    s->used_memory -= o->freed;
    store_pool_give(&s->key_pool, &o->spill);
    free(o);
}

void store_orphan_drop(store_orphan *o)
{
    free(o->k);
    free(o);
}

void store_key_reset(store *s, store_key *k, store_type t)
{
    store_value_release(s, k, STORE_RELEASE_REPLACED);
    k->big = 0;   /* a new value starts a new encoding history */
    value_init(s, k, t);
}

store_key *store_copy(store *dst, const store_key *k, const char *name, size_t len)
{
    uint64_t h = store_dict_hash(name, len);
    assert(!store_lookup_hashed(dst, name, len, h));
    store_key *nk = store_key_new(dst, name, len, h, (store_type)k->type, value_used(k));
    switch (k->type) {
    case STORE_STRING: store_string_dup(dst, nk, k); break;
    case STORE_HASH: store_hash_dup(dst, nk, k); break;
    case STORE_LIST: store_list_dup(dst, nk, k); break;
    case STORE_ZSET: store_zset_dup(dst, nk, k); break;
    case STORE_SET: store_set_key_dup(dst, nk, k); break;
    case STORE_STREAM: store_stream_key_dup(dst, nk, k); break;
    }
    nk->big = k->big;   /* Redis duplicates the value in its encoding */
    int64_t deadline = store_key_deadline(k);
    if (deadline != STORE_NO_DEADLINE) store_key_set_deadline(dst, nk, deadline);
    return nk;
}

/* Redis's dbRandomKey: a key past its deadline that the draw lands on is
 * reclaimed (an "expired" event) and the draw is made again, so the loop
 * ends at a live key or an empty keyspace. */
store_key *store_random_key(store *s, uint64_t rnd)
{
    for (;;) {
        store_dict_node *n = store_dict_random(&s->keys, rnd);
        if (!n) return NULL;
        store_key *k = key_of(n);
        if (!wheel_node_armed(&k->timer) || !store_key_is_expired(k, store_now(s))) return k;
        store_reclaim(s, k);
        rnd = store_redraw(rnd);
    }
}

store_type store_key_type(const store_key *k) { return (store_type)k->type; }

const char *store_key_name(const store_key *k, size_t *len)
{
    if (len) *len = k->node.keylen;
    return k->name;
}

struct live_visit {
    uint64_t now;
    store_key_fn fn;
    void *ctx;
};

/* Past-deadline keys are skipped, not deleted: the dict is being walked. */
static void visit_live(store_dict_node *n, void *ctx)
{
    struct live_visit *v = ctx;
    store_key *k = key_of(n);
    if (!store_key_is_expired(k, v->now)) v->fn(k, v->ctx);
}

void store_foreach(store *s, store_key_fn fn, void *ctx)
{
    struct live_visit v = { store_now(s), fn, ctx };
    store_dict_foreach(&s->keys, visit_live, &v);
}

void store_walk(store *s, store_key_fn fn, void *ctx)
{
    struct live_visit v = { store_now(s), fn, ctx };
    store_dict_walk(&s->keys, visit_live, &v);
}

uint64_t store_scan(store *s, uint64_t cursor, store_key_fn fn, void *ctx)
{
    struct live_visit v = { store_now(s), fn, ctx };
    return store_dict_scan(&s->keys, cursor, visit_live, &v);
}
