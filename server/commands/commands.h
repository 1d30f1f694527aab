/* commands.h - every command's handler, declared under the file that
 * defines it (table.c's table names them), and db.c's keyspace helpers. */
#ifndef LATCHD_COMMANDS_H
#define LATCHD_COMMANDS_H

/* Where a handler lives: in commands/<family>.c, one file per family;
 * only a command that is the interface of one core module's state (INFO,
 * MONITOR, MULTI/EXEC/WATCH) lives with that module at the top of server/
 * (the last sections below). A container's subcommand table lives with its
 * handler. */

#include "server.h"

/* db.c: key lookups that keep INFO's hit/miss counters honest */
store_key *db_lookup_read(client *c, const resp_slice *key);
/* Redis's LOOKUP_NOTOUCH (TYPE, EXISTS, the TTL family, OBJECT: the access
 * time stays) and LOOKUP_NONOTIFY (no keymiss event). */
enum { DB_NOTOUCH = 1, DB_NONOTIFY = 2 };
store_key *db_lookup_read_flags(client *c, const resp_slice *key, int flags);
store_key *db_lookup_write(client *c, const resp_slice *key);
/* A keyspace event about a key the command named (through store_notify,
 * like every keyspace event). */
void db_notify(client *c, int cls, const char *event, const resp_slice *key);
/* 1 if k is missing or of type want; 0 after replying WRONGTYPE. */
int db_check_type(client *c, const store_key *k, store_type want);
/* Readers: 1 with *k the key (NULL when missing), 0 after WRONGTYPE. */
int db_read_typed(client *c, const resp_slice *key, store_type t, store_key **k);
/* Writers that always store something: the key, created empty when
 * missing; NULL after WRONGTYPE. */
store_key *db_write_create(client *c, const resp_slice *key, store_type t);
/* A database number as SELECT, MOVE and COPY ... DB parse it (Redis's
 * int range and its error texts): its store (made if unused) and *id,
 * or NULL after the error reply. id may be NULL. */
store *db_index_or_reply(client *c, const resp_slice *a, int *id);
/* A list or zset never stays empty: delete argv[1]'s key k, event "del". */
void db_delete_emptied(client *c, store_key *k);
/* A key the command deletes on its own (a destination it empties, a
 * deadline already past): k's value goes as the lazyfree-lazy-* setting
 * for why says (store_release_key), event "del" for name. */
void db_release_key(client *c, store_key *k, const resp_slice *name, store_release_why why);

/* conn.c */
void cmd_ping(client *c);
void cmd_echo(client *c);
void cmd_quit(client *c);
void cmd_select(client *c);
void cmd_hello(client *c);
void cmd_auth(client *c);
void cmd_client(client *c);
void cmd_reset(client *c);
extern const command client_subcommands[];
/* CLIENT INFO's line of c, '\n' ended (the ACL LOG's client-info too). */
void client_info_line(const client *c, resp_buf *dst);

/* acl.c */
void cmd_acl(client *c);
extern const command acl_subcommands[];

/* server.c */
void cmd_config(client *c);
void cmd_command(client *c);
void cmd_time(client *c);
void cmd_dbsize(client *c);
void cmd_flushall(client *c);
void cmd_flushdb(client *c);
void cmd_swapdb(client *c);
void cmd_wait(client *c);
void cmd_lastsave(client *c);
void cmd_save(client *c);
void cmd_bgsave(client *c);
void cmd_bgrewriteaof(client *c);
void cmd_role(client *c);
void cmd_shutdown(client *c);
extern const command config_subcommands[];
extern const command command_subcommands[];

/* docs.c: "name" => its COMMAND DOCS map: Redis's own (meta_table.c)
 * for Redis's commands, else {summary, since, group, arguments} from the
 * table's hints; subcommands from latchd's table either way. container is
 * the parent of a subcommand, else NULL. */
void command_doc_reply(client *c, const command *cmd, const command *container);

/* meta_table.c (scripts/gen-command-meta): what redis-server 7.0.15 says
 * of a command, as RESP3 bytes replayed with reply_resp3: COMMAND INFO's
 * flags, tips and key specs, and the pairs of its COMMAND DOCS map but
 * "subcommands". Sorted by full name; latchd's own commands have none. */
typedef struct command_meta {
    const char *name;
    const char *flags;
    size_t flags_len;
    const char *tips;
    size_t tips_len;
    const char *key_specs;
    size_t key_specs_len;
    const char *doc;
    size_t doc_len;
    int doc_pairs;
} command_meta;
extern const command_meta command_metas[];
extern const size_t command_metas_count;
/* NULL when Redis 7.0 has no such command. */
const command_meta *command_meta_of(const char *fullname);
/* "get" or "client|setname" */
void command_fullname(const command *container, const command *cmd, char *dst, size_t len);

