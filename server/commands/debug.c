/* debug.c - the DEBUG subcommands test suites use (SLEEP,
 * SET-ACTIVE-EXPIRE, HELP), allowed as enable-debug-command says. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "commands.h"

/* Redis 7's allowProtectedAction: "local" means loopback or unix socket. */
int debug_command_allowed(const client *c)
{
    int mode = c->srv->cfg.enable_debug_command;
    return mode == CONFIG_PROTECTED_YES || (mode == CONFIG_PROTECTED_LOCAL && client_is_local(c));
}

/* Arguments as C strings, read as Redis reads them (strtod, atoi): what
 * does not parse counts as 0. */
static void arg_cstr(const resp_slice *a, char *dst, size_t len)
{
    snprintf(dst, len, "%.*s", (int)a->len, a->ptr);
}

/* The whole server stops, as in Redis: that is what tests use it for. */
static void debug_sleep(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    long long usec = (long long)(strtod(num, NULL) * 1000000);
    struct timespec ts = {(time_t)(usec / 1000000), (long)(usec % 1000000) * 1000};
    if (usec > 0) nanosleep(&ts, NULL);
    reply_ok(c);
}

/* 0 leaves expired keys to lazy expiry on access; the wheel stops firing. */
static void debug_set_active_expire(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    c->srv->active_expire = atoi(num) != 0;
    server_expire_reschedule(c->srv);
    reply_ok(c);
}

static void debug_help(client *c)
{
    static const char *const lines[] = {
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* A subcommand table like every container's, but not the DEBUG entry's
 * subs: Redis 7.0 lists no DEBUG subcommands in COMMAND, counts DEBUG
 * itself in CLIENT LIST, and answers an unknown name and a wrong argument
 * count alike. */
static const command debug_subcommands[] = {
    {"help", debug_help, 2, 0, 0, 0, 0, "server", "1.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"sleep", debug_sleep, 3, 0, 0, 0, 0, "server", "1.0.0", "Stop the server for some seconds", "seconds", NULL},
    {"set-active-expire", debug_set_active_expire, 3, 0, 0, 0, 0, "server", "1.0.0", "Turn active expiry off or on", "0|1", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_debug(client *c)
{
    const command *sub = subcommand_in(debug_subcommands, c->argv[1].ptr, c->argv[1].len);
    if (!sub || !command_arity_ok(sub, c->argc)) {
        reply_subcommand_syntax_error(c);
        return;
    }
    sub->proc(c);
}
