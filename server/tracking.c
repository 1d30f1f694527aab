/* tracking.c - client-side caching as Redis 7.0 does it (CLIENT TRACKING):
 * the table of keys clients may cache, BCAST prefixes, and invalidations. */
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "dict.h"
#include "mem.h"
#include "num.h"
#include "scripting/script.h"

/* A client as the tracking table and redirections know it: outlives the
 * client while referenced, so a disconnect never walks the table (Redis
 * keeps client ids there for the same reason). */
struct tracking_ref {
    client *c;          /* NULL once the client is gone */
    uint64_t id;
    size_t refs;        /* the client itself, table entries, redirecting clients */
};

/* A key some clients may cache, with a set of their refs (open
 * addressing, power-of-two capacity). */
typedef struct tracked_key {
    store_dict_node node;
    tracking_ref **slots;
    uint32_t cap, n;
    char name[];
} tracked_key;

/* A key modified since the last broadcast, under one prefix; by is the
 * client that changed it last (NOLOOP), NULL for expiry and scripts. */
typedef struct bcast_key {
    store_dict_node node;
    client *by;
    char name[];
} bcast_key;

/* A BCAST prefix: its clients and the keys changed under it this loop
 * iteration. */
typedef struct bcast_prefix {
    client **clients;
    size_t nclients, cap;
    store_dict keys;
    size_t len;
    char name[];
} bcast_prefix;

/* A tracking client's settings. */
struct tracking_client {
    tracking_ref *redir;       /* REDIRECT's client, or NULL */
    bcast_prefix **prefixes;   /* BCAST: the prefixes it listens to */
    size_t nprefixes, cap;
};

struct tracking_state {
    store_dict table;          /* tracked_key by name (every database's) */
    bcast_prefix **prefixes;
    size_t nprefixes, cap;
    size_t bcast_pending;      /* keys waiting in the prefixes' dicts */
    unsigned effort_rounds;    /* trimming rounds in a row still over the limit */
    int trimming;              /* tracking-table-max-keys at work: no command runs */
    resp_buf pending;          /* invalidations for the running client, after its reply:
                                * per key a size_t length then the bytes, SIZE_MAX = flush */
    client *pending_for;       /* whose they are (a busy script's caller, while others run) */
    client *doomed;            /* targets over their output limit, closed when safe */
};

#define FLUSH_MARK ((size_t)-1)

void tracking_init(server *s)
{
    s->tracking = mem_calloc(1, sizeof(*s->tracking));
    store_dict_init(&s->tracking->table, STORE_DICT_KEY_OFF(tracked_key, node, name), STORE_DICT_KEY_INLINE);
    resp_buf_init(&s->tracking->pending);
}

static void ref_drop(tracking_ref *r)
{
    if (r && --r->refs == 0) free(r);
}

static void drop_tracked_key(store_dict_node *n, void *ctx)
{
    tracked_key *k = (tracked_key *)n;
    (void)ctx;
    for (uint32_t i = 0; i < k->cap; i++) ref_drop(k->slots[i]);
    free(k->slots);
    free(k);
}

static void drop_bcast_key(store_dict_node *n, void *ctx)
{
    (void)ctx;
    free(n);
}

/* Clients leave before the server is freed: no prefix is left. */
void tracking_free(server *s)
{
    struct tracking_state *t = s->tracking;
    if (!t) return;
    store_dict_clear(&t->table, drop_tracked_key, NULL);
    free(t->prefixes);
    resp_buf_free(&t->pending);
    free(t);
    s->tracking = NULL;
}

static tracking_ref *ref_of(client *c)
{
    if (!c->tref) {
        c->tref = mem_calloc(1, sizeof(*c->tref));
        c->tref->c = c;
        c->tref->id = c->id;
        c->tref->refs = 1;
    }
    return c->tref;
}

/* ---- the table ---- */

