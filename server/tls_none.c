/* tls_none.c - the TLS layer of a build without OpenSSL (LATCHD_TLS off):
 * no context can be made, so tls-port is refused and no session exists. */
#include "tls.h"

#include "server.h"

int tls_built_in(void) { return 0; }

int tls_configure(server *s)
{
    log_msg(s, LOG_WARNING, "TLS is not supported: latchd was built without OpenSSL (LATCHD_TLS=OFF)");
    return -1;
}

int tls_configured(const server *s) { return 0; }
void tls_free(server *s) {}

/* Never called: without a context there is no TLS listener. */
tls_conn *tls_conn_new(server *s, client *c) { return NULL; }
void tls_conn_free(server *s, tls_conn *t) {}
void tls_conn_input(tls_conn *t, const char *p, size_t n) {}
long tls_conn_read(tls_conn *t, char *dst, size_t cap) { return TLS_ERROR; }
int tls_conn_write(tls_conn *t, const char *p, size_t n) { return TLS_ERROR; }
void tls_conn_shutdown(tls_conn *t) {}
int tls_conn_release_buffers(tls_conn *t) { return 1; }
resp_buf *tls_conn_output(tls_conn *t) { return NULL; }
int tls_conn_established(const tls_conn *t) { return 0; }
const char *tls_conn_error(const tls_conn *t) { return "TLS not built in"; }
void tls_expire_due(server *s) {}
uint64_t tls_next_due(const server *s) { return UINT64_MAX; }
