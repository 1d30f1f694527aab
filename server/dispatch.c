/* dispatch.c - turns query-buffer bytes into commands and runs them: parse
 * in place, look up, check arity and auth, call, count. */
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "commands/commands.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "scripting/script.h"
#include "server.h"

/* Redis quotes up to 128 bytes of arguments after the name. */
static void reply_unknown_command(client *c)
{
    char args[256];
    size_t used = 0;
    args[0] = '\0';
    for (int i = 1; i < c->argc && used < 128; i++) {
        int n = snprintf(args + used, sizeof(args) - used, "'%.*s' ",
                         (int)(c->argv[i].len < 128 - used ? c->argv[i].len : 128 - used), c->argv[i].ptr);
        if (n < 0) break;
        used += (size_t)n < sizeof(args) - used ? (size_t)n : sizeof(args) - used - 1;
    }
    int nlen = (int)(c->argv[0].len < 128 ? c->argv[0].len : 128);
    reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s", nlen, c->argv[0].ptr, args);
}

/* CLIENT REPLY SKIP drops exactly the next command's reply. */
static void begin_reply_mode(client *c)
{
    c->flags &= ~CLIENT_REPLY_SKIP;
    if (c->flags & CLIENT_REPLY_SKIP_NEXT) {
        c->flags &= ~CLIENT_REPLY_SKIP_NEXT;
        c->flags |= CLIENT_REPLY_SKIP;
    }
}

/* A RESP2 subscribed client may only (un)subscribe, PING, QUIT and RESET.
 * Redis names the subcommand ("client|id"); a bad subcommand is left to
 * the container, whose error Redis gives first. */
static int subscribed_mode_allows(client *c, const command *cmd)
{
    const command *sub = NULL;
    char name[64];
    if (!(c->flags & CLIENT_PUBSUB) || c->proto != 2 || (cmd->flags & CMD_SUBSCRIBED)) return 1;
    if (cmd->flags & CMD_CONTAINER) {
        sub = subcommand_lookup(cmd, c->argv[1].ptr, c->argv[1].len);
        if (!sub || !command_arity_ok(sub, c->argc)) return 1;
    }
    command_fullname(sub ? cmd : NULL, sub ? sub : cmd, name, sizeof(name));
    reply_errorf(c, "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                    "are allowed in this context", name);
    return 0;
}

/* A monitor is a replica to Redis: it may not touch the keyspace. */
static int monitor_may_run(client *c, const command *cmd)
{
    const command *sub = NULL;
    if (!(c->flags & CLIENT_MONITOR)) return 1;
    if (cmd->flags & CMD_CONTAINER) sub = subcommand_lookup(cmd, c->argv[1].ptr, c->argv[1].len);
    if (!((sub ? sub : cmd)->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE))) return 1;
    reply_error(c, "ERR Replica can't interact with the keyspace");
    return 0;
}

/* Redis's performEvictions before a command: over maxmemory, keys go as
 * the policy says; 1 when memory is still over. */
static int out_of_memory(server *s)
{
    return server_used_memory(s) > s->cfg.maxmemory && evict_to_maxmemory(s) != 0;
}

/* Inside MULTI Redis finds a container's subcommand before queueing, and
 * refuses commands that cannot be part of a transaction. A container alone
 * (COMMAND) is a command of its own: there is no argv[1] to look at. */
static int multi_admits(client *c, const command *cmd)
{
    if ((cmd->flags & CMD_CONTAINER) && c->argc >= 2) {
        c->sub = subcommand_find_or_reply(c);   /* CLIENT LIST names it while it waits in the queue */
        if (!c->sub) return 0;
    }
    if (cmd->flags & CMD_NO_MULTI) {
        reply_error(c, "ERR Command not allowed inside a transaction");
        return 0;
    }
    return 1;
}

static int oom_refuses(client *c, const command *cmd)
{
    if (c->srv->cfg.maxmemory <= 0) return 0;   /* the common case: one test */
    unsigned flags = cmd->flags | multi_oom_flags(c, cmd);
    if ((cmd->flags & CMD_CONTAINER) && c->argc > 1) {   /* FUNCTION LOAD/RESTORE deny, LIST does not */
        const command *sub = subcommand_lookup(cmd, c->argv[1].ptr, c->argv[1].len);
        if (sub) flags |= sub->flags;
    }
    if (!out_of_memory(c->srv) || !(flags & CMD_DENYOOM)) return 0;
    reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
    return 1;
}

/* Redis's processCommand checks, in its order; 0 after replying the error. */
static int command_admitted(client *c, const command *cmd)
{
    if (!cmd) {
        reply_unknown_command(c);
        return 0;
    }
    if (!command_arity_ok(cmd, c->argc)) {
        reply_arity_error(c);
        return 0;
    }
    if ((c->flags & CLIENT_MULTI) && !multi_admits(c, cmd)) return 0;
    if ((cmd->flags & CMD_PROTECTED) && !debug_command_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                       "you can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return 0;
    }
    if (!(c->flags & CLIENT_AUTHENTICATED) && !(cmd->flags & CMD_NOAUTH) && acl_auth_required(c->srv)) {
        reply_error(c, "NOAUTH Authentication required.");
        return 0;
    }
    /* the default user with every permission costs this one test */
    if (!c->user->unrestricted &&
        !acl_admit(c, cmd, c->sub, (c->flags & CLIENT_MULTI) ? ACL_LOG_CTX_MULTI : ACL_LOG_CTX_TOPLEVEL))
        return 0;
    if (oom_refuses(c, cmd)) return 0;
    if (c->srv->aof_write_err && aof_refuses(c, cmd)) return 0;
    if (c->srv->repl_gate && repl_refuses(c, cmd)) return 0;
    if (!subscribed_mode_allows(c, cmd)) return 0;
    if (!monitor_may_run(c, cmd)) return 0;
    if (script_busy_refuses(c, cmd)) return 0;
    return 1;
}

