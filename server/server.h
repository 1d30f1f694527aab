/* server.h - the server's shared types: server, client, command table and
 * the reply helpers commands use. Internal to server/; main.c is a user. */
#ifndef LATCHD_SERVER_H
#define LATCHD_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "resp.h"
#include "store.h"

#define LATCHD_REDIS_VERSION "7.0.15"
#ifndef LATCHD_VERSION
#define LATCHD_VERSION "0.0.0"
#endif

typedef struct server server;
typedef struct client client;
typedef struct aof_state aof_state;   /* persist/aof.c */
struct scripts;
struct pubsub_client;   /* pubsub.c */
struct pubsub_state;
struct acl_user;        /* acl.h */
struct acl_state;
struct tls_state;       /* tls.c */
struct tls_conn;

/* ---- commands ---- */

enum {
    CMD_WRITE = 1 << 0,
    CMD_READONLY = 1 << 1,
    CMD_NOAUTH = 1 << 2,     /* allowed before AUTH */
    CMD_ADMIN = 1 << 3,
    CMD_FAST = 1 << 4,
    CMD_LOADING = 1 << 5,
    CMD_STALE = 1 << 6,
    CMD_PUBSUB = 1 << 7,     /* COMMAND INFO's "pubsub" flag */
    CMD_NOSCRIPT = 1 << 8,   /* refused inside EVAL */
    CMD_CONTAINER = 1 << 9,  /* has subcommands: errors name "cmd|sub" */
    CMD_SUBSCRIBED = 1 << 10,/* allowed in RESP2 subscribed mode (not shown) */
    CMD_ALLOW_BUSY = 1 << 11, /* served while a script runs too long */
    CMD_MAY_REPLICATE = 1 << 12, /* refused in read-only scripts; Redis 7.0's COMMAND INFO omits it */
    CMD_DENYOOM = 1 << 13, /* may grow memory: refused over maxmemory */
    CMD_PROTECTED = 1 << 14, /* DEBUG: only as enable-debug-command allows */
    CMD_MONITOR_EARLY = 1 << 15, /* shown to MONITOR before it runs (EVAL: before its redis.calls) */
    CMD_SKIP_SLOWLOG = 1 << 16,  /* COMMAND INFO's "skip_slowlog" (EXEC) */
    CMD_NO_MULTI = 1 << 17,      /* refused inside MULTI */
    CMD_TRANSACTION = 1 << 18,   /* MULTI EXEC DISCARD WATCH QUIT RESET: run at once inside MULTI (not shown) */
    CMD_MOVABLE_KEYS = 1 << 19,  /* COMMAND INFO's "movablekeys": which arguments are keys depends on the rest (SORT's STORE, BY, GET) */
    CMD_BLOCKING = 1 << 20,      /* COMMAND INFO's "blocking": may park the client (BLPOP, BZPOPMIN, ...) */
};

typedef void (*command_proc)(client *c);

typedef struct command {
    const char *name;      /* lower case */
    command_proc proc;
    int arity;             /* >0 exact argc, <0 at least -arity */
    unsigned flags;
    int first_key, last_key, key_step;
    const char *group;     /* COMMAND DOCS */
    const char *since;
    const char *summary;
    const char *args;      /* one-line argument hints, or NULL */
    const struct command *subs;   /* containers: subcommands, ended by a NULL name */
} command;

/* Every command and subcommand has a slot in the server's per-command
 * stats (INFO commandstats): its id, from 0 to command_stat_slots(). */
size_t command_stat_slots(void);
size_t command_stat_id(const command *cmd, const command *sub);
/* The command (and subcommand, or NULL) of slot id. */
void command_stat_at(size_t id, const command **cmd, const command **sub);

/* Looks a command up case-insensitively; NULL if unknown. */
const command *command_lookup(const char *name, size_t len);
/* argc fits the command's arity (>0 exact, <0 at least). */
int command_arity_ok(const command *cmd, int argc);
/* Once per process (pthread_once); the table is read-only after. */
void command_table_init(void);
size_t command_count(void);
const command *command_at(size_t i);

/* ---- output: reply bytes with shared frames spliced in ---- */

/* A frame encoded once and queued by reference on many clients (one
 * pub/sub message to many subscribers); the last reference frees it. */
typedef struct shared_frame {
    size_t refs;
    size_t len;
    char data[];
} shared_frame;

/* The shared frames queued among an output buffer's bytes: v[i] goes out
 * right before byte v[i].at of that buffer. */
typedef struct frame_queue {
    struct frame_ref *v;
    size_t n, cap;
    size_t head_sent;   /* bytes of v[0] already written */
    size_t bytes;       /* frame bytes not yet written */
} frame_queue;

/* ---- clients ---- */

enum {
    CLIENT_CLOSE_AFTER_REPLY = 1 << 0,
    CLIENT_AUTHENTICATED = 1 << 1,
    CLIENT_REPLY_OFF = 1 << 2,
    CLIENT_REPLY_SKIP_NEXT = 1 << 3,   /* CLIENT REPLY SKIP: skip the next command's reply */
    CLIENT_REPLY_SKIP = 1 << 4,        /* the current command's reply is dropped */
    CLIENT_CLOSING = 1 << 5,
    CLIENT_PENDING_WRITE = 1 << 6,
    CLIENT_UNIX = 1 << 7,
    CLIENT_PUBSUB = 1 << 8,            /* has subscriptions (RESP2: subscribed mode) */
    CLIENT_PUSHING = 1 << 9,           /* writing a push: sent even with CLIENT REPLY OFF */
    CLIENT_CLOSE_ASAP = 1 << 10,       /* over its output limit: gets nothing more, closed soon */
    CLIENT_DETACHED = 1 << 12,         /* no connection: see client_new_detached() */
    CLIENT_MONITOR = 1 << 13,          /* MONITOR: sees every command run */
    CLIENT_MULTI = 1 << 14,            /* after MULTI: commands are queued */
    CLIENT_DIRTY_CAS = 1 << 15,        /* a WATCHed key changed: EXEC fails */
    CLIENT_DIRTY_EXEC = 1 << 16,       /* a command was refused while queueing: EXEC aborts */
    CLIENT_READ_BUF = 1 << 17,         /* its query is the server's read_buf, for one read */
    /* CLIENT TRACKING (tracking.c); the high bits, apart from the rest */
    CLIENT_TRACKING = 1 << 24,         /* t: keys it reads may be cached: invalidations follow */
    CLIENT_TRACKING_BROKEN_REDIR = 1 << 25,   /* R: its redirect client is gone */
    CLIENT_TRACKING_BCAST = 1 << 26,   /* B: every change under its prefixes */
    CLIENT_TRACKING_OPTIN = 1 << 27,   /* only after CLIENT CACHING YES */
    CLIENT_TRACKING_OPTOUT = 1 << 28,  /* except after CLIENT CACHING NO */
    CLIENT_TRACKING_CACHING = 1 << 29, /* CLIENT CACHING given: for the next command or transaction */
    CLIENT_TRACKING_NOLOOP = 1 << 30,  /* not told about its own changes */
    CLIENT_TRACKING_ALL = CLIENT_TRACKING | CLIENT_TRACKING_BROKEN_REDIR | CLIENT_TRACKING_BCAST |
                          CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT | CLIENT_TRACKING_CACHING |
                          CLIENT_TRACKING_NOLOOP,
    CLIENT_BLOCKED = 1 << 18,          /* parked (BLPOP, a paused command): its input waits (block.c) */
    CLIENT_UNBLOCKED = 1 << 19,        /* queued to run its waiting input (block.c) */
    CLIENT_NO_EVICT = 1 << 20,         /* CLIENT NO-EVICT on: shown as 'e' */
    CLIENT_BIG_BUFFERS = 1 << 21,      /* kept while active: an output buffer past IDLE_BUFFER_KEEP, TLS record buffers (net.c) */
    CLIENT_HELD = 1 << 22,             /* output and input wait for a durability ticket (net_hold_pending) */
};
struct block_state;                    /* block.c */

