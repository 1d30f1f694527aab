/* server.c - the server's lifetime: listeners, the per-iteration flush,
 * the clock the keyspace sees, the one expiry timer, and shutdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "commands/commands.h"
#include "dict.h"
#include "mem.h"
#include "pubsub.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "server.h"
#include "scripting/script.h"
#include "tls.h"

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Wall time at start plus monotonic elapsed: absolute time (EXPIREAT and
 * PEXPIRETIME speak unix time) that never jumps back with the wall clock. */
static uint64_t real_clock_us(const server *s)
{
    return s->clock_wall0_us + (mono_us() - s->clock_mono0_us);
}

uint64_t server_real_ms(server *s) { return real_clock_us(s) / 1000u; }

/* The one clock keys, TIME and MONITOR read: the real one shifted by
 * LATCHD.CLOCK ADVANCE, or held still by FREEZE (and by fuzzing). */
uint64_t server_clock_us(server *s)
{
    if (s->frozen_now_ms) return s->frozen_now_ms * 1000u;
    return (uint64_t)((int64_t)real_clock_us(s) + s->clock_offset_ms * 1000);
}

uint64_t server_clock_ms(server *s) { return server_clock_us(s) / 1000u; }

void server_clock_freeze(server *s)
{
    if (!s->frozen_now_ms) s->frozen_now_ms = server_clock_ms(s);
    server_expire_reschedule(s);
}

/* The clock goes on from the frozen instant: what was advanced stays. */
void server_clock_resume(server *s)
{
    if (!s->frozen_now_ms) return;
    s->clock_offset_ms = (int64_t)s->frozen_now_ms - (int64_t)server_real_ms(s);
    s->frozen_now_ms = 0;
    server_expire_reschedule(s);
}

/* Reclaim what is due in every database in use. */
static void expire_due_all(server *s)
{
    for (int i = 0; i < s->ndbs; i++)
        if (s->dbs[i].st) store_expire_due(s->dbs[i].st);
}

static uint64_t next_due_all(const server *s)
{
    uint64_t due = UINT64_MAX;
    for (int i = 0; i < s->ndbs; i++) {
        if (!s->dbs[i].st) continue;
        uint64_t d = store_next_due(s->dbs[i].st);
        if (d < due) due = d;
    }
    return due;
}

/* Time jumps forward: the wheel reclaims (and announces) every key due by
 * then, just as its timer would have while that time passed. */
void server_clock_advance(server *s, uint64_t ms)
{
    if (s->frozen_now_ms) s->frozen_now_ms += ms;
    else s->clock_offset_ms += (int64_t)ms;
    if (s->active_expire && !block_pause_active(s)) expire_due_all(s);
    block_expire_due(s);   /* blocked commands time out by the same clock */
    server_expire_reschedule(s);
}

uint64_t server_now_ms(server *s)
{
    /* Redis stops the clock for a running script: a key cannot expire
     * between two of its commands. */
    if (s->scripts && s->scripts->running) return s->scripts->started_ms;
    return server_clock_ms(s);
}

static void db_bind_release(server *s, server_db_slot *db);

void server_env_sync(server *s)
{
    const latchd_config *cfg = &s->cfg;
    s->env.hash_max_listpack_entries = cfg->hash_max_listpack_entries;
    s->env.hash_max_listpack_value = cfg->hash_max_listpack_value;
    s->env.zset_max_listpack_entries = cfg->zset_max_listpack_entries;
    s->env.zset_max_listpack_value = cfg->zset_max_listpack_value;
    s->env.set_max_intset_entries = cfg->set_max_intset_entries;
    s->env.lfu = cfg->maxmemory_policy == CONFIG_MAXMEMORY_VOLATILE_LFU ||
                 cfg->maxmemory_policy == CONFIG_MAXMEMORY_ALLKEYS_LFU;
    s->env.lfu_log_factor = cfg->lfu_log_factor;
    s->env.lfu_decay_time = cfg->lfu_decay_time;
    for (int i = 0; i < s->ndbs; i++)
        if (s->dbs[i].st) db_bind_release(s, &s->dbs[i]);
    stats_thresholds_sync(s);   /* the slowlog and latency thresholds in ticks */
    slowlog_trim(s);
    clientmem_sync(s);
}

