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

char *arg_strdup(const resp_slice *a) { return mem_strndup(a->ptr, a->len); }

void subcommand_dispatch(client *c, const subcommand *table, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!arg_is(&c->argv[1], table[i].name)) continue;
        int a = table[i].arity;
        if (a > 0 ? c->argc != a : c->argc < -a) {
            reply_subcommand_arity_error(c);
            return;
        }
        table[i].proc(c);
        return;
    }
    reply_unknown_subcommand(c);
}
