/* reply.c - command replies: every reply goes through client_out(), which
 * honours CLIENT REPLY OFF/SKIP and queues the client for one flush. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "server.h"

/* Pushes (pub/sub confirmations) go out even with CLIENT REPLY OFF/SKIP,
 * as in Redis; nothing goes to a client on its way out. */
int client_replies_on(const client *c)
{
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP)) return 0;
    return (c->flags & CLIENT_PUSHING) || !(c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP));
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

void reply_human_double(client *c, long double d)
{
    char buf[STORE_LD_STR_MAX];
    size_t n = store_ld2str(buf, d);
    OUT_OR_RETURN(c);
    resp_add_double_text(b, c->proto, buf, n);
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

void reply_push(client *c, long long n)
{
    OUT_OR_RETURN(c);
    resp_add_push_len(b, c->proto, n);
}

void reply_verbatim(client *c, const char *p, size_t len)
{
    OUT_OR_RETURN(c);
    resp_add_verbatim(b, c->proto, "txt", p, len);
}

void reply_bool(client *c, int v)
{
    OUT_OR_RETURN(c);
    resp_add_bool(b, c->proto, v);
}

void reply_bignum(client *c, const char *digits, size_t len)
{
    OUT_OR_RETURN(c);
    resp_add_bignum(b, c->proto, digits, len);
}

void reply_attribute(client *c, long long n)
{
    OUT_OR_RETURN(c);
    resp_add_attribute_len(b, n);
}

void reply_resp3(client *c, const char *p, size_t len)
{
    OUT_OR_RETURN(c);
    if (c->proto >= 3) {
        resp_buf_append(b, p, len);
        return;
    }
    const char *end = p + len;
    resp_reply r;
    while (p < end && resp_read_reply(&p, end, &r)) {
        switch (r.type) {
        case '%': resp_add_map_len(b, 2, r.n); break;
        case '~': resp_add_set_len(b, 2, r.n); break;
        case '*': resp_add_array_len(b, r.n); break;
        case ':': resp_add_int(b, r.n); break;
        case '#': resp_add_bool(b, 2, (int)r.n); break;
        case '_': resp_add_null(b, 2); break;
        case '+': resp_add_simple(b, r.str, r.len); break;
        case ',': case '(': case '=': case '$': resp_add_bulk(b, r.str, r.len); break;
        default: break;   /* never in what the tables hold */
        }
    }
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

/* The command's name in capitals, as Redis's "Try CLIENT HELP." */
static void upper_name(const client *c, char *dst, size_t len)
{
    snprintf(dst, len, "%s", c->cmd->name);
    for (char *p = dst; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p -= 'a' - 'A';
}

/* argv[1] quoted as Redis does: a C string of at most 128 bytes. */
static int sub_len(const client *c)
{
    return c->argc > 1 ? (int)strnlen(c->argv[1].ptr, c->argv[1].len < 128 ? c->argv[1].len : 128) : 0;
}

void reply_unknown_subcommand(client *c)
{
    char upper[64];
    upper_name(c, upper, sizeof(upper));
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.", sub_len(c), c->argc > 1 ? c->argv[1].ptr : "",
                 upper);
}

void reply_subcommand_syntax_error(client *c)
{
    char upper[64];
    upper_name(c, upper, sizeof(upper));
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.", sub_len(c),
                 c->argc > 1 ? c->argv[1].ptr : "", upper);
}

void reply_help(client *c, const char *const *lines, size_t n)
{
    char upper[64], head[128];
    upper_name(c, upper, sizeof(upper));
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", upper);
    reply_array(c, (long long)n + 3);
    reply_status(c, head);
    for (size_t i = 0; i < n; i++) reply_status(c, lines[i]);
    reply_status(c, "HELP");
    reply_status(c, "    Prints this help.");
}
