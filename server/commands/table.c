/* table.c - the command table (name, arity, flags, key positions, docs)
 * of every command, scripting and pub/sub included, and its lookup. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

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
#define AB CMD_ALLOW_BUSY
#define MR CMD_MAY_REPLICATE
#define SB CMD_SUBSCRIBED
#define DO CMD_DENYOOM
#define PR CMD_PROTECTED
#define ME CMD_MONITOR_EARLY
#define SL CMD_SKIP_SLOWLOG
#define NM CMD_NO_MULTI
#define TX CMD_TRANSACTION
#define MK CMD_MOVABLE_KEYS
#define BL CMD_BLOCKING

static const command table[] = {
    /* connection */
    {"ping", cmd_ping, -1, F | SB, 0, 0, 0, "connection", "1.0.0", "Ping the server", "[message]", NULL},
    {"echo", cmd_echo, 2, F | L | S, 0, 0, 0, "connection", "1.0.0", "Echo the given string", "message", NULL},
    {"quit", cmd_quit, -1, AB | NA | F | SB | L | S | NS | TX, 0, 0, 0, "connection", "1.0.0", "Close the connection", NULL, NULL},
    {"select", cmd_select, 2, F | L | S, 0, 0, 0, "connection", "1.0.0", "Change the selected database for the current connection", "index", NULL},
    {"hello", cmd_hello, -1, AB | NA | F | L | S | NS, 0, 0, 0, "connection", "6.0.0", "Handshake with Redis", "[protover [AUTH username password] [SETNAME clientname]]", NULL},
    {"auth", cmd_auth, -2, AB | NA | F | L | S | NS, 0, 0, 0, "connection", "1.0.0", "Authenticate to the server", "[username] password", NULL},
    {"acl", cmd_acl, -2, CT, 0, 0, 0, "server", "6.0.0", "A container for Access List Control commands ", NULL, acl_subcommands},
    {"client", cmd_client, -2, CT | L | S | NS, 0, 0, 0, "connection", "2.4.0", "A container for client connection commands", NULL, client_subcommands},
    {"reset", cmd_reset, 1, AB | NA | F | SB | L | S | NS | TX, 0, 0, 0, "connection", "6.2.0", "Reset the connection", NULL, NULL},
    /* server */
    {"info", cmd_info, -1, L | S, 0, 0, 0, "server", "1.0.0", "Get information and statistics about the server", "[section [section ...]]", NULL},
    {"config", cmd_config, -2, CT | A | L | S | NS, 0, 0, 0, "server", "2.0.0", "A container for server configuration commands", NULL, config_subcommands},
    {"command", cmd_command, -1, CT | L | S, 0, 0, 0, "server", "2.8.13", "Get array of Redis command details", NULL, command_subcommands},
    {"time", cmd_time, 1, F | L | S, 0, 0, 0, "server", "2.6.0", "Return the current server time", NULL, NULL},
    {"dbsize", cmd_dbsize, 1, R | F, 0, 0, 0, "server", "1.0.0", "Return the number of keys in the selected database", NULL, NULL},
    {"flushall", cmd_flushall, -1, W, 0, 0, 0, "server", "1.0.0", "Remove all keys from all databases", "[ASYNC|SYNC]", NULL},
    {"flushdb", cmd_flushdb, -1, W, 0, 0, 0, "server", "1.0.0", "Remove all keys from the current database", "[ASYNC|SYNC]", NULL},
    {"swapdb", cmd_swapdb, 3, W | F, 0, 0, 0, "server", "4.0.0", "Swaps two Redis databases", "index1 index2", NULL},
    {"wait", cmd_wait, 3, NS, 0, 0, 0, "generic", "3.0.0", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", "numreplicas timeout", NULL},
    {"save", cmd_save, 1, A | NS | NM, 0, 0, 0, "server", "1.0.0", "Synchronously save the dataset to disk", NULL, NULL},
    {"bgsave", cmd_bgsave, -1, A | NS, 0, 0, 0, "server", "1.0.0", "Asynchronously save the dataset to disk", "[SCHEDULE]", NULL},
    {"lolwut", cmd_lolwut, -1, R | F, 0, 0, 0, "server", "5.0.0", "Display some computer art and the Redis version", "[VERSION version]", NULL},
    {"bgrewriteaof", cmd_bgrewriteaof, 1, A | NS, 0, 0, 0, "server", "1.0.0", "Asynchronously rewrite the append-only file", NULL, NULL},
    {"lastsave", cmd_lastsave, 1, F | L | S, 0, 0, 0, "server", "1.0.0", "Get the UNIX time stamp of the last successful save to disk", NULL, NULL},
    {"role", cmd_role, 1, NS | L | S | F, 0, 0, 0, "server", "2.8.12", "Return the role of the instance in the context of replication", NULL, NULL},
    {"shutdown", cmd_shutdown, -1, AB | A | L | S | NS | NM, 0, 0, 0, "server", "1.0.0", "Synchronously save the dataset to disk and then shut down the server", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", NULL},
    {"slowlog", cmd_slowlog, -2, CT, 0, 0, 0, "server", "2.2.12", "A container for slow log commands", NULL, slowlog_subcommands},
    {"cluster", cmd_cluster, -2, CT, 0, 0, 0, "cluster", "3.0.0", "A container for cluster commands", NULL, cluster_subcommands},
    {"latency", cmd_latency, -2, CT, 0, 0, 0, "server", "2.8.13", "A container for latency diagnostics commands", NULL, latency_subcommands},
    {"monitor", cmd_monitor, 1, A | NS | L | S, 0, 0, 0, "server", "1.0.0", "Listen for all requests received by the server in real time", NULL, NULL},
    {"debug", cmd_debug, -2, A | NS | L | S | PR, 0, 0, 0, "server", "1.0.0", "A container for debugging commands", NULL, NULL},
    /* latchd: the test double's clock (enable-clock-control) */
    {"latchd.clock", cmd_latchd_clock, -2, CT | NS | L | S, 0, 0, 0, "server", "0.1.0", "A container for latchd clock control commands", NULL, clock_subcommands},
    /* transactions */
    {"multi", cmd_multi, 1, NS | L | S | F | AB | TX, 0, 0, 0, "transactions", "1.2.0", "Mark the start of a transaction block", NULL, NULL},
    {"exec", cmd_exec, 1, NS | L | S | SL | TX, 0, 0, 0, "transactions", "1.2.0", "Execute all commands issued after MULTI", NULL, NULL},
    {"discard", cmd_discard, 1, NS | L | S | F | AB | TX, 0, 0, 0, "transactions", "2.0.0", "Discard all commands issued after MULTI", NULL, NULL},
    {"watch", cmd_watch, -2, NS | L | S | F | AB | TX, 1, -1, 1, "transactions", "2.2.0", "Watch the given keys to determine execution of the MULTI/EXEC block", "key [key ...]", NULL},
    {"unwatch", cmd_unwatch, 1, NS | L | S | F | AB, 0, 0, 0, "transactions", "2.2.0", "Forget about all watched keys", NULL, NULL},
    /* scripting */
    {"eval", cmd_eval, -3, NS | S | MR | ME | MK, 0, 0, 0, "scripting", "2.6.0", "Execute a Lua script server side", "script numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"evalsha", cmd_evalsha, -3, NS | S | MR | ME | MK, 0, 0, 0, "scripting", "2.6.0", "Execute a Lua script server side", "sha1 numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"eval_ro", cmd_eval_ro, -3, R | NS | S | ME | MK, 0, 0, 0, "scripting", "7.0.0", "Execute a read-only Lua script server side", "script numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"evalsha_ro", cmd_evalsha_ro, -3, R | NS | S | ME | MK, 0, 0, 0, "scripting", "7.0.0", "Execute a read-only Lua script server side", "sha1 numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"fcall", cmd_fcall, -3, NS | S | MR | ME | MK, 0, 0, 0, "scripting", "7.0.0", "Invoke a function", "function numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"fcall_ro", cmd_fcall_ro, -3, R | NS | S | ME | MK, 0, 0, 0, "scripting", "7.0.0", "Invoke a read-only function", "function numkeys [key [key ...]] [arg [arg ...]]", NULL},
    {"function", cmd_function, -2, CT | NS, 0, 0, 0, "scripting", "7.0.0", "A container for function commands", NULL, function_subcommands},
    {"script", cmd_script, -2, CT | NS, 0, 0, 0, "scripting", "2.6.0", "A container for Lua scripts management commands", NULL, script_subcommands},
    /* keys */
    {"exists", cmd_exists, -2, R | F, 1, -1, 1, "generic", "1.0.0", "Determine if a key exists", "key [key ...]", NULL},
    {"del", cmd_del, -2, W, 1, -1, 1, "generic", "1.0.0", "Delete a key", "key [key ...]", NULL},
    {"unlink", cmd_del, -2, W | F, 1, -1, 1, "generic", "4.0.0", "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "key [key ...]", NULL},
    {"type", cmd_type, 2, R | F, 1, 1, 1, "generic", "1.0.0", "Determine the type stored at key", "key", NULL},
    {"keys", cmd_keys, 2, R, 0, 0, 0, "generic", "1.0.0", "Find all keys matching the given pattern", "pattern", NULL},
    {"scan", cmd_scan, -2, R, 0, 0, 0, "generic", "2.8.0", "Incrementally iterate the keys space", "cursor [MATCH pattern] [COUNT count] [TYPE type]", NULL},
    {"rename", cmd_rename, 3, W, 1, 2, 1, "generic", "1.0.0", "Rename a key", "key newkey", NULL},
    {"renamenx", cmd_renamenx, 3, W | F, 1, 2, 1, "generic", "1.0.0", "Rename a key, only if the new key does not exist", "key newkey", NULL},
    {"expire", cmd_expire, -3, W | F, 1, 1, 1, "generic", "1.0.0", "Set a key's time to live in seconds", "key seconds [NX|XX|GT|LT]", NULL},
    {"pexpire", cmd_pexpire, -3, W | F, 1, 1, 1, "generic", "2.6.0", "Set a key's time to live in milliseconds", "key milliseconds [NX|XX|GT|LT]", NULL},
    {"expireat", cmd_expireat, -3, W | F, 1, 1, 1, "generic", "1.2.0", "Set the expiration for a key as a UNIX timestamp", "key unix-time-seconds [NX|XX|GT|LT]", NULL},
    {"pexpireat", cmd_pexpireat, -3, W | F, 1, 1, 1, "generic", "2.6.0", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "key unix-time-milliseconds [NX|XX|GT|LT]", NULL},
    {"ttl", cmd_ttl, 2, R | F, 1, 1, 1, "generic", "1.0.0", "Get the time to live for a key in seconds", "key", NULL},
    {"pttl", cmd_pttl, 2, R | F, 1, 1, 1, "generic", "2.6.0", "Get the time to live for a key in milliseconds", "key", NULL},
    {"expiretime", cmd_expiretime, 2, R | F, 1, 1, 1, "generic", "7.0.0", "Get the expiration Unix timestamp for a key", "key", NULL},
    {"pexpiretime", cmd_pexpiretime, 2, R | F, 1, 1, 1, "generic", "7.0.0", "Get the expiration Unix timestamp for a key in milliseconds", "key", NULL},
    {"copy", cmd_copy, -3, W | DO, 1, 2, 1, "generic", "6.2.0", "Copy a key", "source destination [DB destination-db] [REPLACE]", NULL},
    {"randomkey", cmd_randomkey, 1, R, 0, 0, 0, "generic", "1.0.0", "Return a random key from the keyspace", NULL, NULL},
    {"move", cmd_move, 3, W | F, 1, 1, 1, "generic", "1.0.0", "Move a key to another database", "key db", NULL},
    {"sort", cmd_sort, -2, W | DO | MK, 1, 1, 1, "generic", "1.0.0", "Sort the elements in a list, set or sorted set",
     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination]", NULL},
    {"sort_ro", cmd_sort_ro, -2, R | MK, 1, 1, 1, "generic", "7.0.0", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]", NULL},
    {"memory", cmd_memory, -2, CT, 0, 0, 0, "server", "4.0.0", "A container for memory diagnostics commands", NULL, memory_subcommands},
    {"object", cmd_object, -2, CT, 0, 0, 0, "generic", "2.2.3", "A container for object introspection commands", NULL, object_subcommands},
    {"touch", cmd_touch, -2, R | F, 1, -1, 1, "generic", "3.2.1", "Alters the last access time of a key(s). Returns the number of existing keys specified.", "key [key ...]", NULL},
    {"persist", cmd_persist, 2, W | F, 1, 1, 1, "generic", "2.2.0", "Remove the expiration from a key", "key", NULL},
    {"dump", cmd_dump, 2, R, 1, 1, 1, "generic", "2.6.0", "Return a serialized version of the value stored at the specified key.", "key", NULL},
    {"migrate", cmd_migrate, -6, W | MK, 3, 3, 1, "generic", "2.6.0", "Atomically transfer a key from a Redis instance to another one.", "host port key|\"\" destination-db timeout [COPY] [REPLACE] [AUTH password|AUTH2 username password] [KEYS key [key ...]]", NULL},
    {"restore", cmd_restore, -4, W | DO, 1, 1, 1, "generic", "2.6.0", "Create a key using the provided serialized value, previously obtained using DUMP.", "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]", NULL},
    /* streams */
    {"xadd", cmd_xadd, -5, W | DO | F, 1, 1, 1, "stream", "5.0.0", "Appends a new entry to a stream", "key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]", NULL},
    {"xtrim", cmd_xtrim, -4, W, 1, 1, 1, "stream", "5.0.0", "Trims the stream to (approximately if '~' is passed) a certain size", "key MAXLEN|MINID [=|~] threshold [LIMIT count]", NULL},
    {"xrange", cmd_xrange, -4, R, 1, 1, 1, "stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval", "key start end [COUNT count]", NULL},
    {"xrevrange", cmd_xrevrange, -4, R, 1, 1, 1, "stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "key end start [COUNT count]", NULL},
    {"xlen", cmd_xlen, 2, R | F, 1, 1, 1, "stream", "5.0.0", "Return the number of entries in a stream", "key", NULL},
    {"xdel", cmd_xdel, -3, W | F, 1, 1, 1, "stream", "5.0.0", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "key id [id ...]", NULL},
    {"xsetid", cmd_xsetid, -3, W | DO | F, 1, 1, 1, "stream", "5.0.0", "An internal command for replicating stream values", "key last-id [ENTRIESADDED entries_added] [MAXDELETEDID max_deleted_entry_id]", NULL},
    {"xread", cmd_xread, -4, R | BL | MK, 0, 0, 0, "stream", "5.0.0", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", NULL},
    {"xreadgroup", cmd_xreadgroup, -7, W | BL | MK, 0, 0, 0, "stream", "5.0.0", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]", NULL},
    {"xgroup", cmd_xgroup, -2, CT, 0, 0, 0, "stream", "5.0.0", "A container for consumer groups commands", NULL, xgroup_subcommands},
    {"xack", cmd_xack, -4, W | F, 1, 1, 1, "stream", "5.0.0", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "key group id [id ...]", NULL},
    {"xpending", cmd_xpending, -3, R, 1, 1, 1, "stream", "5.0.0", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "key group [[IDLE min-idle-time] start end count [consumer]]", NULL},
    {"xclaim", cmd_xclaim, -6, W | F, 1, 1, 1, "stream", "5.0.0", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]", NULL},
    {"xautoclaim", cmd_xautoclaim, -6, W | F, 1, 1, 1, "stream", "6.2.0", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "key group consumer min-idle-time start [COUNT count] [JUSTID]", NULL},
    {"xinfo", cmd_xinfo, -2, CT, 0, 0, 0, "stream", "5.0.0", "A container for stream introspection commands", NULL, xinfo_subcommands},
    /* hyperloglog */
    {"pfadd", cmd_pfadd, -2, W | DO | F, 1, 1, 1, "hyperloglog", "2.8.9", "Adds the specified elements to the specified HyperLogLog.", "key [element [element ...]]", NULL},
    {"pfcount", cmd_pfcount, -2, R | MR, 1, -1, 1, "hyperloglog", "2.8.9", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "key [key ...]", NULL},
    {"pfmerge", cmd_pfmerge, -2, W | DO, 1, -1, 1, "hyperloglog", "2.8.9", "Merge N different HyperLogLogs into a single one.", "destkey [sourcekey [sourcekey ...]]", NULL},
    {"pfdebug", cmd_pfdebug, 3, W | DO | A, 2, 2, 1, "hyperloglog", "2.8.9", "Internal commands for debugging HyperLogLog values", "subcommand key", NULL},
    {"pfselftest", cmd_pfselftest, 1, A, 0, 0, 0, "hyperloglog", "2.8.9", "An internal command for testing HyperLogLog values", NULL, NULL},
    /* strings */
    {"get", cmd_get, 2, R | F, 1, 1, 1, "string", "1.0.0", "Get the value of a key", "key", NULL},
    {"set", cmd_set, -3, W | DO, 1, 1, 1, "string", "1.0.0", "Set the string value of a key", "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]", NULL},
    {"setnx", cmd_setnx, 3, W | DO | F, 1, 1, 1, "string", "1.0.0", "Set the value of a key, only if the key does not exist", "key value", NULL},
    {"setex", cmd_setex, 4, W | DO, 1, 1, 1, "string", "2.0.0", "Set the value and expiration of a key", "key seconds value", NULL},
    {"psetex", cmd_psetex, 4, W | DO, 1, 1, 1, "string", "2.6.0", "Set the value and expiration in milliseconds of a key", "key milliseconds value", NULL},
    {"getdel", cmd_getdel, 2, W | F, 1, 1, 1, "string", "6.2.0", "Get the value of a key and delete the key", "key", NULL},
    {"incr", cmd_incr, 2, W | DO | F, 1, 1, 1, "string", "1.0.0", "Increment the integer value of a key by one", "key", NULL},
    {"decr", cmd_decr, 2, W | DO | F, 1, 1, 1, "string", "1.0.0", "Decrement the integer value of a key by one", "key", NULL},
    {"incrby", cmd_incrby, 3, W | DO | F, 1, 1, 1, "string", "1.0.0", "Increment the integer value of a key by the given amount", "key increment", NULL},
    {"decrby", cmd_decrby, 3, W | DO | F, 1, 1, 1, "string", "1.0.0", "Decrement the integer value of a key by the given number", "key decrement", NULL},
    {"mget", cmd_mget, -2, R | F, 1, -1, 1, "string", "1.0.0", "Get the values of all the given keys", "key [key ...]", NULL},
    {"mset", cmd_mset, -3, W | DO, 1, -1, 2, "string", "1.0.1", "Set multiple keys to multiple values", "key value [key value ...]", NULL},
    {"strlen", cmd_strlen, 2, R | F, 1, 1, 1, "string", "2.2.0", "Get the length of the value stored in a key", "key", NULL},
    {"append", cmd_append, 3, W | DO | F, 1, 1, 1, "string", "2.0.0", "Append a value to a key", "key value", NULL},
    {"getex", cmd_getex, -2, W | F, 1, 1, 1, "string", "6.2.0", "Get the value of a key and optionally set its expiration", "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|PERSIST]", NULL},
    {"getset", cmd_getset, 3, W | DO | F, 1, 1, 1, "string", "1.0.0", "Set the string value of a key and return its old value", "key value", NULL},
    {"getrange", cmd_getrange, 4, R, 1, 1, 1, "string", "2.4.0", "Get a substring of the string stored at a key", "key start end", NULL},
    {"substr", cmd_getrange, 4, R, 1, 1, 1, "string", "1.0.0", "Get a substring of the string stored at a key", "key start end", NULL},
    {"setrange", cmd_setrange, 4, W | DO, 1, 1, 1, "string", "2.2.0", "Overwrite part of a string at key starting at the specified offset", "key offset value", NULL},
    {"incrbyfloat", cmd_incrbyfloat, 3, W | DO | F, 1, 1, 1, "string", "2.6.0", "Increment the float value of a key by the given amount", "key increment", NULL},
    {"msetnx", cmd_msetnx, -3, W | DO, 1, -1, 2, "string", "1.0.1", "Set multiple keys to multiple values, only if none of the keys exist", "key value [key value ...]", NULL},
    {"lcs", cmd_lcs, -3, R, 1, 2, 1, "string", "7.0.0", "Find longest common substring", "key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]", NULL},
    /* bitmaps */
    {"setbit", cmd_setbit, 4, W | DO, 1, 1, 1, "bitmap", "2.2.0", "Sets or clears the bit at offset in the string value stored at key", "key offset value", NULL},
    {"getbit", cmd_getbit, 3, R | F, 1, 1, 1, "bitmap", "2.2.0", "Returns the bit value at offset in the string value stored at key", "key offset", NULL},
    {"bitcount", cmd_bitcount, -2, R, 1, 1, 1, "bitmap", "2.6.0", "Count set bits in a string", "key [start end [BYTE|BIT]]", NULL},
    {"bitpos", cmd_bitpos, -3, R, 1, 1, 1, "bitmap", "2.8.7", "Find first bit set or clear in a string", "key bit [start [end [BYTE|BIT]]]", NULL},
    {"bitop", cmd_bitop, -4, W | DO, 2, -1, 1, "bitmap", "2.6.0", "Perform bitwise operations between strings", "operation destkey key [key ...]", NULL},
    {"bitfield", cmd_bitfield, -2, W | DO, 1, 1, 1, "bitmap", "3.2.0", "Perform arbitrary bitfield integer operations on strings", "key [GET encoding offset] [SET encoding offset value] [INCRBY encoding offset increment] [OVERFLOW WRAP|SAT|FAIL]", NULL},
    {"bitfield_ro", cmd_bitfield_ro, -2, R | F, 1, 1, 1, "bitmap", "6.0.0", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "key GET encoding offset [GET encoding offset ...]", NULL},
    /* hashes */
    {"hset", cmd_hset, -4, W | DO | F, 1, 1, 1, "hash", "2.0.0", "Set the string value of a hash field", "key field value [field value ...]", NULL},
    {"hmset", cmd_hset, -4, W | DO | F, 1, 1, 1, "hash", "2.0.0", "Set multiple hash fields to multiple values", "key field value [field value ...]", NULL},
    {"hsetnx", cmd_hsetnx, 4, W | DO | F, 1, 1, 1, "hash", "2.0.0", "Set the value of a hash field, only if the field does not exist", "key field value", NULL},
    {"hget", cmd_hget, 3, R | F, 1, 1, 1, "hash", "2.0.0", "Get the value of a hash field", "key field", NULL},
    {"hmget", cmd_hmget, -3, R | F, 1, 1, 1, "hash", "2.0.0", "Get the values of all the given hash fields", "key field [field ...]", NULL},
    {"hexists", cmd_hexists, 3, R | F, 1, 1, 1, "hash", "2.0.0", "Determine if a hash field exists", "key field", NULL},
    {"hdel", cmd_hdel, -3, W | F, 1, 1, 1, "hash", "2.0.0", "Delete one or more hash fields", "key field [field ...]", NULL},
    {"hlen", cmd_hlen, 2, R | F, 1, 1, 1, "hash", "2.0.0", "Get the number of fields in a hash", "key", NULL},
    {"hincrby", cmd_hincrby, 4, W | DO | F, 1, 1, 1, "hash", "2.0.0", "Increment the integer value of a hash field by the given number", "key field increment", NULL},
    {"hgetall", cmd_hgetall, 2, R, 1, 1, 1, "hash", "2.0.0", "Get all the fields and values in a hash", "key", NULL},
    {"hkeys", cmd_hkeys, 2, R, 1, 1, 1, "hash", "2.0.0", "Get all the fields in a hash", "key", NULL},
    {"hvals", cmd_hvals, 2, R, 1, 1, 1, "hash", "2.0.0", "Get all the values in a hash", "key", NULL},
    {"hincrbyfloat", cmd_hincrbyfloat, 4, W | DO | F, 1, 1, 1, "hash", "2.6.0", "Increment the float value of a hash field by the given amount", "key field increment", NULL},
    {"hstrlen", cmd_hstrlen, 3, R | F, 1, 1, 1, "hash", "3.2.0", "Get the length of the value of a hash field", "key field", NULL},
    {"hrandfield", cmd_hrandfield, -2, R, 1, 1, 1, "hash", "6.2.0", "Get one or multiple random fields from a hash", "key [count [WITHVALUES]]", NULL},
    {"hscan", cmd_hscan, -3, R, 1, 1, 1, "hash", "2.8.0", "Incrementally iterate hash fields and associated values", "key cursor [MATCH pattern] [COUNT count]", NULL},
    /* pub/sub */
    {"subscribe", cmd_subscribe, -2, PS | NS | L | S | SB, 0, 0, 0, "pubsub", "2.0.0", "Listen for messages published to the given channels", "channel [channel ...]", NULL},
    {"unsubscribe", cmd_unsubscribe, -1, PS | NS | L | S | SB, 0, 0, 0, "pubsub", "2.0.0", "Stop listening for messages posted to the given channels", "[channel [channel ...]]", NULL},
    {"psubscribe", cmd_psubscribe, -2, PS | NS | L | S | SB, 0, 0, 0, "pubsub", "2.0.0", "Listen for messages published to channels matching the given patterns", "(pattern) [(pattern) ...]", NULL},
    {"punsubscribe", cmd_punsubscribe, -1, PS | NS | L | S | SB, 0, 0, 0, "pubsub", "2.0.0", "Stop listening for messages posted to channels matching the given patterns", "[pattern [pattern ...]]", NULL},
    {"ssubscribe", cmd_ssubscribe, -2, PS | NS | L | S | SB, 1, -1, 1, "pubsub", "7.0.0", "Listen for messages published to the given shard channels", "shardchannel [shardchannel ...]", NULL},
    {"sunsubscribe", cmd_sunsubscribe, -1, PS | NS | L | S | SB, 1, -1, 1, "pubsub", "7.0.0", "Stop listening for messages posted to the given shard channels", "[shardchannel [shardchannel ...]]", NULL},
    {"publish", cmd_publish, 3, PS | L | S | F | MR, 0, 0, 0, "pubsub", "2.0.0", "Post a message to a channel", "channel message", NULL},
    {"spublish", cmd_spublish, 3, PS | L | S | F | MR, 1, 1, 1, "pubsub", "7.0.0", "Post a message to a shard channel", "shardchannel message", NULL},
    {"pubsub", cmd_pubsub, -2, CT, 0, 0, 0, "pubsub", "2.8.0", "A container for Pub/Sub commands", NULL, pubsub_subcommands},
    /* lists */
    {"lpush", cmd_lpush, -3, W | DO | F, 1, 1, 1, "list", "1.0.0", "Prepend one or multiple elements to a list", "key element [element ...]", NULL},
    {"rpush", cmd_rpush, -3, W | DO | F, 1, 1, 1, "list", "1.0.0", "Append one or multiple elements to a list", "key element [element ...]", NULL},
    {"lpop", cmd_lpop, -2, W | F, 1, 1, 1, "list", "1.0.0", "Remove and get the first elements in a list", "key [count]", NULL},
    {"rpop", cmd_rpop, -2, W | F, 1, 1, 1, "list", "1.0.0", "Remove and get the last elements in a list", "key [count]", NULL},
    {"llen", cmd_llen, 2, R | F, 1, 1, 1, "list", "1.0.0", "Get the length of a list", "key", NULL},
    {"lindex", cmd_lindex, 3, R, 1, 1, 1, "list", "1.0.0", "Get an element from a list by its index", "key index", NULL},
    {"lrange", cmd_lrange, 4, R, 1, 1, 1, "list", "1.0.0", "Get a range of elements from a list", "key start stop", NULL},
    {"lset", cmd_lset, 4, W | DO, 1, 1, 1, "list", "1.0.0", "Set the value of an element in a list by its index", "key index element", NULL},
    {"linsert", cmd_linsert, 5, W | DO, 1, 1, 1, "list", "2.2.0", "Insert an element before or after another element in a list", "key BEFORE|AFTER pivot element", NULL},
    {"lrem", cmd_lrem, 4, W, 1, 1, 1, "list", "1.0.0", "Remove elements from a list", "key count element", NULL},
    {"ltrim", cmd_ltrim, 4, W, 1, 1, 1, "list", "1.0.0", "Trim a list to the specified range", "key start stop", NULL},
    {"lpushx", cmd_lpushx, -3, W | DO | F, 1, 1, 1, "list", "2.2.0", "Prepend an element to a list, only if the list exists", "key element [element ...]", NULL},
    {"rpushx", cmd_rpushx, -3, W | DO | F, 1, 1, 1, "list", "2.2.0", "Append an element to a list, only if the list exists", "key element [element ...]", NULL},
    {"lmove", cmd_lmove, 5, W | DO, 1, 2, 1, "list", "6.2.0", "Pop an element from a list, push it to another list and return it", "source destination LEFT|RIGHT LEFT|RIGHT", NULL},
    {"rpoplpush", cmd_rpoplpush, 3, W | DO, 1, 2, 1, "list", "1.2.0", "Remove the last element in a list, prepend it to another list and return it", "source destination", NULL},
    {"lpos", cmd_lpos, -3, R, 1, 1, 1, "list", "6.0.6", "Return the index of matching elements on a list", "key element [RANK rank] [COUNT num-matches] [MAXLEN len]", NULL},
    {"lmpop", cmd_lmpop, -4, W | MK, 0, 0, 0, "list", "7.0.0", "Pop elements from a list", "numkeys key [key ...] LEFT|RIGHT [COUNT count]", NULL},
    {"blpop", cmd_blpop, -3, W | NS | BL, 1, -2, 1, "list", "2.0.0", "Remove and get the first element in a list, or block until one is available", "key [key ...] timeout", NULL},
    {"brpop", cmd_brpop, -3, W | NS | BL, 1, -2, 1, "list", "2.0.0", "Remove and get the last element in a list, or block until one is available", "key [key ...] timeout", NULL},
    {"brpoplpush", cmd_brpoplpush, 4, W | DO | NS | BL, 1, 2, 1, "list", "2.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", "source destination timeout", NULL},
    {"blmove", cmd_blmove, 6, W | DO | NS | BL, 1, 2, 1, "list", "6.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", "source destination LEFT|RIGHT LEFT|RIGHT timeout", NULL},
    {"blmpop", cmd_blmpop, -5, W | BL | MK, 0, 0, 0, "list", "7.0.0", "Pop elements from a list, or block until one is available", "timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]", NULL},
    /* sets */
    {"sadd", cmd_sadd, -3, W | DO | F, 1, 1, 1, "set", "1.0.0", "Add one or more members to a set", "key member [member ...]", NULL},
    {"srem", cmd_srem, -3, W | F, 1, 1, 1, "set", "1.0.0", "Remove one or more members from a set", "key member [member ...]", NULL},
    {"smembers", cmd_smembers, 2, R, 1, 1, 1, "set", "1.0.0", "Get all the members in a set", "key", NULL},
    {"sismember", cmd_sismember, 3, R | F, 1, 1, 1, "set", "1.0.0", "Determine if a given value is a member of a set", "key member", NULL},
    {"smismember", cmd_smismember, -3, R | F, 1, 1, 1, "set", "6.2.0", "Returns the membership associated with the given elements for a set", "key member [member ...]", NULL},
    {"scard", cmd_scard, 2, R | F, 1, 1, 1, "set", "1.0.0", "Get the number of members in a set", "key", NULL},
    {"spop", cmd_spop, -2, W | F, 1, 1, 1, "set", "1.0.0", "Remove and return one or multiple random members from a set", "key [count]", NULL},
    {"srandmember", cmd_srandmember, -2, R, 1, 1, 1, "set", "1.0.0", "Get one or multiple random members from a set", "key [count]", NULL},
    {"smove", cmd_smove, 4, W | F, 1, 2, 1, "set", "1.0.0", "Move a member from one set to another", "source destination member", NULL},
    {"sinter", cmd_sinter, -2, R, 1, -1, 1, "set", "1.0.0", "Intersect multiple sets", "key [key ...]", NULL},
    {"sintercard", cmd_sintercard, -3, R | MK, 0, 0, 0, "set", "7.0.0", "Intersect multiple sets and return the cardinality of the result", "numkeys key [key ...] [LIMIT limit]", NULL},
    {"sinterstore", cmd_sinterstore, -3, W | DO, 1, -1, 1, "set", "1.0.0", "Intersect multiple sets and store the resulting set in a key", "destination key [key ...]", NULL},
    {"sunion", cmd_sunion, -2, R, 1, -1, 1, "set", "1.0.0", "Add multiple sets", "key [key ...]", NULL},
    {"sunionstore", cmd_sunionstore, -3, W | DO, 1, -1, 1, "set", "1.0.0", "Add multiple sets and store the resulting set in a key", "destination key [key ...]", NULL},
    {"sdiff", cmd_sdiff, -2, R, 1, -1, 1, "set", "1.0.0", "Subtract multiple sets", "key [key ...]", NULL},
    {"sdiffstore", cmd_sdiffstore, -3, W | DO, 1, -1, 1, "set", "1.0.0", "Subtract multiple sets and store the resulting set in a key", "destination key [key ...]", NULL},
    {"sscan", cmd_sscan, -3, R, 1, 1, 1, "set", "2.8.0", "Incrementally iterate Set elements", "key cursor [MATCH pattern] [COUNT count]", NULL},
    /* sorted sets */
    {"zadd", cmd_zadd, -4, W | DO | F, 1, 1, 1, "sorted-set", "1.2.0", "Add one or more members to a sorted set, or update its score if it already exists", "key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]", NULL},
    {"zincrby", cmd_zincrby, 4, W | DO | F, 1, 1, 1, "sorted-set", "1.2.0", "Increment the score of a member in a sorted set", "key increment member", NULL},
    {"zscore", cmd_zscore, 3, R | F, 1, 1, 1, "sorted-set", "1.2.0", "Get the score associated with the given member in a sorted set", "key member", NULL},
    {"zmscore", cmd_zmscore, -3, R | F, 1, 1, 1, "sorted-set", "6.2.0", "Get the score associated with the given members in a sorted set", "key member [member ...]", NULL},
    {"zrem", cmd_zrem, -3, W | F, 1, 1, 1, "sorted-set", "1.2.0", "Remove one or more members from a sorted set", "key member [member ...]", NULL},
    {"zcard", cmd_zcard, 2, R | F, 1, 1, 1, "sorted-set", "1.2.0", "Get the number of members in a sorted set", "key", NULL},
    {"zcount", cmd_zcount, 4, R | F, 1, 1, 1, "sorted-set", "2.0.0", "Count the members in a sorted set with scores within the given values", "key min max", NULL},
    {"zrank", cmd_zrank, 3, R | F, 1, 1, 1, "sorted-set", "2.0.0", "Determine the index of a member in a sorted set", "key member", NULL},
    {"zrevrank", cmd_zrevrank, 3, R | F, 1, 1, 1, "sorted-set", "2.0.0", "Determine the index of a member in a sorted set, with scores ordered from high to low", "key member", NULL},
    {"zrange", cmd_zrange, -4, R, 1, 1, 1, "sorted-set", "1.2.0", "Return a range of members in a sorted set", "key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]", NULL},
    {"zrevrange", cmd_zrevrange, -4, R, 1, 1, 1, "sorted-set", "1.2.0", "Return a range of members in a sorted set, by index, with scores ordered from high to low", "key start stop [WITHSCORES]", NULL},
    {"zrangebyscore", cmd_zrangebyscore, -4, R, 1, 1, 1, "sorted-set", "1.0.5", "Return a range of members in a sorted set, by score", "key min max [WITHSCORES] [LIMIT offset count]", NULL},
    {"zrevrangebyscore", cmd_zrevrangebyscore, -4, R, 1, 1, 1, "sorted-set", "2.2.0", "Return a range of members in a sorted set, by score, with scores ordered from high to low", "key max min [WITHSCORES] [LIMIT offset count]", NULL},
    {"zrangebylex", cmd_zrangebylex, -4, R, 1, 1, 1, "sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range", "key min max [LIMIT offset count]", NULL},
    {"zrevrangebylex", cmd_zrevrangebylex, -4, R, 1, 1, 1, "sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "key max min [LIMIT offset count]", NULL},
    {"zremrangebyrank", cmd_zremrangebyrank, 4, W, 1, 1, 1, "sorted-set", "2.0.0", "Remove all members in a sorted set within the given indexes", "key start stop", NULL},
    {"zremrangebyscore", cmd_zremrangebyscore, 4, W, 1, 1, 1, "sorted-set", "1.2.0", "Remove all members in a sorted set within the given scores", "key min max", NULL},
    {"zremrangebylex", cmd_zremrangebylex, 4, W, 1, 1, 1, "sorted-set", "2.8.9", "Remove all members in a sorted set between the given lexicographical range", "key min max", NULL},
    {"zpopmin", cmd_zpopmin, -2, W | F, 1, 1, 1, "sorted-set", "5.0.0", "Remove and return members with the lowest scores in a sorted set", "key [count]", NULL},
    {"zpopmax", cmd_zpopmax, -2, W | F, 1, 1, 1, "sorted-set", "5.0.0", "Remove and return members with the highest scores in a sorted set", "key [count]", NULL},
    {"zlexcount", cmd_zlexcount, 4, R | F, 1, 1, 1, "sorted-set", "2.8.9", "Count the number of members in a sorted set between a given lexicographical range", "key min max", NULL},
    {"zrangestore", cmd_zrangestore, -5, W | DO, 1, 2, 1, "sorted-set", "6.2.0", "Store a range of members from sorted set into another key", "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]", NULL},
    {"zmpop", cmd_zmpop, -4, W | MK, 0, 0, 0, "sorted-set", "7.0.0", "Remove and return members with scores in a sorted set", "numkeys key [key ...] MIN|MAX [COUNT count]", NULL},
    {"bzpopmin", cmd_bzpopmin, -3, W | NS | F | BL, 1, -2, 1, "sorted-set", "5.0.0", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "key [key ...] timeout", NULL},
    {"bzpopmax", cmd_bzpopmax, -3, W | NS | F | BL, 1, -2, 1, "sorted-set", "5.0.0", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "key [key ...] timeout", NULL},
    {"bzmpop", cmd_bzmpop, -5, W | BL | MK, 0, 0, 0, "sorted-set", "7.0.0", "Remove and return members with scores in a sorted set or block until one is available", "timeout numkeys key [key ...] MIN|MAX [COUNT count]", NULL},
    {"zunion", cmd_zunion, -3, R | MK, 0, 0, 0, "sorted-set", "6.2.0", "Add multiple sorted sets", "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", NULL},
    {"zinter", cmd_zinter, -3, R | MK, 0, 0, 0, "sorted-set", "6.2.0", "Intersect multiple sorted sets", "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", NULL},
    {"zdiff", cmd_zdiff, -3, R | MK, 0, 0, 0, "sorted-set", "6.2.0", "Subtract multiple sorted sets", "numkeys key [key ...] [WITHSCORES]", NULL},
    {"zintercard", cmd_zintercard, -3, R | MK, 0, 0, 0, "sorted-set", "7.0.0", "Intersect multiple sorted sets and return the cardinality of the result", "numkeys key [key ...] [LIMIT limit]", NULL},
    {"zunionstore", cmd_zunionstore, -4, W | DO | MK, 1, 1, 1, "sorted-set", "2.0.0", "Add multiple sorted sets and store the resulting sorted set in a new key", "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", NULL},
    {"zinterstore", cmd_zinterstore, -4, W | DO | MK, 1, 1, 1, "sorted-set", "2.0.0", "Intersect multiple sorted sets and store the resulting sorted set in a new key", "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", NULL},
    {"zdiffstore", cmd_zdiffstore, -4, W | DO | MK, 1, 1, 1, "sorted-set", "6.2.0", "Subtract multiple sorted sets and store the resulting sorted set in a new key", "destination numkeys key [key ...]", NULL},
    {"zrandmember", cmd_zrandmember, -2, R, 1, 1, 1, "sorted-set", "6.2.0", "Get one or multiple random elements from a sorted set", "key [count [WITHSCORES]]", NULL},
    {"zscan", cmd_zscan, -3, R, 1, 1, 1, "sorted-set", "2.8.0", "Incrementally iterate sorted sets elements and associated scores", "key cursor [MATCH pattern] [COUNT count]", NULL},
    /* geo: sorted sets of 52-bit geohash scores */
    {"geoadd", cmd_geoadd, -5, W | DO, 1, 1, 1, "geo", "3.2.0", "Add one or more geospatial items in the geospatial index represented using a sorted set", "key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]", NULL},
    {"geodist", cmd_geodist, -4, R, 1, 1, 1, "geo", "3.2.0", "Returns the distance between two members of a geospatial index", "key member1 member2 [M|KM|FT|MI]", NULL},
    {"geohash", cmd_geohash, -2, R, 1, 1, 1, "geo", "3.2.0", "Returns members of a geospatial index as standard geohash strings", "key [member [member ...]]", NULL},
    {"geopos", cmd_geopos, -2, R, 1, 1, 1, "geo", "3.2.0", "Returns longitude and latitude of members of a geospatial index", "key [member [member ...]]", NULL},
    {"georadius", cmd_georadius, -6, W | DO | MK, 1, 1, 1, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
     "key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]", NULL},
    {"georadiusbymember", cmd_georadiusbymember, -5, W | DO | MK, 1, 1, 1, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
     "key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]", NULL},
    {"georadiusbymember_ro", cmd_georadiusbymember_ro, -5, R, 1, 1, 1, "geo", "3.2.10", "A read-only variant for GEORADIUSBYMEMBER",
     "key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]", NULL},
    {"georadius_ro", cmd_georadius_ro, -6, R, 1, 1, 1, "geo", "3.2.10", "A read-only variant for GEORADIUS",
     "key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]", NULL},
    {"geosearch", cmd_geosearch, -7, R, 1, 1, 1, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
     "key [FROMMEMBER member|FROMLONLAT longitude latitude] [BYRADIUS radius unit|BYBOX width height unit] [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]", NULL},
    {"geosearchstore", cmd_geosearchstore, -8, W | DO, 1, 2, 1, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
     "destination source [FROMMEMBER member|FROMLONLAT longitude latitude] [BYRADIUS radius unit|BYBOX width height unit] [ASC|DESC] [COUNT count [ANY]] [STOREDIST]", NULL},
};
#define NCOMMANDS (sizeof(table) / sizeof(table[0]))

/* Names by hash, open addressing at most half full, built once per
 * process and read-only after: every server in the process shares it, and
 * no seed is involved (the names are ours). Every command a client sends
 * is looked up here (EVALSHA on the lock path too): a hash and one or two
 * probes cost the same however many commands the table grows to, where a
 * binary search paid a string compare per level. */
#define NAME_SLOTS 512
_Static_assert(NCOMMANDS * 2 <= NAME_SLOTS, "the name index must stay at most half full");
static const command *by_hash[NAME_SLOTS];
static pthread_once_t by_hash_once = PTHREAD_ONCE_INIT;

/* FNV-1a of the lowercase name. */
static uint32_t name_hash_step(uint32_t h, char ch) { return (h ^ (unsigned char)ch) * 16777619u; }
#define NAME_HASH_INIT 2166136261u

/* Stats slots: the table's commands first, then each container's
 * subcommands from sub_base[i] on. */
static size_t sub_base[NCOMMANDS];
static size_t stat_slots = NCOMMANDS;

static void index_names(void)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!table[i].subs) continue;
        sub_base[i] = stat_slots;
        for (const command *sc = table[i].subs; sc->name; sc++) stat_slots++;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        uint32_t h = NAME_HASH_INIT;
        for (const char *p = table[i].name; *p; p++) h = name_hash_step(h, *p);
        size_t slot = h & (NAME_SLOTS - 1);
        while (by_hash[slot]) slot = (slot + 1) & (NAME_SLOTS - 1);
        by_hash[slot] = &table[i];
    }
}

void command_table_init(void) { pthread_once(&by_hash_once, index_names); }

/* Names are short, so folding case into a stack copy (hashed as it is
 * made) is cheaper than a case-insensitive compare at every probe. */
const command *command_lookup(const char *name, size_t len)
{
    char lower[32];
    uint32_t h = NAME_HASH_INIT;
    if (len == 0 || len >= sizeof(lower)) return NULL;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        if (ch == '\0') return NULL;   /* no name has one: strncmp would stop there */
        lower[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
        h = name_hash_step(h, lower[i]);
    }
    for (size_t slot = h & (NAME_SLOTS - 1); by_hash[slot]; slot = (slot + 1) & (NAME_SLOTS - 1)) {
        const char *n = by_hash[slot]->name;
        if (strncmp(n, lower, len) == 0 && n[len] == '\0') return by_hash[slot];   /* stops at n's end */
    }
    return NULL;
}

int command_arity_ok(const command *cmd, int argc)
{
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

size_t command_count(void) { return NCOMMANDS; }

size_t command_stat_slots(void) { return stat_slots; }

size_t command_stat_id(const command *cmd, const command *sub)
{
    size_t i = (size_t)(cmd - table);
    return sub && cmd->subs ? sub_base[i] + (size_t)(sub - cmd->subs) : i;
}

void command_stat_at(size_t id, const command **cmd, const command **sub)
{
    *sub = NULL;
    if (id < NCOMMANDS) {
        *cmd = &table[id];
        return;
    }
    size_t i = NCOMMANDS;
    while (i > 0 && !(table[i - 1].subs && sub_base[i - 1] <= id)) i--;
    *cmd = &table[i - 1];
    *sub = &table[i - 1].subs[id - sub_base[i - 1]];
}
const command *command_at(size_t i) { return i < NCOMMANDS ? &table[i] : NULL; }
