/* lock.h - native lock operations: what the lock scripts real clients send
 * (Redisson RLock, node-redisson, redlock, redis-py, redis-semaphore) do,
 * run directly on the keyspace, raising the same keyspace events as the
 * script's redis.call sequence. Redisson's RFencedLock acquire too.
 *
 * Every function checks everything its script could turn into an error
 * (wrong type, non-integer counter, overflow) before changing anything and
 * then returns STORE_LOCK_FALLBACK, so the caller can run the script in Lua
 * and get Redis's exact error. Lease arguments must already be validated
 * with store_lock_parse_ttl. */
#ifndef LATCHD_STORE_LOCK_H
#define LATCHD_STORE_LOCK_H

#include "store.h"

enum { STORE_LOCK_FALLBACK = -100 };

/* A TTL argument the native path accepts: a strict positive integer that
 * cannot overflow a deadline. Anything else is left to Lua. 1 = ok. */
int store_lock_parse_ttl(const char *s, size_t len, long long *ms);

/* The deadline (ms, store clock) of the last lease one of these functions
 * set in s: what the caller logs as the script's PEXPIRE, right after the
 * call that renewed it, without looking the key up again. */
int64_t store_lock_lease_deadline(const store *s);

/* Reentrant hash lock (RLock lock): when the key is missing or owner
 * already holds it, count one more hold and set the lease; returns 1.
 * Otherwise returns 0 with *pttl = the holder's remaining ms (-1: none).
 * create_event names the command that creates the first hold ("hincrby";
 * Redisson <= 3.12.2 used "hset"). */
int store_lock_acquire(store *s, const char *key, size_t klen,
                       const char *owner, size_t olen, long long lease_ms,
                       const char *create_event, long long *pttl);

/* Redisson RFencedLock: store_lock_acquire that also takes the next
 * fencing token, INCR of the string counter tkey, on every acquire
 * (re-entries too): 1 with *token, or 0 with *pttl and tkey untouched. */
int store_lock_fenced_acquire(store *s, const char *key, size_t klen, const char *tkey,
                              size_t tklen, const char *owner, size_t olen, long long lease_ms,
                              long long *pttl, long long *token);

/* RLock unlock: -1 owner holds nothing, 0 one hold released and lease
 * renewed, 1 last hold released and the key deleted (caller publishes). */
int store_lock_release(store *s, const char *key, size_t klen,
                       const char *owner, size_t olen, long long lease_ms);

/* HGET of owner's hold count (read only): 1 with *count, 0 when owner
 * holds nothing (*count 0), FALLBACK for another type or a non-integer. */
int store_lock_holds(store *s, const char *key, size_t klen,
                     const char *owner, size_t olen, long long *count);

/* RLock watchdog: renew the lease if owner holds the lock. 1 / 0. */
int store_lock_renew(store *s, const char *key, size_t klen,
                     const char *owner, size_t olen, long long lease_ms);

/* DEL of any key (forceUnlock). 1 if it existed. */
int store_lock_delete(store *s, const char *key, size_t klen);

/* 1 if the key exists, whatever its type (EXISTS). */
int store_lock_exists(store *s, const char *key, size_t klen);

/* The unlock latch (Redisson >= 3.24): a string "0"/"1" recording an
 * earlier unlock's result. 1 with *result set, 0 when absent. */
int store_lock_latch_get(store *s, const char *key, size_t klen, long long *result);
/* SET key <result> PX ttl_ms. */
void store_lock_latch_set(store *s, const char *key, size_t klen,
                          long long result, long long ttl_ms);

/* String token locks (redlock, redis-py, redis-semaphore): 1 if the key
 * holds exactly token; 0 if missing or different. */
int store_lock_token_matches(store *s, const char *key, size_t klen,
                             const char *token, size_t tlen);
/* token matches: delete (1) / set the lease (1); else 0. */
int store_lock_token_delete(store *s, const char *key, size_t klen,
                            const char *token, size_t tlen);
int store_lock_token_pexpire(store *s, const char *key, size_t klen,
                             const char *token, size_t tlen, long long lease_ms);

#endif
