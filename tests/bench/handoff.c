/* handoff.c - lock-handoff load generator: N simulated Redisson clients fight
 * over K RLocks (EVALSHA lock/unlock, pub/sub wake-ups) and report
 * acquisitions/s and handoff latency from one monotonic clock.
 *
 * Each client owns a command connection and a separate subscriber connection,
 * as a Redisson instance does; each lock() call picks one of the K locks at
 * random and follows RedissonLock.lock():
 *   tryAcquire -> (ttl) SUBSCRIBE channel -> tryAcquire -> wait for a message
 *   or the ttl -> tryAcquire ... -> acquired: UNSUBSCRIBE -> hold -> unlock
 *   (3.24.0+ script with the unlock latch) -> DEL latch -> idle -> again.
 * Handoff latency = a waiter's successful acquire reply minus the holder's
 * unlock reply for the same lock (both stamped with uv_hrtime()).
 *
 *   handoff --port P [--locks K] [--clients N] [--hold-ms A[-B]] [--idle-ms A[-B]]
 *           [--duration S] [--warmup S] [--no-preload]
 * Before starting it deletes the K lock keys (an earlier run may have left
 * them held) and, unless --no-preload, SCRIPT LOADs both texts and checks
 * their SHA1s; without it the first EVALSHAs take the NOSCRIPT -> EVAL path.
 * Prints one line of key=value pairs; exits non-zero with a message on any
 * error, unexpected reply or stall. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "resp.h"

#define LOCK_SHA "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
#define UNLOCK_SHA "6866459238a13a701d42f4971f12d9f3a50e2442"
/* Exact texts from Redisson (tryLockInnerAsync 3.19.0-, unlockInnerAsync
 * 3.24.0-); the unlock text ends with a space that is part of its SHA1.
 * --preload checks both SHA1s against what the server computes. */
static const char LOCK_TEXT[] =
    "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) "
    "then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; return redis.call('pttl', KEYS[1]);";
static const char UNLOCK_TEXT[] =
    "local val = redis.call('get', KEYS[3]); if val ~= false then return tonumber(val);end; "
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then "
    "redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
    "return 0; else redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1; end; ";

#define LEASE_MS "30000"       /* lockWatchdogTimeout default */
#define LATCH_TTL_MS "13500"   /* (timeout + retryInterval) * retryAttempts */
#define MAX_FRAME_ITEMS 4
#define MAX_PENDING_INPUT (1 << 20)
#define STALL_NS (10ull * 1000000000ull)

typedef enum {
    ST_IDLE, ST_LOCKING, ST_SUBSCRIBING, ST_WAITING, ST_HOLDING, ST_UNLOCKING, ST_DEL_LATCH,
    ST_SETUP
} client_state;

struct client;

typedef struct conn {
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    uv_write_t write_req;
    struct client *owner;
    int is_sub;
    int writing;
    resp_buf in, out, inflight;
} conn;

typedef struct lock_slot {
    char name[32];
    char channel[64];
    struct client *holder; /* last client that acquired it */
    uint64_t released_at;  /* holder's unlock reply time; 0 = not seen yet */
} lock_slot;

typedef struct client {
    int id;
    conn cmd, sub;
    uv_timer_t timer;
    client_state state;
    lock_slot *lock;
    char owner_field[48];  /* "<uuid>:<thread id>" */
    char latch[96];
    uint64_t rng;
    int failed_once;       /* this lock() call has seen the lock taken */
    int subscribed;        /* SUBSCRIBE sent and no UNSUBSCRIBE since */
    int woken;             /* a message came while a retry was in flight */
    int use_eval;          /* last EVALSHA said NOSCRIPT: send the text */
    int taken_early;       /* 1 barger / 2 waiter acquired before our unlock reply */
} client;

typedef struct range { uint64_t lo, hi; } range;

