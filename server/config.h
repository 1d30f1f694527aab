/* config.h - latchd's settings: defaults, the config file and command-line
 * flags (redis-server style), and CONFIG GET/SET over one parameter table. */
#ifndef LATCHD_CONFIG_H
#define LATCHD_CONFIG_H

#include <stddef.h>

#define CONFIG_MAX_BIND 8

/* Client classes as Redis numbers them (CLIENT LIST TYPE, output limits);
 * the first three have a client-output-buffer-limit. */
enum { CLIENT_TYPE_NORMAL, CLIENT_TYPE_REPLICA, CLIENT_TYPE_PUBSUB, CLIENT_TYPE_MASTER };
#define CLIENT_TYPE_OBUF_COUNT 3
/* "normal", "slave"/"replica", "pubsub", "master" (any case); -1 if none. */
int client_type_by_name(const char *name, size_t len);

/* One class's client-output-buffer-limit; 0 means no limit. */
typedef struct obuf_limit {
    unsigned long long hard, soft;   /* bytes */
    long long soft_seconds;          /* how long over soft is tolerated */
} obuf_limit;

/* A binary-safe value (requirepass, masterauth: Redis's sds configs, which
 * CONFIG SET takes with NULs in them): len bytes at s, a NUL after them. */
typedef struct config_bin {
    char *s;
    size_t len;
} config_bin;

/* The value of a parameter latchd keeps without a struct member (it has no
 * effect here): which member is live is the table row's type. */
typedef union config_slot {
    int i;
    long long ll;
    char *s;
    config_bin b;
} config_slot;

