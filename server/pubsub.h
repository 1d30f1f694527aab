/* pubsub.h - who listens to what (channels, patterns, shard channels) and
 * delivery of one published message, encoded once, to every listener. */
#ifndef LATCHD_PUBSUB_H
#define LATCHD_PUBSUB_H

#include "server.h"

typedef enum pubsub_kind {
    PUBSUB_CHANNEL,   /* SUBSCRIBE */
    PUBSUB_PATTERN,   /* PSUBSCRIBE */
    PUBSUB_SHARD,     /* SSUBSCRIBE */
    PUBSUB_KINDS
} pubsub_kind;

void pubsub_init(server *s);
void pubsub_free(server *s);

/* Subscribe or unsubscribe c and send it the confirmation Redis sends
 * ("subscribe", name, count), whether or not anything changed. */
void pubsub_subscribe(client *c, pubsub_kind kind, const resp_slice *name);
void pubsub_unsubscribe(client *c, pubsub_kind kind, const resp_slice *name);
/* Every subscription of this kind, one confirmation each; a single
 * confirmation with a null name when there was none. */
void pubsub_unsubscribe_all(client *c, pubsub_kind kind);
/* Drop every subscription without a word (RESET, disconnect). */
void pubsub_client_reset(client *c);

/* Deliver msg to the channel's subscribers (and, unless shard, to every
 * matching pattern's); returns how many deliveries were made. Safe to call
 * for a publisher that is not a connection (scripts). */
long long pubsub_publish(server *s, int shard, const char *ch, size_t chlen,
                         const char *msg, size_t mlen);
/* 1 if anyone at all listens to channels or patterns (a shortcut for
 * keyspace events that nobody would receive). */
int pubsub_has_listeners(const server *s);

/* Introspection: distinct channels (or patterns) with a subscriber; the
 * subscribers of one; a client's own count; a walk over the names. */
size_t pubsub_count(const server *s, pubsub_kind kind);
size_t pubsub_subscribers(server *s, pubsub_kind kind, const resp_slice *name);
size_t pubsub_client_count(const client *c, pubsub_kind kind);
/* 1 when fn says 1 for one of c's subscriptions (every kind; is_pattern
 * for PSUBSCRIBE's): the ACL finds subscriptions a user lost. */
typedef int (*pubsub_client_fn)(const char *name, size_t len, int is_pattern, void *ctx);
int pubsub_client_any(const client *c, pubsub_client_fn fn, void *ctx);
typedef void (*pubsub_name_fn)(const char *name, size_t len, void *ctx);
void pubsub_foreach(server *s, pubsub_kind kind, pubsub_name_fn fn, void *ctx);

#endif
