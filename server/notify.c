/* notify.c - keyspace notifications: notify-keyspace-events' flag letters,
 * and the store's event hook turning each event into Redis's messages. */
#include <stdio.h>
#include <string.h>

#include "pubsub.h"
#include "server.h"

#define NOTIFY_ALL (STORE_EV_GENERIC | STORE_EV_STRING | STORE_EV_LIST | STORE_EV_SET | STORE_EV_HASH | \
                    STORE_EV_ZSET | STORE_EV_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

typedef struct notify_letter {
    char letter;
    int flags;
} notify_letter;

/* The class letters, in the order CONFIG GET prints them; 'A' stands for
 * all of them (and hides 'n' when printed). */
static const notify_letter class_letters[] = {
    {'g', STORE_EV_GENERIC}, {'$', STORE_EV_STRING}, {'l', STORE_EV_LIST},   {'s', STORE_EV_SET},
    {'h', STORE_EV_HASH},    {'z', STORE_EV_ZSET},   {'x', STORE_EV_EXPIRED}, {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM},    {'d', NOTIFY_MODULE},   {'n', NOTIFY_NEW},
};
/* Where the events go, printed after the classes whether or not 'A' was. */
static const notify_letter target_letters[] = {
    {'K', NOTIFY_KEYSPACE}, {'E', NOTIFY_KEYEVENT}, {'m', NOTIFY_KEY_MISS},
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int letter_flags(char c)
{
    if (c == 'A') return NOTIFY_ALL;
    for (size_t i = 0; i < COUNT(class_letters); i++)
        if (class_letters[i].letter == c) return class_letters[i].flags;
    for (size_t i = 0; i < COUNT(target_letters); i++)
        if (target_letters[i].letter == c) return target_letters[i].flags;
    return -1;
}

int notify_flags_parse(const char *s, size_t len)
{
    int flags = 0;
    for (size_t i = 0; i < len; i++) {
        int f = letter_flags(s[i]);
        if (f < 0) return -1;
        flags |= f;
    }
    return flags;
}

/* Redis's keyspaceEventsFlagsToString: "A" when every class is on (so "n"
 * is then not shown even if set), else the class letters; then K, E, m. */
void notify_flags_format(int flags, char *dst)
{
    char *p = dst;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        *p++ = 'A';
    } else {
        for (size_t i = 0; i < COUNT(class_letters); i++)
            if (flags & class_letters[i].flags) *p++ = class_letters[i].letter;
    }
    for (size_t i = 0; i < COUNT(target_letters); i++)
        if (flags & target_letters[i].flags) *p++ = target_letters[i].letter;
    *p = '\0';
}

/* Every keyspace event, from commands, expiry or the store's own
 * operations, arrives here through the store's event hook. */
void notify_keyspace_event(server *s, int db, int cls, const char *event, const char *key, size_t klen)
{
    int flags = s->cfg.notify_keyspace_events;
    resp_buf *chan = &s->notify_chan;
    if (!(flags & cls) || !pubsub_has_listeners(s)) return;   /* the common case: one test */
    size_t elen = strlen(event);
    char prefix[32];
    if (flags & NOTIFY_KEYSPACE) {
        chan->len = 0;
        resp_buf_append(chan, prefix, (size_t)snprintf(prefix, sizeof(prefix), "__keyspace@%d__:", db));
        resp_buf_append(chan, key, klen);
        pubsub_publish(s, 0, chan->data, chan->len, event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        chan->len = 0;
        resp_buf_append(chan, prefix, (size_t)snprintf(prefix, sizeof(prefix), "__keyevent@%d__:", db));
        resp_buf_append(chan, event, elen);
        pubsub_publish(s, 0, chan->data, chan->len, key, klen);
    }
}
