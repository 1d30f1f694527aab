/* script_native.c - the lock scripts clients send most, run as C: one
 * registry entry (SHA1 -> adapter) each. Adapters only map KEYS/ARGV onto
 * the store/lock.h operations and write the reply the script would. */
#include <string.h>

#include "lock.h"
#include "num.h"
#include "persist/persist.h"
#include "script.h"

#define KEY(i) (&call->keys[i])
#define ARG(i) (&call->args[i])

/* The shape every adapter needs before it may touch anything. */
static int has(const script_call *call, int nkeys, int nargs)
{
    return call->nkeys >= nkeys && call->nargs >= nargs;
}

static int ttl_arg(const script_call *call, int i, long long *ms)
{
    return store_lock_parse_ttl(ARG(i)->ptr, ARG(i)->len, ms);
}

static store *db(const script_call *call) { return client_db(call->c); }

/* What scripts that hard-code redis.call('publish', ...) name. */
static const resp_slice publish = {"publish", 7};

/* ---- the AOF: what the Lua text's redis.calls would have logged ---- */

static int logging(const script_call *call) { return call->c->srv->aof_on; }

static void log_cmd(const script_call *call, int argc, const resp_slice *argv) { aof_add(call->c, argc, argv); }

/* redis.call('pexpire', key, ms), logged as Redis rewrites it: called
 * right after the store_lock_* call that set that lease. */
static void log_pexpire(const script_call *call, const resp_slice *key)
{
    aof_add_pexpireat(call->c, key, (long long)store_lock_lease_deadline(db(call)));
}

static void log_del(const script_call *call, const resp_slice *key)
{
    resp_slice r[2] = {{"del", 3}, *key};
    log_cmd(call, 2, r);
}

/* redis.call('hincrby', KEYS[1], owner, by) (or 'hset' ... 1). */
static void log_hash(const script_call *call, const char *cmd, const resp_slice *owner, const char *by)
{
    resp_slice r[4] = {{cmd, strlen(cmd)}, *KEY(0), *owner, {by, strlen(by)}};
    log_cmd(call, 4, r);
}

/* An acquire: hincrby (hset when the variant creates with it and the
 * count is 1, a new lock) and pexpire. */
static void log_acquire(const script_call *call, const char *create_event)
{
    int by_hset = 0;
    if (create_event[1] == 's') {   /* "hset" */
        store_key *k = store_lookup(db(call), KEY(0)->ptr, KEY(0)->len);
        size_t vlen;
        const char *v = k ? store_hash_get(k, ARG(1)->ptr, ARG(1)->len, &vlen) : NULL;
        by_hset = v && vlen == 1 && v[0] == '1';
    }
    aof_add_acquire(call->c, by_hset, KEY(0), ARG(1), (long long)store_lock_lease_deadline(db(call)));
}

/* ---- Redisson RLock and node-redisson: reentrant hash locks ---- */

/* KEYS[1]=lock, ARGV[1]=lease, ARGV[2]=owner. nil when acquired, else the
 * holder's PTTL. */
static int rlock_lock_with(const script_call *call, const char *create_event)
{
    long long lease, pttl;
    if (!has(call, 1, 2) || !ttl_arg(call, 0, &lease)) return 0;
    int r = store_lock_acquire(db(call), KEY(0)->ptr, KEY(0)->len, ARG(1)->ptr, ARG(1)->len,
                               lease, create_event, &pttl);
    if (r == STORE_LOCK_FALLBACK) return 0;
    if (r == 1) {
        if (logging(call)) log_acquire(call, create_event);
        reply_null(call->c);
    } else {
        reply_int(call->c, pttl);
    }
    return 1;
}

static int rlock_lock(const script_call *call) { return rlock_lock_with(call, "hincrby"); }
static int rlock_lock_hset(const script_call *call) { return rlock_lock_with(call, "hset"); }

/* Redisson RFencedLock: KEYS[1]=lock, KEYS[2]=token counter, ARGV[1]=lease,
 * ARGV[2]=owner. Acquired: {-1, token} (list_reply) or nil; held by
 * another: {pttl, -1} or the PTTL. */