static uint64_t store_clock(void *ctx) { return server_now_ms(ctx); }

/* Lazy (on access) and active (wheel) reclaims both land here. */
static void on_key_expired(const char *key, size_t len, void *ctx)
{
    server_db_slot *db = ctx;
    db->srv->stat_expired++;
    store_notify(db->st, STORE_EV_EXPIRED, "expired", key, len);
    if (db->srv->aof_on) aof_key_deleted(db->srv, db->id, key, len, db->srv->cfg.lazyfree_lazy_expire);
}

/* Every keyspace event is a change to WATCH and tracking (but a read's
 * keymiss), then maybe a notification. */
/* Those who wait on a changed key: WATCH, CLIENT TRACKING, blocked clients. */
static void __attribute__((noinline)) key_observed(server *s, int db, int cls, const char *key, size_t klen)
{
    server_key_modified(s, db, key, klen, cls == STORE_EV_EXPIRED);
    if (s->blocked_clients) block_key_signal(s, db, key, klen);
}

/* On the lock path this runs a few times per command: with nobody
 * watching, tracking, blocked or listening, it is a count and three tests. */
static void on_key_event(int cls, const char *event, const char *key, size_t klen, void *ctx)
{
    server_db_slot *db = ctx;
    server *s = db->srv;
    if (cls != NOTIFY_KEY_MISS) {
        s->dirty += cls != NOTIFY_NEW;   /* one change, one count */
        if (s->watched_keys | s->tracking_keys | s->tracking_prefixes | s->blocked_clients)
            key_observed(s, db->id, cls, key, klen);
    }
    if (s->cfg.notify_keyspace_events & cls) notify_keyspace_event(s, db->id, cls, event, key, klen);
}

/* Expired and replaced values (Redis's dbAsyncDelete under
 * lazyfree-lazy-expire, freeObjAsync under lazyfree-lazy-server-del). */
static int on_value_release(store *st, store_key *k, store_release_why why, void *ctx)
{
    server *s = ((server_db_slot *)ctx)->srv;
    int lazy = why == STORE_RELEASE_EXPIRED ? s->cfg.lazyfree_lazy_expire : s->cfg.lazyfree_lazy_server_del;
    return lazy && lazyfree_take_value(s, st, k);
}

/* Only while one of the two is on: otherwise a released value costs the
 * store one test of a NULL hook. */
static void db_bind_release(server *s, server_db_slot *db)
{
    int on = s->cfg.lazyfree_lazy_expire || s->cfg.lazyfree_lazy_server_del;
    store_set_release_hook(db->st, on ? on_value_release : NULL, db);
}

/* The hooks are bound to the slot, not the store: after SWAPDB a store's
 * events carry its new number. */
static void db_bind(server_db_slot *db)
{
    store_set_expired_hook(db->st, on_key_expired, db);
    store_set_event_hook(db->st, on_key_event, db);
    db_bind_release(db->srv, db);
}

store *server_db(server *s, long long id)
{
    if (id < 0 || id >= s->ndbs) return NULL;
    server_db_slot *db = &s->dbs[id];
    if (!db->st) {
        db->st = store_create(store_clock, s);
        store_set_env(db->st, &s->env);
        store_avoid_resize(db->st, s->resize_avoided);
        db_bind(db);
    }
    return db->st;
}

static void flush_all(server *s, int async)
{
    multi_db_touched(s, -1, -1);
    if (!async) lazyfree_drain(s);
    for (int i = 0; i < s->ndbs; i++) {
        store *db = server_db_if_used(s, i);
        if (!db) continue;
        if (async) lazyfree_flush_db(s, i);
        else store_flush(db);
    }
    block_db_flushed(s, -1);
    tracking_flushed(s);   /* Redis's emptyData: the null invalidation, the table emptied */
}

