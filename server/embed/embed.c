/* embed.c - liblatchd's server lifecycle (latchd.h): create from options or
 * argv, start on the caller's loop or a thread of its own, stop from any
 * thread through a uv_async, and hand calls onto the server's loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "mem.h"

static latchd_server *embed_new(void)
{
    latchd_server *srv = mem_calloc(1, sizeof(*srv));
    config_defaults(&srv->cfg);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->done_cv, NULL);
    return srv;
}

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (errlen) snprintf(err, errlen, "%s", msg);
}

/* config_set_text with the message prefixed by the parameter's name. */
static int apply(latchd_config *cfg, const char *name, const char *value, char *err, size_t errlen)
{
    char why[256];
    if (config_set_text(cfg, name, value, why, sizeof(why)) == 0) return 0;
    if (errlen) snprintf(err, errlen, "Invalid option '%s %s': %s", name, value, why);
    return -1;
}

static int apply_options(latchd_config *cfg, const latchd_options *opt, char *err, size_t errlen)
{
    char port[16];
    if (apply(cfg, "loglevel", "warning", err, errlen) != 0) return -1;
    /* a library's lock service stays on this machine unless told (the
     * server's own default is Redis's "* -::*") */
    if (apply(cfg, "bind", "127.0.0.1 -::1", err, errlen) != 0) return -1;
    if (opt->config_file && config_load_file(cfg, opt->config_file, err, errlen) != 0) return -1;
    snprintf(port, sizeof(port), "%d", opt->port);
    if (apply(cfg, "port", port, err, errlen) != 0) return -1;
    return opt->bind ? apply(cfg, "bind", opt->bind, err, errlen) : 0;
}

latchd_server *latchd_create(const latchd_options *opt, char *err, size_t errlen)
{
    static const latchd_options none;
    latchd_server *srv = embed_new();
    if (apply_options(&srv->cfg, opt ? opt : &none, err, errlen) == 0) return srv;
    latchd_destroy(srv);
    return NULL;
}

latchd_server *latchd_create_args(int argc, char **argv, char *err, size_t errlen)
{
    latchd_server *srv = embed_new();
    if (config_parse_args(&srv->cfg, argc, argv, err, errlen) == 0) return srv;
    latchd_destroy(srv);
    return NULL;
}

latchd_status latchd_set(latchd_server *srv, const char *name, const char *value, char *err, size_t errlen)
{
    if (!srv || !name || !value) return set_err(err, errlen, "NULL argument"), LATCHD_ERR_ARG;
    if (srv->started) return set_err(err, errlen, "the server has started: use CONFIG SET"), LATCHD_ERR_STATE;
    return apply(&srv->cfg, name, value, err, errlen) == 0 ? LATCHD_OK : LATCHD_ERR_ARG;
}

typedef struct get_target {
    char *buf;
    size_t len;
} get_target;

static void copy_value(const char *name, const char *value, size_t vlen, void *ctx)
{
    get_target *t = ctx;
    (void)vlen;   /* the embedding API's values are C strings */
    if (t->len) snprintf(t->buf, t->len, "%s", value);
}

latchd_status latchd_get(const latchd_server *srv, const char *name, char *buf, size_t len)
{
    if (!srv || !name || !buf) return LATCHD_ERR_ARG;
    if (!config_exists(name, strlen(name))) return LATCHD_ERR_ARG;
    get_target t = {buf, len};
    config_get(srv->started ? &srv->s.cfg : &srv->cfg, name, strlen(name), copy_value, &t);
    return LATCHD_OK;
}

/* ---- running ---- */

static latchd_server *embed_of(server *s)
{
    return (latchd_server *)((char *)s - offsetof(latchd_server, s));
}

/* Hand c back to its caller, who may return (and drop c) at once. */
static void call_finished(latchd_server *srv, embed_call *c)
{
    pthread_mutex_lock(&srv->mu);
    c->done = 1;
    pthread_cond_broadcast(&srv->done_cv);
    pthread_mutex_unlock(&srv->mu);
}

/* What the loop's check phase would do, for calls that ran outside it:
 * publishes reach subscribers and a new lease arms the expiry timer. */
