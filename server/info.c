/* info.c - INFO: Redis 7.0's sections in its field names and order (ioredis
 * waits for loading:0, Redisson reads role), plus latchd's own counters. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commands/commands.h"
#include "mem.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "pubsub.h"
#include "scripting/script.h"

/* Redis's bytesToHuman: B up to 1023, then K..P with two decimals, and
 * from 1024P on bytes again. */
static void human_bytes(char *dst, size_t len, unsigned long long n)
{
    static const char units[] = "KMGTP";
    unsigned long long scale = 1024;
    if (n < 1024) {
        snprintf(dst, len, "%lluB", n);
        return;
    }
    for (int u = 0; u < 5; u++, scale *= 1024) {
        if (n / 1024 < scale) {
            snprintf(dst, len, "%.2f%c", (double)n / (double)scale, units[u]);
            return;
        }
    }
    snprintf(dst, len, "%lluB", n);
}

static size_t rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static void section_server(server *s, resp_buf *b)
{
    uint64_t now = server_now_ms(s);
    uint64_t up = (now - s->start_ms) / 1000;
    resp_buf_appendf(b, "# Server\r\nredis_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n", LATCHD_REDIS_VERSION);
    resp_buf_appendf(b, "redis_build_id:0\r\nredis_mode:standalone\r\nlatchd_version:%s\r\n", LATCHD_VERSION);
#if defined(__x86_64__) || defined(__i386__)
    resp_buf_appendf(b, "os:Linux\r\narch_bits:%d\r\nmonotonic_clock:X86 TSC @ %ld ticks/us\r\n", (int)sizeof(void *) * 8,
        (long)(1000.0 / stats_ns_per_tick()));
#else
    resp_buf_appendf(b, "os:Linux\r\narch_bits:%d\r\nmonotonic_clock:POSIX clock_gettime\r\n", (int)sizeof(void *) * 8);
#endif
    resp_buf_appendf(b, "multiplexing_api:libuv\r\nlibuv_version:%s\r\natomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\n",
        uv_version_string(), __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
    resp_buf_appendf(b, "process_id:%d\r\nprocess_supervised:no\r\nrun_id:%s\r\ntcp_port:%d\r\n", (int)getpid(), s->run_id,
                     s->port ? s->port : s->cfg.tls_port);   /* Redis: the TLS one when TLS only */
    resp_buf_appendf(b, "server_time_usec:%llu\r\nuptime_in_seconds:%llu\r\nuptime_in_days:%llu\r\n",
        (unsigned long long)now * 1000u, (unsigned long long)up, (unsigned long long)up / 86400);
    resp_buf_appendf(b, "hz:%lld\r\nconfigured_hz:%lld\r\nlru_clock:%llu\r\nexecutable:latchd\r\nconfig_file:%s\r\n"
        "io_threads_active:0\r\n", s->cfg.hz, s->cfg.hz, (unsigned long long)((now / 1000) & ((1u << 24) - 1)),
        s->cfg.config_file);
}

static void section_clients(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Clients\r\nconnected_clients:%zu\r\ncluster_connections:0\r\nmaxclients:%lld\r\n", s->nclients,
        s->cfg.maxclients);
    size_t max_in, max_out;
    server_recent_max_buffers(s, &max_in, &max_out);
    resp_buf_appendf(b, "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n"
        "blocked_clients:%zu\r\n", max_in, max_out, s->blocked_clients);
    resp_buf_appendf(b, "tracking_clients:%zu\r\nclients_in_timeout_table:%zu\r\n", s->tracking_clients, block_timeout_clients(s));
}

