/* persist.h - Redis 7.0's RDB format: values (DUMP/RESTORE payloads),
 * whole files (SAVE, BGSAVE, loading), and the pure codecs under them:
 * CRC64 (Jones), LZF, listpack. Works on store/'s API and on memory only:
 * no I/O, no server state (options come in as arguments, bytes leave
 * through a sink) — but for rdb_file.c: the server's dump file, at the end. */
#ifndef LATCHD_PERSIST_H
#define LATCHD_PERSIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store.h"

/* RDB version 10 (Redis 7.0): DUMP payloads say it, RESTORE takes <= it. */
#define PERSIST_RDB_VERSION 10

/* RDB object types (Redis's RDB_TYPE_*). */
enum {
    PERSIST_TYPE_STRING = 0,
    PERSIST_TYPE_LIST = 1,
    PERSIST_TYPE_SET = 2,
    PERSIST_TYPE_ZSET = 3,
    PERSIST_TYPE_HASH = 4,
    PERSIST_TYPE_ZSET_2 = 5,
    PERSIST_TYPE_HASH_ZIPMAP = 9,
    PERSIST_TYPE_LIST_ZIPLIST = 10,
    PERSIST_TYPE_SET_INTSET = 11,
    PERSIST_TYPE_ZSET_ZIPLIST = 12,
    PERSIST_TYPE_HASH_ZIPLIST = 13,
    PERSIST_TYPE_LIST_QUICKLIST = 14,
    PERSIST_TYPE_HASH_LISTPACK = 16,
    PERSIST_TYPE_ZSET_LISTPACK = 17,
    PERSIST_TYPE_LIST_QUICKLIST_2 = 18,
    PERSIST_TYPE_STREAM_LISTPACKS = 15,
    PERSIST_TYPE_STREAM_LISTPACKS_2 = 19,
};

/* RDB opcodes of function libraries: 7.0 GA's, and 7.0-rc's. */
enum { PERSIST_OPCODE_FUNCTION2 = 245, PERSIST_OPCODE_FUNCTION = 246 };

/* Errors are values: 0 is success, these are the failures. */
enum {
    PERSIST_OK = 0,
    PERSIST_ERR_FORMAT = -1,    /* malformed, truncated, or a type latchd has not */
    PERSIST_ERR_CHECKSUM = -2,  /* payload too short, newer RDB version, CRC mismatch */
    PERSIST_ERR_IO = -3,        /* a writer's sink failed */
    PERSIST_ERR_NOT_FUNCTION = -4,  /* a functions payload holding another record */
    PERSIST_ERR_TRUNCATED = -5,     /* an AOF record cut off by the end of the bytes */
};

/* A growing byte buffer (mem_oom on allocation failure, like every module). */
typedef struct persist_buf {
    unsigned char *p;
    size_t len, cap;
} persist_buf;

/* Room for n more bytes (grown by doubling; aborts as mem_realloc does). */
void persist_buf_reserve(persist_buf *b, size_t n);
/* Inline: a snapshot writes a few small pieces per key. */
static inline void persist_buf_put(persist_buf *b, const void *p, size_t n)
{
    if (n == 0) return;   /* p may be NULL then */
    if (b->cap - b->len < n) persist_buf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}
void persist_buf_free(persist_buf *b);

/* ---- CRC64: Redis's crc64 (Jones polynomial, reflected, init 0, no
 * final xor). Chain calls by passing the previous result as crc. ---- */
uint64_t persist_crc64(uint64_t crc, const void *p, size_t len);

/* ---- LZF (liblzf's format, as Redis writes and reads it) ---- */
/* The compressor's 256 KiB hash table: zeroed once when made, and left
 * zeroed by every call, so encoding many strings pays for it once. */