void server_flush_all(server *s) { flush_all(s, 0); }
void server_flush_all_async(server *s) { flush_all(s, 1); }

void server_db_swap(server *s, int a, int b)
{
    server_db(s, a);   /* clients on either number must find a store there */
    server_db(s, b);
    store *t = s->dbs[a].st;
    s->dbs[a].st = s->dbs[b].st;
    s->dbs[b].st = t;
    db_bind(&s->dbs[a]);
    db_bind(&s->dbs[b]);
    if (s->blocked_clients) block_db_swapped(s, a, b);
}

/* Keys, values and client structures; buffers are not walked per command. */
size_t server_used_memory(const server *s)
{
    size_t n = clientmem_total(s);
    for (int i = 0; i < s->ndbs; i++)
        if (s->dbs[i].st) n += store_used_memory(s->dbs[i].st);
    if (s->lazy) n += lazyfree_charged(s);
    return n;
}


/* The timer only runs while the clock does and active expiry is on
 * (DEBUG SET-ACTIVE-EXPIRE 0 leaves keys to lazy expiry, as in Redis). */
static int expire_timer_wanted(const server *s)
{
    return s->active_expire && !s->frozen_now_ms && !block_pause_active((server *)s);
}

static uint64_t timer_due(const server *s)
{
    uint64_t due = expire_timer_wanted(s) ? next_due_all(s) : UINT64_MAX;
    if (!s->frozen_now_ms) {
        uint64_t b = block_next_due(s);   /* blocked commands' timeouts, the pause's end */
        if (b < due) due = b;
        if (s->tls && (b = tls_next_due(s)) < due) due = b;   /* TLS handshakes' deadlines */
    }
    return due;
}

static void on_expire_timer(uv_timer_t *t)
{
    server *s = t->data;
    s->expire_timer_due = UINT64_MAX;
    block_expire_due(s);
    if (s->tls) tls_expire_due(s);
    if (expire_timer_wanted(s)) {
        uint64_t t0 = stats_ticks();
        expire_due_all(s);
        uint64_t took = stats_ticks() - t0;   /* the latency monitor's "expire-cycle" */
        if (took >= s->latency_ticks) latency_add_sample(s, "expire-cycle", stats_ticks_to_us(took) / 1000);
    }
    block_run_unblocked(s);
    /* Timers run before the loop polls, and the per-iteration flush comes
     * after it: send "expired" events now, not after the next wake-up. */
    net_flush_pending(s);
    server_expire_rearm(s);
}

/* One uv timer, armed at the wheel's next due slot: no periodic tick, so an
 * idle server sleeps until the next deadline. */
void server_expire_rearm(server *s)
{
    uint64_t due = timer_due(s);
    if (due == s->expire_timer_due) return;
    s->expire_timer_due = due;
    if (due == UINT64_MAX) {
        uv_timer_stop(&s->expire_timer);
        return;
    }
    uint64_t now = server_now_ms(s);
    uv_update_time(s->loop);
    uv_timer_start(&s->expire_timer, on_expire_timer, due > now ? due - now : 0, 0);
}

/* The clock or the expiry mode changed: the armed delay is stale. */
void server_expire_reschedule(server *s)
{
    s->expire_timer_due = UINT64_MAX;
    uv_timer_stop(&s->expire_timer);
    server_expire_rearm(s);
}

/* CONFIG timeout: idle clients are closed, checked once a second and only
 * while a timeout is set, so an idle server still sleeps. Subscribers and
 * blocked clients are idle by nature and stay, as in Redis. */
static void on_idle_check(uv_timer_t *t)
{
    server *s = t->data;
    if (s->cron_paused) return;
    uint64_t limit = (uint64_t)s->cfg.timeout * 1000u, now = server_now_ms(s);
    if (limit == 0) return;
    for (client *c = s->clients, *next; c; c = next) {
        next = c->next;
        if (!(c->flags & (CLIENT_PUBSUB | CLIENT_BLOCKED)) && now - c->last_ms > limit) {
            log_msg(s, LOG_VERBOSE, "Closing idle client");
            client_close(c);
        }
    }
}

