/* config.c - one table of parameters drives defaults, the config file,
 * command-line flags and CONFIG GET/SET, so the four never disagree. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mem.h"
#include "num.h"
#include "resp.h"
#include "server.h"

/* Each type names the C type of its value, checked where the table names
 * a struct member (FIELD), so a row and its member cannot disagree:
 * P_INT32 an int, P_INT64 a long long, both parsed as integers and checked
 * against min/max; P_OCTAL an int written in octal; P_MEMORY a long long
 * checked against min/max after the unsigned memory value is taken as
 * signed (as Redis does); P_UMEMORY an unsigned long long that takes any
 * memory value (maxmemory); P_PERCENT a long long, a memory value or N%
 * kept as -N (maxmemory-clients); P_BOOL an int; P_ENUM an int indexing
 * the row's NULL-terminated names; P_NOTIFY an int of NOTIFY_* bits;
 * P_STRING a malloc'd char *; P_BINARY a config_bin (its bytes malloc'd),
 * taken from CONFIG SET with its length as Redis's sds configs are; P_WORDS a malloc'd char * holding the words
 * of a several-argument parameter as the row's words_fn checked and wrote
 * them; P_DIR the working directory (chdir, as Redis); P_BIND and P_OBUF
 * the bind list and the output buffer limits, each set and shown by its
 * own code. A row whose value has no struct member (INERT) keeps it in
 * cfg->slots[row], in the union member its type names. */
typedef enum { P_INT32, P_INT64, P_OCTAL, P_MEMORY, P_UMEMORY, P_PERCENT, P_BOOL, P_ENUM, P_NOTIFY, P_STRING,
               P_BINARY, P_WORDS, P_DIR, P_BIND, P_OBUF } param_type;

/* Row flags, Redis's where they share a name. */
enum {
    PF_IMMUTABLE = 1 << 0,   /* fixed at start: CONFIG SET refuses it */
    PF_PROTECTED = 1 << 1,   /* CONFIG SET only as enable-protected-configs allows */
    PF_HIDDEN = 1 << 2,      /* CONFIG GET shows it only when named exactly */
    PF_NOEFFECT = 1 << 3,    /* accepted and reported; latchd does nothing with it */
    PF_HZ = 1 << 4,          /* taken into 1..500 as Redis takes hz */
};

/* A several-argument value's words checked and written as CONFIG GET
 * shows them into out (resp_buf_appendf's text); NULL, else Redis's
 * error text. */
typedef const char *(*words_fn)(const char **w, int n, resp_buf *out);

typedef struct param {
    const char *name;
    const char *alias;          /* Redis's other name for it, or NULL */
    param_type type;
    unsigned flags;             /* PF_* */
    size_t off;                 /* FIELD(), or INERT */
    long long min, max;
    const char *const *names;   /* P_ENUM: value i is names[i] ("+x": x is the value before it) */
    words_fn words;             /* P_WORDS */
    const char *def;            /* INERT rows: the default, as a config file gives it */
    const char *(*check)(const char *v);   /* P_STRING: NULL if v will do, else Redis's error */
} param;

#define INERT ((size_t)-1)

/* The offset of latchd_config's member f, which must be of type T: a row
 * whose type and member disagree does not compile. */
#define FIELD(f, T)                                                                           \
    (offsetof(latchd_config, f) +                                                             \
     0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((latchd_config *)0)->f), T) ? 1 : -1]))

/* Rows for values with a struct member, and for the kept-without-effect
 * ones by type. */
#define ROW(name, alias, type, flags, f, T, min, max, names)                                  \
    {name, alias, type, flags, FIELD(f, T), min, max, names, NULL, NULL, NULL}
#define BOOL_(name, alias, flags, def) {name, alias, P_BOOL, (flags) | PF_NOEFFECT, INERT, 0, 0, NULL, NULL, def, NULL}
#define INT_(name, alias, flags, min, max, def)                                              \
    {name, alias, P_INT64, (flags) | PF_NOEFFECT, INERT, min, max, NULL, NULL, def, NULL}
#define MEM_(name, alias, flags, min, max, def)                                              \
    {name, alias, P_MEMORY, (flags) | PF_NOEFFECT, INERT, min, max, NULL, NULL, def, NULL}
#define STR_(name, alias, flags, def) {name, alias, P_STRING, (flags) | PF_NOEFFECT, INERT, 0, 0, NULL, NULL, def, NULL}
#define CHECKED_(name, flags, check, def)                                                    \
    {name, NULL, P_STRING, (flags) | PF_NOEFFECT, INERT, 0, 0, NULL, NULL, def, check}
#define ENUM_(name, alias, flags, names, def)                                                \
    {name, alias, P_ENUM, (flags) | PF_NOEFFECT, INERT, 0, 0, names, NULL, def, NULL}
#define WORDS_(name, alias, flags, fn, def) {name, alias, P_WORDS, (flags) | PF_NOEFFECT, INERT, 0, 0, NULL, fn, def, NULL}

#define IMM PF_IMMUTABLE

/* Indexed by LOG_* (server.h). */
static const char *const loglevel_names[] = {
    [LOG_DEBUG] = "debug", [LOG_VERBOSE] = "verbose", [LOG_NOTICE] = "notice", [LOG_WARNING] = "warning",
    [LOG_WARNING + 1] = NULL,
};
/* Indexed by CONFIG_MAXMEMORY_*, in Redis's order (evict.c). */
const char *const config_maxmemory_policies[] = {
    [CONFIG_MAXMEMORY_VOLATILE_LRU] = "volatile-lru",
    [CONFIG_MAXMEMORY_VOLATILE_LFU] = "volatile-lfu",
    [CONFIG_MAXMEMORY_VOLATILE_RANDOM] = "volatile-random",
    [CONFIG_MAXMEMORY_VOLATILE_TTL] = "volatile-ttl",
    [CONFIG_MAXMEMORY_ALLKEYS_LRU] = "allkeys-lru",
    [CONFIG_MAXMEMORY_ALLKEYS_LFU] = "allkeys-lfu",
    [CONFIG_MAXMEMORY_ALLKEYS_RANDOM] = "allkeys-random",
    [CONFIG_MAXMEMORY_NOEVICTION] = "noeviction",
    [CONFIG_MAXMEMORY_POLICY_COUNT] = NULL,
};
/* Indexed by CONFIG_PROTECTED_*. */
static const char *const protected_names[] = {
    [CONFIG_PROTECTED_NO] = "no", [CONFIG_PROTECTED_YES] = "yes", [CONFIG_PROTECTED_LOCAL] = "local",
    [CONFIG_PROTECTED_LOCAL + 1] = NULL,
};
/* Redis's other enums, in its order (the error lists them so). */
/* Indexed by CONFIG_SUPERVISED_*. */
static const char *const supervised_names[] = {
    [CONFIG_SUPERVISED_UPSTART] = "upstart", [CONFIG_SUPERVISED_SYSTEMD] = "systemd",
    [CONFIG_SUPERVISED_AUTO] = "auto", [CONFIG_SUPERVISED_NO] = "no", [CONFIG_SUPERVISED_NO + 1] = NULL,
};
static const char *const facility_names[] = {"user", "local0", "local1", "local2", "local3",
                                             "local4", "local5", "local6", "local7", NULL};
static const char *const diskless_load_names[] = {"disabled", "on-empty-db", "swapdb", NULL};
static const char *const fsync_names[] = {"everysec", "always", "no", NULL};
static const char *const oom_names[] = {"no", "yes", "+relative", "absolute", NULL};
static const char *const pubsub_default_names[] = {"allchannels", "resetchannels", NULL};
static const char *const sanitize_names[] = {"no", "yes", "clients", NULL};
static const char *const endpoint_names[] = {"ip", "hostname", "unknown-endpoint", NULL};
static const char *const propagation_names[] = {"ignore", "panic", "panic-on-replicas", NULL};
static const char *const tls_auth_names[] = {"no", "yes", "optional", NULL};

static const char *dbfilename_check(const char *v);
static const char *appendfilename_check(const char *v);
static const char *appenddirname_check(const char *v);
static const char *proc_title_check(const char *v);
static const char *save_words(const char **w, int n, resp_buf *out);
static const char *oom_values_words(const char **w, int n, resp_buf *out);
static const char *percentiles_words(const char **w, int n, resp_buf *out);
static const char *shutdown_words(const char **w, int n, resp_buf *out);
static const char *replicaof_words(const char **w, int n, resp_buf *out);

/* Redis 7.0.15's parameters (its config.c, with TLS), with its ranges,
 * defaults and flags; rows without a member are kept without effect. */
