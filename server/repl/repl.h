/* repl.h - replication on a consensus log (raft-id set): the leader's
 * effects become log entries and its replies wait for their commit;
 * followers apply committed entries. Below it, the engine interface that
 * repl_engine_raft.c (the only user of <raft.h>) implements.
 *
 * Contract with the server (all on the server's loop thread):
 * - repl_start once, after listening and instead of loading the dump file
 *   or the AOF: the log's snapshot and entries are the dataset.
 * - While s->repl_gate is set (not the serving leader) dispatch asks
 *   repl_refuses about each command: a follower refuses writes with
 *   READONLY, a node without a serving leader keyspace commands with
 *   CLUSTERDOWN.
 * - repl_before_sleep from net_flush_pending_except before anything is
 *   written: the serving leader proposes the iteration's records (or an
 *   empty entry when only reads ran) and holds every pending reply until
 *   it commits (net_hold_pending / net_release); elsewhere the records are
 *   dropped.
 * - An own entry that fails (leadership lost) fails the held clients with
 *   an -UNKNOWN error and the state is rebuilt from snapshot + log before
 *   the node serves again.
 * With raft-id 0 none of this exists: s->repl is NULL, s->repl_gate 0. */
#ifndef LATCHD_REPL_H
#define LATCHD_REPL_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"

/* Start the engine (bootstrapping a pristine raft-dir from raft-peers):
 * 0, or -1 logged (the server must not start). */
int repl_start(server *s);
/* keep: as net_flush_pending_except's (a busy script's caller): then
 * nothing is proposed, the running command's records are unfinished. */
void repl_before_sleep(server *s, client *keep);
/* 1 after replying the refusal when c's command may not run here now. */
int repl_refuses(client *c, const command *cmd);
/* INFO replication's lines and ROLE's reply on a replicated node. */
void repl_info(server *s, resp_buf *b);
void repl_role(client *c);
/* Shutdown: the engine closed (asynchronously; the loop runs dry after). */
void repl_close(server *s);
/* After the loop: what is left freed. */
void repl_free(server *s);

/* ---- the engine: a replicated log of opaque entries ---- */

typedef struct repl_engine repl_engine;

enum { REPL_ROLE_NONE, REPL_ROLE_FOLLOWER, REPL_ROLE_CANDIDATE, REPL_ROLE_LEADER };

typedef struct repl_member {
    uint64_t id;
    char address[128];   /* host:port of its engine transport */
    char host[96];       /* its clients' host and port (INFO master_host) */
    int client_port;     /* 0: not given */
} repl_member;

typedef struct repl_engine_opts {
    uint64_t id;
    const char *address;
    const repl_member *members;   /* the fixed membership, self included */
    int nmembers;
    const char *dir;
    unsigned election_ms, heartbeat_ms, snapshot_threshold;
} repl_engine_opts;

typedef struct repl_engine_hooks {
    void *ctx;
    /* A committed entry, in log order, the node's own ones included. */
    void (*apply)(void *ctx, const unsigned char *p, size_t len);
    /* The state as a snapshot into memory from alloc: 0, or -1 when it
     * cannot be taken now (the engine tries again later). */
    int (*snapshot)(void *ctx, void *(*alloc)(size_t), void **p, size_t *len);
    /* Replace the whole state with a snapshot's: 0 or -1. */
    int (*restore)(void *ctx, const unsigned char *p, size_t len);
    /* The own entry proposed with ticket committed and was applied (ok 1)
     * or will never be known to (ok 0: leadership lost, shutdown). */
    void (*proposed)(void *ctx, uint64_t ticket, int ok);
    /* A barrier of the current term committed (ok 1) or failed. */
    void (*barrier)(void *ctx, int ok);
} repl_engine_hooks;

/* Open and start: NULL with err filled on failure. */
repl_engine *repl_engine_open(uv_loop_t *loop, const repl_engine_opts *o, const repl_engine_hooks *h, char *err,
                              size_t errlen);
/* Leader only: append p (copied) as an entry; 0, or -1 (not leader). */
int repl_engine_propose(repl_engine *e, const void *p, size_t len, uint64_t ticket);
int repl_engine_barrier(repl_engine *e);
int repl_engine_role(repl_engine *e);
uint64_t repl_engine_leader(repl_engine *e);   /* its id, 0 when none is known */
uint64_t repl_engine_term(repl_engine *e);
uint64_t repl_engine_applied(repl_engine *e);
/* Close; done(ctx) once every handle is closed and e is freed. Pending
 * proposals are reported failed first. The close first waits for the log's
 * pending disk writes (repl_engine_raft.c says why), for as long as the disk
 * takes: until then the engine runs on and its hooks are called as before. */
void repl_engine_close(repl_engine *e, void (*done)(void *ctx), void *ctx);

#endif
