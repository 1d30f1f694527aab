/* repl_engine_raft.c - repl.h's engine on canonical raft (libraft 0.15):
 * its libuv disk log and TCP transport on the server's loop. The only file
 * that sees <raft.h>: another engine replaces this file alone. */
#include <raft.h>
#include <raft/uv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "repl.h"

struct repl_engine {
    struct raft raft;
    struct raft_io io;
    struct raft_uv_transport transport;
    struct raft_fsm fsm;
    repl_engine_hooks h;
    struct raft_barrier barrier_req;
    int barrier_busy;
    uv_loop_t *loop;
    raft_index close_target;   /* the last index when the close was asked for */
    void (*done)(void *ctx);
    void *done_ctx;
    int io_init, transport_init, raft_init;
};

typedef struct proposal {
    struct raft_apply req;
    repl_engine *e;
    uint64_t ticket;
} proposal;

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    repl_engine *e = fsm->data;
    *result = NULL;
    e->h.apply(e->h.ctx, buf->base, buf->len);
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    repl_engine *e = fsm->data;
    void *p = NULL;
    size_t len = 0;
    if (e->h.snapshot(e->h.ctx, raft_malloc, &p, &len) != 0) return RAFT_BUSY;
    *bufs = raft_malloc(sizeof(**bufs));
    if (!*bufs) {
        raft_free(p);
        return RAFT_NOMEM;
    }
    (*bufs)[0].base = p;
    (*bufs)[0].len = len;
    *n_bufs = 1;
    return 0;
}

/* The buffer is the FSM's to free (libraft's contract). */
static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    repl_engine *e = fsm->data;
    int rc = e->h.restore(e->h.ctx, buf->base, buf->len);
    if (rc != 0) return RAFT_MALFORMED;
    raft_free(buf->base);
    return 0;
}

static void set_err(char *err, size_t errlen, const char *what, int rv)
{
    snprintf(err, errlen, "%s: %s", what, raft_strerror(rv));
}

repl_engine *repl_engine_open(uv_loop_t *loop, const repl_engine_opts *o, const repl_engine_hooks *h, char *err,
                              size_t errlen)
{
    repl_engine *e = mem_calloc(1, sizeof(*e));
    e->h = *h;
    e->loop = loop;
    e->fsm = (struct raft_fsm){.version = 1, .data = e, .apply = fsm_apply, .snapshot = fsm_snapshot,
                               .restore = fsm_restore};
    int rv = raft_uv_tcp_init(&e->transport, loop);
    if (rv != 0) {
        set_err(err, errlen, "raft transport", rv);
        goto fail;
    }
    e->transport_init = 1;
    rv = raft_uv_init(&e->io, loop, o->dir, &e->transport);
    if (rv != 0) {
        snprintf(err, errlen, "raft disk log in %s: %s", o->dir, e->io.errmsg);
        goto fail;
    }
    e->io_init = 1;
    rv = raft_init(&e->raft, &e->io, &e->fsm, o->id, o->address);
    if (rv != 0) {
        snprintf(err, errlen, "raft: %s", raft_errmsg(&e->raft));
        goto fail;
    }
    e->raft.data = e;
    e->raft_init = 1;
    struct raft_configuration conf;
    raft_configuration_init(&conf);
    for (int i = 0; i < o->nmembers && rv == 0; i++)
        rv = raft_configuration_add(&conf, o->members[i].id, o->members[i].address, RAFT_VOTER);
    if (rv == 0) {
        rv = raft_bootstrap(&e->raft, &conf);   /* only a pristine directory takes it */
        if (rv == RAFT_CANTBOOTSTRAP) rv = 0;
    }
    raft_configuration_close(&conf);
    if (rv != 0) {
        set_err(err, errlen, "raft bootstrap", rv);
        goto fail;
    }
    raft_set_election_timeout(&e->raft, o->election_ms);
    raft_set_heartbeat_timeout(&e->raft, o->heartbeat_ms);
    raft_set_snapshot_threshold(&e->raft, o->snapshot_threshold);
    /* as many entries kept behind a snapshot as between two: a lagging
     * follower mostly gets entries, not a snapshot (with fewer kept, libraft
     * 0.15 handed back shifted payloads until entries were padded to 8
     * bytes, repl.c; the margin stays) */
    raft_set_snapshot_trailing(&e->raft, o->snapshot_threshold);
    raft_set_pre_vote(&e->raft, true);   /* a node coming back does not depose a healthy leader */
    rv = raft_start(&e->raft);
    if (rv != 0) {
        /* libraft 0.15 says nothing more when listening failed (the Raft
         * address taken) or the disk log did: name both */
        const char *why = raft_errmsg(&e->raft);
        if (!*why) why = e->io.errmsg;
        if (*why) snprintf(err, errlen, "raft start: %s", why);
        else snprintf(err, errlen, "raft start: %s listening on %s or opening the log in %s", raft_strerror(rv),
                      o->address, o->dir);
        goto fail;
    }
    return e;
fail:
    /* libraft's handles need the loop to close: a start failure ends the
     * process, so what was made is left to the exit */
    return NULL;
}

