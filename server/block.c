/* block.c - parked clients: blocking commands waiting on keys (Redis 7.0's
 * blocked.c: per-key FIFOs of waiters, ready keys served after each
 * command), CLIENT PAUSE's postponed commands, and their timeouts. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "mem.h"
#include "num.h"
#include "server.h"
#include "wheel.h"
#include "commands/commands.h"
#include "scripting/script.h"
#include "persist/persist.h"
#include "list.h"
#include "zset.h"

/* One client waiting on one key: a node of that key's FIFO. */
typedef struct block_waiter {
    struct block_waiter *prev, *next;
    struct block_key *bk;
    client *c;
} block_waiter;

/* A key some client waits on, in its database's hash (by number: SWAPDB
 * leaves waiters where they are, as in Redis). */
typedef struct block_key {
    store_dict_node node;
    block_waiter *head, *tail;      /* in the order they blocked */
    struct block_key *ready_next;
    int db;
    int ready;                      /* queued on the ready list */
    int serving;                    /* its waiters are being served: not freed */
    char key[];
} block_key;

/* Per client, made on its first block and kept: parking again costs no
 * malloc. The command is copied (its argv lived in the query buffer). */
struct block_state {
    client *c;
    int type;                       /* BLOCK_* */
    int rerun;                      /* a postponed command runs again when unparked */
    block_serve_fn serve;
    block_stream_fn sserve;         /* BLOCK_STREAM's serve */
    char *data;                     /* BLOCK_STREAM's state (block_stream_data) */
    size_t data_cap;
    wheel_node timer;               /* armed when a deadline is set */
    block_waiter *w;
    int nw, wcap;
    resp_slice *argv;
    int argc, argv_cap;
    resp_buf bytes;
    client *qprev, *qnext;          /* the paused or the unblocked queue */
};

typedef struct client_queue {
    client *head, *tail;
} client_queue;

struct block_server {
    store_dict *keys;               /* one per database number */
    block_key *ready_head, *ready_tail;
    client_queue paused, unblocked;
    size_t nkeys;                   /* keys with waiters, every database */
    size_t timed;                   /* parked with a deadline */
    int pause_type;                 /* 0, or 1 writes, 2 everything */
    wheel_node pause_timer;         /* the pause's end */
    wheel wheel;
};