static const param params[] = {
    /* with an effect in latchd */
    ROW("port", NULL, P_INT32, 0, port, int, 0, 65535, NULL),
    ROW("bind", NULL, P_BIND, 0, bind, char *[CONFIG_MAX_BIND], 0, 0, NULL),
    ROW("unixsocket", NULL, P_STRING, IMM, unixsocket, char *, 0, 0, NULL),
    ROW("unixsocketperm", NULL, P_OCTAL, IMM, unixsocketperm, int, 0, 0777, NULL),
    ROW("loglevel", NULL, P_ENUM, 0, loglevel, int, 0, 0, loglevel_names),
    ROW("logfile", NULL, P_STRING, IMM, logfile, char *, 0, 0, NULL),
    ROW("daemonize", NULL, P_BOOL, IMM, daemonize, int, 0, 0, NULL),
    ROW("pidfile", NULL, P_STRING, IMM, pidfile, char *, 0, 0, NULL),
    ROW("requirepass", NULL, P_BINARY, 0, requirepass, config_bin, 0, 0, NULL),
    ROW("proto-max-bulk-len", NULL, P_MEMORY, 0, proto_max_bulk_len, long long, 1024 * 1024, LLONG_MAX, NULL),
    ROW("client-query-buffer-limit", NULL, P_MEMORY, 0, client_query_buffer_limit, long long, 1024 * 1024,
        LLONG_MAX, NULL),
    ROW("maxmemory", NULL, P_UMEMORY, 0, maxmemory, unsigned long long, 0, 0, NULL),
    ROW("maxmemory-policy", NULL, P_ENUM, 0, maxmemory_policy, int, 0, 0, config_maxmemory_policies),
    ROW("maxclients", NULL, P_INT64, 0, maxclients, long long, 1, UINT_MAX, NULL),
    ROW("timeout", NULL, P_INT64, 0, timeout, long long, 0, INT_MAX, NULL),
    ROW("tcp-keepalive", NULL, P_INT64, 0, tcp_keepalive, long long, 0, INT_MAX, NULL),
    ROW("maxmemory-samples", NULL, P_INT64, 0, maxmemory_samples, long long, 1, INT_MAX, NULL),
    ROW("databases", NULL, P_INT64, IMM, databases, long long, 1, INT_MAX, NULL),
    ROW("protected-mode", NULL, P_BOOL, 0, protected_mode, int, 0, 0, NULL),
    ROW("dir", NULL, P_DIR, PF_PROTECTED, dir, char *, 0, 0, NULL),
    ROW("hz", NULL, P_INT64, PF_HZ, hz, long long, 0, INT_MAX, NULL),
    ROW("busy-reply-threshold", "lua-time-limit", P_INT64, 0, busy_reply_ms, long long, 0, LONG_MAX, NULL),
    ROW("client-output-buffer-limit", NULL, P_OBUF, 0, obuf_limits, obuf_limit[CLIENT_TYPE_OBUF_COUNT], 0, 0,
        NULL),
    ROW("notify-keyspace-events", NULL, P_NOTIFY, 0, notify_keyspace_events, int, 0, 0, NULL),
    ROW("tracking-table-max-keys", NULL, P_INT64, 0, tracking_table_max_keys, long long, 0, LONG_MAX, NULL),
    ROW("enable-debug-command", NULL, P_ENUM, IMM, enable_debug_command, int, 0, 0, protected_names),
    ROW("always-show-logo", NULL, P_BOOL, IMM, always_show_logo, int, 0, 0, NULL),
    ROW("supervised", NULL, P_ENUM, IMM, supervised, int, 0, 0, supervised_names),
    /* OBJECT ENCODING's thresholds and OBJECT FREQ's counter (the store's env). */
    ROW("hash-max-listpack-entries", "hash-max-ziplist-entries", P_INT64, 0, hash_max_listpack_entries,
        long long, 0, LONG_MAX, NULL),
    ROW("hash-max-listpack-value", "hash-max-ziplist-value", P_MEMORY, 0, hash_max_listpack_value,
        long long, 0, LONG_MAX, NULL),
    ROW("zset-max-listpack-entries", "zset-max-ziplist-entries", P_INT64, 0, zset_max_listpack_entries,
        long long, 0, LONG_MAX, NULL),
    ROW("zset-max-listpack-value", "zset-max-ziplist-value", P_MEMORY, 0, zset_max_listpack_value,
        long long, 0, LONG_MAX, NULL),
    ROW("lfu-log-factor", NULL, P_INT32, 0, lfu_log_factor, int, 0, INT_MAX, NULL),
    ROW("lfu-decay-time", NULL, P_INT32, 0, lfu_decay_time, int, 0, INT_MAX, NULL),
    ROW("hll-sparse-max-bytes", NULL, P_MEMORY, 0, hll_sparse_max_bytes, long long, 0, LONG_MAX, NULL),
    /* With a member, but without effect yet (README: Configuration). */
    {"save", NULL, P_WORDS, 0, FIELD(save, char *), 0, 0, NULL, save_words, NULL, NULL},
    ROW("appendonly", NULL, P_BOOL, 0, appendonly, int, 0, 0, NULL),
    ROW("appendfsync", NULL, P_ENUM, 0, appendfsync, int, 0, 0, fsync_names),
    ROW("aof-load-truncated", NULL, P_BOOL, 0, aof_load_truncated, int, 0, 0, NULL),
    ROW("aof-timestamp-enabled", NULL, P_BOOL, 0, aof_timestamp_enabled, int, 0, 0, NULL),
    ROW("auto-aof-rewrite-percentage", NULL, P_INT64, 0, auto_aof_rewrite_percentage, long long, 0, INT_MAX, NULL),
    ROW("auto-aof-rewrite-min-size", NULL, P_MEMORY, 0, auto_aof_rewrite_min_size, long long, 0, LLONG_MAX, NULL),
    {"appendfilename", NULL, P_STRING, IMM, FIELD(appendfilename, char *), 0, 0, NULL, NULL, NULL,
     appendfilename_check},
    {"appenddirname", NULL, P_STRING, IMM, FIELD(appenddirname, char *), 0, 0, NULL, NULL, NULL,
     appenddirname_check},
    ROW("list-max-listpack-size", "list-max-ziplist-size", P_INT32, 0, list_max_listpack_size, int,
        INT_MIN, INT_MAX, NULL),
    ROW("list-compress-depth", NULL, P_INT32, PF_NOEFFECT, list_compress_depth, int, 0, INT_MAX, NULL),
    ROW("set-max-intset-entries", NULL, P_INT64, 0, set_max_intset_entries, long long, 0, LONG_MAX,
        NULL),
    ROW("stream-node-max-entries", NULL, P_INT64, 0, stream_node_max_entries, long long, 0, LLONG_MAX,
        NULL),
    ROW("stream-node-max-bytes", NULL, P_MEMORY, 0, stream_node_max_bytes, long long, 0, LONG_MAX, NULL),
    ROW("slowlog-log-slower-than", NULL, P_INT64, 0, slowlog_log_slower_than, long long, -1, LLONG_MAX,
        NULL),
    ROW("slowlog-max-len", NULL, P_INT64, 0, slowlog_max_len, long long, 0, LONG_MAX, NULL),
    ROW("latency-monitor-threshold", NULL, P_INT64, 0, latency_monitor_threshold, long long, 0,
        LLONG_MAX, NULL),
    ROW("aof-use-rdb-preamble", NULL, P_BOOL, 0, aof_use_rdb_preamble, int, 0, 0, NULL),
    /* TLS: CONFIG SET of any of them reconfigures the context (tls.c) */
    ROW("tls-port", NULL, P_INT32, 0, tls_port, int, 0, 65535, NULL),
    ROW("tls-session-cache-size", NULL, P_INT64, 0, tls_session_cache_size, long long, 0, INT_MAX, NULL),
    ROW("tls-session-cache-timeout", NULL, P_INT64, 0, tls_session_cache_timeout, long long, 0, INT_MAX, NULL),
    ROW("tls-auth-clients", NULL, P_ENUM, 0, tls_auth_clients, int, 0, 0, tls_auth_names),
    ROW("tls-prefer-server-ciphers", NULL, P_BOOL, 0, tls_prefer_server_ciphers, int, 0, 0, NULL),
    ROW("tls-session-caching", NULL, P_BOOL, 0, tls_session_caching, int, 0, 0, NULL),
    ROW("tls-cert-file", NULL, P_STRING, 0, tls_cert_file, char *, 0, 0, NULL),
    ROW("tls-key-file", NULL, P_STRING, 0, tls_key_file, char *, 0, 0, NULL),
    ROW("tls-key-file-pass", NULL, P_STRING, 0, tls_key_file_pass, char *, 0, 0, NULL),
    ROW("tls-client-cert-file", NULL, P_STRING, 0, tls_client_cert_file, char *, 0, 0, NULL),
    ROW("tls-client-key-file", NULL, P_STRING, 0, tls_client_key_file, char *, 0, 0, NULL),
    ROW("tls-client-key-file-pass", NULL, P_STRING, 0, tls_client_key_file_pass, char *, 0, 0, NULL),
    ROW("tls-dh-params-file", NULL, P_STRING, 0, tls_dh_params_file, char *, 0, 0, NULL),
    ROW("tls-ca-cert-file", NULL, P_STRING, 0, tls_ca_cert_file, char *, 0, 0, NULL),
    ROW("tls-ca-cert-dir", NULL, P_STRING, 0, tls_ca_cert_dir, char *, 0, 0, NULL),
    ROW("tls-protocols", NULL, P_STRING, 0, tls_protocols, char *, 0, 0, NULL),
    ROW("tls-ciphers", NULL, P_STRING, 0, tls_ciphers, char *, 0, 0, NULL),
    ROW("tls-ciphersuites", NULL, P_STRING, 0, tls_ciphersuites, char *, 0, 0, NULL),
    /* latchd's own, shown only when named: CONFIG GET * lists Redis's. */
    ROW("native-scripts", NULL, P_BOOL, PF_HIDDEN, native_scripts, int, 0, 0, NULL),
    ROW("port-file", NULL, P_STRING, PF_HIDDEN | IMM, port_file, char *, 0, 0, NULL),
    ROW("enable-clock-control", NULL, P_BOOL, PF_HIDDEN | IMM, enable_clock_control, int, 0, 0, NULL),
    ROW("tls-handshake-timeout", NULL, P_INT64, PF_HIDDEN, tls_handshake_timeout, long long, 1, INT_MAX, NULL),
    ROW("busy-poll-usecs", NULL, P_INT64, PF_HIDDEN, busy_poll_usecs, long long, 0, 1000000, NULL),
    /* Replication on Raft (server/repl/): fixed at start, raft-id 0 is off. */
    ROW("raft-id", NULL, P_INT64, PF_HIDDEN | IMM, raft_id, long long, 0, LLONG_MAX, NULL),
    ROW("raft-address", NULL, P_STRING, PF_HIDDEN | IMM, raft_address, char *, 0, 0, NULL),
    ROW("raft-peers", NULL, P_STRING, PF_HIDDEN | IMM, raft_peers, char *, 0, 0, NULL),
    ROW("raft-dir", NULL, P_STRING, PF_HIDDEN | IMM, raft_dir, char *, 0, 0, NULL),
    ROW("raft-election-timeout", NULL, P_INT64, PF_HIDDEN | IMM, raft_election_timeout, long long, 10, INT_MAX, NULL),
    ROW("raft-heartbeat-timeout", NULL, P_INT64, PF_HIDDEN | IMM, raft_heartbeat_timeout, long long, 1, INT_MAX, NULL),
    ROW("raft-snapshot-threshold", NULL, P_INT64, PF_HIDDEN | IMM, raft_snapshot_threshold, long long, 2, INT_MAX, NULL),

    /* Kept and reported, without effect in latchd. */
    ROW("rdbchecksum", NULL, P_BOOL, IMM, rdbchecksum, int, 0, 0, NULL),
    BOOL_("io-threads-do-reads", NULL, IMM, "no"),
    ROW("rdbcompression", NULL, P_BOOL, 0, rdbcompression, int, 0, 0, NULL),
    BOOL_("rdb-del-sync-files", NULL, 0, "no"),
    ROW("activerehashing", NULL, P_BOOL, 0, activerehashing, int, 0, 0, NULL),
    BOOL_("stop-writes-on-bgsave-error", NULL, 0, "yes"),
    BOOL_("set-proc-title", NULL, IMM, "yes"),
    BOOL_("dynamic-hz", NULL, 0, "yes"),
    ROW("lazyfree-lazy-eviction", NULL, P_BOOL, 0, lazyfree_lazy_eviction, int, 0, 0, NULL),
    ROW("lazyfree-lazy-expire", NULL, P_BOOL, 0, lazyfree_lazy_expire, int, 0, 0, NULL),
    ROW("lazyfree-lazy-server-del", NULL, P_BOOL, 0, lazyfree_lazy_server_del, int, 0, 0, NULL),
    ROW("lazyfree-lazy-user-del", NULL, P_BOOL, 0, lazyfree_lazy_user_del, int, 0, 0, NULL),
    ROW("lazyfree-lazy-user-flush", NULL, P_BOOL, 0, lazyfree_lazy_user_flush, int, 0, 0, NULL),
    BOOL_("repl-disable-tcp-nodelay", NULL, 0, "no"),
    BOOL_("repl-diskless-sync", NULL, 0, "yes"),
    BOOL_("aof-rewrite-incremental-fsync", NULL, 0, "yes"),
    BOOL_("no-appendfsync-on-rewrite", NULL, 0, "no"),
    BOOL_("cluster-require-full-coverage", NULL, 0, "yes"),
    BOOL_("rdb-save-incremental-fsync", NULL, 0, "yes"),
    BOOL_("cluster-replica-no-failover", "cluster-slave-no-failover", 0, "no"),
    BOOL_("replica-lazy-flush", "slave-lazy-flush", 0, "no"),
    BOOL_("replica-serve-stale-data", "slave-serve-stale-data", 0, "yes"),
    BOOL_("replica-read-only", "slave-read-only", 0, "yes"),
    BOOL_("replica-ignore-maxmemory", "slave-ignore-maxmemory", 0, "yes"),
    BOOL_("jemalloc-bg-thread", NULL, 0, "yes"),
    BOOL_("activedefrag", NULL, 0, "no"),
    BOOL_("syslog-enabled", NULL, IMM, "no"),
    BOOL_("cluster-enabled", NULL, IMM, "no"),
    BOOL_("cluster-allow-reads-when-down", NULL, 0, "no"),
    BOOL_("cluster-allow-pubsubshard-when-down", NULL, 0, "yes"),
    BOOL_("crash-log-enabled", NULL, 0, "yes"),
    BOOL_("crash-memcheck-enabled", NULL, 0, "yes"),
    BOOL_("use-exit-on-panic", NULL, PF_HIDDEN, "no"),
    BOOL_("disable-thp", NULL, IMM, "yes"),
    BOOL_("cluster-allow-replica-migration", NULL, 0, "yes"),
    BOOL_("replica-announced", NULL, 0, "yes"),
    ROW("latency-tracking", NULL, P_BOOL, 0, latency_tracking, int, 0, 0, NULL),
    BOOL_("aof-disable-auto-gc", NULL, 0, "no"),
    BOOL_("replica-ignore-disk-write-errors", NULL, 0, "no"),
    BOOL_("lua-enable-deprecated-api", NULL, IMM | PF_HIDDEN, "no"),
    ROW("aclfile", NULL, P_STRING, IMM, aclfile, char *, 0, 0, NULL),
    STR_("replica-announce-ip", "slave-announce-ip", 0, ""),
    STR_("masteruser", NULL, 0, ""),
    STR_("cluster-announce-ip", NULL, 0, ""),
    STR_("cluster-config-file", NULL, IMM, "nodes.conf"),
    STR_("cluster-announce-hostname", NULL, 0, ""),
    STR_("syslog-ident", NULL, IMM, "redis"),
    {"dbfilename", NULL, P_STRING, PF_PROTECTED, FIELD(dbfilename, char *), 0, 0, NULL, NULL, NULL,
     dbfilename_check},
    ROW("server_cpulist", NULL, P_STRING, IMM, server_cpulist, char *, 0, 0, NULL),
    ROW("bio_cpulist", NULL, P_STRING, IMM, bio_cpulist, char *, 0, 0, NULL),
    ROW("aof_rewrite_cpulist", NULL, P_STRING, IMM, aof_rewrite_cpulist, char *, 0, 0, NULL),
    ROW("bgsave_cpulist", NULL, P_STRING, IMM, bgsave_cpulist, char *, 0, 0, NULL),
    STR_("ignore-warnings", NULL, 0, ""),
    CHECKED_("proc-title-template", 0, proc_title_check, "{title} {listen-addr} {server-mode}"),
    STR_("bind-source-addr", NULL, 0, ""),
    {"masterauth", NULL, P_BINARY, PF_NOEFFECT, INERT, 0, 0, NULL, NULL, "", NULL},
    ENUM_("syslog-facility", NULL, IMM, facility_names, "local0"),
    ENUM_("repl-diskless-load", NULL, 0, diskless_load_names, "disabled"),
    {"oom-score-adj", NULL, P_ENUM, 0, INERT, 0, 0, oom_names, NULL, "no", NULL},
    ROW("acl-pubsub-default", NULL, P_ENUM, 0, acl_pubsub_default, int, 0, 0, pubsub_default_names),
    ROW("sanitize-dump-payload", NULL, P_ENUM, 0, sanitize_dump_payload, int, 0, 0, sanitize_names),
    ENUM_("enable-protected-configs", NULL, IMM, protected_names, "no"),
    ENUM_("enable-module-command", NULL, IMM, protected_names, "no"),
    ENUM_("cluster-preferred-endpoint-type", NULL, 0, endpoint_names, "ip"),
    ENUM_("propagation-error-behavior", NULL, 0, propagation_names, "ignore"),
    WORDS_("shutdown-on-sigint", NULL, 0, shutdown_words, "default"),
    WORDS_("shutdown-on-sigterm", NULL, 0, shutdown_words, "default"),
    INT_("io-threads", NULL, IMM, 1, 128, "1"),
    INT_("cluster-replica-validity-factor", "cluster-slave-validity-factor", 0, 0, INT_MAX, "10"),
    INT_("cluster-migration-barrier", NULL, 0, 0, INT_MAX, "1"),
    INT_("active-defrag-cycle-min", NULL, 0, 1, 99, "1"),
    INT_("active-defrag-cycle-max", NULL, 0, 1, 99, "25"),
    INT_("active-defrag-threshold-lower", NULL, 0, 0, 1000, "10"),
    INT_("active-defrag-threshold-upper", NULL, 0, 0, 1000, "100"),
    INT_("replica-priority", "slave-priority", 0, 0, INT_MAX, "100"),
    INT_("repl-diskless-sync-delay", NULL, 0, 0, INT_MAX, "5"),

    INT_("maxmemory-eviction-tenacity", NULL, 0, 0, 100, "10"),
    INT_("replica-announce-port", "slave-announce-port", 0, 0, 65535, "0"),
    INT_("tcp-backlog", NULL, IMM, 0, INT_MAX, "511"),
    INT_("cluster-port", NULL, IMM, 0, 65535, "0"),
    INT_("cluster-announce-bus-port", NULL, 0, 0, 65535, "0"),
    INT_("cluster-announce-port", NULL, 0, 0, 65535, "0"),
    INT_("cluster-announce-tls-port", NULL, 0, 0, 65535, "0"),
    INT_("repl-timeout", NULL, 0, 1, INT_MAX, "60"),
    INT_("repl-ping-replica-period", "repl-ping-slave-period", 0, 1, INT_MAX, "10"),
    ROW("rdb-key-save-delay", NULL, P_INT64, PF_HIDDEN, rdb_key_save_delay, long long, INT_MIN, INT_MAX, NULL),
    INT_("key-load-delay", NULL, PF_HIDDEN, INT_MIN, INT_MAX, "0"),
    INT_("active-expire-effort", NULL, 0, 1, 10, "1"),
    INT_("min-replicas-to-write", "min-slaves-to-write", 0, 0, INT_MAX, "0"),
    INT_("min-replicas-max-lag", "min-slaves-max-lag", 0, 0, INT_MAX, "10"),
    INT_("watchdog-period", NULL, PF_HIDDEN, 0, INT_MAX, "0"),
    INT_("shutdown-timeout", NULL, 0, 0, INT_MAX, "10"),
    INT_("repl-diskless-sync-max-replicas", NULL, 0, 0, INT_MAX, "0"),
    INT_("socket-mark-id", NULL, IMM, 0, UINT_MAX, "0"),
    INT_("active-defrag-max-scan-fields", NULL, 0, 1, LONG_MAX, "1000"),
    ROW("acllog-max-len", NULL, P_INT64, 0, acllog_max_len, long long, 0, LONG_MAX, NULL),
    INT_("cluster-node-timeout", NULL, 0, 0, LLONG_MAX, "15000"),
    MEM_("repl-backlog-size", NULL, 0, 1, LLONG_MAX, "1048576"),
    {"cluster-link-sendbuf-limit", NULL, P_UMEMORY, PF_NOEFFECT, INERT, 0, 0, NULL, NULL, "0", NULL},
    MEM_("active-defrag-ignore-bytes", NULL, 0, 1, LLONG_MAX, "104857600"),
    ROW("maxmemory-clients", NULL, P_PERCENT, 0, maxmemory_clients, long long, -100, LONG_MAX, NULL),
    INT_("repl-backlog-ttl", NULL, 0, 0, LONG_MAX, "3600"),
    INT_("loading-process-events-interval-bytes", NULL, PF_HIDDEN, 1024, INT_MAX, "2097152"),
    BOOL_("tls-cluster", NULL, 0, "no"),
    BOOL_("tls-replication", NULL, 0, "no"),
    {"oom-score-adj-values", NULL, P_WORDS, 0, INERT, 0, 0, NULL, oom_values_words, "0 200 800", NULL},
    WORDS_("replicaof", "slaveof", IMM, replicaof_words, ""),
    {"latency-tracking-info-percentiles", NULL, P_WORDS, 0, INERT, 0, 0, NULL, percentiles_words, "50 99 99.9", NULL},
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

long long config_max_bulk(const latchd_config *cfg)
{
    return cfg->proto_max_bulk_len < (long long)STORE_MAX_LEN ? cfg->proto_max_bulk_len : (long long)STORE_MAX_LEN;
}

int client_type_by_name(const char *name, size_t len)
{
    static const struct { const char *name; int type; } types[] = {
        {"normal", CLIENT_TYPE_NORMAL}, {"slave", CLIENT_TYPE_REPLICA}, {"replica", CLIENT_TYPE_REPLICA},
        {"pubsub", CLIENT_TYPE_PUBSUB}, {"master", CLIENT_TYPE_MASTER},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strlen(types[i].name) == len && strncasecmp(types[i].name, name, len) == 0) return types[i].type;
    return -1;
}

static void set_string(char **slot, const char *v)
{
    free(*slot);
    *slot = mem_strdup(v);
}

static void set_binary(config_bin *slot, const char *v, size_t len)
{
    free(slot->s);
    slot->s = mem_strndup(v, len);
    slot->len = len;
}

static int set_param(latchd_config *cfg, const param *p, const char **vals, const size_t *lens, int nvals,
                     char *err, size_t errlen);

static void *slot_of(const latchd_config *cfg, const param *p)
{
    return p->off == INERT ? (void *)&cfg->slots[p - params] : (void *)((char *)cfg + p->off);
}

/* Its value is a malloc'd char *. */
static int is_string(const param *p) { return p->type == P_STRING || p->type == P_WORDS || p->type == P_DIR; }

/* b's text: "" while nothing was added. */
static const char *text_of(const resp_buf *b) { return b->len ? b->data : ""; }

void config_defaults(latchd_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->slots = mem_calloc(NPARAMS, sizeof(*cfg->slots));
    cfg->given = mem_calloc(NPARAMS, 1);
    cfg->config_file = mem_strdup("");
    for (size_t i = 0; i < NPARAMS; i++) {
        char err[256];
        const char *def = params[i].def;
        if (params[i].off != INERT) continue;
        if (is_string(&params[i])) cfg->slots[i].s = mem_strdup("");
        /* the table's own defaults: a failure is a bug in a row */
        if (set_param(cfg, &params[i], &def, NULL, 1, err, sizeof(err)) != 0) abort();
    }
    cfg->port = 6379;
    /* Redis 7.0's default (redis.conf narrows it to loopback); protected
     * mode keeps other addresses out while there is no password */
    cfg->bind[0] = mem_strdup("*");
    cfg->bind[1] = mem_strdup("-::*");
    cfg->nbind = 2;
    cfg->unixsocket = mem_strdup("");
    cfg->loglevel = LOG_NOTICE;
    cfg->logfile = mem_strdup("");
    cfg->pidfile = mem_strdup("");
    cfg->server_cpulist = mem_strdup("");
    cfg->bio_cpulist = mem_strdup("");
    cfg->aof_rewrite_cpulist = mem_strdup("");
    cfg->bgsave_cpulist = mem_strdup("");
    set_binary(&cfg->requirepass, "", 0);
    cfg->aclfile = mem_strdup("");
    cfg->acl_pubsub_default = CONFIG_ACL_PUBSUB_RESETCHANNELS;
    cfg->sanitize_dump_payload = CONFIG_SANITIZE_NO;
    cfg->acllog_max_len = 128;
    cfg->acl_users = mem_strdup("");
    cfg->proto_max_bulk_len = 512LL * 1024 * 1024;
    cfg->client_query_buffer_limit = 1024LL * 1024 * 1024;
    cfg->maxmemory_policy = CONFIG_MAXMEMORY_NOEVICTION;
    cfg->maxclients = 10000;
    cfg->tcp_keepalive = 300;
    cfg->maxmemory_samples = 5;
    cfg->databases = 16;
    cfg->protected_mode = 1;
    cfg->save = mem_strdup("");   /* a test double keeps nothing on disk unless asked */
    cfg->dbfilename = mem_strdup("dump.rdb");
    cfg->appendfilename = mem_strdup("appendonly.aof");
    cfg->appenddirname = mem_strdup("appendonlydir");
    cfg->aof_load_truncated = 1;
    cfg->auto_aof_rewrite_percentage = 100;
    cfg->auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
    cfg->rdbcompression = 1;
    cfg->activerehashing = 1;
    cfg->rdbchecksum = 1;
    cfg->dir = mem_strdup(".");
    cfg->hz = 10;
    cfg->busy_reply_ms = 5000;
    cfg->list_max_listpack_size = -2;
    cfg->set_max_intset_entries = 512;
    cfg->hash_max_listpack_entries = 512;
    cfg->hash_max_listpack_value = 64;
    cfg->zset_max_listpack_entries = 128;
    cfg->zset_max_listpack_value = 64;
    cfg->lfu_log_factor = 10;
    cfg->lfu_decay_time = 1;
    cfg->tracking_table_max_keys = 1000000;
    cfg->hll_sparse_max_bytes = 3000;
    cfg->stream_node_max_entries = 100;
    cfg->stream_node_max_bytes = 4096;
    cfg->slowlog_log_slower_than = 10000;
    cfg->slowlog_max_len = 128;
    cfg->latency_tracking = 1;
    cfg->aof_use_rdb_preamble = 1;
    cfg->native_scripts = 1;
    cfg->port_file = mem_strdup("");
    cfg->raft_address = mem_strdup("");
    cfg->raft_peers = mem_strdup("");
    cfg->raft_dir = mem_strdup("");   /* "": raft-<id> in dir */
    cfg->raft_election_timeout = 1000;
    cfg->raft_heartbeat_timeout = 100;
    cfg->raft_snapshot_threshold = 1024;
    char **tls_strings[] = {&cfg->tls_cert_file, &cfg->tls_key_file, &cfg->tls_key_file_pass,
                            &cfg->tls_client_cert_file, &cfg->tls_client_key_file, &cfg->tls_client_key_file_pass,
                            &cfg->tls_dh_params_file, &cfg->tls_ca_cert_file, &cfg->tls_ca_cert_dir,
                            &cfg->tls_protocols, &cfg->tls_ciphers, &cfg->tls_ciphersuites};
    for (size_t i = 0; i < sizeof(tls_strings) / sizeof(tls_strings[0]); i++) *tls_strings[i] = mem_strdup("");
    cfg->tls_auth_clients = CONFIG_TLS_AUTH_YES;
    cfg->tls_session_caching = 1;
    cfg->tls_session_cache_size = 20 * 1024;
    cfg->tls_session_cache_timeout = 300;
    cfg->tls_handshake_timeout = 10000;
    cfg->enable_debug_command = CONFIG_PROTECTED_LOCAL;
    cfg->supervised = CONFIG_SUPERVISED_NO;
    cfg->obuf_limits[CLIENT_TYPE_NORMAL] = (obuf_limit){0, 0, 0};
    cfg->obuf_limits[CLIENT_TYPE_REPLICA] = (obuf_limit){256ULL << 20, 64ULL << 20, 60};
    cfg->obuf_limits[CLIENT_TYPE_PUBSUB] = (obuf_limit){32ULL << 20, 8ULL << 20, 60};
}

static void free_binds(latchd_config *cfg)
{
    for (int i = 0; i < cfg->nbind; i++) free(cfg->bind[i]);
    cfg->nbind = 0;
}

void config_free(latchd_config *cfg)
{
    free_binds(cfg);
    for (size_t i = 0; i < NPARAMS && cfg->slots; i++)
        if (is_string(&params[i])) free(*(char **)slot_of(cfg, &params[i]));
        else if (params[i].type == P_BINARY) free(((config_bin *)slot_of(cfg, &params[i]))->s);
    free(cfg->slots);
    free(cfg->given);
    free(cfg->config_file);
    free(cfg->acl_users);
    memset(cfg, 0, sizeof(*cfg));
}

void config_copy(latchd_config *dst, const latchd_config *src)
{
    *dst = *src;
    dst->slots = mem_alloc(NPARAMS * sizeof(*dst->slots));
    memcpy(dst->slots, src->slots, NPARAMS * sizeof(*dst->slots));
    dst->given = mem_alloc(NPARAMS);
    memcpy(dst->given, src->given, NPARAMS);
    dst->config_file = mem_strdup(src->config_file);
    dst->acl_users = mem_strdup(src->acl_users ? src->acl_users : "");
    for (int i = 0; i < src->nbind; i++) dst->bind[i] = mem_strdup(src->bind[i]);
    for (size_t i = 0; i < NPARAMS; i++) {
        if (params[i].type == P_BINARY) {
            config_bin *b = slot_of(dst, &params[i]);
            b->s = mem_strndup(b->s, b->len);
        }
        if (!is_string(&params[i])) continue;
        char **slot = slot_of(dst, &params[i]);
        *slot = mem_strdup(*slot);
    }
}

/* The row named name (or its alias); *shown is the name as the table
 * spells the one that matched. */
static const param *lookup(const char *name, size_t len, const char **shown)
{
    for (size_t i = 0; i < NPARAMS; i++) {
        const char *names[2] = {params[i].name, params[i].alias};
        for (int k = 0; k < 2; k++) {
            if (!names[k] || strlen(names[k]) != len || strncasecmp(names[k], name, len) != 0) continue;
            if (shown) *shown = names[k];
            return &params[i];
        }
    }
    return NULL;
}

int config_exists(const char *name, size_t len) { return lookup(name, len, NULL) != NULL; }

int config_protected_configs(const latchd_config *cfg)
{
    static const char name[] = "enable-protected-configs";
    return ((const config_slot *)slot_of(cfg, lookup(name, sizeof(name) - 1, NULL)))->i;
}

int config_tls_peers(const latchd_config *cfg)
{
    static const char repl[] = "tls-replication", cluster[] = "tls-cluster";
    return ((const config_slot *)slot_of(cfg, lookup(repl, sizeof(repl) - 1, NULL)))->i ||
           ((const config_slot *)slot_of(cfg, lookup(cluster, sizeof(cluster) - 1, NULL)))->i;
}

/* "1gb", "512mb", "100k", "42" as Redis 7.0's memtoull reads them (k=1000,
 * kb=1024): digits then a unit, no sign; no digits at all ("", "kb") is 0;
 * up to 127 digits, saturating at ULLONG_MAX; the unit's product wraps. */
#define MEMORY_MAX_DIGITS 127
static int parse_memory(const char *v, unsigned long long *out)
{
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000 * 1000},
        {"mb", 1024 * 1024}, {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024},
    };
    size_t n = 0;
    unsigned long long num = 0;
    for (; isdigit((unsigned char)v[n]); n++) {
        unsigned digit = (unsigned)(v[n] - '0');
        num = num > (ULLONG_MAX - digit) / 10 ? ULLONG_MAX : num * 10 + digit;
    }
    if (n > MEMORY_MAX_DIGITS) return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(v + n, units[i].unit) != 0) continue;
        *out = num * units[i].mul;
        return 0;
    }
    return -1;
}