static void call_proc(client *c)
{
    const command *cmd = c->cmd;
    if (cmd->flags & CMD_MONITOR_EARLY) monitor_command(c);
    if (c->srv->aof_on) aof_proc(c);
    else cmd->proc(c);
    if (c->flags & CLIENT_TRACKING) tracking_command_done(c);
    if (!(cmd->flags & CMD_MONITOR_EARLY)) monitor_command(c);
    c->srv->stat_commands++;
}

/* A command run by another (EXEC's queue): timed on its own. */
void command_call(client *c)
{
    size_t mark = c->out.len;
    uint64_t t0 = stats_ticks();
    call_proc(c);
    stats_record(c, mark, stats_ticks() - t0);
}

/* Admit, then queue or run, c's command. A client's commands are timed by
 * one clock read each: the end of one is the start of the next, *clock, so
 * a pipelined batch reads the clock once per command and once more (a read
 * costs ~11 ns, a lock ~240 ns). */
static void client_run(client *c, const command *cmd, uint64_t *clock)
{
    size_t mark = c->out.len;
    if (!command_admitted(c, cmd)) {
        stats_rejected(c, mark);
        multi_refused(c, mark);
        if (!(c->flags & CLIENT_AUTHENTICATED) && !client_output_within_limit(c)) client_close(c);
        return;
    }
    c->last_cmd = cmd;   /* before the call: CLIENT LIST shows itself running */
    c->last_sub = NULL;
    if (c->srv->clients_paused && block_pause_holds(c, cmd)) return;   /* CLIENT PAUSE: it runs when that ends */
    if ((c->flags & CLIENT_MULTI) && !(cmd->flags & CMD_TRANSACTION)) {
        c->last_sub = c->sub;
        multi_queue(c);
        return;
    }
    call_proc(c);
    uint64_t now = stats_ticks();
    if (!(c->flags & CLIENT_BLOCKED)) stats_record(c, mark, now - *clock);
    else stats_blocked(c, now - *clock);
    *clock = now;
    /* a push that serves a waiter is seen by it before any later command */
    if (c->srv->block_ready) {
        /* Redis's afterCommand (c's own invalidations) precedes handleClientsBlockedOnKeys */
        if (c->srv->tracking_clients) tracking_after_command(c);
        block_handle_ready(c->srv);
        *clock = stats_ticks();   /* the waiters' commands are timed on their own */
    }
    if ((c->flags & CLIENT_CLOSE_ASAP) || !client_output_within_limit(c)) client_close(c);
}

/* While somebody tracks: the table's limit before each command (Redis's
 * processCommand), the command's invalidations of c's own keys after its
 * reply, and CLIENT CACHING lasting one command (or transaction). */
static void client_execute_tracking(client *c, const command *cmd, uint64_t *clock)
{
    tracking_limit(c->srv);
    client_run(c, cmd, clock);
    tracking_after_command(c);
    if (!(c->flags & CLIENT_MULTI) && (!cmd || cmd->proc != cmd_client)) c->flags &= ~CLIENT_TRACKING_CACHING;
}

static void client_execute(client *c, uint64_t *clock)
{
    begin_reply_mode(c);
    const command *cmd = command_lookup(c->argv[0].ptr, c->argv[0].len);
    c->cmd = cmd;
    c->sub = NULL;
    if (c->srv->tracking_clients) client_execute_tracking(c, cmd, clock);
    else client_run(c, cmd, clock);
}

/* A command that waited (CLIENT PAUSE) runs now, as c's own. */
void client_run_postponed(client *c, resp_slice *argv, int argc)
{
    server *s = c->srv;
    client *outer = s->current_client;
    s->current_client = c;
    uint64_t clock = stats_ticks();
    c->argv = argv;
    c->argc = argc;
    client_execute(c, &clock);
    c->argv = NULL;
    c->argc = 0;
    s->current_client = outer;
}

static void protocol_error(client *c)
{
    reply_errorf(c, "ERR %s", resp_parser_error(&c->parser));
    client_close_after_reply(c);
}

/* Runs every complete command in the buffer; replies only accumulate here
 * and are written once by the flush after this loop iteration. */
void client_process_input(client *c)
{
    server *s = c->srv;
    client *outer = s->current_client;   /* a busy script's caller, while others are served */
    s->current_client = c;
    c->parser.lim.max_bulk = config_max_bulk(&s->cfg);   /* CONFIG SET applies to live clients */
    uint64_t clock = stats_ticks();
    /* An unblocked client waits for block_run_unblocked: a postponed
     * command of its (CLIENT PAUSE) runs first there, then the rest. */
    while (!(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSING | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED |
                         CLIENT_UNBLOCKED | CLIENT_HELD)) &&
           c->qpos < c->query.len) {
        size_t consumed = 0;
        resp_status st = resp_parse(&c->parser, c->query.data + c->qpos, c->query.len - c->qpos, &consumed);
        if (st == RESP_ERROR) {
            protocol_error(c);
            break;
        }
        c->qpos += consumed;
        if (st == RESP_NEED_MORE) break;
        c->argv = c->parser.argv;
        c->argc = (int)c->parser.argc;
        /* Redis's processCommand: over maxmemory-clients clients go before
         * a command runs, its arguments counted (this one may be the one) */
        if (s->client_mem_on) {
            clientmem_update_slow(c);
            if (c->flags & CLIENT_CLOSING) {
                c->argv = NULL;
                c->argc = 0;
                break;
            }
        }
        client_execute(c, &clock);
        c->argv = NULL;
        c->argc = 0;
    }
    s->current_client = outer;
}
