/* migrate.c - MIGRATE: keys sent to another server as RESTORE commands
 * over a blocking connection with a timeout, and deleted here once it
 * acknowledged them, as Redis's migrateCommand does. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "mem.h"
#include "persist/persist.h"

/* Redis blocks its event loop for MIGRATE too: the wait is bounded by the
 * caller's timeout at every step. Each call opens its own connection
 * (Redis caches one per target for ten seconds; only the extra SELECT
 * tells them apart), so INFO's migrate_cached_sockets stays 0. */

typedef struct migrate_opts {
    int copy, replace;
    const resp_slice *user, *pass;
    int first_key, nkeys;
    long long dbid, timeout_ms;
} migrate_opts;

static int parse_options(client *c, migrate_opts *o)
{
    o->first_key = 3, o->nkeys = 1;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "copy")) {
            o->copy = 1;
        } else if (arg_is(&c->argv[j], "replace")) {
            o->replace = 1;
        } else if (arg_is(&c->argv[j], "auth") && more >= 1) {
            o->pass = &c->argv[++j];
        } else if (arg_is(&c->argv[j], "auth2") && more >= 2) {
            o->user = &c->argv[++j];
            o->pass = &c->argv[++j];
        } else if (arg_is(&c->argv[j], "keys")) {
            if (c->argv[3].len != 0) {
                reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return 0;
            }
            o->first_key = j + 1;
            o->nkeys = c->argc - j - 1;
            break;
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    if (!arg_ll_or_reply(c, &c->argv[5], &o->timeout_ms) || !arg_ll_or_reply(c, &c->argv[4], &o->dbid)) return 0;
    if (o->timeout_ms <= 0) o->timeout_ms = 1000;
    return 1;
}

static int wait_fd(int fd, short events, long long timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = events};
    int rc;
    do rc = poll(&p, 1, (int)timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0) errno = ETIMEDOUT;
    return rc > 0;
}

/* A connected non-blocking socket, or -1. */
static int connect_target(const resp_slice *host, const resp_slice *port, long long timeout_ms)
{
    char h[256], p[32];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    if (host->len >= sizeof(h) || port->len >= sizeof(p)) return -1;
    memcpy(h, host->ptr, host->len), h[host->len] = 0;
    memcpy(p, port->ptr, port->len), p[port->len] = 0;
    if (getaddrinfo(h, p, &hints, &res) != 0) return -1;
    int fd = -1;
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        /* Writable counts as connected, refused or not, as in Redis: a
         * refusal then shows as an error writing to the target. */
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
            (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, timeout_ms))) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static int write_all(int fd, const char *p, size_t len, long long timeout_ms)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n > 0) {
            p += n, len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            return 0;
        } else if (!wait_fd(fd, POLLOUT, timeout_ms)) {
            return 0;
        }
    }
    return 1;
}

/* syncReadLine: one reply line, its CRLF dropped, cut to the buffer. */
static int read_line(int fd, char *buf, size_t size, long long timeout_ms)
{
    size_t n = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r == 0) return 0;
        if (r < 0) {
            if ((errno != EAGAIN && errno != EINTR) || !wait_fd(fd, POLLIN, timeout_ms)) return 0;
            continue;
        }
        if (ch == '\n') break;
        if (n + 1 < size) buf[n++] = ch;
    }
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = 0;
    return 1;
}

static void add_command(resp_buf *b, int argc, const resp_slice *argv)
{
    resp_add_array_len(b, argc);
    for (int i = 0; i < argc; i++) resp_add_bulk(b, argv[i].ptr, argv[i].len);
}

static resp_slice slice_of(const char *s) { return (resp_slice){s, strlen(s)}; }

/* AUTH, SELECT and one RESTORE per key that is still there; the number
 * of RESTOREs. */
