/* set.h - set values: unordered, binary-safe, distinct members, in Redis
 * 7.0's two representations (an intset, then one-way a hash table). */
#ifndef LATCHD_STORE_SET_H
#define LATCHD_STORE_SET_H

#include "store.h"

/* A set value. It lives in a set key's value area (store_set_of), or on a
 * caller's stack as a scratch set (store_set_init ... store_set_free):
 * SUNION / SINTERSTORE build their result in one, as Redis builds a fresh
 * object, so its representation is the one Redis would give it.
 *
 * Representations, as Redis 7.0's t_set.c chooses them:
 *  - intset: every member is a canonical 64-bit integer (Redis's
 *    string2ll: no sign on 0, no leading zeros or spaces) and there are at
 *    most set-max-intset-entries (the store env's) of them. Members are
 *    kept sorted, little-endian, each `width` bytes (2, 4 or 8): the width
 *    grows to fit a new member and never shrinks, as intsetUpgradeAndAdd.
 *  - hashtable: anything else, for good (no conversion back).
 * Members of an intset are visited in increasing order; a hash table's in
 * bucket order. Bytes are charged to the store passed in (used_memory). */
typedef struct store_set {
    void *p;          /* intset: count * width bytes; table: a store_dict */
    uint32_t count;   /* intset members (a table counts its own) */
    uint8_t width;    /* intset: 2, 4 or 8 bytes a member; 0: a hash table */
} store_set;

/* What a member's text needs at most when an intset hands it out. */
#define STORE_SET_INT_BUF 24

typedef void (*store_member_fn)(const char *m, size_t len, void *ctx);

/* The set value of set key k. */
store_set *store_set_of(store_key *k);
const store_set *store_set_of_const(const store_key *k);

/* An empty set: an intset, as Redis's createIntsetObject. */
void store_set_init(store_set *v);
/* The representation Redis's setTypeCreate gives a set whose first member
 * is m: an intset for an integer, else a hash table. */
void store_set_init_for(store *s, store_set *v, const char *m, size_t len);
/* An empty hash table, whatever members come (a scratch set of strings). */
void store_set_init_table(store *s, store_set *v);
void store_set_free(store *s, store_set *v);
/* Key k (a set key) takes v's members and representation; its old value
 * is freed. v is left empty (an intset) and need not be freed. */
void store_set_replace(store *s, store_key *k, store_set *v);
/* store_set_free of a scratch set a command made and is done with, as
 * Redis frees SUNION's / SDIFF's result: through the store's release hook
 * (STORE_RELEASE_REPLACED), so lazyfree-lazy-server-del frees a big one on
 * its thread. */
void store_set_release(store *s, store_set *v);

int store_set_is_intset(const store_set *v);
size_t store_set_len(const store_set *v);
int store_set_has(const store_set *v, const char *m, size_t len);
/* 1 if m was added, 0 if present. May convert an intset to a table (a
 * non-integer member, or more than set-max-intset-entries members). */
int store_set_add(store *s, store_set *v, const char *m, size_t len);
/* Every member of src (another set) added to dst, as store_set_add;
 * returns how many were new. */
size_t store_set_add_all(store *s, store_set *dst, const store_set *src);
/* 1 if m was removed. Callers delete a key its last member left. */
int store_set_remove(store *s, store_set *v, const char *m, size_t len);
/* Every member once; fn must not change v. */
void store_set_foreach(const store_set *v, store_member_fn fn, void *ctx);
/* SSCAN: Redis's cursor semantics (0 starts and ends); a table visits one
 * bucket per call (every member present for the whole scan is seen at
 * least once across a resize); an intset visits everything and ends. */
uint64_t store_set_scan(store_set *v, uint64_t cursor, store_member_fn fn, void *ctx);
/* A member drawn uniformly at random from the non-empty v, using rnd (the
 * caller's random word). The bytes are in buf (an intset's) or in v (valid
 * until v next changes). */
const char *store_set_random(store_set *v, uint64_t rnd, char buf[STORE_SET_INT_BUF],
                             size_t *len);
/* dst (empty, uninitialised) becomes a copy of src in the same
 * representation (COPY, DUMP's scratch), charged to s. */
void store_set_dup(store *s, store_set *dst, const store_set *src);

/* ---- the intset as bytes (DUMP / RESTORE: RDB_TYPE_SET_INTSET) ---- */
/* The intset's members: *width bytes each, count of them, little-endian
 * and sorted; NULL for a hash table. */
const void *store_set_intset_raw(const store_set *v, size_t *count, unsigned *width);
/* v (empty, uninitialised) becomes the intset of count width-byte
 * members at raw, which the caller has checked: strictly increasing,
 * width 2, 4 or 8, each needing it (or wider) no more than Redis allows.
 * Converts to a table if count passes set-max-intset-entries, as Redis's
 * loader does. */
void store_set_load_intset(store *s, store_set *v, const void *raw, size_t count, unsigned width);

#endif