/* slowlog.c, latency.c (at the top of server/: their state is theirs) */
void cmd_slowlog(client *c);
extern const command slowlog_subcommands[];
void cmd_latency(client *c);
extern const command latency_subcommands[];

/* lolwut.c */
void cmd_lolwut(client *c);

/* cluster.c: CLUSTER without cluster support, as Redis answers it */
void cmd_cluster(client *c);
extern const command cluster_subcommands[];

/* clock.c */
void cmd_latchd_clock(client *c);
extern const command clock_subcommands[];

/* debug.c */
void cmd_debug(client *c);
/* enable-debug-command lets c run DEBUG. */
int debug_command_allowed(const client *c);

/* script.c */
void cmd_eval(client *c);
void cmd_eval_ro(client *c);
void cmd_evalsha(client *c);
void cmd_evalsha_ro(client *c);
void cmd_script(client *c);
extern const command script_subcommands[];
/* EVAL's and FCALL's numkeys (argv[2]) as Redis checks it: an integer
 * (else not_int, or the generic text when NULL), not beyond the
 * arguments, not negative. 0 after the error reply. */
int scripting_parse_numkeys(client *c, const char *not_int, long long *numkeys);
/* Run EVAL's script sc or FCALL's function fn with argv[3..] split at
 * numkeys (script.h's types: commands.h only names them). */
struct script;
struct function;
void scripting_run_call(client *c, const struct script *sc, const struct function *fn,
                        long long numkeys, int readonly);

/* function.c */
void cmd_function(client *c);
void cmd_fcall(client *c);
void cmd_fcall_ro(client *c);
extern const command function_subcommands[];

/* dump.c */
void cmd_dump(client *c);
void cmd_restore(client *c);
void cmd_migrate(client *c);   /* migrate.c */

/* keys.c */
void cmd_exists(client *c);
void cmd_del(client *c);
void cmd_unlink(client *c);
void cmd_type(client *c);
void cmd_keys(client *c);
void cmd_scan(client *c);
void cmd_rename(client *c);
void cmd_renamenx(client *c);
void cmd_expire(client *c);
void cmd_pexpire(client *c);
void cmd_expireat(client *c);
void cmd_pexpireat(client *c);
void cmd_ttl(client *c);
void cmd_pttl(client *c);
void cmd_expiretime(client *c);
void cmd_pexpiretime(client *c);
void cmd_persist(client *c);
void cmd_copy(client *c);
void cmd_randomkey(client *c);
void cmd_move(client *c);
/* SCAN's cursor and options, shared with HSCAN/ZSCAN (Redis's
 * parseScanCursorOrReply and scanGenericCommand's option loop). */
int keys_scan_parse_cursor(const resp_slice *a, uint64_t *out);
typedef struct scan_opts {
    long long count;
    const resp_slice *pat;    /* NULL: no MATCH */
    const resp_slice *type;   /* NULL: no TYPE (SCAN only) */
} scan_opts;
/* Options from argv[first]; TYPE only when with_type. 0 after the error. */
int keys_scan_parse_opts(client *c, int first, int with_type, scan_opts *o);
/* MATCH's test (pat NULL or "*": everything). */
int keys_scan_match(const resp_slice *pat, const char *s, size_t len);
/* HSCAN/ZSCAN's start, as Redis takes it: the cursor, the key (of type
 * t), then the options; NULL after the reply (an error, or [0, []] for a
 * missing key, whose options are never read). */
store_key *keys_scan_key_or_reply(client *c, store_type t, uint64_t *cursor, scan_opts *o);

/* sort.c */
void cmd_sort(client *c);
void cmd_sort_ro(client *c);

/* object.c */
void cmd_object(client *c);
void cmd_memory(client *c);
extern const command memory_subcommands[];
void cmd_touch(client *c);
extern const command object_subcommands[];
/* OBJECT REFCOUNT's answer: Redis shares the integers 0..9999. */
long long object_refcount(const server *s, const store_key *k);

/* string.c */
void cmd_get(client *c);
void cmd_set(client *c);
void cmd_setnx(client *c);
void cmd_setex(client *c);
void cmd_psetex(client *c);
void cmd_getdel(client *c);
void cmd_incr(client *c);
void cmd_decr(client *c);
void cmd_incrby(client *c);
void cmd_decrby(client *c);
void cmd_mget(client *c);
void cmd_mset(client *c);
void cmd_strlen(client *c);
void cmd_msetnx(client *c);
void cmd_getset(client *c);
void cmd_getex(client *c);
void cmd_incrbyfloat(client *c);
void cmd_append(client *c);
void cmd_setrange(client *c);
void cmd_getrange(client *c);
void cmd_lcs(client *c);
/* INCRBYFLOAT's and HINCRBYFLOAT's v + incr, as Redis stores it, into
 * buf (STORE_LD_STR_MAX bytes) and *out: 1, or 0 after the NaN/Infinity
 * error reply. */