static void section_memory(server *s, resp_buf *b)
{
    char used_h[32], rss_h[32], max_h[32];
    size_t used = server_used_memory(s);
    size_t rss = rss_bytes();
    human_bytes(used_h, sizeof(used_h), used);
    human_bytes(rss_h, sizeof(rss_h), rss);
    human_bytes(max_h, sizeof(max_h), s->cfg.maxmemory);
    char peak_h[32], sys_h[32], scripts_h[32], lua_h[32], vm_h[32];
    if (used > s->stat_peak_memory) s->stat_peak_memory = used;   /* as Redis's INFO also does */
    size_t peak = s->stat_peak_memory, startup = s->startup_memory < used ? s->startup_memory : used;
    size_t sysmem = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    /* EVAL and the functions share latchd's one Lua state (Redis has one
     * of each): all of it is the eval VM's, used_memory_lua as before, and
     * the functions' VM, which latchd does not have, holds nothing */
    size_t eval_bytes = scripts_cache_memory(s), fn_bytes = functions_memory(s);
    size_t script_bytes = eval_bytes + fn_bytes, vm_eval = script_engine_memory(s->scripts->lua), vm_fn = 0;
    human_bytes(peak_h, sizeof(peak_h), peak);
    human_bytes(sys_h, sizeof(sys_h), sysmem);
    human_bytes(scripts_h, sizeof(scripts_h), script_bytes);
    human_bytes(lua_h, sizeof(lua_h), vm_eval);
    human_bytes(vm_h, sizeof(vm_h), vm_eval + vm_fn);
    resp_buf_appendf(b, "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\n", used, used_h);
    resp_buf_appendf(b, "used_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n", rss, rss_h);
    resp_buf_appendf(b, "used_memory_peak:%zu\r\nused_memory_peak_human:%s\r\nused_memory_peak_perc:%.2f%%\r\n", peak,
        peak_h, peak ? (float)used * 100 / (float)peak : 0.0);
    /* the overhead is what latchd uses with no keys (startup) and for its
     * clients; the dataset the rest, as Redis divides it */
    size_t overhead = startup + s->client_structs * sizeof(client);
    if (overhead > used) overhead = used;
    size_t net = used > startup ? used - startup : 0;
    resp_buf_appendf(b, "used_memory_overhead:%zu\r\nused_memory_startup:%zu\r\nused_memory_dataset:%zu\r\n"
        "used_memory_dataset_perc:%.2f%%\r\n", overhead, startup, used - overhead,
        net ? (float)(used - overhead) * 100 / (float)net : 0.0);
    resp_buf_appendf(b, "allocator_allocated:%zu\r\nallocator_active:%zu\r\nallocator_resident:%zu\r\n", used, used, rss);
    resp_buf_appendf(b, "total_system_memory:%zu\r\ntotal_system_memory_human:%s\r\n", sysmem, sys_h);
    resp_buf_appendf(b, "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:%s\r\n"
        "used_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%zu\r\nnumber_of_functions:%zu\r\n"
        "number_of_libraries:%zu\r\nused_memory_vm_functions:%zu\r\nused_memory_vm_total:%zu\r\n"
        "used_memory_vm_total_human:%s\r\nused_memory_functions:%zu\r\nused_memory_scripts:%zu\r\n"
        "used_memory_scripts_human:%s\r\n", vm_eval, vm_eval, lua_h, eval_bytes,
        store_dict_size(&s->scripts->cache), store_dict_size(&s->scripts->functions),
        store_dict_size(&s->scripts->libs), vm_fn, vm_eval + vm_fn, vm_h, fn_bytes, script_bytes, scripts_h);
    /* Redis prints its unsigned maxmemory with %lld: 2^64-1 shows as -1 */
    resp_buf_appendf(b, "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n",
        (long long)s->cfg.maxmemory, max_h, config_maxmemory_policies[s->cfg.maxmemory_policy]);
    double frag = used ? (double)rss / (double)used : 0;
    resp_buf_appendf(b, "allocator_frag_ratio:1.00\r\nallocator_frag_bytes:0\r\nallocator_rss_ratio:%.2f\r\n"
        "allocator_rss_bytes:%lld\r\nrss_overhead_ratio:1.00\r\nrss_overhead_bytes:0\r\n"
        "mem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\n", frag, (long long)rss - (long long)used,
        frag, (long long)rss - (long long)used);
    resp_buf_appendf(b, "mem_not_counted_for_evict:0\r\nmem_replication_backlog:0\r\nmem_total_replication_buffers:0\r\n"
        "mem_clients_slaves:0\r\nmem_clients_normal:%zu\r\nmem_cluster_links:0\r\nmem_aof_buffer:%zu\r\n"
        "mem_allocator:libc\r\nactive_defrag_running:0\r\nlazyfree_pending_objects:%zu\r\nlazyfreed_objects:%zu\r\n",
        clientmem_total(s), aof_buffer_memory(s), lazyfree_pending_objects(s), lazyfree_freed_objects(s));
}

/* Redis 7.0.15's fields in its order. The current_cow_* ones are what
 * Redis prints with no child running: latchd's child writes its file in
 * one go and tells its copy-on-write only as it ends (rdb_last_cow_size). */
