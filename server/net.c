/* net.c - client connections on libuv: reads land straight in the query
 * buffer, replies accumulate in the output buffer (with shared frames
 * spliced in) and are flushed once per loop iteration as one gathered write
 * (uv_try_write, then uv_write for what the kernel refused). */
#include <assert.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "acl.h"
#include "mem.h"
#include "persist/persist.h"
#include "pubsub.h"
#include "repl/repl.h"
#include "server.h"
#include "tls.h"

#define READ_CHUNK (16 * 1024)
/* Redis's PROTO_MBULK_BIG_ARG: an argument this long gets a query buffer
 * sized for it. */
#define BIG_ARG_BYTES (32 * 1024)
#define IDLE_BUFFER_KEEP (64 * 1024)   /* larger idle output buffers are returned */
#define TRIM_CROWD 64                  /* see trim_after_crowd() */
#define FRAME_SHARE_MIN 512            /* below this a copy beats a reference and an iovec */
#define IDLE_FRAMES_KEEP 64            /* larger idle frame queues are returned */
/* Redis's reply memory as its output limits and omem count it: a 16 KiB
 * static buffer left out, then blocks of 20464 bytes (16 KiB plus header
 * in jemalloc's 20 KiB class) costing 20504 each with their list node. */
#define OBUF_UNCOUNTED (16 * 1024)
#define OBUF_BLOCK_DATA 20464
#define OBUF_BLOCK_COST 20504

typedef struct frame_ref {
    size_t at;
    shared_frame *frame;
} frame_ref;

/* ---- shared frames ---- */

void frame_release(shared_frame *f)
{
    if (f && --f->refs == 0) free(f);
}

static shared_frame *frame_new(const char *p, size_t len)
{
    shared_frame *f = mem_alloc(sizeof(*f) + len);
    f->refs = 1;   /* the creator's, dropped with frame_release */
    f->len = len;
    memcpy(f->data, p, len);
    return f;
}

static void queue_push(frame_queue *q, size_t at, shared_frame *f)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->v = mem_realloc(q->v, q->cap * sizeof(*q->v));
    }
    q->v[q->n++] = (frame_ref){at, f};
    f->refs++;
    q->bytes += f->len;
}

static void queue_clear(frame_queue *q)
{
    for (size_t i = 0; i < q->n; i++) frame_release(q->v[i].frame);
    q->n = q->head_sent = q->bytes = 0;
    if (q->cap > IDLE_FRAMES_KEEP) {
        free(q->v);
        q->v = NULL;
        q->cap = 0;
    }
}

static void queue_free(frame_queue *q)
{
    queue_clear(q);
    free(q->v);
    q->v = NULL;
    q->cap = 0;
}

void client_add_frame(client *c, const char *p, size_t len, shared_frame **shared)
{
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)) return;
    client_schedule_write(c);
    if (len < FRAME_SHARE_MIN) {
        resp_buf_append(&c->out, p, len);
        return;
    }
    if (!*shared) *shared = frame_new(p, len);
    queue_push(&c->out_frames, c->out.len, *shared);
}

int client_type(const client *c) { return (c->flags & CLIENT_PUBSUB) ? CLIENT_TYPE_PUBSUB : CLIENT_TYPE_NORMAL; }

size_t client_output_bytes(const client *c)
{
    return c->out.len + c->out_frames.bytes + c->inflight.len + c->inflight_frames.bytes;
}

size_t client_output_memory(const client *c)
{
    size_t bytes = client_output_bytes(c);
    if (bytes <= OBUF_UNCOUNTED) return 0;
    return (bytes - OBUF_UNCOUNTED + OBUF_BLOCK_DATA - 1) / OBUF_BLOCK_DATA * OBUF_BLOCK_COST;
}

/* Redis's checkClientOutputBufferLimits: over the hard limit, or over the
 * soft one for more than its seconds (counted in whole clock seconds).
 * Counting as Redis does lets a tiny limit pass ordinary replies, and
 * trips a limit at the reply size that trips it there. */
static int over_limit(client *c)
{
    const obuf_limit *l = &c->srv->cfg.obuf_limits[client_type(c)];
    size_t used = client_output_memory(c);
    /* a stranger who does not read its NOAUTH replies gets 1 KiB (Redis) */
    if (!(c->flags & CLIENT_AUTHENTICATED) && used > 1024 && acl_auth_required(c->srv)) return 1;
    int hard = l->hard && used >= l->hard;
    if (!(l->soft && used >= l->soft)) {
        c->obuf_soft_since_ms = 0;
        return hard;
    }
    uint64_t now = server_now_ms(c->srv);
    if (!c->obuf_soft_since_ms) {
        c->obuf_soft_since_ms = now;
        server_obuf_watch(c->srv);
        return hard;
    }
    return hard || (long long)(now / 1000 - c->obuf_soft_since_ms / 1000) > l->soft_seconds;
}

int client_output_room(client *c)
{
    return !(c->flags & CLIENT_CLOSE_ASAP) && client_output_within_limit(c);
}

int client_output_within_limit(client *c)
{
    /* a script's or the embedder's client has no connection to cut */
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP | CLIENT_DETACHED)) return 1;
    if (!over_limit(c)) return 1;
    log_msg(c->srv, LOG_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
            (unsigned long long)c->id, c->addr);
    c->flags |= CLIENT_CLOSE_ASAP;
    return 0;
}