static uint32_t slot_of(const tracking_ref *r, uint32_t cap)
{
    return (uint32_t)(((uintptr_t)r >> 4) * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* 1 if r was added, 0 if the key had it already. */
static int key_add_ref(tracked_key *k, tracking_ref *r)
{
    if ((k->n + 1) * 4 > k->cap * 3) {
        uint32_t ocap = k->cap;
        tracking_ref **old = k->slots;
        k->cap = ocap ? ocap * 2 : 4;
        k->slots = mem_calloc(k->cap, sizeof(*k->slots));
        for (uint32_t i = 0; i < ocap; i++) {
            if (!old[i]) continue;
            uint32_t j = slot_of(old[i], k->cap);
            while (k->slots[j]) j = (j + 1) & (k->cap - 1);
            k->slots[j] = old[i];
        }
        free(old);
    }
    uint32_t j = slot_of(r, k->cap);
    while (k->slots[j]) {
        if (k->slots[j] == r) return 0;
        j = (j + 1) & (k->cap - 1);
    }
    k->slots[j] = r;
    k->n++;
    r->refs++;
    return 1;
}

static void remember_key(server *s, client *c, const resp_slice *key)
{
    struct tracking_state *t = s->tracking;
    tracked_key *k = (tracked_key *)store_dict_find(&t->table, key->ptr, key->len);
    if (!k) {
        k = mem_calloc(1, sizeof(*k) + key->len + 1);
        memcpy(k->name, key->ptr, key->len);
        k->node.keylen = store_dict_keylen(key->len);
        store_dict_insert(&t->table, &k->node);
        s->tracking_keys++;
    }
    s->tracking_items += key_add_ref(k, ref_of(c));
}

/* A numkeys argument at argv[at] followed by that many keys: how many of
 * them argc holds, 0 when it is not a count that fits. */
static int numkeys_at(const client *c, int at)
{
    long long n;
    if (at >= c->argc || !store_str2ll(c->argv[at].ptr, c->argv[at].len, &n)) return 0;
    if (n <= 0 || n > c->argc - at - 1) return 0;
    return (int)n;
}

/* The keys of c's current command, as Redis's getKeysFromCommand finds
 * them: *first, the count and the step. */
static int command_keys(const client *c, int *first, int *step)
{
    const command *cmd = c->cmd;
    *step = 1;
    if (cmd->proc == cmd_eval || cmd->proc == cmd_evalsha || cmd->proc == cmd_eval_ro || cmd->proc == cmd_evalsha_ro) {
        *first = 3;   /* the script's declared keys, after its numkeys */
        return numkeys_at(c, 2);
    }
    if (cmd->proc == cmd_xread) return stream_xread_keys(c->argv, c->argc, first);
    if (cmd->flags & CMD_MOVABLE_KEYS) {
        if (cmd->first_key > 0) {   /* SORT_RO: its key, the BY/GET patterns are none */
            *first = cmd->first_key;
            return c->argc > cmd->first_key;
        }
        *first = 2;   /* numkeys first (ZUNION, SINTERCARD ...) */
        return numkeys_at(c, 1);
    }
    if (cmd->first_key <= 0) return 0;
    int last = cmd->last_key < 0 ? c->argc + cmd->last_key : cmd->last_key;
    if (last >= c->argc) last = c->argc - 1;
    *first = cmd->first_key;
    *step = cmd->key_step > 0 ? cmd->key_step : 1;
    return last < cmd->first_key ? 0 : (last - cmd->first_key) / *step + 1;
}

void tracking_remember_keys(client *c)
{
    unsigned f = c->flags;
    if (f & CLIENT_TRACKING_BCAST) return;
    if ((f & CLIENT_TRACKING_OPTIN) && !(f & CLIENT_TRACKING_CACHING)) return;
    if ((f & CLIENT_TRACKING_OPTOUT) && (f & CLIENT_TRACKING_CACHING)) return;
    if (c->cmd->flags & CMD_PUBSUB) return;
    int first, step;
    int n = command_keys(c, &first, &step);
    for (int i = 0; i < n; i++) remember_key(c->srv, c, &c->argv[first + i * step]);
}

void tracking_command_done(client *c)
{
    const command *cmd = c->cmd;
    if (!(cmd->flags & CMD_READONLY)) return;
    /* a read-only script is tracked by the reads it makes */
    if (cmd->proc == cmd_eval_ro || cmd->proc == cmd_evalsha_ro) return;
    tracking_remember_keys(c);
}

/* ---- invalidation messages ---- */

static client *live(const tracking_ref *r)
{
    return r && r->c && !(r->c->flags & CLIENT_CLOSING) ? r->c : NULL;
}

static void check_limit(server *s, client *t)
{
    if (t->flags & CLIENT_CLOSE_ASAP || client_output_within_limit(t)) return;
    t->asap_next = s->tracking->doomed;
    s->tracking->doomed = t;
}

/* Redis's sendTrackingMessage: to c, or where c redirects; keys is either
 * one key name or (raw) the encoded array of keys or a null. */
static void send_message(server *s, client *c, const char *keys, size_t len, int raw)
{
    client *to = c;
    unsigned old = c->flags;
    int redirected = c->tracking && c->tracking->redir;
    if (redirected) {
        to = live(c->tracking->redir);
        if (!to) {
            c->flags |= CLIENT_TRACKING_BROKEN_REDIR;
            if (c->proto > 2) {
                c->flags |= CLIENT_PUSHING;
                reply_push(c, 2);
                reply_bulk(c, "tracking-redir-broken", 21);
                reply_int(c, (long long)c->tracking->redir->id);
                c->flags = (c->flags & ~CLIENT_PUSHING) | (old & CLIENT_PUSHING);
                check_limit(s, c);
            }
            return;
        }
        old = to->flags;
    }
    if (to->proto > 2) {
        to->flags |= CLIENT_PUSHING;
        reply_push(to, 2);
        reply_bulk(to, "invalidate", 10);
    } else if (redirected && (to->flags & CLIENT_PUBSUB)) {
        to->flags |= CLIENT_PUSHING;
        reply_push(to, 3);
        reply_bulk(to, "message", 7);
        reply_bulk(to, "__redis__:invalidate", 20);
    } else {
        return;   /* RESP2 has no pushes on the client's own connection */
    }
    resp_buf *b = client_out(to);
    if (b && raw) {
        resp_buf_append(b, keys, len);
    } else if (b) {
        resp_add_array_len(b, 1);
        resp_add_bulk(b, keys, len);
    }
    to->flags = (to->flags & ~CLIENT_PUSHING) | (old & CLIENT_PUSHING);
    check_limit(s, to);
}

static const char *null_for(const client *c, size_t *len)
{
    *len = c->proto > 2 ? 3 : 5;
    return c->proto > 2 ? "_\r\n" : "$-1\r\n";
}

static void pend(server *s, const char *key, size_t len)
{
    resp_buf *p = &s->tracking->pending;
    s->tracking->pending_for = s->current_client;
    resp_buf_append(p, &len, sizeof(len));
    if (len != FLUSH_MARK) resp_buf_append(p, key, len);
}

/* Redis's trackingInvalidateKey for the normal-mode clients of one key
 * (the table forgets it: they fetch it again to cache it again). */
static void invalidate_tracked(server *s, const char *key, size_t len)
{
    struct tracking_state *t = s->tracking;
    tracked_key *k = (tracked_key *)store_dict_remove(&t->table, key, len);
    if (!k) return;
    s->tracking_keys--;
    s->tracking_items -= k->n;
    client *cur = s->current_client;
    for (uint32_t i = 0; i < k->cap; i++) {
        client *c = live(k->slots[i]);
        if (!c || !(c->flags & CLIENT_TRACKING) || (c->flags & CLIENT_TRACKING_BCAST)) continue;
        if (c == cur && (c->flags & CLIENT_TRACKING_NOLOOP)) continue;
        if (c == cur && !t->trimming) pend(s, key, len);   /* after the command's reply */
        else send_message(s, c, key, len, 0);
    }
    drop_tracked_key(&k->node, NULL);
}

static void bcast_note(server *s, const char *key, size_t len, client *by)
{
    struct tracking_state *t = s->tracking;
    for (size_t i = 0; i < t->nprefixes; i++) {
        bcast_prefix *p = t->prefixes[i];
        if (p->len > len || memcmp(p->name, key, p->len) != 0) continue;
        bcast_key *k = (bcast_key *)store_dict_find(&p->keys, key, len);
        if (!k) {
            k = mem_calloc(1, sizeof(*k) + len + 1);
            memcpy(k->name, key, len);
            k->node.keylen = store_dict_keylen(len);
            store_dict_insert(&p->keys, &k->node);
            t->bcast_pending++;
        }
        k->by = by;
    }
}

void tracking_key_changed(server *s, const char *key, size_t len, int expired)
{
    if (s->tracking->nprefixes) {
        /* Redis records the client whose command changed the key: a
         * script's commands run as the script's own client */
        client *by = expired || (s->scripts && s->scripts->running) ? NULL : s->current_client;
        bcast_note(s, key, len, by);
    }
    if (s->tracking_keys) invalidate_tracked(s, key, len);
}

void tracking_flushed(server *s)
{
    if (s->tracking_clients) {
        for (client *c = s->clients; c; c = c->next) {
            if (!(c->flags & CLIENT_TRACKING)) continue;
            if (c == s->current_client) {
                pend(s, NULL, FLUSH_MARK);
            } else {
                size_t len;
                const char *null = null_for(c, &len);
                send_message(s, c, null, len, 1);
            }
        }
    }
    store_dict_clear(&s->tracking->table, drop_tracked_key, NULL);
    s->tracking_keys = 0;
    s->tracking_items = 0;
}

static void close_doomed(server *s)
{
    while (s->tracking->doomed) {
        client *c = s->tracking->doomed;
        s->tracking->doomed = c->asap_next;
        client_close(c);
    }
}

void tracking_after_command(client *c)
{
    server *s = c->srv;
    resp_buf *p = &s->tracking->pending;
    /* another client's (a busy script's caller) wait for its command's end */
    if (p->len && s->tracking->pending_for == c) {
        for (size_t at = 0; at < p->len;) {
            size_t len;
            memcpy(&len, p->data + at, sizeof(len));
            at += sizeof(len);
            if (len == FLUSH_MARK) {
                size_t nlen;
                const char *null = null_for(c, &nlen);
                send_message(s, c, null, nlen, 1);
            } else {
                send_message(s, c, p->data + at, len, 0);
                at += len;
            }
        }
        p->len = 0;
    }
    close_doomed(s);
}

/* ---- tracking-table-max-keys ---- */

/* Redis's cron goes on trimming while no command comes: the flush does it. */
static void on_tracking_timer(uv_timer_t *h) { net_flush_pending(h->data); }

/* Between commands, trimming is the cron's work (DEBUG PAUSE-CRON stops
 * it); before a command it always runs. */
static void cron_limit(server *s)
{
    if (!s->cron_paused) tracking_limit(s);
}

void tracking_limit(server *s)
{
    struct tracking_state *t = s->tracking;
    long long max = s->cfg.tracking_table_max_keys;
    if (max == 0 || s->tracking_keys <= (size_t)max) {
        t->effort_rounds = 0;
        return;
    }
    /* Redis's effort: 100 keys more each time it is still over */
    for (unsigned effort = 100 * (t->effort_rounds + 1); effort > 0; effort--) {
        tracked_key *k = (tracked_key *)store_dict_random(&t->table, server_random(s));
        if (!k) break;
        t->trimming = 1;   /* between commands: sent at once (NOLOOP still spares the current client) */
        invalidate_tracked(s, k->name, k->node.keylen);   /* k goes last, after its name is sent */
        t->trimming = 0;
        if (s->tracking_keys <= (size_t)max) {
            t->effort_rounds = 0;
            close_doomed(s);
            return;
        }
    }
    t->effort_rounds++;
    close_doomed(s);
    if (!uv_is_active((uv_handle_t *)&s->tracking_timer))
        uv_timer_start(&s->tracking_timer, on_tracking_timer, s->cfg.hz > 0 ? (uint64_t)(1000 / s->cfg.hz) : 100, 0);
}

/* ---- BCAST ---- */

static int cmp_key(const void *a, const void *b)
{
    const bcast_key *x = *(bcast_key *const *)a, *y = *(bcast_key *const *)b;
    size_t n = x->node.keylen < y->node.keylen ? x->node.keylen : y->node.keylen;
    int r = memcmp(x->name, y->name, n);
    return r ? r : (x->node.keylen > y->node.keylen) - (x->node.keylen < y->node.keylen);
}

static void collect_key(store_dict_node *n, void *ctx)
{
    bcast_key ***at = ctx;
    *(*at)++ = (bcast_key *)n;
}

/* The keys (sorted, as Redis's radix tree gives them) other than those
 * `skip` changed last, as an array; 0 when none is left. */
static size_t build_keys(resp_buf *b, bcast_key **keys, size_t n, const client *skip)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += !skip || keys[i]->by != skip;
    b->len = 0;
    if (!count) return 0;
    resp_add_array_len(b, (long long)count);
    for (size_t i = 0; i < n; i++)
        if (!skip || keys[i]->by != skip) resp_add_bulk(b, keys[i]->name, keys[i]->node.keylen);
    return count;
}

static void broadcast_prefix(server *s, bcast_prefix *p, resp_buf *all, resp_buf *own)
{
    size_t n = store_dict_size(&p->keys);
    if (!n) return;
    bcast_key **keys = mem_alloc(n * sizeof(*keys)), **at = keys;
    store_dict_foreach(&p->keys, collect_key, &at);
    qsort(keys, n, sizeof(*keys), cmp_key);
    build_keys(all, keys, n, NULL);
    for (size_t i = 0; i < p->nclients; i++) {
        client *c = p->clients[i];
        if (!(c->flags & CLIENT_TRACKING_NOLOOP)) send_message(s, c, all->data, all->len, 1);
        else if (build_keys(own, keys, n, c)) send_message(s, c, own->data, own->len, 1);
    }
    free(keys);
    store_dict_clear(&p->keys, drop_bcast_key, NULL);
}

void tracking_before_sleep(server *s)
{
    struct tracking_state *t = s->tracking;
    cron_limit(s);
    if (!t->bcast_pending) {
        close_doomed(s);   /* over their limit by an expiry's invalidation, say */
        return;
    }
    resp_buf all, own;
    resp_buf_init(&all);
    resp_buf_init(&own);
    for (size_t i = 0; i < t->nprefixes; i++) broadcast_prefix(s, t->prefixes[i], &all, &own);
    resp_buf_free(&all);
    resp_buf_free(&own);
    t->bcast_pending = 0;
    close_doomed(s);
}

static bcast_prefix *prefix_find(struct tracking_state *t, const char *p, size_t len, size_t *idx)
{
    for (size_t i = 0; i < t->nprefixes; i++)
        if (t->prefixes[i]->len == len && !memcmp(t->prefixes[i]->name, p, len)) {
            if (idx) *idx = i;
            return t->prefixes[i];
        }
    return NULL;
}

#define GROW(v, n, cap)                                                     \
    do {                                                                    \
        if ((n) == (cap)) {                                                 \
            (cap) = (cap) ? (cap) * 2 : 4;                                  \
            (v) = mem_realloc((v), (cap) * sizeof(*(v)));                   \
        }                                                                   \
    } while (0)

static void prefix_subscribe(server *s, client *c, const char *name, size_t len)
{
    struct tracking_state *t = s->tracking;
    struct tracking_client *tc = c->tracking;
    bcast_prefix *p = prefix_find(t, name, len, NULL);
    if (!p) {
        p = mem_calloc(1, sizeof(*p) + len + 1);
        memcpy(p->name, name, len);
        p->len = len;
        store_dict_init(&p->keys, STORE_DICT_KEY_OFF(bcast_key, node, name), STORE_DICT_KEY_INLINE);
        GROW(t->prefixes, t->nprefixes, t->cap);
        t->prefixes[t->nprefixes++] = p;
        s->tracking_prefixes++;
    }
    for (size_t i = 0; i < tc->nprefixes; i++)
        if (tc->prefixes[i] == p) return;
    GROW(p->clients, p->nclients, p->cap);
    p->clients[p->nclients++] = c;
    GROW(tc->prefixes, tc->nprefixes, tc->cap);
    tc->prefixes[tc->nprefixes++] = p;
}

static void prefix_unsubscribe(server *s, client *c, bcast_prefix *p)
{
    struct tracking_state *t = s->tracking;
    for (size_t i = 0; i < p->nclients; i++)
        if (p->clients[i] == c) {
            p->clients[i] = p->clients[--p->nclients];
            break;
        }
    if (p->nclients) return;
    size_t idx = 0;
    prefix_find(t, p->name, p->len, &idx);
    t->prefixes[idx] = t->prefixes[--t->nprefixes];
    t->bcast_pending -= store_dict_size(&p->keys);
    store_dict_clear(&p->keys, drop_bcast_key, NULL);
    free(p->clients);
    free(p);
    s->tracking_prefixes--;
}

/* ---- turning it on and off ---- */

/* Redis's disableTracking: the client's keys stay in the table until they
 * change (or it tracks again and they are sent after all). */
void tracking_disable(client *c)
{
    struct tracking_client *tc = c->tracking;
    if (!(c->flags & CLIENT_TRACKING)) return;
    for (size_t i = 0; i < tc->nprefixes; i++) prefix_unsubscribe(c->srv, c, tc->prefixes[i]);
    tc->nprefixes = 0;
    ref_drop(tc->redir);
    tc->redir = NULL;
    c->srv->tracking_clients--;
    c->flags &= ~CLIENT_TRACKING_ALL;
}

void tracking_client_gone(client *c)
{
    struct tracking_state *t = c->srv->tracking;
    tracking_disable(c);
    if (t->pending_for == c) {   /* its command's invalidations have nobody to go to */
        t->pending.len = 0;
        t->pending_for = NULL;
    }
    if (c->tracking) {
        free(c->tracking->prefixes);
        free(c->tracking);
        c->tracking = NULL;
    }
    c->tref->c = NULL;
    ref_drop(c->tref);
    c->tref = NULL;
}

static int prefixes_overlap(const char *a, size_t alen, const char *b, size_t blen)
{
    return memcmp(a, b, alen < blen ? alen : blen) == 0;
}

/* Redis's checkPrefixCollisionsOrReply: against the client's prefixes,
 * then among the new ones. */
static int prefixes_ok(client *c, const resp_slice *const *pre, size_t n)
{
    struct tracking_client *tc = c->tracking;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; tc && j < tc->nprefixes; j++) {
            const bcast_prefix *p = tc->prefixes[j];
            if (prefixes_overlap(p->name, p->len, pre[i]->ptr, pre[i]->len)) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. "
                                "Prefixes for a single client must not overlap.",
                             (int)pre[i]->len, pre[i]->ptr, (int)p->len, p->name);
                return 0;
            }
        }
        for (size_t j = i + 1; j < n; j++) {
            if (prefixes_overlap(pre[i]->ptr, pre[i]->len, pre[j]->ptr, pre[j]->len)) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. "
                                "Prefixes for a single client must not overlap.",
                             (int)pre[i]->len, pre[i]->ptr, (int)pre[j]->len, pre[j]->ptr);
                return 0;
            }
        }
    }
    return 1;
}

