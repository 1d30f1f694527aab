/* args.c - reading command arguments (RESP slices, not NUL-terminated)
 * with the error replies Redis gives for each kind of bad argument. */
#include <string.h>
#include <strings.h>

#include "mem.h"
#include "num.h"
#include "server.h"

int arg_is(const resp_slice *a, const char *lit)
{
    size_t n = strlen(lit);
    return a->len == n && strncasecmp(a->ptr, lit, n) == 0;
}

int arg_ll_or_reply(client *c, const resp_slice *a, long long *out)
{
    if (store_str2ll(a->ptr, a->len, out)) return 1;
    reply_not_integer(c);
    return 0;
}

int arg_positive_or_reply(client *c, const resp_slice *a, long long *out)
{
    if (store_str2ll(a->ptr, a->len, out) && *out >= 0) return 1;
    reply_error(c, "ERR value is out of range, must be positive");
    return 0;
}

int arg_index_range(long long start, long long end, size_t len, size_t *first, size_t *n)
{
    long long llen = (long long)len;
    if (start < 0) start = llen + start;
    if (end < 0) end = llen + end;
    if (start < 0) start = 0;
    if (start > end || start >= llen) return 0;
    if (end >= llen) end = llen - 1;
    *first = (size_t)start;
    *n = (size_t)(end - start + 1);
    return 1;
}

char *arg_strdup(const resp_slice *a) { return mem_strndup(a->ptr, a->len); }

const command *subcommand_in(const command *subs, const char *name, size_t len)
{
    resp_slice a = {name, len};
    for (const command *sub = subs; sub && sub->name; sub++)
        if (arg_is(&a, sub->name)) return sub;
    return NULL;
}

const command *subcommand_lookup(const command *container, const char *name, size_t len)
{
    return subcommand_in(container->subs, name, len);
}

const command *subcommand_find_or_reply(client *c)
{
    const command *sub = subcommand_lookup(c->cmd, c->argv[1].ptr, c->argv[1].len);
    if (!sub) {
        reply_unknown_subcommand(c);
        return NULL;
    }
    if (!command_arity_ok(sub, c->argc)) {
        reply_arity_error(c);
        return NULL;
    }
    return sub;
}

void subcommand_dispatch(client *c)
{
    const command *sub = subcommand_find_or_reply(c);
    if (!sub) return;
    c->sub = sub;
    if (c->last_cmd == c->cmd) c->last_sub = sub;   /* inside EXEC, CLIENT LIST shows "exec" */
    sub->proc(c);
}
