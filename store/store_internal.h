/* store_internal.h - private to the store/ sources: key entry layout, the
 * store struct, allocation accounting and the per-type value hooks. */
#ifndef LATCHD_STORE_INTERNAL_H
#define LATCHD_STORE_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "dict.h"
#include "list.h"
#include "mem.h"
#include "pool.h"
#include "set.h"
#include "store.h"
#include "wheel.h"
#include "zset.h"

#define STORE_CONTAINER(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Where the packed hash representation ends (after Redis's listpack
 * limits; the encoding OBJECT reports follows the configured ones: the
 * key's big bit). */
#define STORE_HASH_SMALL_VALUE 64
/* Strings up to this many bytes live inside the key entry (plus a NUL). */
#define STORE_STR_INLINE_MAX 15
/* A list is packed chunks of at most this many entries / bytes (a chunk
 * holding one bigger element is fine); a one-chunk list lives in the key. */
#define STORE_LIST_CHUNK_ENTRIES 128
#define STORE_LIST_CHUNK_BYTES 8192
/* The same for sorted sets. */
#define STORE_ZSET_SMALL_ENTRIES 128
#define STORE_ZSET_SMALL_VALUE 64
/* Key entries up to this many bytes come from the store's pool. */
#define STORE_KEY_POOLED 512

enum store_enc {
    STORE_ENC_STR_INLINE = 1,   /* bytes in v.inl, length in key->slen's
                                   low bits (value_string.c) */
    STORE_ENC_STR_HEAP = 2,     /* v.str.ptr holds len + 1 bytes (NUL) */
    STORE_ENC_HASH_SMALL = 3,   /* v.hs: packed [u32 flen][u32 vlen][f][v]... */
    STORE_ENC_HASH_TABLE = 4,   /* v.ht: store_dict of hash_table nodes */
    STORE_ENC_LIST_SMALL = 5,   /* v.pk: one packed chunk of entries */
    STORE_ENC_LIST_CHUNKS = 6,  /* v.ql: an array of packed chunks */
    STORE_ENC_ZSET_SMALL = 7,   /* v.pk: member, score entry pairs in order */
    STORE_ENC_ZSET_SKIPLIST = 8,/* v.zs: skiplist + member dict */
    STORE_ENC_HASH_ONE = 9,     /* one field inside the value area:
                                   [u8 flen][field][value], vlen in slen */
    STORE_ENC_STREAM = 11,      /* v.st: a store_stream (stream.h) */
    STORE_ENC_SET = 10,         /* a store_set (set.h) in the value area:
                                   it knows its own representation */
};

/* Small hash: entries [u32 flen][u32 vlen][field][value] back to back, in
 * insertion order, exactly `bytes` long (like a listpack, realloc'd to fit). */
typedef struct store_hsmall {
    char *buf;
    uint32_t count;
    uint32_t bytes;
} store_hsmall;

/* A packed run of entries, each [varint length][bytes], back to back and
 * exactly `bytes` long (realloc'd to fit, like a listpack). */
typedef struct store_packed {
    char *buf;
    uint32_t count;
    uint32_t bytes;
} store_packed;

typedef struct store_list store_list;   /* value_list.c */
typedef struct store_zset store_zset;   /* zset_skiplist.c */
typedef struct store_stream store_stream; /* stream.h */

typedef union store_value {
    struct { char *ptr; size_t len; } str;
    char inl[STORE_STR_INLINE_MAX + 1];
    store_hsmall hs;
    store_dict *ht;
    store_packed pk;
    store_list *ql;
    store_zset *zs;
    store_stream *st;
} store_value;

/* One allocation per key: header, the name bytes (NUL-terminated), then
 * the value area, 8-aligned: a store_value, or for a one-field hash the
 * field and value themselves, so a lock is a single allocation. The area
 * is at least a store_value, so any type can replace any other in place,
 * and its size is fixed when the key is made: keys never move. Entries up
 * to STORE_KEY_POOLED bytes come from the store's pool (8-byte classes, no
 * malloc header). The header is 43 bytes, so a name of up to 20 bytes and
 * its NUL end at 64: a held lock (a 20-byte name and a packed Redisson
 * field, hash_one.c) is 88 bytes. */
struct store_key {
    store_dict_node node;       /* its key is name (store_create's dict) */
    wheel_node timer;           /* armed iff the key has a deadline, which is
                                   timer.deadline (the wheel keeps it exact) */
    uint8_t type : 3;           /* store_type */
    uint8_t big : 1;            /* Redis would have converted this hash or
                                   zset to hashtable / skiplist by now: one
                                   way, as there (access.c); a string's
                                   form is in slen */
    uint8_t enc : 4;            /* store_enc */
    uint8_t slen;               /* a string's inline length and (top two
                                   bits) store_str_form; a one-field hash's
                                   value length */
    uint8_t area;               /* bytes in the value area */
    char name[];
};