int config_parse_memory(const char *v, unsigned long long *out) { return parse_memory(v, out); }

static int parse_bool(const char *v, int *out)
{
    if (strcasecmp(v, "yes") == 0) *out = 1;
    else if (strcasecmp(v, "no") == 0) *out = 0;
    else return -1;
    return 0;
}

static int set_binds(latchd_config *cfg, const char **vals, int n, char *err, size_t errlen)
{
    if (n > CONFIG_MAX_BIND) {
        snprintf(err, errlen, "Too many bind addresses specified.");
        return -1;
    }
    free_binds(cfg);
    for (int i = 0; i < n; i++) cfg->bind[i] = mem_strdup(vals[i]);
    cfg->nbind = n;
    return 0;
}

/* A number as Redis's numericParseString reads it for the row's type: a
 * memory value (P_MEMORY, P_PERCENT), N% kept as -N (P_PERCENT), octal
 * (P_OCTAL), else a plain integer; 0 ok, else the error text. */
static const char *parse_number(const param *p, const char *v, long long *n)
{
    unsigned long long mem;
    char *end;
    size_t len = strlen(v);
    if ((p->type == P_MEMORY || p->type == P_PERCENT) && parse_memory(v, &mem) == 0) return *n = (long long)mem, NULL;
    if (p->type == P_PERCENT && len > 1 && v[len - 1] == '%' && store_str2ll(v, len - 1, n) && *n >= 0)
        return *n = -*n, NULL;
    if (p->type == P_OCTAL && (errno = 0, *n = strtoll(v, &end, 8), errno == 0 && *end == '\0' && len)) return NULL;
    if ((p->type == P_INT32 || p->type == P_INT64) && store_str2ll(v, len, n)) return NULL;
    return p->type == P_PERCENT  ? "argument must be a memory or percent value"
           : p->type == P_MEMORY ? "argument must be a memory value"
                                 : "argument couldn't be parsed into an integer";
}

