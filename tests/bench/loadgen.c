/* loadgen.c - a lean pipelined load generator for scripts/bench: where
 * redis-benchmark's own CPU (a reply object per reply, a latency histogram)
 * caps the rate it can drive on one core below what the servers can do.
 *
 * loadgen -p PORT [-h HOST] [-c CLIENTS] [-P PIPELINE] [-n REQUESTS]
 *         [-r KEYSPACE] [--tls --cacert F [--cert F --key F]] -- COMMAND ARG...
 * --tls (a build with OpenSSL): every connection's handshake is done before
 * the clock starts, then requests and replies go through OpenSSL.
 * Each client sends PIPELINE requests and waits for all their replies, as
 * redis-benchmark -P does; __rand_int__ in an argument becomes a random
 * 12-digit number below KEYSPACE, drawn once per request from a pool of
 * prepared requests. Prints "rps N errors E" and exits 1 on an error reply
 * or a broken connection, so a misconfigured run cannot pass as a rate. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef LOADGEN_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#else
typedef struct ssl_st SSL;
#endif

#define POOL 65536             /* prepared requests (distinct random keys) */
#define READ_BUF (1 << 20)
#define MAX_DEPTH 8

typedef struct conn {
    int fd;
    SSL *ssl;                  /* NULL: plain TCP */
    size_t due;                /* replies still owed for the batch sent */
    size_t sent_off, batch_len; /* unsent part of the batch being written */
    char *batch;
    char *in;
    size_t in_len;
} conn;

static long long sent_total, done_total, errors, target;
static char *pool[POOL];
static size_t pool_len[POOL];
static unsigned pool_next;

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static size_t put_bulk(char *p, const char *s, size_t n)
{
    size_t len = (size_t)sprintf(p, "$%zu\r\n", n);
    memcpy(p + len, s, n);
    len += n;
    p[len++] = '\r';
    p[len++] = '\n';
    return len;
}

/* One request as RESP, __rand_int__ replaced by a fresh random number. */
static void prepare(int argc, char **argv, long long keyspace, unsigned i)
{
    size_t cap = 32;
    for (int a = 0; a < argc; a++) cap += strlen(argv[a]) + 64;
    char *p = pool[i] = malloc(cap);
    if (!p) die("malloc");
    size_t len = (size_t)sprintf(p, "*%d\r\n", argc);
    for (int a = 0; a < argc; a++) {
        char arg[1024];
        const char *at = strstr(argv[a], "__rand_int__");
        if (!at || strlen(argv[a]) + 12 >= sizeof arg) {
            len += put_bulk(p + len, argv[a], strlen(argv[a]));
            continue;
        }
        long long r = (long long)(((unsigned long long)random() << 31 ^ (unsigned long long)random()) %
                                  (unsigned long long)keyspace);
        int n = snprintf(arg, sizeof arg, "%.*s%012lld%s", (int)(at - argv[a]), argv[a], r, at + 12);
        len += put_bulk(p + len, arg, (size_t)n);
    }
    pool_len[i] = len;
}

/* Length of the complete reply at [p, end), 0 when it is not all there,
 * -1 when it is not RESP. */
static long long reply_len(const char *p, const char *end, int depth)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return 0;
    long long head = nl + 1 - p;
    if (*p == '+' || *p == '-' || *p == ':' || *p == '_' || *p == '#' || *p == ',') return head;
    long long n = strtoll(p + 1, NULL, 10);
    if (*p == '$') {
        if (n < 0) return head;
        return end - (nl + 1) >= n + 2 ? head + n + 2 : 0;
    }
    if (*p != '*' && *p != '%') return -1;
    if (n <= 0) return head;
    if (depth == MAX_DEPTH) return -1;
    if (*p == '%') n *= 2;
    long long total = head;
    for (long long i = 0; i < n; i++) {
        long long e = reply_len(p + total, end, depth + 1);
        if (e <= 0) return e;
        total += e;
    }
    return total;
}

/* The next batch: up to pipeline requests, as many as are still to send. */
static void next_batch(conn *c, size_t pipeline)
{
    c->batch_len = c->sent_off = 0;
    c->due = 0;
    while (c->due < pipeline && sent_total < target) {
        memcpy(c->batch + c->batch_len, pool[pool_next], pool_len[pool_next]);
        c->batch_len += pool_len[pool_next];
        pool_next = (pool_next + 1) % POOL;
        c->due++;
        sent_total++;
    }
}

#ifdef LOADGEN_TLS
/* An SSL_read / SSL_write result as read(2) / write(2) would give it. */
static ssize_t tls_result(conn *c, int r)
{
    if (r > 0) return r;
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    errno = EPIPE;
    return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}
#endif

static ssize_t conn_read(conn *c, char *p, size_t n)
{
#ifdef LOADGEN_TLS
    if (c->ssl) return tls_result(c, SSL_read(c->ssl, p, (int)(n > INT32_MAX ? INT32_MAX : n)));
#endif
    return read(c->fd, p, n);
}

static ssize_t conn_write(conn *c, const char *p, size_t n)
{
#ifdef LOADGEN_TLS
    if (c->ssl) return tls_result(c, SSL_write(c->ssl, p, (int)(n > INT32_MAX ? INT32_MAX : n)));
#endif
    return write(c->fd, p, n);
}