#define STORE_KEY_HDR offsetof(struct store_key, name)

/* The last bytes of every value area hold the key's access clock, Redis's
 * 24-bit robj.lru (access.c); values never use them. A held lock's area
 * has that room in its pool class already (88 bytes, see above). */
#define STORE_CLOCK_BYTES 3

/* The 88-byte lock above, on a 64-bit target: a 43-byte header puts a
 * 20-byte name's value area at 64, leaving 24 bytes for the packed field
 * (hash_one.c: 19 for "<uuid>:<thread id under 128>" = "1", 21 up to
 * 2^21) and the access clock (3); every area is at least a store_value, so
 * that must fit them too. */
_Static_assert(sizeof(void *) != 8 || STORE_KEY_HDR == 43, "store_key header is not 43 bytes: a lock no longer fits 88");
_Static_assert(sizeof(void *) != 8 || ((STORE_KEY_HDR + 20 + 1 + 7) & ~(size_t)7) == 64,
               "a 20-byte name's value area no longer starts at 64");
_Static_assert(sizeof(void *) != 8 || sizeof(store_value) <= 24, "store_value grew: a lock no longer fits 88 bytes");

/* Offset of the value area in a key entry whose name is len bytes. */
/* Another draw after a drawn key was reclaimed: an LCG step (Knuth's
 * MMIX constants), so the caller's one random word is enough. */
static inline uint64_t store_redraw(uint64_t rnd)
{
    return rnd * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
}

static inline size_t store_value_off(size_t len)
{
    return (STORE_KEY_HDR + len + 1 + 7) & ~(size_t)7;
}

/* The key's value (any const-ness: the area belongs to the key). */
#define STORE_KV(k) ((store_value *)(void *)((char *)(k) + store_value_off((k)->node.keylen)))

struct store {
    store_dict keys;
    store_clock_fn clock;
    void *clock_ctx;
    store_expired_fn expired;
    void *expired_ctx;
    store_event_fn event;
    void *event_ctx;
    store_release_fn release;   /* NULL: released values are freed at once */
    void *release_ctx;
    size_t used_memory;   /* malloc_usable_size of key/value allocations */
    size_t expires;       /* keys with a deadline */
    int64_t lock_deadline; /* the last lease a store_lock_* function set (lock.h) */
    uint64_t zsl_rng;     /* skiplist levels: per store, so stores on two threads never share it */
    uint64_t lfu_rng;     /* the LFU counter's coin (Redis's rand()) */
    const store_env *env; /* NULL: Redis's defaults, the store's own clock */
    store_pool key_pool;  /* key entries up to STORE_KEY_POOLED bytes */
    wheel wheel;          /* last: it is large (slot heads) */
};

/* ---- alloc.c: failure is mem_oom (mem.h); *acct tracks usable bytes ---- */
void *store_xmalloc(size_t n);
void *store_xcalloc(size_t n, size_t size);
void *store_mem_alloc(size_t *acct, size_t n);
void *store_mem_realloc(size_t *acct, void *p, size_t n);
void store_mem_free(size_t *acct, void *p);
size_t store_mem_size(const void *p);

/* ---- siphash.c: the core with 2-4 rounds, for the reference vectors ---- */
uint64_t store_siphash24(const void *in, size_t len, const uint8_t k[16]);

/* ---- store.c ---- */
/* Live key by name with hash == store_dict_hash(key, len); reclaims an
 * expired one and returns NULL. */
store_key *store_lookup_hashed(store *s, const char *key, size_t len, uint64_t h);
/* New key, which must be absent, with an empty value of type t and a
 * value area of at least `area` bytes. */
store_key *store_key_new(store *s, const char *key, size_t len, uint64_t h, store_type t,
                         size_t area);
/* store_create_hash with h == store_dict_hash(key, len) already known. */
store_key *store_hash_key_new(store *s, const char *key, size_t len, uint64_t h,
                              const char *field, size_t flen, size_t vlen);
/* Bytes of k's value area (the allocation's slack included). */
size_t store_value_room(const store_key *k);
/* Release the value and the entry (already unlinked, timer cleared). */
void store_key_free(store *s, store_key *k);
void store_value_free(store *s, store_key *k);

/* ---- access.c: the access clock and the big bit ---- */
/* Redis 7.0's defaults, for a store without a server. */
extern const store_env store_default_env;
/* The thresholds and clock the store reads: inline, as every hash write
 * and every new key asks. */
