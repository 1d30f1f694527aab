/* evict.c - maxmemory-policy: while used memory is over maxmemory, keys
 * drawn at random are compared by the policy and the best one evicted. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "persist/persist.h"
#include "server.h"

/* Uniform draws for one sample of a volatile policy before it asks the
 * timing wheel, which holds exactly the keys with a TTL (Redis samples its
 * dict of them) but cannot draw from them uniformly. */
#define EVICT_VOLATILE_DRAWS 8

static int policy_is_volatile(int p)
{
    return p == CONFIG_MAXMEMORY_VOLATILE_LRU || p == CONFIG_MAXMEMORY_VOLATILE_LFU ||
           p == CONFIG_MAXMEMORY_VOLATILE_RANDOM || p == CONFIG_MAXMEMORY_VOLATILE_TTL;
}

/* Higher goes first: the idlest (LRU), the least used (LFU), the nearest
 * deadline (TTL); under a random policy any drawn key will do. */
static uint64_t evict_score(store *st, store_key *k, int policy)
{
    switch (policy) {
    case CONFIG_MAXMEMORY_VOLATILE_LRU:
    case CONFIG_MAXMEMORY_ALLKEYS_LRU: return store_key_idle_seconds(st, k);
    case CONFIG_MAXMEMORY_VOLATILE_LFU:
    case CONFIG_MAXMEMORY_ALLKEYS_LFU: return 255u - store_key_freq(st, k);
    case CONFIG_MAXMEMORY_VOLATILE_TTL: return UINT64_MAX - (uint64_t)store_key_deadline(k);
    default: return 0;
    }
}

static store_key *draw(server *s, store *st, int vol)
{
    if (!vol) return store_random_key(st, server_random(s));
    /* Uniform draws while keys with a deadline are common; the wheel's
     * O(1) pick when they are rare, where draws alone would miss them
     * (one among 300 keys escaped 64 draws about half the time). */
    for (int i = 0; i < EVICT_VOLATILE_DRAWS; i++) {
        store_key *k = store_random_key(st, server_random(s));
        if (!k) return NULL;
        if (store_key_deadline(k) != STORE_NO_DEADLINE) return k;
    }
    return store_random_volatile_key(st, server_random(s));
}

/* maxmemory-samples keys of each database compared: the best, or NULL
 * when no database has a key the policy may evict. */
static store_key *pick(server *s, int policy, int *dbp)
{
    int vol = policy_is_volatile(policy);
    store_key *best = NULL;
    uint64_t best_score = 0;
    for (int db = 0; db < s->cfg.databases; db++) {
        store *st = server_db_if_used(s, db);
        if (!st || store_size(st) == 0) continue;
        for (long long i = 0; i < s->cfg.maxmemory_samples; i++) {
            store_key *k = draw(s, st, vol);
            if (!k) break;
            uint64_t sc = evict_score(st, k, policy);
            if (!best || sc > best_score) best = k, best_score = sc, *dbp = db;
        }
    }
    return best;
}

/* The bytes its store gave back (a lazily freed value's come later). */
static size_t evict_one(server *s, int db, store_key *k)
{
    store *st = server_db_if_used(s, db);
    size_t before = store_used_memory(st);
    size_t len;
    const char *name = store_key_name(k, &len);
    char small[128], *copy = len <= sizeof(small) ? small : mem_alloc(len);
    memcpy(copy, name, len);   /* the key goes with its entry */
    if (s->cfg.lazyfree_lazy_eviction) lazyfree_delete_key(s, st, k);
    else store_delete_key(st, k);
    s->stat_evicted++;
    store_notify(st, NOTIFY_EVICTED, "evicted", copy, len);   /* WATCH, tracking, events */
    if (s->aof_on) aof_key_deleted(s, db, copy, len, s->cfg.lazyfree_lazy_eviction);   /* as Redis */
    if (copy != small) free(copy);
    size_t after = store_used_memory(st);
    return before > after ? before - after : 0;
}

int evict_to_maxmemory(server *s)
{
    int policy = s->cfg.maxmemory_policy, rc = 0;
    size_t used = server_used_memory(s);
    if (used <= s->cfg.maxmemory) return 0;
    /* Redis's performEvictions: what is over is measured once, and keys go
     * until their own bytes make it up. Re-measuring would count what the
     * evictions themselves queue for clients (tracking invalidations,
     * keyspace events) and evict on and on. */
    size_t to_free = used - s->cfg.maxmemory, freed = 0;
    /* evictions are nobody's command: a tracking client is told of them
     * before the reply to the command they came before, as in Redis */
    client *cur = s->current_client;
    s->current_client = NULL;
    while (freed < to_free) {
        int db = 0;
        store_key *k = policy == CONFIG_MAXMEMORY_NOEVICTION ? NULL : pick(s, policy, &db);
        if (!k && s->cfg.lazyfree_lazy_eviction && lazyfree_pending_objects(s)) {
            /* what was evicted is still being freed: wait for it, as Redis
             * waits for its lazyfree thread before giving up */
            lazyfree_drain(s);
            if (server_used_memory(s) <= s->cfg.maxmemory) break;
            continue;
        }
        if (!k) {
            rc = -1;
            break;
        }
        freed += evict_one(s, db, k);
        /* a value freed lazily gives its bytes back later: Redis looks at
         * the memory itself then */
        if (s->cfg.lazyfree_lazy_eviction && server_used_memory(s) <= s->cfg.maxmemory) break;
    }
    s->current_client = cur;
    return rc;
}
