/* reply.c - command replies: every reply goes through client_out(), which
 * honours CLIENT REPLY OFF/SKIP and queues the client for one flush. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server.h"

int client_replies_on(const client *c)
{
    return !(c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_CLOSING));
}

resp_buf *client_out(client *c)
{
    if (!client_replies_on(c)) return NULL;
    client_schedule_write(c);
    return &c->out;
}

#define OUT_OR_RETURN(c) \
    resp_buf *b = client_out(c); \
    if (!b) return

void reply_ok(client *c) { reply_status(c, "OK"); }

void reply_status(client *c, const char *s)
{
    OUT_OR_RETURN(c);
    resp_add_status(b, s);
}

void reply_error(client *c, const char *s)
{
    OUT_OR_RETURN(c);
    resp_add_error(b, s, strlen(s));
}

void reply_errorf(client *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    reply_error(c, msg);
}

void reply_int(client *c, long long v)
{
    OUT_OR_RETURN(c);
    resp_add_int(b, v);
}

void reply_bulk(client *c, const void *p, size_t len)
{
    OUT_OR_RETURN(c);
    resp_add_bulk(b, p, len);
}

void reply_bulk_cstr(client *c, const char *s) { reply_bulk(c, s, strlen(s)); }

void reply_bulk_ll(client *c, long long v)
{
    OUT_OR_RETURN(c);
    resp_add_bulk_ll(b, v);
}

void reply_null(client *c)
{
    OUT_OR_RETURN(c);
    resp_add_null(b, c->proto);
}

/* RESP2 *-1 (as opposed to $-1), RESP3 _ */
void reply_null_array(client *c)
{
    OUT_OR_RETURN(c);
    resp_add_null_array(b, c->proto);
}

/* RESP2 bulk "%.17g", RESP3 ",%.17g" (sorted set scores) */
void reply_double(client *c, double d)
{
    OUT_OR_RETURN(c);
    resp_add_double(b, c->proto, d);
}

void reply_array(client *c, long long n)
{
    OUT_OR_RETURN(c);
    resp_add_array_len(b, n);
}

void reply_map(client *c, long long n)
{
    OUT_OR_RETURN(c);
    resp_add_map_len(b, c->proto, n);
}

void reply_set(client *c, long long n)
{
    OUT_OR_RETURN(c);
    resp_add_set_len(b, c->proto, n);
}

void reply_verbatim(client *c, const char *p, size_t len)
{
    OUT_OR_RETURN(c);
    resp_add_verbatim(b, c->proto, "txt", p, len);
}

/* Redis names subcommands "container|sub" in its error texts. */
static void full_name(client *c, char *dst, size_t len)
{
    if (c->argc >= 2 && c->cmd && (c->cmd->flags & CMD_CONTAINER))
        snprintf(dst, len, "%s|%.*s", c->cmd->name, (int)c->argv[1].len, c->argv[1].ptr);
    else
        snprintf(dst, len, "%.*s", (int)c->argv[0].len, c->argv[0].ptr);
    for (char *p = dst; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p += 'a' - 'A';
}

void reply_arity_error(client *c)
{
    char name[128];
    full_name(c, name, sizeof(name));
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", name);
}

void reply_syntax_error(client *c) { reply_error(c, "ERR syntax error"); }

void reply_wrongtype(client *c)
{
    reply_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

void reply_not_integer(client *c) { reply_error(c, "ERR value is not an integer or out of range"); }

void reply_unknown_subcommand(client *c)
{
    char upper[64];
    snprintf(upper, sizeof(upper), "%s", c->cmd->name);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p -= 'a' - 'A';
    int len = c->argc > 1 ? (int)(c->argv[1].len < 128 ? c->argv[1].len : 128) : 0;
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                 len, c->argc > 1 ? c->argv[1].ptr : "", upper);
}