static void client_free(client *c)
{
    assert(!(c->flags & CLIENT_READ_BUF));   /* given back in the read callback */
    resp_buf_free(&c->query);
    resp_buf_free(&c->out);
    resp_buf_free(&c->inflight);
    queue_free(&c->out_frames);
    queue_free(&c->inflight_frames);
    if (c->tls) tls_conn_free(c->srv, c->tls);
    resp_parser_free(&c->parser);
    block_state_free(c);
    free(c->name);
    free(c->lib_name);
    free(c->lib_ver);
    free(c);
}

/* glibc keeps what a crowd of departed clients freed inside its heap, so
 * RSS would stay at the crowd's peak. Once a crowd of TRIM_CROWD or more
 * starts leaving, the free pages go back to the OS each time the client
 * structs still allocated have halved, down to the last one: a logarithmic
 * number of trims per crowd, none for the small comings and goings. */
static void trim_after_crowd(server *s)
{
    if (s->client_structs > s->client_structs_high / 2) return;
    if (s->client_structs_high >= TRIM_CROWD) s->trimming = 1;
    if (s->trimming) malloc_trim(0);
    s->client_structs_high = s->client_structs;
}

static void on_close(uv_handle_t *h)
{
    client *c = h->data;
    server *s = c->srv;
    client_free(c);
    s->client_structs--;
    trim_after_crowd(s);
}

static void unlink_client(client *c)
{
    server *s = c->srv;
    if (c->prev) c->prev->next = c->next;
    else s->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    else s->clients_tail = c->prev;
    c->prev = c->next = NULL;
    s->nclients--;
    if (s->client_mem_on) clientmem_forget(c);
}

static void unhold(client *c)
{
    server *s = c->srv;
    if (c->held_prev) c->held_prev->held_next = c->held_next;
    else s->held = c->held_next;
    if (c->held_next) c->held_next->held_prev = c->held_prev;
    c->held_prev = c->held_next = NULL;
    c->flags &= ~CLIENT_HELD;
}

/* A detached client only remembers it was closed: its owner frees it. */
void client_close(client *c)
{
    if (c->flags & CLIENT_CLOSING) return;
    if (c->flags & CLIENT_HELD) unhold(c);
    c->flags |= CLIENT_CLOSING;
    block_client_gone(c);
    monitor_remove(c);
    multi_client_reset(c);
    if (c->tref) tracking_client_gone(c);
    if (c->flags & CLIENT_DETACHED) return;
    unlink_client(c);
    pubsub_client_reset(c);
    uv_close(&c->h.handle, on_close);
}

/* ---- Redis's reply buffer, modelled (server.h) ---- */

#define REPLY_MIN_BYTES 1024      /* Redis's PROTO_REPLY_MIN_BYTES */
#define REPLY_CHUNK_BYTES 16384   /* PROTO_REPLY_CHUNK_BYTES: a new client's */

/* jemalloc's usable size for n (Redis's zmalloc_usable): four size
 * classes per doubling, a quarter of the power of two below n apart. */
static uint32_t usable_size(uint32_t n)
{
    uint32_t pow = 1;
    while (pow * 2 < n) pow *= 2;
    uint32_t step = pow >= 16 ? pow / 4 : 4;
    return (n + step - 1) / step * step;
}

/* How often Redis's clientsCron visits a client: all of them every tick
 * (1000/hz ms) up to 5, else hz-th of them (at least 5) per tick. */
static uint64_t cron_period_ms(const server *s)
{
    long long hz = s->cfg.hz < 1 ? 1 : s->cfg.hz;
    size_t n = s->nclients ? s->nclients : 1, per = (size_t)((long long)n / hz);
    if (per < 5) per = n < 5 ? n : 5;
    uint64_t calls = (n + per - 1) / per, tick = (uint64_t)(1000 / hz);
    return (tick ? tick : 1) * calls;
}

/* One visit of clientsCronResizeOutputBuffer at t, with the buffer empty
 * (latchd has flushed by then). */
static void reply_buffer_tick(client *c, uint64_t t)
{
    server *s = c->srv;
    if (!s->reply_resizing) return;
    uint32_t size = 0;
    if (c->rb_size / 2 >= REPLY_MIN_BYTES && c->rb_peak < c->rb_size / 2) {
        size = c->rb_peak + 1 > REPLY_MIN_BYTES ? c->rb_peak + 1 : REPLY_MIN_BYTES;
        s->stat_reply_shrinks++;
    } else if (c->rb_size * 2 < REPLY_CHUNK_BYTES * 2 && c->rb_peak == c->rb_size) {
        size = c->rb_size * 2 < REPLY_CHUNK_BYTES ? c->rb_size * 2 : REPLY_CHUNK_BYTES;
        s->stat_reply_expands++;
    }
    if (s->reply_peak_reset_ms >= 0 && t - c->rb_peak_reset_ms >= (uint64_t)s->reply_peak_reset_ms) {
        c->rb_peak = 0;
        c->rb_peak_reset_ms = t;
    }
    if (size) c->rb_size = usable_size(size);
}