static client *client_by_id(server *s, uint64_t id)
{
    for (client *o = s->clients; o; o = o->next)
        if (o->id == id && !(o->flags & CLIENT_CLOSING)) return o;
    return NULL;
}

static int enable_or_reply(client *c, unsigned opts, client *redir, const resp_slice *const *pre, size_t npre)
{
    if (!(opts & CLIENT_TRACKING_BCAST) && npre) {
        reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return 0;
    }
    if ((c->flags & CLIENT_TRACKING) && !!(c->flags & CLIENT_TRACKING_BCAST) != !!(opts & CLIENT_TRACKING_BCAST)) {
        reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
                       "and then re-enabling it with a different mode.");
        return 0;
    }
    if ((opts & CLIENT_TRACKING_BCAST) && (opts & (CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT))) {
        reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return 0;
    }
    if ((opts & CLIENT_TRACKING_OPTIN) && (opts & CLIENT_TRACKING_OPTOUT)) {
        reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return 0;
    }
    if (((opts & CLIENT_TRACKING_OPTIN) && (c->flags & CLIENT_TRACKING_OPTOUT)) ||
        ((opts & CLIENT_TRACKING_OPTOUT) && (c->flags & CLIENT_TRACKING_OPTIN))) {
        reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
                       "and then re-enabling it with a different mode.");
        return 0;
    }
    if ((opts & CLIENT_TRACKING_BCAST) && !prefixes_ok(c, pre, npre)) return 0;

    server *s = c->srv;
    if (!(c->flags & CLIENT_TRACKING)) s->tracking_clients++;
    if (!c->tracking) c->tracking = mem_calloc(1, sizeof(*c->tracking));
    ref_of(c);
    c->flags |= CLIENT_TRACKING;
    c->flags &= ~(CLIENT_TRACKING_BROKEN_REDIR | CLIENT_TRACKING_BCAST | CLIENT_TRACKING_OPTIN |
                  CLIENT_TRACKING_OPTOUT | CLIENT_TRACKING_NOLOOP);
    ref_drop(c->tracking->redir);
    c->tracking->redir = NULL;
    if (redir) {
        c->tracking->redir = ref_of(redir);
        c->tracking->redir->refs++;
    }
    if (opts & CLIENT_TRACKING_BCAST) {
        c->flags |= CLIENT_TRACKING_BCAST;
        if (!npre) prefix_subscribe(s, c, "", 0);
        for (size_t i = 0; i < npre; i++) prefix_subscribe(s, c, pre[i]->ptr, pre[i]->len);
    }
    c->flags |= opts & (CLIENT_TRACKING_OPTIN | CLIENT_TRACKING_OPTOUT | CLIENT_TRACKING_NOLOOP);
    return 1;
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP] */
void tracking_cmd_tracking(client *c)
{
    long long redir_id = 0;
    client *redir = NULL;
    unsigned opts = 0;
    size_t npre = 0;
    const resp_slice *pre_small[16], **pre = pre_small;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const resp_slice *a = &c->argv[j];
        if (arg_is(a, "redirect") && more) {
            j++;
            if (redir_id != 0) {
                reply_error(c, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!arg_ll_or_reply(c, &c->argv[j], &redir_id)) goto out;
            redir = redir_id > 0 ? client_by_id(c->srv, (uint64_t)redir_id) : NULL;
            if (!redir) {
                reply_error(c, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (arg_is(a, "bcast")) {
            opts |= CLIENT_TRACKING_BCAST;
        } else if (arg_is(a, "optin")) {
            opts |= CLIENT_TRACKING_OPTIN;
        } else if (arg_is(a, "optout")) {
            opts |= CLIENT_TRACKING_OPTOUT;
        } else if (arg_is(a, "noloop")) {
            opts |= CLIENT_TRACKING_NOLOOP;
        } else if (arg_is(a, "prefix") && more) {
            j++;
            if (npre == 16 && pre == pre_small) {
                pre = mem_alloc((size_t)c->argc * sizeof(*pre));
                memcpy(pre, pre_small, sizeof(pre_small));
            }
            pre[npre++] = &c->argv[j];
        } else {
            reply_syntax_error(c);
            goto out;
        }
    }
    if (arg_is(&c->argv[2], "on")) {
        if (!enable_or_reply(c, opts, redir, pre, npre)) goto out;
    } else if (arg_is(&c->argv[2], "off")) {
        tracking_disable(c);
    } else {
        reply_syntax_error(c);
        goto out;
    }
    reply_ok(c);
out:
    if (pre != pre_small) free(pre);
}

/* CLIENT CACHING YES|NO: the next command (or transaction) is cached, or
 * not, against OPTIN/OPTOUT's default. */
void tracking_cmd_caching(client *c)
{
    if (!(c->flags & CLIENT_TRACKING)) {
        reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                       "OPTOUT mode enabled");
        return;
    }
    if (arg_is(&c->argv[2], "yes")) {
        if (!(c->flags & CLIENT_TRACKING_OPTIN)) {
            reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (arg_is(&c->argv[2], "no")) {
        if (!(c->flags & CLIENT_TRACKING_OPTOUT)) {
            reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_syntax_error(c);
        return;
    }
    c->flags |= CLIENT_TRACKING_CACHING;
    reply_ok(c);
}

long long tracking_redirect_id(const client *c)
{
    if (!(c->flags & CLIENT_TRACKING)) return -1;
    return c->tracking->redir ? (long long)c->tracking->redir->id : 0;
}

void tracking_cmd_getredir(client *c) { reply_int(c, tracking_redirect_id(c)); }

size_t tracking_client_prefixes(const client *c) { return c->tracking ? c->tracking->nprefixes : 0; }

static int cmp_prefix(const void *a, const void *b)
{
    const bcast_prefix *x = *(bcast_prefix *const *)a, *y = *(bcast_prefix *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->name, y->name, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

void tracking_cmd_trackinginfo(client *c)
{
    static const struct {
        unsigned flag, needs;
        const char *name;
    } names[] = {
        {CLIENT_TRACKING_BCAST, 0, "bcast"},
        {CLIENT_TRACKING_OPTIN, 0, "optin"},
        {CLIENT_TRACKING_CACHING, CLIENT_TRACKING_OPTIN, "caching-yes"},
        {CLIENT_TRACKING_OPTOUT, 0, "optout"},
        {CLIENT_TRACKING_CACHING, CLIENT_TRACKING_OPTOUT, "caching-no"},
        {CLIENT_TRACKING_NOLOOP, 0, "noloop"},
        {CLIENT_TRACKING_BROKEN_REDIR, 0, "broken_redirect"},
    };
    size_t n = sizeof(names) / sizeof(names[0]), count = 1;
    for (size_t i = 0; i < n; i++) count += (c->flags & names[i].flag) && (c->flags & names[i].needs) == names[i].needs;
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_set(c, (long long)count);
    reply_bulk_cstr(c, c->flags & CLIENT_TRACKING ? "on" : "off");
    for (size_t i = 0; i < n; i++)
        if ((c->flags & names[i].flag) && (c->flags & names[i].needs) == names[i].needs) reply_bulk_cstr(c, names[i].name);
    reply_bulk_cstr(c, "redirect");
    reply_int(c, tracking_redirect_id(c));
    reply_bulk_cstr(c, "prefixes");
    struct tracking_client *tc = c->tracking;
    size_t np = tc && (c->flags & CLIENT_TRACKING) ? tc->nprefixes : 0;
    reply_array(c, (long long)np);
    if (!np) return;
    bcast_prefix **sorted = mem_alloc(np * sizeof(*sorted));
    memcpy(sorted, tc->prefixes, np * sizeof(*sorted));
    qsort(sorted, np, sizeof(*sorted), cmp_prefix);
    for (size_t i = 0; i < np; i++) reply_bulk(c, sorted[i]->name, sorted[i]->len);
    free(sorted);
}