typedef struct persist_lzf_table persist_lzf_table;
persist_lzf_table *persist_lzf_table_new(void);
void persist_lzf_table_free(persist_lzf_table *t);   /* NULL is fine */
/* Compress in into out (outcap bytes) with table t. Returns the
 * compressed length, or 0 when the result would not fit in outcap
 * (callers pass less than inlen to demand a saving) or inlen is 0. */
size_t persist_lzf_compress(persist_lzf_table *t, const void *in, size_t inlen, void *out,
                            size_t outcap);
/* Decompress in into out. Returns the decompressed length, or 0 when the
 * input is malformed (a back reference before the start, truncated) or
 * the output would exceed outcap. */
size_t persist_lzf_decompress(const void *in, size_t inlen, void *out, size_t outcap);

/* ---- listpack (Redis 7.0's listpack.c format) ---- */
typedef struct persist_lp_writer {
    persist_buf *b;
    size_t start;   /* offset of the listpack's header in b */
    size_t count;
} persist_lp_writer;

/* Begin a listpack at the end of b; append entries; end it (fixes the
 * header). A string that is a canonical int64 is stored as an integer,
 * as lpAppend does. */
void persist_lp_begin(persist_lp_writer *w, persist_buf *b);
void persist_lp_append(persist_lp_writer *w, const char *s, size_t len);
void persist_lp_end(persist_lp_writer *w);
/* Room persist_lp_pair needs for two entries of at most PERSIST_LP_PAIR_MAX
 * bytes each: header, two entries (head, bytes, backlen), terminator. */
#define PERSIST_LP_PAIR_MAX 64
#define PERSIST_LP_PAIR_ROOM (6 + 2 * (2 + PERSIST_LP_PAIR_MAX + 1) + 1)
/* The whole listpack of a and b (each at most PERSIST_LP_PAIR_MAX bytes)
 * at out, in one pass, as begin/append/append/end would write it; its
 * length. A one-field hash's value: a held lock's, in every snapshot. */
size_t persist_lp_pair(unsigned char out[PERSIST_LP_PAIR_ROOM], const char *a, size_t alen, const char *b,
                       size_t blen);

/* One decoded listpack / ziplist entry: a string (s, len) or an integer. */
typedef struct persist_elem {
    const unsigned char *s;   /* NULL for an integer */
    size_t len;
    long long v;
} persist_elem;

/* Validate a whole listpack of len bytes (header, every entry's encoding,
 * bounds and backlen, count, terminator). PERSIST_OK with *count the
 * number of entries, or PERSIST_ERR_FORMAT. */
int persist_lp_validate(const unsigned char *lp, size_t len, size_t *count);
/* Iterate a validated listpack: *pos starts at 0; 1 with *e filled while
 * there are entries, then 0. */
int persist_lp_next(const unsigned char *lp, size_t *pos, persist_elem *e);

/* ---- values ---- */

/* The configuration a value's encoding depends on (Redis's names). */
typedef struct persist_opts {
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    int list_max_listpack_size;   /* list-max-listpack-size: <0 size class, >0 count */
    int rdbcompression;           /* LZF-compress strings over 20 bytes when it saves */
    int rdbchecksum;              /* files: write the CRC64 (else zero), check it on load */
} persist_opts;

/* Append k's value as Redis 7.0's rdbSaveObjectType + rdbSaveObject. */
void persist_value_encode(const store_key *k, const persist_opts *o, persist_buf *out);
/* DUMP's payload: the value, the 2-byte RDB version (LE) and the CRC64 (LE)
 * of everything before it. */
void persist_dump(const store_key *k, const persist_opts *o, persist_buf *out);
/* RESTORE's first check (verifyDumpPayload): PERSIST_OK or PERSIST_ERR_CHECKSUM. */
int persist_payload_check(const unsigned char *p, size_t len);

/* A value decoded and validated but not yet in a store: RESTORE decodes
 * all of it first, so a bad payload changes nothing. */
typedef struct persist_value persist_value;

