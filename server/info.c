/* info.c - INFO: Redis 7.0's sections in its field names and order (ioredis
 * waits for loading:0, Redisson reads role), plus latchd's own counters. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commands/commands.h"
#include "mem.h"
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
    resp_buf_appendf(b, "os:Linux\r\narch_bits:%d\r\nmultiplexing_api:libuv\r\nlibuv_version:%s\r\n", (int)sizeof(void *) * 8,
        uv_version_string());
    resp_buf_appendf(b, "process_id:%d\r\nprocess_supervised:no\r\nrun_id:%s\r\ntcp_port:%d\r\n", (int)getpid(), s->run_id, s->port);
    resp_buf_appendf(b, "server_time_usec:%llu\r\nuptime_in_seconds:%llu\r\nuptime_in_days:%llu\r\n",
        (unsigned long long)now * 1000u, (unsigned long long)up, (unsigned long long)up / 86400);
    resp_buf_appendf(b, "hz:%lld\r\nconfigured_hz:%lld\r\nexecutable:latchd\r\nconfig_file:%s\r\nio_threads_active:0\r\n",
        s->cfg.hz, s->cfg.hz, s->cfg.config_file);
}

static void section_clients(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Clients\r\nconnected_clients:%zu\r\ncluster_connections:0\r\nmaxclients:%lld\r\n", s->nclients,
        s->cfg.maxclients);
    resp_buf_appendf(b, "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:%zu\r\n",
        s->blocked_clients);
    resp_buf_appendf(b, "tracking_clients:0\r\nclients_in_timeout_table:%zu\r\n", block_timeout_clients(s));
}

static void section_memory(server *s, resp_buf *b)
{
    char used_h[32], rss_h[32], max_h[32];
    size_t used = server_used_memory(s);
    size_t rss = rss_bytes();
    human_bytes(used_h, sizeof(used_h), used);
    human_bytes(rss_h, sizeof(rss_h), rss);
    human_bytes(max_h, sizeof(max_h), s->cfg.maxmemory);
    resp_buf_appendf(b, "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\n", used, used_h);
    resp_buf_appendf(b, "used_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n", rss, rss_h);
    /* Redis prints its unsigned maxmemory with %lld: 2^64-1 shows as -1 */
    resp_buf_appendf(b, "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\nmem_allocator:libc\r\n",
        (long long)s->cfg.maxmemory, max_h, config_maxmemory_policies[s->cfg.maxmemory_policy]);
}

/* Redis 7.0.15's fields in its order; the copy-on-write and AOF ones
 * are what Redis prints with no such activity. */
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
                        "rdb_last_cow_size:0\r\nrdb_last_load_keys_expired:%lld\r\nrdb_last_load_keys_loaded:%lld\r\n",
        s->rdb_last_bgsave_s, s->rdb_child ? (long long)((now - s->rdb_fork_ms) / 1000) : -1LL, s->rdb_saves,
        s->rdb_load_expired, s->rdb_loaded);
    resp_buf_appendf(b, "aof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\n"
                        "aof_last_rewrite_time_sec:-1\r\naof_current_rewrite_time_sec:-1\r\n"
                        "aof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\naof_rewrites_consecutive_failures:0\r\n"
                        "aof_last_write_status:ok\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\n"
                        "module_fork_last_cow_size:0\r\n");
}

static void section_stats(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n",
        (unsigned long long)s->stat_conns, (unsigned long long)s->stat_commands);
    resp_buf_appendf(b, "instantaneous_ops_per_sec:0\r\ntotal_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n",
        (unsigned long long)s->stat_net_in, (unsigned long long)s->stat_net_out);
    resp_buf_appendf(b, "rejected_connections:%llu\r\nexpired_keys:%llu\r\nevicted_keys:0\r\n",
        (unsigned long long)s->stat_rejected_conns, (unsigned long long)s->stat_expired);
    resp_buf_appendf(b, "keyspace_hits:%llu\r\nkeyspace_misses:%llu\r\n", (unsigned long long)s->stat_keyspace_hits,
        (unsigned long long)s->stat_keyspace_misses);
    resp_buf_appendf(b, "pubsub_channels:%zu\r\npubsub_patterns:%zu\r\npubsubshard_channels:%zu\r\n",
        pubsub_count(s, PUBSUB_CHANNEL), pubsub_count(s, PUBSUB_PATTERN), pubsub_count(s, PUBSUB_SHARD));
}

static void section_replication(server *s, resp_buf *b)
{
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

/* latchd's own counters: how scripts ran, so a test can tell the native
 * path from Lua. */
static void section_latchd(server *s, resp_buf *b)
{
    resp_buf_appendf(b, "# Latchd\r\nlatchd_native_script_runs:%llu\r\nlatchd_lua_script_runs:%llu\r\n",
        (unsigned long long)s->scripts->native_runs, (unsigned long long)s->scripts->engine_runs);
}

typedef struct info_section {
    const char *name;
    void (*fn)(server *, resp_buf *);
    int redis;   /* one of Redis's: in INFO, INFO all and INFO default too;
                    else only when named or under INFO everything, as a
                    Redis module's section */
} info_section;

static const info_section sections[] = {
    {"server", section_server, 1},           {"clients", section_clients, 1},
    {"memory", section_memory, 1},           {"persistence", section_persistence, 1},
    {"stats", section_stats, 1},             {"replication", section_replication, 1},
    {"cpu", section_cpu, 1},                 {"keyspace", section_keyspace, 1},
    {"latchd", section_latchd, 0},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static int wanted(client *c, const info_section *sec)
{
    if (c->argc == 1) return sec->redis;
    for (int i = 1; i < c->argc; i++) {
        const resp_slice *a = &c->argv[i];
        if (arg_is(a, sec->name) || arg_is(a, "everything")) return 1;
        if (sec->redis && (arg_is(a, "all") || arg_is(a, "default"))) return 1;
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
