/* main.c - the latchd binary, a thin main over liblatchd: redis-server
 * style arguments, daemonize, pidfile and signals, one server on the
 * default libuv loop until SIGTERM/SIGINT/SHUTDOWN. */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed/embed.h"
#include "persist/persist.h"
#include "mem.h"

#define LATCHD_DEFAULT_PIDFILE "/var/run/latchd.pid"

static void usage(void)
{
    fprintf(stderr,
            "Usage: latchd [/path/to/latchd.conf] [options]\n"
            "       latchd -v or --version\n"
            "       latchd -h or --help\n\n"
            "Examples:\n"
            "       latchd --port 7777\n"
            "       latchd --port 0            (ephemeral port: LATCHD_PORT=<n> on stdout)\n"
            "       latchd /etc/latchd.conf --loglevel verbose --requirepass secret\n");
}

static int write_pidfile(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "%d\n", (int)getpid());
    return fclose(f);
}

/* -v / -h answered without starting anything; 1 if handled. */
static int informational(int argc, char **argv)
{
    if (argc != 2) return 0;
    if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version")) {
        printf("latchd v=%s redis-compat=%s\n", LATCHD_VERSION, LATCHD_REDIS_VERSION);
        return 1;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage();
        return 1;
    }
    return 0;
}

static void on_signal(uv_signal_t *h, int signum)
{
    latchd_server *srv = h->data;
    static int stopping;   /* saved already: a later signal just waits for the exit */
    if (stopping) return;
    log_msg(&srv->s, LOG_WARNING, "Received %s scheduling shutdown...", signum == SIGINT ? "SIGINT" : "SIGTERM");
    if (srv->s.cron_paused) {   /* Redis shuts down from its cron: later, or never if aborted */
        srv->s.shutdown_asap = 1;
        return;
    }
    if (rdb_shutdown_save(&srv->s, 0, 0, 0) != 0) return;   /* as Redis: no exit while the save fails */
    stopping = 1;
    latchd_stop(srv);
}

/* Unreferenced, so they never keep the loop alive: uv_run returns once the
 * server has closed, whoever stopped it (a signal or SHUTDOWN). */
static void watch_signal(uv_signal_t *h, uv_loop_t *loop, latchd_server *srv, int signum)
{
    uv_signal_init(loop, h);
    h->data = srv;
    uv_signal_start(h, on_signal, signum);
    uv_unref((uv_handle_t *)h);
}

/* Listen, announce the port and serve until stopped; 0 or 1 for exit. */
static int serve(latchd_server *srv, uv_loop_t *loop)
{
    if (latchd_start(srv, loop) != LATCHD_OK) {
        if (!srv->load_failed) log_msg(&srv->s, LOG_WARNING, "Failed listening on port %d, aborting.", srv->s.cfg.port);
        return 1;
    }
    if (announce_port(&srv->s) != 0) {
        latchd_stop(srv);
        uv_run(loop, UV_RUN_DEFAULT);
        return 1;
    }
    announce_supervisor(&srv->s);
    if (srv->s.cfg.pidfile[0] && write_pidfile(srv->s.cfg.pidfile) != 0)
        log_msg(&srv->s, LOG_WARNING, "Failed to write PID file: %s", srv->s.cfg.pidfile);
    server_serve(&srv->s);
    /* read again: CONFIG SET replaces the configuration, strings and all
     * (pidfile itself is immutable, so this is the file written above) */
    if (srv->s.cfg.pidfile[0]) unlink(srv->s.cfg.pidfile);
    /* Like the pidfile: a port file left behind would name a port nobody
     * listens on. Written by announce_port() above, so ours to remove. */
    if (srv->s.cfg.port_file[0]) unlink(srv->s.cfg.port_file);
    log_msg(&srv->s, LOG_WARNING, "latchd is now ready to exit, bye bye...");
    return 0;
}

static int run(latchd_server *srv)
{
    uv_loop_t *loop = uv_default_loop();
    uv_signal_t term, intr;
    /* Before "Ready to accept connections": a harness may send SIGTERM the
     * moment it reads that line, and it must find the handler in place. */
    watch_signal(&term, loop, srv, SIGTERM);
    watch_signal(&intr, loop, srv, SIGINT);
    int rc = serve(srv, loop);
    uv_close((uv_handle_t *)&term, NULL);
    uv_close((uv_handle_t *)&intr, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return rc;
}

int main(int argc, char **argv)
{
    if (informational(argc, argv)) return 0;
    char err[1024];
    latchd_server *srv = latchd_create_args(argc, argv, err, sizeof(err));
    if (!srv) {
        fprintf(stderr, "%s\n", err);
        usage();
        return 1;
    }
    /* As redis-server: fork, setsid, stdio to /dev/null (log to logfile),
     * and a daemon always leaves a pid file, by default this one. */
    if (srv->cfg.daemonize && !srv->cfg.pidfile[0]) {
        free(srv->cfg.pidfile);
        srv->cfg.pidfile = mem_strdup(LATCHD_DEFAULT_PIDFILE);
    }
    if (srv->cfg.daemonize && daemon(1, 0) != 0) {
        perror("daemon");
        return 1;
    }
    /* A peer that vanished must not kill the process mid-write (Redis
     * ignores SIGPIPE too); the library leaves signals to its host. */
    signal(SIGPIPE, SIG_IGN);
    /* SORT ... ALPHA collates with strcoll in the environment's locale, as
     * redis-server (which sets LC_COLLATE the same way at start) does; the
     * library leaves the locale to its host, like signals. */
    setlocale(LC_COLLATE, "");
    int rc = run(srv);
    latchd_destroy(srv);
    uv_loop_close(uv_default_loop());
    return rc;
}