void net_reply_buffer_sync(client *c, uint64_t now_ms)
{
    uint64_t period = cron_period_ms(c->srv);
    long long reset = c->srv->reply_peak_reset_ms;
    while (now_ms - c->rb_tick_ms >= period && now_ms >= c->rb_tick_ms) {
        uint32_t size = c->rb_size, peak = c->rb_peak;
        c->rb_tick_ms += period;
        reply_buffer_tick(c, c->rb_tick_ms);
        if (size != c->rb_size || peak != c->rb_peak) continue;
        /* a visit that changed nothing: nor will the next ones until the
         * peak resets, so skip to the last visit before that (or now) */
        uint64_t until = now_ms;
        if (c->srv->reply_resizing && reset >= 0 && c->rb_peak > 0 &&
            c->rb_peak_reset_ms + (uint64_t)reset - 1 < until)
            until = c->rb_peak_reset_ms + (uint64_t)reset - 1;
        if (until > c->rb_tick_ms) c->rb_tick_ms += (until - c->rb_tick_ms) / period * period;
    }
}

void net_reply_buffer_peak(client *c, size_t pending)
{
    net_reply_buffer_sync(c, server_now_ms(c->srv));
    uint32_t peak = pending < c->rb_size ? (uint32_t)pending : c->rb_size;
    if (peak > c->rb_peak) c->rb_peak = peak;
}

static client *client_create(server *s)
{
    client *c = mem_calloc(1, sizeof(*c));
    resp_limits lim = {RESP_INLINE_MAX, RESP_MULTIBULK_MAX, config_max_bulk(&s->cfg), 0};
    c->srv = s;
    c->id = ++s->next_client_id;
    c->proto = 2;
    c->ctime_ms = c->last_ms = server_now_ms(s);
    /* Redis starts the peak at the size (no shrink before a first reset)
     * and its last reset at unixtime, in seconds where milliseconds are
     * compared: the first visit resets it */
    c->rb_size = c->rb_peak = REPLY_CHUNK_BYTES;
    c->rb_tick_ms = c->ctime_ms;
    c->rb_peak_reset_ms = 0;
    resp_parser_init(&c->parser, &lim);
    acl_client_reset_auth(c);
    return c;
}

client *client_new(server *s)
{
    client *c = client_create(s);
    c->h.handle.data = c;
    /* oldest first, so CLIENT LIST lists in Redis's order */
    c->prev = s->clients_tail;
    if (c->prev) c->prev->next = c;
    else s->clients = c;
    s->clients_tail = c;
    s->nclients++;
    if (++s->client_structs > s->client_structs_high) {
        s->client_structs_high = s->client_structs;
        s->trimming = 0;   /* a new climb: the next descent decides afresh */
    }
    if (s->client_mem_on) {   /* its struct counts from now (not clientmem_update: no eviction here) */
        c->mem_counted = client_memory(c);
        s->clients_mem += c->mem_counted;
    }
    return c;
}

/* Like Redis's fake clients (createClient(NULL)): not in the client list,
 * so CLIENT LIST, KILL, timeouts and maxclients never see it, and replies
 * stay in c->out for the owner to read (and clear). */
client *client_new_detached(server *s)
{
    client *c = client_create(s);
    c->flags |= CLIENT_DETACHED;
    return c;
}

void client_free_detached(client *c)
{
    monitor_remove(c);
    multi_client_reset(c);
    if (c->tref) tracking_client_gone(c);
    client_free(c);
}

/* Stop reading, send what is queued, then close (QUIT, protocol errors,
 * shutdown). */
void client_close_after_reply(client *c)
{
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    if (!(c->flags & (CLIENT_CLOSING | CLIENT_DETACHED))) uv_read_stop(&c->h.stream);
    client_schedule_write(c);
}

/* Before AUTH, Redis caps requests tightly so a stranger cannot make the
 * server buffer much; the parser enforces the same caps. */
void client_set_authenticated(client *c, int yes)
{
    if (yes) c->flags |= CLIENT_AUTHENTICATED;
    else c->flags &= ~CLIENT_AUTHENTICATED;
    c->parser.lim.unauthenticated = !yes;
}

void client_schedule_write(client *c)
{
    if (c->flags & (CLIENT_PENDING_WRITE | CLIENT_DETACHED)) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->pending_next = c->srv->pending;
    c->srv->pending = c;
}

/* Buffers that grew for one big request or reply are given back once the
 * client is idle, so 10k quiet clients cost little. */
static void shrink_idle(resp_buf *b)
{
    if (b->len == 0 && b->cap > IDLE_BUFFER_KEEP) resp_buf_free(b);
}

/* Output buffers that grew past IDLE_BUFFER_KEEP, and a TLS session's
 * record buffers, stay while their client keeps using them and are given
 * back once it has been quiet for a second (Redis resizes its own in
 * clientsCron): freeing one after every flush made each pipelined batch of
 * big replies grow it again, page by page (6x the server CPU per LRANGE of
 * a hundred 200-byte elements at -P8), and OpenSSL's release after every
 * record (SSL_MODE_RELEASE_BUFFERS) cost a 16 KB malloc and free per read
 * and per write, 11% of the instructions of a TLS GET at -P1. */
