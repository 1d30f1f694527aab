/* queue.c - producer/consumer load generator: N consumers parked in
 * BLPOP on K queues, P producers LPUSHing stamped messages; reports
 * messages/s and handoff latency p50/p99/p999 from one monotonic clock.
 *
 * Each consumer connection loops BLPOP q<i % K> 0. Each producer keeps one
 * LPUSH in flight and at most N/P of its messages not yet consumed, so a
 * push normally finds a consumer parked (the case BLPOP is for) rather
 * than a backlog. A message is "<producer> <send ns>"; handoff latency is
 * the consumer's BLPOP reply minus the LPUSH send time (the LPUSH reply and
 * the consumer's reply leave the server in the same flush, so the LPUSH
 * reply is no finer a start).
 *
 *   queue --port P [--consumers N] [--producers P] [--queues K]
 *         [--duration S] [--warmup S]
 * Prints one line of key=value pairs; exits non-zero on an error or stall. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "resp.h"

#define STALL_NS (10ull * 1000000000ull)

typedef struct peer {
    int fd;
    int producer;           /* else a consumer */
    int id;
    resp_buf in, out;
    long long outstanding;  /* producers: pushed, not yet consumed */
    int pushing;            /* producers: an LPUSH reply is due */
} peer;

static struct {
    int port, consumers, producers, queues;
    double duration, warmup;
} opt = {0, 50, 4, 1, 10.0, 1.0};

