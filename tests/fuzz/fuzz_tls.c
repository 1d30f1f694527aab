/* fuzz_tls.c - libFuzzer target for the TLS-terminated request path: an
 * OpenSSL client on memory BIOs talks to a detached server client with a
 * TLS session (client_tls_received, client_tls_encrypt). The input is the
 * plain byte stream the client sends; its records reach the server split
 * anywhere (single bytes too), now and then with a byte flipped, which must
 * close the connection cleanly and nothing worse, and the session's record
 * buffers are given back between pieces now and then, as a quiet client's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "fuzz.h"
#include "server.h"
#include "tls.h"

static char cert_path[64], key_path[64];
static SSL_CTX *client_ctx;

/* A self-signed P-256 identity for the server, written once per process. */
static void make_identity(void)
{
    static char dir[] = "/tmp/latchd-fuzz-tls-XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir);
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    FUZZ_CHECK(k && x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 365);
    X509_set_pubkey(x, k);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"fuzz", -1, -1, 0);
    X509_set_issuer_name(x, name);
    FUZZ_CHECK(X509_sign(x, k, EVP_sha256()) > 0);
    FILE *f = fopen(cert_path, "w");
    FUZZ_CHECK(f && PEM_write_X509(f, x) == 1);
    fclose(f);
    f = fopen(key_path, "w");
    FUZZ_CHECK(f && PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1);
    fclose(f);
    X509_free(x);
    EVP_PKEY_free(k);
    client_ctx = SSL_CTX_new(TLS_client_method());
    FUZZ_CHECK(client_ctx != NULL);
    SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, NULL);
}

static void set_path(char **slot, const char *v)
{
    free(*slot);
    *slot = strdup(v);
    FUZZ_CHECK(*slot != NULL);
}

static int gone(const client *c) { return (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_AFTER_REPLY)) != 0; }

/* The client's records to the server, split as the input's generator
 * says (maybe one byte corrupted); the server's answer back. */
static void pump(client *c, BIO *to_client, BIO *from_client, fuzz_rng *r, int *corrupted)
{
    char *p;
    long n = BIO_get_mem_data(from_client, &p);
    char tmp[4096];
    for (long pos = 0; pos < n && !gone(c);) {
        size_t k = fuzz_chunk_len(r, (size_t)(n - pos));
        if (k > sizeof(tmp)) k = sizeof(tmp);
        memcpy(tmp, p + pos, k);
        if ((fuzz_rng_next(r) & 1023) == 0) {
            tmp[fuzz_rng_next(r) % k] ^= (char)(1 + fuzz_rng_next(r) % 255);
            *corrupted = 1;
        }
        client_tls_received(c, tmp, k);
        FUZZ_CHECK(c->qpos <= c->query.len);
        /* a client quiet for a second gives its record buffers back, a
         * record split there or not */
        if (!gone(c) && (fuzz_rng_next(r) & 7) == 0) (void)tls_conn_release_buffers(c->tls);
        pos += (long)k;
    }
    (void)BIO_reset(from_client);
    if (!gone(c) && client_tls_encrypt(c) != 0) client_close(c);
    resp_buf *out = tls_conn_output(c->tls);
    if (out->len) FUZZ_CHECK(BIO_write(to_client, out->data, (int)out->len) == (int)out->len);
    out->len = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static server s;
    static char reply[65536];
    fuzz_rng r;
    int corrupted = 0;
    if (!client_ctx) make_identity();
    fuzz_rng_seed(&r, data, size);
    fuzz_server_start(&s, "tls-auth-clients", "no");
    set_path(&s.cfg.tls_cert_file, cert_path);
    set_path(&s.cfg.tls_key_file, key_path);
    s.cfg.protected_mode = 0;   /* a detached client has no loopback address */
    FUZZ_CHECK(tls_configure(&s) == 0);
    client *c = client_new_detached(&s);
    c->tls = tls_conn_new(&s, c);
    FUZZ_CHECK(c->tls != NULL);
    SSL *cl = SSL_new(client_ctx);
    BIO *to_client = BIO_new(BIO_s_mem()), *from_client = BIO_new(BIO_s_mem());
    SSL_set_bio(cl, to_client, from_client);
    SSL_set_connect_state(cl);
    for (int i = 0; i < 8 && !gone(c) && !(SSL_is_init_finished(cl) && tls_conn_established(c->tls)); i++) {
        (void)SSL_do_handshake(cl);
        pump(c, to_client, from_client, &r, &corrupted);
    }
    FUZZ_CHECK(corrupted || gone(c) || tls_conn_established(c->tls));
    size_t pos = 0;
    while (pos < size && !gone(c) && !s.shutting_down) {
        size_t n = fuzz_chunk_len(&r, size - pos);
        size_t put = 0;
        if (SSL_write_ex(cl, data + pos, n, &put) != 1) break;   /* the server's alert ended it */
        pos += n;
        pump(c, to_client, from_client, &r, &corrupted);
        size_t got;
        while (SSL_read_ex(cl, reply, sizeof(reply), &got) == 1) continue;   /* the replies decrypt */
        /* an intact stream never fails as TLS (its commands may close it) */
        FUZZ_CHECK(corrupted || tls_conn_error(c->tls)[0] == '\0');
    }
    if (getenv("FUZZ_TLS_VERBOSE"))
        fprintf(stderr, "fuzz_tls: established %d, corrupted %d, %llu commands\n", tls_conn_established(c->tls),
                corrupted, (unsigned long long)s.stat_commands);
    SSL_free(cl);
    client_free_detached(c);
    fuzz_server_stop(&s);
    return 0;
}