/* Decode one value (type byte and body) from p[0..len): for a DUMP
 * payload pass all of it (as Redis, the body may run into the trailer).
 * PERSIST_OK with *out (owned by the caller), or PERSIST_ERR_FORMAT for
 * anything Redis 7.0 would refuse, an empty value, duplicate hash fields,
 * zset or set members, an intset out of order, NaN scores, lengths past
 * STORE_MAX_LEN, and the types latchd has not (streams, modules). The
 * value may point into p:
 * p must stay valid and unchanged until persist_value_store or free. */
int persist_value_decode(const unsigned char *p, size_t len, persist_value **out, size_t *deep_checks);
store_type persist_value_type(const persist_value *v);
/* The listpacks and intsets checked entry by entry while v was decoded
 * (set in *deep_checks by persist_value_decode, NULL: not wanted, even
 * when it fails): what Redis 7.0 counts in dump_payload_sanitizations
 * under sanitize-dump-payload yes, which is how latchd always checks. */
size_t persist_value_deep_checks(const persist_value *v);
/* Put v under key, which must not exist, and free v. Cannot fail. */
store_key *persist_value_store(persist_value *v, store *s, const char *key, size_t klen);
void persist_value_free(persist_value *v);

/* ---- function libraries (FUNCTION DUMP/RESTORE, the RDB's records) ---- */

typedef struct persist_pstr {
    const char *p;
    size_t len;
} persist_pstr;

/* FUNCTION DUMP's payload: each library's code as an RDB_OPCODE_FUNCTION2
 * record, then the RDB version and CRC64 as persist_dump's trailer. */
void persist_functions_dump(const persist_pstr *codes, size_t n, int rdbcompression,
                            persist_buf *out);
/* The library codes of a checked FUNCTION DUMP payload (records up to its
 * 10-byte trailer; 7.0-rc RDB_OPCODE_FUNCTION records are turned into
 * the GA form, as Redis does). PERSIST_OK with *out (items: the codes),
 * PERSIST_ERR_NOT_FUNCTION, or PERSIST_ERR_FORMAT. */
int persist_functions_decode(const unsigned char *p, size_t len, persist_value **out);
size_t persist_value_count(const persist_value *v);
void persist_value_item(const persist_value *v, size_t i, const char **p, size_t *len);

/* ---- whole RDB files (rdbSaveRio / rdbLoadRio) ---- */

/* Takes n bytes of the file, in order: 0, or nonzero if they could not be
 * written (the writer then stops passing bytes on). */
typedef int (*persist_rdb_sink)(const void *p, size_t n, void *ctx);

/* The AUX fields a file starts with. */
typedef struct persist_rdb_aux {
    const char *redis_ver;
    long long ctime;       /* seconds */
    long long used_mem;
} persist_rdb_aux;

/* A file in the making: bytes are buffered (64 KiB) and checksummed on
 * their way to the sink, so no file is held whole in memory. */
typedef struct persist_rdb_writer {
    persist_buf buf, value;
    persist_buf scratch[2];   /* reused by every value: a listpack, LZF output */
    persist_lzf_table *lzf;   /* made on the first string worth compressing */
    uint64_t crc;
    persist_opts opts;
    persist_rdb_sink sink;
    void *sink_ctx;
    void (*after_key)(void *sink_ctx);   /* NULL, or called after each key */
    int failed;
} persist_rdb_writer;

/* Magic, version and AUX fields; then one persist_rdb_db per database
 * (an empty one writes nothing); then persist_rdb_end: the EOF opcode and
 * the CRC64. end frees the writer's buffers and returns PERSIST_OK or
 * PERSIST_ERR_IO if the sink failed anywhere. */
void persist_rdb_begin(persist_rdb_writer *w, const persist_opts *o, const persist_rdb_aux *aux,
                       persist_rdb_sink sink, void *sink_ctx);