/* A MULTI's queued commands, owned copies in one buffer (the query buffer
 * is reused): per command a multi_cmd header, its argv slices (offsets into
 * the buffer until EXEC), then the argument bytes. */
typedef struct multi_state {
    resp_buf queue;
    long long count;
    unsigned cmd_flags;     /* every queued command's flags or-ed: DENYOOM matters at EXEC */
    int executing;          /* EXEC is walking queue: whoever closes c leaves it be */
} multi_state;
struct watch_entry;         /* multi.c */
typedef struct tracking_ref tracking_ref;   /* tracking.c */
struct tracking_client;
struct tracking_state;

struct client {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    server *srv;
    uint64_t id;
    unsigned flags;
    int proto;                 /* 2 or 3 */
    int db;
    /* input: bytes [qpos, query.len) of query are not yet parsed */
    resp_buf query;
    size_t qpos;
    resp_parser parser;
    /* the command being executed */
    int argc;
    resp_slice *argv;
    const command *cmd;
    const command *sub;            /* the subcommand of a container, or NULL */
    const command *last_cmd;
    const command *last_sub;
    /* output: replies accumulate in out (shared frames spliced in by
     * out_frames); inflight and its frames are owned by a uv_write */
    resp_buf out;
    resp_buf inflight;
    frame_queue out_frames;
    frame_queue inflight_frames;
    uv_write_t wreq;
    int writing;
    uint64_t obuf_soft_since_ms;   /* when the soft output limit was first exceeded, or 0 */
    client *asap_next;             /* found over its limit mid-publish: closed right after */
    struct pubsub_client *pubsub;  /* subscriptions; NULL until the first */
    multi_state mstate;            /* MULTI ... EXEC */
    struct watch_entry *watched;   /* WATCHed keys, NULL when none */
    size_t nwatched;               /* how many (client_memory counts them) */
    tracking_ref *tref;            /* once it tracked or was redirected to: how the table knows it */
    struct tracking_client *tracking;   /* CLIENT TRACKING's settings, NULL until the first ON */
    struct block_state *blk;       /* what a blocked command waits for; made on the first block, kept */
    /* identity */
    struct tls_conn *tls;          /* a TLS client's session (tls.h), else NULL */
    struct acl_user *user;         /* never NULL: the default user until AUTH */
    char *name;
    char *lib_name;
    char *lib_ver;
    char addr[64];
    char laddr[64];
    uint64_t ctime_ms;
    uint64_t last_ms;
    /* Redis's reply buffer as CLIENT LIST's rbs/rbp show it: the size its
     * clientsCron would have given it and the peak since the last reset,
     * modelled by net.c (latchd's own buffers are sized otherwise) */
    uint32_t rb_size, rb_peak;
    uint64_t rb_tick_ms, rb_peak_reset_ms;
    /* links */
    client *prev, *next;           /* all clients */
    client *pending_next;          /* clients with output to flush */
    client *monitor_prev, *monitor_next;   /* MONITOR clients */
    client *held_prev, *held_next;         /* CLIENT_HELD clients */
    uint64_t hold_ticket;                  /* while CLIENT_HELD: released with this ticket */
    size_t mem_counted;            /* its part of srv->clients_mem (clientmem.c) */
};

/* ---- stats (stats.c) ---- */

typedef struct latency_hist {
    uint64_t total;   /* summed when read */
    uint64_t count[];
} latency_hist;
typedef struct cmd_stat {
    uint64_t calls, ticks, rejected, failed;
    struct latency_hist *hist;   /* made on first use while latency-tracking is on */
} cmd_stat;
typedef struct err_stat {
    char code[32];
    uint64_t count;
} err_stat;
struct slowlog;
struct latency_events;

/* sampling.c: INFO's instantaneous_* rates (Redis's inst_metric, sampled
 * every 100 ms, the mean of the last STATS_SAMPLES printed) and the
 * clients' recent peak buffers (per-second slots, Redis's
 * CLIENTS_PEAK_MEM_USAGE_SLOTS). */
#define STATS_SAMPLES 16
#define CLIENTS_PEAK_SLOTS 8
enum { METRIC_COMMANDS, METRIC_NET_IN, METRIC_NET_OUT, METRIC_COUNT };
typedef struct inst_metric {
    uint64_t last_ms, last_count;   /* the last sample's time (monotonic) and reading */
    long long samples[STATS_SAMPLES];
    int idx;
} inst_metric;
typedef struct peak_slot {
    uint64_t sec;                   /* the second it holds (monotonic) */
    size_t in, out;
} peak_slot;
typedef struct server_sampling {
    inst_metric m[METRIC_COUNT];
    peak_slot peaks[CLIENTS_PEAK_SLOTS];
    uint64_t pass_sec;              /* the clients' last pass */
    int on;                         /* the timer runs */
    int quiet;                      /* ticks in a row that saw nothing move */
} server_sampling;

/* The clock commands are timed by: the TSC where there is one (a third of
 * clock_gettime's cost), calibrated against CLOCK_MONOTONIC once. */
#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t stats_ticks(void) { return __builtin_ia32_rdtsc(); }
#else
uint64_t stats_ticks_slow(void);
static inline uint64_t stats_ticks(void) { return stats_ticks_slow(); }
#endif

/* ---- server ---- */

/* One of the numbered databases. Its store is made on first use (an
 * unused database costs one slot); the hooks of the store in slot i get
 * &dbs[i], so a keyspace event knows its database number. */
typedef struct server_db_slot {
    store *st;
    server *srv;
    int id;
} server_db_slot;

