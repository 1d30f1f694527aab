/* embed_lock.c - latchd.h's native lock API: Redisson's RFencedLock
 * acquire, RLock renew and unlock (with its publish), run on the server's
 * loop through store/lock.h, the functions the lock scripts run. */
#include <string.h>

#include "embed.h"
#include "lock.h"
#include "num.h"
#include "scripting/script.h"

typedef struct lock_call {
    embed_call base;           /* first: the loop gets the call back as this */
    const char *name, *owner;
    size_t nlen, olen;
    long long lease_ms;
    latchd_lock_state *out;
} lock_call;

/* Redisson's prefixName(prefix, name): "prefix:{name}", or "prefix:name"
 * when name has a brace already. Built in the server's scratch buffer. */
static const resp_buf *derived_name(latchd_server *srv, const char *prefix, const lock_call *c)
{
    resp_buf *b = &srv->scratch;
    int braces = memchr(c->name, '{', c->nlen) == NULL;
    b->len = 0;
    resp_buf_append(b, prefix, strlen(prefix));
    if (braces) resp_buf_append(b, "{", 1);
    resp_buf_append(b, c->name, c->nlen);
    if (braces) resp_buf_append(b, "}", 1);
    return b;
}

/* The owner's holds after a successful call (the lock is a hash we just
 * checked, so this cannot fail). */
static void report_holds(latchd_server *srv, lock_call *c)
{
    long long holds = 0;
    store_lock_holds(srv->s.dbs[0].st, c->name, c->nlen, c->owner, c->olen, &holds);
    c->out->holds = holds;
}

static void run_acquire(latchd_server *srv, embed_call *base)
{
    lock_call *c = (lock_call *)base;
    const resp_buf *tkey = derived_name(srv, "redisson_lock_token:", c);
    long long pttl = -1, token = -1;
    int r = store_lock_fenced_acquire(srv->s.dbs[0].st, c->name, c->nlen, tkey->data, tkey->len, c->owner,
                                      c->olen, c->lease_ms, &pttl, &token);
    if (r == STORE_LOCK_FALLBACK) {
        base->st = LATCHD_ERR_WRONGTYPE;
    } else if (r == 0) {
        base->st = LATCHD_LOCK_HELD;
        c->out->ttl_ms = pttl;
    } else {
        base->st = LATCHD_OK;
        c->out->token = token;
        report_holds(srv, c);
    }
}

static void run_renew(latchd_server *srv, embed_call *base)
{
    lock_call *c = (lock_call *)base;
    int r = store_lock_renew(srv->s.dbs[0].st, c->name, c->nlen, c->owner, c->olen, c->lease_ms);
    base->st = r == STORE_LOCK_FALLBACK ? LATCHD_ERR_WRONGTYPE : r ? LATCHD_OK : LATCHD_LOCK_NOT_HELD;
    if (base->st == LATCHD_OK) report_holds(srv, c);
}

/* The unlock script's PUBLISH of LockPubSub.UNLOCK_MESSAGE, through the
 * same path a script's redis.call('publish', ...) takes. */
static void publish_unlock(latchd_server *srv, lock_call *c)
{
    static const resp_slice publish = {"publish", 7}, message = {"0", 1};
    const resp_buf *chan = derived_name(srv, "redisson_lock__channel:", c);
    resp_slice ch = {chan->data, chan->len};
    script_publish(&srv->s, script_publish_command(&publish), &publish, &ch, &message);
}

static void run_release(latchd_server *srv, embed_call *base)
{
    lock_call *c = (lock_call *)base;
    int r = store_lock_release(srv->s.dbs[0].st, c->name, c->nlen, c->owner, c->olen, c->lease_ms);
    if (r == STORE_LOCK_FALLBACK) {
        base->st = LATCHD_ERR_WRONGTYPE;
    } else if (r == -1) {
        base->st = LATCHD_LOCK_NOT_HELD;
    } else {
        base->st = LATCHD_OK;
        report_holds(srv, c);
        if (r == 1) publish_unlock(srv, c);
    }
}

/* A lease the lock scripts would take: the same check, on its digits. */
static int lease_ok(int64_t ms)
{
    char digits[24];
    long long parsed;
    size_t n = store_ll2str(digits, (long long)ms);
    return store_lock_parse_ttl(digits, n, &parsed);
}

static latchd_status lock_op(latchd_server *srv, const char *name, const char *owner, int64_t lease_ms,
                             latchd_lock_state *out, void (*fn)(latchd_server *, embed_call *))
{
    latchd_lock_state ignored;
    if (!out) out = &ignored;
    out->holds = 0;
    out->token = out->ttl_ms = -1;
    if (!srv || !name || !owner || !name[0] || !owner[0] || !lease_ok(lease_ms)) return LATCHD_ERR_ARG;
    size_t name_len = strlen(name), owner_len = strlen(owner);
    if (name_len > STORE_MAX_LEN || owner_len > STORE_MAX_LEN) return LATCHD_ERR_ARG;
    lock_call c = {{fn, LATCHD_ERR_STATE, 0, NULL}, name, owner, name_len, owner_len,
                   (long long)lease_ms, out};
    return embed_run(srv, &c.base);
}

latchd_status latchd_lock_acquire(latchd_server *srv, const char *name, const char *owner,
                                  int64_t lease_ms, latchd_lock_state *out)
{
    return lock_op(srv, name, owner, lease_ms, out, run_acquire);
}

latchd_status latchd_lock_renew(latchd_server *srv, const char *name, const char *owner,
                                int64_t lease_ms, latchd_lock_state *out)
{
    return lock_op(srv, name, owner, lease_ms, out, run_renew);
}

latchd_status latchd_lock_release(latchd_server *srv, const char *name, const char *owner,
                                  int64_t lease_ms, latchd_lock_state *out)
{
    return lock_op(srv, name, owner, lease_ms, out, run_release);
}
