/* store.h - the keyspace: named values (string, hash, list, zset, set) with
 * optional millisecond deadlines, reclaimed by a timing wheel. No I/O; the
 * clock is injected so tests control time. */
#ifndef LATCHD_STORE_H
#define LATCHD_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef enum store_type {
    STORE_STRING = 1,
    STORE_HASH = 2,
    STORE_LIST = 3,   /* list.h */
    STORE_ZSET = 4,   /* zset.h */
    STORE_SET = 5,    /* set.h */
    STORE_STREAM = 6, /* stream.h */
} store_type;

/* Errors are negative values; 0 and positive values are results. */
enum {
    STORE_OK = 0,
    STORE_ERR_NOT_INT = -1,   /* value is not an integer (string or hash field) */
    STORE_ERR_OVERFLOW = -2,  /* increment or decrement would overflow */
};

#define STORE_NO_DEADLINE INT64_C(-1)

/* The longest key, field, value, list element or zset member a store
 * holds (2047 MiB). Lengths inside are 32-bit (dict keys, hash values,
 * packed runs), and a list chunk holds a new element next to at most one
 * other this long (or 8 KiB of small ones) until it splits, so two of them
 * with their headers must fit in 4 GiB. Passing a longer one aborts: the
 * server refuses them first (proto-max-bulk-len cannot be set above this). */
#define STORE_MAX_LEN ((size_t)2047 * 1024 * 1024)

typedef struct store store;
typedef struct store_key store_key;

/* How long returned pointers stay valid (single-threaded: a store is used
 * by one thread at a time).
 *
 * A store_key * (and store_key_name's bytes) stays valid, at the same
 * address, until that key is freed: store_delete_key or store_delete of
 * it, store_rename of it (use the key it returns) or onto its name,
 * store_flush, store_destroy, or reclaiming it once past its deadline.
 * Reclaiming happens only in store_expire_due and in calls given its name
 * (store_lookup and every call that looks a name up: store_delete,
 * store_put_string, store_rename's new name, lock.h's operations); a key
 * past its deadline but not reclaimed is still readable. Creating,
 * writing or deleting other keys never moves or frees it.
 *
 * A pointer into a value (store_string_get's bytes, store_hash_get's
 * value, the field and value store_hash_foreach passes) stays valid until
 * the key is freed or its value is next written: any setter, incrby or
 * delete on it (any field of a hash) or a change of its type. Writes to
 * other keys leave it valid. */

/* Absolute milliseconds (unix epoch timebase, but must never go backwards). */
typedef uint64_t (*store_clock_fn)(void *ctx);
/* Called when expiry reclaims a key (lazily on access or by the wheel),
 * before its memory is released. */
typedef void (*store_expired_fn)(const char *key, size_t len, void *ctx);
typedef void (*store_key_fn)(store_key *k, void *ctx);
/* Why a value goes without a command deleting its key by name: it expired
 * (lazily, by the wheel, or an EXPIRE/GETEX deadline already past), or a
 * command replaced it (SET over it, a *STORE destination, RENAME's or
 * COPY/RESTORE REPLACE's target): Redis's lazyfree-lazy-expire and
 * lazyfree-lazy-server-del. */
typedef enum { STORE_RELEASE_EXPIRED, STORE_RELEASE_REPLACED } store_release_why;
/* Asked before such a value is freed: k's value may be taken with
 * store_value_orphan (return 1), else (0) the store frees it at once.
 * k may be linked or not; it must not be touched otherwise. */
typedef int (*store_release_fn)(store *s, store_key *k, store_release_why why, void *ctx);
/* Keyspace event classes: the same bits as Redis's notify-keyspace-events
 * classes, so the server can filter on them without translation. */