struct server {
    uv_loop_t *loop;
    latchd_config cfg;
    server_db_slot *dbs;         /* cfg.databases of them; dbs[0].st always exists */
    int ndbs;
    store_env env;               /* what every database reads: server_env_sync */
    int oom_adjusted, oom_base;  /* oom-score-adj moved the process's score from oom_base (oom.c) */
    uv_tcp_t *listeners[CONFIG_MAX_BIND];  /* heap handles, so a rebind can close a set
                                              while the next one listens */
    int nlisteners;
    uv_tcp_t *tls_listeners[CONFIG_MAX_BIND];   /* the same on tls-port */
    int ntls_listeners;
    struct tls_state *tls;       /* the TLS context and handshake deadlines (tls.c), NULL until configured */
    char *tls_raw;               /* TLS clients' socket reads land here before decryption (net.c) */
    char *tls_pack;              /* small pieces of a TLS client's output packed into one record (net.c) */
    int closing_handles;         /* closed by server_close_handle, callback still due */
    uv_pipe_t unix_listener;
    int has_unix;
    uv_check_t flush_check;
    uv_timer_t expire_timer;
    uv_timer_t idle_timer;       /* runs only while CONFIG timeout > 0 */
    uv_timer_t obuf_timer;       /* runs only while a client is over its soft output limit */
    uv_timer_t shrink_timer;     /* runs only while a client keeps a big output buffer */
    uv_timer_t tracking_timer;   /* runs only while the tracking table is over its limit */
    uint64_t expire_timer_due;   /* absolute ms the timer is armed for, or UINT64_MAX */
    client *clients, *clients_tail;   /* in order of connection */
    size_t nclients;
    size_t client_structs;       /* connected or closing, not yet freed */
    size_t client_structs_high;  /* most of them since the last malloc_trim */
    int trimming;                /* a big crowd is leaving (see net.c) */
    client *pending;
    struct pubsub_state *pubsub;
    client *monitors;            /* MONITOR clients (monitor.c) */
    struct watch_registry *watching;   /* WATCHed keys and their watchers (multi.c) */
    struct block_server *block;  /* blocked clients, ready keys, timeouts, pause (block.c); NULL until first used */
    size_t blocked_clients;      /* parked clients (INFO blocked_clients): 0 keeps key events free of block work */
    size_t blocked_streams;      /* of them, XREAD/XREADGROUP waiters */
    int block_ready;             /* keys are ready: serve their waiters after the command */
    int clients_paused;          /* CLIENT PAUSE is on: dispatch asks block.c about each command */
    size_t watched_keys;         /* distinct keys WATCHed: 0 keeps writes free of WATCH work */
    struct tracking_state *tracking;   /* CLIENT TRACKING's table and prefixes (tracking.c) */
    size_t tracking_clients;     /* clients with tracking on: 0 keeps commands free of it */
    size_t tracking_keys;        /* keys in the table; with tracking_prefixes, 0 keeps writes free */
    size_t tracking_items;       /* (key, client) pairs in the table */
    size_t tracking_prefixes;    /* BCAST prefixes somebody listens to */
    client *current_client;      /* whose input is being run, or NULL (timers) */
    resp_buf monitor_line;       /* scratch: one command as monitors see it */
    resp_buf notify_chan;        /* scratch: the channel of a keyspace event */
    resp_buf read_buf;           /* lent to a client with nothing pending, for one read */
    int read_buf_lent;
    uv_buf_t *iov;               /* scratch for gathering one client's output */
    size_t iov_cap;
    uint64_t next_client_id;
    uint64_t rng;                /* server_random's state */
    int port;                    /* actual TCP port bound */
    int shutting_down;
    /* clock: wall time at start + monotonic elapsed, never goes backwards;
     * in µs, as a start truncated to the ms would trail the wall clock (a
     * client's PXAT now + 10000 would read a PTTL of 10001) */
    uint64_t clock_wall0_us;
    uint64_t clock_mono0_us;
    uint64_t frozen_now_ms;      /* nonzero: the clock reads this (FREEZE, fuzzing) */
    int64_t clock_offset_ms;     /* LATCHD.CLOCK: added to the real clock */
    int active_expire;           /* the wheel reclaims keys (DEBUG SET-ACTIVE-EXPIRE) */
    int script_allow_noscript;   /* DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript
                                    commands (Redis's tests use it to call CLIENT from a script) */
    int cron_paused;             /* DEBUG PAUSE-CRON: the periodic checks (idle clients, soft output
                                    limits, save points, tracking-table trimming) and a signal's
                                    shutdown wait */
    int shutdown_asap;           /* a signal's shutdown waits for the cron (SHUTDOWN ABORT cancels) */
    uint64_t start_ms;
    /* the dump file (persist/rdb_file.c) */
    uint64_t lastsave_s;         /* the last successful save, or the start */
    uint64_t dirty;              /* changes since then: rdb_changes_since_last_save */
    uint64_t rdb_dirty_at_fork, rdb_fork_ms, rdb_last_try_s;
    long long rdb_last_bgsave_s;         /* -1 until a BGSAVE has finished */
    long long rdb_saves, rdb_loaded, rdb_load_expired;
    int rdb_last_ok;             /* rdb_last_bgsave_status */
    int rdb_child;               /* pid of the BGSAVE child, 0 when none */
    int resize_avoided;          /* server_children_changed: a child shares the keyspaces' pages */
    int rdb_cow_fd;              /* its copy-on-write report's pipe (persist_fork), -1: none */
    size_t rdb_last_cow;         /* rdb_last_cow_size */
    int rdb_bgsave_scheduled;    /* BGSAVE SCHEDULE: after the running one */
    uv_signal_t rdb_sigchld;     /* armed while a child runs */
    uv_timer_t rdb_timer;        /* save points, once a second while any are set */
    int rdb_sigchld_init, rdb_timer_init;
    /* the append-only file (persist/aof.c) */
    aof_state *aof;              /* NULL until appendonly or BGREWRITEAOF first needs it */
    int aof_on;                  /* commands' changes are logged: the one test when off */
    int aof_write_err;           /* the file cannot be written: writes get MISCONF */
    /* replication (repl/repl.h): NULL and 0 while raft-id is 0 */
    struct repl_state *repl;
    int repl_gate;               /* not the serving leader: repl_refuses decides about commands */
    client *held;                /* CLIENT_HELD clients (net_hold_pending) */
    /* stats */
    uint64_t stat_conns;
    uint64_t stat_commands;
    uint64_t stat_rejected_conns;
    uint64_t stat_expired;
    uint64_t stat_evicted;       /* keys evict.c removed (INFO evicted_keys) */
    uint64_t stat_keyspace_hits, stat_keyspace_misses;
    uint64_t stat_net_in, stat_net_out;
    uint64_t stat_reads, stat_writes;   /* reads from and writes to clients (total_*_processed) */
    uint64_t stat_reply_shrinks, stat_reply_expands;   /* the reply buffer model's resizes (net.c) */
    server_sampling sampling;    /* sampling.c */
    uv_timer_t sample_timer;     /* runs only while traffic flows (sampling.c) */
    uint64_t stat_total_forks, stat_fork_usec;   /* BGSAVE's and BGREWRITEAOF's fork()s (persist) */
    uint64_t stat_dump_payload_sanitizations;    /* persist_value_deep_checks of RESTOREs and loads */
    long long reply_peak_reset_ms;   /* DEBUG REPLYBUFFER PEAK-RESET-TIME: -1 never */
    int reply_resizing;              /* DEBUG REPLYBUFFER RESIZING */
    uint64_t stat_total_errors;  /* INFO's total_error_replies */
    size_t stat_peak_memory;     /* used_memory's highest, as INFO saw it */
    size_t startup_memory;       /* used_memory once started: INFO's used_memory_startup */
    cmd_stat *cmdstats;          /* by command_stat_id */
    err_stat *errstats;          /* by code, sorted */
    size_t nerrstats;
    int stat_error_counted;      /* the next command's error reply was counted already (a script's redis.call) */
    uint64_t slowlog_ticks;      /* slowlog-log-slower-than in ticks, UINT64_MAX when off */
    uint64_t latency_ticks;      /* latency-monitor-threshold in ticks, UINT64_MAX when off */
    uint64_t rare_ticks;         /* the lower of the two */
    struct slowlog *slowlog;
    struct latency_events *latency;
    char run_id[41];
    struct scripts *scripts;     /* script.h */
    struct acl_state *acl;       /* users and the ACL LOG (acl.h) */
    struct lazyfree *lazy;       /* the lazyfree thread: NULL until something is freed lazily */
    /* clientmem.c: while maxmemory or maxmemory-clients is set, what the
     * linked clients hold, kept as their buffers change */
    int client_mem_on;
    size_t clients_mem;
    uint64_t stat_evicted_clients;   /* INFO evicted_clients */
    /* Whoever runs the server (embed.c) closes its own handles with the
     * server's: called once, at the end of server_shutdown. */
    void (*on_shutdown)(server *s);
};