static int fenced_lock_with(const script_call *call, int list_reply)
{
    long long lease, pttl, token;
    if (logging(call) || !has(call, 2, 2) || !ttl_arg(call, 0, &lease)) return 0;   /* logged by Lua */
    int r = store_lock_fenced_acquire(db(call), KEY(0)->ptr, KEY(0)->len, KEY(1)->ptr, KEY(1)->len,
                                      ARG(1)->ptr, ARG(1)->len, lease, &pttl, &token);
    if (r == STORE_LOCK_FALLBACK) return 0;
    if (list_reply) {
        reply_array(call->c, 2);
        reply_int(call->c, r ? -1 : pttl);
        reply_int(call->c, r ? token : -1);
    } else if (r) {
        reply_null(call->c);
    } else {
        reply_int(call->c, pttl);
    }
    return 1;
}

static int fenced_lock(const script_call *call) { return fenced_lock_with(call, 1); }
static int fenced_lock_nil(const script_call *call) { return fenced_lock_with(call, 0); }

/* How an unlock script variant publishes and remembers its result. */
typedef struct unlock_shape {
    int publish_arg;      /* ARGV index naming PUBLISH/SPUBLISH, or -1: "publish" */
    int latch_ttl_arg;    /* ARGV index of the latch TTL (KEYS[3] latch), or -1 */
    int missing_is_freed; /* Redisson <= 3.10.5: no key publishes and returns 1 */
} unlock_shape;

/* An owner's unlock: hincrby -1, then pexpire (still held) or del, then
 * the latch's set ... px, logged as SET ... PXAT. */
static void log_release(const script_call *call, long long r, int latch)
{
    log_hash(call, "hincrby", ARG(2), "-1");
    if (r == 0) log_pexpire(call, KEY(0));
    else log_del(call, KEY(0));
    if (!latch) return;
    store_key *k = store_lookup(db(call), KEY(2)->ptr, KEY(2)->len);
    char n[24];
    size_t nl = store_ll2str(n, k ? (long long)store_key_deadline(k) : 0LL);
    resp_slice set[5] = {{"SET", 3}, *KEY(2), {r ? "1" : "0", 1}, {"PXAT", 4}, {n, nl}};
    log_cmd(call, 5, set);
}

/* KEYS = lock, channel[, latch]; ARGV[1]=message, ARGV[2]=lease,
 * ARGV[3]=owner. nil: not the owner; 0: still held; 1: freed. */
static int rlock_unlock_shaped(const script_call *call, const unlock_shape *u)
{
    long long lease, latch_ttl = 0, r;
    int nargs = 3;
    if (u->publish_arg >= nargs) nargs = u->publish_arg + 1;
    if (u->latch_ttl_arg >= nargs) nargs = u->latch_ttl_arg + 1;
    if (!has(call, u->latch_ttl_arg >= 0 ? 3 : 2, nargs) || !ttl_arg(call, 1, &lease)) return 0;
    if (u->latch_ttl_arg >= 0 && !ttl_arg(call, u->latch_ttl_arg, &latch_ttl)) return 0;
    const resp_slice *name = u->publish_arg >= 0 ? ARG(u->publish_arg) : &publish;
    const command *pub = script_publish_command(name);
    if (!pub) return 0;   /* Lua raises the error, or does what was asked */
    store *s = db(call);

    if (u->latch_ttl_arg >= 0) {
        int got = store_lock_latch_get(s, KEY(2)->ptr, KEY(2)->len, &r);
        if (got == STORE_LOCK_FALLBACK) return 0;
        if (got) {
            reply_int(call->c, r);
            return 1;
        }
    }
    int released = 0;
    if (u->missing_is_freed && !store_lock_exists(s, KEY(0)->ptr, KEY(0)->len)) {
        r = 1;
    } else {
        released = 1;
        r = store_lock_release(s, KEY(0)->ptr, KEY(0)->len, ARG(2)->ptr, ARG(2)->len, lease);
        if (r == STORE_LOCK_FALLBACK) return 0;
        if (r == -1) {
            reply_null(call->c);
            return 1;
        }
    }
    if (r == 1) script_publish(call->c->srv, pub, name, KEY(1), ARG(0));
    if (u->latch_ttl_arg >= 0) store_lock_latch_set(s, KEY(2)->ptr, KEY(2)->len, r, latch_ttl);
    if (logging(call) && !(u->missing_is_freed && r == 1 && !released))
        log_release(call, r, u->latch_ttl_arg >= 0);
    reply_int(call->c, r);
    return 1;
}

static int rlock_unlock_v1(const script_call *call)
{
    static const unlock_shape u = {-1, -1, 1};
    return rlock_unlock_shaped(call, &u);
}

static int rlock_unlock_v2(const script_call *call)
{
    static const unlock_shape u = {-1, -1, 0};
    return rlock_unlock_shaped(call, &u);
}

