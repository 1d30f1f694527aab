/* conn.c - connection commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH,
 * RESET and the CLIENT family, with Redis 7.0's replies and errors. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "commands.h"
#include "mem.h"
#include "num.h"
#include "pubsub.h"

/* A RESP2 subscribed client cannot take a plain reply among its message
 * arrays, so it gets ["pong", arg-or-""] (Redisson's keep-alive expects it). */
void cmd_ping(client *c)
{
    if (c->argc > 2) {
        reply_arity_error(c);
    } else if ((c->flags & CLIENT_PUBSUB) && c->proto == 2) {
        reply_array(c, 2);
        reply_bulk(c, "pong", 4);
        reply_bulk(c, c->argc == 2 ? c->argv[1].ptr : "", c->argc == 2 ? c->argv[1].len : 0);
    } else if (c->argc == 2) {
        reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
    } else {
        reply_status(c, "PONG");
    }
}

void cmd_echo(client *c) { reply_bulk(c, c->argv[1].ptr, c->argv[1].len); }

void cmd_quit(client *c)
{
    reply_ok(c);
    client_close_after_reply(c);
}

void cmd_select(client *c)
{
    int id;
    if (!db_index_or_reply(c, &c->argv[1], &id)) return;
    c->db = id;
    reply_ok(c);
}

/* ---- authentication ---- */

/* 1 when authenticated; otherwise the WRONGPASS reply has been sent. */
static int try_auth(client *c, const resp_slice *user, const resp_slice *pass)
{
    static const resp_slice default_user = {"default", 7};
    if (!acl_authenticate(c, user ? user : &default_user, pass)) {
        reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return 0;
    }
    return 1;
}

void cmd_auth(client *c)
{
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 2 && (acl_default_user(c->srv)->flags & ACL_USER_NOPASS)) {
        reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                       "Are you sure your configuration is correct?");
        return;
    }
    const resp_slice *user = c->argc == 3 ? &c->argv[1] : NULL;
    if (try_auth(c, user, &c->argv[c->argc - 1])) reply_ok(c);
}

/* ---- names ---- */

/* Redis allows only printable, space-free names. */
static int valid_client_name(const resp_slice *name)
{
    for (size_t i = 0; i < name->len; i++)
        if (name->ptr[i] < '!' || name->ptr[i] > '~') return 0;
    return 1;
}

static int set_client_name(client *c, const resp_slice *name)
{
    if (!valid_client_name(name)) {
        reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return 0;
    }
    free(c->name);
    c->name = name->len ? arg_strdup(name) : NULL;
    return 1;
}

/* ---- HELLO ---- */

static void reply_hello(client *c)
{
    reply_map(c, 8);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, LATCHD_REDIS_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_int(c, c->proto);
    reply_bulk_cstr(c, "id");
    reply_int(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array(c, 0);
    reply_bulk_cstr(c, "latchd_version");
    reply_bulk_cstr(c, LATCHD_VERSION);
}

/* Options are validated before anything changes, as Redis does. */
static int hello_options(client *c, const resp_slice **user, const resp_slice **pass, const resp_slice **name)
{
    for (int i = 2; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(&c->argv[i], "AUTH") && more >= 2) {
            *user = &c->argv[i + 1];
            *pass = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(&c->argv[i], "SETNAME") && more >= 1) {
            *name = &c->argv[i + 1];
            i += 1;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)c->argv[i].len, c->argv[i].ptr);
            return 0;
        }
    }
    return 1;
}

