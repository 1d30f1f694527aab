/* monitor.c - MONITOR: every command the server runs, as Redis 7.0 shows
 * it, encoded once per command and queued on every monitor. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "scripting/script.h"

void cmd_monitor(client *c)
{
    server *s = c->srv;
    if (c->flags & CLIENT_MONITOR) return;   /* Redis says nothing the second time */
    c->flags |= CLIENT_MONITOR;
    c->monitor_prev = NULL;
    c->monitor_next = s->monitors;
    if (s->monitors) s->monitors->monitor_prev = c;
    s->monitors = c;
    reply_ok(c);
}

/* The scratch line is returned with the last monitor: a server nobody
 * watches keeps nothing for it. */
void monitor_remove(client *c)
{
    server *s = c->srv;
    if (!(c->flags & CLIENT_MONITOR)) return;
    c->flags &= ~CLIENT_MONITOR;
    if (c->monitor_prev) c->monitor_prev->monitor_next = c->monitor_next;
    else s->monitors = c->monitor_next;
    if (c->monitor_next) c->monitor_next->monitor_prev = c->monitor_prev;
    c->monitor_prev = c->monitor_next = NULL;
    if (!s->monitors) resp_buf_free(&s->monitor_line);
}

/* Redis's sdscatrepr: quoted, with C escapes and \xHH for the rest. */
static void append_repr(resp_buf *b, const char *p, size_t len)
{
    char esc[8];
    resp_buf_append(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        const char *named = ch == '\\' ? "\\\\" : ch == '"' ? "\\\"" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r"
                          : ch == '\t' ? "\\t" : ch == '\a' ? "\\a" : ch == '\b' ? "\\b" : NULL;
        if (named) resp_buf_append(b, named, 2);
        else if (isprint(ch)) resp_buf_append(b, &p[i], 1);
        else resp_buf_append(b, esc, (size_t)snprintf(esc, sizeof(esc), "\\x%02x", ch));
    }
    resp_buf_append(b, "\"", 1);
}

/* AUTH's arguments, and the two after HELLO's AUTH option, never reach
 * a monitor; HELLO's options are walked as HELLO parses them. */
static int redacted(const client *c, int i)
{
    if (!strcmp(c->cmd->name, "auth")) return 1;
    if (strcmp(c->cmd->name, "hello") != 0) return 0;
    for (int j = 2; j < i && j < c->argc;) {
        if (arg_is(&c->argv[j], "auth") && j + 2 < c->argc) {
            if (i <= j + 2) return 1;
            j += 3;
        } else if (arg_is(&c->argv[j], "setname") && j + 1 < c->argc) {
            j += 2;
        } else {
            return 0;
        }
    }
    return 0;
}

static void append_origin(resp_buf *b, const client *c)
{
    const server *s = c->srv;
    char head[96];
    uint64_t us = server_clock_us((server *)s);
    int n = snprintf(head, sizeof(head), "+%llu.%06llu [%d ", (unsigned long long)(us / 1000000u),
                     (unsigned long long)(us % 1000000u), c->db);
    resp_buf_append(b, head, (size_t)n);
    if (s->scripts && c == s->scripts->self) resp_buf_append(b, "lua", 3);
    else if (c->flags & CLIENT_UNIX) {
        resp_buf_append(b, "unix:", 5);
        resp_buf_append(b, s->cfg.unixsocket, strlen(s->cfg.unixsocket));
    } else resp_buf_append(b, c->addr, strlen(c->addr));
    resp_buf_append(b, "] ", 2);
}

static void encode_line(resp_buf *b, const client *c)
{
    b->len = 0;
    append_origin(b, c);
    for (int i = 0; i < c->argc; i++) {
        if (i) resp_buf_append(b, " ", 1);
        if (i && redacted(c, i)) append_repr(b, "(redacted)", 10);
        else append_repr(b, c->argv[i].ptr, c->argv[i].len);
    }
    resp_buf_append(b, "\r\n", 2);
}

/* Admin commands (CONFIG, CLIENT KILL, DEBUG, MONITOR, ...) are too
 * sensitive to show; a container whose subcommand was refused never ran. */
static int shown(const client *c)
{
    if (c->cmd->flags & CMD_CONTAINER && c->argc > 1 && !c->sub) return 0;
    return !((c->sub ? c->sub : c->cmd)->flags & CMD_ADMIN);
}

void monitor_command(client *c)
{
    server *s = c->srv;
    if (!s->monitors || !shown(c)) return;
    encode_line(&s->monitor_line, c);
    shared_frame *shared = NULL;
    for (client *m = s->monitors, *next; m; m = next) {
        next = m->monitor_next;
        client_add_frame(m, s->monitor_line.data, s->monitor_line.len, &shared);
        if (!client_output_within_limit(m) && m != c) client_close(m);
    }
    frame_release(shared);
}