static void on_applied(struct raft_apply *req, int status, void *result)
{
    (void)result;
    proposal *p = req->data;
    repl_engine *e = p->e;
    uint64_t ticket = p->ticket;
    free(p);
    e->h.proposed(e->h.ctx, ticket, status == 0);
}

int repl_engine_propose(repl_engine *e, const void *data, size_t len, uint64_t ticket)
{
    struct raft_buffer buf = {.base = raft_malloc(len), .len = len};
    if (!buf.base) return -1;
    memcpy(buf.base, data, len);
    proposal *p = mem_alloc(sizeof(*p));
    p->e = e;
    p->ticket = ticket;
    p->req.data = p;
    if (raft_apply(&e->raft, &p->req, &buf, 1, on_applied) != 0) {
        raft_free(buf.base);
        free(p);
        return -1;
    }
    return 0;
}

static void on_barrier(struct raft_barrier *req, int status)
{
    repl_engine *e = req->data;
    e->barrier_busy = 0;
    e->h.barrier(e->h.ctx, status == 0);
}

int repl_engine_barrier(repl_engine *e)
{
    if (e->barrier_busy) return 0;
    e->barrier_req.data = e;
    if (raft_barrier(&e->raft, &e->barrier_req, on_barrier) != 0) return -1;
    e->barrier_busy = 1;
    return 0;
}

int repl_engine_role(repl_engine *e)
{
    switch (raft_state(&e->raft)) {
    case RAFT_FOLLOWER: return REPL_ROLE_FOLLOWER;
    case RAFT_CANDIDATE: return REPL_ROLE_CANDIDATE;
    case RAFT_LEADER: return REPL_ROLE_LEADER;
    default: return REPL_ROLE_NONE;
    }
}

uint64_t repl_engine_leader(repl_engine *e)
{
    raft_id id = 0;
    const char *addr = NULL;
    raft_leader(&e->raft, &id, &addr);
    return id;
}

uint64_t repl_engine_term(repl_engine *e) { return e->raft.current_term; }
uint64_t repl_engine_applied(repl_engine *e) { return raft_last_applied(&e->raft); }

static void on_raft_closed(struct raft *r)
{
    repl_engine *e = r->data;
    raft_uv_close(&e->io);
    raft_uv_tcp_close(&e->transport);
    void (*done)(void *) = e->done;
    void *ctx = e->done_ctx;
    free(e);
    if (done) done(ctx);
}

/* libraft 0.15 crashes closing while two or more of its own disk writes
 * of entries it appended as leader are queued: closing cancels them, and
 * each cancelled write's callback truncates the in-memory log from its
 * first index; the first one empties what the next one starts at, whose
 * truncation then walks off the end of the entries' reference table
 * (appendLeaderCb -> logTruncate, a NULL read). So the close waits until
 * the log's entries are on disk up to the last index it had when the close
 * was asked for (or up to its last, if entries were truncated since, the
 * follower's writes after a truncation queueing behind the older ones):
 * then no write of the leader's is pending. */
static int close_is_safe(repl_engine *e)
{
    raft_index last = raft_last_index(&e->raft);
    raft_index need = e->close_target < last ? e->close_target : last;
    return e->raft.last_stored >= need;
}

static void start_close(repl_engine *e) { raft_close(&e->raft, on_raft_closed); }

static void on_close_wait_closed(uv_handle_t *h) { free(h); }

/* Each loop iteration until closing is safe: the pending disk writes'
 * completions wake the loop. The handle is its own allocation because e
 * may be freed before the handle's close completes. */
static void on_close_wait(uv_check_t *h)
{
    repl_engine *e = h->data;
    if (!close_is_safe(e)) return;
    uv_close((uv_handle_t *)h, on_close_wait_closed);
    start_close(e);
}

void repl_engine_close(repl_engine *e, void (*done)(void *ctx), void *ctx)
{
    e->done = done;
    e->done_ctx = ctx;
    e->close_target = raft_last_index(&e->raft);
    if (close_is_safe(e)) {
        start_close(e);
        return;
    }
    uv_check_t *wait = mem_alloc(sizeof(*wait));
    uv_check_init(e->loop, wait);
    wait->data = e;
    uv_check_start(wait, on_close_wait);
}