void server_idle_timer_update(server *s)
{
    if (s->cfg.timeout > 0 && !uv_is_active((uv_handle_t *)&s->idle_timer))
        uv_timer_start(&s->idle_timer, on_idle_check, 1000, 1000);
    else if (s->cfg.timeout == 0)
        uv_timer_stop(&s->idle_timer);
}

/* A client over its soft output limit is closed once its seconds pass even
 * when nothing more is sent to it, as Redis's clientsCron does: checked ten
 * times a second, and only while some client is over. */
static void on_obuf_check(uv_timer_t *t)
{
    server *s = t->data;
    if (s->cron_paused) return;
    int over = 0;
    for (client *c = s->clients, *next; c; c = next) {
        next = c->next;
        if (!c->obuf_soft_since_ms) continue;
        if (!client_output_within_limit(c)) client_close(c);
        else over |= c->obuf_soft_since_ms != 0;
    }
    if (!over) uv_timer_stop(t);
}

static void on_shrink_check(uv_timer_t *t)
{
    server *s = t->data;
    uint64_t now = server_now_ms(s);
    int kept = 0;
    for (client *c = s->clients; c; c = c->next)
        if (c->flags & CLIENT_BIG_BUFFERS) kept |= net_release_quiet_buffers(c, now);
    if (!kept) uv_timer_stop(t);
}

void server_shrink_watch(server *s)
{
    if (!uv_is_active((uv_handle_t *)&s->shrink_timer)) uv_timer_start(&s->shrink_timer, on_shrink_check, 1000, 1000);
}

void server_obuf_watch(server *s)
{
    if (!uv_is_active((uv_handle_t *)&s->obuf_timer)) uv_timer_start(&s->obuf_timer, on_obuf_check, 100, 100);
}

static void on_check(uv_check_t *h)
{
    server *s = h->data;
    if (s->block) block_run_unblocked(s);
    net_flush_pending(s);
    server_expire_rearm(s);
    server_sampling_wake(s);
}

/* busy-poll-usecs: after a burst of requests that came within that many
 * µs of the one before (requests arriving that fast), the loop polls
 * without sleeping for that long, and again after each burst it finds.
 * The next request then finds the server awake, and its sender is spared
 * the interrupt that wakes a sleeping CPU (on a virtual machine a VM exit,
 * paid in the sender's system time). A slower trickle, or an idle server,
 * never polls. */
void server_serve(server *s)
{
    uint64_t quiet_since = 0;
    (void)affinity_apply(s->cfg.server_cpulist);   /* the loop's thread, as Redis's main thread */
    for (;;) {
        uint64_t in = s->stat_net_in;
        if (!uv_run(s->loop, UV_RUN_ONCE)) return;
        uint64_t window = (uint64_t)s->cfg.busy_poll_usecs;
        if (!window || s->stat_net_in == in) continue;
        uint64_t now = mono_us();
        int fast = now - quiet_since <= window;
        quiet_since = now;
        if (!fast) continue;
        for (in = s->stat_net_in; mono_us() - quiet_since < window;) {
            if (!uv_run(s->loop, UV_RUN_NOWAIT)) return;
            if (s->stat_net_in != in) {
                in = s->stat_net_in;
                quiet_since = mono_us();
            }
        }
    }
}

/* Redis's rule: "yes" always; "clients" for a connected client's RESTORE
 * (not a load, not the AOF loader or the Raft applier: Redis's loading and
 * master link) whose user lacks skip-sanitize-payload; a script's RESTORE
 * is its caller's. */
void server_count_deep_checks(server *s, const client *c, size_t checks)
{
    int mode = s->cfg.sanitize_dump_payload;
    if (mode == CONFIG_SANITIZE_CLIENTS && c) {
        const client *who = s->current_client ? s->current_client : c;
        if ((who->flags & CLIENT_DETACHED) || (who->user && (who->user->flags & ACL_USER_SKIP_SANITIZE))) return;
    } else if (mode != CONFIG_SANITIZE_YES) {
        return;
    }
    s->stat_dump_payload_sanitizations += checks;
}