static int build_request(client *c, const migrate_opts *o, store_key **keys, const resp_slice **names, int n,
                         resp_buf *req)
{
    resp_slice argv[5];
    char num[2][24];
    if (o->pass) {
        int i = 0;
        argv[i++] = slice_of("AUTH");
        if (o->user) argv[i++] = *o->user;
        argv[i++] = *o->pass;
        add_command(req, i, argv);
    }
    snprintf(num[0], sizeof(num[0]), "%lld", o->dbid);
    argv[0] = slice_of("SELECT"), argv[1] = slice_of(num[0]);
    add_command(req, 2, argv);
    persist_opts po = rdb_opts(c->srv);
    int sent = 0;
    for (int i = 0; i < n; i++) {
        long long ttl = 0;
        int64_t deadline = store_key_deadline(keys[i]);
        if (deadline != STORE_NO_DEADLINE) {
            ttl = deadline - (int64_t)server_now_ms(c->srv);
            if (ttl < 0) continue;
            if (ttl < 1) ttl = 1;
        }
        persist_buf payload = {0};
        persist_dump(keys[i], &po, &payload);
        snprintf(num[1], sizeof(num[1]), "%lld", ttl);
        argv[0] = slice_of("RESTORE"), argv[1] = *names[i], argv[2] = slice_of(num[1]);
        argv[3] = (resp_slice){(const char *)payload.p, payload.len};
        argv[4] = slice_of("REPLACE");
        add_command(req, o->replace ? 5 : 4, argv);
        persist_buf_free(&payload);
        names[sent++] = names[i];
    }
    return sent;
}

/* Sends the request and reads the replies: 1 when every RESTORE was
 * acknowledged (keys deleted unless COPY), 0 after the error reply. */
static int transfer(client *c, const migrate_opts *o, const resp_buf *req, const resp_slice **names, int n)
{
    char auth[1024], sel[1024], line[1024];
    int fd = connect_target(&c->argv[1], &c->argv[2], o->timeout_ms);
    if (fd < 0) {
        reply_error(c, "IOERR error or timeout connecting to the client");
        return 0;
    }
    int ok = write_all(fd, req->data, req->len, o->timeout_ms);
    const char *io = ok ? "reading" : "writing";
    ok = ok && (!o->pass || read_line(fd, auth, sizeof(auth), o->timeout_ms)) &&
         read_line(fd, sel, sizeof(sel), o->timeout_ms);
    int failed = 0, i;
    store_key *moved;
    for (i = 0; ok && i < n; i++) {
        if (!read_line(fd, line, sizeof(line), o->timeout_ms)) break;
        const char *err = o->pass && auth[0] == '-' ? auth : sel[0] == '-' ? sel : line[0] == '-' ? line : NULL;
        if (err) {
            if (!failed) reply_errorf(c, "ERR Target instance replied with error: %s", err + 1);
            failed = 1;
        } else if (!o->copy && (moved = store_lookup(client_db(c), names[i]->ptr, names[i]->len))) {
            store_release_key(client_db(c), moved, STORE_RELEASE_REPLACED);   /* Redis's dbDelete */
            db_notify(c, STORE_EV_GENERIC, "del", names[i]);
        }
    }
    close(fd);
    if (failed) return 0;
    if (!ok || i < n) {
        reply_errorf(c, "IOERR error or timeout %s to target instance", io);
        return 0;
    }
    reply_ok(c);
    return 1;
}

void cmd_migrate(client *c)
{
    migrate_opts o = {0};
    if (!parse_options(c, &o)) return;
    store_key **keys = mem_alloc(sizeof(*keys) * (size_t)o.nkeys);
    const resp_slice **names = mem_alloc(sizeof(*names) * (size_t)o.nkeys);
    int n = 0;
    for (int j = 0; j < o.nkeys; j++) {
        const resp_slice *name = &c->argv[o.first_key + j];
        if ((keys[n] = db_lookup_read(c, name))) names[n++] = name;
    }
    if (n == 0) {
        reply_status(c, "NOKEY");
    } else {
        resp_buf req;
        resp_buf_init(&req);
        n = build_request(c, &o, keys, names, n, &req);
        transfer(c, &o, &req, names, n);
        resp_buf_free(&req);
    }
    free(keys);
    free(names);
}
