/* latchd.h - liblatchd's whole public API: run latchd servers inside your
 * process (on your libuv loop or on their own thread) and take their locks
 * natively. Installed by `cmake --install`; link with pkg-config latchd. */
#ifndef LATCHD_H
#define LATCHD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LATCHD_API __attribute__((visibility("default")))
#else
#define LATCHD_API
#endif

/* Every call returns one of these; nothing is reported through errno.
 * Negative values are errors, 0 and above are outcomes.
 *
 * What aborts the process (after a message on stderr or in the log), and
 * nothing else does:
 *   - out of memory: any allocation liblatchd makes failing (its one
 *     policy; a server cannot keep a half-made key or lock consistent).
 *     Bound a server's memory with "maxmemory" so writes are refused
 *     (-OOM) long before. Memory running out while a script runs is
 *     that script's error;
 *   - a Lua panic: an error outside every protected Lua call, which in
 *     latchd is memory running out in the few steps that run unprotected
 *     (setting up a server's Lua state in latchd_start, handing a script
 *     its KEYS and ARGV), or a latchd bug.
 * Requests cannot reach the store's size limits: a key, field, value or
 * element is at most 2047 MiB (a longer bulk is a protocol error, whatever
 * proto-max-bulk-len says). */
typedef enum latchd_status {
    LATCHD_OK = 0,
    LATCHD_LOCK_HELD = 1,        /* acquire: another owner holds the lock */
    LATCHD_LOCK_NOT_HELD = 2,    /* renew/release: this owner holds nothing */
    LATCHD_ERR_ARG = -1,         /* NULL/empty name or owner, lease out of range, bad config */
    LATCHD_ERR_WRONGTYPE = -2,   /* the lock key (or its token key) holds a value that is
                                  * not a lock (not a hash / not an integer counter) */
    LATCHD_ERR_STATE = -3,       /* not allowed now: not started, already started, stopped */
    LATCHD_ERR_SYSTEM = -4,      /* the OS said no (bind, listen, thread, loop), or the
                                  * dump file there does not load */
} latchd_status;

/* Servers share nothing but a few process-wide tables, each filled in once
 * (pthread_once) by the first latchd_start / latchd_start_thread and only
 * read after, so any number of servers on any threads may run at once:
 *   - the SipHash key every server's hash tables hash with: random per
 *     process, so clients cannot aim keys at one bucket;
 *   - the command table's by-name index and its stats slots (where each
 *     subcommand's INFO commandstats line lives), the same for every server;
 *   - the ACL's view of the commands (ids, categories, key specs);
 *   - the rate of the CPU's time-stamp counter commands are timed by;
 *   - with TLS, the OpenSSL I/O method every session reads and writes
 *     through (made with the first tls-port), and OpenSSL's own state.
 * Everything else (keys, config, clients, scripts, Lua states, clocks)
 * belongs to one server. */
typedef struct latchd_server latchd_server;

/* How latchd_create sets a server up. Zero-initialise, then fill in. */
typedef struct latchd_options {
    int port;                  /* TCP port; 0 = an ephemeral one (see latchd_port) */
    const char *bind;          /* addresses as the "bind" directive takes them, space
                                * separated; NULL = "127.0.0.1 -::1" */
    const char *config_file;   /* NULL, or a latchd.conf read first (port/bind above win) */
} latchd_options;

/* A stopped server with Redis 7's defaults, except loglevel "warning" (a
 * library should be quiet) and bind "127.0.0.1 -::1" (a library's server
 * stays local unless told), then config_file, then port and bind. NULL on
 * a bad option or file, with a message in err (errlen bytes, may be 0). */
LATCHD_API latchd_server *latchd_create(const latchd_options *opt, char *err, size_t errlen);

/* The same from redis-server style arguments: argv[0] is ignored, then
 * an optional config file and "--name value..." flags (the latchd binary). */
LATCHD_API latchd_server *latchd_create_args(int argc, char **argv, char *err, size_t errlen);

/* Set any parameter as one config file line does: name, then the rest of
 * the line ("save", "900 1"). Before latchd_start only; CONFIG SET over
 * RESP changes a running server. daemonize and pidfile are the binary's
 * business: the library stores them and does nothing with them. */
LATCHD_API latchd_status latchd_set(latchd_server *srv, const char *name, const char *value,
                                    char *err, size_t errlen);

/* A parameter's value as CONFIG GET shows it, NUL-terminated into buf
 * (truncated to len). Before start, or on the server's loop thread. */