enum {
    STORE_EV_GENERIC = 1 << 2,   /* g */
    STORE_EV_STRING = 1 << 3,    /* $ */
    STORE_EV_LIST = 1 << 4,      /* l */
    STORE_EV_SET = 1 << 5,       /* s */
    STORE_EV_HASH = 1 << 6,      /* h */
    STORE_EV_ZSET = 1 << 7,      /* z */
    STORE_EV_STREAM = 1 << 10,   /* t */
    STORE_EV_EXPIRED = 1 << 8,   /* x */
    STORE_EV_NEW = 1 << 14,      /* n: raised by the store itself, "new" */
};
/* A keyspace event, named as the Redis command that caused it ("hincrby",
 * "expire", "del", ...). Raised by operations that live in store/ (the
 * native lock scripts) and by the server's commands alike. */
typedef void (*store_event_fn)(int cls, const char *event, const char *key,
                               size_t klen, void *ctx);
typedef void (*store_field_fn)(const char *field, size_t flen,
                               const char *val, size_t vlen, void *ctx);

/* What a store reads from its server, shared by all of a server's
 * databases and kept current by it: Redis's listpack thresholds (the
 * encoding OBJECT ENCODING reports for a value's history), its LFU knobs,
 * and the coarse clock access times are stamped from (Redis's cached LRU
 * clock: refreshed as commands arrive, not read per access). */
enum { STORE_SEE_EXPIRED = 2 };
typedef struct store_env {
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    long long set_max_intset_entries;   /* a set past it leaves its intset (set.h) */
    int lfu;                /* maxmemory-policy *-lfu: access clocks count frequency */
    int lfu_log_factor, lfu_decay_time;
    /* The coarse clock as keys are stamped with it, set by
     * store_env_set_clock: Redis's LRU clock (seconds, 24 bits) and LFU
     * clock (minutes, 16 bits), computed once, not per access. */
    uint32_t lru_clock, lfu_minutes;
    /* A key past its deadline reads as missing but is not reclaimed (the
     * server's CLIENT PAUSE keeps the dataset still for readers);
     * STORE_SEE_EXPIRED: deadlines are not looked at (a replica applying
     * its leader's effects: only the leader's DEL removes a key). */
    int hold_expired;
    /* 1 while a fork child shares the pages: lookups leave access clocks
     * alone (Redis's lookupKey), as each stamp would copy a page. */
    int no_touch;
} store_env;
/* The coarse clock is now ms (absolute, as store_clock_fn). */
void store_env_set_clock(store_env *env, uint64_t ms);

store *store_create(store_clock_fn clock, void *clock_ctx);
/* Read through env from now on (kept by pointer: it must outlive the
 * store). Without one a store uses Redis's defaults and its own clock. */
void store_set_env(store *s, const store_env *env);
void store_destroy(store *s);
void store_set_expired_hook(store *s, store_expired_fn fn, void *ctx);
void store_set_event_hook(store *s, store_event_fn fn, void *ctx);
/* NULL (the default) frees every released value at once: without a hook
 * releasing costs one test. */
void store_set_release_hook(store *s, store_release_fn fn, void *ctx);
void store_notify(store *s, int cls, const char *event, const char *key,
                  size_t klen);
uint64_t store_now(store *s);

/* Number of keys, counting ones past their deadline not yet reclaimed
 * (as Redis's DBSIZE does). */
size_t store_size(const store *s);
size_t store_expires_count(const store *s);
/* Bytes allocated for keys and values (INFO used_memory). */
size_t store_used_memory(const store *s);
void store_flush(store *s);
/* A hint that an empty keyspace is about to take n keys (an RDB file's
 * RESIZEDB): its table sized once, instead of grown through every power
 * of two on the way. No-op if s holds keys. */
void store_reserve(store *s, size_t n);
/* A hint that key is looked up or added soon (a loader about to parse its
 * value): its table bucket is fetched into cache meanwhile. */
void store_prefetch(const store *s, const char *key, size_t len);
/* Up to `buckets` steps of the keyspace table's incremental rehash, as
 * Redis's activerehashing does between commands: 1 while more is left. */
