/* pubsub.c - the subscription registry (channel -> subscribers, client ->
 * subscriptions, both O(1) to add and drop) and message delivery. */
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "mem.h"
#include "pubsub.h"

#define ENC_KEEP (64 * 1024)   /* a larger encode scratch is returned after use */

typedef struct pubsub_sub pubsub_sub;

/* A channel, pattern or shard channel with at least one subscriber. */
typedef struct pubsub_chan {
    store_dict_node node;               /* in the server's dict of its kind */
    pubsub_sub *head, *tail;            /* subscribers, in subscription order */
    size_t nsubs;
    struct pubsub_chan *prev, *next;    /* patterns only: the list publish walks */
    size_t len;
    char name[];
} pubsub_chan;

/* One client's subscription to one channel: linked from both sides, so
 * dropping it never searches. */
struct pubsub_sub {
    store_dict_node node;       /* in the client's dict, keyed by name */
    const char *name;           /* chan->name */
    pubsub_chan *chan;
    client *c;
    pubsub_sub *prev, *next;    /* the channel's subscribers */
    pubsub_sub *cprev, *cnext;  /* the client's subscriptions of this kind */
};

/* Allocated on a client's first subscription and kept until it leaves:
 * subscribe/unsubscribe churn costs no more than the subscription itself. */
struct pubsub_client {
    store_dict subs[PUBSUB_KINDS];
    pubsub_sub *first[PUBSUB_KINDS], *last[PUBSUB_KINDS];
};

struct pubsub_state {
    store_dict chans[PUBSUB_KINDS];
    pubsub_chan *patterns;      /* every pattern, for matching at publish */
    resp_buf enc;               /* frames of the message being published */
};

static const char *const subscribe_names[PUBSUB_KINDS] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const unsubscribe_names[PUBSUB_KINDS] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

void pubsub_init(server *s)
{
    s->pubsub = mem_calloc(1, sizeof(*s->pubsub));
    for (int k = 0; k < PUBSUB_KINDS; k++)
        store_dict_init(&s->pubsub->chans[k], STORE_DICT_KEY_OFF(pubsub_chan, node, name),
                        STORE_DICT_KEY_INLINE);
    resp_buf_init(&s->pubsub->enc);
}

/* Clients leave before the server is freed, so the dicts are empty here. */
void pubsub_free(server *s)
{
    if (!s->pubsub) return;
    for (int k = 0; k < PUBSUB_KINDS; k++) store_dict_clear(&s->pubsub->chans[k], NULL, NULL);
    resp_buf_free(&s->pubsub->enc);
    free(s->pubsub);
    s->pubsub = NULL;
}

/* ---- the registry ---- */

static pubsub_chan *chan_get(server *s, pubsub_kind kind, const resp_slice *name)
{
    store_dict *d = &s->pubsub->chans[kind];
    store_dict_node *n = store_dict_find(d, name->ptr, name->len);
    if (n) return (pubsub_chan *)n;
    pubsub_chan *ch = mem_calloc(1, sizeof(*ch) + name->len + 1);
    memcpy(ch->name, name->ptr, name->len);
    ch->len = name->len;
    ch->node.keylen = store_dict_keylen(ch->len);
    store_dict_insert(d, &ch->node);
    if (kind == PUBSUB_PATTERN) {
        ch->next = s->pubsub->patterns;
        if (ch->next) ch->next->prev = ch;
        s->pubsub->patterns = ch;
    }
    return ch;
}

/* Unused channels go at once, so a stream of one-off names costs nothing. */
static void chan_drop_if_empty(server *s, pubsub_kind kind, pubsub_chan *ch)
{
    if (ch->nsubs) return;
    store_dict_unlink(&s->pubsub->chans[kind], &ch->node);
    if (kind == PUBSUB_PATTERN) {
        if (ch->prev) ch->prev->next = ch->next;
        else s->pubsub->patterns = ch->next;
        if (ch->next) ch->next->prev = ch->prev;
    }
    free(ch);
}

static struct pubsub_client *client_state(client *c)
{
    if (!c->pubsub) {
        c->pubsub = mem_calloc(1, sizeof(*c->pubsub));
        for (int k = 0; k < PUBSUB_KINDS; k++)
            store_dict_init(&c->pubsub->subs[k], STORE_DICT_KEY_OFF(pubsub_sub, node, name),
                            STORE_DICT_KEY_POINTER);
    }
    return c->pubsub;
}

size_t pubsub_client_count(const client *c, pubsub_kind kind)
{
    return c->pubsub ? store_dict_size(&c->pubsub->subs[kind]) : 0;
}

/* Redis counts channels and patterns together; shard channels apart. */
static long long confirm_count(const client *c, pubsub_kind kind)
{
    if (kind == PUBSUB_SHARD) return (long long)pubsub_client_count(c, PUBSUB_SHARD);
    return (long long)(pubsub_client_count(c, PUBSUB_CHANNEL) + pubsub_client_count(c, PUBSUB_PATTERN));
}