static int set_number(const param *p, long long *slot, const char *v, char *err, size_t errlen)
{
    long long n;
    const char *why = parse_number(p, v, &n);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (p->type == P_PERCENT && n < 0) {
        if (n < p->min) {
            snprintf(err, errlen, "percentage argument must be less or equal to %lld", -p->min);
            return -1;
        }
    } else if (n < p->min || n > p->max) {
        snprintf(err, errlen, p->type == P_OCTAL ? "argument must be between %llo and %llo inclusive"
                                                 : "argument must be between %lld and %lld inclusive",
                 p->min, p->max);
        return -1;
    }
    /* Redis keeps hz within what its timer can do, whatever was asked. */
    if (p->flags & PF_HZ) n = n < 1 ? 1 : n > 500 ? 500 : n;
    *slot = n;
    return 0;
}

/* A "+name" entry is a synonym of the value before it (oom-score-adj's
 * "relative" is "yes"): accepted, never shown. */
static int set_enum(const char *const *names, int *slot, const char *v, char *err, size_t errlen)
{
    int used = snprintf(err, errlen, "argument(s) must be one of the following: "), value = 0;
    for (int i = 0; names[i]; i++) {
        int synonym = names[i][0] == '+';
        if (!synonym) value = i;
        if (strcasecmp(v, names[i] + synonym) == 0) return *slot = value, 0;
        if (used >= 0 && (size_t)used < errlen)
            used += snprintf(err + used, errlen - (size_t)used, "%s%s", i ? ", " : "", names[i] + synonym);
    }
    return -1;
}

