/* function.c - FUNCTION and FCALL/FCALL_RO: Redis 7.0's argument checks
 * and replies; scripting/function.c keeps the libraries, script.c runs. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "scripting/script.h"

/* FUNCTION LOAD [REPLACE] code */
static void function_load_cmd(client *c)
{
    int replace = 0, pos = 2;
    for (; pos < c->argc - 1; pos++) {
        if (!arg_is(&c->argv[pos], "replace")) {
            reply_errorf(c, "ERR Unknown option given: %.*s", (int)c->argv[pos].len, c->argv[pos].ptr);
            return;
        }
        replace = 1;
    }
    char err[512];
    const char *name = function_load(c->srv, c->argv[pos].ptr, c->argv[pos].len, replace, err, sizeof(err));
    if (!name) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_bulk_cstr(c, name);
}

static void function_delete_cmd(client *c)
{
    function_lib *lib = function_lib_lookup(c->srv, c->argv[2].ptr, c->argv[2].len);
    if (!lib) {
        reply_error(c, "ERR Library not found");
        return;
    }
    function_lib_delete(c->srv, lib);
    reply_ok(c);
}

static void function_flush_cmd(client *c)
{
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    functions_flush(c->srv);
    reply_ok(c);
}

typedef struct list_ctx {
    client *c;
    const resp_slice *pattern;   /* NULL: every library */
    int with_code;
    long long n;
} list_ctx;

static void reply_function(client *c, const function *fn)
{
    reply_map(c, 3);
    reply_bulk_cstr(c, "name");
    reply_bulk_cstr(c, fn->name);
    reply_bulk_cstr(c, "description");
    if (fn->desc) reply_bulk_cstr(c, fn->desc);
    else reply_null(c);
    reply_bulk_cstr(c, "flags");
    int n = 0;
    for (int i = 0; i < SCRIPT_FLAG_COUNT; i++) n += (fn->flags & (SCRIPT_NO_WRITES << i)) != 0;
    reply_set(c, n);
    for (int i = 0; i < SCRIPT_FLAG_COUNT; i++)
        if (fn->flags & (SCRIPT_NO_WRITES << i)) reply_status(c, script_flag_names[i]);
}

static void list_one(store_dict_node *node, void *arg)
{
    list_ctx *x = arg;
    const function_lib *lib = (const function_lib *)node;
    if (x->pattern && !glob_match(x->pattern->ptr, x->pattern->len, lib->name, strlen(lib->name), 1))
        return;
    x->n++;
    client *c = x->c;
    reply_map(c, x->with_code ? 4 : 3);
    reply_bulk_cstr(c, "library_name");
    reply_bulk_cstr(c, lib->name);
    reply_bulk_cstr(c, "engine");
    reply_bulk_cstr(c, "LUA");
    reply_bulk_cstr(c, "functions");
    reply_array(c, (long long)lib->nfns);
    for (const function *fn = lib->fns; fn; fn = fn->next) reply_function(c, fn);
    if (x->with_code) {
        reply_bulk_cstr(c, "library_code");
        reply_bulk(c, lib->code, lib->code_len);
    }
}

static void count_one(store_dict_node *node, void *arg)
{
    list_ctx *x = arg;
    const function_lib *lib = (const function_lib *)node;
    if (glob_match(x->pattern->ptr, x->pattern->len, lib->name, strlen(lib->name), 1)) x->n++;
}

/* FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE], each option once. */
static void function_list_cmd(client *c)
{
    list_ctx x = {c, NULL, 0, 0};
    for (int i = 2; i < c->argc; i++) {
        if (!x.with_code && arg_is(&c->argv[i], "withcode")) {
            x.with_code = 1;
            continue;
        }
        if (!x.pattern && arg_is(&c->argv[i], "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            x.pattern = &c->argv[++i];
            continue;
        }
        /* Redis's addReplyErrorSdsSafe: newlines become spaces */
        char *arg = mem_alloc(c->argv[i].len + 1);
        for (size_t j = 0; j < c->argv[i].len; j++) {
            char ch = c->argv[i].ptr[j];
            arg[j] = (ch == '\r' || ch == '\n') ? ' ' : ch;
        }
        arg[c->argv[i].len] = '\0';
        reply_errorf(c, "ERR Unknown argument %s", arg);
        free(arg);
        return;
    }
    store_dict *libs = &c->srv->scripts->libs;
    if (x.pattern) store_dict_foreach(libs, count_one, &x);
    else x.n = (long long)store_dict_size(libs);
    reply_array(c, x.n);
    store_dict_foreach(libs, list_one, &x);
}

static void function_dump_cmd(client *c)
{
    unsigned char *p;
    size_t len;
    functions_dump(c->srv, 1, &p, &len);   /* as DUMP: Redis's default rdbcompression */
    reply_bulk(c, p, len);
    free(p);
}

static void function_restore_cmd(client *c)
{
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    int policy = 'a';
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "append")) policy = 'a';
        else if (arg_is(&c->argv[3], "replace")) policy = 'r';
        else if (arg_is(&c->argv[3], "flush")) policy = 'f';
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    char err[512];
    if (functions_restore(c->srv, (const unsigned char *)c->argv[2].ptr, c->argv[2].len, policy, err,
                          sizeof(err)) != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

static void function_kill_cmd(client *c) { script_kill_reply(c, 0); }

static void function_stats_cmd(client *c)
{
    scripts *st = c->srv->scripts;
    if (st->running && !st->running->fn) {
        reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
        return;
    }
    reply_map(c, 2);
    reply_bulk_cstr(c, "running_script");
    if (!st->running) {
        reply_null(c);
    } else {
        const client *caller = st->running->c;
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, st->running->fn->name);
        reply_bulk_cstr(c, "command");
        reply_array(c, caller->argc);
        for (int i = 0; i < caller->argc; i++) reply_bulk(c, caller->argv[i].ptr, caller->argv[i].len);
        reply_bulk_cstr(c, "duration_ms");
        reply_int(c, (long long)(server_real_ms(c->srv) - st->busy_since_ms));
    }
    reply_bulk_cstr(c, "engines");
    reply_map(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_int(c, (long long)store_dict_size(&st->libs));
    reply_bulk_cstr(c, "functions_count");
    reply_int(c, (long long)functions_count(c->srv));
}

static void function_help_cmd(client *c)
{
    static const char *const lines[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_function(client *c) { subcommand_dispatch(c); }

/* FCALL name numkeys key... arg...: the checks of fcallCommandGeneric and
 * scriptPrepareForRun, in their order. A function always runs by its
 * flags (it has no EVAL compatibility mode). */
static void fcall_generic(client *c, int ro)
{
    const function *fn = function_lookup(c->srv, c->argv[1].ptr, c->argv[1].len);
    if (!fn) {
        reply_error(c, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!scripting_parse_numkeys(c, "ERR Bad number of keys provided", &numkeys)) return;
    int no_writes = (fn->flags & SCRIPT_NO_WRITES) != 0;
    if (!no_writes && ro) {
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if (script_oom_refuses(c, fn->flags)) return;
    scripting_run_call(c, NULL, fn, numkeys, no_writes);
}

void cmd_fcall(client *c) { fcall_generic(c, 0); }
void cmd_fcall_ro(client *c) { fcall_generic(c, 1); }

#define W CMD_WRITE
#define NS CMD_NOSCRIPT
#define DO CMD_DENYOOM
#define AB CMD_ALLOW_BUSY
const command function_subcommands[] = {
    {"load", function_load_cmd, -3, W | DO | NS, 0, 0, 0, "scripting", "7.0.0", "Create a function with the given arguments (name, code, description)", "[REPLACE] function-code", NULL},
    {"delete", function_delete_cmd, 3, W | NS, 0, 0, 0, "scripting", "7.0.0", "Delete a function by name", "library-name", NULL},
    {"flush", function_flush_cmd, -2, W | NS, 0, 0, 0, "scripting", "7.0.0", "Deleting all functions", "[ASYNC|SYNC]", NULL},
    {"list", function_list_cmd, -2, NS, 0, 0, 0, "scripting", "7.0.0", "List information about all the functions", "[LIBRARYNAME library-name-pattern] [WITHCODE]", NULL},
    {"dump", function_dump_cmd, 2, NS, 0, 0, 0, "scripting", "7.0.0", "Dump all functions into a serialized binary payload", NULL, NULL},
    {"restore", function_restore_cmd, -3, W | DO | NS, 0, 0, 0, "scripting", "7.0.0", "Restore all the functions on the given payload", "serialized-value [FLUSH|APPEND|REPLACE]", NULL},
    {"kill", function_kill_cmd, 2, NS | AB, 0, 0, 0, "scripting", "7.0.0", "Kill the function currently in execution.", NULL, NULL},
    {"stats", function_stats_cmd, 2, NS | AB, 0, 0, 0, "scripting", "7.0.0", "Return information about the function currently running (name, description, duration)", NULL, NULL},
    {"help", function_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "7.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
