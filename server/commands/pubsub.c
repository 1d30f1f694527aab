/* pubsub.c - the pub/sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE,
 * PUBLISH, SPUBLISH and PUBSUB's introspection subcommands. */
#include "commands.h"
#include "pubsub.h"

static void subscribe_generic(client *c, pubsub_kind kind)
{
    for (int i = 1; i < c->argc; i++) pubsub_subscribe(c, kind, &c->argv[i]);
}

static void unsubscribe_generic(client *c, pubsub_kind kind)
{
    if (c->argc == 1) pubsub_unsubscribe_all(c, kind);
    for (int i = 1; i < c->argc; i++) pubsub_unsubscribe(c, kind, &c->argv[i]);
}

void cmd_subscribe(client *c) { subscribe_generic(c, PUBSUB_CHANNEL); }
void cmd_psubscribe(client *c) { subscribe_generic(c, PUBSUB_PATTERN); }
void cmd_ssubscribe(client *c) { subscribe_generic(c, PUBSUB_SHARD); }
void cmd_unsubscribe(client *c) { unsubscribe_generic(c, PUBSUB_CHANNEL); }
void cmd_punsubscribe(client *c) { unsubscribe_generic(c, PUBSUB_PATTERN); }
void cmd_sunsubscribe(client *c) { unsubscribe_generic(c, PUBSUB_SHARD); }

/* The publisher may be a script's client rather than a connection:
 * nothing here looks at it but its arguments and its reply. */
static void publish_generic(client *c, int shard)
{
    const resp_slice *ch = &c->argv[1], *msg = &c->argv[2];
    reply_int(c, pubsub_publish(c->srv, shard, ch->ptr, ch->len, msg->ptr, msg->len));
}

void cmd_publish(client *c) { publish_generic(c, 0); }
void cmd_spublish(client *c) { publish_generic(c, 1); }

/* ---- PUBSUB ---- */

typedef struct channel_list {
    client *c;
    const resp_slice *pat;   /* NULL: every name */
    long long n;
    int emit;                /* first pass counts, second replies */
} channel_list;

static void list_name(const char *name, size_t len, void *ctx)
{
    channel_list *l = ctx;
    if (l->pat && !glob_match(l->pat->ptr, l->pat->len, name, len, 0)) return;
    if (l->emit) reply_bulk(l->c, name, len);
    else l->n++;
}

/* The length goes first, so the names are walked twice (count, then
 * reply) rather than collected. */
static void channels_generic(client *c, pubsub_kind kind)
{
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    channel_list l = {c, c->argc == 3 ? &c->argv[2] : NULL, 0, 0};
    pubsub_foreach(c->srv, kind, list_name, &l);
    reply_array(c, l.n);
    l.emit = 1;
    pubsub_foreach(c->srv, kind, list_name, &l);
}

static void numsub_generic(client *c, pubsub_kind kind)
{
    reply_array(c, (long long)(c->argc - 2) * 2);
    for (int i = 2; i < c->argc; i++) {
        reply_bulk(c, c->argv[i].ptr, c->argv[i].len);
        reply_int(c, (long long)pubsub_subscribers(c->srv, kind, &c->argv[i]));
    }
}

static void pubsub_channels(client *c) { channels_generic(c, PUBSUB_CHANNEL); }
static void pubsub_shardchannels(client *c) { channels_generic(c, PUBSUB_SHARD); }
static void pubsub_numsub(client *c) { numsub_generic(c, PUBSUB_CHANNEL); }
static void pubsub_shardnumsub(client *c) { numsub_generic(c, PUBSUB_SHARD); }
static void pubsub_numpat(client *c) { reply_int(c, (long long)pubsub_count(c->srv, PUBSUB_PATTERN)); }

static void pubsub_help(client *c)
{
    static const char *const lines[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

#define PS CMD_PUBSUB
#define L CMD_LOADING
#define S CMD_STALE
const command pubsub_subcommands[] = {
    {"channels", pubsub_channels, -2, PS | L | S, 0, 0, 0, "pubsub", "2.8.0", "List active channels", "[pattern]", NULL},
    {"numsub", pubsub_numsub, -2, PS | L | S, 0, 0, 0, "pubsub", "2.8.0", "Get the count of subscribers for channels", "[channel [channel ...]]", NULL},
    {"numpat", pubsub_numpat, 2, PS | L | S, 0, 0, 0, "pubsub", "2.8.0", "Get the count of unique patterns pattern subscriptions", NULL, NULL},
    {"shardchannels", pubsub_shardchannels, -2, PS | L | S, 0, 0, 0, "pubsub", "7.0.0", "List active shard channels", "[pattern]", NULL},
    {"shardnumsub", pubsub_shardnumsub, -2, PS | L | S, 0, 0, 0, "pubsub", "7.0.0", "Get the count of subscribers for shard channels", "[shardchannel [shardchannel ...]]", NULL},
    {"help", pubsub_help, 2, L | S, 0, 0, 0, "pubsub", "6.2.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_pubsub(client *c)
{
    subcommand_dispatch(c);
}