/* server.c */
/* The server takes ownership of cfg's strings. */
int server_init(server *s, uv_loop_t *loop, const latchd_config *cfg);
/* Run s's loop until it has nothing left (main's uv_run), polling before
 * it sleeps as busy-poll-usecs says. */
void server_serve(server *s);
/* INFO dump_payload_sanitizations: add checks (listpacks and intsets latchd
 * validated entry by entry, as it always does) where Redis would have
 * validated deeply too; c is the RESTORE's client, NULL for a load. */
void server_count_deep_checks(server *s, const client *c, size_t checks);
/* Raises the fd limit for maxclients first (see server_fit_maxclients). */
int server_listen(server *s);
/* CONFIG SET port / bind: the TCP listeners closed and opened again on
 * cfg's port and addresses; -1 (logged) if one that must work does not,
 * with none listening: the caller puts the old configuration back and
 * calls it again. */
int server_rebind(server *s);
/* Make room for maxclients descriptors, lowering maxclients if the OS says
 * no: 0 fits, 1 lowered, -1 hopeless. */
int server_fit_maxclients(server *s);
void server_close(server *s);
/* uv_close a handle of the server's (not a client's), counted so that
 * server_closed knows when the loop no longer refers to the server. */
void server_close_handle(server *s, uv_handle_t *h);
/* Shut down, and every handle's close callback has run: server_close may
 * free it all. */
int server_closed(const server *s);
/* The clock keys expire by: stands still while a script runs. */
uint64_t server_now_ms(server *s);
/* The configuration's encoding thresholds and LFU settings into s->env,
 * after anything that may have changed them. */
void server_env_sync(server *s);
/* The clock itself (TIME, MONITOR): real time unless LATCHD.CLOCK moved
 * or froze it. */
uint64_t server_clock_ms(server *s);
uint64_t server_clock_us(server *s);
/* Real time, whatever LATCHD.CLOCK did: durations (script time limits). */
uint64_t server_real_ms(server *s);
/* LATCHD.CLOCK: hold the clock still, let it run again from where it was
 * held, or move it forward (reclaiming what falls due). */
void server_clock_freeze(server *s);
void server_clock_resume(server *s);
void server_clock_advance(server *s, uint64_t ms);
/* evict.c: keys evicted by maxmemory-policy until used memory is back
 * under maxmemory; 0 when it is, -1 when the policy (noeviction) or the
 * keys (none a volatile policy may take) leave it over. */
int evict_to_maxmemory(server *s);
/* INFO's used_memory, which maxmemory is compared against. */
size_t server_used_memory(const server *s);

/* clientmem.c: a client's memory as Redis counts it for maxmemory and
 * maxmemory-clients: its struct, query buffer, MULTI queue and the output
 * not yet written (shared frames counted for each client holding them, as
 * Redis copies them); as in Redis, output written is memory given back
 * (an emptied buffer kept for reuse stands for Redis's 16 KiB static one). */
size_t client_memory(const client *c);
/* c's buffers may have changed: recounted, and over maxmemory-clients the
 * biggest evictable clients closed (c among them, perhaps). Nothing while
 * neither maxmemory nor maxmemory-clients is set. */
void clientmem_update_slow(client *c);
static inline void clientmem_update(client *c)
{
    if (c->srv->client_mem_on) clientmem_update_slow(c);
}
/* c leaves the linked clients. */
void clientmem_forget(client *c);
/* After a configuration change (server_env_sync): counting turned on or
 * off, clients over a lowered maxmemory-clients evicted. */
void clientmem_sync(server *s);
/* What every linked client holds (walks them while counting is off). */
size_t clientmem_total(const server *s);

/* lazyfree.c: Redis's lazy freeing, on one worker thread started on first
 * use. A value whose freeing takes more than 64 allocations (Redis's
 * lazyfreeGetFreeEffort) goes there, and a flushed database whole; the
 * rest is freed at once. Their bytes stay in used_memory until freed. */
typedef struct lazyfree lazyfree;
/* store_delete_key, the value freed on the thread when it is big. */
void lazyfree_delete_key(server *s, store *st, store_key *k);
/* store_delete the same way: 1 if a live key was deleted. */
int lazyfree_delete(server *s, store *st, const char *key, size_t len);
/* A store's release hook under lazyfree-lazy-expire / -server-del: k's
 * value taken to the thread when big (1), else 0 (the store frees it). */
int lazyfree_take_value(server *s, store *st, store_key *k);
/* FLUSHDB ASYNC: database db gets a new empty store, the old one is
 * destroyed on the thread. */
void lazyfree_flush_db(server *s, int db);
/* Wait for everything handed over and settle it: before a store is
 * flushed or destroyed in place (its values' blocks may still be out). */