int store_rehash(store *s, int buckets);
/* 1 while the keyspace table is between two sizes (a rehash pending). */
int store_rehashing(const store *s);
/* While a fork child shares the keyspace's pages (1), its table does not
 * resize: store_dict_avoid_resize. */
void store_avoid_resize(store *s, int avoid);

/* Expiry driving: reclaim every key whose deadline <= now; returns count.
 * store_next_due: absolute ms of the next wheel work, UINT64_MAX if none. */
size_t store_expire_due(store *s);
uint64_t store_next_due(const store *s);

/* ---- keys ---- */
/* NULL when missing or past its deadline (an expired key is reclaimed here,
 * so it is never visible). */
store_key *store_lookup(store *s, const char *key, size_t len);
/* The key even past its deadline, left in place: for DEBUG OBJECT, which
 * reads Redis's dict directly. */
store_key *store_lookup_raw(store *s, const char *key, size_t len);
/* What is under key, without reclaiming it: a watcher of keys (WATCH)
 * must tell a key past its deadline from a missing one, as Redis does. */
typedef enum store_presence {
    STORE_ABSENT = 0,
    STORE_PRESENT = 1,
    STORE_PRESENT_EXPIRED = 2,   /* past its deadline, not reclaimed yet */
} store_presence;
store_presence store_peek(store *s, const char *key, size_t len);
/* Create an empty value of the given type. The key must not exist: callers
 * look it up first (which also reclaims an expired one); debug builds check. */
store_key *store_create_key(store *s, const char *key, size_t len, store_type t);
/* store_create_key for a hash about to get its first field, flen bytes
 * with a vlen-byte value: a small one-field hash (a held lock) lives
 * inside the key's own allocation, so room for it is made now. */
store_key *store_create_hash(store *s, const char *key, size_t len, const char *field,
                             size_t flen, size_t vlen);
/* Make k's value an empty one of type t, whatever it held (a command
 * overwriting a key with a new value: SORT ... STORE); the deadline is
 * kept, and no event is raised. A list or hash must not be left empty:
 * the caller fills it. */
void store_key_reset(store *s, store_key *k, store_type t);
void store_delete_key(store *s, store_key *k);
/* store_delete_key whose value goes through the release hook for why
 * (Redis's dbDelete, or dbAsyncDelete under lazyfree-lazy-expire): a
 * destination a command replaces or empties, an EXPIRE in the past. */
void store_release_key(store *s, store_key *k, store_release_why why);
/* 1 if a live key was deleted, 0 if none. */
int store_delete(store *s, const char *key, size_t len);
/* Move k's value and deadline to newname, replacing whatever is there.
 * Returns the key under its new name (k is no longer valid). */
store_key *store_rename(store *s, store_key *k, const char *newname, size_t newlen);

/* COPY: a new key `name` in dst (which may be k's own store) holding a
 * copy of k's value, in the same representation, and k's deadline; "new"
 * is raised on dst as for any created key. name must not be live in dst
 * (callers look it up and delete it first: that also reclaims an expired
 * one; debug builds check), nor be k itself. Returns the new key; k is
 * untouched. */
store_key *store_copy(store *dst, const store_key *k, const char *name, size_t len);
/* RANDOMKEY: a live key drawn from rnd (the caller's random word), about
 * uniformly: a random bucket, then a random key of its chain. Keys past
 * their deadline that are drawn are reclaimed, as on lookup, and another
 * is drawn; NULL when no live key is left. */
store_key *store_random_key(store *s, uint64_t rnd);
/* A live key with a deadline drawn from rnd, for the volatile-* eviction
 * policies: found in O(1) however few of the keys have one, not uniformly
 * (see wheel_any). Drawn keys past their deadline are reclaimed as by
 * store_random_key; NULL when no live key has a deadline. */
store_key *store_random_volatile_key(store *s, uint64_t rnd);

store_type store_key_type(const store_key *k);

