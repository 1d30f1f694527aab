/* tls.h - TLS as Redis 7.0 serves it (tls-port, tls-* parameters): the
 * server's OpenSSL context, and each TLS client's session, which owns no
 * socket: net.c hands it the bytes it read and sends what it encrypted. */
#ifndef LATCHD_TLS_H
#define LATCHD_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "resp.h"

struct server;
struct client;
typedef struct tls_conn tls_conn;

/* 1 if this build has OpenSSL (LATCHD_TLS), else 0: tls-port is refused. */
int tls_built_in(void);

/* Redis's tlsConfigure: a new context from s->cfg's tls-* parameters,
 * which replaces the old one only if it could be made in full (sessions
 * already open keep theirs). 0 ok; -1 logged with Redis's lines, the old
 * context kept. Called at start when tls-port is set, and on CONFIG SET
 * of any tls-* parameter. */
int tls_configure(struct server *s);
/* 1 once a context exists. */
int tls_configured(const struct server *s);
/* Frees the context and the handshake wheel (server_close). */
void tls_free(struct server *s);

/* A session for accepted client c, tls-auth-clients as now; NULL (logged)
 * if OpenSSL refused. Its handshake must end within
 * tls-handshake-timeout ms or c is closed (tls_expire_due). */
tls_conn *tls_conn_new(struct server *s, struct client *c);
void tls_conn_free(struct server *s, tls_conn *t);

/* Bytes read from the socket, [p, p+n): borrowed until the next call
 * (tls_conn_input(t, NULL, 0) drops what tls_conn_read left). */
void tls_conn_input(tls_conn *t, const char *p, size_t n);
/* The handshake, then decrypted bytes into [dst, dst+cap): > 0 bytes
 * read; TLS_WANT_INPUT when the input is used up (a record split
 * anywhere waits inside OpenSSL for the rest); TLS_CLOSED on the peer's
 * close_notify; TLS_ERROR with tls_conn_error() set. */
enum { TLS_WANT_INPUT = 0, TLS_CLOSED = -1, TLS_ERROR = -2 };
long tls_conn_read(tls_conn *t, char *dst, size_t cap);
/* Encrypt [p, p+n) to the output: 0, or TLS_ERROR. */
int tls_conn_write(tls_conn *t, const char *p, size_t n);
/* A close_notify to the output (best effort). */
void tls_conn_shutdown(tls_conn *t);
/* Give the session's record buffers (16 KB each way, which OpenSSL
 * allocates as it needs them) back, for a client that has gone quiet: 1
 * if it holds none now, 0 if a record is still in them. */
int tls_conn_release_buffers(tls_conn *t);
/* The encrypted bytes waiting to be sent (the handshake's too); the
 * caller consumes what it sent. */
resp_buf *tls_conn_output(tls_conn *t);
/* The handshake is done: application data flows. */
int tls_conn_established(const tls_conn *t);
/* The last error, as Redis logs it (OpenSSL's error string). */
const char *tls_conn_error(const tls_conn *t);

/* Handshakes past their deadline: their clients are logged and closed.
 * tls_next_due is when the next one is (UINT64_MAX: none). */
void tls_expire_due(struct server *s);
uint64_t tls_next_due(const struct server *s);

#endif
