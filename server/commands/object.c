/* object.c - what Redis's OBJECT tells about a key's value (ENCODING,
 * REFCOUNT, IDLETIME, FREQ, HELP) and TOUCH, which only marks an access. */
#include "commands.h"
#include "num.h"

/* Redis's OBJ_SHARED_REFCOUNT and OBJ_SHARED_INTEGERS. */
#define OBJECT_SHARED_REFCOUNT 2147483647LL
#define OBJECT_SHARED_INTEGERS 10000

static int lfu_policy(const server *s)
{
    return s->cfg.maxmemory_policy == CONFIG_MAXMEMORY_VOLATILE_LFU ||
           s->cfg.maxmemory_policy == CONFIG_MAXMEMORY_ALLKEYS_LFU;
}

/* Redis's MAXMEMORY_FLAG_NO_SHARED_INTEGERS: the LRU and LFU policies need
 * a clock per value, so with a maxmemory they keep integers unshared. */
static int integers_shared(const server *s)
{
    int p = s->cfg.maxmemory_policy;
    int per_value = p == CONFIG_MAXMEMORY_VOLATILE_LRU || p == CONFIG_MAXMEMORY_ALLKEYS_LRU || lfu_policy(s);
    return s->cfg.maxmemory == 0 || !per_value;
}

/* Without touching it or raising keymiss, as Redis's objectCommandLookup;
 * a missing key is a null reply. */
static store_key *object_lookup(client *c)
{
    store_key *k = db_lookup_read_flags(c, &c->argv[2], DB_NOTOUCH | DB_NONOTIFY);
    if (!k) reply_null(c);
    return k;
}

long long object_refcount(const server *s, const store_key *k)
{
    size_t len;
    long long v;
    if (store_key_type(k) != STORE_STRING || !integers_shared(s)) return 1;
    if (store_string_form(k) != STORE_STR_AS_SET) return 1;   /* never made an integer */
    const char *p = store_string_get(k, &len);
    /* Only an "int" value is one of Redis's shared integers. */
    if (len > 20 || !store_str2ll(p, len, &v)) return 1;
    return v >= 0 && v < OBJECT_SHARED_INTEGERS ? OBJECT_SHARED_REFCOUNT : 1;
}

static void object_encoding(client *c)
{
    store_key *k = object_lookup(c);
    if (k) reply_bulk_cstr(c, store_key_encoding(k));
}

static void object_refcount_cmd(client *c)
{
    store_key *k = object_lookup(c);
    if (k) reply_int(c, object_refcount(c->srv, k));
}

static void object_idletime(client *c)
{
    store_key *k = object_lookup(c);
    if (!k) return;
    if (lfu_policy(c->srv)) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                       "switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_int(c, (long long)store_key_idle_seconds(client_db(c), k));
}

static void object_freq(client *c)
{
    store_key *k = object_lookup(c);
    if (!k) return;
    if (!lfu_policy(c->srv)) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                       "that when switching between policies at runtime LRU and LFU data will take some time to "
                       "adjust.");
        return;
    }
    reply_int(c, store_key_freq(client_db(c), k));
}

static void object_help(client *c)
{
    static const char *const lines[] = {
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_object(client *c) { subcommand_dispatch(c); }

const command object_subcommands[] = {
    {"encoding", object_encoding, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3", "Inspect the internal encoding of a Redis object", "key", NULL},
    {"freq", object_freq, 3, CMD_READONLY, 2, 2, 1, "generic", "4.0.0", "Get the logarithmic access frequency counter of a Redis object", "key", NULL},
    {"help", object_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "generic", "6.2.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"idletime", object_idletime, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3", "Get the time since a Redis object was last accessed", "key", NULL},
    {"refcount", object_refcount_cmd, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3", "Get the number of references to the value of the key", "key", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

/* Each existing key counts and is touched, as a read would touch it. */
void cmd_touch(client *c)
{
    long long n = 0;
    for (int i = 1; i < c->argc; i++)
        if (db_lookup_read(c, &c->argv[i])) n++;
    reply_int(c, n);
}