static void keep_big_buffers(client *c)
{
    if ((c->flags & CLIENT_BIG_BUFFERS) ||
        (!c->tls && c->out.cap <= IDLE_BUFFER_KEEP && c->inflight.cap <= IDLE_BUFFER_KEEP))
        return;
    c->flags |= CLIENT_BIG_BUFFERS;
    server_shrink_watch(c->srv);
}

int net_release_quiet_buffers(client *c, uint64_t now_ms)
{
    int tls_held = c->tls != NULL;
    if (!c->writing && now_ms - c->last_ms >= 1000) {
        shrink_idle(&c->out);
        shrink_idle(&c->inflight);
        clientmem_update(c);
        if (c->tls) tls_held = !tls_conn_release_buffers(c->tls);
    }
    if (!tls_held && c->out.cap <= IDLE_BUFFER_KEEP && c->inflight.cap <= IDLE_BUFFER_KEEP)
        c->flags &= ~CLIENT_BIG_BUFFERS;
    return (c->flags & CLIENT_BIG_BUFFERS) != 0;
}

static void flush_client(client *c);

/* The output as iovecs in order: buffer bytes with the frames spliced in
 * where they were queued. Returns the count (in srv->iov). */
static unsigned gather(server *s, const resp_buf *b, const frame_queue *q)
{
    size_t need = 2 * q->n + 1, n = 0, pos = 0;
    if (need > s->iov_cap) {
        s->iov_cap = need * 2;
        s->iov = mem_realloc(s->iov, s->iov_cap * sizeof(*s->iov));
    }
    for (size_t i = 0; i < q->n; i++) {
        const shared_frame *f = q->v[i].frame;
        size_t skip = i == 0 ? q->head_sent : 0;
        if (q->v[i].at > pos) s->iov[n++] = uv_buf_init(b->data + pos, (unsigned)(q->v[i].at - pos));
        pos = q->v[i].at;
        s->iov[n++] = uv_buf_init((char *)f->data + skip, (unsigned)(f->len - skip));
    }
    if (b->len > pos) s->iov[n++] = uv_buf_init(b->data + pos, (unsigned)(b->len - pos));
    return (unsigned)n;
}

/* Drop the first n written bytes: buffer bytes and frames, in queue order. */
static void consume(resp_buf *b, frame_queue *q, size_t n)
{
    size_t taken = 0, done = 0;   /* buffer bytes and whole frames written */
    while (n > 0) {
        size_t upto = done < q->n ? q->v[done].at : b->len;
        if (upto > taken) {
            size_t k = n < upto - taken ? n : upto - taken;
            taken += k, n -= k;
            continue;
        }
        if (done == q->n) break;   /* cannot happen: n never exceeds what was queued */
        size_t left = q->v[done].frame->len - q->head_sent;
        size_t k = n < left ? n : left;
        q->bytes -= k, n -= k;
        if (k < left) {
            q->head_sent += k;   /* a frame cut short is at the head: all before it went */
            break;
        }
        q->head_sent = 0;
        frame_release(q->v[done++].frame);
    }
    q->n -= done;
    if (done) memmove(q->v, q->v + done, q->n * sizeof(*q->v));
    for (size_t i = 0; i < q->n; i++) q->v[i].at -= taken;
    resp_buf_consume(b, taken);
}

static int has_output(const client *c) { return c->out.len > 0 || c->out_frames.n > 0; }

static void on_write(uv_write_t *req, int status)
{
    client *c = req->data;
    c->writing = 0;
    c->inflight.len = 0;
    queue_clear(&c->inflight_frames);
    keep_big_buffers(c);
    clientmem_update(c);
    if (status < 0 || (c->flags & CLIENT_CLOSING)) {
        client_close(c);
        return;
    }
    flush_client(c);
}

/* The kernel took only part: hand the rest to uv_write, which owns the
 * inflight buffer and frames until on_write; new output keeps accumulating
 * in out. */
static void write_async(client *c)
{
    resp_buf tmp = c->inflight;
    frame_queue tq = c->inflight_frames;
    c->inflight = c->out;
    c->inflight_frames = c->out_frames;
    c->out = tmp;
    c->out.len = 0;
    c->out_frames = tq;
    unsigned nbufs = gather(c->srv, &c->inflight, &c->inflight_frames);
    c->wreq.data = c;
    c->writing = 1;
    if (uv_write(&c->wreq, &c->h.stream, c->srv->iov, nbufs, on_write) != 0) {
        c->writing = 0;
        client_close(c);
    }
}

static void tls_flush(client *c);

static void flush_client(client *c)
{
    if ((c->flags & (CLIENT_CLOSING | CLIENT_HELD)) || c->writing) return;
    size_t pending = c->out.len + c->out_frames.bytes;
    if (pending > c->rb_peak) net_reply_buffer_peak(c, pending);
    if (c->tls) {
        tls_flush(c);
        return;
    }
    if (has_output(c)) {
        c->srv->stat_writes++;
        unsigned nbufs = gather(c->srv, &c->out, &c->out_frames);
        int n = uv_try_write(&c->h.stream, c->srv->iov, nbufs);
        if (n < 0 && n != UV_EAGAIN) {
            client_close(c);
            return;
        }
        if (n > 0) {
            c->srv->stat_net_out += (uint64_t)n;
            consume(&c->out, &c->out_frames, (size_t)n);
        }
        if (has_output(c)) {
            write_async(c);
            return;
        }
        keep_big_buffers(c);
    }
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) client_close(c);
}

