/* tls.c - TLS on OpenSSL 3: the server's context built from the tls-*
 * parameters (Redis's tlsConfigure), each client's SSL session behind a BIO
 * that reads from and writes to net.c's buffers, and handshake deadlines. */
#include "tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "mem.h"
#include "server.h"
#include "wheel.h"

/* tls-protocols' words, as Redis reads them */
#define PROTO_TLSv1 (1 << 0)
#define PROTO_TLSv1_1 (1 << 1)
#define PROTO_TLSv1_2 (1 << 2)
#define PROTO_TLSv1_3 (1 << 3)
#define PROTO_DEFAULT (PROTO_TLSv1_2 | PROTO_TLSv1_3)

/* Made with the first context; only then does a server pay for the wheel. */
struct tls_state {
    SSL_CTX *ctx;
    wheel handshakes;   /* each session's handshake deadline until it is done */
};

struct tls_conn {
    SSL *ssl;
    client *c;
    const char *in;     /* raw bytes lent by tls_conn_input, not yet given to OpenSSL */
    size_t in_len;
    resp_buf out;       /* encrypted, to be sent */
    wheel_node deadline;
    int established;
    char err[256];
};

int tls_built_in(void) { return 1; }

/* ---- the BIO: OpenSSL's reads and writes land in our buffers ---- */

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

/* Encrypted output is appended: the socket write is net.c's, once per
 * loop iteration, so a write never "would block" here. */
static int bio_write(BIO *b, const char *p, size_t n, size_t *written)
{
    tls_conn *t = BIO_get_data(b);
    resp_buf_append(&t->out, p, n);
    *written = n;
    return 1;
}

/* Input is whatever the last socket read brought; when it is used up,
 * OpenSSL keeps a partial record and asks again after the next read. */
static int bio_read(BIO *b, char *dst, size_t cap, size_t *got)
{
    tls_conn *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (t->in_len == 0) {
        BIO_set_retry_read(b);
        *got = 0;
        return 0;
    }
    size_t k = cap < t->in_len ? cap : t->in_len;
    memcpy(dst, t->in, k);
    t->in += k;
    t->in_len -= k;
    *got = k;
    return 1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    tls_conn *t = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_PENDING: return t ? (long)t->in_len : 0;
    case BIO_CTRL_WPENDING: return 0;
    default: return 0;
    }
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static int bio_destroy(BIO *b)
{
    BIO_set_data(b, NULL);
    return 1;
}

static void bio_method_make(void)
{
    bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "latchd");
    if (!bio_method) return;
    BIO_meth_set_write_ex(bio_method, bio_write);
    BIO_meth_set_read_ex(bio_method, bio_read);
    BIO_meth_set_ctrl(bio_method, bio_ctrl);
    BIO_meth_set_create(bio_method, bio_create);
    BIO_meth_set_destroy(bio_method, bio_destroy);
}

/* ---- the context (Redis's tlsConfigure) ---- */

static const char *or_null(const char *s) { return s && s[0] ? s : NULL; }

static int parse_protocols(server *s, const char *str)
{
    if (!or_null(str)) return PROTO_DEFAULT;
    int protocols = 0;
    char *copy = mem_strdup(str), *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(w, "tlsv1")) protocols |= PROTO_TLSv1;
        else if (!strcasecmp(w, "tlsv1.1")) protocols |= PROTO_TLSv1_1;
        else if (!strcasecmp(w, "tlsv1.2")) protocols |= PROTO_TLSv1_2;
        else if (!strcasecmp(w, "tlsv1.3")) protocols |= PROTO_TLSv1_3;
        else {
            log_msg(s, LOG_WARNING, "Invalid tls-protocols specified. "
                                    "Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
            protocols = -1;
            break;
        }
    }
    free(copy);
    return protocols;
}

/* OpenSSL asks for tls-key-file-pass through this. */
static int password_cb(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pass = u;
    if (!pass) return -1;
    size_t len = strlen(pass);
    if (len > (size_t)size) return -1;
    memcpy(buf, pass, len);
    return (int)len;
}

static void ssl_error_text(char *buf, size_t len)
{
    unsigned long e = ERR_get_error();
    if (e) ERR_error_string_n(e, buf, len);
    else snprintf(buf, len, "%s", "unknown error");
    ERR_clear_error();
}

static int load_dh_params(server *s, SSL_CTX *ctx, const char *path)
{
    char errbuf[256];
    FILE *f = fopen(path, "r");
    if (!f) {
        log_msg(s, LOG_WARNING, "Failed to load %s: %s", path, strerror(errno));
        return -1;
    }
    EVP_PKEY *pkey = NULL;
    OSSL_DECODER_CTX *dctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, "DH",
                                                           OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, NULL, NULL);
    int ok = dctx && OSSL_DECODER_from_fp(dctx, f);
    OSSL_DECODER_CTX_free(dctx);
    fclose(f);
    if (!ok) {
        log_msg(s, LOG_WARNING, "%s: failed to read DH params.", path);
        return -1;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {   /* owned by ctx once set */
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to load DH params file: %s: %s", path, errbuf);
        EVP_PKEY_free(pkey);
        return -1;
    }
    return 0;
}

