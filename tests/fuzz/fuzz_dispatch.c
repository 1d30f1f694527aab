/* fuzz_dispatch.c - libFuzzer target for the whole command path: the input
 * is a client's byte stream (client captures are seeds), fed in chunks to a
 * detached client of a server that never listens, with a frozen clock the
 * harness moves. After every chunk the replies must be well-formed RESP and
 * the keyspace must hold its invariants. */
#include <string.h>

#include "fuzz.h"
#include "server.h"

#define MAX_DEPTH 64

static size_t reply_end(const char *b, size_t len, size_t pos, int depth);

/* The number on a type line ("$12\r\n"); 0 if the line is malformed. */
static size_t read_len(const char *b, size_t len, size_t pos, long long *n)
{
    const char *crlf = memmem(b + pos, len - pos, "\r\n", 2);
    long long v = 0;
    int neg = pos < len && b[pos] == '-';
    size_t i = pos + (size_t)neg;
    if (!crlf || i == (size_t)(crlf - b)) return 0;
    for (; i < (size_t)(crlf - b); i++) {
        if (b[i] < '0' || b[i] > '9' || v > 100000000) return 0;
        v = v * 10 + (b[i] - '0');
    }
    *n = neg ? -v : v;
    return (size_t)(crlf - b) + 2;
}

static size_t aggregate_end(const char *b, size_t len, size_t pos, long long n, int depth)
{
    for (long long i = 0; i < n && pos; i++) pos = reply_end(b, len, pos, depth + 1);
    return pos;
}

/* Offset just past the reply at pos, or 0 if it is malformed or cut. */
static size_t reply_end(const char *b, size_t len, size_t pos, int depth)
{
    long long n;
    size_t body;
    if (pos >= len || depth > MAX_DEPTH) return 0;
    char type = b[pos++];
    if (strchr("+-:_,#(", type)) {
        const char *crlf = memmem(b + pos, len - pos, "\r\n", 2);
        return crlf && !memchr(b + pos, '\n', (size_t)(crlf - b) - pos) ? (size_t)(crlf - b) + 2 : 0;
    }
    if (!(body = read_len(b, len, pos, &n)) || n < -1) return 0;
    if (n == -1) return type == '$' || type == '*' ? body : 0;
    switch (type) {
    case '$': case '=': case '!':
        if (len - body < (size_t)n + 2 || memcmp(b + body + n, "\r\n", 2) != 0) return 0;
        return body + (size_t)n + 2;
    case '*': case '~': case '>':
        return aggregate_end(b, len, body, n, depth);
    case '%':
        return aggregate_end(b, len, body, 2 * n, depth);
    case '|':
        body = aggregate_end(b, len, body, 2 * n, depth);
        return body ? reply_end(b, len, body, depth + 1) : 0;
    }
    return 0;
}

/* Every command's reply is written whole, so between chunks the output is
 * a sequence of complete replies; then it is dropped. */
static void check_and_drop_replies(client *c)
{
    size_t pos = 0;
    while (pos < c->out.len) {
        pos = reply_end(c->out.data, c->out.len, pos, 0);
        FUZZ_CHECK(pos != 0);
    }
    c->out.len = 0;
}

/* Time passes between chunks now and then; the expiry timer fires. */
static void maybe_tick(server *s, fuzz_rng *r)
{
    uint64_t x = fuzz_rng_next(r);
    if (x & 7) return;
    s->frozen_now_ms += (x >> 8) % 5000;
    for (int i = 0; i < s->ndbs; i++)
        if (server_db_if_used(s, i)) store_expire_due(server_db_if_used(s, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static server s;
    fuzz_rng r;
    size_t pos = 0;
    fuzz_rng_seed(&r, data, size);
    fuzz_server_start(&s, NULL, NULL);
    client *c = client_new_detached(&s);
    while (pos < size && !s.shutting_down) {
        size_t n = fuzz_chunk_len(&r, size - pos);
        client_feed(c, (const char *)data + pos, n);
        pos += n;
        FUZZ_CHECK(c->qpos <= c->query.len);
        check_and_drop_replies(c);
        /* A connection would be gone now; the stream goes on as a new one. */
        if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_AFTER_REPLY)) {
            client_free_detached(c);
            c = client_new_detached(&s);
        }
        maybe_tick(&s, &r);
        for (int i = 0; i < s.ndbs; i++)
            if (server_db_if_used(&s, i)) fuzz_check_store(server_db_if_used(&s, i));
    }
    client_free_detached(c);
    fuzz_server_stop(&s);
    return 0;
}