enum { PAUSE_OFF = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

static struct block_server *block_server_get(server *s)
{
    if (s->block) return s->block;
    struct block_server *bs = mem_calloc(1, sizeof(*bs));
    bs->keys = mem_calloc((size_t)s->ndbs, sizeof(*bs->keys));
    for (int i = 0; i < s->ndbs; i++)
        store_dict_init(&bs->keys[i], STORE_DICT_KEY_OFF(block_key, node, key), STORE_DICT_KEY_INLINE);
    wheel_init(&bs->wheel, server_clock_ms(s));
    wheel_node_init(&bs->pause_timer);
    s->block = bs;
    return bs;
}

static struct block_state *state_get(client *c)
{
    if (!c->blk) {
        c->blk = mem_calloc(1, sizeof(*c->blk));
        c->blk->c = c;
        wheel_node_init(&c->blk->timer);
    }
    return c->blk;
}

/* ---- queues ---- */

static void queue_push(client_queue *q, client *c)
{
    struct block_state *b = c->blk;
    b->qnext = NULL;
    b->qprev = q->tail;
    if (q->tail) q->tail->blk->qnext = c;
    else q->head = c;
    q->tail = c;
}

static void queue_remove(client_queue *q, client *c)
{
    struct block_state *b = c->blk;
    if (b->qprev) b->qprev->blk->qnext = b->qnext;
    else q->head = b->qnext;
    if (b->qnext) b->qnext->blk->qprev = b->qprev;
    else q->tail = b->qprev;
    b->qprev = b->qnext = NULL;
}

/* ---- arguments ---- */

int block_allowed(const client *c)
{
    return !(c->flags & CLIENT_DETACHED) && !c->mstate.executing;
}

int block_timeout_or_reply(client *c, const resp_slice *a, uint64_t *deadline)
{
    long double secs;
    long long ms;
    if (!store_str2ld(a->ptr, a->len, &secs)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return 0;
    }
    long double v = ceill(secs * 1000.0L);
    /* Redis casts to long long: out of range (inf) lands on LLONG_MIN on x86 */
    ms = (v >= -9.2e18L && v <= 9.2e18L) ? (long long)v : LLONG_MIN;
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    *deadline = ms == 0 ? 0 : block_deadline_after(c->srv, (uint64_t)ms);
    return 1;
}

int block_ms_or_reply(client *c, const resp_slice *a, long long *ms)
{
    if (!store_str2ll(a->ptr, a->len, ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return 0;
    }
    if (*ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    return 1;
}

/* serve, and with the AOF on its effect logged as the pop (or move) it did. */
static void serve_logged(client *c, store_key *k, const resp_slice *key, block_serve_fn serve)
{
    server *s = c->srv;
    if (!s->aof_on) {
        serve(c, k, key);
        return;
    }
    size_t len = store_key_type(k) == STORE_LIST ? store_list_len(k) : store_zset_len(k);
    uint64_t before = aof_changes(s);
    serve(c, k, key);
    aof_served(c, key, len, before);
}

void block_pop_or_wait(client *c, int type, int first, int n, int timeout_idx, block_serve_fn serve)
{
    uint64_t deadline;
    store_type want = type == BLOCK_LIST ? STORE_LIST : STORE_ZSET;
    if (!block_timeout_or_reply(c, &c->argv[timeout_idx], &deadline)) return;
    for (int j = first; j < first + n; j++) {
        store_key *k = db_lookup_write(c, &c->argv[j]);
        if (!k) continue;
        if (db_check_type(c, k, want)) serve_logged(c, k, &c->argv[j], serve);
        return;
    }
    if (!block_allowed(c)) {
        reply_null_array(c);   /* MULTI, scripts: a timeout, even with 0 */
        return;
    }
    block_for_keys(c, type, first, n, deadline, serve);
}

uint64_t block_deadline_after(server *s, uint64_t ms)
{
    uint64_t now = server_clock_ms(s);
    return ms > UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + ms;
}

/* The command c runs, copied into its block state (unless it already
 * runs from there: a postponed command that now blocks on keys). */
static void keep_argv(struct block_state *b, client *c)
{
    if (c->argv == b->argv) return;
    size_t total = 0;
    for (int i = 0; i < c->argc; i++) total += c->argv[i].len;
    b->bytes.len = 0;
    resp_buf_reserve(&b->bytes, total + 1);
    if (c->argc > b->argv_cap) {
        b->argv_cap = c->argc;
        b->argv = mem_realloc(b->argv, (size_t)c->argc * sizeof(*b->argv));
    }
    for (int i = 0; i < c->argc; i++) {
        char *dst = b->bytes.data + b->bytes.len;
        if (c->argv[i].len) memcpy(dst, c->argv[i].ptr, c->argv[i].len);
        b->argv[i].ptr = dst;
        b->argv[i].len = c->argv[i].len;
        b->bytes.len += c->argv[i].len;
    }
    b->argc = c->argc;
}

static void park(client *c, struct block_state *b, int type, uint64_t deadline)
{
    server *s = c->srv;
    b->type = type;
    c->flags |= CLIENT_BLOCKED;
    s->blocked_clients++;
    if (type == BLOCK_STREAM) s->blocked_streams++;
    if (deadline) {
        wheel_add(&s->block->wheel, &b->timer, deadline);
        s->block->timed++;
        server_expire_rearm(s);
    }
}

void block_for_keys(client *c, int type, int first, int n, uint64_t deadline, block_serve_fn serve)
{
    server *s = c->srv;
    struct block_server *bs = block_server_get(s);
    struct block_state *b = state_get(c);
    keep_argv(b, c);
    b->serve = serve;
    if (n > b->wcap) {
        b->wcap = n;
        b->w = mem_realloc(b->w, (size_t)n * sizeof(*b->w));
    }
    b->nw = 0;
    store_dict *d = &bs->keys[c->db];
    for (int j = first; j < first + n; j++) {
        const resp_slice *key = &b->argv[j];
        block_key *bk = (block_key *)store_dict_find(d, key->ptr, key->len);
        if (!bk) {
            bk = mem_calloc(1, sizeof(*bk) + key->len);
            memcpy(bk->key, key->ptr, key->len);
            bk->node.keylen = store_dict_keylen(key->len);
            bk->db = c->db;
            store_dict_insert(d, &bk->node);
            bs->nkeys++;
        } else if (bk->tail && bk->tail->c == c) {
            continue;   /* the same key twice: nobody else blocked in between */
        }
        block_waiter *w = &b->w[b->nw++];
        *w = (block_waiter){.prev = bk->tail, .bk = bk, .c = c};
        if (bk->tail) bk->tail->next = w;
        else bk->head = w;
        bk->tail = w;
    }
    park(c, b, type, deadline);
}

void *block_for_stream(client *c, int first, int n, uint64_t deadline, block_stream_fn serve, size_t len)
{
    block_for_keys(c, BLOCK_STREAM, first, n, deadline, NULL);
    struct block_state *b = c->blk;
    b->sserve = serve;
    if (len > b->data_cap) {
        b->data = mem_realloc(b->data, len);
        b->data_cap = len;
    }
    return b->data;
}

void *block_stream_data(const client *c) { return c->blk->data; }

void block_for_wait(client *c, uint64_t deadline)
{
    struct block_state *b;
    block_server_get(c->srv);
    b = state_get(c);
    keep_argv(b, c);
    b->nw = 0;
    park(c, b, BLOCK_WAIT, deadline);
}

static void key_free_if_idle(server *s, block_key *bk)
{
    if (bk->head || bk->ready || bk->serving) return;
    store_dict_unlink(&s->block->keys[bk->db], &bk->node);
    s->block->nkeys--;
    free(bk);
}

/* Out of every key's FIFO, the timer and the paused queue. */
static void unpark(client *c)
{
    server *s = c->srv;
    struct block_server *bs = s->block;
    struct block_state *b = c->blk;
    for (int i = 0; i < b->nw; i++) {
        block_waiter *w = &b->w[i];
        block_key *bk = w->bk;
        if (w->prev) w->prev->next = w->next;
        else bk->head = w->next;
        if (w->next) w->next->prev = w->prev;
        else bk->tail = w->prev;
        key_free_if_idle(s, bk);
    }
    b->nw = 0;
    if (wheel_node_armed(&b->timer)) {
        wheel_del(&bs->wheel, &b->timer);
        bs->timed--;
    }
    if (b->type == BLOCK_PAUSED) queue_remove(&bs->paused, c);
    if (b->type == BLOCK_STREAM) s->blocked_streams--;
    b->type = BLOCK_NONE;
    c->flags &= ~CLIENT_BLOCKED;
    s->blocked_clients--;
}

/* Redis's updateStatsOnUnblock, under the command's own arguments (the
 * slow log's): the reply written from mark on, started at t0. A timeout
 * of its own is not counted again, as in Redis. */
static void count_finished(client *c, size_t mark, uint64_t t0, int failed)
{
    resp_slice *argv = c->argv;
    int argc = c->argc;
    c->argv = c->blk->argv;
    c->argc = c->blk->argc;
    stats_unblocked(c, mark, stats_ticks() - t0, failed);
    c->argv = argv;
    c->argc = argc;
}

/* Unparked: what waited in its input runs before the next flush. */
static void unpark_and_queue(client *c)
{
    unpark(c);
    if (!(c->flags & CLIENT_UNBLOCKED)) {
        c->flags |= CLIENT_UNBLOCKED;
        queue_push(&c->srv->block->unblocked, c);
    }
}

void block_client_gone(client *c)
{
    if (!c->blk) return;
    if (c->flags & CLIENT_BLOCKED) unpark(c);
    if (c->flags & CLIENT_UNBLOCKED) {
        queue_remove(&c->srv->block->unblocked, c);
        c->flags &= ~CLIENT_UNBLOCKED;
    }
    c->blk->rerun = 0;
}

void block_state_free(client *c)
{
    struct block_state *b = c->blk;
    if (!b) return;
    free(b->w);
    free(b->data);
    free(b->argv);
    resp_buf_free(&b->bytes);
    free(b);
    c->blk = NULL;
}

/* ---- ready keys ---- */

void block_key_signal(server *s, int db, const char *key, size_t klen)
{
    struct block_server *bs = s->block;
    if (!bs || !bs->nkeys) return;
    block_key *bk = (block_key *)store_dict_find(&bs->keys[db], key, klen);
    if (!bk || bk->ready || !bk->head) return;
    bk->ready = 1;
    s->block_ready = 1;
    bk->ready_next = NULL;
    if (bs->ready_tail) bs->ready_tail->ready_next = bk;
    else bs->ready_head = bk;
    bs->ready_tail = bk;
}

typedef struct swap_scan {
    server *s;
    store *st;
    int db;
} swap_scan;

static void swap_visit(store_dict_node *n, void *ctx)
{
    swap_scan *sc = ctx;
    block_key *bk = (block_key *)n;
    store_presence p = store_peek(sc->st, bk->key, n->keylen);
    /* a stream key gone: its XREADGROUP waiters are told (Redis's
     * scanDatabaseForDeletedStreams) */
    if (p == STORE_ABSENT && !sc->s->blocked_streams) return;
    /* the type is checked when served: a key past its deadline is
     * reclaimed then, as Redis's lookup does */
    block_key_signal(sc->s, sc->db, bk->key, n->keylen);
}

void block_db_swapped(server *s, int a, int b)
{
    struct block_server *bs = s->block;
    if (!bs || !bs->nkeys) return;
    int dbs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        swap_scan sc = {s, server_db_if_used(s, dbs[i]), dbs[i]};
        if (sc.st && store_dict_size(&bs->keys[dbs[i]])) store_dict_foreach(&bs->keys[dbs[i]], swap_visit, &sc);
    }
}

typedef struct flush_scan {
    server *s;
    int db;
} flush_scan;

static void flush_visit(store_dict_node *n, void *ctx)
{
    flush_scan *fs = ctx;
    block_key_signal(fs->s, fs->db, ((block_key *)n)->key, n->keylen);
}

void block_db_flushed(server *s, int db)
{
    struct block_server *bs = s->block;
    if (!bs || !s->blocked_streams) return;
    for (int i = db < 0 ? 0 : db; i < (db < 0 ? s->ndbs : db + 1); i++) {
        flush_scan fs = {s, i};
        if (store_dict_size(&bs->keys[i])) store_dict_foreach(&bs->keys[i], flush_visit, &fs);
    }
}

/* Serve bk's waiters of the key's type, first blocked first, while the
 * key has data; a served client leaves every key it waited on. Stream
 * waiters decide for themselves (new entries, or an XREADGROUP's key or
 * group gone), whatever the key holds now. */
static void serve_key(server *s, block_key *bk)
{
    store *st = server_db_if_used(s, bk->db);
    resp_slice key = {bk->key, bk->node.keylen};
    bk->serving = 1;
    for (block_waiter *w = bk->head, *next; w; w = next) {
        next = w->next;
        store_key *k = st ? store_lookup(st, key.ptr, key.len) : NULL;
        client *c = w->c;
        struct block_state *b = c->blk;
        if (b->type != BLOCK_STREAM) {
            store_type ty = k ? store_key_type(k) : STORE_STRING;
            int want = !k ? BLOCK_NONE : ty == STORE_LIST ? BLOCK_LIST : ty == STORE_ZSET ? BLOCK_ZSET : BLOCK_NONE;
            if (want == BLOCK_NONE) {
                if (s->blocked_streams) continue;   /* a stream waiter further on may still be served */
                break;
            }
            if (b->type != want) continue;
        }
        resp_slice *argv = c->argv;
        int argc = c->argc;
        c->argv = b->argv;
        c->argc = b->argc;
        client *outer = s->current_client;   /* the served command is c's own (Redis's serveClientsBlockedOnListKey) */
        s->current_client = c;
        size_t mark = c->out.len;
        uint64_t t0 = stats_ticks();
        int served = 1;
        if (b->type == BLOCK_STREAM) {
            int logging = s->aof_on;   /* XREADGROUP logs its claims itself */
            if (logging) aof_unit_begin(s);
            served = b->sserve(c, k, &key);
            if (logging) aof_unit_end(s);
        }
        else serve_logged(c, k, &key, b->serve);
        if (served) {
            count_finished(c, mark, t0, 0);
            if (s->tracking_clients) tracking_after_command(c);   /* its invalidations after its reply */
        }
        s->current_client = outer;
        c->argv = argv;
        c->argc = argc;
        if (served) unpark_and_queue(c);
    }
    bk->serving = 0;
    key_free_if_idle(s, bk);
}

void block_handle_ready(server *s)
{
    struct block_server *bs = s->block;
    if (s->scripts && s->scripts->running) return;   /* a busy script's bystanders: later */
    s->block_ready = 0;
    while (bs->ready_head) {
        block_key *bk = bs->ready_head;
        bs->ready_head = bk->ready_next;
        if (!bs->ready_head) bs->ready_tail = NULL;
        bk->ready = 0;
        serve_key(s, bk);
    }
}

void block_run_unblocked(server *s)
{
    struct block_server *bs = s->block;
    if (!bs) return;
    while (bs->unblocked.head) {
        client *c = bs->unblocked.head;
        queue_remove(&bs->unblocked, c);
        c->flags &= ~CLIENT_UNBLOCKED;
        if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP)) continue;
        if (c->blk->rerun) {
            c->blk->rerun = 0;
            client_run_postponed(c, c->blk->argv, c->blk->argc);
        }
        if (!(c->flags & CLIENT_BLOCKED)) client_process_input(c);
        if (c->qpos == c->query.len && c->query.len) c->query.len = c->qpos = 0;
    }
}