void cmd_hello(client *c)
{
    long long ver = c->proto;
    const resp_slice *user = NULL, *pass = NULL, *name = NULL;
    if (c->argc >= 2) {
        if (!store_str2ll(c->argv[1].ptr, c->argv[1].len, &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    if (!hello_options(c, &user, &pass, &name)) return;
    if (user && !try_auth(c, user, pass)) return;
    if (!(c->flags & CLIENT_AUTHENTICATED)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                       "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                       "select the RESP protocol version at the same time");
        return;
    }
    if (name && !set_client_name(c, name)) return;
    c->proto = (int)ver;
    reply_hello(c);
}

void cmd_reset(client *c)
{
    multi_client_reset(c);
    tracking_disable(c);
    pubsub_client_reset(c);
    monitor_remove(c);
    c->proto = 2;
    c->db = 0;
    free(c->name);
    c->name = NULL;
    c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT);
    acl_client_reset_auth(c);
    reply_status(c, "RESET");
}

/* ---- CLIENT ---- */

/* The flags= letters latchd has, in Redis's order; N when none. */
static void client_flags(const client *c, char *dst)
{
    char *p = dst;
    if (c->flags & CLIENT_MONITOR) *p++ = 'O';
    if (c->flags & CLIENT_PUBSUB) *p++ = 'P';
    if (c->flags & CLIENT_MULTI) *p++ = 'x';
    if (c->flags & CLIENT_TRACKING) *p++ = 't';
    if (c->flags & CLIENT_TRACKING_BROKEN_REDIR) *p++ = 'R';
    if (c->flags & CLIENT_TRACKING_BCAST) *p++ = 'B';
    if (c->flags & CLIENT_BLOCKED) *p++ = 'b';
    if (c->flags & CLIENT_DIRTY_CAS) *p++ = 'd';
    if (c->flags & CLIENT_UNBLOCKED) *p++ = 'u';
    if (c->flags & CLIENT_UNIX) *p++ = 'U';
    if (c->flags & CLIENT_NO_EVICT) *p++ = 'e';
    if (p == dst) *p++ = 'N';
    *p = '\0';
}

/* Redis's argv-mem: the bytes of the arguments of the command running. */
static size_t argv_bytes(const client *c)
{
    size_t n = 0;
    for (int i = 0; i < c->argc; i++) n += c->argv[i].len;
    return n;
}

/* Redis 7.0's fields in its order. qbuf is the whole query buffer, the
 * command being run included, as Redis trims it only after; obl and oll
 * are the output as Redis's 16 KiB buffer and its 20464-byte blocks would
 * hold it (see client_output_memory). */
static void client_describe(const client *c, resp_buf *dst, uint64_t now)
{
    uv_os_fd_t fd = -1;
    uv_fileno(&c->h.handle, &fd);
    char line[1024], flags[16];
    char cmd[64] = "NULL";
    client_flags(c, flags);
    if (c->last_cmd) command_fullname(c->last_sub ? c->last_cmd : NULL, c->last_sub ? c->last_sub : c->last_cmd,
                                      cmd, sizeof(cmd));
    /* the reply buffer model catches up lazily: logically this only reads c */
    net_reply_buffer_sync((client *)c, now);
    size_t out = client_output_bytes(c), obl = out < 16384 ? out : 16384;
    size_t oll = out > 16384 ? (out - 16384 + 20463) / 20464 : 0;
    size_t qbuf = c->query.len, qfree = c->query.cap - c->query.len;
    size_t multi_mem = (c->flags & CLIENT_MULTI) ? c->mstate.queue.len : 0;
    int writing = (c->flags & CLIENT_PENDING_WRITE) || c->writing;
    int n = snprintf(line, sizeof(line),
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%llu idle=%llu flags=%s db=%d sub=%zu psub=%zu "
                     "ssub=%zu multi=%lld qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu "
                     "oll=%zu omem=%zu tot-mem=%zu events=%s cmd=%s user=%s redir=%lld resp=%d\n",
                     (unsigned long long)c->id, c->addr, c->laddr, (int)fd, c->name ? c->name : "",
                     (unsigned long long)((now - c->ctime_ms) / 1000), (unsigned long long)((now - c->last_ms) / 1000),
                     flags, c->db, pubsub_client_count(c, PUBSUB_CHANNEL), pubsub_client_count(c, PUBSUB_PATTERN),
                     pubsub_client_count(c, PUBSUB_SHARD), (c->flags & CLIENT_MULTI) ? c->mstate.count : -1LL,
                     qbuf, qfree, argv_bytes(c), multi_mem, (size_t)c->rb_size, (size_t)c->rb_peak, obl, oll,
                     client_output_memory(c),
                     sizeof(*c) + c->query.cap + c->out.cap + c->inflight.cap + c->mstate.queue.cap, writing ? "rw" : "r",
                     cmd, acl_user_name(c->user), tracking_redirect_id(c), c->proto);
    resp_buf_append(dst, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void client_info_line(const client *c, resp_buf *dst)
{
    client_describe(c, dst, server_now_ms(c->srv));
}

static void reply_text(client *c, resp_buf *text)
{
    reply_verbatim(c, text->data ? text->data : "", text->len);
    resp_buf_free(text);
}

static void client_info(client *c)
{
    resp_buf text;
    resp_buf_init(&text);
    client_describe(c, &text, server_now_ms(c->srv));
    reply_text(c, &text);
}

static int id_listed(client *c, uint64_t id, int first)
{
    for (int i = first; i < c->argc; i++) {
        long long v;
        if (store_str2ll(c->argv[i].ptr, c->argv[i].len, &v) && (uint64_t)v == id) return 1;
    }
    return 0;
}

/* The client type named by a, or -1 after Redis's error reply. */
static int type_or_reply(client *c, const resp_slice *a)
{
    int type = client_type_by_name(a->ptr, a->len);
    if (type < 0) reply_errorf(c, "ERR Unknown client type '%.*s'", (int)a->len, a->ptr);
    return type;
}

static void client_list(client *c)
{
    int by_id = c->argc >= 4 && arg_is(&c->argv[2], "ID");
    int by_type = c->argc == 4 && arg_is(&c->argv[2], "TYPE"), type = -1;
    if (c->argc > 2 && !by_id && !by_type) {
        reply_syntax_error(c);
        return;
    }
    if (by_type && (type = type_or_reply(c, &c->argv[3])) < 0) return;
    resp_buf text;
    resp_buf_init(&text);
    uint64_t now = server_now_ms(c->srv);
    for (client *o = c->srv->clients; o; o = o->next)
        if ((!by_id || id_listed(c, o->id, 3)) && (!by_type || client_type(o) == type))
            client_describe(o, &text, now);
    reply_text(c, &text);
}

static void client_setname(client *c)
{
    if (set_client_name(c, &c->argv[2])) reply_ok(c);
}

static void client_getname(client *c)
{
    if (c->name) reply_bulk_cstr(c, c->name);
    else reply_null(c);
}

static void client_id(client *c) { reply_int(c, (long long)c->id); }

static void client_setinfo(client *c)
{
    char **slot = arg_is(&c->argv[2], "LIB-NAME") ? &c->lib_name
                : arg_is(&c->argv[2], "LIB-VER")  ? &c->lib_ver
                                                  : NULL;
    if (!slot) {
        reply_errorf(c, "ERR Unrecognized option '%.*s'", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    if (!valid_client_name(&c->argv[3])) {
        reply_errorf(c, "ERR %.*s cannot contain spaces, newlines or special characters.",
                     (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    free(*slot);
    *slot = arg_strdup(&c->argv[3]);
    reply_ok(c);
}

static void client_reply(client *c)
{
    if (arg_is(&c->argv[2], "ON")) {
        c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT);
        reply_ok(c);
    } else if (arg_is(&c->argv[2], "OFF")) {
        c->flags |= CLIENT_REPLY_OFF;
    } else if (arg_is(&c->argv[2], "SKIP")) {
        if (!(c->flags & CLIENT_REPLY_OFF)) c->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        reply_syntax_error(c);
    }
}

typedef struct kill_filter {
    int has_id, has_addr, has_laddr, skipme, type;   /* type -1: any */
    long long id;
    const struct acl_user *user;                      /* NULL: any */
    const resp_slice *addr, *laddr;
} kill_filter;

static int slice_eq(const resp_slice *a, const char *s)
{
    return a->len == strlen(s) && memcmp(a->ptr, s, a->len) == 0;
}

static int kill_matches(const kill_filter *f, client *self, client *o)
{
    if (f->skipme && o == self) return 0;
    if (f->has_id && (uint64_t)f->id != o->id) return 0;
    if (f->has_addr && !slice_eq(f->addr, o->addr)) return 0;
    if (f->has_laddr && !slice_eq(f->laddr, o->laddr)) return 0;
    if (f->type >= 0 && client_type(o) != f->type) return 0;
    if (f->user && o->user != f->user) return 0;
    return 1;
}

static int parse_kill_filter(client *c, kill_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->skipme = 1;
    f->type = -1;
    if ((c->argc - 2) % 2 != 0) return reply_syntax_error(c), 0;
    for (int i = 2; i < c->argc; i += 2) {
        const resp_slice *v = &c->argv[i + 1];
        if (arg_is(&c->argv[i], "ID")) {
            if (!store_str2ll(v->ptr, v->len, &f->id) || f->id <= 0)
                return reply_error(c, "ERR client-id should be greater than 0"), 0;
            f->has_id = 1;
        } else if (arg_is(&c->argv[i], "ADDR")) {
            f->has_addr = 1, f->addr = v;
        } else if (arg_is(&c->argv[i], "LADDR")) {
            f->has_laddr = 1, f->laddr = v;
        } else if (arg_is(&c->argv[i], "SKIPME") && (arg_is(v, "yes") || arg_is(v, "no"))) {
            f->skipme = arg_is(v, "yes");
        } else if (arg_is(&c->argv[i], "TYPE")) {
            if ((f->type = type_or_reply(c, v)) < 0) return 0;
        } else if (arg_is(&c->argv[i], "USER")) {
            if (!(f->user = acl_user_find(c->srv, v->ptr, v->len)))
                return reply_errorf(c, "ERR No such user '%.*s'", (int)v->len, v->ptr), 0;
        } else {
            return reply_syntax_error(c), 0;
        }
    }
    return 1;
}

/* Killing yourself takes effect after the reply, as in Redis. */
static long long kill_matching(client *c, const kill_filter *f)
{
    long long killed = 0;
    for (client *o = c->srv->clients, *next; o; o = next) {
        next = o->next;
        if (!kill_matches(f, c, o)) continue;
        killed++;
        if (o == c) client_close_after_reply(c);
        else client_close(o);
    }
    return killed;
}

static void client_kill(client *c)
{
    kill_filter f;
    if (c->argc == 3) {   /* old form: CLIENT KILL addr:port */
        memset(&f, 0, sizeof(f));
        f.type = -1;
        f.has_addr = 1, f.addr = &c->argv[2];
        if (kill_matching(c, &f) == 0) reply_error(c, "ERR No such client");
        else reply_ok(c);
        return;
    }
    if (parse_kill_filter(c, &f)) reply_int(c, kill_matching(c, &f));
}

static void client_help(client *c)
{
    static const char *const lines[] = {
        "CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME", "    Return the name of the current connection.",
        "ID", "    Return the ID of the current connection.",
        "INFO", "    Return information about the current client connection.",
        "KILL <ip:port>", "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are: ID, ADDR, LADDR, SKIPME.",
        "LIST [TYPE <type>] [ID <id> [<id> ...]]", "    Return information about client connections.",
        "UNPAUSE", "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
        "SETNAME <name>", "    Assign the name <name> to the current connection.",
        "SETINFO <LIB-NAME|LIB-VER> <value>", "    Set client library name or version.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching.",
        "TRACKINGINFO", "    Report tracking status for the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
        "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

#define NS CMD_NOSCRIPT
#define L CMD_LOADING
#define S CMD_STALE
#define A CMD_ADMIN
/* CLIENT PAUSE timeout [WRITE|ALL]: the mode is checked before the
 * timeout, as in Redis; the timeout is ms from now (LATCHD.CLOCK's). */
static void client_pause(client *c)
{
    int all = 1;
    long long ms;
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "write")) {
            all = 0;
        } else if (!arg_is(&c->argv[3], "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    if (!block_ms_or_reply(c, &c->argv[2], &ms)) return;
    block_pause(c->srv, block_deadline_after(c->srv, (uint64_t)ms), all);
    reply_ok(c);
}

static void client_unpause(client *c)
{
    block_unpause(c->srv);
    reply_ok(c);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if a client blocked on keys was let go. */
static void client_unblock(client *c)
{
    int as_error = 0;
    long long id;
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "error")) {
            as_error = 1;
        } else if (!arg_is(&c->argv[3], "timeout")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    if (!arg_ll_or_reply(c, &c->argv[2], &id)) return;
    client *target = NULL;
    for (client *t = c->srv->clients; t; t = t->next)
        if ((long long)t->id == id) {
            target = t;
            break;
        }
    reply_int(c, target && block_unblock(target, as_error ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : NULL));
}

static void client_no_evict(client *c)
{
    if (arg_is(&c->argv[2], "on")) {
        c->flags |= CLIENT_NO_EVICT;
    } else if (arg_is(&c->argv[2], "off")) {
        c->flags &= ~CLIENT_NO_EVICT;
    } else {
        reply_syntax_error(c);
        return;
    }
    reply_ok(c);
}

const command client_subcommands[] = {
    {"setname", client_setname, 3, NS | L | S, 0, 0, 0, "connection", "2.6.9", "Set the current connection name", "connection-name", NULL},
    {"getname", client_getname, 2, NS | L | S, 0, 0, 0, "connection", "2.6.9", "Get the current connection name", NULL, NULL},
    {"id", client_id, 2, NS | L | S, 0, 0, 0, "connection", "5.0.0", "Returns the client ID for the current connection", NULL, NULL},
    {"info", client_info, 2, NS | L | S, 0, 0, 0, "connection", "6.2.0", "Returns information about the current client connection.", NULL, NULL},
    {"list", client_list, -2, A | NS | L | S, 0, 0, 0, "connection", "2.4.0", "Get the list of client connections", "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]", NULL},
    {"setinfo", client_setinfo, 4, NS | L | S, 0, 0, 0, "connection", "7.2.0", "Set client or connection specific info", "LIB-NAME libname|LIB-VER libver", NULL},
    {"kill", client_kill, -3, A | NS | L | S, 0, 0, 0, "connection", "2.4.0", "Kill the connection of a client", "[ID client-id] [ADDR ip:port] [LADDR ip:port] [SKIPME yes/no]", NULL},
    {"reply", client_reply, 3, NS | L | S, 0, 0, 0, "connection", "3.2.0", "Instruct the server whether to reply to commands", "ON|OFF|SKIP", NULL},
    {"pause", client_pause, -3, A | NS | L | S, 0, 0, 0, "connection", "2.9.50", "Stop processing commands from clients for some time", "timeout [WRITE|ALL]", NULL},
    {"unpause", client_unpause, 2, A | NS | L | S, 0, 0, 0, "connection", "6.2.0", "Resume processing of clients that were paused", NULL, NULL},
    {"unblock", client_unblock, -3, A | NS | L | S, 0, 0, 0, "connection", "5.0.0", "Unblock a client blocked in a blocking command from a different connection", "client-id [TIMEOUT|ERROR]", NULL},
    {"no-evict", client_no_evict, 3, A | NS | L | S, 0, 0, 0, "connection", "7.0.0", "Set client eviction mode for the current connection", "ON|OFF", NULL},
    {"help", client_help, 2, L | S, 0, 0, 0, "connection", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"tracking", tracking_cmd_tracking, -3, NS | L | S, 0, 0, 0, "connection", "6.0.0",
     "Enable or disable server assisted client side caching support",
     "ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]", NULL},
    {"caching", tracking_cmd_caching, 3, NS | L | S, 0, 0, 0, "connection", "6.0.0",
     "Instruct the server about tracking or not keys in the next request", "YES|NO", NULL},
    {"getredir", tracking_cmd_getredir, 2, NS | L | S, 0, 0, 0, "connection", "6.0.0",
     "Get tracking notifications redirection client ID if any", NULL, NULL},
    {"trackinginfo", tracking_cmd_trackinginfo, 2, NS | L | S, 0, 0, 0, "connection", "6.2.0",
     "Return information about server assisted client side caching for the current connection", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_client(client *c)
{
    subcommand_dispatch(c);
}