void net_flush_pending(server *s) { net_flush_pending_except(s, NULL); }

size_t net_hold_pending(server *s, uint64_t ticket)
{
    size_t n = 0;
    for (client *c = s->pending; c; c = c->pending_next) {
        if (c->flags & (CLIENT_CLOSING | CLIENT_DETACHED)) continue;
        n += c->hold_ticket != ticket || !(c->flags & CLIENT_HELD);
        c->hold_ticket = ticket;
        if (c->flags & CLIENT_HELD) continue;
        c->flags |= CLIENT_HELD;
        c->held_prev = NULL;
        c->held_next = s->held;
        if (s->held) s->held->held_prev = c;
        s->held = c;
    }
    return n;
}

size_t net_release(server *s, uint64_t ticket)
{
    size_t n = 0;
    client *c = s->held;
    while (c) {
        client *next = c->held_next;
        if (c->hold_ticket <= ticket) {
            unhold(c);
            n++;
            flush_client(c);   /* now: what it runs next may be held again */
            /* what it sent meanwhile runs now (its replies wait for the next ticket) */
            if (c->qpos < c->query.len && !(c->flags & (CLIENT_BLOCKED | CLIENT_UNBLOCKED))) client_process_input(c);
        }
        c = next;
    }
    return n;
}

void net_fail_held(server *s, const char *err)
{
    while (s->held) {
        client *c = s->held;
        unhold(c);
        if (!c->writing && c->out_frames.n == 0) {
            c->out.len = 0;   /* none of it may leave: the outcomes are unknown */
            resp_buf_appendf(&c->out, "%s\r\n", err);
            client_close_after_reply(c);
        } else {
            client_close(c);
        }
    }
}

void net_flush_pending_except(server *s, client *keep)
{
    /* Redis's beforeSleep: the AOF written (and with appendfsync always
     * synced) before any reply of this iteration leaves */
    if (s->repl) repl_before_sleep(s, keep);   /* the leader's entry proposed, its replies held */
    if (s->aof) aof_before_sleep(s, keep != NULL);   /* once on: replies it held may wait for their release */
    /* BCAST messages for what changed, before writing (not while a script
     * is busy: Redis's beforeSleep does only the AOF and writes then) */
    if (s->tracking_clients && !keep) tracking_before_sleep(s);
    client *c = s->pending;
    s->pending = NULL;
    while (c) {
        client *next = c->pending_next;
        if (c == keep) {   /* stays on the list, as it was */
            c->pending_next = s->pending;
            s->pending = c;
        } else {
            c->pending_next = NULL;
            c->flags &= ~CLIENT_PENDING_WRITE;
            flush_client(c);
            clientmem_update(c);
        }
        c = next;
    }
}

/* Room for at least n more bytes at the tail of the query buffer; parsed
 * bytes are dropped first so the buffer does not creep. */
static void query_reserve(client *c, size_t n)
{
    resp_buf *q = &c->query;
    if (c->qpos > 0) {
        memmove(q->data, q->data + c->qpos, q->len - c->qpos);
        q->len -= c->qpos;
        c->qpos = 0;
    }
    /* a big argument on its way: room for exactly the rest of it, as Redis
     * sizes its query buffer for one (PROTO_MBULK_BIG_ARG), not twice, and
     * reads no further than its end (a TLS record at a time, the last ones
     * would otherwise double the buffer) */
    size_t start, missing = resp_parser_bulk_missing(&c->parser, q->len);
    if (missing && resp_parser_bulk_arriving(&c->parser, &start) >= BIG_ARG_BYTES) {
        resp_buf_reserve_exact(q, missing);
        return;
    }
    resp_buf_reserve(q, n);
}

size_t net_query_shown(const client *c)
{
    /* Redis moves a big argument (PROTO_MBULK_BIG_ARG) to the front of its
     * query buffer once its header is read, and the arguments before it
     * out to argv: its qbuf is then that argument's bytes alone */
    size_t start;
    long long len = resp_parser_bulk_arriving(&c->parser, &start);
    if (len >= BIG_ARG_BYTES && c->qpos + start <= c->query.len) return c->query.len - c->qpos - start;
    return c->query.len;
}

/* A client with nothing pending reads into the server's one read buffer,
 * so a read costs no malloc and an idle client holds no buffer (Redis 7.4's
 * reusable query buffer); only an unfinished command is copied to a buffer
 * of the client's own. */
static void read_buf_borrow(client *c)
{
    server *s = c->srv;
    if (c->query.cap != 0 || s->read_buf_lent) return;
    c->query = s->read_buf;
    resp_buf_init(&s->read_buf);
    s->read_buf_lent = 1;
    c->flags |= CLIENT_READ_BUF;
}

static void read_buf_give_back(client *c)
{
    server *s = c->srv;
    size_t left = c->query.len - c->qpos;
    s->read_buf = c->query;
    s->read_buf.len = 0;
    s->read_buf_lent = 0;
    resp_buf_init(&c->query);
    c->flags &= ~CLIENT_READ_BUF;
    if (left) resp_buf_append(&c->query, s->read_buf.data + c->qpos, left);
    c->qpos = 0;
}