static int rlock_unlock_v3(const script_call *call)
{
    static const unlock_shape u = {3, -1, 0};
    return rlock_unlock_shaped(call, &u);
}

static int rlock_unlock_latch(const script_call *call)
{
    static const unlock_shape u = {3, 4, 0};
    return rlock_unlock_shaped(call, &u);
}

static int node_unlock_latch(const script_call *call)
{
    static const unlock_shape u = {-1, 3, 0};
    return rlock_unlock_shaped(call, &u);
}

/* KEYS[1]=lock, ARGV[1]=lease, ARGV[2]=owner: 1 renewed, 0 not held. */
static int rlock_renew(const script_call *call)
{
    long long lease;
    if (!has(call, 1, 2) || !ttl_arg(call, 0, &lease)) return 0;
    int r = store_lock_renew(db(call), KEY(0)->ptr, KEY(0)->len, ARG(1)->ptr, ARG(1)->len, lease);
    if (r == STORE_LOCK_FALLBACK) return 0;
    if (r == 1 && logging(call)) log_pexpire(call, KEY(0));
    reply_int(call->c, r);
    return 1;
}

/* Redisson 3.44+ watchdog: KEYS[i] held by ARGV[i+1], lease ARGV[1]; an
 * array of 1/0. Every key is checked before any is renewed, so a wrong
 * type anywhere leaves the whole call to Lua. */
static int rlock_renew_batch(const script_call *call)
{
    long long lease;
    if (logging(call) || !has(call, 0, call->nkeys + 1) || !ttl_arg(call, 0, &lease)) return 0;   /* logged by Lua */
    store *s = db(call);
    for (int i = 0; i < call->nkeys; i++) {
        store_key *k = store_lookup(s, KEY(i)->ptr, KEY(i)->len);
        if (k && store_key_type(k) != STORE_HASH) return 0;
    }
    reply_array(call->c, call->nkeys);
    for (int i = 0; i < call->nkeys; i++)
        reply_int(call->c, store_lock_renew(s, KEY(i)->ptr, KEY(i)->len,
                                            ARG(i + 1)->ptr, ARG(i + 1)->len, lease));
    return 1;
}

/* KEYS = lock, channel; ARGV[1]=message[, ARGV[2]=publish command]. */
static int rlock_force_unlock_with(const script_call *call, int publish_arg)
{
    if (!has(call, 2, publish_arg + 1)) return 0;
    const resp_slice *name = publish_arg > 0 ? ARG(publish_arg) : &publish;
    const command *pub = script_publish_command(name);
    if (!pub) return 0;
    int r = store_lock_delete(db(call), KEY(0)->ptr, KEY(0)->len);
    if (r && logging(call)) log_del(call, KEY(0));
    if (r) script_publish(call->c->srv, pub, name, KEY(1), ARG(0));
    reply_int(call->c, r);
    return 1;
}

static int rlock_force_unlock(const script_call *call) { return rlock_force_unlock_with(call, 0); }
static int rlock_force_unlock_v2(const script_call *call) { return rlock_force_unlock_with(call, 1); }

/* ---- string token locks: redis-py, redis-semaphore, ioredis examples ---- */

/* KEYS[1]=lock, ARGV[1]=token: delete if it matches; 1 / 0. */
static int token_release(const script_call *call)
{
    if (!has(call, 1, 1)) return 0;
    int r = store_lock_token_delete(db(call), KEY(0)->ptr, KEY(0)->len, ARG(0)->ptr, ARG(0)->len);
    if (r == STORE_LOCK_FALLBACK) return 0;
    if (r == 1 && logging(call)) log_del(call, KEY(0));
    reply_int(call->c, r);
    return 1;
}

/* KEYS[1]=lock, ARGV[1]=token, ARGV[2]=lease: renew if it matches. */
static int token_refresh(const script_call *call)
{
    long long lease;
    if (!has(call, 1, 2) || !ttl_arg(call, 1, &lease)) return 0;
    int r = store_lock_token_pexpire(db(call), KEY(0)->ptr, KEY(0)->len,
                                     ARG(0)->ptr, ARG(0)->len, lease);
    if (r == STORE_LOCK_FALLBACK) return 0;
    if (r == 1 && logging(call)) log_pexpire(call, KEY(0));
    reply_int(call->c, r);
    return 1;
}

/* redlock 4 release: every KEYS[i] holding ARGV[1] is deleted; the count.
 * All keys are checked first (GET would raise WRONGTYPE mid-loop). */