void persist_rdb_db(persist_rdb_writer *w, int id, store *st);
/* The function libraries' codes, as FUNCTION2 records: after begin and
 * before the databases, where Redis writes them. */
void persist_rdb_functions(persist_rdb_writer *w, const persist_pstr *codes, size_t n);
int persist_rdb_end(persist_rdb_writer *w);

/* Each key of a file, as read: its database number (not checked against
 * any limit), name (valid only during the call), value (the callee's, to
 * store or free) and deadline (STORE_NO_DEADLINE or absolute ms, maybe
 * past). Returns PERSIST_OK to go on; anything else stops the load and is
 * what persist_rdb_load returns. */
typedef int (*persist_rdb_key_fn)(int db, const char *key, size_t klen, persist_value *v,
                                  int64_t deadline_ms, void *ctx);
/* Each function library's code (valid only during the call); returns as
 * persist_rdb_key_fn does. */
typedef int (*persist_rdb_lib_fn)(const char *code, size_t len, void *ctx);
/* Read a whole file held in memory: RDB versions 1 to 10, every value type
 * persist_value_decode takes, function libraries to lib (NULL: a file with
 * any is PERSIST_ERR_FORMAT), AUX/RESIZEDB/IDLE/FREQ skipped; the trailer's
 * CRC64 checked when check_crc and it is not zero. Returns PERSIST_OK,
 * PERSIST_ERR_FORMAT (malformed, truncated, module data),
 * PERSIST_ERR_CHECKSUM, or fn's or lib's error. Keys and libraries before
 * an error have been handed on. */
int persist_rdb_load(const unsigned char *p, size_t len, int check_crc, persist_rdb_key_fn fn,
                     persist_rdb_lib_fn lib, void *ctx);
/* What a loader may take besides keys and libraries; either may be NULL. */
typedef struct persist_rdb_hooks {
    /* A database's RESIZEDB: how many keys (and of them with a deadline)
     * the file says follow; never more than the file's length. */
    void (*resize)(int db, uint64_t keys, uint64_t expires, void *ctx);
    /* The next key's name (valid only during the call), before its value
     * is read: what storing it will touch can be fetched meanwhile. */
    void (*next_key)(int db, const char *key, size_t klen, void *ctx);
} persist_rdb_hooks;
/* The same, with hooks (may be NULL), for an RDB that bytes may follow (a
 * pre-7.0 AOF's RDB preamble, its commands after it): *used, on
 * PERSIST_OK, is where the RDB ended. */
int persist_rdb_load_prefix(const unsigned char *p, size_t len, int check_crc, persist_rdb_key_fn fn,
                            persist_rdb_lib_fn lib, const persist_rdb_hooks *hooks, void *ctx, size_t *used);

/* ---- append-only file text (aof_read.c) ---- */

/* A record's arguments, pointing into the bytes read; v grows to the
 * largest record (persist_aof_args_free). */
typedef struct persist_aof_args {
    persist_pstr *v;
    size_t cap;
    int argc;
} persist_aof_args;

enum { PERSIST_AOF_END = 1 };
/* The record at *pos of p[0..len), "#" annotation lines before it skipped
 * (the last one may lack its newline):
 * PERSIST_OK with a filled and *pos past it; PERSIST_AOF_END at the end
 * of the bytes; PERSIST_ERR_TRUNCATED when the bytes end inside a record
 * (*pos stays at its start, past the annotations); PERSIST_ERR_FORMAT for
 * anything but "*<n>\r\n" and n "$<len>\r\n<bytes>\r\n" (n >= 1). */
int persist_aof_next(const unsigned char *p, size_t len, size_t *pos, persist_aof_args *a);
void persist_aof_args_free(persist_aof_args *a);

/* One line of the manifest: "file <name> seq <n> type <b|h|i>" (the name
 * maybe quoted as Redis's sdscatrepr quotes it, keys in any order). */