/* n new bytes sit at the tail of the query buffer: run what is complete. */
static void query_received(client *c, size_t n)
{
    c->query.len += n;
    c->srv->stat_net_in += (uint64_t)n;
    c->srv->stat_reads++;
    c->last_ms = server_now_ms(c->srv);
    store_env_set_clock(&c->srv->env, c->last_ms);   /* keys' access times, at no extra clock read */
    client_process_input(c);
    if (c->flags & CLIENT_READ_BUF) read_buf_give_back(c);
    /* What is left is one unfinished command: past the limit, Redis drops
     * the client without a reply. */
    if (c->query.len - c->qpos > (size_t)c->srv->cfg.client_query_buffer_limit) {
        log_msg(c->srv, LOG_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf=%zu)",
                (unsigned long long)c->id, c->addr, c->query.len - c->qpos);
        client_close(c);
        return;
    }
    if (c->qpos == c->query.len) {
        c->query.len = c->qpos = 0;
        resp_buf_free(&c->query);
    }
    clientmem_update(c);
}

/* Reads land straight in the free tail of the query buffer. */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    client *c = h->data;
    read_buf_borrow(c);
    query_reserve(c, READ_CHUNK);
    *buf = uv_buf_init(c->query.data + c->query.len, (unsigned)(c->query.cap - c->query.len));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    client *c = stream->data;
    if (nread > 0) {
        query_received(c, (size_t)nread);
        return;
    }
    if (c->flags & CLIENT_READ_BUF) read_buf_give_back(c);   /* nothing was read */
    if (nread < 0) client_close(c);
}

/* For detached clients: bytes arrive as if read from a socket. */
void client_feed(client *c, const char *p, size_t len)
{
    if (len == 0 || (c->flags & CLIENT_CLOSING)) return;
    query_reserve(c, len);
    memcpy(c->query.data + c->query.len, p, len);
    query_received(c, len);
}

static void describe_peer(client *c, int port_bound)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    char ip[INET6_ADDRSTRLEN] = "?";
    if (c->flags & CLIENT_UNIX) {
        snprintf(c->addr, sizeof(c->addr), "%s:0", c->srv->cfg.unixsocket);
        snprintf(c->laddr, sizeof(c->laddr), "%s:0", c->srv->cfg.unixsocket);
        return;
    }
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
        int port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                            : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        uv_ip_name((struct sockaddr *)&ss, ip, sizeof(ip));
        snprintf(c->addr, sizeof(c->addr), "%s:%d", ip, port);
    }
    len = sizeof(ss);
    if (uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
        uv_ip_name((struct sockaddr *)&ss, ip, sizeof(ip));
        snprintf(c->laddr, sizeof(c->laddr), "%s:%d", ip, port_bound);
    }
}

/* Redis's words, sent as the connection is refused. */
static const char maxclients_msg[] = "-ERR max number of clients reached\r\n";
static const char denied_msg[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
    "for the default user. In this mode connections are only accepted from the loopback interface. If you "
    "want to connect from external computers to Redis you may adopt one of the following solutions: "
    "1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback "
    "interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is "
    "not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. "
    "2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you started the "
    "server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above things in "
    "order for the server to start accepting connections from the outside.\r\n";

/* Answer with an error and hang up, as Redis does over maxclients and in
 * protected mode. */
static void refuse(client *c, const char *msg, size_t len)
{
    uv_buf_t buf = uv_buf_init((char *)msg, (unsigned)len);
    if (msg) (void)uv_try_write(&c->h.stream, &buf, 1);
    c->srv->stat_rejected_conns++;
    client_close(c);
}

/* Redis 7.0 counts exactly 127.0.0.1 and ::1 (not all of 127/8) as local. */
static int peer_is_loopback(const client *c)
{
    const char *colon = strrchr(c->addr, ':');
    size_t iplen = colon ? (size_t)(colon - c->addr) : 0;
    return (iplen == 9 && !strncmp(c->addr, "127.0.0.1", 9)) || (iplen == 3 && !strncmp(c->addr, "::1", 3));
}

int client_is_local(const client *c) { return (c->flags & CLIENT_UNIX) || peer_is_loopback(c); }

/* Protected mode: without a password, only loopback and unix socket
 * clients are served, whatever addresses are bound. */
static int protected_mode_refuses(const client *c)
{
    const latchd_config *cfg = &c->srv->cfg;
    return cfg->protected_mode && (acl_default_user(c->srv)->flags & ACL_USER_NOPASS) && !client_is_local(c);
}

static void tls_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void tls_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* Sets up a connection whose handle is open (tls: from a tls-port
 * listener): Redis's limits and protected mode first (a TLS client's once
 * its handshake is done), then reading. */