int float_sum_or_reply(client *c, long double v, long double incr, char *buf, resp_slice *out);
/* Redis's checkStringLength: 1 if a string of size bytes may grow by more
 * (proto-max-bulk-len), else 0 after the error reply. */
int string_length_ok(client *c, long long size, long long more);

/* bitops.c */
void cmd_setbit(client *c);
void cmd_getbit(client *c);
void cmd_bitcount(client *c);
void cmd_bitpos(client *c);
void cmd_bitop(client *c);
void cmd_bitfield(client *c);
void cmd_bitfield_ro(client *c);

/* hyperloglog.c */
void cmd_pfadd(client *c);
void cmd_pfcount(client *c);
void cmd_pfmerge(client *c);
void cmd_pfdebug(client *c);
void cmd_pfselftest(client *c);

/* hash.c */
void cmd_hset(client *c);
void cmd_hsetnx(client *c);
void cmd_hget(client *c);
void cmd_hmget(client *c);
void cmd_hexists(client *c);
void cmd_hdel(client *c);
void cmd_hlen(client *c);
void cmd_hincrby(client *c);
void cmd_hincrbyfloat(client *c);
void cmd_hgetall(client *c);
void cmd_hkeys(client *c);
void cmd_hvals(client *c);
void cmd_hstrlen(client *c);
void cmd_hrandfield(client *c);
void cmd_hscan(client *c);

/* pubsub.c */
void cmd_subscribe(client *c);
void cmd_unsubscribe(client *c);
void cmd_psubscribe(client *c);
void cmd_punsubscribe(client *c);
void cmd_ssubscribe(client *c);
void cmd_sunsubscribe(client *c);
void cmd_publish(client *c);
void cmd_spublish(client *c);
void cmd_pubsub(client *c);
extern const command pubsub_subcommands[];

/* list.c */
void cmd_lpush(client *c);
void cmd_rpush(client *c);
void cmd_lpop(client *c);
void cmd_rpop(client *c);
void cmd_llen(client *c);
void cmd_lindex(client *c);
void cmd_lrange(client *c);
void cmd_lset(client *c);
void cmd_linsert(client *c);
void cmd_lrem(client *c);
void cmd_ltrim(client *c);
void cmd_lpushx(client *c);
void cmd_rpushx(client *c);
void cmd_lmove(client *c);
void cmd_rpoplpush(client *c);
void cmd_lpos(client *c);
void cmd_lmpop(client *c);
/* LMPOP/ZMPOP's "numkeys key ... END [COUNT count]" (numkeys at
 * argv[numkeys_idx]) with Redis's errors: the END word's index (*end 0 for end0, 1 for end1) and *count (1 if not
 * given), or 0 after the error reply. */
int list_mpop_parse_or_reply(client *c, int numkeys_idx, const char *end0, const char *end1, int *end,
                             long long *count);
/* The blocking forms (block.c parks the client). */
void cmd_blpop(client *c);
void cmd_brpop(client *c);
void cmd_blmpop(client *c);
void cmd_blmove(client *c);
void cmd_brpoplpush(client *c);

/* set.c */
void cmd_sadd(client *c);
void cmd_srem(client *c);
void cmd_smembers(client *c);
void cmd_sismember(client *c);
void cmd_smismember(client *c);
void cmd_scard(client *c);
void cmd_spop(client *c);
void cmd_srandmember(client *c);
void cmd_smove(client *c);
void cmd_sinter(client *c);
void cmd_sintercard(client *c);
void cmd_sinterstore(client *c);
void cmd_sunion(client *c);
void cmd_sunionstore(client *c);
void cmd_sdiff(client *c);
void cmd_sdiffstore(client *c);
void cmd_sscan(client *c);

/* zset.c */
void cmd_zadd(client *c);
void cmd_zincrby(client *c);
void cmd_zscore(client *c);
void cmd_zmscore(client *c);
void cmd_zrem(client *c);
void cmd_zcard(client *c);
void cmd_zcount(client *c);
void cmd_zrank(client *c);
void cmd_zrevrank(client *c);
void cmd_zrange(client *c);
void cmd_zrevrange(client *c);
void cmd_zrangebyscore(client *c);
void cmd_zrevrangebyscore(client *c);
void cmd_zrangebylex(client *c);
void cmd_zrevrangebylex(client *c);
void cmd_zremrangebyrank(client *c);
void cmd_zremrangebyscore(client *c);
void cmd_zremrangebylex(client *c);
void cmd_zpopmin(client *c);
void cmd_zpopmax(client *c);
void cmd_bzpopmin(client *c);
void cmd_bzpopmax(client *c);
void cmd_bzmpop(client *c);
void cmd_zlexcount(client *c);
void cmd_zrangestore(client *c);
void cmd_zmpop(client *c);
/* ZADD's work once its arguments are checked (GEOADD's too): from
 * argv[first], every stride arguments make one member, the last of them,
 * whose score score_of reads from the first ones; flags and ch as ZADD's
 * options. Replies and sends the "zadd" / "zincr" event. */