void lazyfree_drain(server *s);
/* Bytes handed over and not freed yet (part of used_memory). */
size_t lazyfree_charged(const server *s);
size_t lazyfree_pending_objects(const server *s);   /* INFO lazyfree_pending_objects */
size_t lazyfree_freed_objects(const server *s);     /* INFO lazyfreed_objects */
void lazyfree_reset_stats(server *s);
/* fd closed by the worker (taken over): the last close of an unlinked file
 * frees its blocks, tens of milliseconds for a big one (Redis's bg_unlink
 * and BIO_CLOSE_FILE). */
void lazyfree_close_file(server *s, int fd);
/* server_shutdown: the queue finished, the thread joined, its handle closed. */
void lazyfree_shutdown(server *s);
/* server_close: the rest released. */
void lazyfree_free(server *s);
void server_expire_rearm(server *s);
/* Re-arm from scratch after the clock or active expiry changed. */
void server_expire_reschedule(server *s);
void server_idle_timer_update(server *s);
/* A client went over its soft output limit: recheck until none is. */
void server_obuf_watch(server *s);
void server_shutdown(server *s);
/* CONFIG RESETSTAT: every counter INFO reports as a stat goes back to 0. */
void server_reset_stats(server *s);

/* sampling.c */
void server_sampling_init(server *s);
void server_sampling_reset(server *s);
void server_sampling_wake_slow(server *s);
/* Once per loop iteration: starts the sampling timer when bytes moved
 * while it slept (two compares otherwise). */
static inline void server_sampling_wake(server *s)
{
    if (!s->sampling.on && (s->stat_net_in != s->sampling.m[METRIC_NET_IN].last_count ||
                            s->stat_net_out != s->sampling.m[METRIC_NET_OUT].last_count))
        server_sampling_wake_slow(s);
}
/* Redis's getInstantaneousMetric: the mean of a METRIC_*'s samples. */
long long server_instantaneous(const server *s, int metric);
/* client_recent_max_input_buffer / _output_buffer. */
void server_recent_max_buffers(server *s, size_t *in, size_t *out);

/* oom.c: oom-score-adj and oom-score-adj-values applied to the process
 * (Redis's setOOMScoreAdj); -1 (logged) if /proc refused. */
int server_oom_apply(server *s);
/* 1 if the two configurations differ in either oom parameter. */
int server_oom_changed(const latchd_config *a, const latchd_config *b);

/* announce.c: once listening, "LATCHD_PORT=<n>" on stdout and the
 * port-file if configured; -1 (logged) if that file cannot be written. */
int announce_port(const server *s);
/* Once ready: READY=1 to systemd or SIGSTOP for upstart, as supervised
 * (auto: whichever the environment names) asks. */
void announce_supervisor(const server *s);

/* net.c */
void client_schedule_write(client *c);
/* Queue an encoded frame (a pub/sub message) for c. Small frames are
 * copied; larger ones are shared: *shared is made from p for the first
 * client and referenced by the rest, and the caller drops its own
 * reference with frame_release once every client has it. */
void client_add_frame(client *c, const char *p, size_t len, shared_frame **shared);
void frame_release(shared_frame *f);
/* Bytes queued for c and not yet written. */
size_t client_output_bytes(const client *c);
/* Those bytes as Redis's reply buffers would hold them: what the output
 * limits and CLIENT LIST's omem count. */
size_t client_output_memory(const client *c);
/* CLIENT_TYPE_PUBSUB while subscribed, else CLIENT_TYPE_NORMAL. */
int client_type(const client *c);
/* A unix socket or exactly 127.0.0.1 / ::1, as Redis 7.0 counts local. */
int client_is_local(const client *c);
/* 1 while c is within its class's client-output-buffer-limit. Otherwise
 * it is logged and marked CLIENT_CLOSE_ASAP (it is sent nothing more) and
 * 0 is returned: the caller closes it once that is safe (not mid-publish). */
int client_output_within_limit(client *c);
/* For a command replying in a long loop, checked per element as Redis
 * checks its limit per reply: 0 once c is over its limit (or already
 * marked), and the loop stops; dispatch closes c after the command. */
int client_output_room(client *c);
void client_close(client *c);
void client_close_after_reply(client *c);
void client_set_authenticated(client *c, int yes);
void net_flush_pending(server *s);
/* c's big output buffers and TLS record buffers given back if it has been
 * quiet for a second; 1 while it still keeps some. */
int net_release_quiet_buffers(client *c, uint64_t now_ms);
/* Redis's reply buffer, as CLIENT LIST's rbs/rbp and INFO's
 * reply_buffer_shrinks/expands report it: a model of what Redis 7.0's
 * clientsCronResizeOutputBuffer would have done with this client's
 * replies. It costs nothing per command: a flush only compares its bytes
 * with the peak, and the cron's resizes are replayed when a flush raises
 * the peak or CLIENT LIST looks (the peak resets Redis does while a client
 * stays under its old peak are skipped: the peak shown may be higher). */
#define NET_REPLY_PEAK_RESET_MS 5000
void net_reply_buffer_sync(client *c, uint64_t now_ms);
void net_reply_buffer_peak(client *c, size_t pending);
/* Start the once-a-second check of kept big buffers (server.c). */
void server_shrink_watch(server *s);
/* The same but keep's output stays pending (a busy script's own caller,
 * mid-command) and no BCAST is sent: a script past busy-reply-threshold
 * flushes the others. */
void net_flush_pending_except(server *s, client *keep);
/* Output held until a durability ticket (replication's commit, the AOF's
 * fsync): every client with output pending now is held, its bytes and
 * further input waiting, until net_release of a ticket >= ticket (tickets
 * are released in order). A client held again takes the later ticket.
 * Returns how many clients took this ticket now. */
size_t net_hold_pending(server *s, uint64_t ticket);
/* Tickets up to ticket are durable: their clients' output goes at the
 * next flush and their waiting input runs now. Returns how many clients
 * it let go. */
size_t net_release(server *s, uint64_t ticket);
/* The held outcomes will never be known (leadership lost): each held
 * client gets err (a whole error line, "-..." without CRLF) instead of
 * what it was owed, and is closed after it. */
void net_fail_held(server *s, const char *err);
void net_on_connection(uv_stream_t *listener, int status);
/* The same on a tls-port listener: the client's session handshakes first. */
void net_on_tls_connection(uv_stream_t *listener, int status);
/* TLS client c (c->tls set) read [p, p+n) from its socket: the handshake
 * goes on, then whatever it decrypts runs as commands; on a TLS error c is
 * logged and closed. Its session's output then holds what to send. */
void client_tls_received(client *c, const char *p, size_t n);
/* c's queued replies encrypted into its session's output: 0, or -1 on a
 * TLS error (nothing is sent before the handshake ends). */
int client_tls_encrypt(client *c);
/* Accepts one waiting connection on listener outside the loop (for a
 * script past busy-reply-threshold, which runs inside a loop callback);
 * 1 when a client was added, 0 when none waited or it failed. */