LATCHD_API latchd_status latchd_get(const latchd_server *srv, const char *name, char *buf, size_t len);

/* Bind and listen on the caller's loop, load the dump file ("dbfilename"
 * in "dir") if there is one, then return: the caller runs the loop (uv_run). Every latchd_* call but latchd_stop and latchd_port must
 * then be made on the thread running that loop. */
LATCHD_API latchd_status latchd_start(latchd_server *srv, uv_loop_t *loop);

/* Bind and listen (in the calling thread, so errors come back here), then
 * serve on a loop of the server's own in a new thread. */
LATCHD_API latchd_status latchd_start_thread(latchd_server *srv);

/* The TCP port bound (the chosen one for port 0), 0 before start or
 * without TCP. Any thread. */
LATCHD_API int latchd_port(const latchd_server *srv);

/* Ask the server to close its listeners and clients; any thread, any
 * number of times. It happens on the server's loop: for latchd_start the
 * caller's uv_run then returns once nothing else of the caller's is
 * active. A RESP SHUTDOWN stops a server the same way (never the process). */
LATCHD_API latchd_status latchd_stop(latchd_server *srv);

/* Stop (if still running) and free everything. Threaded: joins the thread.
 * On a caller's loop: call it from that loop's thread but outside the
 * loop's callbacks (best after uv_run returned); if the server's handles
 * are still closing, it runs the loop with UV_RUN_NOWAIT until they are. */
LATCHD_API void latchd_destroy(latchd_server *srv);

/* ---- native locks ----
 *
 * The same lock a Redisson RLock/RFencedLock (and the Lua/native lock
 * scripts latchd runs) uses, so RESP clients and embedders contend for
 * one lock:
 *   - the lock `name` is a hash: field = owner, value = hold count,
 *     with the lease as the key's PEXPIRE (ms);
 *   - each acquire (re-entries too) INCRs the fencing counter
 *     "redisson_lock_token:{name}" and returns it, so tokens strictly
 *     increase per lock name for as long as that counter key lives;
 *   - the last release deletes the lock and PUBLISHes "0" on
 *     "redisson_lock__channel:{name}", waking RESP waiters as Redisson's
 *     unlock script does.
 * ("{name}" is name in braces unless name already contains '{', as in
 * Redisson.) Keyspace events are raised as by the scripts.
 *
 * name and owner are NUL-terminated, non-empty and at most 2047 MiB (the
 * longest key or field a server holds; longer is LATCHD_ERR_ARG); lease_ms is 1 to 2^52
 * (about 142,000 years), what the lock scripts' native path accepts.
 *
 * Threads: on a latchd_start_thread server these may be called from any
 * thread; the call is handed to the server's loop and waits for it (so
 * never call them while holding up that loop). On a latchd_start server,
 * call them on the loop's thread; they run at once. Either way a call is
 * atomic with respect to RESP commands and scripts. */

typedef struct latchd_lock_state {
    int64_t holds;    /* the owner's hold count after the call (re-entries count) */
    int64_t token;    /* acquire: the fencing token taken; else -1 */
    int64_t ttl_ms;   /* acquire refused: the holder's remaining lease (-1: none); else -1 */
} latchd_lock_state;

/* Take the lock, or one more hold of it if owner has it already, and set
 * its lease to lease_ms. LATCHD_OK (holds, token), LATCHD_LOCK_HELD
 * (ttl_ms), or an error; nothing changes unless LATCHD_OK. out may be NULL. */
LATCHD_API latchd_status latchd_lock_acquire(latchd_server *srv, const char *name, const char *owner,
                                             int64_t lease_ms, latchd_lock_state *out);

/* Set the lease to lease_ms if owner holds the lock: LATCHD_OK (holds) or
 * LATCHD_LOCK_NOT_HELD. */
LATCHD_API latchd_status latchd_lock_renew(latchd_server *srv, const char *name, const char *owner,
                                           int64_t lease_ms, latchd_lock_state *out);

/* Drop one hold: LATCHD_OK with holds left (> 0: the lease is set to
 * lease_ms; 0: the lock is gone and the unlock message published), or
 * LATCHD_LOCK_NOT_HELD. */
LATCHD_API latchd_status latchd_lock_release(latchd_server *srv, const char *name, const char *owner,
                                             int64_t lease_ms, latchd_lock_state *out);

/* A short English name of a status ("LATCHD_LOCK_HELD"). */
LATCHD_API const char *latchd_status_name(latchd_status st);

#ifdef __cplusplus
}
#endif

#endif