static void after_calls(latchd_server *srv)
{
    net_flush_pending(&srv->s);
    server_expire_rearm(&srv->s);
}

static embed_call *take_calls(latchd_server *srv, int *stop)
{
    pthread_mutex_lock(&srv->mu);
    embed_call *newest = srv->calls, *fifo = NULL;
    srv->calls = NULL;
    *stop = srv->stop_requested;
    pthread_mutex_unlock(&srv->mu);
    while (newest) {
        embed_call *next = newest->next;
        newest->next = fifo;
        fifo = newest;
        newest = next;
    }
    return fifo;
}

static void on_wake(uv_async_t *h)
{
    latchd_server *srv = h->data;
    int stop;
    for (embed_call *c = take_calls(srv, &stop), *next; c; c = next) {
        next = c->next;   /* c belongs to its waiting caller once finished */
        c->fn(srv, c);
        call_finished(srv, c);
    }
    after_calls(srv);
    if (stop) server_shutdown(&srv->s);
}

/* server_shutdown's last step, however it was asked for (latchd_stop,
 * SHUTDOWN): refuse further calls, fail the queued ones, close wake. */
static void on_server_shutdown(server *s)
{
    latchd_server *srv = embed_of(s);
    pthread_mutex_lock(&srv->mu);
    srv->accepting = 0;
    embed_call *c = srv->calls;
    srv->calls = NULL;
    for (; c; c = c->next) c->done = 1, c->st = LATCHD_ERR_STATE;
    pthread_cond_broadcast(&srv->done_cv);
    pthread_mutex_unlock(&srv->mu);
    server_close_handle(s, (uv_handle_t *)&srv->wake);
}