static peer *peers;
static int npeers;
static uint64_t *samples;
static size_t nsamples, samples_cap;
static uint64_t consumed_total, consumed_measured, measure_ns, end_ns;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("queue: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int connect_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) die("connect: %s", strerror(errno));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void flush_out(peer *p)
{
    size_t off = 0;
    while (off < p->out.len) {
        ssize_t n = write(p->fd, p->out.data + off, p->out.len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("write: %s", strerror(errno));
        off += (size_t)n;
    }
    p->out.len = 0;
}

static void send_blpop(peer *c)
{
    char q[32];
    snprintf(q, sizeof q, "q%d", c->id % opt.queues);
    resp_add_array_len(&c->out, 3);
    resp_add_bulk_cstr(&c->out, "BLPOP");
    resp_add_bulk_cstr(&c->out, q);
    resp_add_bulk_cstr(&c->out, "0");
    flush_out(c);
}

static long long credit(void) { return opt.consumers / opt.producers > 0 ? opt.consumers / opt.producers : 1; }

static void maybe_push(peer *p)
{
    static uint64_t next_queue;
    char q[32], msg[64];
    if (p->pushing || p->outstanding >= credit() || now_ns() >= end_ns) return;
    snprintf(q, sizeof q, "q%d", (int)(next_queue++ % (uint64_t)opt.queues));
    snprintf(msg, sizeof msg, "%d %llu", p->id, (unsigned long long)now_ns());
    resp_add_array_len(&p->out, 3);
    resp_add_bulk_cstr(&p->out, "LPUSH");
    resp_add_bulk_cstr(&p->out, q);
    resp_add_bulk_cstr(&p->out, msg);
    flush_out(p);
    p->pushing = 1;
    p->outstanding++;
}

static void record(uint64_t ns)
{
    if (nsamples == samples_cap) {
        samples_cap = samples_cap ? samples_cap * 2 : 1 << 16;
        samples = realloc(samples, samples_cap * sizeof *samples);
        if (!samples) die("out of memory");
    }
    samples[nsamples++] = ns;
}

/* One complete reply for p at *pos; 0 when more bytes are needed. */
static int on_reply(peer *p, const char **pos, const char *end)
{
    resp_reply r[3];
    const char *at = *pos;
    if (!resp_read_reply(&at, end, &r[0])) return 0;
    if (p->producer) {
        if (r[0].type != ':') die("LPUSH answered %c", r[0].type);
        p->pushing = 0;
        *pos = at;
        maybe_push(p);
        return 1;
    }
    if (r[0].type != '*' || r[0].n != 2) die("BLPOP answered %c %lld %.*s", r[0].type, r[0].n, (int)r[0].len, r[0].str ? r[0].str : "");
    if (!resp_read_reply(&at, end, &r[1]) || !resp_read_reply(&at, end, &r[2])) return 0;
    *pos = at;
    uint64_t t = now_ns();
    char msg[64];
    size_t len = r[2].len < sizeof msg - 1 ? r[2].len : sizeof msg - 1;
    memcpy(msg, r[2].str, len);
    msg[len] = '\0';
    int prod;
    unsigned long long sent;
    if (sscanf(msg, "%d %llu", &prod, &sent) != 2 || prod < 0 || prod >= opt.producers)
        die("bad message %s", msg);
    consumed_total++;
    if (t >= measure_ns && t < end_ns) {
        consumed_measured++;
        record(t - sent);
    }
    peer *pp = &peers[opt.consumers + prod];
    pp->outstanding--;
    maybe_push(pp);
    send_blpop(p);
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct_us(double p)
{
    if (!nsamples) return 0;
    size_t i = (size_t)(nsamples * p / 100.0);
    return samples[i < nsamples ? i : nsamples - 1] / 1000.0;
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        {"port", 1, 0, 'p'}, {"consumers", 1, 0, 'c'}, {"producers", 1, 0, 'P'}, {"queues", 1, 0, 'q'},
        {"duration", 1, 0, 'd'}, {"warmup", 1, 0, 'w'}, {0, 0, 0, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", longs, NULL)) != -1;) {
        switch (ch) {
        case 'p': opt.port = atoi(optarg); break;
        case 'c': opt.consumers = atoi(optarg); break;
        case 'P': opt.producers = atoi(optarg); break;
        case 'q': opt.queues = atoi(optarg); break;
        case 'd': opt.duration = atof(optarg); break;
        case 'w': opt.warmup = atof(optarg); break;
        default: die("usage: queue --port P [--consumers N] [--producers P] [--queues K] [--duration S] [--warmup S]");
        }
    }
    if (!opt.port || opt.consumers < 1 || opt.producers < 1 || opt.queues < 1) die("bad arguments");
    npeers = opt.consumers + opt.producers;
    peers = calloc((size_t)npeers, sizeof *peers);
    struct pollfd *pfd = calloc((size_t)npeers, sizeof *pfd);
    if (!peers || !pfd) die("out of memory");
    for (int i = 0; i < npeers; i++) {
        peer *p = &peers[i];
        p->producer = i >= opt.consumers;
        p->id = p->producer ? i - opt.consumers : i;
        p->fd = connect_server();
        pfd[i] = (struct pollfd){.fd = p->fd, .events = POLLIN};
    }
    uint64_t start = now_ns();
    measure_ns = start + (uint64_t)(opt.warmup * 1e9);
    end_ns = measure_ns + (uint64_t)(opt.duration * 1e9);
    for (int i = 0; i < opt.consumers; i++) send_blpop(&peers[i]);
    usleep(100000);   /* the consumers park before the first push */
    for (int i = opt.consumers; i < npeers; i++) maybe_push(&peers[i]);
    uint64_t last = consumed_total, last_ns = now_ns();
    for (;;) {
        int n = poll(pfd, (nfds_t)npeers, 100);
        if (n < 0 && errno != EINTR) die("poll: %s", strerror(errno));
        for (int i = 0; n > 0 && i < npeers; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            peer *p = &peers[i];
            resp_buf_reserve(&p->in, 65536);
            ssize_t got = read(p->fd, p->in.data + p->in.len, p->in.cap - p->in.len);
            if (got <= 0) die("read: %s", got ? strerror(errno) : "closed by the server");
            p->in.len += (size_t)got;
            const char *pos = p->in.data, *end = p->in.data + p->in.len;
            while (pos < end && on_reply(p, &pos, end)) {}
            size_t left = (size_t)(end - pos);
            memmove(p->in.data, pos, left);
            p->in.len = left;
        }
        uint64_t t = now_ns();
        int busy = 0;
        for (int i = opt.consumers; i < npeers; i++) busy |= peers[i].outstanding > 0 || peers[i].pushing;
        if (t >= end_ns && !busy) break;
        if (consumed_total != last) {
            last = consumed_total;
            last_ns = t;
        } else if (t - last_ns > STALL_NS) {
            die("stalled: %llu consumed", (unsigned long long)consumed_total);
        }
    }
    qsort(samples, nsamples, sizeof *samples, cmp_u64);
    printf("queue consumers=%d producers=%d queues=%d messages=%llu msgs_per_s=%.0f p50_us=%.1f p99_us=%.1f "
           "p999_us=%.1f\n",
           opt.consumers, opt.producers, opt.queues, (unsigned long long)consumed_measured,
           consumed_measured / opt.duration, pct_us(50), pct_us(99), pct_us(99.9));
    return 0;
}