int net_accept_now(uv_stream_t *listener);
/* CLIENT LIST's qbuf: c's query buffer as Redis would hold it. */
size_t net_query_shown(const client *c);
/* One read of c's socket outside the loop (the same script polled it
 * readable), handled as the loop's read callback would: decrypted first
 * for a TLS client. EOF and errors are left for the loop to see. */
void net_read_now(client *c);
client *client_new(server *s);
/* A client with no connection (fuzzing, and whatever runs commands on its
 * own behalf): feed it bytes with client_feed(), read its replies from
 * c->out; it is closed (CLIENT_CLOSING or CLIENT_CLOSE_AFTER_REPLY) when a
 * connection would be, and its owner frees it. */
client *client_new_detached(server *s);
void client_feed(client *c, const char *p, size_t len);
void client_free_detached(client *c);

/* monitor.c */
/* Show the command c just ran (or, CMD_MONITOR_EARLY, is about to run) to
 * every monitor; nothing to do when nobody monitors. */
void monitor_command(client *c);
/* c stops monitoring (RESET, disconnect). */
void monitor_remove(client *c);

/* dispatch.c */
void client_process_input(client *c);
/* A command CLIENT PAUSE held (argv owned by c's block state) runs as if
 * it had just arrived. */
void client_run_postponed(client *c, resp_slice *argv, int argc);
/* Run an admitted command: what Redis's call() does (MONITOR, counting). */
void command_call(client *c);

/* multi.c: transactions and WATCH */
void multi_init(server *s);
void multi_free(server *s);
/* Queue c's current command (already admitted) and reply +QUEUED. */
void multi_queue(client *c);
/* c's current command was refused with the error written to c->out from
 * mark on: that dooms a MULTI, and a refused EXEC becomes Redis's
 * "EXECABORT Transaction discarded because of: <error>". */
void multi_refused(client *c, size_t mark);
/* CMD_DENYOOM when Redis's OOM check applies to cmd only because of the
 * transaction c is in (EXEC of a denyoom command, anything queued). */
unsigned multi_oom_flags(const client *c, const command *cmd);
/* Drop the transaction and every WATCH (RESET, disconnect). */
void multi_client_reset(client *c);
/* A key changed (any keyspace event but keymiss); expired: it was
 * reclaimed past its deadline. The caller tests s->watched_keys first. */
void multi_key_changed(server *s, int db, const char *key, size_t klen, int expired);
/* Database db (every one when -1) is about to be emptied (FLUSHDB,
 * FLUSHALL: with -1) or to get database with's contents (SWAPDB): its
 * WATCHed keys that change are touched. */
void multi_db_touched(server *s, int db, int with);

/* tracking.c: client-side caching (CLIENT TRACKING) */
void tracking_init(server *s);
void tracking_free(server *s);
/* A key changed (any keyspace event but keymiss; expired: reclaimed past
 * its deadline). The caller tests s->tracking_keys || s->tracking_prefixes. */
void tracking_key_changed(server *s, const char *key, size_t klen, int expired);
/* Every database or one is emptied (FLUSHALL, FLUSHDB): every tracking
 * client gets the null invalidation, and the table is emptied. */
void tracking_flushed(server *s);
/* c (tracking) ran its current command: a read-only one's keys are
 * remembered for it. */
void tracking_command_done(client *c);
/* c's current command's keys are remembered for c (a script's declared
 * keys, when it reads). */
void tracking_remember_keys(client *c);
/* After c's top-level command (s->tracking_clients): the invalidations
 * its own command caused go out after its reply. */
void tracking_after_command(client *c);
/* tracking-table-max-keys: drop (and invalidate) keys over the limit. */
void tracking_limit(server *s);
/* Once per loop iteration while somebody tracks: the table's limit, and
 * the BCAST messages for the keys changed since the last one. */
void tracking_before_sleep(server *s);
/* c turns tracking off (CLIENT TRACKING OFF, RESET). */
void tracking_disable(client *c);
/* c leaves (c->tref set): it tracks nothing more and is redirected to no more. */
void tracking_client_gone(client *c);
/* CLIENT GETREDIR's number: -1 off, 0 no redirect, else the client id. */
long long tracking_redirect_id(const client *c);
/* How many BCAST prefixes c listens to (client_memory counts them). */
size_t tracking_client_prefixes(const client *c);

/* Redis's signalModifiedKey: WATCH and CLIENT TRACKING see the key change
 * (expired: reclaimed past its deadline); a counter test each while
 * nobody watches or tracks. */
static inline void server_key_modified(server *s, int db, const char *key, size_t klen, int expired)
{
    if (s->watched_keys) multi_key_changed(s, db, key, klen, expired);
    if (s->tracking_keys | s->tracking_prefixes) tracking_key_changed(s, key, klen, expired);
}
/* FLUSHALL without the reply: every database emptied, WATCHers and tracking clients told. */
void server_flush_all(server *s);
/* The same, the databases' contents freed on the lazyfree thread. */
void server_flush_all_async(server *s);
/* block.c: blocking commands (Redis's blocked.c), CLIENT PAUSE, CLIENT UNBLOCK. */
enum { BLOCK_NONE = 0, BLOCK_LIST, BLOCK_ZSET, BLOCK_PAUSED, BLOCK_WAIT, BLOCK_STREAM };
/* What a served waiter does with the key that became ready: serve(c, k,
 * key) replies and pops for c (a list or zset waiter, of the right type,
 * k non-empty). */
typedef void (*block_serve_fn)(client *c, store_key *k, const resp_slice *key);
/* A blocking command may park c (not inside MULTI/EXEC nor a script,
 * where it acts as the non-blocking one). */
int block_allowed(const client *c);
/* The server clock's now + ms, saturated short of UINT64_MAX (a deadline
 * of any size is one the wheel takes). */
uint64_t block_deadline_after(server *s, uint64_t ms);
/* Redis's getTimeoutFromObjectOrReply in seconds: the absolute deadline
 * in ms by the server's clock (0: forever) in *deadline, or 0 after
 * Redis's error reply. */
int block_timeout_or_reply(client *c, const resp_slice *a, uint64_t *deadline);
/* Redis's getTimeoutFromObjectOrReply in milliseconds (WAIT, CLIENT
 * PAUSE): *ms >= 0, or 0 after Redis's error reply. */
int block_ms_or_reply(client *c, const resp_slice *a, long long *ms);
/* Redis's blockingPopGenericCommand: the timeout at argv[timeout_idx],
 * then the first existing key of [first, first + n) is served at once by
 * serve (one of another type: WRONGTYPE); with none c waits (type
 * BLOCK_LIST or BLOCK_ZSET), or, where it may not block, gets a null
 * array. */
void block_pop_or_wait(client *c, int type, int first, int n, int timeout_idx, block_serve_fn serve);
/* Park c on keys [first, first + n) of its argv (duplicates once), for
 * type (BLOCK_LIST or BLOCK_ZSET) until deadline (0: forever); serve runs
 * when one is ready. c's argv is copied: serve reads it as c->argv. */