static void section_persistence(server *s, resp_buf *b)
{
    uint64_t now = server_now_ms(s);
    resp_buf_appendf(b, "# Persistence\r\nloading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\n"
                        "current_cow_size:0\r\ncurrent_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\n"
                        "current_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\n");
    resp_buf_appendf(b, "rdb_changes_since_last_save:%llu\r\nrdb_bgsave_in_progress:%d\r\n"
                        "rdb_last_save_time:%llu\r\nrdb_last_bgsave_status:%s\r\n",
        (unsigned long long)s->dirty, s->rdb_child != 0, (unsigned long long)s->lastsave_s,
        s->rdb_last_ok ? "ok" : "err");
    resp_buf_appendf(b, "rdb_last_bgsave_time_sec:%lld\r\nrdb_current_bgsave_time_sec:%lld\r\nrdb_saves:%lld\r\n"
                        "rdb_last_cow_size:%zu\r\nrdb_last_load_keys_expired:%lld\r\nrdb_last_load_keys_loaded:%lld\r\n",
        s->rdb_last_bgsave_s, s->rdb_child ? (long long)((now - s->rdb_fork_ms) / 1000) : -1LL, s->rdb_saves,
        s->rdb_last_cow,
        s->rdb_load_expired, s->rdb_loaded);
    aof_info(s, b);
}

static void section_stats(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n",
        (unsigned long long)s->stat_conns, (unsigned long long)s->stat_commands);
    resp_buf_appendf(b, "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n",
        server_instantaneous(s, METRIC_COMMANDS), (unsigned long long)s->stat_net_in,
        (unsigned long long)s->stat_net_out);
    /* the Raft log's traffic is not Redis's replication stream: the repl
     * figures stay what a Redis without replicas prints */
    resp_buf_appendf(b, "total_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\n"
        "instantaneous_input_kbps:%.2f\r\ninstantaneous_output_kbps:%.2f\r\ninstantaneous_input_repl_kbps:0.00\r\n"
        "instantaneous_output_repl_kbps:0.00\r\n", (float)server_instantaneous(s, METRIC_NET_IN) / 1024,
        (float)server_instantaneous(s, METRIC_NET_OUT) / 1024);
    resp_buf_appendf(b, "rejected_connections:%llu\r\nsync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0\r\n"
        "expired_keys:%llu\r\nexpired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n"
        "expire_cycle_cpu_milliseconds:0\r\nevicted_keys:%llu\r\nevicted_clients:%llu\r\n"
        "total_eviction_exceeded_time:0\r\ncurrent_eviction_exceeded_time:0\r\n",
        (unsigned long long)s->stat_rejected_conns, (unsigned long long)s->stat_expired,
        (unsigned long long)s->stat_evicted, (unsigned long long)s->stat_evicted_clients);
    resp_buf_appendf(b, "keyspace_hits:%llu\r\nkeyspace_misses:%llu\r\n", (unsigned long long)s->stat_keyspace_hits,
        (unsigned long long)s->stat_keyspace_misses);
    resp_buf_appendf(b, "pubsub_channels:%zu\r\npubsub_patterns:%zu\r\npubsubshard_channels:%zu\r\n",
        pubsub_count(s, PUBSUB_CHANNEL), pubsub_count(s, PUBSUB_PATTERN), pubsub_count(s, PUBSUB_SHARD));
    /* latchd has no Redis replication, MIGRATE, defrag nor threads: Redis's zeros */
    resp_buf_appendf(b, "latest_fork_usec:%llu\r\ntotal_forks:%llu\r\nmigrate_cached_sockets:0\r\n"
        "slave_expires_tracked_keys:0\r\nactive_defrag_hits:0\r\nactive_defrag_misses:0\r\n"
        "active_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\n"
        "current_active_defrag_time:0\r\ntracking_total_keys:%zu\r\ntracking_total_items:%zu\r\n"
        "tracking_total_prefixes:%zu\r\n", (unsigned long long)s->stat_fork_usec,
        (unsigned long long)s->stat_total_forks, s->tracking_keys, s->tracking_items, s->tracking_prefixes);
    /* Redis counts errors replied to its master's or a replica's link;
     * latchd has neither (a Raft follower's applier would be the place) */
    resp_buf_appendf(b, "unexpected_error_replies:0\r\ntotal_error_replies:%llu\r\ndump_payload_sanitizations:%llu\r\n",
        (unsigned long long)s->stat_total_errors, (unsigned long long)s->stat_dump_payload_sanitizations);
    resp_buf_appendf(b, "total_reads_processed:%llu\r\ntotal_writes_processed:%llu\r\nio_threaded_reads_processed:0\r\n"
        "io_threaded_writes_processed:0\r\nreply_buffer_shrinks:%llu\r\nreply_buffer_expands:%llu\r\n",
        (unsigned long long)s->stat_reads, (unsigned long long)s->stat_writes,
        (unsigned long long)s->stat_reply_shrinks, (unsigned long long)s->stat_reply_expands);
}