static int redlock_release(const script_call *call)
{
    if (logging(call) || !has(call, 0, 1)) return 0;   /* logged by Lua */
    store *s = db(call);
    for (int i = 0; i < call->nkeys; i++)
        if (store_lock_token_matches(s, KEY(i)->ptr, KEY(i)->len, ARG(0)->ptr, ARG(0)->len) ==
            STORE_LOCK_FALLBACK)
            return 0;
    long long n = 0;
    for (int i = 0; i < call->nkeys; i++)
        n += store_lock_token_delete(s, KEY(i)->ptr, KEY(i)->len, ARG(0)->ptr, ARG(0)->len);
    reply_int(call->c, n);
    return 1;
}

static const script_native natives[] = {
    {"9401052d872adfd0179ef8c8e8c028512707629a", rlock_lock_hset, "Redisson RLock lock 3.1.0-3.12.2"},
    {"dad0f8d619e548e04f21fb48d50be5034df3adae", rlock_lock, "Redisson RLock lock 3.12.3-3.18.1, RSpinLock"},
    {"149c5a8bf18676fd99e9e6e24923bd64d9b62f94", rlock_lock, "Redisson RLock lock 3.19.0-"},
    {"1aa70d3714f14a74e5d432283dae75da8fd9f1f8", rlock_lock, "node-redisson lock"},
    {"49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45", fenced_lock, "Redisson RFencedLock lock 3.19.0- (token reply)"},
    {"46b5551ba403d6152a7a6eca122e08728d6c8c66", fenced_lock_nil, "Redisson RFencedLock lock 3.19.0- (nil reply)"},
    {"93cfc048f82624d1670a310aa0ad58918c0824a5", rlock_unlock_v1, "Redisson RLock unlock 3.2.0-3.10.5"},
    {"3ffe249c16dee540ac8ab32e39bd408626b9aff7", rlock_unlock_v2, "Redisson RLock unlock 3.10.6-3.21.3"},
    {"778cea8aada230ae060b432fc333adaec85f2f4c", rlock_unlock_v3, "Redisson RLock unlock 3.22.0-3.23.5"},
    {"6866459238a13a701d42f4971f12d9f3a50e2442", rlock_unlock_latch, "Redisson RLock unlock 3.24.0-"},
    {"4a66e59a59b914f2e818c168080109f73e3b4996", node_unlock_latch, "node-redisson unlock"},
    {"8e19a1ddbdee9138df9f32a480c57addab4353d1", rlock_renew, "Redisson RLock renew 3.8.1-3.43.0"},
    {"998172e59d96b314fb35ad302575fa19c8f518f2", rlock_renew, "node-redisson renew"},
    {"6a3d31570dc6f4b0bd32bcdc8e75667747c6f635", rlock_renew_batch, "Redisson LockTask batched renew 3.44.0-"},
    {"7e9c80b3d786b95d5d4aaf8fd73adb9775fa6fb1", rlock_force_unlock, "Redisson RLock forceUnlock 3.1.0-3.21.3"},
    {"605e338249a7a1d40df83b04f7658354f883b41b", rlock_force_unlock_v2, "Redisson RLock forceUnlock 3.22.0-"},
    {"95d09a0dc5130d77bf36b4cb795f78f8839bc372", rlock_force_unlock, "node-redisson forceUnlock"},
    {"c3f8721cbb97f72bc19e972846bd7aaf91901658", token_release, "redis-py Lock.release"},
    {"1cac51482acf5858da00f6d685d68f886cd6b6b2", token_refresh, "redis-py Lock.reacquire"},
    {"7157921a7cc7cfba979acf6d63f073151df17d12", token_release, "redis-semaphore Mutex release"},
    {"594683e49a64ebaf975caf5f8079a1d097c438f1", token_refresh, "redis-semaphore Mutex refresh"},
    {"cf0e94b2e9ffc7e04395cf88f7583fc309985910", token_release, "compare-and-delete (ioredis/node-redis docs)"},
    {"0f0f23b9048b36752b5be114f357ba083449f908", redlock_release, "redlock 4 release"},
};
#define NNATIVES (sizeof(natives) / sizeof(natives[0]))

const script_native *script_native_find(const char *sha)
{
    for (size_t i = 0; i < NNATIVES; i++)
        if (memcmp(natives[i].sha, sha, 40) == 0) return &natives[i];
    return NULL;
}

size_t script_native_count(void) { return NNATIVES; }
const script_native *script_native_at(size_t i) { return i < NNATIVES ? &natives[i] : NULL; }