static int set_words(const param *p, char **slot, const char **vals, int nvals, char *err, size_t errlen)
{
    resp_buf out;
    resp_buf_init(&out);
    const char *why = p->words(vals, nvals, &out);
    if (why) snprintf(err, errlen, "%s", why);
    else set_string(slot, text_of(&out));
    resp_buf_free(&out);
    return why ? -1 : 0;
}

/* Redis keeps dir as the process's working directory. */
static int set_dir(char **slot, const char *v, char *err, size_t errlen)
{
    if (chdir(v) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    set_string(slot, v);
    return 0;
}

/* v is vlen bytes (a NUL after them); only P_BINARY keeps the bytes past a NUL. */
static int set_one(const param *p, void *slot, const char *v, size_t vlen, char *err, size_t errlen)
{
    long long n;
    const char *why;
    switch (p->type) {
    case P_BINARY:
        set_binary((config_bin *)slot, v, vlen);
        return 0;
    case P_STRING:
        if (p->check && (why = p->check(v))) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
        set_string((char **)slot, v);
        return 0;
    case P_DIR:
        return set_dir((char **)slot, v, err, errlen);
    case P_BOOL:
        if (parse_bool(v, (int *)slot) == 0) return 0;
        snprintf(err, errlen, "argument must be 'yes' or 'no'");
        return -1;
    case P_ENUM:
        return set_enum(p->names, (int *)slot, v, err, errlen);
    case P_INT32:
    case P_OCTAL:
        /* min/max of every P_INT32 and P_OCTAL row fit an int */
        if (set_number(p, &n, v, err, errlen) != 0) return -1;
        *(int *)slot = (int)n;
        return 0;
    case P_INT64:
    case P_MEMORY:
    case P_PERCENT:
        return set_number(p, (long long *)slot, v, err, errlen);
    case P_UMEMORY:
        if (parse_memory(v, (unsigned long long *)slot) == 0) return 0;
        snprintf(err, errlen, "argument must be a memory value");
        return -1;
    case P_NOTIFY:
        if ((n = notify_flags_parse(v, strlen(v))) >= 0) return *(int *)slot = (int)n, 0;
        snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    case P_WORDS:
    case P_BIND:
    case P_OBUF:
        break;
    }
    return -1;
}

/* ---- checked strings ---- */

static const char *dbfilename_check(const char *v)
{
    return strchr(v, '/') ? "dbfilename can't be a path, just a filename" : NULL;
}

static const char *appendfilename_check(const char *v)
{
    return strchr(v, '/') ? "appendfilename can't be a path, just a filename" : NULL;
}

static const char *appenddirname_check(const char *v)
{
    return strchr(v, '/') ? "appenddirname can't be a path, just a directory name" : NULL;
}

/* Redis expands the template with an empty title: every {variable} must
 * be one it knows ({{ and }} are braces) and something must be left. */
static const char *proc_title_check(const char *v)
{
    static const struct { const char *name; int empty; } vars[] = {
        {"title", 1}, {"listen-addr", 0}, {"server-mode", 1}, {"config-file", 0},
        {"port", 0}, {"tls-port", 0}, {"unixsocket", 1},
    };
    static const char invalid[] = "template format is invalid or contains unknown variables";
    int something = 0;
    for (const char *c = v; *c; c++) {
        if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
            something = 1;
            c++;
            continue;
        }
        if (*c != '{') {
            something |= *c != ' ';
            continue;
        }
        const char *end = strchr(c, '}');
        size_t i = 0, len = end ? (size_t)(end - c - 1) : 0;
        while (end && i < sizeof(vars) / sizeof(vars[0]) && (strlen(vars[i].name) != len || strncmp(vars[i].name, c + 1, len)))
            i++;
        if (!end || i == sizeof(vars) / sizeof(vars[0])) return invalid;
        something |= !vars[i].empty;
        c = end;
    }
    return something ? NULL : invalid;
}

/* ---- several-argument values (words_fn) ---- */

/* A lone "" is no words at all (`save ""`). */
static int no_words(const char **w, int n) { return n == 0 || (n == 1 && !w[0][0]); }

static const char *save_words(const char **w, int n, resp_buf *out)
{
    if (no_words(w, n)) return NULL;
    if (n % 2) return "Invalid save parameters";
    for (int i = 0; i < n; i++) {
        char *end;
        long long v = strtoll(w[i], &end, 10);
        if (*end || v < (i % 2 ? 0 : 1)) return "Invalid save parameters";
        resp_buf_appendf(out, "%s%lld", i ? " " : "", v);
    }
    return NULL;
}

static const char *oom_values_words(const char **w, int n, resp_buf *out)
{
    if (n != 3) return "wrong number of arguments";
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(w[i], &end, 10);
        if (*end || !w[i][0] || v < -2000 || v > 2000)
            return "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
        resp_buf_appendf(out, "%s%ld", i ? " " : "", v);
    }
    return NULL;
}

static const char *percentiles_words(const char **w, int n, resp_buf *out)
{
    if (no_words(w, n)) return NULL;
    for (int i = 0; i < n; i++) {
        char *end;
        double v = strtod(w[i], &end);
        if (*end || !w[i][0]) return "Invalid latency-tracking-info-percentiles parameters";
        if (v < 0 || v > 100) return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        resp_buf_appendf(out, "%s%g", i ? " " : "", v);
    }
    return NULL;
}

static const char *shutdown_words(const char **w, int n, resp_buf *out)
{
    static const char *const flags[] = {"default", "save", "nosave", "now", "force"};
    unsigned set = 0;
    for (int i = 0; i < n; i++) {
        size_t f = 0;
        while (f < 5 && strcasecmp(w[i], flags[f]) != 0) f++;
        if (f == 5) return "argument(s) must be one of the following: default, save, nosave, now, force";
        set |= f ? 1u << f : 0;
    }
    if ((set & 6u) == 6u) return "shutdown options SAVE and NOSAVE can't be used simultaneously";
    for (size_t f = 1; f < 5; f++)
        if (set & (1u << f)) resp_buf_appendf(out, "%s%s", out->len ? " " : "", flags[f]);
    if (!set) resp_buf_appendf(out, "default");
    return NULL;
}

/* "host port", or "no one" (none: shown as ""). latchd never replicates. */
static const char *replicaof_words(const char **w, int n, resp_buf *out)
{
    char *end;
    if (no_words(w, n)) return NULL;
    if (n != 2) return "wrong number of arguments";
    if (!strcasecmp(w[0], "no") && !strcasecmp(w[1], "one")) return NULL;
    long port = strtol(w[1], &end, 10);
    if (*end || port < 0 || port > 65535) return "Invalid master port";
    resp_buf_appendf(out, "%s %ld", w[0], port);
    return NULL;
}

/* CONFIG SET passes a several-argument value as one string, split on
 * single spaces as Redis does ("" is no words); a config file line or
 * flags may pass the words apart. *words (and *buf, their text) are
 * malloc'd for the caller to free. */
static int split_words(const char **vals, int nvals, char **buf, const char ***words)
{
    int n = 0;
    *buf = NULL;
    if (nvals != 1) {
        *words = mem_alloc(((size_t)nvals + 1) * sizeof(**words));
        memcpy(*words, vals, (size_t)nvals * sizeof(**words));
        return nvals;
    }
    size_t spaces = 0;
    for (const char *c = vals[0]; *c; c++) spaces += *c == ' ';
    *words = mem_alloc((spaces + 2) * sizeof(**words));
    if (!vals[0][0]) return 0;
    *buf = mem_strdup(vals[0]);
    for (char *w = *buf, *sp;; w = sp + 1) {
        (*words)[n++] = w;
        if (!(sp = strchr(w, ' '))) return n;
        *sp = '\0';
    }
}

