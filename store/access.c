/* access.c - what Redis's OBJECT reports about a key: its access clock
 * (robj.lru: LRU seconds or LFU minutes and counter) and its encoding. */
#include "num.h"
#include "store_internal.h"
#include "set.h"
#include "zset.h"

#include <string.h>

#define LRU_CLOCK_MAX ((1u << 24) - 1)
#define LFU_INIT_VAL 5
#define LFU_MINUTES_MAX 65535u

const store_env store_default_env = {
    .hash_max_listpack_entries = 512,
    .hash_max_listpack_value = 64,
    .zset_max_listpack_entries = 128,
    .zset_max_listpack_value = 64,
    .set_max_intset_entries = 512,
    .lfu = 0,
    .lfu_log_factor = 10,
    .lfu_decay_time = 1,
};

static uint32_t lru_clock(uint64_t ms) { return (uint32_t)(ms / 1000) & LRU_CLOCK_MAX; }
static uint32_t lfu_minutes(uint64_t ms) { return (uint32_t)(ms / 60000) & LFU_MINUTES_MAX; }

void store_env_set_clock(store_env *env, uint64_t ms)
{
    env->lru_clock = lru_clock(ms);
    env->lfu_minutes = lfu_minutes(ms);
}

/* The stamps now: the server's coarse clock, else the store's own. */
static uint32_t now_lru(store *s) { return s->env ? s->env->lru_clock : lru_clock(store_now(s)); }
static uint32_t now_minutes(store *s) { return s->env ? s->env->lfu_minutes : lfu_minutes(store_now(s)); }

uint32_t store_key_access_clock(const store_key *k)
{
    const unsigned char *p = store_clock_at(k);
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

static void clock_put(store_key *k, uint32_t v) { store_clock_put(store_clock_at(k), v); }

void store_key_set_idle(store *s, store_key *k, long long seconds)
{
    if (store_env_of(s)->lfu) return;
    /* Redis's arithmetic to the bit: seconds * 1000 / 1000 wrapping as its
     * signed product does, one wrap of the clock added, then the 24-bit
     * field keeps the low bits of whatever that gives. */
    long long idle = (long long)((unsigned long long)seconds * 1000u) / 1000;
    long long at = (long long)((unsigned long long)lru_clock(store_now(s)) - (unsigned long long)idle);
    if (at < 0) at += LRU_CLOCK_MAX;
    clock_put(k, (uint32_t)((unsigned long long)at & LRU_CLOCK_MAX));
}

void store_key_set_freq(store *s, store_key *k, unsigned freq)
{
    if (store_env_of(s)->lfu) clock_put(k, lfu_minutes(store_now(s)) << 8 | (freq & 255));
}

void store_key_keep_access(store_key *dst, const store_key *src)
{
    clock_put(dst, store_key_access_clock(src));
}

uint32_t store_clock_new_slow(store *s)
{
    return store_env_of(s)->lfu ? now_minutes(s) << 8 | LFU_INIT_VAL : now_lru(s);
}

/* Minutes since ldt, the 16-bit clock taken to have wrapped at most once. */
static uint32_t lfu_elapsed(uint32_t now, uint32_t ldt)
{
    return now >= ldt ? now - ldt : LFU_MINUTES_MAX - ldt + now;
}

static unsigned lfu_decayed(const store_env *env, uint32_t clock, uint32_t minutes)
{
    unsigned counter = clock & 255;
    uint32_t periods =
        env->lfu_decay_time ? lfu_elapsed(minutes, clock >> 8) / (uint32_t)env->lfu_decay_time : 0;
    return periods > counter ? 0 : counter - periods;
}

/* A uniform double in [0, 1] (xorshift64*), where Redis draws rand(). */
static double lfu_coin(store *s)
{
    uint64_t x = s->lfu_rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->lfu_rng = x;
    return (double)((x * UINT64_C(0x2545f4914f6cdd1d)) >> 11) / (double)(UINT64_C(1) << 53);
}

/* Redis's logarithmic increment: the higher the counter, the less likely. */
static unsigned lfu_incr(store *s, const store_env *env, unsigned counter)
{
    if (counter == 255) return 255;
    double base = counter > LFU_INIT_VAL ? (double)(counter - LFU_INIT_VAL) : 0;
    if (lfu_coin(s) < 1.0 / (base * env->lfu_log_factor + 1)) counter++;
    return counter;
}

void store_key_touch(store *s, store_key *k)
{
    const store_env *env = s->env;
    if (env && env->no_touch) return;
    if (env && !env->lfu) {   /* every lookup (the lock path): a copy and no more */
        clock_put(k, env->lru_clock);
        return;
    }
    env = store_env_of(s);
    if (!env->lfu) {
        clock_put(k, now_lru(s));
        return;
    }
    uint32_t minutes = now_minutes(s);
    clock_put(k, minutes << 8 | lfu_incr(s, env, lfu_decayed(env, store_key_access_clock(k), minutes)));
}

uint64_t store_key_idle_seconds(store *s, const store_key *k)
{
    uint32_t now = lru_clock(store_now(s)), then = store_key_access_clock(k);
    /* Redis's estimateObjectIdleTime: the 24-bit clock wrapped at most once. */
    return now >= then ? now - then : (uint64_t)now + (LRU_CLOCK_MAX - then);
}

unsigned store_key_freq(store *s, const store_key *k)
{
    return lfu_decayed(store_env_of(s), store_key_access_clock(k), lfu_minutes(store_now(s)));
}

/* tryObjectEncoding's choice for a string SET stores: an integer that fits
 * a long, else the embedded form up to 44 bytes; the other forms are how
 * the commands that made them leave it (store.h). */
static const char *string_encoding(const store_key *k)
{
    size_t len;
    long long v;
    const char *p = store_string_get(k, &len);
    store_str_form form = store_string_form(k);
    if (form == STORE_STR_RAW) return "raw";
    if (form == STORE_STR_AS_SET && len <= 20 && store_str2ll(p, len, &v)) return "int";
    return len <= 44 ? "embstr" : "raw";
}

const char *store_key_encoding(const store_key *k)
{
    switch (k->type) {
    case STORE_STRING: return string_encoding(k);
    case STORE_HASH: return k->big ? "hashtable" : "listpack";
    case STORE_LIST: return "quicklist";
    case STORE_ZSET: return k->big ? "skiplist" : "listpack";
    case STORE_SET: return store_set_is_intset(store_set_of_const(k)) ? "intset" : "hashtable";
    case STORE_STREAM: return "stream";
    }
    return "unknown";
}

/* zsetAdd's test before a new member goes in (ZADD on a new key with too
 * many or too long members is created a skiplist: the same test). */
void store_zset_note_add(store *s, store_key *k, size_t mlen)
{
    const store_env *env = store_env_of(s);
    if ((long long)store_zset_len(k) + 1 > env->zset_max_listpack_entries ||
        (long long)mlen > env->zset_max_listpack_value)
        k->big = 1;
}
