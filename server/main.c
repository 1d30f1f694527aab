/* main.c - the latchd binary: parse redis-server style arguments, then run
 * one server on the default libuv loop until SIGTERM/SIGINT/SHUTDOWN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

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

int main(int argc, char **argv)
{
    if (informational(argc, argv)) return 0;
    latchd_config cfg;
    char err[1024];
    config_defaults(&cfg);
    if (config_parse_args(&cfg, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        usage();
        config_free(&cfg);
        return 1;
    }
    if (cfg.daemonize && daemon(1, 0) != 0) {
        perror("daemon");
        return 1;
    }
    server s;
    server_init(&s, uv_default_loop(), &cfg);
    log_init(&s);
    if (s.cfg.pidfile[0] && write_pidfile(s.cfg.pidfile) != 0)
        log_msg(LOG_WARNING, "Failed to write PID file: %s", s.cfg.pidfile);
    log_msg(LOG_NOTICE, "latchd %s (Redis %s compatible) starting, pid=%d", LATCHD_VERSION,
            LATCHD_REDIS_VERSION, (int)getpid());
    if (server_listen(&s) != 0) {
        log_msg(LOG_WARNING, "Failed listening on port %d, aborting.", s.cfg.port);
        return 1;
    }
    if (announce_port(&s) != 0) return 1;
    uv_run(s.loop, UV_RUN_DEFAULT);
    if (s.cfg.pidfile[0]) unlink(s.cfg.pidfile);
    log_msg(LOG_WARNING, "latchd is now ready to exit, bye bye...");
    server_close(&s);
    command_table_free();
    uv_loop_close(uv_default_loop());
    return 0;
}
