/* script.c - EVAL, EVALSHA, their _RO forms and SCRIPT: argument
 * checks with Redis's texts, then script.c runs the call. */
#include <string.h>

#include "commands.h"
#include "num.h"
#include "scripting/script.h"

int scripting_parse_numkeys(client *c, const char *not_int, long long *numkeys)
{
    if (not_int) {
        if (!store_str2ll(c->argv[2].ptr, c->argv[2].len, numkeys)) {
            reply_error(c, not_int);
            return 0;
        }
    } else if (!arg_ll_or_reply(c, &c->argv[2], numkeys)) {
        return 0;
    }
    if (*numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return 0;
    }
    if (*numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return 0;
    }
    return 1;
}

void scripting_run_call(client *c, const script *sc, const function *fn, long long numkeys,
                        int readonly)
{
    script_call call = {
        .c = c,
        .sc = sc,
        .fn = fn,
        .keys = c->argv + 3,
        .nkeys = (int)numkeys,
        .args = c->argv + 3 + numkeys,
        .nargs = c->argc - 3 - (int)numkeys,
        .readonly = readonly,
    };
    script_run(&call);
}

static void run_call(client *c, const script *sc, long long numkeys, int readonly)
{
    if (sc->flags & SCRIPT_DECLARED) {   /* a shebang's flags, not the command, decide */
        if (readonly && !(sc->flags & SCRIPT_NO_WRITES)) {
            reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
            return;
        }
        readonly = (sc->flags & SCRIPT_NO_WRITES) != 0;
        if (script_oom_refuses(c, sc->flags)) return;
    }
    scripting_run_call(c, sc, NULL, numkeys, readonly);
}

/* EVAL caches every body it is given, as Redis 7.0 does. */
static void eval_generic(client *c, int readonly)
{
    long long numkeys;
    if (!scripting_parse_numkeys(c, NULL, &numkeys)) return;
    script *sc = script_for_body(c, c->argv[1].ptr, c->argv[1].len);
    if (sc) run_call(c, sc, numkeys, readonly);
}

static void evalsha_generic(client *c, int readonly)
{
    long long numkeys;
    if (c->argv[1].len != 40) {
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    if (!scripting_parse_numkeys(c, NULL, &numkeys)) return;
    script *sc = script_lookup(c->srv, c->argv[1].ptr, c->argv[1].len);
    if (!sc) {
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    run_call(c, sc, numkeys, readonly);
}

void cmd_eval(client *c) { eval_generic(c, 0); }
void cmd_eval_ro(client *c) { eval_generic(c, 1); }
void cmd_evalsha(client *c) { evalsha_generic(c, 0); }
void cmd_evalsha_ro(client *c) { evalsha_generic(c, 1); }

void cmd_script(client *c) { subcommand_dispatch(c); }

static void cmd_script_load(client *c)
{
    script *sc = script_for_body(c, c->argv[2].ptr, c->argv[2].len);
    if (sc) reply_bulk(c, sc->sha, 40);
}

static void cmd_script_exists(client *c)
{
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++)
        reply_int(c, script_lookup(c->srv, c->argv[i].ptr, c->argv[i].len) != NULL);
}

static void cmd_script_flush(client *c)
{
    if (c->argc > 3 ||
        (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async"))) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    scripts_flush(c->srv);
    scripts_renew_vm(c->srv);
    reply_ok(c);
}

/* Only reachable while a script is busy (script_busy.c serves it from the
 * script's hook); a script that wrote must finish, or it would leave its
 * writes half done. */
static void cmd_script_kill(client *c) { script_kill_reply(c, 1); }

static void cmd_script_help(client *c)
{
    static const char *const lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_status(c, lines[i]);
}

#define NS CMD_NOSCRIPT
const command script_subcommands[] = {
    {"load", cmd_script_load, 3, NS | CMD_STALE, 0, 0, 0, "scripting", "2.6.0", "Load the specified Lua script into the script cache.", "script", NULL},
    {"exists", cmd_script_exists, -3, NS, 0, 0, 0, "scripting", "2.6.0", "Check existence of scripts in the script cache.", "sha1 [sha1 ...]", NULL},
    {"flush", cmd_script_flush, -2, NS, 0, 0, 0, "scripting", "2.6.0", "Remove all the scripts from the script cache.", "[ASYNC|SYNC]", NULL},
    {"kill", cmd_script_kill, 2, NS | CMD_ALLOW_BUSY, 0, 0, 0, "scripting", "2.6.0", "Kill the script currently in execution.", NULL, NULL},
    {"help", cmd_script_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