/* The server side of Redis's createSSLContext plus tlsConfigure's rest. */
static SSL_CTX *make_context(server *s, int protocols)
{
    const latchd_config *cfg = &s->cfg;
    char errbuf[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to create a TLS context: %s", errbuf);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS |
                                 SSL_OP_SINGLE_DH_USE);
    if (!(protocols & PROTO_TLSv1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1);
    if (!(protocols & PROTO_TLSv1_1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_1);
    if (!(protocols & PROTO_TLSv1_2)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_2);
    if (!(protocols & PROTO_TLSv1_3)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_3);
    if (cfg->tls_prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    /* the pass is read while the key loads, below: cfg outlives that */
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)or_null(cfg->tls_key_file_pass));
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert_file) <= 0) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to load certificate: %s: %s", cfg->tls_cert_file, errbuf);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key_file, SSL_FILETYPE_PEM) <= 0) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to load private key: %s: %s", cfg->tls_key_file, errbuf);
        goto fail;
    }
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    const char *ca_file = or_null(cfg->tls_ca_cert_file), *ca_dir = or_null(cfg->tls_ca_cert_dir);
    if ((ca_file || ca_dir) && SSL_CTX_load_verify_locations(ctx, ca_file, ca_dir) <= 0) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to configure CA certificate(s) file/directory: %s", errbuf);
        goto fail;
    }
    if (or_null(cfg->tls_ciphers) && !SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers)) {
        log_msg(s, LOG_WARNING, "Failed to configure ciphers: %s", cfg->tls_ciphers);
        goto fail;
    }
    if (or_null(cfg->tls_ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, cfg->tls_ciphersuites)) {
        log_msg(s, LOG_WARNING, "Failed to configure ciphersuites: %s", cfg->tls_ciphersuites);
        goto fail;
    }
    if (cfg->tls_session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, cfg->tls_session_cache_size);
        SSL_CTX_set_timeout(ctx, cfg->tls_session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"redis", 5);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    if (or_null(cfg->tls_dh_params_file)) {
        if (load_dh_params(s, ctx, cfg->tls_dh_params_file) != 0) goto fail;
    } else {
        SSL_CTX_set_dh_auto(ctx, 1);
    }
    ERR_clear_error();
    return ctx;
fail:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

/* tls-client-cert-file / -key-file: Redis builds a client context from
 * them (for replication, which latchd has not): they must load as there. */
static int check_client_identity(server *s)
{
    const latchd_config *cfg = &s->cfg;
    char errbuf[256];
    if (!or_null(cfg->tls_client_cert_file) || !or_null(cfg->tls_client_key_file)) return 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int ok = ctx != NULL;
    if (ok) {
        SSL_CTX_set_default_passwd_cb(ctx, password_cb);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)or_null(cfg->tls_client_key_file_pass));
    }
    if (ok && SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_client_cert_file) <= 0) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to load certificate: %s: %s", cfg->tls_client_cert_file, errbuf);
        ok = 0;
    } else if (ok && SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_client_key_file, SSL_FILETYPE_PEM) <= 0) {
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Failed to load private key: %s: %s", cfg->tls_client_key_file, errbuf);
        ok = 0;
    }
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return ok ? 0 : -1;
}

int tls_configure(server *s)
{
    const latchd_config *cfg = &s->cfg;
    if (!or_null(cfg->tls_cert_file)) {
        log_msg(s, LOG_WARNING, "No tls-cert-file configured!");
        return -1;
    }
    if (!or_null(cfg->tls_key_file)) {
        log_msg(s, LOG_WARNING, "No tls-key-file configured!");
        return -1;
    }
    if ((cfg->tls_auth_clients != CONFIG_TLS_AUTH_NO || config_tls_peers(cfg)) && !or_null(cfg->tls_ca_cert_file) &&
        !or_null(cfg->tls_ca_cert_dir)) {
        log_msg(s, LOG_WARNING, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                                "tls-replication or tls-auth-clients are enabled!");
        return -1;
    }
    int protocols = parse_protocols(s, cfg->tls_protocols);
    if (protocols < 0) return -1;
    pthread_once(&bio_once, bio_method_make);
    if (!bio_method) {
        log_msg(s, LOG_WARNING, "Failed to create the TLS I/O method");
        return -1;
    }
    SSL_CTX *ctx = make_context(s, protocols);
    if (!ctx) return -1;
    if (check_client_identity(s) != 0) {
        SSL_CTX_free(ctx);
        return -1;
    }
    if (!s->tls) {
        s->tls = mem_calloc(1, sizeof(*s->tls));
        wheel_init(&s->tls->handshakes, server_clock_ms(s));
    }
    SSL_CTX_free(s->tls->ctx);   /* sessions hold their own reference */
    s->tls->ctx = ctx;
    return 0;
}