static inline const store_env *store_env_of(const store *s)
{
    return s->env ? s->env : &store_default_env;
}
/* Where k's access clock is. */
static inline unsigned char *store_clock_at(const store_key *k)
{
    return (unsigned char *)STORE_KV(k) + k->area - STORE_CLOCK_BYTES;
}
static inline void store_clock_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
}
/* What a new key's access clock starts at: now, or LFU's initial counter. */
uint32_t store_clock_new_slow(store *s);
static inline uint32_t store_clock_new(store *s)
{
    return s->env && !s->env->lfu ? s->env->lru_clock : store_clock_new_slow(s);
}
/* A new member mlen bytes long is about to join zset k: mark k big if
 * Redis would convert it to a skiplist first. */
void store_zset_note_add(store *s, store_key *k, size_t mlen);

/* k's value goes (k keeps its entry, with no value): to the release hook
 * if one takes it, else freed now. */
static inline void store_value_release(store *s, store_key *k, store_release_why why)
{
    if (s->release && s->release(s, k, why, s->release_ctx)) return;
    store_value_free(s, k);
}
/* Unlinked k's entry alone (its value already released or moved). */
void store_entry_free(store *s, store_key *k);

/* ---- expire.c ---- */
int store_key_is_expired(const store_key *k, uint64_t now);
/* Unlink k, call the expired hook, free it. */
void store_reclaim(store *s, store_key *k);
/* Drop k's timer (if any) and the expires count for it. */
void store_key_clear_timer(store *s, store_key *k);
/* k out of the keyspace and the wheel; its entry and value stay. */
static inline void store_key_unlink(store *s, store_key *k)
{
    store_dict_unlink(&s->keys, &k->node);
    store_key_clear_timer(s, k);
}

/* ---- value_string.c / value_hash.c / value_list.c / value_zset.c ---- */
void store_string_init(store_key *k);
void store_string_free(store *s, store_key *k);
void store_hash_init(store_key *k);
void store_hash_free(store *s, store_key *k);
void store_list_init(store_key *k);
void store_list_free(store *s, store_key *k);
void store_zset_init(store_key *k);
void store_zset_free(store *s, store_key *k);
/* COPY: dst, a new key of src's type holding the empty value, becomes a
 * copy of src's value in the same representation, charged to s (dst's
 * store, which may be src's). A one-field hash needs dst's value area to
 * hold it (store_copy sizes it). */
void store_string_dup(store *s, store_key *dst, const store_key *src);
void store_hash_dup(store *s, store_key *dst, const store_key *src);
void store_list_dup(store *s, store_key *dst, const store_key *src);
void store_zset_dup(store *s, store_key *dst, const store_key *src);
/* value_set.c: the same hooks for sets */
void store_set_key_init(store_key *k);
void store_set_key_free(store *s, store_key *k);
void store_set_key_dup(store *s, store_key *dst, const store_key *src);

/* value_stream.c: the same hooks for streams (init allocates the stream) */
void store_stream_key_init(store *s, store_key *k);
void store_stream_key_free(store *s, store_key *k);
void store_stream_key_dup(store *s, store_key *dst, const store_key *src);
/* store_key_free_effort's counts: a chunked list's chunks (value_list.c);
 * a stream's nodes, and its groups with their PELs (stream_group.c) */
size_t store_list_chunks(const store_key *k);
size_t store_stream_free_effort(const store_stream *st);
/* stream_group.c: a stream's consumer groups freed, or copied into dst */
void store_stream_groups_free(store *s, store_stream *st);
void store_stream_groups_dup(store *s, store_stream *dst, const store_stream *src);

/* A dict allocates its buckets itself: charge used_memory with the change
 * in their size since `before` (a store_dict_mem taken earlier). */
static inline void store_charge_dict(store *s, const store_dict *d, size_t before)
{
    s->used_memory = s->used_memory - before + store_dict_mem(d);
}

/* 1 if a + b does not fit in a long long (Redis's incr overflow test). */
static inline int store_add_overflows(long long a, long long b)
{
    return (b < 0 && a < 0 && b < LLONG_MIN - a) || (b > 0 && a > 0 && b > LLONG_MAX - a);
}

/* ---- hash_small.c: the packed, insertion-ordered representation ---- */
const char *hsmall_get(const store_hsmall *h, const char *f, size_t flen, size_t *vlen);
/* 1 if added, 0 if updated in place. f/v must not point into h's buffer. */
int hsmall_set(store *s, store_hsmall *h, const char *f, size_t flen,
               const char *v, size_t vlen);
int hsmall_del(store *s, store_hsmall *h, const char *f, size_t flen);
void hsmall_foreach(const store_hsmall *h, store_field_fn fn, void *ctx);
void hsmall_free(store *s, store_hsmall *h);