static void adopt(server *s, client *c, int is_unix, int tls)
{
    if (is_unix) {
        c->flags |= CLIENT_UNIX;
    } else {
        uv_tcp_nodelay(&c->h.tcp, 1);
        if (s->cfg.tcp_keepalive > 0) uv_tcp_keepalive(&c->h.tcp, 1, (unsigned)s->cfg.tcp_keepalive);
    }
    describe_peer(c, tls ? s->cfg.tls_port : s->port);
    if ((long long)s->nclients > s->cfg.maxclients) {
        /* a TLS peer could not read the plain text: it is only closed */
        refuse(c, tls ? NULL : maxclients_msg, tls ? 0 : sizeof(maxclients_msg) - 1);
        return;
    }
    if (tls) {
        c->tls = tls_conn_new(s, c);
        if (!c->tls) {
            client_close(c);
            return;
        }
        s->stat_conns++;
        if (uv_read_start(&c->h.stream, tls_on_alloc, tls_on_read) != 0) client_close(c);
        return;
    }
    if (protected_mode_refuses(c)) {
        refuse(c, denied_msg, sizeof(denied_msg) - 1);
        return;
    }
    s->stat_conns++;   /* refused ones are not counted, as in Redis */
    if (uv_read_start(&c->h.stream, on_alloc, on_read) != 0) client_close(c);
}

static void on_connection(uv_stream_t *listener, int status, int tls)
{
    server *s = listener->data;
    if (status < 0 || s->shutting_down) return;
    int is_unix = listener->type == UV_NAMED_PIPE;
    client *c = client_new(s);
    int rc = is_unix ? uv_pipe_init(s->loop, &c->h.pipe, 0) : uv_tcp_init(s->loop, &c->h.tcp);
    if (rc == 0) rc = uv_accept(listener, &c->h.stream);
    if (rc != 0) {
        client_close(c);
        return;
    }
    adopt(s, c, is_unix, tls);
}

void net_on_connection(uv_stream_t *listener, int status) { on_connection(listener, status, 0); }
void net_on_tls_connection(uv_stream_t *listener, int status) { on_connection(listener, status, 1); }

static int is_tls_listener(const server *s, const uv_stream_t *listener)
{
    for (int i = 0; i < s->ntls_listeners; i++)
        if ((const uv_stream_t *)s->tls_listeners[i] == listener) return 1;
    return 0;
}

int net_accept_now(uv_stream_t *listener)
{
    server *s = listener->data;
    uv_os_fd_t lfd;
    if (s->shutting_down || uv_fileno((uv_handle_t *)listener, &lfd) != 0) return 0;
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return 0;   /* EAGAIN, or an error the loop's own accept reports */
    int is_unix = listener->type == UV_NAMED_PIPE;
    client *c = client_new(s);
    int rc = is_unix ? uv_pipe_init(s->loop, &c->h.pipe, 0) : uv_tcp_init(s->loop, &c->h.tcp);
    if (rc == 0) rc = is_unix ? uv_pipe_open(&c->h.pipe, fd) : uv_tcp_open(&c->h.tcp, fd);
    if (rc != 0) {
        close(fd);
        client_close(c);
        return 0;
    }
    adopt(s, c, is_unix, is_tls_listener(s, listener));
    return 1;
}

/* ---- TLS clients: the same buffers, with OpenSSL between them and the
 * socket. A socket read lands in the server's one raw buffer, is
 * decrypted into the query buffer (borrowing read_buf as a plain read
 * does) until OpenSSL has used it all, so nothing decrypted waits for the
 * socket; a flush encrypts out and its frames into the session's output,
 * which goes out as one write. ---- */

#define TLS_RECORD_MAX (16 * 1024)               /* plain text per TLS record */
#define TLS_RAW_CHUNK (TLS_RECORD_MAX + 512)   /* a full record with its overhead */

/* The server's one raw buffer, made on first use. */
static char *tls_raw(server *s)
{
    if (!s->tls_raw) s->tls_raw = mem_alloc(TLS_RAW_CHUNK);
    return s->tls_raw;
}

static void tls_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    client *c = h->data;
    *buf = uv_buf_init(tls_raw(c->srv), TLS_RAW_CHUNK);
}

/* The handshake failed or the peer broke the session: logged as Redis
 * logs a failed accept (before the handshake ended) and closed, after a
 * last try at sending OpenSSL's alert. */
static void tls_fail(client *c, long why)
{
    tls_conn *t = c->tls;
    if (why == TLS_ERROR) {
        if (!tls_conn_established(t))
            log_msg(c->srv, LOG_WARNING, "Error accepting a client connection: %s (conn: addr=%s)",
                    tls_conn_error(t), c->addr);
        else
            log_msg(c->srv, LOG_VERBOSE, "Error reading from client: %s (addr=%s)", tls_conn_error(t), c->addr);
    }
    resp_buf *enc = tls_conn_output(t);
    if (enc->len && !c->writing && !(c->flags & CLIENT_DETACHED)) {
        uv_buf_t b = uv_buf_init(enc->data, (unsigned)enc->len);
        (void)uv_try_write(&c->h.stream, &b, 1);
    }
    client_close(c);
}

/* Once the handshake is done: what a plain connection meets at accept. */
static void tls_established(client *c)
{
    if (protected_mode_refuses(c)) {
        c->srv->stat_rejected_conns++;
        resp_buf_append(&c->out, denied_msg, sizeof(denied_msg) - 1);
        client_close_after_reply(c);
    }
}