/* ---- lazy freeing: a value freed by another thread (the server's lazyfree) ---- */
/* Redis's lazyfreeGetFreeEffort: about how many allocations freeing k's
 * value takes (a collection's elements, a list's chunks, a stream's nodes
 * and groups; 1 for a string or a packed value). */
size_t store_key_free_effort(const store_key *k);
/* A value taken out of its key, to be freed on any thread. */
typedef struct store_orphan store_orphan;
/* Unlink k as store_delete_key does (its entry is freed now, no event) and
 * keep its value in an orphan. The value's bytes stay charged to s, and
 * its blocks may be s's, until store_orphan_settle(s, o): s must not be
 * flushed or destroyed before (store_flush would release blocks still
 * out). */
store_orphan *store_key_orphan(store *s, store_key *k);
/* Inside a release hook only: k's value moves into an orphan, as
 * store_key_orphan's, and k is left without one (the store gives it a new
 * value or frees the entry). */
store_orphan *store_value_orphan(store *s, store_key *k);
/* Frees o's value on the calling thread, through freer: a store of that
 * thread's own, used for nothing else (its accounting is borrowed, so a
 * value's store is not touched). Returns the bytes freed. o stays for
 * store_orphan_settle or store_orphan_drop. */
size_t store_orphan_free(store *freer, store_orphan *o);
/* On s's thread, after store_orphan_free: s's used_memory drops by the
 * bytes freed and its pool gets its blocks back (O(1)); o is freed. */
void store_orphan_settle(store *s, store_orphan *o);
/* o freed alone: its store went away whole (destroyed after the value). */
void store_orphan_drop(store_orphan *o);
/* ---- access.c: what OBJECT and DEBUG OBJECT report ---- */
/* A command looked k up (Redis's lookupKey without LOOKUP_NOTOUCH): its
 * access time, or under LFU its frequency counter, moves. */
void store_key_touch(store *s, store_key *k);
/* Redis 7.0's name for k's encoding: "int", "embstr", "raw", "listpack",
 * "hashtable", "skiplist", "quicklist", "intset". */
const char *store_key_encoding(const store_key *k);
/* Redis's robj.lru: 24 bits of seconds, or under LFU minutes << 8 | counter. */
uint32_t store_key_access_clock(const store_key *k);
/* Seconds since k was last touched (OBJECT IDLETIME, LRU clock). */
uint64_t store_key_idle_seconds(store *s, const store_key *k);
/* The LFU counter decayed by the minutes since its last access (OBJECT FREQ). */
unsigned store_key_freq(store *s, const store_key *k);
/* RESTORE's IDLETIME / FREQ (Redis's objectSetLRUOrLFU): each takes effect
 * only under its own policy kind (LRU for idle seconds, LFU for freq). */
void store_key_set_idle(store *s, store_key *k, long long seconds);
void store_key_set_freq(store *s, store_key *k, unsigned freq);
/* dst takes src's access clock (MOVE: the same value in another database). */
void store_key_keep_access(store_key *dst, const store_key *src);
const char *store_key_name(const store_key *k, size_t *len);
int64_t store_key_deadline(const store_key *k);   /* STORE_NO_DEADLINE if none */
/* Set (absolute ms) or clear (STORE_NO_DEADLINE) the deadline. */
void store_key_set_deadline(store *s, store_key *k, int64_t deadline_ms);

/* Visit live keys. foreach: all of them (fn must not add/delete keys).
 * scan: Redis SCAN cursor semantics; returns the next cursor (0 = done). */
void store_foreach(store *s, store_key_fn fn, void *ctx);
/* store_foreach in no set order, faster over a large keyspace (memory
 * order: store_dict_walk): for whole-keyspace walks whose order does not
 * matter, as a snapshot's. */
void store_walk(store *s, store_key_fn fn, void *ctx);
uint64_t store_scan(store *s, uint64_t cursor, store_key_fn fn, void *ctx);

/* ---- strings ---- */
/* Replace any value under key with a string (type changes if needed); the
 * deadline is kept — callers clear it when the command says so. */
