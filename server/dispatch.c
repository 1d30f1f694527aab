/* dispatch.c - turns query-buffer bytes into commands and runs them: parse
 * in place, look up, check arity and auth, call, count. */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
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

/* latchd never evicts: every maxmemory-policy acts as noeviction. */
static int over_maxmemory(const server *s)
{
    return s->cfg.maxmemory > 0 && server_used_memory(s) > s->cfg.maxmemory;
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
    if (!(flags & CMD_DENYOOM) || !over_maxmemory(c->srv)) return 0;
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
    if (!(c->flags & CLIENT_AUTHENTICATED) && !(cmd->flags & CMD_NOAUTH)) {
        reply_error(c, "NOAUTH Authentication required.");
        return 0;
    }
    if (oom_refuses(c, cmd)) return 0;
    if (!subscribed_mode_allows(c, cmd)) return 0;
    if (!monitor_may_run(c, cmd)) return 0;
    if (script_busy_refuses(c, cmd)) return 0;
    return 1;
}

void command_call(client *c)
{
    const command *cmd = c->cmd;
    if (cmd->flags & CMD_MONITOR_EARLY) monitor_command(c);
    cmd->proc(c);
    if (!(cmd->flags & CMD_MONITOR_EARLY)) monitor_command(c);
    c->srv->stat_commands++;
}

static void client_execute(client *c)
{
    begin_reply_mode(c);
    const command *cmd = command_lookup(c->argv[0].ptr, c->argv[0].len);
    size_t mark = c->out.len;
    c->cmd = cmd;
    c->sub = NULL;
    if (!command_admitted(c, cmd)) {
        multi_refused(c, mark);
        return;
    }
    c->last_cmd = cmd;   /* before the call: CLIENT LIST shows itself running */
    c->last_sub = NULL;
    if ((c->flags & CLIENT_MULTI) && !(cmd->flags & CMD_TRANSACTION)) {
        c->last_sub = c->sub;
        multi_queue(c);
        return;
    }
    command_call(c);
    if ((c->flags & CLIENT_CLOSE_ASAP) || !client_output_within_limit(c)) client_close(c);
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
    c->parser.lim.max_bulk = config_max_bulk(&c->srv->cfg);   /* CONFIG SET applies to live clients */
    while (!(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSING | CLIENT_CLOSE_ASAP)) && c->qpos < c->query.len) {
        size_t consumed = 0;
        resp_status st = resp_parse(&c->parser, c->query.data + c->qpos, c->query.len - c->qpos, &consumed);
        if (st == RESP_ERROR) {
            protocol_error(c);
            return;
        }
        c->qpos += consumed;
        if (st == RESP_NEED_MORE) return;
        c->argv = c->parser.argv;
        c->argc = (int)c->parser.argc;
        client_execute(c);
        c->argv = NULL;
        c->argc = 0;
    }
}