void block_for_keys(client *c, int type, int first, int n, uint64_t deadline, block_serve_fn serve);
/* XREAD/XREADGROUP's wait (BLOCK_STREAM) on keys argv[first..first+n):
 * serve(c, k, key) runs whenever a key it waits on changes (k NULL if the
 * key is gone, of any type otherwise) and returns 1 if it replied (c is
 * then unblocked), 0 to keep waiting. Returns len bytes kept with c's
 * block state for the command's own use (block_stream_data), until the
 * next block. */
typedef int (*block_stream_fn)(client *c, store_key *k, const resp_slice *key);
void *block_for_stream(client *c, int first, int n, uint64_t deadline, block_stream_fn serve, size_t len);
void *block_stream_data(const client *c);
/* WAIT with replicas to wait for: none ever acknowledge, so c waits
 * until deadline (0: forever) or CLIENT UNBLOCK, and gets 0. */
void block_for_wait(client *c, uint64_t deadline);
/* A key of database db changed: waiters on it get served after the
 * current command. The caller tests s->blocked_clients first. */
void block_key_signal(server *s, int db, const char *key, size_t klen);
/* SWAPDB a b: keys now holding data are ready for a's and b's waiters
 * (and, with stream waiters, the keys gone too). */
void block_db_swapped(server *s, int a, int b);
/* FLUSHDB (db) or FLUSHALL (-1): stream waiters' keys are ready, so
 * XREADGROUP's learn their key is gone. */
void block_db_flushed(server *s, int db);
/* Serve the waiters of every ready key (Redis's handleClientsBlockedOnKeys),
 * after a top-level command. */
void block_handle_ready(server *s);
/* Unparked clients run the input that waited (before the flush). */
void block_run_unblocked(server *s);
/* CLIENT UNBLOCK: reply as a timeout, or with error text err; 0 if c is
 * not blocked on keys (nor WAIT). */
int block_unblock(client *c, const char *err);
/* c disconnects or RESETs: it leaves every queue it is in. */
void block_client_gone(client *c);
/* c is freed: its block state goes with it. */
void block_state_free(client *c);
/* Keys any client waits on (and INFO's clients_in_timeout_table). */
size_t block_timeout_clients(const server *s);
/* The block wheel's next deadline (UINT64_MAX: none), and its firing
 * up to the clock's now. */
uint64_t block_next_due(const server *s);
void block_expire_due(server *s);
/* CLIENT PAUSE: until the clock reaches until_ms, writes (all: every
 * command) wait; CLIENT UNPAUSE ends it. */
void block_pause(server *s, uint64_t until_ms, int all);
void block_unpause(server *s);
/* c's command must wait for the pause to end (it is then parked). */
int block_pause_holds(client *c, const command *cmd);
/* Expiry is held still while clients are paused (7.0: the dataset stays
 * constant). */
int block_pause_active(server *s);
void block_free(server *s);

/* Database id (0 .. databases-1), made on first use so that an unused
 * one costs nothing; NULL when id is out of range. */
store *server_db(server *s, long long id);
/* Database id if it was ever used, else NULL (id must be in range):
 * readers of every database skip the unused ones. */
static inline store *server_db_if_used(const server *s, int id) { return s->dbs[id].st; }
/* Exchange two databases' contents (SWAPDB): clients stay on their numbers. */
void server_db_swap(server *s, int a, int b);
/* activerehashing: the keyspace tables' pending rehash steps, for about
 * budget_ns, where the loop would otherwise wait (on the disk); none while
 * a fork child runs. 1 while some are left. */
int server_rehash_some(server *s, uint64_t budget_ns);
/* After a fork child (BGSAVE, BGREWRITEAOF) starts or is reaped: while one
 * runs the keyspace tables do not resize (Redis's updateDictResizePolicy)
 * and lookups stamp no access clock (its lookupKey), so the parent copies
 * fewer pages away from it. */
void server_children_changed(server *s);
/* The database c's commands run in (SELECT): c->db's store always exists,
 * because selecting a database makes it. */
static inline store *client_db(const client *c) { return c->srv->dbs[c->db].st; }
/* A random word (RANDOMKEY's draw): the server's own generator, seeded
 * at start, so servers on different threads share no state. */
uint64_t server_random(server *s);