void client_tls_received(client *c, const char *p, size_t n)
{
    tls_conn *t = c->tls;
    int was = tls_conn_established(t);
    tls_conn_input(t, p, n);
    for (;;) {
        if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) break;
        read_buf_borrow(c);
        query_reserve(c, READ_CHUNK);
        long got = tls_conn_read(t, c->query.data + c->query.len, c->query.cap - c->query.len);
        if (!was && tls_conn_established(t)) {
            was = 1;
            tls_established(c);
        }
        if (got > 0) {
            query_received(c, (size_t)got);
            continue;
        }
        if (c->flags & CLIENT_READ_BUF) read_buf_give_back(c);
        if (got == TLS_WANT_INPUT) break;
        tls_conn_input(t, NULL, 0);
        tls_fail(c, got);
        return;
    }
    tls_conn_input(t, NULL, 0);   /* the raw buffer is the next client's */
    keep_big_buffers(c);          /* the session's read buffer */
    if (tls_conn_output(t)->len) client_schedule_write(c);   /* the handshake's replies */
}

void net_read_now(client *c)
{
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) != 0) return;
    if (c->tls) {
        char *raw = tls_raw(c->srv);
        ssize_t n = read(fd, raw, TLS_RAW_CHUNK);
        if (n > 0) client_tls_received(c, raw, (size_t)n);
        return;
    }
    query_reserve(c, READ_CHUNK);
    ssize_t n = read(fd, c->query.data + c->query.len, c->query.cap - c->query.len);
    if (n > 0) query_received(c, (size_t)n);
}

static void tls_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    client *c = stream->data;
    if (nread < 0) {
        if (!tls_conn_established(c->tls))
            log_msg(c->srv, LOG_WARNING, "Error accepting a client connection: %s (conn: addr=%s)",
                    nread == UV_EOF ? "Connection closed by peer" : uv_strerror((int)nread), c->addr);
        client_close(c);
        return;
    }
    client_tls_received(c, buf->base, (size_t)nread);
}

/* The nbufs pieces in s->iov to t, pieces under a record's size packed
 * together: each SSL_write makes records of its own, and a record costs
 * its own encryption set-up and 22 bytes on the wire (pub/sub messages
 * past FRAME_SHARE_MIN come as pieces between the buffer's bytes). */
static int tls_write_packed(server *s, tls_conn *t, unsigned nbufs)
{
    if (nbufs == 1) return tls_conn_write(t, s->iov[0].base, s->iov[0].len);
    if (!s->tls_pack) s->tls_pack = mem_alloc(TLS_RECORD_MAX);
    size_t used = 0;
    for (unsigned i = 0; i < nbufs; i++) {
        const char *p = s->iov[i].base;
        size_t n = s->iov[i].len;
        if (used && used + n > TLS_RECORD_MAX) {
            if (tls_conn_write(t, s->tls_pack, used) != 0) return -1;
            used = 0;
        }
        if (n >= TLS_RECORD_MAX) {
            if (tls_conn_write(t, p, n) != 0) return -1;
            continue;
        }
        memcpy(s->tls_pack + used, p, n);
        used += n;
    }
    return used ? tls_conn_write(t, s->tls_pack, used) : 0;
}

/* Encrypt what is queued (while no write is in flight, so a slow reader's
 * backlog stays plain text in out, where the output limits count it),
 * then one write of the session's output; what the kernel refuses goes
 * by uv_write from inflight. */
int client_tls_encrypt(client *c)
{
    tls_conn *t = c->tls;
    server *s = c->srv;
    if (!has_output(c) || !tls_conn_established(t)) return 0;
    unsigned nbufs = gather(s, &c->out, &c->out_frames);
    size_t total = 0;
    for (unsigned i = 0; i < nbufs; i++) total += s->iov[i].len;
    if (tls_write_packed(s, t, nbufs) != 0) return -1;
    s->stat_net_out += total;   /* plain text, as Redis counts it */
    consume(&c->out, &c->out_frames, total);
    keep_big_buffers(c);
    return 0;
}

static void tls_flush(client *c)
{
    tls_conn *t = c->tls;
    if (client_tls_encrypt(c) != 0) {
        tls_fail(c, TLS_ERROR);
        return;
    }
    int closing = (c->flags & CLIENT_CLOSE_AFTER_REPLY) && !has_output(c);
    if (closing) tls_conn_shutdown(t);
    resp_buf *enc = tls_conn_output(t);
    if (enc->len) {
        c->srv->stat_writes++;
        uv_buf_t b = uv_buf_init(enc->data, (unsigned)enc->len);
        int n = uv_try_write(&c->h.stream, &b, 1);
        if (n < 0 && n != UV_EAGAIN) {
            client_close(c);
            return;
        }
        if (n > 0) resp_buf_consume(enc, (size_t)n);
        if (enc->len) {
            resp_buf tmp = c->inflight;
            c->inflight = *enc;
            *enc = tmp;
            enc->len = 0;
            b = uv_buf_init(c->inflight.data, (unsigned)c->inflight.len);
            c->wreq.data = c;
            c->writing = 1;
            if (uv_write(&c->wreq, &c->h.stream, &b, 1, on_write) != 0) {
                c->writing = 0;
                client_close(c);
            }
            return;
        }
        shrink_idle(enc);
    }
    if (closing) client_close(c);
}
