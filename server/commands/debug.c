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

void cmd_debug(client *c)
{
    static const struct { const char *name; int argc; command_proc proc; } subs[] = {
        {"help", 2, debug_help},
        {"sleep", 3, debug_sleep},
        {"set-active-expire", 3, debug_set_active_expire},
    };
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        if (c->argc == subs[i].argc && arg_is(&c->argv[1], subs[i].name)) {
            subs[i].proc(c);
            return;
        }
    }
    reply_subcommand_syntax_error(c);
}