static int obuf_group(const char **w, obuf_limit *limits, char *err, size_t errlen)
{
    unsigned long long hard, soft;
    char *end;
    int type = client_type_by_name(w[0], strlen(w[0]));
    if (type < 0 || type == CLIENT_TYPE_MASTER) {
        snprintf(err, errlen, "Invalid client class specified in buffer limit configuration.");
        return -1;
    }
    long long secs = strtoll(w[3], &end, 10);
    if (parse_memory(w[1], &hard) || parse_memory(w[2], &soft) || *end || secs < 0) {
        snprintf(err, errlen, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
        return -1;
    }
    limits[type] = (obuf_limit){hard, soft, secs};
    return 0;
}

/* "class hard soft seconds ..." for any of the classes; every group is
 * checked before any applies. */
static int set_obuf(latchd_config *cfg, const char **words, int n, char *err, size_t errlen)
{
    obuf_limit next[CLIENT_TYPE_OBUF_COUNT];
    if (n % 4) {
        snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        return -1;
    }
    memcpy(next, cfg->obuf_limits, sizeof(next));
    for (int j = 0; j < n; j += 4)
        if (obuf_group(words + j, next, err, errlen) != 0) return -1;
    memcpy(cfg->obuf_limits, next, sizeof(next));
    return 0;
}

static int multi_arg(const param *p) { return p->type == P_WORDS || p->type == P_BIND || p->type == P_OBUF; }

/* lens: the values' lengths, or NULL for C strings. */
static int set_param(latchd_config *cfg, const param *p, const char **vals, const size_t *lens, int nvals,
                     char *err, size_t errlen)
{
    char *buf;
    const char **words;
    void *slot = slot_of(cfg, p);
    if (!multi_arg(p)) {
        if (nvals == 1) return set_one(p, slot, vals[0], lens ? lens[0] : strlen(vals[0]), err, errlen);
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    int n = split_words(vals, nvals, &buf, &words), rc;
    if (p->type == P_BIND) rc = set_binds(cfg, words, n, err, errlen);
    else if (p->type == P_OBUF) rc = set_obuf(cfg, words, n, err, errlen);
    else rc = set_words(p, (char **)slot, words, n, err, errlen);
    free(buf);
    free(words);
    return rc;
}

int config_set(latchd_config *cfg, const char *name, const char **vals, int nvals,
               char *err, size_t errlen)
{
    const param *p = lookup(name, strlen(name), NULL);
    if (!p) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    return set_param(cfg, p, vals, NULL, nvals, err, errlen);
}

/* The first problem with the names, in Redis's order of precedence: the
 * first unknown or refused name. 0 if none. */
static int check_names(const char *const *argv, const size_t *lens, int npairs, int protected_ok,
                       const param **rows, const char **shown, char *err, size_t errlen)
{
    const char *why = NULL, *arg = NULL;
    for (int i = 0; i < npairs && !why; i++) {
        const char *name = argv[2 * i];
        rows[i] = lookup(name, lens[2 * i], &shown[i]);   /* a name with a NUL in it is none */
        arg = name;
        if (!rows[i]) {
            snprintf(err, errlen, "Unknown option or number of arguments for CONFIG SET - '%s'", name);
            return -1;
        }
        if (rows[i]->flags & PF_IMMUTABLE) why = "can't set immutable config";
        else if ((rows[i]->flags & PF_PROTECTED) && !protected_ok) why = "can't set protected config";
        /* an alias is a parameter of its own here, as in Redis 7.0 */
        for (int j = 0; j < i && !why; j++)
            if (rows[j] == rows[i] && shown[j] == shown[i]) why = "duplicate parameter";
    }
    if (!why) return 0;
    snprintf(err, errlen, "CONFIG SET failed (possibly related to argument '%s') - %s", arg, why);
    return -1;
}

/* Every value set on next, a copy of cfg; -1 with next freed on the first
 * that does not take. */
static int set_pairs(const latchd_config *cfg, latchd_config *next, const char *const *argv, const size_t *lens,
                     int npairs, const param **rows, const char **shown, char *err, size_t errlen)
{
    char why[512], cwd[PATH_MAX];
    /* dir moves the process: a later bad value moves it back */
    if (!getcwd(cwd, sizeof(cwd))) cwd[0] = '\0';
    config_copy(next, cfg);
    for (int i = 0; i < npairs; i++) {
        const char *value = argv[2 * i + 1];
        if (set_param(next, rows[i], &value, &lens[2 * i + 1], 1, why, sizeof(why)) == 0) continue;
        snprintf(err, errlen, "CONFIG SET failed (possibly related to argument '%s') - %s", shown[i], why);
        config_free(next);
        if (cwd[0] && chdir(cwd) != 0) {
            /* nowhere better to be: the old directory is gone */
        }
        return -1;
    }
    return 0;
}

int config_set_pairs(const latchd_config *cfg, latchd_config *next, const char *const *argv, const size_t *lens,
                     int npairs, int protected_ok, char *err, size_t errlen)
{
    const param **rows = mem_alloc((size_t)npairs * sizeof(*rows));
    const char **shown = mem_alloc((size_t)npairs * sizeof(*shown));
    int rc = check_names(argv, lens, npairs, protected_ok, rows, shown, err, errlen);
    if (rc == 0) rc = set_pairs(cfg, next, argv, lens, npairs, rows, shown, err, errlen);
    free(rows);
    free(shown);
    return rc;
}


/* Redis's rewriteConfigFormatMemory: whole gb, mb or kb when exact. */
static void format_memory(char *buf, size_t len, unsigned long long v)
{
    static const struct { const char *unit; unsigned long long size; } units[] = {
        {"gb", 1ULL << 30}, {"mb", 1ULL << 20}, {"kb", 1ULL << 10},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (v && v % units[i].size == 0) {
            snprintf(buf, len, "%llu%s", v / units[i].size, units[i].unit);
            return;
        }
    }
    snprintf(buf, len, "%llu", v);
}

static const char *const obuf_class_names[] = {
    [CLIENT_TYPE_NORMAL] = "normal", [CLIENT_TYPE_REPLICA] = "slave", [CLIENT_TYPE_PUBSUB] = "pubsub",
};

/* p's value as CONFIG GET shows it, into b (emptied first): b->len bytes,
 * NULs among them for a P_BINARY value. */
static const char *format_value(const latchd_config *cfg, const param *p, resp_buf *b)
{
    const void *slot = slot_of(cfg, p);
    char cwd[PATH_MAX], flags[16];
    long long n;
    b->len = 0;
    switch (p->type) {
    case P_STRING:
    case P_WORDS: resp_buf_appendf(b, "%s", *(char *const *)slot); break;
    case P_BINARY: resp_buf_append(b, ((const config_bin *)slot)->s, ((const config_bin *)slot)->len); break;
    case P_DIR: resp_buf_appendf(b, "%s", getcwd(cwd, sizeof(cwd)) ? cwd : *(char *const *)slot); break;
    case P_BOOL: resp_buf_appendf(b, "%s", *(const int *)slot ? "yes" : "no"); break;
    case P_ENUM: resp_buf_appendf(b, "%s", p->names[*(const int *)slot]); break;
    case P_OCTAL: resp_buf_appendf(b, "%o", *(const int *)slot); break;
    case P_INT32: resp_buf_appendf(b, "%d", *(const int *)slot); break;
    case P_INT64:
    case P_MEMORY: resp_buf_appendf(b, "%lld", *(const long long *)slot); break;
    case P_PERCENT:
        n = *(const long long *)slot;
        resp_buf_appendf(b, n < 0 ? "%lld%%" : "%lld", n < 0 ? -n : n);
        break;
    case P_UMEMORY: resp_buf_appendf(b, "%llu", *(const unsigned long long *)slot); break;
    case P_NOTIFY:
        notify_flags_format(*(const int *)slot, flags);
        resp_buf_appendf(b, "%s", flags);
        break;
    case P_OBUF:
        for (int i = 0; i < CLIENT_TYPE_OBUF_COUNT; i++) {
            const obuf_limit *l = &cfg->obuf_limits[i];
            resp_buf_appendf(b, "%s%s %llu %llu %lld", i ? " " : "", obuf_class_names[i], l->hard, l->soft, l->soft_seconds);
        }
        break;
    case P_BIND:
        for (int i = 0; i < cfg->nbind; i++) resp_buf_appendf(b, "%s%s", i ? " " : "", cfg->bind[i]);
        break;
    }
    return text_of(b);
}

size_t config_name_count(void) { return 2 * NPARAMS; }

void config_get(const latchd_config *cfg, const char *pattern, size_t plen,
                config_visit_fn fn, void *ctx)
{
    resp_buf value;
    const char *shown;
    resp_buf_init(&value);
    if (!memchr(pattern, '*', plen) && !memchr(pattern, '?', plen) && !memchr(pattern, '[', plen)) {
        const param *p = lookup(pattern, plen, &shown);
        if (p) {
            const char *v = format_value(cfg, p, &value);   /* before value.len is read */
            fn(shown, v, value.len, ctx);
        }
        resp_buf_free(&value);
        return;
    }
    for (size_t i = 0; i < NPARAMS; i++) {
        const param *p = &params[i];
        const char *names[2] = {p->name, p->alias};
        if (p->flags & PF_HIDDEN) continue;
        for (int k = 0; k < 2; k++) {
            if (!names[k] || !glob_match(pattern, plen, names[k], strlen(names[k]), 1)) continue;
            const char *v = format_value(cfg, p, &value);
            fn(names[k], v, value.len, ctx);
        }
    }
    resp_buf_free(&value);
}

/* ---- the config file ---- */

/* Directives a redis.conf may hold that are no parameter: include is
 * followed; rename-command is accepted with a warning (every command keeps
 * its name); user lines are kept for the ACL (acl.c reads them once the
 * server starts, as Redis does); loadmodule stops the start: a module's
 * commands would be missing. */
static const char *const other_directives[] = {"rename-command"};
#define NOTHER (sizeof(other_directives) / sizeof(other_directives[0]))
static const char *const other_reasons[NOTHER] = {
    "every command keeps its name and stays available",
};
static const char *const refused_directives[] = {"loadmodule"};
static const char *const refused_reasons[] = {
    "latchd loads no modules",
};
/* Redis 7.0 reads these and ignores them. */
static const char *const deprecated_directives[] = {"list-max-ziplist-entries", "list-max-ziplist-value",
                                                    "lua-replicate-commands"};

/* One load: the file, its includes and the flags after it, as Redis reads
 * them all as one text. */
typedef struct load_ctx {
    int save_seen;     /* the first save line replaces the default, the rest add to it */
    int depth;         /* include nesting */
} load_ctx;

static int name_in(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(name, list[i])) return (int)i;
    return -1;
}

/* A user line, kept as "name rule rule..." on a line of its own. Redis
 * refuses a user given twice, and a name with blanks. */
static int add_user_line(latchd_config *cfg, const char **w, int n, char *err, size_t errlen)
{
    size_t nlen = strlen(w[0]);
    for (const char *line = cfg->acl_users; *line;) {
        const char *end = strchr(line, '\n');
        const char *sp = strchr(line, ' ');
        size_t len = sp && (!end || sp < end) ? (size_t)(sp - line) : end ? (size_t)(end - line) : strlen(line);
        if (len == nlen && !memcmp(line, w[0], nlen)) {
            snprintf(err, errlen, "Error in user declaration '%s': Duplicate user found. A user can only be "
                                  "defined once in config files", w[0]);
            return -1;
        }
        line = end ? end + 1 : line + strlen(line);
    }
    resp_buf b;
    resp_buf_init(&b);
    resp_buf_append(&b, cfg->acl_users, strlen(cfg->acl_users));
    for (int i = 0; i < n; i++) resp_buf_appendf(&b, "%s%s", i ? " " : "", w[i]);
    resp_buf_append(&b, "\n", 1);
    free(cfg->acl_users);
    cfg->acl_users = mem_strndup(b.data, b.len);
    resp_buf_free(&b);
    return 0;
}

static int load_file(latchd_config *cfg, const char *path, load_ctx *ctx, char *err, size_t errlen);

/* save's lines add up within one load (Redis's rule); "" clears. */
static int apply_save(latchd_config *cfg, const param *p, const char **vals, int n, load_ctx *ctx, char *err,
                      size_t errlen)
{
    char *before = mem_strdup(cfg->save);
    int rc = set_param(cfg, p, vals, NULL, n, err, errlen);
    if (rc == 0 && ctx->save_seen && before[0] && cfg->save[0]) {
        size_t len = strlen(before) + strlen(cfg->save) + 2;
        char *joined = mem_alloc(len);
        snprintf(joined, len, "%s %s", before, cfg->save);
        free(cfg->save);
        cfg->save = joined;
    }
    ctx->save_seen = 1;
    free(before);
    return rc;
}

/* Applies one "name value..." directive given as argv; used by both the
 * file loader and the command line so they accept the same things. */
static int apply_directive(latchd_config *cfg, int argc, const char **argv, const size_t *lens, load_ctx *ctx,
                           char *err, size_t errlen)
{
    int other;
    const param *p = argc ? lookup(argv[0], strlen(argv[0]), NULL) : NULL;
    if (p) {
        cfg->given[p - params] = 1;
        if (argc < 2 && p->type != P_WORDS) {
            snprintf(err, errlen, "wrong number of arguments");
            return -1;
        }
        if (p->words == save_words)
            return apply_save(cfg, p, argv + 1, argc - 1, ctx, err, errlen);
        return set_param(cfg, p, argv + 1, lens ? lens + 1 : NULL, argc - 1, err, errlen);
    }
    if (argc == 2 && !strcasecmp(argv[0], "include")) return load_file(cfg, argv[1], ctx, err, errlen);
    if (argc >= 2 && (other = name_in(argv[0], other_directives, NOTHER)) >= 0) {
        cfg->directives_ignored |= 1u << other;
        return 0;
    }
    if (argc >= 2 && !strcasecmp(argv[0], "user")) return add_user_line(cfg, argv + 1, argc - 1, err, errlen);
    if (argc >= 2 && (other = name_in(argv[0], refused_directives, 1)) >= 0) {
        snprintf(err, errlen, "%s", refused_reasons[other]);
        return -1;
    }
    if (argc >= 2 && name_in(argv[0], deprecated_directives, 3) >= 0) return 0;
    snprintf(err, errlen, "Bad directive or wrong number of arguments");
    return -1;
}

#define MAX_DIRECTIVE_ARGS 64

/* Split one line with Redis's quoting rules by feeding it to the RESP
 * inline parser: one piece of code for quoting, however the line arrives. */
/* The RESP inline parser for config lines, which have no length limit
 * in Redis. */
static void line_parser_init(resp_parser *rp)
{
    static const resp_limits lim = {SIZE_MAX, RESP_MULTIBULK_MAX, RESP_BULK_MAX, 0};
    resp_parser_init(rp, &lim);
}

/* argv's words are in *wordbuf (malloc'd, the caller frees it, NULL when
 * the line has none); lens, if not NULL, gets their lengths ("\x00" in
 * quotes is a NUL, which requirepass keeps). */
static int split_line(resp_parser *rp, const char *line, size_t len, const char **argv, size_t *lens,
                      char **wordbuf, int *argc)
{
    size_t consumed, used = 0;
    char *buf = mem_alloc(len + 1);
    memcpy(buf, line, len);
    buf[len] = '\n';
    *wordbuf = NULL;
    *argc = 0;
    resp_parser_reset(rp);
    resp_status st = resp_parse(rp, buf, len + 1, &consumed);
    free(buf);
    if (st == RESP_NEED_MORE) return 0;   /* blank line */
    if (st != RESP_COMMAND || rp->argc > MAX_DIRECTIVE_ARGS) return -1;
    *wordbuf = mem_alloc(len + rp->argc + 1);   /* the words are no longer than the line */
    for (size_t i = 0; i < rp->argc; i++) {
        memcpy(*wordbuf + used, rp->argv[i].ptr, rp->argv[i].len);
        (*wordbuf)[used + rp->argv[i].len] = '\0';
        argv[i] = *wordbuf + used;
        if (lens) lens[i] = rp->argv[i].len;
        used += rp->argv[i].len + 1;
    }
    *argc = (int)rp->argc;
    return 0;
}

static int load_lines(latchd_config *cfg, FILE *f, resp_parser *rp, load_ctx *ctx, char *err, size_t errlen)
{
    char *line = NULL, *wordbuf = NULL, why[1024];
    size_t cap = 0;
    const char *argv[MAX_DIRECTIVE_ARGS];
    size_t lens[MAX_DIRECTIVE_ARGS];
    int lineno = 0, argc, rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        size_t len = strcspn(line, "\r\n");
        size_t lead = strspn(line, " \t");
        if (lead == len || line[lead] == '#') continue;
        free(wordbuf);
        if (split_line(rp, line, len, argv, lens, &wordbuf, &argc) != 0) {
            snprintf(why, sizeof(why), "Unbalanced quotes in configuration line");
        } else if (argc == 0 || apply_directive(cfg, argc, argv, lens, ctx, why, sizeof(why)) == 0) {
            continue;
        }
        rc = -1;
        if (!strncmp(why, "\n*** FATAL", 10)) {   /* an include's own error, already complete */
            snprintf(err, errlen, "%s", why);
            break;
        }
        line[len] = '\0';
        snprintf(err, errlen,
                 "\n*** FATAL CONFIG FILE ERROR (latchd %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
                 LATCHD_VERSION, lineno, line, why);
        break;
    }
    free(wordbuf);
    free(line);
    return rc;
}