typedef int (*zset_score_fn)(const resp_slice *args, double *score);
void zset_add_members(client *c, int flags, int ch, int first, int stride, zset_score_fn score_of);

/* zset_ops.c */
void cmd_zunion(client *c);
void cmd_zinter(client *c);
void cmd_zdiff(client *c);
void cmd_zintercard(client *c);
void cmd_zunionstore(client *c);
void cmd_zinterstore(client *c);
void cmd_zdiffstore(client *c);
void cmd_zrandmember(client *c);
void cmd_zscan(client *c);
/* ZRANDMEMBER / HRANDFIELD's argv[2] count and argv[3] `with` word (Redis's
 * range, syntax and "value is out of range" checks); 0 after the error. */
int zset_rand_count_or_reply(client *c, const char *with, long long *count, int *withx);
/* Members and scores gathered for a reply or a destination (hash.c: a
 * hash's fields and values as consecutive items), copied into one arena:
 * the destination may be one of the inputs, and nothing is allocated per
 * item. */
typedef struct zset_item {
    size_t off;          /* the member's bytes in the arena */
    const char *ptr;     /* set by zset_result_seal */
    size_t len;
    double score;
    size_t seq;          /* order of arrival */
} zset_item;
typedef struct zset_result {
    zset_item *v;
    size_t n, cap;
    char *arena;
    size_t used, room;
} zset_result;
void zset_result_add(zset_result *r, const char *m, size_t mlen, double score);
/* Done adding: every item's ptr is set. */
void zset_result_seal(zset_result *r);
void zset_result_free(zset_result *r);
/* The sealed result, in Redis's order, as dst's new value (setKey: the old
 * value and TTL go) with `event`, replying its size; an empty one deletes
 * dst ("del" if it existed) and replies 0. */
void zset_result_store(client *c, const resp_slice *dst, const zset_result *r, const char *event);

/* geo.c */
void cmd_geoadd(client *c);
void cmd_geopos(client *c);
void cmd_geodist(client *c);
void cmd_geohash(client *c);
void cmd_georadius(client *c);
void cmd_georadius_ro(client *c);
void cmd_georadiusbymember(client *c);
void cmd_georadiusbymember_ro(client *c);
void cmd_geosearch(client *c);
void cmd_geosearchstore(client *c);

/* stream.c */
void cmd_xadd(client *c);
void cmd_xtrim(client *c);
/* Where XADD's / XTRIM's options sat in c's argv as the command parsed
 * them (the AOF logs a "~" trim as the "=" one it came to, and an ID the
 * server chose as the one it chose); 0 for what was not given. */
typedef struct stream_trim_pos {
    int approx;      /* the "~" */
    int threshold;   /* MAXLEN's count or MINID's ID */
    int by_minid;
    int limit;       /* the LIMIT word; its count follows */
    int id;          /* XADD's ID (or "*") */
} stream_trim_pos;
/* Parses c's XADD (xadd 1) or XTRIM arguments again, for a command that
 * ran without error (so they parse): 1 with *pos filled in. */
int stream_trim_positions(client *c, int xadd, stream_trim_pos *pos);
void cmd_xrange(client *c);
void cmd_xrevrange(client *c);
void cmd_xlen(client *c);
void cmd_xdel(client *c);
void cmd_xsetid(client *c);
void cmd_xread(client *c);
void cmd_xreadgroup(client *c);
/* XREAD/XREADGROUP's keys as their key spec finds them: the first half of
 * what follows STREAMS; how many, from argv[*first] on (0: none). */
int stream_xread_keys(const resp_slice *argv, int argc, int *first);
void cmd_xgroup(client *c);
extern const command xgroup_subcommands[];
void cmd_xack(client *c);
void cmd_xpending(client *c);
void cmd_xclaim(client *c);
void cmd_xautoclaim(client *c);
void cmd_xinfo(client *c);
extern const command xinfo_subcommands[];

/* The commands that are the interface of one core module's state live
 * with it, at the top of server/. */
/* ../info.c */
void cmd_info(client *c);
/* ../monitor.c */
void cmd_monitor(client *c);
/* ../multi.c */
void cmd_multi(client *c);
void cmd_exec(client *c);
void cmd_discard(client *c);
void cmd_watch(client *c);
void cmd_unwatch(client *c);
/* ../tracking.c: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO */
void tracking_cmd_tracking(client *c);
void tracking_cmd_caching(client *c);
void tracking_cmd_getredir(client *c);
void tracking_cmd_trackinginfo(client *c);

#endif