/* reply.c: replies go to c->out unless the client turned replies off */
int client_replies_on(const client *c);
resp_buf *client_out(client *c);
void reply_ok(client *c);
void reply_status(client *c, const char *s);
void reply_error(client *c, const char *s);
void reply_errorf(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(client *c, long long v);
void reply_bulk(client *c, const void *p, size_t len);
void reply_bulk_cstr(client *c, const char *s);
void reply_bulk_ll(client *c, long long v);
void reply_null(client *c);
void reply_null_array(client *c);
void reply_double(client *c, double d);
/* Redis's addReplyHumanLongDouble: "%.17Lf" trimmed (store_ld2str), a
 * bulk string in RESP2 and a double in RESP3 (GEOPOS, WITHCOORD). */
void reply_human_double(client *c, long double d);
void reply_array(client *c, long long n);
void reply_map(client *c, long long n);
void reply_set(client *c, long long n);
void reply_push(client *c, long long n);   /* RESP3 '>', an array in RESP2 */
void reply_verbatim(client *c, const char *p, size_t len);
void reply_bool(client *c, int v);                              /* #t/#f, :1/:0 in RESP2 */
void reply_bignum(client *c, const char *digits, size_t len);   /* (n, a bulk in RESP2 */
void reply_attribute(client *c, long long n);                   /* |n; RESP3 clients only */
/* Replays well-formed RESP3 bytes (maps, sets, arrays, strings, numbers,
 * booleans, nulls) in the client's protocol, RESP2 as Redis downgrades. */
void reply_resp3(client *c, const char *p, size_t len);
void reply_arity_error(client *c);
void reply_syntax_error(client *c);
void reply_wrongtype(client *c);
void reply_not_integer(client *c);
void reply_unknown_subcommand(client *c);
/* "unknown subcommand or wrong number of arguments for 'x'. Try CMD HELP." */
void reply_subcommand_syntax_error(client *c);
/* Redis's HELP reply: "CMD <subcommand> ..." header, the lines, then HELP. */
void reply_help(client *c, const char *const *lines, size_t n);

/* args.c: argument helpers with Redis's error replies */
int arg_is(const resp_slice *a, const char *lit);
/* Parse as long long; on failure reply "ERR value is not an integer or out of range" and return 0. */
int arg_ll_or_reply(client *c, const resp_slice *a, long long *out);
/* A count >= 0; otherwise (not a number either) Redis's "ERR value is out
 * of range, must be positive" and 0. */
int arg_positive_or_reply(client *c, const resp_slice *a, long long *out);
/* Redis's start..end index range (negative counts from the end) clipped
 * to len elements: 1 with the first index and count, 0 when empty. */
int arg_index_range(long long start, long long end, size_t len, size_t *first, size_t *n);
char *arg_strdup(const resp_slice *a);

/* Container commands (CLIENT, CONFIG, COMMAND, FUNCTION) route argv[1]
 * through c->cmd->subs; a subcommand's arity counts the container name. */
void subcommand_dispatch(client *c);
/* c's subcommand, or NULL after Redis's unknown-subcommand or arity error. */
const command *subcommand_find_or_reply(client *c);
/* "client|setname" style lookup of a subcommand, NULL if unknown. */
const command *subcommand_lookup(const command *container, const char *name, size_t len);
/* The same lookup in a subcommand table (ended by a NULL name) that is no
 * command's subs (DEBUG's). */
const command *subcommand_in(const command *subs, const char *name, size_t len);

/* notify.c: keyspace events. The class bits are the store's STORE_EV_*
 * (Redis's NOTIFY_* values); these are the rest of Redis's bits. */
enum {
    NOTIFY_KEYSPACE = 1 << 0,    /* K: __keyspace@0__:<key> <event> */
    NOTIFY_KEYEVENT = 1 << 1,    /* E: __keyevent@0__:<event> <key> */
    NOTIFY_EVICTED = 1 << 9,     /* e */
    NOTIFY_STREAM = 1 << 10,     /* t */
    NOTIFY_KEY_MISS = 1 << 11,   /* m: "keymiss" on read misses, not part of A */
    NOTIFY_MODULE = 1 << 13,     /* d */
    NOTIFY_NEW = STORE_EV_NEW,   /* n: "new" key, not part of A */
};
/* notify-keyspace-events letters to bits, -1 on an unknown letter; and
 * back, as CONFIG GET shows them (dst holds at least 16 bytes). */
int notify_flags_parse(const char *s, size_t len);
void notify_flags_format(int flags, char *dst);
/* Publish a keyspace event of database db as notify-keyspace-events asks. */
void notify_keyspace_event(server *s, int db, int cls, const char *event, const char *key, size_t klen);

/* stats.c */
void stats_init(server *s);
void stats_free(server *s);
/* CONFIG RESETSTAT's part: commandstats, errorstats, latencystats. */
void stats_reset(server *s);
/* After CONFIG SET of the slowlog, latency-monitor or latency-tracking
 * parameters. */
void stats_thresholds_sync(server *s);
double stats_ns_per_tick(void);
uint64_t stats_ticks_to_us(uint64_t ticks);
uint64_t stats_us_to_ticks(long long us);
/* c ran its command (c->cmd, c->sub) in ticks, its reply written from
 * mark on: counted, an error reply counted as failed, and the slow log,
 * latency monitor and histogram told. Inline: every command comes here,
 * and the common case is three additions. */
void stats_record_slow(client *c, size_t mark, uint64_t ticks);
/* A histogram's bucket of a duration in ticks: log-linear, 16 steps per
 * power of two (6% wide), up to 2^47 ticks. */
#define STATS_HIST_SUB 16
#define STATS_HIST_MAX_EXP 47
#define STATS_HIST_BUCKETS ((STATS_HIST_MAX_EXP - 2) * STATS_HIST_SUB)
static inline size_t stats_hist_bucket(uint64_t v)
{
    if (v < STATS_HIST_SUB) return (size_t)v;
    int e = 63 - __builtin_clzll(v);   /* >= 4 */
    if (e > STATS_HIST_MAX_EXP) return STATS_HIST_BUCKETS - 1;
    return (size_t)(e - 3) * STATS_HIST_SUB + (size_t)((v >> (e - 4)) & (STATS_HIST_SUB - 1));
}
/* A command's histogram counts, made on its first timing. */
uint64_t *stats_hist_new(cmd_stat *st);
static inline void stats_record(client *c, size_t mark, uint64_t ticks)
{
    server *s = c->srv;
    cmd_stat *st = &s->cmdstats[command_stat_id(c->cmd, c->sub)];
    st->calls++;
    st->ticks += ticks;
    if (s->cfg.latency_tracking) (st->hist ? st->hist->count : stats_hist_new(st))[stats_hist_bucket(ticks)]++;
    if ((c->out.len > mark && c->out.data[mark] == '-') || ticks >= s->rare_ticks || s->stat_error_counted)
        stats_record_slow(c, mark, ticks);
}
/* c's command blocked after ticks: a call now, and the rest (Redis's
 * updateStatsOnUnblock) when it replies from mark on, having taken ticks
 * more: an error reply or failed (CLIENT UNBLOCK's, whatever it replies)
 * makes it a failure; histogram, slow log and latency are told then. */
void stats_blocked(client *c, uint64_t ticks);
void stats_unblocked(client *c, size_t mark, uint64_t ticks, int failed);
/* c's command was refused with the error written from mark on. */
void stats_rejected(client *c, size_t mark);
/* An error reply with code text (without the '-', e.g. "ERR syntax"). */
void stats_count_error(server *s, const char *text, size_t len);
/* redis.call refused cmd (NULL: unknown) before running it with refusal
 * (its error code after a '-', else an ERR). */
void stats_script_refused(server *s, const command *cmd, const char *refusal);
void stats_info_commandstats(server *s, resp_buf *b);
void stats_info_errorstats(server *s, resp_buf *b);
void stats_info_latencystats(server *s, resp_buf *b);
const struct latency_hist *stats_hist(server *s, size_t id);
void stats_hist_reply(client *c, const struct latency_hist *h);

/* slowlog.c */
void slowlog_init(server *s);
void slowlog_free(server *s);
/* Log c's current command, which took ticks. */
void slowlog_push(client *c, uint64_t ticks);
/* slowlog-max-len lowered: drop the oldest entries past it. */
void slowlog_trim(server *s);

/* latency.c: LATENCY's events */
void latency_init(server *s);
void latency_free(server *s);
void latency_add_sample(server *s, const char *event, uint64_t ms);

/* affinity.c: pin the calling thread to a Redis CPU list ("0-3,8,10-14:2");
 * "" leaves it as it is. 0, or -1 for a list that does not parse or CPUs the
 * machine lacks (the thread then stays as it was: Redis goes on too). */
int affinity_apply(const char *list);

/* glob.c: Redis's stringmatchlen */
int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase);

/* log.c: each server logs where its own config says (s NULL: stdout,
 * unfiltered), so two servers in one process keep their logs apart. */
enum { LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING };
/* Or-ed into a level: the text goes out as it is, without the line prefix. */
#define LOG_RAW (1 << 10)
void log_msg(const server *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* At start: latchd's banner with always-show-logo yes (or stdout a
 * terminal and no logfile), else Redis's one "Running mode=" line. */
void log_banner(const server *s, int port);

#endif