/* ---- hash_one.c: a one-field hash in the key's value area ---- */
/* Where a packed field is read back to (store_hash_foreach and moves). */
typedef char hone_buf[STORE_HASH_SMALL_VALUE];
/* 1 if a field and value this long may be a one-field hash at all. */
int hone_fits_size(size_t flen, size_t vlen);
/* Bytes of value area the field f = a vlen-byte value takes. */
size_t hone_area(const char *f, size_t flen, size_t vlen);
/* hone_fits_size, and it fits k's value area. */
int hone_fits(const store_key *k, const char *f, size_t flen, size_t vlen);
/* Bytes of k's value area in use. */
size_t hone_used(const store_key *k);
/* Make k's value the one field f = v (enc becomes STORE_ENC_HASH_ONE);
 * f/v may be the ones already there. */
void hone_put(store_key *k, const char *f, size_t flen, const char *v, size_t vlen);
/* The field (in the area, or unpacked into buf) and its value. */
void hone_read(const store_key *k, hone_buf buf, const char **f, size_t *flen,
               const char **v, size_t *vlen);
const char *hone_value(const store_key *k, size_t *vlen);
int hone_is(const store_key *k, const char *f, size_t flen);

/* ---- hash_table.c: dict-backed, for big hashes ---- */
store_dict *htable_new(store *s);
const char *htable_get(const store_dict *d, const char *f, size_t flen, size_t *vlen);
int htable_set(store *s, store_dict *d, const char *f, size_t flen,
               const char *v, size_t vlen);
int htable_del(store *s, store_dict *d, const char *f, size_t flen);
void htable_foreach(const store_dict *d, store_field_fn fn, void *ctx);
uint64_t htable_scan(store_dict *d, uint64_t cursor, store_field_fn fn, void *ctx);
/* store_hash_random for the table: store_dict_random's pick. */
void htable_random(store_dict *d, uint64_t rnd, store_field_fn fn, void *ctx);
void htable_free(store *s, store_dict *d);

/* ---- pack.c: entries of a store_packed; item pointers must not point
 * into the buffer being changed ---- */
typedef struct pack_item {
    const char *ptr;
    size_t len;
} pack_item;

/* LEB128 (7 bits a byte, low first): bytes v takes, writes, reads. */
size_t pack_varint_len(size_t v);
size_t pack_varint_put(char *p, size_t v);
size_t pack_varint_get(const char *p, size_t *v);
/* The entry at off: *data and *len; returns the offset of the next one. */
size_t pack_next(const store_packed *p, size_t off, const char **data, size_t *len);
/* Offset of entry idx (idx == count: the end). */
size_t pack_offset(const store_packed *p, size_t idx);
/* Offsets of every entry into offs (which holds p->count). */
void pack_offsets(const store_packed *p, uint32_t *offs);
int pack_entry_is(const char *data, size_t len, const char *v, size_t vlen);
/* Insert n entries before the entry at off (off == bytes: append). */
void pack_insert(store *s, store_packed *p, size_t off, const pack_item *items, int n);
/* Remove n entries starting with the one at off. */
void pack_delete(store *s, store_packed *p, size_t off, size_t n);
/* Move entries [idx, count) of p to the empty dst. */
void pack_split(store *s, store_packed *p, size_t idx, store_packed *dst);
/* dst becomes a copy of src, its buffer charged to s (COPY). */
void pack_dup(store *s, const store_packed *src, store_packed *dst);
void pack_free(store *s, store_packed *p);

/* ---- value_zset.c: Redis's order, by score then member bytes (memcmp,
 * a prefix first); <0, 0, >0 ---- */
int zset_lexcmp(const char *a, size_t alen, const char *b, size_t blen);
int zset_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2);
int zset_gte_min(const store_zrange *r, double score, const char *m, size_t mlen);
int zset_lte_max(const store_zrange *r, double score, const char *m, size_t mlen);

/* ---- zset_skiplist.c: big sorted sets, ranks are 0-based ---- */

store_zset *zsl_new(store *s);
void zsl_free(store *s, store_zset *z);
size_t zsl_len(const store_zset *z);
int zsl_score(const store_zset *z, const char *m, size_t mlen, double *score);
/* m must be absent. */
void zsl_insert(store *s, store_zset *z, double score, const char *m, size_t mlen);
int zsl_delete(store *s, store_zset *z, const char *m, size_t mlen);
long long zsl_rank(const store_zset *z, const char *m, size_t mlen);
/* store_zset_span for the skiplist. */
size_t zsl_span(const store_zset *z, const store_zrange *r, size_t *n);
void zsl_visit(const store_zset *z, size_t start, size_t n, int reverse,
               store_zmember_fn fn, void *ctx);
void zsl_delete_ranks(store *s, store_zset *z, size_t start, size_t n);
/* store_zset_scan for the skiplist: one bucket of the member dict. */
uint64_t zsl_scan(store_zset *z, uint64_t cursor, store_zmember_fn fn, void *ctx);

#endif