/* ---- CLIENT UNBLOCK, timeouts ---- */

/* Redis's replyToBlockedClientTimedOut: WAIT counts its acknowledgements
 * (none), the rest get a null array. */
static void reply_timed_out(client *c)
{
    if (c->blk->type == BLOCK_WAIT) reply_int(c, 0);
    else reply_null_array(c);
}

int block_unblock(client *c, const char *err)
{
    if (!(c->flags & CLIENT_BLOCKED) || c->blk->type == BLOCK_PAUSED) return 0;
    size_t mark = c->out.len;
    uint64_t t0 = stats_ticks();
    if (err) reply_error(c, err);
    else reply_timed_out(c);
    count_finished(c, mark, t0, 1);   /* CLIENT UNBLOCK: a failure either way, as Redis counts it */
    unpark_and_queue(c);
    return 1;
}

size_t block_timeout_clients(const server *s) { return s->block ? s->block->timed : 0; }

uint64_t block_next_due(const server *s)
{
    return s->block ? wheel_next_due(&s->block->wheel) : UINT64_MAX;
}

static void on_block_due(wheel_node *n, void *ctx)
{
    server *s = ctx;
    struct block_server *bs = s->block;
    if (n == &bs->pause_timer) {
        block_unpause(s);
        return;
    }
    struct block_state *b = (struct block_state *)(void *)((char *)n - offsetof(struct block_state, timer));
    bs->timed--;
    reply_timed_out(b->c);
    unpark_and_queue(b->c);
}