#define PERSIST_AOF_NAME_MAX 1024
typedef struct persist_aof_info {
    char name[PERSIST_AOF_NAME_MAX];
    long long seq;
    char type;   /* 'b' base, 'h' history, 'i' incr */
} persist_aof_info;
/* 1 with info filled, 0 for a blank or comment line, PERSIST_ERR_FORMAT. */
int persist_aof_manifest_line(const char *line, size_t len, persist_aof_info *info);

/* ---- rdb_file.c: the server's dump file (dbfilename, in dir, which is
 * the working directory) ---- */
#include "server.h"

/* The value encoding options a server's configuration gives. */
persist_opts rdb_opts(const server *s);
/* SAVE: every database, now, into a temp file renamed over the dump file
 * (the old one stays if anything fails). 0, or -1 logged. Updates LASTSAVE,
 * the change count and INFO persistence. */
int rdb_save(server *s);
/* Redis's redisFork: fork() timed for INFO (latest_fork_usec, total_forks)
 * and the latency monitor's "fork" event. *report gets a pipe's end the
 * child tells its copy-on-write size through: the write end in the child,
 * which ends with persist_child_exit, the read end in the parent, which
 * reads it with persist_child_cow once the child has exited (-1: none).
 * The child pins itself to cpulist (affinity.c; "" or NULL: unpinned). */
pid_t persist_fork(server *s, int *report, const char *cpulist);
void persist_child_exit(int report, int ok) __attribute__((noreturn));
/* The exited child's copy-on-write bytes (0 if it said nothing); the pipe
 * is closed and *report set to -1. */
size_t persist_child_cow(int *report);
/* BGSAVE: a forked child saves while the server goes on; 0 when started,
 * -1 if a child runs already or fork failed (logged). Its end is noticed
 * on SIGCHLD and counted as rdb_save counts. */
int rdb_bgsave(server *s);
/* Before a shutdown (SHUTDOWN's flags; a signal passes none): a running
 * child is stopped, then the file saved if SAVE, or if save points are set
 * and not NOSAVE. -1 when that save failed and not FORCE: the server must
 * not exit (logged as Redis logs it). */
int rdb_shutdown_save(server *s, int save, int nosave, int force);
/* Stop a running child and remove its temp file. */
void rdb_wait_child(server *s);
/* The save points changed (or at start): the once-a-second check runs
 * only while there are some. */
void rdb_save_points_update(server *s);
/* BGSAVE inside MULTI, or SCHEDULE while one runs: started from the loop
 * as soon as no child runs. */
void rdb_schedule_bgsave(server *s);
void rdb_close(server *s);
/* Load the dump file if it exists: 0 when loaded or absent, -1 (logged as
 * Redis logs it) for a file that does not load; what was read before the
 * error stays. A key or library that is there already is an error, unless
 * merge (DEBUG RELOAD MERGE): then the file's replaces it. */
int rdb_load(server *s, int merge);
/* The whole RDB file into fd (not synced): 0, or -1 (errno set). */
int rdb_write_fd(server *s, int fd);
/* An RDB held in memory (an AOF's base, or a pre-7.0 AOF's preamble: *used
 * is where it ended): PERSIST_OK or the loader's error, logged by the
 * caller. Keys that are there are an error. */
int rdb_load_mem(server *s, const unsigned char *p, size_t len, size_t *used);

/* ---- aof.c: the append-only file (Redis 7.0's multi-part layout in
 * appenddirname under dir: a manifest, one base file, incr files) ---- */

/* At start, before listening clients are served: with appendonly yes the
 * files are loaded (instead of the dump file) and opened for appending. 0,
 * or -1 logged (the server must not start). */
int aof_start(server *s);
/* Run c's current command (c->cmd->proc) and log what it changed: in
 * place of cmd->proc(c) wherever commands run, while s->aof_on. */