/* Subscribed mode (and the pubsub output-limit class) lasts while any
 * subscription does. */
static void update_mode(client *c)
{
    size_t total = 0;
    for (int k = 0; k < PUBSUB_KINDS; k++) total += pubsub_client_count(c, k);
    if (total) c->flags |= CLIENT_PUBSUB;
    else c->flags &= ~CLIENT_PUBSUB;
}

static void sub_link(client *c, pubsub_kind kind, pubsub_chan *ch)
{
    struct pubsub_client *pc = client_state(c);
    pubsub_sub *sub = mem_calloc(1, sizeof(*sub));
    sub->chan = ch;
    sub->c = c;
    sub->name = ch->name;
    sub->node.keylen = store_dict_keylen(ch->len);
    store_dict_insert(&pc->subs[kind], &sub->node);
    sub->prev = ch->tail;
    if (ch->tail) ch->tail->next = sub;
    else ch->head = sub;
    ch->tail = sub;
    ch->nsubs++;
    sub->cprev = pc->last[kind];
    if (pc->last[kind]) pc->last[kind]->cnext = sub;
    else pc->first[kind] = sub;
    pc->last[kind] = sub;
}

/* Returns the channel, which the caller drops (chan_drop_if_empty) once
 * it no longer needs the name. */
static pubsub_chan *sub_unlink(client *c, pubsub_kind kind, pubsub_sub *sub)
{
    struct pubsub_client *pc = c->pubsub;
    pubsub_chan *ch = sub->chan;
    store_dict_unlink(&pc->subs[kind], &sub->node);
    if (sub->prev) sub->prev->next = sub->next;
    else ch->head = sub->next;
    if (sub->next) sub->next->prev = sub->prev;
    else ch->tail = sub->prev;
    ch->nsubs--;
    if (sub->cprev) sub->cprev->cnext = sub->cnext;
    else pc->first[kind] = sub->cnext;
    if (sub->cnext) sub->cnext->cprev = sub->cprev;
    else pc->last[kind] = sub->cprev;
    free(sub);
    return ch;
}

static pubsub_sub *sub_find(client *c, pubsub_kind kind, const resp_slice *name)
{
    if (!c->pubsub) return NULL;
    return (pubsub_sub *)store_dict_find(&c->pubsub->subs[kind], name->ptr, name->len);
}

/* ---- confirmations: pushes, so CLIENT REPLY OFF does not hide them ---- */

static void reply_confirm(client *c, const char *what, const char *name, size_t len, long long count)
{
    unsigned pushing = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    reply_push(c, 3);
    reply_bulk_cstr(c, what);
    if (name) reply_bulk(c, name, len);
    else reply_null(c);
    reply_int(c, count);
    c->flags = (c->flags & ~CLIENT_PUSHING) | pushing;
}

void pubsub_subscribe(client *c, pubsub_kind kind, const resp_slice *name)
{
    if (!sub_find(c, kind, name)) sub_link(c, kind, chan_get(c->srv, kind, name));
    update_mode(c);
    reply_confirm(c, subscribe_names[kind], name->ptr, name->len, confirm_count(c, kind));
}

/* Drops one subscription and confirms it, naming the channel from its
 * own record (which outlives the confirmation). */
static void unsubscribe_one(client *c, pubsub_kind kind, pubsub_sub *sub)
{
    pubsub_chan *ch = sub_unlink(c, kind, sub);
    update_mode(c);
    reply_confirm(c, unsubscribe_names[kind], ch->name, ch->len, confirm_count(c, kind));
    chan_drop_if_empty(c->srv, kind, ch);
}

void pubsub_unsubscribe(client *c, pubsub_kind kind, const resp_slice *name)
{
    pubsub_sub *sub = sub_find(c, kind, name);
    if (sub) unsubscribe_one(c, kind, sub);
    else reply_confirm(c, unsubscribe_names[kind], name->ptr, name->len, confirm_count(c, kind));
}

void pubsub_unsubscribe_all(client *c, pubsub_kind kind)
{
    if (!pubsub_client_count(c, kind)) {
        reply_confirm(c, unsubscribe_names[kind], NULL, 0, confirm_count(c, kind));
        return;
    }
    while (c->pubsub->first[kind]) unsubscribe_one(c, kind, c->pubsub->first[kind]);
}

void pubsub_client_reset(client *c)
{
    if (!c->pubsub) return;
    for (int k = 0; k < PUBSUB_KINDS; k++) {
        while (c->pubsub->first[k]) chan_drop_if_empty(c->srv, k, sub_unlink(c, k, c->pubsub->first[k]));
        store_dict_clear(&c->pubsub->subs[k], NULL, NULL);
    }
    free(c->pubsub);
    c->pubsub = NULL;
    c->flags &= ~CLIENT_PUBSUB;
}

/* ---- publishing ---- */