static int flush_batch(conn *c)
{
    while (c->sent_off < c->batch_len) {
        ssize_t w = conn_write(c, c->batch + c->sent_off, c->batch_len - c->sent_off);
        if (w < 0 && errno == EAGAIN) return 0;
        if (w <= 0) return -1;
        c->sent_off += (size_t)w;
    }
    return 0;
}

/* Replies read and counted; -1 on a broken connection or bad reply. */
static int on_readable(conn *c, size_t pipeline)
{
    for (;;) {
        ssize_t r = conn_read(c, c->in + c->in_len, READ_BUF - c->in_len);
        if (r < 0 && errno == EAGAIN) return 0;
        if (r <= 0) return -1;
        c->in_len += (size_t)r;
        size_t off = 0;
        while (off < c->in_len) {
            long long n = reply_len(c->in + off, c->in + c->in_len, 0);
            if (n < 0) return -1;
            if (n == 0) break;
            if (c->in[off] == '-') errors++;
            off += (size_t)n;
            done_total++;
            if (c->due == 0) return -1;   /* a reply nobody asked for */
            if (--c->due == 0 && sent_total < target) {
                next_batch(c, pipeline);
                if (flush_batch(c) != 0) return -1;
            }
        }
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
        if (c->in_len == READ_BUF) return -1;   /* a reply bigger than the buffer */
    }
}

/* A connected socket, its TLS handshake done when ctx is given; then
 * non-blocking. */
static void connect_to(conn *c, const char *host, const char *port, void *ctx)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0) die("getaddrinfo");
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) die("connect");
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->ssl = NULL;
#ifdef LOADGEN_TLS
    if (ctx) {
        c->ssl = SSL_new(ctx);
        if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1 || SSL_connect(c->ssl) != 1) {
            ERR_print_errors_fp(stderr);
            fprintf(stderr, "loadgen: TLS handshake failed\n");
            exit(2);
        }
    }
#else
    (void)ctx;
#endif
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The client context for --tls: the CA to verify the server with, and the
 * certificate to show (mutual TLS), as redis-benchmark's flags name them. */
static void *tls_context(const char *cacert, const char *cert, const char *key)
{
#ifdef LOADGEN_TLS
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) die("SSL_CTX_new");
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if ((cacert && SSL_CTX_load_verify_locations(ctx, cacert, NULL) != 1) ||
        (cert && SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) ||
        (key && SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "loadgen: cannot load the TLS files\n");
        exit(2);
    }
    return ctx;
#else
    (void)cacert, (void)cert, (void)key;
    fprintf(stderr, "loadgen: built without OpenSSL: no --tls\n");
    exit(2);
#endif
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *port = NULL;
    int clients = 50;
    size_t pipeline = 1;
    long long keyspace = 1000000;
    target = 100000;
    int opt, tls = 0;
    const char *cacert = NULL, *cert = NULL, *key = NULL;
    static const struct option longs[] = {{"tls", no_argument, NULL, 'T'}, {"cacert", required_argument, NULL, 'A'},
                                          {"cert", required_argument, NULL, 'C'}, {"key", required_argument, NULL, 'K'},
                                          {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "h:p:c:P:n:r:", longs, NULL)) != -1) {
        if (opt == 'T') tls = 1;
        else if (opt == 'A') cacert = optarg;
        else if (opt == 'C') cert = optarg;
        else if (opt == 'K') key = optarg;
        else if (opt == 'h') host = optarg;
        else if (opt == 'p') port = optarg;
        else if (opt == 'c') clients = atoi(optarg);
        else if (opt == 'P') pipeline = (size_t)atoi(optarg);
        else if (opt == 'n') target = atoll(optarg);
        else if (opt == 'r') keyspace = atoll(optarg);
        else return 2;
    }
    if (!port || optind >= argc || clients < 1 || pipeline < 1 || keyspace < 1 || target < 1) {
        fprintf(stderr, "usage: loadgen -p PORT [-h HOST] [-c N] [-P N] [-n N] [-r N] "
                        "[--tls --cacert F [--cert F --key F]] -- COMMAND ARG...\n");
        return 2;
    }
    srandom(1);
    for (unsigned i = 0; i < POOL; i++) prepare(argc - optind, argv + optind, keyspace, i);
    size_t widest = 0;
    for (unsigned i = 0; i < POOL; i++) widest = pool_len[i] > widest ? pool_len[i] : widest;

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    conn *cs = calloc((size_t)clients, sizeof *cs);
    if (!cs) die("calloc");
    void *ctx = tls ? tls_context(cacert, cert, key) : NULL;
    for (int i = 0; i < clients; i++) {
        conn *c = &cs[i];
        connect_to(c, host, port, ctx);
        c->batch = malloc(widest * pipeline);
        c->in = malloc(READ_BUF);
        if (!c->batch || !c->in) die("malloc");
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < clients; i++) {
        conn *c = &cs[i];
        next_batch(c, pipeline);
        if (flush_batch(c) != 0) die("write");
    }
    struct epoll_event evs[256];
    while (done_total < target) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) {
            fprintf(stderr, "loadgen: no reply for 10 s (%lld of %lld done)\n", done_total, target);
            return 1;
        }
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if ((evs[i].events & EPOLLOUT) && flush_batch(c) != 0) die("write");
            if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && on_readable(c, pipeline) != 0) {
                fprintf(stderr, "loadgen: connection broken or a reply not RESP\n");
                return 1;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("rps %.0f errors %lld\n", (double)done_total / s, errors);
    return errors ? 1 : 0;
}
