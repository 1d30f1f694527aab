/* dict.h - intrusive hash table with incremental rehash (after Redis's
 * dict.c): callers embed store_dict_node in their own entries. */
#ifndef LATCHD_STORE_DICT_H
#define LATCHD_STORE_DICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 16 bytes: every key of the keyspace carries one. The hash kept is the
 * low 32 bits (tables never reach 2^32 buckets); keys are under 4 GiB.
 * A node does not point at its key: its dict knows where every owner keeps
 * the bytes (store_dict_init), which saves a pointer per key. */
typedef struct store_dict_node {
    struct store_dict_node *next;
    uint32_t hash;
    uint32_t keylen;
} store_dict_node;
/* Embedded in every key entry: a held lock's 88 bytes count on 16 (on a
 * 64-bit target; store_internal.h pins the rest of the key header). */
_Static_assert(sizeof(void *) != 8 || sizeof(store_dict_node) == 16, "store_dict_node grew: a lock no longer fits 88 bytes");

typedef struct store_dict_table {
    store_dict_node **buckets;
    size_t size;       /* power of two, or 0 */
    size_t used;
} store_dict_table;

typedef struct store_dict {
    store_dict_table t[2];
    long long rehash_idx;   /* -1: not rehashing */
    int iterators;          /* >0: rehash steps paused (foreach running) */
    int avoid_resize;       /* store_dict_avoid_resize */
    uint32_t key_off;       /* where a node's key is: see store_dict_init */
    int key_by_pointer;
} store_dict;

/* How a dict's owners keep a node's key bytes, key_off bytes past the node:
 * the bytes themselves (in the same allocation), or a pointer to them. */
enum { STORE_DICT_KEY_INLINE = 0, STORE_DICT_KEY_POINTER = 1 };

/* key_off of member `key` in an owner struct whose node is member `node`. */
#define STORE_DICT_KEY_OFF(type, node, key) (offsetof(type, key) - offsetof(type, node))

/* len as a node keeps it. A key of 4 GiB or more breaks the store's
 * contract (STORE_MAX_LEN in store.h, which the server enforces first):
 * fatal, with a message. */
uint32_t store_dict_keylen(size_t len);

typedef void (*store_dict_visit_fn)(store_dict_node *n, void *ctx);

/* Process-wide SipHash key, read by every dict in the process: set it
 * before any dict holds a key (the first server_init sets a random one,
 * once per process), never while dicts are in use on another thread. */
void store_dict_set_seed(const uint8_t seed[16]);
uint64_t store_dict_hash(const char *key, size_t len);

void store_dict_init(store_dict *d, size_t key_off, int how);
/* The key bytes of n, a node of d (keylen of them). */
static inline const char *store_dict_key(const store_dict *d, const store_dict_node *n)
{
    const char *at = (const char *)n + d->key_off;
    const char *p;
    if (!d->key_by_pointer) return at;
    memcpy(&p, at, sizeof p);   /* the owner's pointer field, whatever its alignment */
    return p;
}
/* Calls free_node (may be NULL) for every node, then releases the table;
 * d stays ready for use, its keys found where store_dict_init said. */
void store_dict_clear(store_dict *d, store_dict_visit_fn free_node, void *ctx);
size_t store_dict_size(const store_dict *d);
store_dict_node *store_dict_find(store_dict *d, const char *key, size_t len);
/* n's key and keylen must be set and not present yet; the dict sets n->hash. */
void store_dict_insert(store_dict *d, store_dict_node *n);
/* Unlinks and returns the node with this key, or NULL. */
store_dict_node *store_dict_remove(store_dict *d, const char *key, size_t len);
/* Visit every node; fn must not insert or remove. */
void store_dict_foreach(store_dict *d, store_dict_visit_fn fn, void *ctx);
/* store_dict_foreach in no set order: a large table's nodes are visited a
 * page at a time (sorted by address, a window of buckets at a time), not
 * one cache and TLB miss after another as bucket order is. For whole-table
 * walks (a snapshot); it allocates 4 MiB of scratch while it runs, and
 * walks in bucket order when that allocation fails. */
void store_dict_walk(store_dict *d, store_dict_visit_fn fn, void *ctx);
/* Redis's SCAN cursor (reverse binary increment): every node present for
 * the whole scan is visited at least once, even across resizes. Visits one
 * bucket (both tables when rehashing); returns the next cursor, 0 = done. */
uint64_t store_dict_scan(store_dict *d, uint64_t cursor, store_dict_visit_fn fn, void *ctx);
/* Room for n nodes in an empty dict (Redis's dictExpand before a load):
 * its inserts up to n then never start a rehash. No-op if d holds any. */
void store_dict_expand(store_dict *d, size_t n);
/* Redis 7.0's dictDisableResize, while a fork child shares the pages: no
 * table grows (unless 5 times overloaded) or shrinks, as the rehash that
 * follows would copy every node's page away from the child. */
void store_dict_avoid_resize(store_dict *d, int avoid);
/* Do up to n buckets of pending rehash work; returns 1 if more remains. */
int store_dict_rehash(store_dict *d, int n);
/* 1 while d is between two tables (a rehash pending). */
static inline int store_dict_rehashing(const store_dict *d) { return d->rehash_idx != -1; }
/* A node picked at random, for sampling (NULL when empty). */
store_dict_node *store_dict_random(store_dict *d, uint64_t rnd);

/* ---- additions (store/ internals): hash a key once per operation, unlink
 * a known node, read without mutating, and report table memory. ---- */
/* Fetch into cache the bucket a lookup of key will read first (an
 * out-of-cache table's costliest miss), while the caller does other work. */
void store_dict_prefetch(const store_dict *d, const char *key, size_t len);
/* store_dict_find with hash == store_dict_hash(key, len) precomputed. */
store_dict_node *store_dict_find_hashed(store_dict *d, const char *key, size_t len,
                                        uint64_t hash);
/* store_dict_insert with n->hash already the hash of n's key. */
void store_dict_insert_hashed(store_dict *d, store_dict_node *n);
/* Unlinks n, which must be in d (uses n->hash; no key compare). */
void store_dict_unlink(store_dict *d, store_dict_node *n);
/* Find without a rehash step, so it is safe on a const dict. */
store_dict_node *store_dict_peek(const store_dict *d, const char *key, size_t len);
/* Bytes held by the bucket arrays (malloc_usable_size). */
size_t store_dict_mem(const store_dict *d);

#endif