static void make_run_id(char *dst)
{
    static const char hex[] = "0123456789abcdef";
    uint8_t rnd[20];
    if (uv_random(NULL, NULL, rnd, sizeof(rnd), 0, NULL) != 0) memset(rnd, 0x5a, sizeof(rnd));
    for (int i = 0; i < 20; i++) {
        dst[2 * i] = hex[rnd[i] >> 4];
        dst[2 * i + 1] = hex[rnd[i] & 15];
    }
    dst[40] = '\0';
}

/* Once per process, before the first server has a dict: every server's
 * dicts hash with it, so it must never change under one of them. */
static void seed_hashing(void)
{
    uint8_t seed[16];
    if (uv_random(NULL, NULL, seed, sizeof(seed), 0, NULL) == 0) store_dict_set_seed(seed);
}

static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

int server_rehash_some(server *s, uint64_t budget_ns)
{
    /* a fork child shares the pages: moving every key's node would copy
     * them all (Redis's databasesCron skips it too) */
    if (!s->cfg.activerehashing || s->rdb_child || aof_rewriting(s)) return 0;
    uint64_t start = uv_hrtime();
    for (int id = 0; id < s->cfg.databases; id++) {
        store *st = server_db_if_used(s, id);
        /* 100 buckets between clock reads, as Redis's dictRehashMilliseconds */
        while (st && store_rehash(st, 100))
            if (uv_hrtime() - start >= budget_ns) return 1;
    }
    return 0;
}

void server_children_changed(server *s)
{
    int avoid = s->rdb_child || aof_rewriting(s);
    if (avoid == s->resize_avoided) return;
    s->resize_avoided = avoid;
    s->env.no_touch = avoid;
    for (int id = 0; id < s->ndbs; id++) {
        store *st = server_db_if_used(s, id);
        if (st) store_avoid_resize(st, avoid);
    }
}

