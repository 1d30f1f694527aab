/* commands.c - the command table (name, arity, flags, key positions, docs)
 * and its case-insensitive lookup. Scripting and pub/sub slot in here. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dict.h"
#include "mem.h"

#define W CMD_WRITE
#define R CMD_READONLY
#define F CMD_FAST
#define A CMD_ADMIN
#define NA CMD_NOAUTH
#define L CMD_LOADING
#define S CMD_STALE
#define PS CMD_PUBSUB
#define NS CMD_NOSCRIPT
#define CT CMD_CONTAINER

static const command table[] = {
    /* connection */
    {"ping", cmd_ping, -1, F | PS | L | S, 0, 0, 0, "connection", "1.0.0", "Returns the server's liveliness response.", "[message]"},
    {"echo", cmd_echo, 2, F | L | S, 0, 0, 0, "connection", "1.0.0", "Returns the given string.", "message"},
    {"quit", cmd_quit, -1, NA | F | PS | L | S | NS, 0, 0, 0, "connection", "1.0.0", "Closes the connection.", NULL},
    {"select", cmd_select, 2, F | L | S, 0, 0, 0, "connection", "1.0.0", "Changes the selected database.", "index"},
    {"hello", cmd_hello, -1, NA | F | L | S | NS, 0, 0, 0, "connection", "6.0.0", "Handshakes with the Redis server.", "[protover [AUTH username password] [SETNAME clientname]]"},
    {"auth", cmd_auth, -2, NA | F | L | S | NS, 0, 0, 0, "connection", "1.0.0", "Authenticates the connection.", "[username] password"},
    {"client", cmd_client, -2, CT | L | S | NS, 0, 0, 0, "connection", "2.4.0", "A container for client connection commands.", "subcommand"},
    {"reset", cmd_reset, 1, NA | F | PS | L | S | NS, 0, 0, 0, "connection", "6.2.0", "Resets the connection.", NULL},
    /* server */
    {"info", cmd_info, -1, L | S, 0, 0, 0, "server", "1.0.0", "Returns information and statistics about the server.", "[section [section ...]]"},
    {"config", cmd_config, -2, CT | A | L | S | NS, 0, 0, 0, "server", "2.0.0", "A container for server configuration commands.", "subcommand"},
    {"command", cmd_command, -1, CT | L | S, 0, 0, 0, "server", "2.8.13", "Returns detailed information about all commands.", NULL},
    {"time", cmd_time, 1, F | L | S, 0, 0, 0, "server", "2.6.0", "Returns the server time.", NULL},
    {"dbsize", cmd_dbsize, 1, R | F, 0, 0, 0, "server", "1.0.0", "Returns the number of keys in the database.", NULL},
    {"flushall", cmd_flushall, -1, W, 0, 0, 0, "server", "1.0.0", "Removes all keys from all databases.", "[ASYNC|SYNC]"},
    {"flushdb", cmd_flushall, -1, W, 0, 0, 0, "server", "1.0.0", "Remove all keys from the current database.", "[ASYNC|SYNC]"},
    {"function", cmd_function, -2, CT | NS, 0, 0, 0, "scripting", "7.0.0", "A container for function commands.", "subcommand"},
    {"wait", cmd_wait, 3, NS, 0, 0, 0, "generic", "3.0.0", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", "numreplicas timeout"},
    {"lastsave", cmd_lastsave, 1, F | L | S, 0, 0, 0, "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", NULL},
    {"shutdown", cmd_shutdown, -1, A | L | S | NS, 0, 0, 0, "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]"},
    /* keys */
    {"exists", cmd_exists, -2, R | F, 1, -1, 1, "generic", "1.0.0", "Determines whether one or more keys exist.", "key [key ...]"},
    {"del", cmd_del, -2, W, 1, -1, 1, "generic", "1.0.0", "Deletes one or more keys.", "key [key ...]"},
    {"unlink", cmd_del, -2, W | F, 1, -1, 1, "generic", "4.0.0", "Asynchronously deletes one or more keys.", "key [key ...]"},
    {"type", cmd_type, 2, R | F, 1, 1, 1, "generic", "1.0.0", "Determines the type of value stored at a key.", "key"},
    {"keys", cmd_keys, 2, R, 0, 0, 0, "generic", "1.0.0", "Returns all key names that match a pattern.", "pattern"},
    {"scan", cmd_scan, -2, R, 0, 0, 0, "generic", "2.8.0", "Iterates over the key names in the database.", "cursor [MATCH pattern] [COUNT count] [TYPE type]"},
    {"rename", cmd_rename, 3, W, 1, 2, 1, "generic", "1.0.0", "Renames a key and overwrites the destination.", "key newkey"},
    {"renamenx", cmd_renamenx, 3, W | F, 1, 2, 1, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist.", "key newkey"},
    {"expire", cmd_expire, -3, W | F, 1, 1, 1, "generic", "1.0.0", "Sets the expiration time of a key in seconds.", "key seconds [NX|XX|GT|LT]"},
    {"pexpire", cmd_pexpire, -3, W | F, 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key in milliseconds.", "key milliseconds [NX|XX|GT|LT]"},
    {"expireat", cmd_expireat, -3, W | F, 1, 1, 1, "generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", "key unix-time-seconds [NX|XX|GT|LT]"},
    {"pexpireat", cmd_pexpireat, -3, W | F, 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", "key unix-time-milliseconds [NX|XX|GT|LT]"},
    {"ttl", cmd_ttl, 2, R | F, 1, 1, 1, "generic", "1.0.0", "Returns the expiration time in seconds of a key.", "key"},
    {"pttl", cmd_pttl, 2, R | F, 1, 1, 1, "generic", "2.6.0", "Returns the expiration time in milliseconds of a key.", "key"},
    {"expiretime", cmd_expiretime, 2, R | F, 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", "key"},
    {"pexpiretime", cmd_pexpiretime, 2, R | F, 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", "key"},
    {"persist", cmd_persist, 2, W | F, 1, 1, 1, "generic", "2.2.0", "Removes the expiration time of a key.", "key"},
    /* strings */
    {"get", cmd_get, 2, R | F, 1, 1, 1, "string", "1.0.0", "Returns the string value of a key.", "key"},
    {"set", cmd_set, -3, W, 1, 1, 1, "string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]"},
    {"setnx", cmd_setnx, 3, W | F, 1, 1, 1, "string", "1.0.0", "Set the string value of a key only when the key doesn't exist.", "key value"},
    {"setex", cmd_setex, 4, W, 1, 1, 1, "string", "2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "key seconds value"},
    {"psetex", cmd_psetex, 4, W, 1, 1, 1, "string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", "key milliseconds value"},
    {"getdel", cmd_getdel, 2, W | F, 1, 1, 1, "string", "6.2.0", "Returns the string value of a key after deleting the key.", "key"},
    {"incr", cmd_incr, 2, W | F, 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "key"},
    {"decr", cmd_decr, 2, W | F, 1, 1, 1, "string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "key"},
    {"incrby", cmd_incrby, 3, W | F, 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "key increment"},
    {"decrby", cmd_decrby, 3, W | F, 1, 1, 1, "string", "1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", "key decrement"},
    {"mget", cmd_mget, -2, R | F, 1, -1, 1, "string", "1.0.0", "Atomically returns the string values of one or more keys.", "key [key ...]"},
    {"mset", cmd_mset, -3, W, 1, -1, 2, "string", "1.0.1", "Atomically creates or modifies the string values of one or more keys.", "key value [key value ...]"},
    {"strlen", cmd_strlen, 2, R | F, 1, 1, 1, "string", "2.2.0", "Returns the length of a string value.", "key"},
    /* hashes */
    {"hset", cmd_hset, -4, W | F, 1, 1, 1, "hash", "2.0.0", "Creates or modifies the value of a field in a hash.", "key field value [field value ...]"},
    {"hmset", cmd_hset, -4, W | F, 1, 1, 1, "hash", "2.0.0", "Sets the values of multiple fields.", "key field value [field value ...]"},
    {"hsetnx", cmd_hsetnx, 4, W | F, 1, 1, 1, "hash", "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", "key field value"},
    {"hget", cmd_hget, 3, R | F, 1, 1, 1, "hash", "2.0.0", "Returns the value of a field in a hash.", "key field"},
    {"hmget", cmd_hmget, -3, R | F, 1, 1, 1, "hash", "2.0.0", "Returns the values of all fields in a hash.", "key field [field ...]"},
    {"hexists", cmd_hexists, 3, R | F, 1, 1, 1, "hash", "2.0.0", "Determines whether a field exists in a hash.", "key field"},
    {"hdel", cmd_hdel, -3, W | F, 1, 1, 1, "hash", "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "key field [field ...]"},
    {"hlen", cmd_hlen, 2, R | F, 1, 1, 1, "hash", "2.0.0", "Returns the number of fields in a hash.", "key"},
    {"hincrby", cmd_hincrby, 4, W | F, 1, 1, 1, "hash", "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", "key field increment"},
    {"hgetall", cmd_hgetall, 2, R, 1, 1, 1, "hash", "2.0.0", "Returns all fields and values in a hash.", "key"},
    {"hkeys", cmd_hkeys, 2, R, 1, 1, 1, "hash", "2.0.0", "Returns all fields in a hash.", "key"},
    {"hvals", cmd_hvals, 2, R, 1, 1, 1, "hash", "2.0.0", "Returns all values in a hash.", "key"},
    {"hstrlen", cmd_hstrlen, 3, R | F, 1, 1, 1, "hash", "3.2.0", "Returns the length of the value of a field.", "key field"},
};
#define NCOMMANDS (sizeof(table) / sizeof(table[0]))

typedef struct command_entry {
    store_dict_node node;
    const command *cmd;
} command_entry;

static store_dict lookup_dict;
static command_entry *entries;

void command_table_init(void)
{
    if (entries) return;
    store_dict_init(&lookup_dict);
    entries = mem_calloc(NCOMMANDS, sizeof(*entries));
    for (size_t i = 0; i < NCOMMANDS; i++) {
        entries[i].cmd = &table[i];
        entries[i].node.key = table[i].name;
        entries[i].node.keylen = strlen(table[i].name);
        store_dict_insert(&lookup_dict, &entries[i].node);
    }
}

void command_table_free(void)
{
    if (!entries) return;
    store_dict_clear(&lookup_dict, NULL, NULL);
    free(entries);
    entries = NULL;
}

/* Names are short, so folding case into a stack copy is cheaper than a
 * case-insensitive hash. */
const command *command_lookup(const char *name, size_t len)
{
    char lower[32];
    if (len == 0 || len >= sizeof(lower)) return NULL;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        lower[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    store_dict_node *n = store_dict_find(&lookup_dict, lower, len);
    return n ? ((command_entry *)n)->cmd : NULL;
}

size_t command_count(void) { return NCOMMANDS; }
const command *command_at(size_t i) { return i < NCOMMANDS ? &table[i] : NULL; }