typedef struct latchd_config {
    int port;
    char *bind[CONFIG_MAX_BIND];
    int nbind;
    char *unixsocket;
    int unixsocketperm;
    int loglevel;            /* LOG_* from server.h */
    char *logfile;           /* "" = stdout */
    int daemonize;
    char *pidfile;
    config_bin requirepass;  /* len 0 = none */
    char *aclfile;           /* "" = none */
    int acl_pubsub_default;  /* CONFIG_ACL_PUBSUB_*: a new user's channels */
    int sanitize_dump_payload;   /* CONFIG_SANITIZE_*: which checks INFO counts (latchd checks every payload deeply) */
    long long acllog_max_len;
    char *acl_users;         /* the config file's user lines: "name rule..." each, '\n' ended */
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    unsigned long long maxmemory;   /* bytes, 0 = no limit */
    int maxmemory_policy;    /* CONFIG_MAXMEMORY_* */
    long long maxclients;
    long long timeout;       /* idle seconds, 0 = never */
    long long tcp_keepalive;
    long long maxmemory_samples;   /* keys compared per eviction and database */
    long long maxmemory_clients;   /* bytes, or -N for N% of maxmemory; 0 = no client eviction */
    /* lazyfree-lazy-*: who frees big values on the lazyfree thread */
    int lazyfree_lazy_eviction, lazyfree_lazy_expire, lazyfree_lazy_server_del;
    int lazyfree_lazy_user_del, lazyfree_lazy_user_flush;
    long long databases;
    int protected_mode;
    char *save;              /* save points, "<seconds> <changes>" pairs; "" = none */
    char *dbfilename;
    int rdbcompression, rdbchecksum;
    int activerehashing;
    char *server_cpulist, *bio_cpulist;           /* affinity.c's lists: "" = unpinned */
    char *aof_rewrite_cpulist, *bgsave_cpulist;
    long long rdb_key_save_delay;   /* µs slept per key saved: tests widen the BGSAVE window */
    int appendonly;
    int appendfsync;         /* CONFIG_FSYNC_* */
    int aof_load_truncated, aof_timestamp_enabled;
    long long auto_aof_rewrite_percentage, auto_aof_rewrite_min_size;
    char *appendfilename, *appenddirname;
    char *dir;
    long long hz;
    long long busy_reply_ms; /* lua-time-limit / busy-reply-threshold */
    int native_scripts;      /* latchd: run known lock scripts as native C */
    obuf_limit obuf_limits[CLIENT_TYPE_OBUF_COUNT];
    int notify_keyspace_events;   /* NOTIFY_* / STORE_EV_* bits (server.h) */
    char *port_file;         /* latchd: the bound port is written here, "" = none */
    int enable_clock_control;     /* latchd: LATCHD.CLOCK may move the clock */
    int enable_debug_command;     /* CONFIG_PROTECTED_*: who may run DEBUG */
    /* The encodings OBJECT ENCODING reports, and OBJECT FREQ's counter
     * (server_env_sync hands them to the store). */
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    int lfu_log_factor, lfu_decay_time;
    long long hll_sparse_max_bytes;   /* a sparse HyperLogLog turns dense past it */
    long long tracking_table_max_keys;   /* CLIENT TRACKING's table is trimmed to it; 0: no limit */
    /* What latchd measures (stats.c, slowlog.c, latency.c): in µs, -1 / 0 off */
    long long slowlog_log_slower_than, slowlog_max_len;
    long long latency_monitor_threshold;
    int latency_tracking;         /* INFO latencystats' histograms */
    /* Accepted, reported and kept with Redis's names, ranges and defaults,
     * for the configs and test suites that set them; nothing reads them yet. */
    int list_max_listpack_size;
    int list_compress_depth;
    long long set_max_intset_entries;
    long long stream_node_max_entries, stream_node_max_bytes;
    int aof_use_rdb_preamble;
    int always_show_logo;
    int supervised;          /* CONFIG_SUPERVISED_*: systemd hears READY=1 once listening */
    /* TLS (tls.c), Redis's names and defaults; "" is unset */
    int tls_port;                 /* 0: no TLS listener */
    char *tls_cert_file, *tls_key_file, *tls_key_file_pass;
    char *tls_client_cert_file, *tls_client_key_file, *tls_client_key_file_pass;
    char *tls_dh_params_file, *tls_ca_cert_file, *tls_ca_cert_dir;
    char *tls_protocols, *tls_ciphers, *tls_ciphersuites;
    int tls_auth_clients;         /* CONFIG_TLS_AUTH_* */
    int tls_prefer_server_ciphers, tls_session_caching;
    long long tls_session_cache_size, tls_session_cache_timeout;
    long long tls_handshake_timeout;   /* latchd: ms a handshake may take (hidden) */
    long long busy_poll_usecs;    /* latchd: µs the loop polls before it sleeps, while requests come that fast (0: never) */
    /* Replication on Raft (server/repl/repl.h); raft_id 0: a single server */
    long long raft_id;
    char *raft_address;           /* host:port of this node's Raft transport */
    char *raft_peers;             /* id@host:port[@client_port],... every member, self too */
    char *raft_dir;               /* "": <dir>/raft-<id> */
    long long raft_election_timeout, raft_heartbeat_timeout;   /* ms */
    long long raft_snapshot_threshold;   /* entries between snapshots */
    config_slot *slots;      /* per parameter-table row: the values kept without effect */
    unsigned char *given;    /* per row: named by the config file or a flag (start-up warnings) */
    unsigned directives_ignored;  /* bit i: the i-th directive latchd ignores (rename-command, ...) was given */
    char *config_file;       /* absolute path of the file latchd started with, "" = none */
} latchd_config;

/* appendfsync's values, in Redis's order. */
enum { CONFIG_FSYNC_EVERYSEC, CONFIG_FSYNC_ALWAYS, CONFIG_FSYNC_NO };

/* supervised's values, in Redis's order. */
enum { CONFIG_SUPERVISED_UPSTART, CONFIG_SUPERVISED_SYSTEMD, CONFIG_SUPERVISED_AUTO, CONFIG_SUPERVISED_NO };

/* tls-auth-clients' values, in Redis's order. */
enum { CONFIG_TLS_AUTH_NO, CONFIG_TLS_AUTH_YES, CONFIG_TLS_AUTH_OPTIONAL };

/* sanitize-dump-payload's values, in Redis's order. */
enum { CONFIG_SANITIZE_NO, CONFIG_SANITIZE_YES, CONFIG_SANITIZE_CLIENTS };

/* acl-pubsub-default's values, in Redis's order. */
enum { CONFIG_ACL_PUBSUB_ALLCHANNELS, CONFIG_ACL_PUBSUB_RESETCHANNELS };

/* enable-debug-command's values, as Redis 7 names them. */
enum { CONFIG_PROTECTED_NO, CONFIG_PROTECTED_YES, CONFIG_PROTECTED_LOCAL };