/* splitmix64: cheap, and every seed gives a full-period sequence. */
uint64_t server_random(server *s)
{
    uint64_t z = (s->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

int server_init(server *s, uv_loop_t *loop, const latchd_config *cfg)
{
    memset(s, 0, sizeof(*s));
    s->loop = loop;
    s->cfg = *cfg;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->clock_wall0_us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    s->clock_mono0_us = mono_us();
    s->start_ms = s->clock_wall0_us / 1000u;
    s->lastsave_s = s->start_ms / 1000;
    s->rdb_last_ok = 1;
    s->rdb_cow_fd = -1;
    s->rdb_last_bgsave_s = -1;
    s->reply_peak_reset_ms = NET_REPLY_PEAK_RESET_MS;
    s->reply_resizing = 1;
    s->expire_timer_due = UINT64_MAX;
    s->active_expire = 1;
    make_run_id(s->run_id);
    if (uv_random(NULL, NULL, &s->rng, sizeof(s->rng), 0, NULL) != 0) s->rng = s->clock_mono0_us;
    pthread_once(&seed_once, seed_hashing);
    command_table_init();
    pubsub_init(s);
    multi_init(s);
    tracking_init(s);
    stats_init(s);
    slowlog_init(s);
    latency_init(s);
    acl_init(s);
    server_env_sync(s);
    store_env_set_clock(&s->env, server_now_ms(s));
    s->ndbs = (int)cfg->databases;
    s->dbs = mem_calloc((size_t)s->ndbs, sizeof(*s->dbs));
    for (int i = 0; i < s->ndbs; i++) s->dbs[i] = (server_db_slot){.srv = s, .id = i};
    server_db(s, 0);
    scripts_init(s);
    s->startup_memory = s->stat_peak_memory = server_used_memory(s);
    uv_check_init(loop, &s->flush_check);
    s->flush_check.data = s;
    uv_check_start(&s->flush_check, on_check);
    uv_timer_init(loop, &s->expire_timer);
    s->expire_timer.data = s;
    uv_timer_init(loop, &s->idle_timer);
    s->idle_timer.data = s;
    uv_timer_init(loop, &s->tracking_timer);
    s->tracking_timer.data = s;
    server_idle_timer_update(s);
    uv_timer_init(loop, &s->obuf_timer);
    s->obuf_timer.data = s;
    uv_timer_init(loop, &s->shrink_timer);
    s->shrink_timer.data = s;
    server_sampling_init(s);
    rdb_save_points_update(s);
    return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
    server *s = h->data;
    s->closing_handles--;
    free(h);
}

static void close_listener(server *s, uv_tcp_t *t)
{
    t->data = s;
    s->closing_handles++;
    uv_close((uv_handle_t *)t, on_listener_closed);
}

static void close_listeners(server *s)
{
    for (int i = 0; i < s->nlisteners; i++) close_listener(s, s->listeners[i]);
    s->nlisteners = 0;
    for (int i = 0; i < s->ntls_listeners; i++) close_listener(s, s->tls_listeners[i]);
    s->ntls_listeners = 0;
}

/* "-::1" marks an address that may be missing (no IPv6), as in Redis.
 * tls: a tls-port listener, else a plain one (whose port 0 picks one). */
static int listen_tcp(server *s, const char *addr, int port, int tls)
{
    int optional = addr[0] == '-';
    if (optional) addr++;
    /* Redis's wildcards: "*" is every IPv4 address, "::*" every IPv6 one. */
    if (!strcmp(addr, "*")) addr = "0.0.0.0";
    else if (!strcmp(addr, "::*")) addr = "::";
    struct sockaddr_storage ss;
    int rc = strchr(addr, ':') ? uv_ip6_addr(addr, port, (struct sockaddr_in6 *)&ss)
                               : uv_ip4_addr(addr, port, (struct sockaddr_in *)&ss);
    uv_tcp_t **set = tls ? s->tls_listeners : s->listeners;
    int *n = tls ? &s->ntls_listeners : &s->nlisteners;
    if (rc == 0 && *n >= CONFIG_MAX_BIND) rc = UV_ENOBUFS;
    if (rc != 0) goto fail;
    uv_tcp_t *t = mem_alloc(sizeof(*t));
    if ((rc = uv_tcp_init(s->loop, t)) != 0) {
        free(t);
        goto fail;
    }
    t->data = s;
    rc = uv_tcp_bind(t, (struct sockaddr *)&ss, strchr(addr, ':') ? UV_TCP_IPV6ONLY : 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)t, 511, tls ? net_on_tls_connection : net_on_connection);
    if (rc != 0) {
        close_listener(s, t);
        goto fail;
    }
    set[(*n)++] = t;
    if (!tls && s->port == 0) {
        int len = sizeof(ss);
        uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len);
        s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    }
    return 0;
fail:
    log_msg(s, optional ? LOG_NOTICE : LOG_WARNING, "Could not create server %s listening socket %s:%d: %s",
            tls ? "TLS" : "TCP", addr, port, uv_strerror(rc));
    return optional ? 0 : -1;
}

/* Every bind address on cfg's port (0: the first picks one, unless a
 * tls-port is set: then, as in Redis, port 0 is TLS only) and on its
 * tls-port; -1 with none left listening if one that must work does not. */
static int listen_all(server *s)
{
    const latchd_config *cfg = &s->cfg;
    int plain = cfg->port != 0 || cfg->tls_port == 0;
    s->port = cfg->port;
    for (int i = 0; i < cfg->nbind; i++) {
        if ((plain && listen_tcp(s, cfg->bind[i], s->port, 0) != 0) ||
            (cfg->tls_port && listen_tcp(s, cfg->bind[i], cfg->tls_port, 1) != 0)) {
            close_listeners(s);
            return -1;
        }
    }
    if (s->nlisteners + s->ntls_listeners == 0 && cfg->nbind > 0) return -1;
    return 0;
}

int server_rebind(server *s)
{
    /* the old sockets go first: the new set may reuse their addresses */
    close_listeners(s);
    return listen_all(s);
}