void block_expire_due(server *s)
{
    if (!s->block) return;
    wheel_advance(&s->block->wheel, server_clock_ms(s), on_block_due, s);
}

/* ---- CLIENT PAUSE ---- */

void block_pause(server *s, uint64_t until_ms, int all)
{
    struct block_server *bs = block_server_get(s);
    int type = all ? PAUSE_ALL : PAUSE_WRITE;
    /* a pause already on keeps the stricter type and the later end */
    if (bs->pause_type) {
        if (type < bs->pause_type) type = bs->pause_type;
        if (until_ms < bs->pause_timer.deadline) until_ms = bs->pause_timer.deadline;
    }
    bs->pause_type = type;
    s->clients_paused = 1;
    wheel_add(&bs->wheel, &bs->pause_timer, until_ms);
    server_expire_rearm(s);
}

void block_unpause(server *s)
{
    struct block_server *bs = s->block;
    if (!bs || !bs->pause_type) return;
    bs->pause_type = PAUSE_OFF;
    s->clients_paused = 0;
    s->env.hold_expired = s->repl_gate;   /* a replicated node that does not serve never expires keys itself */
    if (wheel_node_armed(&bs->pause_timer)) wheel_del(&bs->wheel, &bs->pause_timer);
    while (bs->paused.head) {
        client *c = bs->paused.head;
        c->blk->rerun = 1;
        unpark_and_queue(c);
    }
    server_expire_rearm(s);
}

int block_pause_active(server *s) { return s->block && s->block->pause_type; }

int block_pause_holds(client *c, const command *cmd)
{
    struct block_server *bs = c->srv->block;
    if (!bs || !bs->pause_type) return 0;
    if (bs->pause_type == PAUSE_WRITE) {
        unsigned f = script_command_flags(c, cmd);
        if (cmd->proc == cmd_exec) f |= c->mstate.cmd_flags;
        /* readers see keys past their deadline as gone, and leave them be */
        c->srv->env.hold_expired = !(f & CMD_WRITE);
        if (!(f & (CMD_WRITE | CMD_MAY_REPLICATE))) return 0;
    }
    struct block_state *b = state_get(c);
    keep_argv(b, c);
    b->nw = 0;
    queue_push(&bs->paused, c);
    park(c, b, BLOCK_PAUSED, 0);
    return 1;
}

static void key_free_node(store_dict_node *n, void *ctx)
{
    (void)ctx;
    free(n);
}

void block_free(server *s)
{
    struct block_server *bs = s->block;
    if (!bs) return;
    for (int i = 0; i < s->ndbs; i++) store_dict_clear(&bs->keys[i], key_free_node, NULL);
    free(bs->keys);
    free(bs);
    s->block = NULL;
}