int tls_configured(const server *s) { return s->tls && s->tls->ctx; }

void tls_free(server *s)
{
    if (!s->tls) return;
    SSL_CTX_free(s->tls->ctx);
    free(s->tls);
    s->tls = NULL;
}

/* ---- sessions ---- */

tls_conn *tls_conn_new(server *s, client *c)
{
    tls_conn *t = mem_calloc(1, sizeof(*t));
    t->c = c;
    wheel_node_init(&t->deadline);
    t->ssl = SSL_new(s->tls->ctx);
    BIO *bio = t->ssl ? BIO_new(bio_method) : NULL;
    if (!bio) {
        char errbuf[256];
        ssl_error_text(errbuf, sizeof(errbuf));
        log_msg(s, LOG_WARNING, "Error accepting a client connection: %s", errbuf);
        SSL_free(t->ssl);
        free(t);
        return NULL;
    }
    BIO_set_data(bio, t);
    SSL_set_bio(t->ssl, bio, bio);   /* one BIO both ways, owned by the SSL */
    switch (s->cfg.tls_auth_clients) {
    case CONFIG_TLS_AUTH_NO: SSL_set_verify(t->ssl, SSL_VERIFY_NONE, NULL); break;
    case CONFIG_TLS_AUTH_OPTIONAL: SSL_set_verify(t->ssl, SSL_VERIFY_PEER, NULL); break;
    default: SSL_set_verify(t->ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL); break;
    }
    /* the input is already in memory: OpenSSL takes all of it in one
     * BIO read rather than each record's header and then its body */
    SSL_set_read_ahead(t->ssl, 1);
    SSL_set_accept_state(t->ssl);
    wheel_add(&s->tls->handshakes, &t->deadline, server_clock_ms(s) + (uint64_t)s->cfg.tls_handshake_timeout);
    return t;
}

void tls_conn_free(server *s, tls_conn *t)
{
    if (wheel_node_armed(&t->deadline)) wheel_del(&s->tls->handshakes, &t->deadline);
    SSL_free(t->ssl);
    resp_buf_free(&t->out);
    free(t);
}

void tls_conn_input(tls_conn *t, const char *p, size_t n)
{
    t->in = p;
    t->in_len = n;
}

static long fail(tls_conn *t, int ret, int code)
{
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return TLS_WANT_INPUT;
    if (code == SSL_ERROR_ZERO_RETURN) return TLS_CLOSED;
    if (code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        snprintf(t->err, sizeof(t->err), "%s", ret == 0 ? "Connection closed by peer" : "I/O error");
        return TLS_ERROR;
    }
    ssl_error_text(t->err, sizeof(t->err));
    return TLS_ERROR;
}

long tls_conn_read(tls_conn *t, char *dst, size_t cap)
{
    size_t got = 0;
    int ret = SSL_read_ex(t->ssl, dst, cap, &got);
    if (!t->established && SSL_is_init_finished(t->ssl)) {
        t->established = 1;
        server *s = t->c->srv;
        if (wheel_node_armed(&t->deadline)) wheel_del(&s->tls->handshakes, &t->deadline);
    }
    if (ret == 1) return (long)got;
    return fail(t, ret, SSL_get_error(t->ssl, ret));
}

int tls_conn_write(tls_conn *t, const char *p, size_t n)
{
    size_t put = 0;
    if (n == 0) return 0;
    int ret = SSL_write_ex(t->ssl, p, n, &put);
    if (ret == 1 && put == n) return 0;
    fail(t, ret, SSL_get_error(t->ssl, ret));
    return TLS_ERROR;
}

void tls_conn_shutdown(tls_conn *t)
{
    if (t->established) SSL_shutdown(t->ssl);
    ERR_clear_error();
}

int tls_conn_release_buffers(tls_conn *t)
{
    /* SSL_pending too: OpenSSL before 3.0.14 freed a record still being
     * read (CVE-2024-4741) */
    return SSL_pending(t->ssl) == 0 && SSL_free_buffers(t->ssl) == 1;
}

resp_buf *tls_conn_output(tls_conn *t) { return &t->out; }
int tls_conn_established(const tls_conn *t) { return t->established; }
const char *tls_conn_error(const tls_conn *t) { return t->err; }

/* ---- handshake deadlines ---- */

static void on_handshake_due(wheel_node *n, void *ctx)
{
    tls_conn *t = (tls_conn *)((char *)n - offsetof(tls_conn, deadline));
    log_msg(ctx, LOG_WARNING, "Error accepting a client connection: TLS handshake timed out (conn: addr=%s)",
            t->c->addr);
    client_close(t->c);
}

void tls_expire_due(server *s)
{
    if (s->tls) wheel_advance(&s->tls->handshakes, server_clock_ms(s), on_handshake_due, s);
}

uint64_t tls_next_due(const server *s)
{
    return s->tls ? wheel_next_due(&s->tls->handshakes) : UINT64_MAX;
}