static int listen_unix(server *s)
{
    const char *path = s->cfg.unixsocket;
    unlink(path);
    int rc = uv_pipe_init(s->loop, &s->unix_listener, 0);
    if (rc != 0) goto fail;
    s->unix_listener.data = s;
    rc = uv_pipe_bind(&s->unix_listener, path);
    if (rc == 0 && s->cfg.unixsocketperm && chmod(path, (mode_t)s->cfg.unixsocketperm) != 0) rc = uv_translate_sys_error(errno);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&s->unix_listener, 511, net_on_connection);
    if (rc != 0) {
        server_close_handle(s, (uv_handle_t *)&s->unix_listener);
        goto fail;
    }
    s->has_unix = 1;
    log_msg(s, LOG_NOTICE, "The server is now ready to accept connections at %s", path);
    return 0;
fail:
    log_msg(s, LOG_WARNING, "Failed opening Unix socket: %s", uv_strerror(rc));
    return -1;
}

#define RESERVED_FDS 32   /* Redis's CONFIG_MIN_RESERVED_FDS: listeners, logs */

/* Lower maxclients to what `have` descriptors allow, as Redis does. */
static int shrink_maxclients(server *s, rlim_t have, rlim_t want, int why)
{
    long long asked = s->cfg.maxclients;
    if (have <= RESERVED_FDS) {
        log_msg(s, LOG_WARNING, "Your current 'ulimit -n' of %llu is not enough for the server to start. "
                "Please increase your open file limit to at least %llu. Exiting.",
                (unsigned long long)have, (unsigned long long)want);
        return -1;
    }
    s->cfg.maxclients = (long long)(have - RESERVED_FDS);
    log_msg(s, LOG_WARNING, "You requested maxclients of %lld requiring at least %llu max file descriptors.",
            asked, (unsigned long long)want);
    log_msg(s, LOG_WARNING, "Server can't set maximum open files to %llu because of OS error: %s.",
            (unsigned long long)want, strerror(why));
    log_msg(s, LOG_WARNING, "Current maximum open files is %llu. maxclients has been reduced to %lld to "
            "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
            (unsigned long long)have, s->cfg.maxclients);
    return 1;
}

/* Redis's adjustOpenFilesLimit: raise RLIMIT_NOFILE to maxclients + 32, or
 * failing that to the hard limit, and fit maxclients into what we got.
 * 0 if maxclients fits as configured, 1 if it was lowered, -1 if not even
 * the reserved descriptors are there. */
int server_fit_maxclients(server *s)
{
    rlim_t want = (rlim_t)s->cfg.maxclients + RESERVED_FDS;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return shrink_maxclients(s, 1024, want, errno);
    rlim_t old = lim.rlim_cur;
    if (old >= want) return 0;
    /* Above the hard limit only a privileged process may go. */
    rlim_t tries[2] = {want, lim.rlim_max < want ? lim.rlim_max : want};
    int why = 0;
    for (int i = 0; i < 2 && tries[i] > old; i++) {
        struct rlimit set = {tries[i], lim.rlim_max > tries[i] ? lim.rlim_max : tries[i]};
        if (setrlimit(RLIMIT_NOFILE, &set) != 0) {
            why = errno;
            continue;
        }
        if (tries[i] == want) {
            log_msg(s, LOG_NOTICE, "Increased maximum number of open files to %llu (it was originally set to %llu).",
                    (unsigned long long)want, (unsigned long long)old);
            return 0;
        }
        return shrink_maxclients(s, tries[i], want, why);
    }
    return shrink_maxclients(s, old, want, why);
}

/* --port 0 asks for an ephemeral port (unlike redis-server, where it turns
 * TCP off): the first address picks it and the others reuse it. */
