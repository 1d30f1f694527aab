/* notify.c - keyspace notifications: notify-keyspace-events' flag letters,
 * and the store's event hook turning each event into Redis's messages. */
#include <string.h>

#include "pubsub.h"
#include "server.h"

#define NOTIFY_ALL (STORE_EV_GENERIC | STORE_EV_STRING | STORE_EV_LIST | STORE_EV_SET | STORE_EV_HASH | \
                    STORE_EV_ZSET | STORE_EV_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* Each letter and its bits, in the order CONFIG GET prints them (A stands
 * for the class letters before it, K/E/m follow it). */
static const struct {
    char letter;
    int flags;
} letters[] = {
    {'g', STORE_EV_GENERIC}, {'$', STORE_EV_STRING}, {'l', STORE_EV_LIST}, {'s', STORE_EV_SET},
    {'h', STORE_EV_HASH},    {'z', STORE_EV_ZSET},   {'x', STORE_EV_EXPIRED}, {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM},    {'d', NOTIFY_MODULE},   {'n', NOTIFY_NEW},       {'K', NOTIFY_KEYSPACE},
    {'E', NOTIFY_KEYEVENT},  {'m', NOTIFY_KEY_MISS}, {'A', NOTIFY_ALL},
};
#define NLETTERS (sizeof(letters) / sizeof(letters[0]))
#define FIRST_AFTER_CLASSES 11   /* 'K': printed whether or not A was */

int notify_flags_parse(const char *s, size_t len)
{
    int flags = 0;
    for (size_t i = 0; i < len; i++) {
        size_t j = 0;
        while (j < NLETTERS && letters[j].letter != s[i]) j++;
        if (j == NLETTERS) return -1;
        flags |= letters[j].flags;
    }
    return flags;
}

/* Redis's keyspaceEventsFlagsToString: "A" when every class is on (so "n"
 * is then not shown even if set), else the class letters; then K, E, m. */
void notify_flags_format(int flags, char *dst)
{
    char *p = dst;
    size_t i = 0;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        *p++ = 'A';
        i = FIRST_AFTER_CLASSES;
    }
    for (; i < NLETTERS - 1; i++)
        if (flags & letters[i].flags) *p++ = letters[i].letter;
    *p = '\0';
}

/* The store's event hook: every keyspace event, from commands, expiry or
 * the store's own operations, arrives here. */
void notify_keyspace_event(int cls, const char *event, const char *key, size_t klen, void *ctx)
{
    server *s = ctx;
    int flags = s->cfg.notify_keyspace_events;
    resp_buf *chan = &s->notify_chan;
    if (!(flags & cls) || !pubsub_has_listeners(s)) return;   /* the common case: one test */
    size_t elen = strlen(event);
    if (flags & NOTIFY_KEYSPACE) {
        chan->len = 0;
        resp_buf_append(chan, "__keyspace@0__:", 15);
        resp_buf_append(chan, key, klen);
        pubsub_publish(s, 0, chan->data, chan->len, event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        chan->len = 0;
        resp_buf_append(chan, "__keyevent@0__:", 15);
        resp_buf_append(chan, event, elen);
        pubsub_publish(s, 0, chan->data, chan->len, key, klen);
    }
}