/* maxmemory-policy's values, in Redis's order (evict.c). */
enum {
    CONFIG_MAXMEMORY_VOLATILE_LRU,
    CONFIG_MAXMEMORY_VOLATILE_LFU,
    CONFIG_MAXMEMORY_VOLATILE_RANDOM,
    CONFIG_MAXMEMORY_VOLATILE_TTL,
    CONFIG_MAXMEMORY_ALLKEYS_LRU,
    CONFIG_MAXMEMORY_ALLKEYS_LFU,
    CONFIG_MAXMEMORY_ALLKEYS_RANDOM,
    CONFIG_MAXMEMORY_NOEVICTION,
    CONFIG_MAXMEMORY_POLICY_COUNT
};
/* Their names, indexed by CONFIG_MAXMEMORY_*, then NULL. */
extern const char *const config_maxmemory_policies[];

void config_defaults(latchd_config *cfg);
void config_free(latchd_config *cfg);
/* Load "name value..." lines; on error writes a message into err. 0 = ok. */
/* A memory value as Redis's memtoull reads it ("1gb", "100k"); -1 if not one. */
int config_parse_memory(const char *v, unsigned long long *out);
int config_load_file(latchd_config *cfg, const char *path, char *err, size_t errlen);
/* Parse argv as redis-server does: [config-file] [--name value ...]. */
int config_parse_args(latchd_config *cfg, int argc, char **argv, char *err, size_t errlen);
/* Set one parameter by name from string arguments as a config file line
 * gives them; 0 ok, else message in err. */
int config_set(latchd_config *cfg, const char *name, const char **vals, int nvals,
               char *err, size_t errlen);
/* A deep copy (config_free it), for CONFIG SET's all-or-nothing. */
void config_copy(latchd_config *dst, const latchd_config *src);

/* CONFIG SET name value [name value ...] (npairs pairs, argv the names and
 * values in turn, lens their lengths) checked and applied to next, a copy of cfg, as Redis 7.0
 * does: every name first (unknown, immutable, protected, duplicate), then
 * every value; protected_ok when enable-protected-configs lets this client
 * change dir or dbfilename. 0 with next filled (the caller keeps it or
 * config_frees it), else -1 with Redis's error text (without "ERR ") in err
 * and next untouched. */
int config_set_pairs(const latchd_config *cfg, latchd_config *next, const char *const *argv, const size_t *lens,
                     int npairs, int protected_ok, char *err, size_t errlen);
/* enable-protected-configs, as CONFIG_PROTECTED_*. */
int config_protected_configs(const latchd_config *cfg);
/* tls-replication or tls-cluster is yes (kept without effect, but, as in
 * Redis, either asks for a CA as tls-auth-clients does). */
int config_tls_peers(const latchd_config *cfg);

/* Set one parameter from the rest of a config file line after the name
 * ("900 1", quoting as in the file); 0 ok, else message in err. */
int config_set_text(latchd_config *cfg, const char *name, const char *value, char *err, size_t errlen);

/* value is vlen bytes with a NUL after them (requirepass may hold NULs). */
typedef void (*config_visit_fn)(const char *name, const char *value, size_t vlen, void *ctx);
/* CONFIG GET's matching: a pattern with glob characters visits every name
 * (aliases too, hidden parameters not) that matches, case-insensitively;
 * a plain name visits that parameter if it is one. */
void config_get(const latchd_config *cfg, const char *pattern, size_t plen,
                config_visit_fn fn, void *ctx);
/* The number of names config_get may visit for "*", at most. */
size_t config_name_count(void);
/* The longest bulk a client may send: proto-max-bulk-len, which takes
 * Redis's whole range, but never past what the store holds (STORE_MAX_LEN),
 * so a longer one is Redis's "invalid bulk length" and never reaches it. */
long long config_max_bulk(const latchd_config *cfg);
/* 1 if name is a known parameter. */
int config_exists(const char *name, size_t len);

/* CONFIG REWRITE: cfg written into its config_file as Redis writes it (the
 * file's lines kept, changed directives replaced in place, the rest after
 * "# Generated by CONFIG REWRITE", defaults not in the file left out).
 * users, the ACL's "user ..." lines ('\n' ended), replace the file's user
 * lines (NULL: they are dropped, as Redis does with an aclfile).
 * 0 ok, else -1 with Redis's error text (without "ERR ") in err. */
int config_rewrite_file(const latchd_config *cfg, const char *users, char *err, size_t errlen);

/* Logs a warning once per parameter the config file or flags set that has
 * no effect in latchd (s: the server whose log it goes to). */
struct server;
void config_warn_without_effect(const struct server *s, const latchd_config *cfg);

#endif