int server_listen(server *s)
{
    char err[2048];
    if (server_fit_maxclients(s) < 0) return -1;
    /* the users come before anyone can connect, and a bad one stops the
     * start (Redis's ACLLoadUsersAtStartup) */
    if (acl_load_users(s, err, sizeof(err)) != 0) {
        log_msg(s, LOG_WARNING, "%s", err);
        return -1;
    }
    server_oom_apply(s);   /* as Redis at start: a failure is logged, not fatal */
    if (s->cfg.tls_port && tls_configure(s) != 0) {
        log_msg(s, LOG_WARNING, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    if (listen_all(s) != 0) return -1;
    if (s->cfg.unixsocket[0] && listen_unix(s) != 0) return -1;
    return 0;
}

static void on_handle_closed(uv_handle_t *h)
{
    server *s = h->data;
    s->closing_handles--;
}

void server_close_handle(server *s, uv_handle_t *h)
{
    if (uv_is_closing(h)) return;
    h->data = s;
    s->closing_handles++;
    uv_close(h, on_handle_closed);
}

int server_closed(const server *s)
{
    return s->shutting_down && s->closing_handles == 0 && s->client_structs == 0;
}

/* Stop accepting, push out what the kernel takes of what is queued, close
 * everyone; the loop then runs dry and uv_run returns. */
void server_shutdown(server *s)
{
    if (s->shutting_down) return;
    s->shutting_down = 1;
    close_listeners(s);
    if (s->has_unix) {
        server_close_handle(s, (uv_handle_t *)&s->unix_listener);
        unlink(s->cfg.unixsocket);
    }
    for (client *c = s->clients, *next; c; c = next) {
        next = c->next;
        client_close_after_reply(c);
    }
    net_flush_pending(s);
    /* What the kernel did not take at once is dropped: a client that does
     * not read its replies must not hold the shutdown up (nor does it in
     * Redis, which exits without flushing clients at all). */
    while (s->clients) client_close(s->clients);
    server_close_handle(s, (uv_handle_t *)&s->flush_check);
    server_close_handle(s, (uv_handle_t *)&s->expire_timer);
    server_close_handle(s, (uv_handle_t *)&s->idle_timer);
    server_close_handle(s, (uv_handle_t *)&s->obuf_timer);
    server_close_handle(s, (uv_handle_t *)&s->shrink_timer);
    server_close_handle(s, (uv_handle_t *)&s->sample_timer);
    rdb_wait_child(s);
    rdb_close(s);
    aof_close(s);
    repl_close(s);
    server_close_handle(s, (uv_handle_t *)&s->tracking_timer);
    lazyfree_shutdown(s);
    if (s->on_shutdown) s->on_shutdown(s);
}

/* After uv_run has returned: release what server_init took, including the
 * configuration it was handed. */
void server_close(server *s)
{
    scripts_free(s);
    repl_free(s);
    aof_free(s);
    block_free(s);
    lazyfree_drain(s);
    lazyfree_free(s);
    for (int i = 0; i < s->ndbs; i++) store_destroy(s->dbs[i].st);
    free(s->dbs);
    s->dbs = NULL;
    s->ndbs = 0;
    free(s->iov);
    s->iov = NULL;
    resp_buf_free(&s->notify_chan);
    resp_buf_free(&s->read_buf);
    free(s->tls_raw);
    s->tls_raw = NULL;
    free(s->tls_pack);
    s->tls_pack = NULL;
    tls_free(s);
    pubsub_free(s);
    multi_free(s);
    tracking_free(s);
    slowlog_free(s);
    latency_free(s);
    stats_free(s);
    acl_free(s);
    config_free(&s->cfg);
}

void server_reset_stats(server *s)
{
    s->stat_commands = s->stat_conns = s->stat_rejected_conns = s->stat_expired = s->stat_evicted = 0;
    s->stat_evicted_clients = 0;
    s->stat_keyspace_hits = s->stat_keyspace_misses = s->stat_net_in = s->stat_net_out = 0;
    s->stat_reads = s->stat_writes = 0;
    s->stat_reply_shrinks = s->stat_reply_expands = 0;
    s->stat_total_forks = s->stat_fork_usec = s->stat_dump_payload_sanitizations = 0;
    s->scripts->native_runs = s->scripts->engine_runs = 0;
    lazyfree_reset_stats(s);
    stats_reset(s);
    server_sampling_reset(s);
}