void aof_proc(client *c);
/* The key just reclaimed past its deadline or evicted: a DEL in the log,
 * or UNLINK when its config freed it lazily (lazyfree-lazy-expire /
 * -eviction), as Redis's propagateDeletion. */
void aof_key_deleted(server *s, int db, const char *key, size_t klen, int lazy);
/* What commands changed so far: the change count without reclaims. */
static inline uint64_t aof_changes(const server *s) { return s->dirty - s->stat_expired; }
/* The blocked command of c (its argv in place) was served by key, which had
 * len_before elements, aof_changes was changes_before: logged as the pop
 * or move it did (Redis's serveClientBlockedOnList), if it changed anything. */
void aof_served(client *c, const resp_slice *key, size_t len_before, uint64_t changes_before);
/* A command that logs its own effects (SPOP) says so, then adds them. */
void aof_handled(client *c);
void aof_add(client *c, int argc, const resp_slice *argv);
/* aof_add of PEXPIREAT key deadline (a script's pexpire, as Redis
 * rewrites it). */
void aof_add_pexpireat(client *c, const resp_slice *key, long long deadline);
/* A lock acquire as its Lua text logs it: hincrby (hset when by_hset) key
 * owner 1, then aof_add_pexpireat of key deadline. */
void aof_add_acquire(client *c, int by_hset, const resp_slice *key, const resp_slice *owner, long long deadline);
/* The records added between these (a served XREADGROUP's claims) are one
 * unit: MULTI/EXEC around them when more than one, as Redis's afterCommand
 * propagates a served client's. */
void aof_unit_begin(server *s);
void aof_unit_end(server *s);
/* FLUSHALL/FLUSHDB logged even when nothing was there (forced). */
void aof_force(client *c);
/* Before replies are written (net_flush_pending): replies whose records
 * are on disk are let go (not mid_command: a busy script's flush), then
 * the records of this loop iteration go to the file. With appendfsync
 * always every reply pending now is held until the fdatasync that covers
 * what was written so far, which runs on libuv's thread pool while the
 * loop goes on (server.h: net_hold_pending). */
void aof_before_sleep(server *s, int mid_command);
/* Replication (repl/): the records are built as for the file (which is
 * then unavailable) and taken once per loop iteration: aof_records gives
 * the complete ones so far (len 0 inside a running command), which stay
 * valid until aof_records_taken drops them. */
void aof_replicate(server *s);
const char *aof_records(server *s, size_t *len);
void aof_records_taken(server *s);
/* BGREWRITEAOF: 0 started (or scheduled: *scheduled 1), -1 with Redis's
 * error text in err. */
int aof_bgrewrite(server *s, int *scheduled, const char **err);
/* CONFIG SET appendonly: 0, or -1 logged. */
int aof_set_enabled(server *s, int on);
/* A rewrite child runs: no other child may start (BGSAVE waits). */
int aof_rewriting(const server *s);
/* The write error that stops writes (MISCONF), or NULL. */
const char *aof_write_error(const server *s);
/* SHUTDOWN: the buffer written and synced, a rewrite child stopped, and
 * none started again until the exit, or aof_shutdown_aborted (the final
 * save failed: the server goes on). */
void aof_shutdown(server *s);
void aof_shutdown_aborted(server *s);
/* DEBUG LOADAOF: flush, empty the databases, load the files again. 0 or -1. */
int aof_reload(server *s);
void aof_info(server *s, resp_buf *b);
/* INFO's mem_aof_buffer: what the buffer of the iteration's records holds
 * allocated while the AOF is on (Redis's sdsZmallocSize(aof_buf)), else 0. */
size_t aof_buffer_memory(const server *s);
/* The server's handles closed and a rewrite child killed (shutdown);
 * then, after the loop, freed. */
void aof_close(server *s);
void aof_free(server *s);
/* While s->aof_write_err: 1 after Redis's MISCONF error when c's command
 * writes (or is PING), else 0. */
int aof_refuses(client *c, const command *cmd);

#endif