latchd_status embed_run(latchd_server *srv, embed_call *call)
{
    call->done = 0;
    call->st = LATCHD_ERR_STATE;
    if (!srv->started) return LATCHD_ERR_STATE;
    if (!srv->threaded || pthread_equal(pthread_self(), srv->thread)) {
        if (srv->s.shutting_down) return LATCHD_ERR_STATE;
        call->fn(srv, call);
        after_calls(srv);
        return call->st;
    }
    pthread_mutex_lock(&srv->mu);
    if (srv->accepting) {
        call->next = srv->calls;
        srv->calls = call;
        uv_async_send(&srv->wake);
        while (!call->done) pthread_cond_wait(&srv->done_cv, &srv->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    return call->st;
}

static latchd_status start_on(latchd_server *srv, uv_loop_t *loop)
{
    srv->started = 1;
    server_init(&srv->s, loop, &srv->cfg);
    memset(&srv->cfg, 0, sizeof(srv->cfg));   /* the server owns its strings now */
    srv->s.on_shutdown = on_server_shutdown;
    uv_async_init(loop, &srv->wake, on_wake);
    srv->wake.data = srv;
    srv->accepting = 1;
    /* Redis's start-up lines, which harnesses wait for ("Ready to accept");
     * at notice, not Redis's warning, so that an embedded server (loglevel
     * warning unless told) starts quietly */
    log_msg(&srv->s, LOG_NOTICE, "oO0OoO0OoO0Oo latchd is starting oO0OoO0OoO0Oo");
    log_msg(&srv->s, LOG_NOTICE, "latchd version=%s, redis-compat=%s, bits=%d, pid=%d, just started",
            LATCHD_VERSION, LATCHD_REDIS_VERSION, (int)sizeof(void *) * 8, (int)getpid());
    log_msg(&srv->s, LOG_NOTICE, "Configuration loaded");
    config_warn_without_effect(&srv->s, &srv->s.cfg);
    if (server_listen(&srv->s) != 0) {
        server_shutdown(&srv->s);
        return LATCHD_ERR_SYSTEM;
    }
    log_banner(&srv->s, srv->s.port ? srv->s.port : srv->s.cfg.tls_port);   /* Redis: the TLS one when TLS only */
    log_msg(&srv->s, LOG_NOTICE, "Server initialized");
    /* as Redis: with appendonly yes the AOF is the dataset, else the dump file */
    if ((srv->s.cfg.raft_id ? repl_start(&srv->s) : srv->s.cfg.appendonly ? aof_start(&srv->s) : rdb_load(&srv->s, 0)) != 0) {   /* logged; as Redis, no start on a file that does not load */
        srv->load_failed = 1;
        server_shutdown(&srv->s);
        return LATCHD_ERR_SYSTEM;
    }
    if (srv->s.nlisteners || !srv->s.ntls_listeners)
        log_msg(&srv->s, LOG_NOTICE, "Ready to accept connections tcp port %d", srv->s.port);
    if (srv->s.ntls_listeners)
        log_msg(&srv->s, LOG_NOTICE, "Ready to accept connections tls port %d", srv->s.cfg.tls_port);
    return LATCHD_OK;
}

latchd_status latchd_start(latchd_server *srv, uv_loop_t *loop)
{
    if (!srv || !loop) return LATCHD_ERR_ARG;
    if (srv->started) return LATCHD_ERR_STATE;
    return start_on(srv, loop);
}

static void *serve(void *arg)
{
    latchd_server *srv = arg;
    uv_run(srv->s.loop, UV_RUN_DEFAULT);
    return NULL;
}

latchd_status latchd_start_thread(latchd_server *srv)
{
    if (!srv) return LATCHD_ERR_ARG;
    if (srv->started) return LATCHD_ERR_STATE;
    if (uv_loop_init(&srv->own_loop) != 0) return LATCHD_ERR_SYSTEM;
    latchd_status st = start_on(srv, &srv->own_loop);
    if (st == LATCHD_OK && pthread_create(&srv->thread, NULL, serve, srv) == 0) {
        srv->threaded = 1;
        return LATCHD_OK;
    }
    /* Not started after all: let the handles close here and now. */
    if (!srv->s.shutting_down) server_shutdown(&srv->s);
    uv_run(&srv->own_loop, UV_RUN_DEFAULT);
    return LATCHD_ERR_SYSTEM;
}

int latchd_port(const latchd_server *srv)
{
    return srv && srv->started ? srv->s.port : 0;
}

latchd_status latchd_stop(latchd_server *srv)
{
    if (!srv) return LATCHD_ERR_ARG;
    pthread_mutex_lock(&srv->mu);
    latchd_status st = srv->started ? LATCHD_OK : LATCHD_ERR_STATE;
    if (srv->accepting) {
        srv->stop_requested = 1;
        uv_async_send(&srv->wake);
    }
    pthread_mutex_unlock(&srv->mu);
    return st;
}

/* Until the loop holds nothing of the server's any more. */
static void finish_running(latchd_server *srv)
{
    if (srv->threaded) {
        latchd_stop(srv);
        pthread_join(srv->thread, NULL);
        return;
    }
    if (!srv->s.shutting_down) server_shutdown(&srv->s);
    while (!server_closed(&srv->s)) uv_run(srv->s.loop, UV_RUN_NOWAIT);
}

void latchd_destroy(latchd_server *srv)
{
    if (!srv) return;
    if (srv->started) {
        finish_running(srv);
        server_close(&srv->s);
        if (srv->s.loop == &srv->own_loop) uv_loop_close(&srv->own_loop);
    } else {
        config_free(&srv->cfg);
    }
    resp_buf_free(&srv->scratch);
    pthread_cond_destroy(&srv->done_cv);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
}

const char *latchd_status_name(latchd_status st)
{
    switch (st) {
    case LATCHD_OK: return "LATCHD_OK";
    case LATCHD_LOCK_HELD: return "LATCHD_LOCK_HELD";
    case LATCHD_LOCK_NOT_HELD: return "LATCHD_LOCK_NOT_HELD";
    case LATCHD_ERR_ARG: return "LATCHD_ERR_ARG";
    case LATCHD_ERR_WRONGTYPE: return "LATCHD_ERR_WRONGTYPE";
    case LATCHD_ERR_STATE: return "LATCHD_ERR_STATE";
    case LATCHD_ERR_SYSTEM: return "LATCHD_ERR_SYSTEM";
    }
    return "LATCHD_UNKNOWN";
}