store_key *store_put_string(store *s, const char *key, size_t len,
                            const char *val, size_t vlen);
/* Make k's value the string val, whatever its type was; deadline kept. */
void store_string_set(store *s, store_key *k, const char *val, size_t vlen);
const char *store_string_get(const store_key *k, size_t *len);
/* How Redis 7.0 holds a string, which OBJECT ENCODING and REFCOUNT
 * report (access.c). Every store_string_set (and incrby) makes it
 * STORE_STR_AS_SET; COPY keeps it, as Redis's dupStringObject does. */
typedef enum store_str_form {
    STORE_STR_AS_SET = 0,   /* tryObjectEncoding's choice: int when it reads
                               as one, else embstr up to 44 bytes, else raw */
    STORE_STR_NOINT = 1,    /* made from text never tried as an integer
                               (INCRBYFLOAT's result): embstr / raw by length */
    STORE_STR_RAW = 2,      /* an sds changed in place (APPEND, SETRANGE, the
                               bitmap writers): raw whatever it holds */
} store_str_form;
store_str_form store_string_form(const store_key *k);
/* k must be a string. */
void store_string_set_form(store_key *k, store_str_form f);
/* String k's bytes, writable, after growing it to at least len bytes (the
 * new ones zero; a longer string keeps its length); *outlen gets the
 * length. The form becomes STORE_STR_RAW, as Redis's dbUnshareStringValue
 * leaves it. Growth is geometric, so appends cost amortized O(1), except
 * from an empty string: that gets len exactly (Redis's new-key sizes). len must
 * be <= STORE_MAX_LEN (callers check proto-max-bulk-len first; more
 * aborts). The pointer lives as store_string_get's does. */
char *store_string_writable(store *s, store_key *k, size_t len, size_t *outlen);
/* store_string_writable without growing it: k's *len bytes, writable in
 * place (HyperLogLog's registers), "raw" from now on. */
char *store_string_mutable(store *s, store_key *k, size_t *len);
/* k must be a string; STORE_ERR_NOT_INT / STORE_ERR_OVERFLOW or STORE_OK. */
int store_string_incrby(store *s, store_key *k, long long delta, long long *out);

/* ---- hashes ---- */
/* 1 if the field is new, 0 if it was updated. */
int store_hash_set(store *s, store_key *k, const char *field, size_t flen,
                   const char *val, size_t vlen);
/* NULL if the field is missing. */
const char *store_hash_get(const store_key *k, const char *field, size_t flen,
                           size_t *vlen);
/* 1 if removed. The caller deletes the key when the hash becomes empty. */
int store_hash_del(store *s, store_key *k, const char *field, size_t flen);
size_t store_hash_len(const store_key *k);
/* Missing field counts as 0. STORE_ERR_NOT_INT / STORE_ERR_OVERFLOW / STORE_OK. */
int store_hash_incrby(store *s, store_key *k, const char *field, size_t flen,
                      long long delta, long long *out);
/* Fields in the order HGETALL returns them (insertion order while small). */
void store_hash_foreach(const store_key *k, store_field_fn fn, void *ctx);
/* HSCAN: Redis's cursor over a hash table (every field present for the
 * whole scan is visited at least once, across resizes): one bucket's
 * fields per call, and the next cursor (0: done). A packed hash is visited
 * whole in one call, returning 0, as Redis does with a listpack. fn must
 * not change the hash. */
uint64_t store_hash_scan(store_key *k, uint64_t cursor, store_field_fn fn, void *ctx);
/* HRANDFIELD's draw, from rnd (the caller's random word): one field of the
 * non-empty hash k passed to fn. Uniform while packed (at most 128 fields,
 * walked); a table's pick is a random bucket, then a random field of its
 * chain (O(1), about uniform, as Redis's dictGetFairRandomKey). */
void store_hash_random(store_key *k, uint64_t rnd, store_field_fn fn, void *ctx);

#endif