static int load_one(latchd_config *cfg, const char *path, load_ctx *ctx, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    resp_parser rp;
    line_parser_init(&rp);
    int rc = load_lines(cfg, f, &rp, ctx, err, errlen);
    resp_parser_free(&rp);
    if (f != stdin) fclose(f);
    return rc;
}

#define MAX_INCLUDE_DEPTH 16

/* A path with glob characters is every file it matches, none being fine
 * (an empty conf.d), as Redis reads include; relative to the cwd. */
static int load_file(latchd_config *cfg, const char *path, load_ctx *ctx, char *err, size_t errlen)
{
    int rc = 0;
    glob_t g;
    if (ctx->depth >= MAX_INCLUDE_DEPTH) {
        snprintf(err, errlen, "Too many nested includes (more than %d)", MAX_INCLUDE_DEPTH);
        return -1;
    }
    ctx->depth++;
    if (!strpbrk(path, "*?[")) {
        rc = load_one(cfg, path, ctx, err, errlen);
    } else if (glob(path, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) rc = load_one(cfg, g.gl_pathv[i], ctx, err, errlen);
        globfree(&g);
    }
    ctx->depth--;
    return rc;
}

/* The file latchd starts from, loaded, and its absolute path kept (taken
 * first: a `dir` in it moves the process) for REWRITE, as Redis does. */
static int load_main_file(latchd_config *cfg, const char *path, load_ctx *ctx, char *err, size_t errlen)
{
    char abs[PATH_MAX];
    int known = strcmp(path, "-") != 0 && realpath(path, abs) != NULL;
    if (load_file(cfg, path, ctx, err, errlen) != 0) return -1;
    set_string(&cfg->config_file, known ? abs : "");
    return 0;
}

int config_load_file(latchd_config *cfg, const char *path, char *err, size_t errlen)
{
    load_ctx ctx = {0, 0};
    return load_main_file(cfg, path, &ctx, err, errlen);
}

int config_set_text(latchd_config *cfg, const char *name, const char *value, char *err, size_t errlen)
{
    char *wordbuf;
    const char *vals[MAX_DIRECTIVE_ARGS];
    int n = 0, rc = -1;
    resp_parser rp;
    line_parser_init(&rp);
    if (split_line(&rp, value, strlen(value), vals, NULL, &wordbuf, &n) != 0)
        snprintf(err, errlen, "Unbalanced quotes in configuration line");
    else if (n == 0)
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
    else
        rc = config_set(cfg, name, vals, n, err, errlen);
    free(wordbuf);
    resp_parser_free(&rp);
    return rc;
}

/* Flags are "--name v1 v2 ..." up to the next "--"; the config file, if
 * any, comes first and flags override it, as with redis-server. */
int config_parse_args(latchd_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    load_ctx ctx = {0, 0};
    int i = 1;
    if (i < argc && strncmp(argv[i], "--", 2) != 0) {
        if (load_main_file(cfg, argv[i], &ctx, err, errlen) != 0) return -1;
        i++;
    }
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0) {
            snprintf(err, errlen, "Invalid argument '%s'", argv[i]);
            return -1;
        }
        const char *dargv[MAX_DIRECTIVE_ARGS];
        int n = 0;
        dargv[n++] = argv[i] + 2;
        for (i++; i < argc && strncmp(argv[i], "--", 2) != 0 && n < MAX_DIRECTIVE_ARGS; i++)
            dargv[n++] = argv[i];
        char why[1024];
        if (apply_directive(cfg, n, dargv, NULL, &ctx, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "Invalid option '--%s': %s", dargv[0], why);
            return -1;
        }
    }
    return 0;
}