static void section_replication(server *s, resp_buf *b)
{
    if (s->repl) {
        repl_info(s, b);
        return;
    }
    resp_buf_appendf(b, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n");
    resp_buf_appendf(b, "master_replid:%s\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n", s->run_id);
    resp_buf_appendf(b, "master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n");
    resp_buf_appendf(b, "repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n");
}

static void section_cpu(server *s, resp_buf *b)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    resp_buf_appendf(b, "# CPU\r\nused_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec,
        (long)ru.ru_stime.tv_usec, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    getrusage(RUSAGE_CHILDREN, &ru);
    resp_buf_appendf(b, "used_cpu_sys_children:%ld.%06ld\r\nused_cpu_user_children:%ld.%06ld\r\n",
        (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    getrusage(RUSAGE_THREAD, &ru);
    resp_buf_appendf(b, "used_cpu_sys_main_thread:%ld.%06ld\r\nused_cpu_user_main_thread:%ld.%06ld\r\n",
        (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
}

static void section_keyspace(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Keyspace\r\n");
    for (int i = 0; i < s->ndbs; i++) {
        store *db = server_db_if_used(s, i);
        size_t keys = db ? store_size(db) : 0;
        if (keys) resp_buf_appendf(b, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", i, keys, store_expires_count(db));
    }
}

/* latchd has no modules nor cluster: Redis's empty section and its
 * cluster_enabled:0. */
static void section_modules(server *s, resp_buf *b)
{
    (void)s;
    resp_buf_appendf(b, "# Modules\r\n");
}

static void section_cluster(server *s, resp_buf *b)
{
    (void)s;
    resp_buf_appendf(b, "# Cluster\r\ncluster_enabled:0\r\n");
}

/* latchd's own counters: how scripts ran, so a test can tell the native
 * path from Lua; databases whose keyspace table is mid-rehash. */
static void section_latchd(server *s, resp_buf *b)
{
    int rehashing = 0;
    for (int id = 0; id < s->cfg.databases; id++) {
        const store *st = server_db_if_used(s, id);
        rehashing += st && store_rehashing(st);
    }
    resp_buf_appendf(b, "# Latchd\r\nlatchd_native_script_runs:%llu\r\nlatchd_lua_script_runs:%llu\r\n"
        "latchd_rehashing_dbs:%d\r\n",
        (unsigned long long)s->scripts->native_runs, (unsigned long long)s->scripts->engine_runs, rehashing);
}

enum { IN_NAMED, IN_ALL, IN_DEFAULT };

typedef struct info_section {
    const char *name;
    void (*fn)(server *, resp_buf *);
    int redis;   /* IN_DEFAULT: in INFO, INFO all and INFO default;
                    IN_ALL: INFO all, not default (commandstats);
                    IN_NAMED: only when named or under INFO everything, as a
                    Redis module's section */
} info_section;

/* In Redis's order. */
static const info_section sections[] = {
    {"server", section_server, IN_DEFAULT},           {"clients", section_clients, IN_DEFAULT},
    {"memory", section_memory, IN_DEFAULT},           {"persistence", section_persistence, IN_DEFAULT},
    {"stats", section_stats, IN_DEFAULT},             {"replication", section_replication, IN_DEFAULT},
    {"cpu", section_cpu, IN_DEFAULT},                 {"modules", section_modules, IN_DEFAULT},
    {"commandstats", stats_info_commandstats, IN_ALL}, {"errorstats", stats_info_errorstats, IN_DEFAULT},
    {"latencystats", stats_info_latencystats, IN_ALL}, {"cluster", section_cluster, IN_DEFAULT},
    {"keyspace", section_keyspace, IN_DEFAULT},       {"latchd", section_latchd, IN_NAMED},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static int wanted(client *c, const info_section *sec)
{
    if (c->argc == 1) return sec->redis == IN_DEFAULT;
    for (int i = 1; i < c->argc; i++) {
        const resp_slice *a = &c->argv[i];
        if (arg_is(a, sec->name) || arg_is(a, "everything")) return 1;
        if (sec->redis != IN_NAMED && arg_is(a, "all")) return 1;
        if (sec->redis == IN_DEFAULT && arg_is(a, "default")) return 1;
    }
    return 0;
}

void cmd_info(client *c)
{
    resp_buf b;
    resp_buf_init(&b);
    for (size_t i = 0; i < NSECTIONS; i++) {
        if (!wanted(c, &sections[i])) continue;
        if (b.len) resp_buf_append(&b, "\r\n", 2);
        sections[i].fn(c->srv, &b);
    }
    reply_verbatim(c, b.data ? b.data : "", b.len);
    resp_buf_free(&b);
}