/* One message frame as it is about to go out, encoded at most once per
 * protocol version and shared by every receiver speaking that version. */
typedef struct frame_slot {
    size_t off, len;          /* in the encode scratch; len 0 = not yet */
    shared_frame *shared;     /* made by the first receiver that shares it */
} frame_slot;

typedef struct delivery {
    server *s;
    const char *type;         /* "message", "smessage" or "pmessage" */
    const pubsub_chan *pattern;
    const char *ch, *msg;
    size_t chlen, mlen;
    frame_slot slot[2];       /* RESP2, RESP3 */
    long long receivers;
    client *doomed;           /* over their output limit: closed after delivery */
} delivery;

static void encode(delivery *d, frame_slot *fs, int proto)
{
    resp_buf *b = &d->s->pubsub->enc;
    fs->off = b->len;
    resp_add_push_len(b, proto, d->pattern ? 4 : 3);
    resp_add_bulk_cstr(b, d->type);
    if (d->pattern) resp_add_bulk(b, d->pattern->name, d->pattern->len);
    resp_add_bulk(b, d->ch, d->chlen);
    resp_add_bulk(b, d->msg, d->mlen);
    fs->len = b->len - fs->off;
}

static void deliver_to(delivery *d, const pubsub_chan *ch)
{
    for (pubsub_sub *sub = ch->head; sub; sub = sub->next) {
        client *c = sub->c;
        frame_slot *fs = &d->slot[c->proto == 3];
        if (!fs->len) encode(d, fs, c->proto);
        client_add_frame(c, d->s->pubsub->enc.data + fs->off, fs->len, &fs->shared);
        d->receivers++;
        if (!client_output_within_limit(c)) {
            c->asap_next = d->doomed;
            d->doomed = c;
        }
    }
}

/* Forget the frames of one channel or pattern; the scratch is kept. */
static void slots_reset(delivery *d, size_t enc_len)
{
    for (int i = 0; i < 2; i++) {
        frame_release(d->slot[i].shared);
        d->slot[i] = (frame_slot){0, 0, NULL};
    }
    d->s->pubsub->enc.len = enc_len;
}

long long pubsub_publish(server *s, int shard, const char *ch, size_t chlen, const char *msg, size_t mlen)
{
    struct pubsub_state *ps = s->pubsub;
    delivery d = {.s = s, .type = shard ? "smessage" : "message", .ch = ch, .chlen = chlen, .msg = msg, .mlen = mlen};
    store_dict_node *n = store_dict_find(&ps->chans[shard ? PUBSUB_SHARD : PUBSUB_CHANNEL], ch, chlen);
    if (n) deliver_to(&d, (pubsub_chan *)n);
    slots_reset(&d, 0);
    if (!shard) {
        d.type = "pmessage";
        for (const pubsub_chan *p = ps->patterns; p; p = p->next) {
            if (!glob_match(p->name, p->len, ch, chlen, 0)) continue;
            d.pattern = p;
            deliver_to(&d, p);
            slots_reset(&d, 0);
        }
    }
    if (ps->enc.cap > ENC_KEEP) resp_buf_free(&ps->enc);
    /* Closing drops subscriptions, so it waits until the walk is over. */
    while (d.doomed) {
        client *c = d.doomed;
        d.doomed = c->asap_next;
        client_close(c);
    }
    return d.receivers;
}

int pubsub_has_listeners(const server *s)
{
    return store_dict_size(&s->pubsub->chans[PUBSUB_CHANNEL]) || s->pubsub->patterns;
}

/* ---- introspection ---- */

size_t pubsub_count(const server *s, pubsub_kind kind) { return store_dict_size(&s->pubsub->chans[kind]); }

size_t pubsub_subscribers(server *s, pubsub_kind kind, const resp_slice *name)
{
    store_dict_node *n = store_dict_find(&s->pubsub->chans[kind], name->ptr, name->len);
    return n ? ((pubsub_chan *)n)->nsubs : 0;
}

typedef struct name_visit {
    pubsub_name_fn fn;
    void *ctx;
} name_visit;

static void visit_name(store_dict_node *n, void *ctx)
{
    name_visit *v = ctx;
    v->fn(((pubsub_chan *)n)->name, n->keylen, v->ctx);   /* node is first */
}

void pubsub_foreach(server *s, pubsub_kind kind, pubsub_name_fn fn, void *ctx)
{
    name_visit v = {fn, ctx};
    store_dict_foreach(&s->pubsub->chans[kind], visit_name, &v);
}

int pubsub_client_any(const client *c, pubsub_client_fn fn, void *ctx)
{
    if (!c->pubsub) return 0;
    for (int k = 0; k < PUBSUB_KINDS; k++)
        for (const pubsub_sub *sub = c->pubsub->first[k]; sub; sub = sub->cnext)
            if (fn(sub->name, sub->chan->len, k == PUBSUB_PATTERN, ctx)) return 1;
    return 0;
}