static struct {
    const char *host;
    int port;
    int nlocks, nclients;
    range hold_ms, idle_ms;
    double duration, warmup;
    int preload;
} opt = {"127.0.0.1", 0, 10, 50, {0, 1}, {0, 1}, 10.0, 1.0, 1};

static uv_loop_t *loop;
static client *clients;
static lock_slot *locks;
static int connected, setup_left;
static uint64_t launch_ns, start_ns, measure_ns, end_ns, last_progress_ns;
static uint64_t acquisitions, handoffs, barges, unmatched, reordered, unlocks, subscribes;
static uint64_t *samples;
static size_t nsamples, samples_cap;
static uv_timer_t watchdog;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("handoff: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static uint64_t next_rand(client *c)
{
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

static uint64_t pick(client *c, range r)
{
    return r.lo + next_rand(c) % (r.hi - r.lo + 1);
}

static int measuring(uint64_t now) { return now >= measure_ns; }

static void record_sample(uint64_t ns)
{
    if (nsamples == samples_cap) {
        samples_cap = samples_cap ? samples_cap * 2 : 65536;
        samples = realloc(samples, samples_cap * sizeof *samples);
        if (!samples)
            die("out of memory for %zu samples", samples_cap);
    }
    samples[nsamples++] = ns;
}

/* ---- connections ---- */

static void on_write(uv_write_t *req, int status);

static void conn_flush(conn *c)
{
    if (c->writing || c->out.len == 0)
        return;
    resp_buf t = c->inflight;
    c->inflight = c->out;
    c->out = t;
    c->out.len = 0;
    uv_buf_t b = uv_buf_init(c->inflight.data, (unsigned)c->inflight.len);
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write);
    if (rc < 0)
        die("write: %s", uv_strerror(rc));
    c->writing = 1;
}

static void on_write(uv_write_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        die("write to server: %s", uv_strerror(status));
    c->writing = 0;
    c->inflight.len = 0;
    conn_flush(c);
}

static void send_command(conn *c, int argc, const char **argv)
{
    resp_add_array_len(&c->out, argc);
    for (int i = 0; i < argc; i++)
        resp_add_bulk_cstr(&c->out, argv[i]);
    conn_flush(c);
}

/* ---- the Redisson lock protocol ---- */

static void send_lock(client *c)
{
    const char *argv[] = {c->use_eval ? "EVAL" : "EVALSHA", c->use_eval ? LOCK_TEXT : LOCK_SHA, "1",
                          c->lock->name, LEASE_MS, c->owner_field};
    c->state = ST_LOCKING;
    send_command(&c->cmd, 6, argv);
}

static void send_unlock(client *c)
{
    const char *argv[] = {c->use_eval ? "EVAL" : "EVALSHA", c->use_eval ? UNLOCK_TEXT : UNLOCK_SHA,
                          "3", c->lock->name, c->lock->channel, c->latch, "0", LEASE_MS,
                          c->owner_field, "PUBLISH", LATCH_TTL_MS};
    c->state = ST_UNLOCKING;
    send_command(&c->cmd, 11, argv);
}

static void send_sub(client *c, const char *verb)
{
    const char *argv[] = {verb, c->lock->channel};
    send_command(&c->sub, 2, argv);
}

static void on_timer(uv_timer_t *t);

static void arm(client *c, uint64_t ms)
{
    uv_timer_start(&c->timer, on_timer, ms, 0);
}

/* Start one RedissonLock.lock() call on a random lock. */
static void begin_lock(client *c)
{
    c->lock = &locks[next_rand(c) % (uint64_t)opt.nlocks];
    c->failed_once = 0;
    c->woken = 0;
    send_lock(c);
}

/* The server ran the release before this acquire, but the client may read
 * the holder's unlock reply after the waiter's acquire reply (the server
 * writes the message and that reply in separate syscalls): then the handoff
 * is counted as 0 us when the unlock reply comes ("reordered"). */
static void on_acquired(client *c, uint64_t now)
{
    lock_slot *l = c->lock;
    client *prev = l->holder;
    int early = prev && prev->state == ST_UNLOCKING && prev->lock == l;
    if (measuring(now)) {
        acquisitions++;
        if (!c->failed_once)
            barges += prev != NULL;
        else if (early)
            ;                   /* counted at prev's unlock reply */
        else if (l->released_at) {
            handoffs++;
            record_sample(now - l->released_at);
        } else
            unmatched++;        /* a waiter got a lock never seen released: a bug */
    }
    if (early)
        prev->taken_early = 1 + c->failed_once;
    l->holder = c;
    l->released_at = 0;
    last_progress_ns = now;
    if (c->subscribed) {
        send_sub(c, "UNSUBSCRIBE");
        c->subscribed = 0;
    }
    snprintf(c->latch, sizeof c->latch, "redisson_unlock_latch:{%s}:%016llx%016llx", l->name,
             (unsigned long long)next_rand(c), (unsigned long long)next_rand(c));
    c->state = ST_HOLDING;
    arm(c, pick(c, opt.hold_ms));
}

static void on_lock_taken(client *c, long long ttl)
{
    c->failed_once = 1;
    if (!c->subscribed) {
        c->subscribed = 1;
        subscribes++;
        c->state = ST_SUBSCRIBING;
        send_sub(c, "SUBSCRIBE");
        return;
    }
    if (c->woken) {             /* the release came while we asked */
        c->woken = 0;
        send_lock(c);
        return;
    }
    c->state = ST_WAITING;
    if (ttl >= 0)               /* Redisson also polls when the ttl runs out */
        arm(c, (uint64_t)ttl);
}

static int is_noscript(const resp_reply *r)
{
    return r->type == '-' && r->len >= 8 && memcmp(r->str, "NOSCRIPT", 8) == 0;
}

static void unexpected(client *c, const resp_reply *r)
{
    die("client %d in state %d: unexpected reply '%c' %.*s", c->id, (int)c->state, r->type,
        (int)(r->str ? r->len : 0), r->str ? r->str : "");
}

static void start_clients(void)
{
    uint64_t now = uv_hrtime();
    start_ns = last_progress_ns = now;
    measure_ns = now + (uint64_t)(opt.warmup * 1e9);
    end_ns = measure_ns + (uint64_t)(opt.duration * 1e9);
    for (int i = 0; i < opt.nclients; i++)
        begin_lock(&clients[i]);
}

/* Replies to start_setup(): the DEL of leftover locks, then (with preload)
 * the two SCRIPT LOADs, whose SHA1s must be Redisson's. */
static void on_setup_reply(client *c, const resp_reply *r)
{
    if (r->type == '-')
        die("setup command failed: %.*s", (int)r->len, r->str);
    if (opt.preload && setup_left <= 2) {
        const char *want = setup_left == 2 ? LOCK_SHA : UNLOCK_SHA;
        if (r->type != '$' || r->len != 40 || memcmp(r->str, want, 40) != 0)
            die("SCRIPT LOAD returned %.*s, want %s (script text differs from Redisson's)",
                (int)(r->str ? r->len : 0), r->str ? r->str : "?", want);
    }
    if (--setup_left == 0)
        start_clients();
}

static void on_released(client *c, uint64_t now)
{
    if (measuring(now)) {
        unlocks++;
        if (c->taken_early == 2) {
            handoffs++;
            reordered++;
            record_sample(0);
        }
    }
    if (!c->taken_early)
        c->lock->released_at = now;
    c->taken_early = 0;
}

static void on_cmd_reply(client *c, const resp_reply *r)
{
    uint64_t now = uv_hrtime();
    if (c->state == ST_SETUP) {
        on_setup_reply(c, r);
        return;
    }
    if (is_noscript(r) && !c->use_eval && (c->state == ST_LOCKING || c->state == ST_UNLOCKING)) {
        c->use_eval = 1;        /* Redisson falls back to the full text */
        if (c->state == ST_LOCKING)
            send_lock(c);
        else
            send_unlock(c);
        c->use_eval = 0;
        return;
    }
    switch (c->state) {
    case ST_LOCKING:
        if (r->type == '$' && r->n == -1)
            on_acquired(c, now);
        else if (r->type == ':')
            on_lock_taken(c, r->n);
        else
            unexpected(c, r);
        break;
    case ST_UNLOCKING:
        if (r->type != ':' || r->n != 1)
            unexpected(c, r);   /* 0 = still held, nil = not ours: both bugs here */
        on_released(c, now);
        {
            const char *argv[] = {"DEL", c->latch};
            c->state = ST_DEL_LATCH;
            send_command(&c->cmd, 2, argv);
        }
        break;
    case ST_DEL_LATCH:
        if (r->type != ':')
            unexpected(c, r);
        c->state = ST_IDLE;
        arm(c, pick(c, opt.idle_ms));
        break;
    default:
        unexpected(c, r);
    }
}

/* A push on the subscriber connection: subscribe/unsubscribe confirmations
 * and the release messages. */
static void on_sub_frame(client *c, const resp_reply *items, int n)
{
    if (n != 4 || items[0].type != '*' || items[1].type != '$')
        die("client %d: subscriber got a frame that is not a 3-element push", c->id);
    const resp_reply *kind = &items[1], *chan = &items[2];
    int ours = chan->type == '$' && chan->len == strlen(c->lock->channel) &&
               memcmp(chan->str, c->lock->channel, chan->len) == 0;
    if (kind->len == 9 && memcmp(kind->str, "subscribe", 9) == 0) {
        if (!ours)
            die("client %d: subscribe confirmation names another channel", c->id);
        if (c->state == ST_SUBSCRIBING)
            send_lock(c);
    } else if (kind->len == 7 && memcmp(kind->str, "message", 7) == 0) {
        if (!ours)
            return;             /* a lock we no longer wait for, before its UNSUBSCRIBE */
        if (c->state == ST_WAITING) {
            uv_timer_stop(&c->timer);
            send_lock(c);
        } else if (c->state == ST_LOCKING || c->state == ST_SUBSCRIBING) {
            c->woken = 1;
        }
    } else if (!(kind->len == 11 && memcmp(kind->str, "unsubscribe", 11) == 0)) {
        die("client %d: subscriber got '%.*s'", c->id, (int)kind->len, kind->str);
    }
}

static void on_timer(uv_timer_t *t)
{
    client *c = t->data;
    switch (c->state) {
    case ST_HOLDING: send_unlock(c); break;
    case ST_IDLE: begin_lock(c); break;
    case ST_WAITING: send_lock(c); break;
    default: die("client %d: timer in state %d", c->id, (int)c->state);
    }
}

/* ---- reading ---- */

/* One top-level reply with the (flat) elements of an aggregate; 0 if the
 * bytes in [*pos, end) do not hold it completely yet. */
static int read_frame(const char **pos, const char *end, resp_reply *items, int *n)
{
    const char *p = *pos;
    if (!resp_read_reply(&p, end, &items[0]))
        return 0;
    *n = 1;
    if (items[0].type == '*' || items[0].type == '>') {
        if (items[0].n < 0 || items[0].n >= MAX_FRAME_ITEMS)
            die("reply with %lld elements is not expected here", items[0].n);
        for (long long i = 0; i < items[0].n; i++)
            if (!resp_read_reply(&p, end, &items[(*n)++]))
                return 0;
    }
    *pos = p;
    return 1;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn *c = h->data;
    resp_buf_reserve(&c->in, 65536);
    *buf = uv_buf_init(c->in.data + c->in.len, (unsigned)(c->in.cap - c->in.len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = s->data;
    if (nread < 0)
        die("client %d %s connection: %s", c->owner->id, c->is_sub ? "subscriber" : "command",
            nread == UV_EOF ? "closed by the server" : uv_strerror((int)nread));
    c->in.len += (size_t)nread;
    const char *p = c->in.data, *end = c->in.data + c->in.len;
    resp_reply items[MAX_FRAME_ITEMS];
    int n;
    while (read_frame(&p, end, items, &n)) {
        if (c->is_sub)
            on_sub_frame(c->owner, items, n);
        else if (n != 1)
            unexpected(c->owner, &items[0]);
        else
            on_cmd_reply(c->owner, &items[0]);
    }
    resp_buf_consume(&c->in, (size_t)(p - c->in.data));
    if (c->in.len > MAX_PENDING_INPUT)
        die("%zu bytes from the server do not parse as a reply", c->in.len);
}

/* Locks left held by an earlier run would block every client for their
 * 30 s lease: delete them first. */
static void start_setup(void)
{
    client *c = &clients[0];
    c->state = ST_SETUP;
    for (int i = 0; i < opt.nlocks; i++) {
        const char *del[] = {"DEL", locks[i].name};
        send_command(&c->cmd, 2, del);
    }
    setup_left = opt.nlocks;
    if (opt.preload) {
        const char *lock[] = {"SCRIPT", "LOAD", LOCK_TEXT};
        const char *unlock[] = {"SCRIPT", "LOAD", UNLOCK_TEXT};
        send_command(&c->cmd, 3, lock);
        send_command(&c->cmd, 3, unlock);
        setup_left += 2;
    }
}

static void on_connect(uv_connect_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        die("connect to %s:%d: %s", opt.host, opt.port, uv_strerror(status));
    uv_tcp_nodelay(&c->tcp, 1);
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0)
        die("read_start: %s", uv_strerror(rc));
    if (++connected < 2 * opt.nclients)
        return;
    start_setup();
}

static void conn_open(conn *c, client *owner, int is_sub, const struct sockaddr *addr)
{
    c->owner = owner;
    c->is_sub = is_sub;
    resp_buf_init(&c->in);
    resp_buf_init(&c->out);
    resp_buf_init(&c->inflight);
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c->write_req.data = c->connect_req.data = c;
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, addr, on_connect);
    if (rc < 0)
        die("connect: %s", uv_strerror(rc));
}

/* ---- run and report ---- */

static void on_watchdog(uv_timer_t *t)
{
    uint64_t now = uv_hrtime();
    if (!start_ns) {
        if (now - launch_ns > STALL_NS)
            die("not connected and ready after 10 s");
        return;
    }
    if (now >= end_ns)
        uv_stop(loop);
    else if (now - last_progress_ns > STALL_NS)
        die("no lock acquired for 10 s: stalled");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double pct_us(double p)
{
    if (!nsamples)
        return -1;
    size_t i = (size_t)(p / 100.0 * (double)nsamples);
    return (double)samples[i < nsamples ? i : nsamples - 1] / 1000.0;
}

static void report(void)
{
    double secs = (double)(uv_hrtime() - measure_ns) / 1e9;
    qsort(samples, nsamples, sizeof *samples, cmp_u64);
    printf("handoff locks=%d clients=%d hold_ms=%llu-%llu idle_ms=%llu-%llu seconds=%.2f "
           "acquisitions=%llu acq_per_s=%.0f unlocks=%llu handoffs=%llu barges=%llu unmatched=%llu "
           "reordered=%llu subscribes=%llu p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f\n",
           opt.nlocks, opt.nclients, (unsigned long long)opt.hold_ms.lo,
           (unsigned long long)opt.hold_ms.hi, (unsigned long long)opt.idle_ms.lo,
           (unsigned long long)opt.idle_ms.hi, secs, (unsigned long long)acquisitions,
           (double)acquisitions / secs, (unsigned long long)unlocks, (unsigned long long)handoffs,
           (unsigned long long)barges, (unsigned long long)unmatched, (unsigned long long)reordered,
           (unsigned long long)subscribes, pct_us(50), pct_us(99), pct_us(99.9),
           nsamples ? (double)samples[nsamples - 1] / 1000.0 : -1.0);
}

static range parse_range(const char *s, const char *what)
{
    char *e;
    range r;
    errno = 0;
    r.lo = strtoull(s, &e, 10);
    r.hi = r.lo;
    if (*e == '-')
        r.hi = strtoull(e + 1, &e, 10);
    if (errno || *e || e == s || r.hi < r.lo)
        die("bad %s '%s' (want N or A-B, in ms)", what, s);
    return r;
}

static int parse_int(const char *s, const char *what, int min)
{
    char *e;
    long v = strtol(s, &e, 10);
    if (*e || e == s || v < min || v > 1000000)
        die("bad %s '%s'", what, s);
    return (int)v;
}

static void usage(void)
{
    fprintf(stderr, "usage: handoff --port P [--host H] [--locks K] [--clients N] [--hold-ms A[-B]]\n"
                    "               [--idle-ms A[-B]] [--duration S] [--warmup S] [--no-preload]\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"host", 1, 0, 'h'}, {"port", 1, 0, 'p'}, {"locks", 1, 0, 'k'}, {"clients", 1, 0, 'n'},
        {"hold-ms", 1, 0, 'H'}, {"idle-ms", 1, 0, 'I'}, {"duration", 1, 0, 'd'},
        {"warmup", 1, 0, 'w'}, {"no-preload", 0, 0, 'P'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'h': opt.host = optarg; break;
        case 'p': opt.port = parse_int(optarg, "--port", 1); break;
        case 'k': opt.nlocks = parse_int(optarg, "--locks", 1); break;
        case 'n': opt.nclients = parse_int(optarg, "--clients", 1); break;
        case 'H': opt.hold_ms = parse_range(optarg, "--hold-ms"); break;
        case 'I': opt.idle_ms = parse_range(optarg, "--idle-ms"); break;
        case 'd': opt.duration = atof(optarg); break;
        case 'w': opt.warmup = atof(optarg); break;
        case 'P': opt.preload = 0; break;
        default: usage();
        }
    }
    if (optind != argc || !opt.port || opt.duration <= 0 || opt.warmup < 0)
        usage();
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    loop = uv_default_loop();
    struct sockaddr_in addr;
    if (uv_ip4_addr(opt.host, opt.port, &addr) < 0)
        die("bad address %s", opt.host);
    locks = calloc((size_t)opt.nlocks, sizeof *locks);
    clients = calloc((size_t)opt.nclients, sizeof *clients);
    if (!locks || !clients)
        die("out of memory");
    for (int i = 0; i < opt.nlocks; i++) {
        snprintf(locks[i].name, sizeof locks[i].name, "lock:handoff:%d", i);
        snprintf(locks[i].channel, sizeof locks[i].channel, "redisson_lock__channel:{%s}",
                 locks[i].name);
    }
    uint64_t seed = uv_hrtime() | 1;
    for (int i = 0; i < opt.nclients; i++) {
        client *c = &clients[i];
        c->id = i;
        c->rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xD1B54A32D192ED03ull + 1;
        uint64_t a = next_rand(c), b = next_rand(c);
        snprintf(c->owner_field, sizeof c->owner_field, "%08x-%04x-4%03x-a%03x-%012llx:1",
                 (unsigned)a, (unsigned)(a >> 32) & 0xffff, (unsigned)(a >> 48) & 0xfff,
                 (unsigned)b & 0xfff, (unsigned long long)(b >> 16) & 0xffffffffffffull);
        uv_timer_init(loop, &c->timer);
        c->timer.data = c;
        conn_open(&c->cmd, c, 0, (const struct sockaddr *)&addr);
        conn_open(&c->sub, c, 1, (const struct sockaddr *)&addr);
    }
    uv_timer_init(loop, &watchdog);
    launch_ns = uv_hrtime();
    uv_timer_start(&watchdog, on_watchdog, 100, 100);
    uv_run(loop, UV_RUN_DEFAULT);
    report();
    return 0;
}