void config_warn_without_effect(const struct server *s, const latchd_config *cfg)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (cfg->given[i] && (params[i].flags & PF_NOEFFECT))
            log_msg(s, LOG_WARNING, "Config directive '%s' is accepted but has no effect in latchd", params[i].name);
    for (size_t i = 0; i < NOTHER; i++)
        if (cfg->directives_ignored & (1u << i))
            log_msg(s, LOG_WARNING, "Config directive '%s' is ignored: %s", other_directives[i], other_reasons[i]);
}

/* ---- CONFIG REWRITE ---- */

/* A file's lines, read whole. */
typedef struct text_lines {
    char **v;
    size_t n, cap;
} text_lines;

static void lines_add(text_lines *t, char *line)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->v = mem_realloc(t->v, t->cap * sizeof(*t->v));
    }
    t->v[t->n++] = line;
}

static void lines_free(text_lines *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->v[i]);
    free(t->v);
}

/* One line Redis writes for a value: force when it differs from the
 * default (or Redis always writes it), so a parameter not in the file is
 * added only then. */
/* The lines Redis writes for one parameter; force[i]: line i differs
 * from the default (or Redis always writes it), so it is added to a file
 * without that parameter only then. */
typedef struct rewrite_lines {
    text_lines text;
    unsigned char *force;
} rewrite_lines;

static void add_line(rewrite_lines *out, int force, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_line(rewrite_lines *out, int force, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *line = mem_alloc((size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(line, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    lines_add(&out->text, line);
    out->force = mem_realloc(out->force, out->text.cap);
    out->force[out->text.n - 1] = (unsigned char)force;
}

/* s's len bytes as Redis's sdscatrepr writes a string option: quoted, escaped. */
static const char *repr(resp_buf *b, const char *s, size_t len)
{
    b->len = 0;
    resp_buf_appendf(b, "\"");
    for (const char *end = s + len; s < end; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"') resp_buf_appendf(b, "\\%c", ch);
        else if (ch == '\n') resp_buf_appendf(b, "\\n");
        else if (ch == '\r') resp_buf_appendf(b, "\\r");
        else if (ch == '\t') resp_buf_appendf(b, "\\t");
        else if (!isprint(ch)) resp_buf_appendf(b, "\\x%02x", ch);
        else resp_buf_appendf(b, "%c", ch);
    }
    resp_buf_appendf(b, "\"");
    return text_of(b);
}

/* The lines Redis writes for p's value, as its rewrite functions do:
 * save a line per pair (`save ""` for none) and the percentiles always,
 * output limits a line per class, replicaof none when there is no master,
 * dir always. */
static void lines_for(const latchd_config *cfg, const latchd_config *def, const param *p, rewrite_lines *out)
{
    resp_buf now, was, quoted;
    char mem[2][32];
    const void *slot = slot_of(cfg, p);
    resp_buf_init(&now);
    resp_buf_init(&was);
    resp_buf_init(&quoted);
    const char *value = format_value(cfg, p, &now);
    format_value(def, p, &was);
    int force = now.len != was.len || memcmp(value, text_of(&was), now.len) != 0;
    switch (p->type) {
    case P_STRING:
    case P_BINARY:
    case P_DIR:
    case P_NOTIFY:
        add_line(out, force || p->type == P_DIR, "%s %s", p->name, repr(&quoted, value, now.len));
        break;
    case P_MEMORY:
    case P_UMEMORY:
        format_memory(mem[0], sizeof(mem[0]), p->type == P_MEMORY ? (unsigned long long)*(const long long *)slot
                                                                   : *(const unsigned long long *)slot);
        add_line(out, force, "%s %s", p->name, mem[0]);
        break;
    case P_OBUF:
        for (int i = 0; i < CLIENT_TYPE_OBUF_COUNT; i++) {
            const obuf_limit *l = &cfg->obuf_limits[i], *d = &def->obuf_limits[i];
            format_memory(mem[0], sizeof(mem[0]), l->hard);
            format_memory(mem[1], sizeof(mem[1]), l->soft);
            add_line(out, memcmp(l, d, sizeof(*l)) != 0, "%s %s %s %s %lld", p->name,
                     i == CLIENT_TYPE_REPLICA ? "replica" : obuf_class_names[i], mem[0], mem[1], l->soft_seconds);
        }
        break;
    case P_WORDS:
        if (p->words == save_words) {
            /* value is now's own text: cut into pairs in place */
            char *tok, *rest = NULL, *pairs = now.len ? now.data : NULL;
            if (!pairs) add_line(out, 1, "save \"\"");
            for (tok = pairs ? strtok_r(pairs, " ", &rest) : NULL; tok; tok = strtok_r(NULL, " ", &rest)) {
                const char *changes = strtok_r(NULL, " ", &rest);
                add_line(out, 1, "save %s %s", tok, changes ? changes : "0");
            }
        } else if (p->words == replicaof_words) {
            if (value[0]) add_line(out, 1, "%s %s", p->name, value);
        } else {
            int always = p->words == percentiles_words;
            add_line(out, force || always, "%s %s", p->name, value[0] || !always ? value : "\"\"");
        }
        break;
    case P_BIND:   /* rewriteConfigBindOption: no address at all is bind "" */
        add_line(out, force, "%s %s", p->name, value[0] ? value : "\"\"");
        break;
    default:
        add_line(out, force, "%s %s", p->name, value);
        break;
    }
    resp_buf_free(&now);
    resp_buf_free(&was);
    resp_buf_free(&quoted);
}

/* The table row a file line sets (aliases mean their parameter), or NULL. */
static const param *line_param(resp_parser *rp, const char *line)
{
    char *wordbuf;
    const char *argv[MAX_DIRECTIVE_ARGS];
    const param *p = NULL;
    int argc;
    size_t len = strcspn(line, "\r\n"), lead = strspn(line, " \t");
    if (lead == len || line[lead] == '#') return NULL;
    if (split_line(rp, line, len, argv, NULL, &wordbuf, &argc) == 0 && argc > 0) p = lookup(argv[0], strlen(argv[0]), NULL);
    free(wordbuf);
    return p;
}

static int read_lines(const char *path, text_lines *t)
{
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? 0 : -1;   /* Redis creates a missing file */
    while (getline(&buf, &cap, f) >= 0) {
        buf[strcspn(buf, "\r\n")] = '\0';
        lines_add(t, mem_strdup(buf));
    }
    int bad = ferror(f);
    free(buf);
    fclose(f);
    return bad ? -1 : 0;
}

static const char REWRITE_SIGNATURE[] = "# Generated by CONFIG REWRITE";

/* p's lines take the places of its lines in the file, in order; the rest
 * of its file lines are blanked (Redis leaves them empty), and lines left
 * over are added after the signature when forced. */
static void rewrite_param(const latchd_config *cfg, const latchd_config *def, const param *p,
                          const param **owner, text_lines *t, resp_buf *tail)
{
    rewrite_lines lines = {{NULL, 0, 0}, NULL};
    size_t used = 0;
    lines_for(cfg, def, p, &lines);
    for (size_t i = 0; i < t->n; i++) {
        if (owner[i] != p) continue;
        free(t->v[i]);
        t->v[i] = mem_strdup(used < lines.text.n ? lines.text.v[used++] : "");
    }
    for (; used < lines.text.n; used++) {
        if (!lines.force[used]) continue;
        resp_buf_append(tail, lines.text.v[used], strlen(lines.text.v[used]));
        resp_buf_append(tail, "\n", 1);
    }
    lines_free(&lines.text);
    free(lines.force);
}

static int write_all(const char *path, const text_lines *t, const resp_buf *tail)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp-latchd-%d", path, (int)getpid()) >= (int)sizeof(tmp)) return -1;
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int signed_ = 0;
    for (size_t i = 0; i < t->n; i++) {
        fprintf(f, "%s\n", t->v[i]);
        if (!strcmp(t->v[i], REWRITE_SIGNATURE)) {
            signed_ = 1;
            if (tail->len) fwrite(tail->data, 1, tail->len, f);
        }
    }
    if (!signed_ && tail->len) {
        /* a blank line before it, as Redis leaves one */
        fprintf(f, "%s%s\n", t->n && t->v[t->n - 1][0] ? "\n" : "", REWRITE_SIGNATURE);
        fwrite(tail->data, 1, tail->len, f);
    }
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* A user line of the file ("user ..."), whatever its rules. */
static int is_user_line(const char *line)
{
    line += strspn(line, " \t");
    return !strncasecmp(line, "user", 4) && (line[4] == ' ' || line[4] == '\t');
}

/* Redis's rewriteConfigUserOption: the file's user lines become users's
 * lines in order, the rest blanked; leftovers go after the signature. */
static void rewrite_users(const char *users, text_lines *t, resp_buf *tail)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!is_user_line(t->v[i])) continue;
        size_t len = users ? strcspn(users, "\n") : 0;
        free(t->v[i]);
        t->v[i] = mem_strndup(users ? users : "", len);
        if (users) users = users[len] ? users + len + 1 : NULL;
        if (users && !*users) users = NULL;
    }
    if (users) resp_buf_append(tail, users, strlen(users));
}

int config_rewrite_file(const latchd_config *cfg, const char *users, char *err, size_t errlen)
{
    text_lines t = {NULL, 0, 0};
    resp_buf tail;
    latchd_config def;
    if (!cfg->config_file[0]) {
        snprintf(err, errlen, "The server is running without a config file");
        return -1;
    }
    if (read_lines(cfg->config_file, &t) != 0) {
        snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
        lines_free(&t);
        return -1;
    }
    const param **owner = mem_calloc(t.n + 1, sizeof(*owner));
    resp_parser rp;
    line_parser_init(&rp);
    for (size_t i = 0; i < t.n; i++) owner[i] = line_param(&rp, t.v[i]);
    resp_parser_free(&rp);
    config_defaults(&def);
    resp_buf_init(&tail);
    for (size_t i = 0; i < NPARAMS; i++) rewrite_param(cfg, &def, &params[i], owner, &t, &tail);
    rewrite_users(users, &t, &tail);
    config_free(&def);
    int rc = write_all(cfg->config_file, &t, &tail);
    if (rc != 0) snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
    resp_buf_free(&tail);
    free(owner);
    lines_free(&t);
    return rc;
}
