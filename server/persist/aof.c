/* aof.c - the append-only file: what commands changed, logged as Redis 7.0
 * propagates it, written before replies go out, and the multi-part files
 * (manifest, base, incr) loaded at start and rewritten in a forked child. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands/commands.h"
#include "mem.h"
#include "num.h"
#include "persist.h"
#include "scripting/script.h"
#include "stream.h"

enum { AOF_OFF, AOF_ON, AOF_WAIT_REWRITE };
#define WRITE_ERROR_LOG_S 30     /* Redis's AOF_WRITE_LOG_ERROR_RATE */
#define MAX_FILES 4096

typedef struct aof_file {
    char *name;
    long long seq;
} aof_file;

struct aof_state {
    server *srv;
    int state;                 /* AOF_OFF / AOF_ON / AOF_WAIT_REWRITE */
    int repl;                  /* the records feed replication (aof_replicate), never a file */
    /* propagation */
    int depth;                 /* nested command calls running (EXEC, scripts) */
    int handled, forced;       /* the running command logged itself / must be logged */
    size_t nops;               /* records of the running command so far (Redis's also_propagate) */
    size_t pending_start;      /* where they start in buf */
    size_t multi_at;           /* where MULTI goes when a second one comes: after the first's SELECT */
    resp_slice *scratch;       /* argv of a rewritten record */
    size_t scratch_cap;
    char num[4][24];           /* digits of rewritten arguments */
    long long deadline;        /* the last deadline written (deadline_cached) */
    char deadline_bulk[32];    /* as a bulk, "$<n>\r\n<digits>\r\n"; copied whole */
    size_t deadline_bulk_len;  /* 0: none yet */
    resp_slice deadline_digits;   /* the digits, in deadline_bulk */
    int selected_db;           /* the file's current SELECT, -1: none yet */
    uint64_t ts_s;             /* the last #TS: annotation's second */
    resp_buf buf;              /* records of this loop iteration (Redis's aof_buf) */
    /* the open incr file */
    int fd;
    long long incr_size, fsynced_size;   /* aof_last_incr_size, aof_last_incr_fsync_offset */
    long long current_size, base_size;   /* aof_current_size, aof_rewrite_base_size */
    uint64_t last_fsync_s, flush_postponed_s, last_error_log_s;
    int write_ok, write_errno;
    unsigned long delayed_fsync;
    /* one fdatasync at a time on libuv's thread pool, of a dup of fd (the
     * file may be switched meanwhile): everysec's, and always's, whose
     * replies it holds (ticketed as replication's commits) */
    uv_work_t fsync_req;
    int fsync_fd, fsync_running, fsync_failed;
    uint64_t sync_seq;         /* the last ticket given out */
    uint64_t inflight_ticket;  /* the running sync's (0: everysec's, nobody waits) */
    uint64_t want_ticket;      /* clients wait for a sync not started yet (0: none) */
    uint64_t synced_ticket, released_ticket;   /* durable up to; replies let go up to */
    long long inflight_size;   /* incr_size it covers */
    unsigned file_gen, inflight_gen;   /* which incr file (open_incr counts) */
    /* clients waiting for the running sync, for the next one, and the
     * next one's group: the next waits (briefly) for as many */
    size_t inflight_n, waiting_n, expected_n;
    uv_idle_t linger;          /* while waiting for them: the loop polls, never sleeps */
    int linger_init;
    uv_idle_t rehash;          /* while clients wait on a sync: activerehashing's steps */
    int rehash_init;
    int stopping;              /* shutting down: no rewrite starts (aof_shutdown) */
    uint64_t linger_in, linger_since_ns, linger_start_ns;   /* input seen so far; since when none came; since when */
    int linger_heard;          /* input came since the linger began */
    /* the manifest */
    aof_file base;             /* name NULL: none */
    int base_is_rdb;
    aof_file *hist, *incr;
    size_t nhist, nincr;
    long long base_seq, incr_seq;   /* the highest used */
    /* rewrite */
    int child;                 /* pid */
    int cow_fd;                /* its copy-on-write report (persist_fork), -1: none */
    size_t last_cow;           /* aof_last_cow_size */
    int scheduled;
    char *temp_incr;           /* WAIT_REWRITE: the incr written while the first base is made */
    uint64_t rewrite_start_ms;
    long long last_rewrite_s, rewrites, consecutive_failures;
    int last_rewrite_ok;
    uv_signal_t sigchld;
    uv_timer_t cron;
    int handles;               /* sigchld and cron initialised */
    unsigned char *kinds;      /* how each command is logged (K_*), by command_stat_id */
};

static const resp_slice S_DEL = {"DEL", 3}, S_UNLINK = {"UNLINK", 6}, S_SET = {"SET", 3}, S_PXAT = {"PXAT", 4},
                        S_PEXPIREAT = {"PEXPIREAT", 9}, S_PERSIST = {"PERSIST", 7},
                        S_KEEPTTL = {"KEEPTTL", 7}, S_HSET = {"HSET", 4}, S_ABSTTL = {"ABSTTL", 6},
                        S_LMOVE = {"LMOVE", 5}, S_RPOPLPUSH = {"RPOPLPUSH", 9};

static aof_state *state(server *s)
{
    if (!s->aof) {
        aof_state *a = s->aof = mem_calloc(1, sizeof(*a));
        a->srv = s;
        a->fd = -1;
        a->cow_fd = -1;
        a->selected_db = -1;
        a->write_ok = 1;
        a->last_rewrite_ok = 1;
        a->last_rewrite_s = -1;
        resp_buf_init(&a->buf);
    }
    return s->aof;
}

/* ---- encoding ---- */

/* "<type><n>\r\n" at p; its length. */
static size_t header_at(char *p, char type, size_t n)
{
    size_t len = 0;
    p[len++] = type;
    if (n < 10) {   /* argument counts, names, most keys: no division */
        p[len++] = (char)('0' + n);
    } else if (n < 100) {
        p[len++] = (char)('0' + n / 10);
        p[len++] = (char)('0' + n % 10);
    } else {
        char digits[20];
        size_t d = 0;
        do digits[d++] = (char)('0' + n % 10); while ((n /= 10));
        while (d) p[len++] = digits[--d];
    }
    p[len++] = '\r';
    p[len++] = '\n';
    return len;
}

/* Room a bulk of n bytes takes at most: header, bytes, CRLF. */
#define BULK_ROOM(n) ((n) + 24)

/* "$<len>\r\n<bytes>\r\n" at p (BULK_ROOM(v->len) free); past it. */
static inline __attribute__((always_inline)) char *put_bulk(char *p, const resp_slice *v)
{
    p += header_at(p, '$', v->len);
    memcpy(p, v->ptr, v->len);
    p += v->len;
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* A string literal's bytes at p; past them (a fixed-size copy the
 * compiler turns into a few moves). */
#define PUT_LITERAL(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

/* A command as a RESP array of bulks: sized once, written in place. */
static void put_cmd(resp_buf *b, int argc, const resp_slice *argv)
{
    size_t need = 24;
    for (int i = 0; i < argc; i++) need += BULK_ROOM(argv[i].len);
    resp_buf_reserve(b, need);
    char *p = b->data + b->len;
    p += header_at(p, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) p = put_bulk(p, &argv[i]);
    b->len = (size_t)(p - b->data);
}

/* ---- the records of one iteration ---- */

static int taking(const aof_state *a)
{
    return a->state == AOF_ON || a->repl || (a->state == AOF_WAIT_REWRITE && a->child);
}

/* Redis's feedAppendOnlyFile's head: an annotation when the second
 * changed, a SELECT when the database did. */
static void feed_prefix(server *s, int db)
{
    aof_state *a = s->aof;
    resp_buf *b = &a->buf;
    if (s->cfg.aof_timestamp_enabled) {
        uint64_t now_s = server_real_ms(s) / 1000;
        if (now_s > a->ts_s) {
            a->ts_s = now_s;
            resp_buf_appendf(b, "#TS:%llu\r\n", (unsigned long long)now_s);
        }
    }
    if (db != a->selected_db) {
        char n[24];
        resp_slice sel[2] = {{"SELECT", 6}, {n, store_ll2str(n, db)}};
        put_cmd(b, 2, sel);
        a->selected_db = db;
    }
}

static const char MULTI_REC[] = "*1\r\n$5\r\nMULTI\r\n", EXEC_REC[] = "*1\r\n$4\r\nEXEC\r\n";

/* Redis's propagatePendingCommands: more than one record of one command
 * (a script's, EXEC's, a lazy expiry's DEL before the command) go in
 * MULTI ... EXEC. The records are written into the buffer as they come;
 * the second one puts MULTI in front of the first (after its SELECT). */
static void commit(server *s)
{
    aof_state *a = s->aof;
    if (a->nops > 1) {   /* every script's and lock's: a fixed-size copy, no call when there is room */
        resp_buf *b = &a->buf;
        if (b->cap - b->len < sizeof EXEC_REC - 1) resp_buf_reserve(b, sizeof EXEC_REC - 1);
        memcpy(b->data + b->len, EXEC_REC, sizeof EXEC_REC - 1);
        b->len += sizeof EXEC_REC - 1;
    }
    a->nops = 0;
}

static void add_record(server *s, int db, int argc, const resp_slice *argv)
{
    aof_state *a = s->aof;
    if (!taking(a)) return;
    resp_buf *b = &a->buf;
    if (a->depth == 0) {   /* outside any command: alone */
        feed_prefix(s, db);
        put_cmd(b, argc, argv);
        return;
    }
    if (a->nops == 0) {
        a->pending_start = b->len;
        feed_prefix(s, db);
        a->multi_at = b->len;
    } else {
        if (a->nops == 1) {   /* a transaction after all */
            size_t n = sizeof MULTI_REC - 1;
            resp_buf_reserve(b, n);
            memmove(b->data + a->multi_at + n, b->data + a->multi_at, b->len - a->multi_at);
            memcpy(b->data + a->multi_at, MULTI_REC, n);
            b->len += n;
        }
        feed_prefix(s, db);
    }
    put_cmd(b, argc, argv);
    a->nops++;
}

void aof_add(client *c, int argc, const resp_slice *argv) { add_record(c->srv, c->db, argc, argv); }
void aof_handled(client *c) { c->srv->aof->handled = 1; }
void aof_force(client *c)
{
    if (c->srv->aof_on) c->srv->aof->forced = 1;
}

/* A deletion's record: UNLINK when its lazyfree-lazy-* setting freed it
 * lazily, as Redis's propagateDeletion and getdelCommand write it. */
static resp_slice del_name(int lazy) { return lazy ? S_UNLINK : S_DEL; }

void aof_key_deleted(server *s, int db, const char *key, size_t klen, int lazy)
{
    resp_slice argv[2] = {del_name(lazy), {key, klen}};
    add_record(s, db, 2, argv);
}

/* ---- what a command logs (Redis's rewriteClientCommandVector calls) ---- */

static resp_slice *scratch(aof_state *a, size_t n)
{
    if (n > a->scratch_cap) {
        a->scratch_cap = n + 8;
        a->scratch = mem_realloc(a->scratch, a->scratch_cap * sizeof(*a->scratch));
    }
    return a->scratch;
}

static resp_slice number(aof_state *a, int slot, long long v)
{
    return (resp_slice){a->num[slot], store_ll2str(a->num[slot], v)};
}

/* An absolute deadline, kept as its bulk for the next record: leases set in
 * one loop iteration mostly share their millisecond, and formatting 13
 * digits for each would be a sixth of a lock's logging work. */
static void deadline_cached(aof_state *a, long long v)
{
    if (v == a->deadline && a->deadline_bulk_len) return;
    char digits[24];
    resp_slice d = {digits, store_ll2str(digits, v)};
    _Static_assert(sizeof a->deadline_bulk >= sizeof "$20\r\n-9223372036854775808\r\n" - 1,
                   "a long long's bulk no longer fits");
    a->deadline_bulk_len = (size_t)(put_bulk(a->deadline_bulk, &d) - a->deadline_bulk);
    a->deadline_digits = (resp_slice){a->deadline_bulk + a->deadline_bulk_len - 2 - d.len, d.len};
    a->deadline = v;
}

static resp_slice deadline_digits(aof_state *a, long long v)
{
    deadline_cached(a, v);
    return a->deadline_digits;
}

void aof_add_pexpireat(client *c, const resp_slice *key, long long deadline)
{
    resp_slice r[3] = {S_PEXPIREAT, *key, deadline_digits(c->srv->aof, deadline)};
    add_record(c->srv, c->db, 3, r);
}

void aof_add_acquire(client *c, int by_hset, const resp_slice *key, const resp_slice *owner, long long deadline)
{
    static const resp_slice hash_cmds[2] = {{"hincrby", 7}, {"hset", 4}};
    server *s = c->srv;
    aof_state *a = s->aof;
    if (!taking(a)) return;
    if (a->depth != 1 || a->nops) {   /* not the command's first records: add_record places MULTI */
        resp_slice hash[4] = {hash_cmds[by_hset], *key, *owner, {"1", 1}};
        add_record(s, c->db, 4, hash);
        aof_add_pexpireat(c, key, deadline);
        return;
    }
    deadline_cached(a, deadline);
    /* The lock path's one record per acquire, in one pass: as add_record
     * and commit would leave it, but sized once, with no MULTI moved in
     * front, the key's bulk copied for its second use and the deadline's
     * bulk whole from its cache; commit adds EXEC (room for it reserved). */
    resp_buf *b = &a->buf;
    a->pending_start = b->len;
    feed_prefix(s, c->db);
    a->multi_at = b->len;
    resp_buf_reserve(b, 96 + 2 * BULK_ROOM(key->len) + BULK_ROOM(owner->len) + sizeof a->deadline_bulk);
    char *p = b->data + b->len;
    if (by_hset)
        p = PUT_LITERAL(p, "*1\r\n$5\r\nMULTI\r\n*4\r\n$4\r\nhset\r\n");
    else
        p = PUT_LITERAL(p, "*1\r\n$5\r\nMULTI\r\n*4\r\n$7\r\nhincrby\r\n");
    const char *key_bulk = p;
    p = put_bulk(p, key);
    size_t key_bulk_len = (size_t)(p - key_bulk);
    p = put_bulk(p, owner);
    p = PUT_LITERAL(p, "$1\r\n1\r\n*3\r\n$9\r\nPEXPIREAT\r\n");
    memcpy(p, key_bulk, key_bulk_len);
    p += key_bulk_len;
    memcpy(p, a->deadline_bulk, sizeof a->deadline_bulk);   /* whole: a fixed-size copy */
    p += a->deadline_bulk_len;
    b->len = (size_t)(p - b->data);
    a->nops = 2;
}

/* The key as the command left it, without reclaiming it. */
static store_key *peek(client *c, const resp_slice *key)
{
    server *s = c->srv;
    int hold = s->env.hold_expired;
    s->env.hold_expired = 1;
    store_key *k = store_lookup(client_db(c), key->ptr, key->len);
    s->env.hold_expired = hold;
    return k;
}

/* The deadline a relative or absolute expiry argument gives (unit ms or
 * s, relative or absolute), when the key cannot tell it. */
static long long deadline_of(client *c, const resp_slice *key, const resp_slice *arg, int ms, int absolute)
{
    store_key *k = peek(c, key);
    if (k && store_key_deadline(k) != STORE_NO_DEADLINE) return store_key_deadline(k);
    long long v = 0;
    store_str2ll(arg->ptr, arg->len, &v);
    if (!ms) v *= 1000;
    return absolute ? v : (long long)server_now_ms(c->srv) + v;
}

static void log_set(client *c)
{
    aof_state *a = c->srv->aof;
    const resp_slice *v = c->argv;
    int get = 0;
    for (int j = 3; j < c->argc; j++) {
        int ms = arg_is(&v[j], "PX") || arg_is(&v[j], "PXAT"), abs = arg_is(&v[j], "EXAT") || arg_is(&v[j], "PXAT");
        if ((ms || abs || arg_is(&v[j], "EX")) && j + 1 < c->argc) {
            resp_slice r[5] = {S_SET, v[1], v[2], S_PXAT,
                               deadline_digits(a, deadline_of(c, &v[1], &v[j + 1], ms, abs))};
            aof_add(c, 5, r);
            return;
        }
        get |= arg_is(&v[j], "GET");
    }
    if (!get) {
        aof_add(c, c->argc, v);
        return;
    }
    resp_slice *r = scratch(a, (size_t)c->argc);
    int n = 0;
    for (int j = 0; j < c->argc; j++)
        if (j < 3 || !arg_is(&v[j], "GET")) r[n++] = v[j];
    aof_add(c, n, r);
}

/* EXPIRE key t [NX|XX|GT|LT] and the rest: PEXPIREAT, or DEL when it
 * took the key away. */
static void log_expire(client *c, int ms, int abs)
{
    aof_state *a = c->srv->aof;
    const resp_slice *v = c->argv;
    if (!peek(c, &v[1])) {
        resp_slice r[2] = {del_name(c->srv->cfg.lazyfree_lazy_expire), v[1]};
        aof_add(c, 2, r);
        return;
    }
    resp_slice *r = scratch(a, (size_t)c->argc);
    r[0] = S_PEXPIREAT;
    r[1] = v[1];
    r[2] = deadline_digits(a, deadline_of(c, &v[1], &v[2], ms, abs));
    for (int j = 3; j < c->argc; j++) r[j] = v[j];
    aof_add(c, c->argc, r);
}

static void log_getex(client *c)
{
    aof_state *a = c->srv->aof;
    const resp_slice *v = c->argv;
    store_key *k = peek(c, &v[1]);
    if (!k) {
        resp_slice r[2] = {del_name(c->srv->cfg.lazyfree_lazy_expire), v[1]};
        aof_add(c, 2, r);
        return;
    }
    for (int j = 2; j < c->argc; j++) {
        if (arg_is(&v[j], "PERSIST")) {
            resp_slice r[2] = {S_PERSIST, v[1]};
            aof_add(c, 2, r);
            return;
        }
    }
    resp_slice r[3] = {S_PEXPIREAT, v[1], deadline_digits(a, store_key_deadline(k))};
    aof_add(c, 3, r);
}

static void log_restore(client *c)
{
    aof_state *a = c->srv->aof;
    const resp_slice *v = c->argv;
    int abs = 0;
    for (int j = 4; j < c->argc; j++) abs |= arg_is(&v[j], "ABSTTL");
    if (!peek(c, &v[1])) {
        resp_slice r[2] = {S_DEL, v[1]};
        aof_add(c, 2, r);
        return;
    }
    if (abs || (v[2].len == 1 && v[2].ptr[0] == '0')) {
        aof_add(c, c->argc, v);
        return;
    }
    resp_slice *r = scratch(a, (size_t)c->argc + 1);
    for (int j = 0; j < c->argc; j++) r[j] = v[j];
    r[2] = deadline_digits(a, deadline_of(c, &v[1], &v[2], 1, 0));
    r[c->argc] = S_ABSTTL;
    aof_add(c, c->argc + 1, r);
}

static resp_slice sid_text(aof_state *a, int slot, store_sid id)
{
    int n = snprintf(a->num[slot], sizeof a->num[slot], "%llu-%llu", (unsigned long long)id.ms,
                     (unsigned long long)id.seq);
    return (resp_slice){a->num[slot], (size_t)n};
}

/* XADD and XTRIM as a reload must redo them (Redis's xaddCommand and
 * streamRewriteTrimArgument): an ID the server chose (* or ms-*) as the
 * one it chose, read from the reply at mark, and a "~" trim as the "="
 * trim it came to: MAXLEN the length left, MINID the first ID left. */
static void log_stream(client *c, size_t mark, int xadd)
{
    aof_state *a = c->srv->aof;
    stream_trim_pos pos;
    if (!stream_trim_positions(c, xadd, &pos)) {
        aof_add(c, c->argc, c->argv);
        return;
    }
    resp_slice *r = scratch(a, (size_t)c->argc);
    for (int j = 0; j < c->argc; j++) r[j] = c->argv[j];
    if (xadd && pos.id < c->argc && r[pos.id].len && r[pos.id].ptr[r[pos.id].len - 1] == '*') {
        const char *out = c->out.data + mark, *end = c->out.data + c->out.len;
        resp_reply id;
        if (c->out.len > mark && resp_read_reply(&out, end, &id) && id.type == '$')
            r[pos.id] = (resp_slice){id.str, id.len};
    }
    int n = c->argc;
    if (pos.approx) {
        store_key *k = peek(c, &c->argv[1]);
        const store_stream *st = k ? store_stream_of_const(k) : NULL;
        r[pos.approx] = (resp_slice){"=", 1};
        if (st) r[pos.threshold] = pos.by_minid ? sid_text(a, 1, st->first) : number(a, 1, (long long)st->len);
        if (pos.limit) {   /* an exact trim takes no LIMIT (Redis's AOF client ignores it) */
            memmove(&r[pos.limit], &r[pos.limit + 2], (size_t)(n - pos.limit - 2) * sizeof(*r));
            n -= 2;
        }
    }
    aof_add(c, n, r);
}

/* INCRBYFLOAT as SET key value KEEPTTL, HINCRBYFLOAT as HSET: the value as
 * formatted here, so a reload cannot round differently. */
static void log_float(client *c, int hash)
{
    const resp_slice *v = c->argv;
    store_key *k = peek(c, &v[1]);
    size_t len = 0;
    const char *p = !k ? NULL : hash ? store_hash_get(k, v[2].ptr, v[2].len, &len) : store_string_get(k, &len);
    if (!p) {
        aof_add(c, c->argc, v);
        return;
    }
    if (hash) {
        resp_slice r[4] = {S_HSET, v[1], v[2], {p, len}};
        aof_add(c, 4, r);
    } else {
        resp_slice r[4] = {S_SET, v[1], {p, len}, S_KEEPTTL};
        aof_add(c, 4, r);
    }
}

/* How a command is logged, by its command_stat_id: looked up once per
 * command instead of comparing procs. */
enum {
    K_PLAIN,     /* its argv as it came */
    K_SELF,      /* never itself: its effects are logged (scripts, EXEC) or nothing a reload redoes */
    K_FORCED,    /* even when no key changed, unless it failed (FLUSHALL of nothing, SWAPDB, FUNCTION) */
    K_SET, K_SETEX, K_PSETEX, K_GETSET, K_GETDEL, K_GETEX,
    K_EXPIRE, K_PEXPIRE, K_EXPIREAT, K_PEXPIREAT,
    K_INCRBYFLOAT, K_HINCRBYFLOAT, K_RESTORE, K_BLMOVE, K_BRPOPLPUSH, K_XADD, K_XTRIM,
};

/* The server's table, by command_stat_id (a library holds no process-wide
 * state of its own: each server makes its copy when the AOF first needs it). */
static unsigned char *kinds_new(void)
{
    static const struct { command_proc p; unsigned char k; } by_proc[] = {
        {cmd_exec, K_SELF}, {cmd_eval, K_SELF}, {cmd_evalsha, K_SELF}, {cmd_eval_ro, K_SELF},
        {cmd_evalsha_ro, K_SELF}, {cmd_fcall, K_SELF}, {cmd_fcall_ro, K_SELF}, {cmd_debug, K_SELF},
        {cmd_publish, K_SELF}, {cmd_flushall, K_FORCED}, {cmd_flushdb, K_FORCED}, {cmd_swapdb, K_FORCED},
        {cmd_set, K_SET}, {cmd_setex, K_SETEX}, {cmd_psetex, K_PSETEX}, {cmd_getset, K_GETSET},
        {cmd_getdel, K_GETDEL}, {cmd_getex, K_GETEX}, {cmd_expire, K_EXPIRE}, {cmd_pexpire, K_PEXPIRE},
        {cmd_expireat, K_EXPIREAT}, {cmd_pexpireat, K_PEXPIREAT}, {cmd_incrbyfloat, K_INCRBYFLOAT},
        {cmd_hincrbyfloat, K_HINCRBYFLOAT}, {cmd_restore, K_RESTORE}, {cmd_blmove, K_BLMOVE},
        {cmd_brpoplpush, K_BRPOPLPUSH}, {cmd_xadd, K_XADD}, {cmd_xtrim, K_XTRIM},
    };
    unsigned char *kinds = mem_calloc(command_stat_slots(), 1);
    for (size_t i = 0; i < command_count(); i++) {
        const command *cmd = command_at(i);
        for (size_t j = 0; j < sizeof by_proc / sizeof by_proc[0]; j++)
            if (cmd->proc == by_proc[j].p) kinds[command_stat_id(cmd, NULL)] = by_proc[j].k;
    }
    return kinds;
}

/* FUNCTION's writes are forced; its other subcommands change nothing. */
static int function_writes(const client *c)
{
    static const char *const writes[] = {"load", "delete", "flush", "restore", NULL};
    if (c->cmd->proc != cmd_function || c->argc < 2) return 0;
    for (const char *const *w = writes; *w; w++)
        if (arg_is(&c->argv[1], *w)) return 1;
    return 0;
}

static void log_command(client *c, int kind, size_t mark)
{
    const resp_slice *v = c->argv;
    switch (kind) {
    case K_SET: log_set(c); break;
    case K_SETEX:
    case K_PSETEX: {
        resp_slice r[5] = {S_SET, v[1], v[3], S_PXAT,
                           number(c->srv->aof, 0, deadline_of(c, &v[1], &v[2], kind == K_PSETEX, 0))};
        aof_add(c, 5, r);
        break;
    }
    case K_GETSET: {
        resp_slice r[3] = {S_SET, v[1], v[2]};
        aof_add(c, 3, r);
        break;
    }
    case K_GETDEL: {
        resp_slice r[2] = {del_name(c->srv->cfg.lazyfree_lazy_user_del), v[1]};
        aof_add(c, 2, r);
        break;
    }
    case K_GETEX: log_getex(c); break;
    case K_EXPIRE: log_expire(c, 0, 0); break;
    case K_PEXPIRE: log_expire(c, 1, 0); break;
    case K_EXPIREAT: log_expire(c, 0, 1); break;
    case K_PEXPIREAT: log_expire(c, 1, 1); break;
    case K_INCRBYFLOAT: log_float(c, 0); break;
    case K_HINCRBYFLOAT: log_float(c, 1); break;
    case K_RESTORE: log_restore(c); break;
    case K_XADD: log_stream(c, mark, 1); break;
    case K_XTRIM: log_stream(c, mark, 0); break;
    case K_BLMOVE: {
        resp_slice r[5] = {S_LMOVE, v[1], v[2], v[3], v[4]};
        aof_add(c, 5, r);
        break;
    }
    case K_BRPOPLPUSH: {
        resp_slice r[3] = {S_RPOPLPUSH, v[1], v[2]};
        aof_add(c, 3, r);
        break;
    }
    default: aof_add(c, c->argc, v);
    }
}

void aof_proc(client *c)
{
    server *s = c->srv;
    aof_state *a = s->aof;
    uint64_t before = aof_changes(s);
    size_t mark = c->out.len;
    int handled = a->handled, forced = a->forced;
    a->handled = a->forced = 0;
    a->depth++;
    c->cmd->proc(c);
    a->depth--;
    int kind = a->kinds[command_stat_id(c->cmd, NULL)];
    if (!a->handled && kind != K_SELF) {
        int changed = aof_changes(s) != before || a->forced;
        if (!changed && (kind == K_FORCED || function_writes(c)))
            changed = !(c->out.len > mark && c->out.data[mark] == '-');   /* forced, unless it failed */
        if (changed) log_command(c, kind, mark);
    }
    a->handled = handled;
    a->forced = forced;
    if (a->depth == 0) commit(s);
}

/* ---- served blocked commands (block.c) ---- */

void aof_served(client *c, const resp_slice *key, size_t len_before, uint64_t changes_before)
{
    server *s = c->srv;
    if (aof_changes(s) == changes_before) return;
    aof_state *a = s->aof;
    a->handled = 1;
    const command *cmd = command_lookup(c->argv[0].ptr, c->argv[0].len);
    command_proc p = cmd ? cmd->proc : NULL;
    const resp_slice *v = c->argv;
    if (p == cmd_blpop || p == cmd_brpop || p == cmd_bzpopmin || p == cmd_bzpopmax) {
        static const resp_slice names[] = {{"LPOP", 4}, {"RPOP", 4}, {"ZPOPMIN", 7}, {"ZPOPMAX", 7}};
        int i = p == cmd_blpop ? 0 : p == cmd_brpop ? 1 : p == cmd_bzpopmin ? 2 : 3;
        resp_slice r[2] = {names[i], *key};
        add_record(s, c->db, 2, r);
    } else if (p == cmd_blmpop || p == cmd_bzmpop) {
        long long numkeys = 0, count = 1;
        store_str2ll(v[2].ptr, v[2].len, &numkeys);
        int where = 3 + (int)numkeys;
        if (where + 2 < c->argc) store_str2ll(v[where + 2].ptr, v[where + 2].len, &count);
        int left = arg_is(&v[where], "LEFT") || arg_is(&v[where], "MIN");
        resp_slice name = p == cmd_blmpop ? (left ? (resp_slice){"LPOP", 4} : (resp_slice){"RPOP", 4})
                                          : (left ? (resp_slice){"ZPOPMIN", 7} : (resp_slice){"ZPOPMAX", 7});
        resp_slice r[3] = {name, *key, number(a, 1, count < (long long)len_before ? count : (long long)len_before)};
        add_record(s, c->db, 3, r);
    } else if (p == cmd_blmove) {
        resp_slice r[5] = {S_LMOVE, v[1], v[2], v[3], v[4]};
        for (int j = 3; j < 5; j++) r[j] = arg_is(&v[j], "LEFT") ? (resp_slice){"LEFT", 4} : (resp_slice){"RIGHT", 5};
        add_record(s, c->db, 5, r);
    } else if (p == cmd_brpoplpush) {
        resp_slice r[3] = {S_RPOPLPUSH, v[1], v[2]};
        add_record(s, c->db, 3, r);
    }
}

void aof_unit_begin(server *s) { s->aof->depth++; }

void aof_unit_end(server *s)
{
    if (--s->aof->depth == 0) commit(s);
}

/* ---- writing: Redis's flushAppendOnlyFile ---- */

static void fsync_work(uv_work_t *req)
{
    aof_state *a = req->data;
    static __thread int pinned;   /* libuv's pool threads: each pinned once */
    if (!pinned) {
        pinned = 1;
        (void)affinity_apply(a->srv->cfg.bio_cpulist);   /* immutable: safe to read from here */
    }
    a->fsync_failed = fdatasync(a->fsync_fd) != 0 ? errno : 0;
}

static void sync_exit(server *s, int err)
{
    log_msg(s, LOG_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. "
                            "Exiting...", strerror(err));
    _exit(1);
}

static void start_sync(server *s, uint64_t ticket);
static void flush_file(server *s, int force);
static void sync_now(server *s, uint64_t now_s);
static void linger_stop(aof_state *a);

/* While every client waits on the disk the loop has nothing to run: the
 * keyspace's pending rehash steps run then, in slices short enough that
 * input arriving meanwhile waits little, instead of one bucket per
 * lookup inside commands (a growing keyspace's steady cost). */
#define REHASH_SLICE_NS 20000

static void on_rehash(uv_idle_t *h)
{
    aof_state *a = h->data;
    if (!a->fsync_running || !server_rehash_some(a->srv, REHASH_SLICE_NS)) uv_idle_stop(h);
}

/* From the next loop iteration on: this one's released replies go first. */
static void rehash_while_syncing(server *s)
{
    aof_state *a = s->aof;
    if (!s->cfg.activerehashing) return;
    if (!a->rehash_init) {
        if (uv_idle_init(s->loop, &a->rehash) != 0) return;
        a->rehash.data = a;
        a->rehash_init = 1;
    }
    uv_idle_start(&a->rehash, on_rehash);
}

/* Back on the loop: a sync that clients queued for meanwhile starts at
 * once (group commit: all that was written while this one ran); the
 * replies this one covered go from aof_before_sleep, in this iteration's
 * check phase. */
static void fsync_done(uv_work_t *req, int status)
{
    (void)status;
    aof_state *a = req->data;
    server *s = a->srv;
    close(a->fsync_fd);
    a->fsync_running = 0;
    if (a->inflight_ticket) {   /* else everysec's: the cron reports a failure */
        if (a->fsync_failed) sync_exit(s, a->fsync_failed);
        if (a->inflight_gen == a->file_gen && a->inflight_size > a->fsynced_size) a->fsynced_size = a->inflight_size;
        if (a->inflight_ticket > a->synced_ticket) a->synced_ticket = a->inflight_ticket;
        /* the next sync's group: those let go now (in this iteration's
         * check phase) and those already waiting */
        a->expected_n = a->inflight_n + a->waiting_n;
    }
    if (!a->want_ticket) return;
    if (s->cfg.appendfsync == CONFIG_FSYNC_ALWAYS) {
        flush_file(s, 0);
    } else {   /* the policy changed while they waited: they still get their sync */
        flush_file(s, 1);
        sync_now(s, server_real_ms(s) / 1000);
    }
}

/* A synchronous fdatasync of what is written: every ticket given out is
 * covered (one still running finds nothing left to cover). */
static void sync_now(server *s, uint64_t now_s)
{
    aof_state *a = s->aof;
    /* no file: it was synced when it closed (appendonly no) */
    if (a->fd >= 0 && fdatasync(a->fd) == -1) sync_exit(s, errno);
    a->fsynced_size = a->incr_size;
    a->last_fsync_s = now_s;
    a->want_ticket = 0;
    a->waiting_n = 0;
    a->synced_ticket = a->sync_seq;
    linger_stop(a);
}

/* ticket 0: everysec's, which holds nobody and is taken as done at once. */
static void start_sync(server *s, uint64_t ticket)
{
    aof_state *a = s->aof;
    a->want_ticket = 0;
    a->fsync_fd = dup(a->fd);
    if (a->fsync_fd >= 0) {
        a->fsync_running = 1;
        a->inflight_ticket = ticket;
        a->inflight_size = a->incr_size;
        a->inflight_gen = a->file_gen;
        a->inflight_n = ticket ? a->waiting_n : 0;
        a->waiting_n = 0;
        a->fsync_req.data = a;
        if (uv_queue_work(s->loop, &a->fsync_req, fsync_work, fsync_done) == 0) {
            if (ticket) rehash_while_syncing(s);
            return;
        }
        a->fsync_running = 0;
        close(a->fsync_fd);
    }
    if (ticket) sync_now(s, server_real_ms(s) / 1000);
    else fdatasync(a->fd);
}

static void background_fsync(server *s)
{
    if (!s->aof->fsync_running) start_sync(s, 0);
}

/* appendfsync always off the loop: the loop goes on reading and running
 * commands while the disk syncs, and every reply it has made since the
 * last covered write (readers of unsynced data too) waits for the sync
 * that covers that write, as in Redis no reply leaves before its fsync.
 *
 * Group commit across iterations: the clients a sync lets go answer
 * within a round trip, and a sync started before they do would split
 * them from the rest (those that came while it ran) into two groups
 * taking turns on the disk (half the batch, twice the syncs). So the next
 * sync starts once as many clients wait for it as the last one let go
 * plus those already waiting then, or once no input has come for
 * SYNC_LINGER_NS (those clients had nothing more to send), or none at all
 * for SYNC_LINGER_FIRST_NS: a client answers a batch of replies once it
 * has read them all, and a load generator all its connections' at once. */
#define SYNC_LINGER_NS 50000
#define SYNC_LINGER_FIRST_NS 250000
#define SYNC_LINGER_MAX_NS 1000000   /* and never longer: input that makes no reply (a slow upload) */

/* Keeps the loop polling; between polls, the rehash steps that would
 * otherwise wait (slices a quarter as long: input is what it waits for). */
static void on_linger(uv_idle_t *h)
{
    aof_state *a = h->data;
    server_rehash_some(a->srv, REHASH_SLICE_NS / 4);
}

static void linger_stop(aof_state *a)
{
    if (a->linger_init && uv_is_active((uv_handle_t *)&a->linger)) uv_idle_stop(&a->linger);
}

/* Whether to wait longer for the clients the last sync let go. */
static int lingering(server *s)
{
    aof_state *a = s->aof;
    if (a->waiting_n >= a->expected_n) return 0;
    uint64_t now = uv_hrtime();
    if (!a->linger_init) {
        if (uv_idle_init(s->loop, &a->linger) != 0) return 0;
        a->linger.data = a;
        a->linger_init = 1;
    }
    if (!uv_is_active((uv_handle_t *)&a->linger)) {
        uv_idle_start(&a->linger, on_linger);
        a->linger_in = s->stat_net_in;
        a->linger_since_ns = a->linger_start_ns = now;
        a->linger_heard = 0;
        return 1;
    }
    if (now - a->linger_start_ns >= SYNC_LINGER_MAX_NS) return 0;
    if (s->stat_net_in != a->linger_in) {
        a->linger_in = s->stat_net_in;
        a->linger_since_ns = now;
        a->linger_heard = 1;
    }
    if (!a->linger_heard) return now - a->linger_start_ns < SYNC_LINGER_FIRST_NS;
    return now - a->linger_since_ns < SYNC_LINGER_NS;
}

/* The clients with replies pending now wait for the sync that covers what
 * they saw; 1: keep the records buffered (a sync runs, or the next one
 * lingers), 0: write them and start the sync, for which all now wait. */
static int sync_wait(server *s)
{
    aof_state *a = s->aof;
    if (a->fsync_running && !a->buf.len && a->incr_size <= a->inflight_size && a->inflight_gen == a->file_gen &&
        a->inflight_ticket) {
        a->inflight_n += net_hold_pending(s, a->inflight_ticket);
        return 1;
    }
    if (!a->want_ticket) a->want_ticket = ++a->sync_seq;
    a->waiting_n += net_hold_pending(s, a->want_ticket);
    if (a->fsync_running || lingering(s)) return 1;
    linger_stop(a);
    return 0;
}

static ssize_t write_all(int fd, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return done ? (ssize_t)done : -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

/* The first n bytes of buf are in the file: dropped, and the running
 * command's offsets moved with them. */
static void written(aof_state *a, size_t n)
{
    a->current_size += (long long)n;
    a->incr_size += (long long)n;
    if (n == a->buf.len) a->buf.len = 0;
    else resp_buf_consume(&a->buf, n);
    a->pending_start -= n < a->pending_start ? n : a->pending_start;
    a->multi_at -= n < a->multi_at ? n : a->multi_at;
}

static void flush_file(server *s, int force)
{
    aof_state *a = s->aof;
    if (a->fd < 0) return;
    uint64_t now_s = server_real_ms(s) / 1000;
    int policy = (int)s->cfg.appendfsync;
    /* from inside a command (a rewrite started by one), its records stay:
     * a second one may still put MULTI before them */
    size_t len = a->depth && a->nops ? a->pending_start : a->buf.len;
    if (policy == CONFIG_FSYNC_ALWAYS && !force && !a->depth && sync_wait(s)) return;
    if (len == 0) {
        if (a->fsynced_size == a->incr_size && !a->want_ticket) return;
        if (policy == CONFIG_FSYNC_ALWAYS || a->want_ticket) goto do_fsync;
        if (policy == CONFIG_FSYNC_EVERYSEC && now_s > a->last_fsync_s && !a->fsync_running) goto do_fsync;
        return;
    }
    if (policy == CONFIG_FSYNC_EVERYSEC && !force && a->fsync_running) {
        if (!a->flush_postponed_s) {
            a->flush_postponed_s = now_s;
            return;
        }
        if (now_s - a->flush_postponed_s < 2) return;
        a->delayed_fsync++;
        log_msg(s, LOG_NOTICE, "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
                               "without waiting for fsync to complete, this may slow down Redis.");
    }
    a->flush_postponed_s = 0;
    ssize_t n = write_all(a->fd, (const char *)a->buf.data, len);
    if (n != (ssize_t)len) {
        int can_log = now_s - a->last_error_log_s > WRITE_ERROR_LOG_S;
        if (can_log) a->last_error_log_s = now_s;
        if (n < 0) {
            a->write_errno = errno;
            if (can_log) log_msg(s, LOG_WARNING, "Error writing to the AOF file: %s", strerror(errno));
        } else {
            if (can_log)
                log_msg(s, LOG_WARNING, "Short write while writing to the AOF file: (nwritten=%lld, expected=%lld)",
                        (long long)n, (long long)len);
            if (ftruncate(a->fd, a->incr_size) == -1) {
                if (can_log)
                    log_msg(s, LOG_WARNING, "Could not remove short write from the append-only file.  Redis may "
                                            "refuse to load the AOF the next time it starts.  ftruncate: %s",
                            strerror(errno));
            } else {
                n = -1;
            }
            a->write_errno = ENOSPC;
        }
        if (policy == CONFIG_FSYNC_ALWAYS) {
            /* the replies are in the output buffers already and the
             * change cannot be undone: as Redis, exit before they go */
            log_msg(s, LOG_WARNING, "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
            _exit(1);
        }
        a->write_ok = 0;
        s->aof_write_err = 1;
        if (n > 0) written(a, (size_t)n);
        return;   /* tried again by the next flush or the cron */
    }
    if (!a->write_ok) {
        log_msg(s, LOG_WARNING, "AOF write error looks solved, Redis can write again.");
        a->write_ok = 1;
        s->aof_write_err = a->fsync_failed != 0;
    }
    written(a, len);
do_fsync:
    if (policy == CONFIG_FSYNC_ALWAYS || a->want_ticket) {
        /* file switches and shutdown sync in place; so does a busy
         * script's flush, whose caller's reply is not made yet, and one
         * for clients that waited while appendfsync changed */
        if (force || a->depth || policy != CONFIG_FSYNC_ALWAYS) sync_now(s, now_s);
        else start_sync(s, a->want_ticket ? a->want_ticket : ++a->sync_seq);   /* sync_wait gave it out */
    } else if (policy == CONFIG_FSYNC_EVERYSEC && now_s > a->last_fsync_s) {
        if (!a->fsync_running) {
            background_fsync(s);
            a->fsynced_size = a->incr_size;
        }
        a->last_fsync_s = now_s;
    }
}

void aof_before_sleep(server *s, int mid_command)
{
    aof_state *a = s->aof;
    /* Synced replies go first, and what their clients sent meanwhile runs
     * now: its records are written and its replies held just below. Only
     * here, between commands (not from a busy script's flush), so no
     * command runs inside another. */
    if (a->synced_ticket != a->released_ticket && !mid_command && !a->depth) {
        a->released_ticket = a->synced_ticket;
        net_release(s, a->synced_ticket);
    }
    if (!s->aof_on) return;
    if (a->buf.len || a->want_ticket || (s->cfg.appendfsync == CONFIG_FSYNC_ALWAYS && a->fsynced_size != a->incr_size))
        flush_file(s, 0);
}

int aof_rewriting(const server *s) { return s->aof && s->aof->child; }

/* ---- replication's records (repl/): the same builder, another reader ---- */

void aof_replicate(server *s)
{
    aof_state *a = state(s);
    if (!a->kinds) a->kinds = kinds_new();
    a->repl = 1;
    s->aof_on = 1;
}

const char *aof_records(server *s, size_t *len)
{
    aof_state *a = s->aof;
    *len = a->depth ? 0 : a->buf.len;   /* inside a command (a busy script) its records are unfinished */
    return a->buf.data;
}

void aof_records_taken(server *s)
{
    aof_state *a = s->aof;
    if (a->depth) return;
    a->buf.len = 0;
    a->selected_db = -1;   /* each batch starts with its SELECT: any reader may apply it alone */
    a->ts_s = 0;
}

const char *aof_write_error(const server *s)
{
    const aof_state *a = s->aof;
    if (!a) return NULL;
    return strerror(!a->write_ok ? a->write_errno : a->fsync_failed);
}

/* ---- the files ---- */

static char *path_in_dir(const server *s, const char *name)
{
    size_t n = strlen(s->cfg.appenddirname) + strlen(name) + 2;
    char *p = mem_alloc(n);
    snprintf(p, n, "%s/%s", s->cfg.appenddirname, name);
    return p;
}

static char *file_name(const server *s, long long seq, const char *kind, const char *ext)
{
    size_t n = strlen(s->cfg.appendfilename) + 64;
    char *p = mem_alloc(n);
    snprintf(p, n, "%s.%lld%s%s", s->cfg.appendfilename, seq, kind, ext);
    return p;
}

static long long file_size(const server *s, const char *name)
{
    char *path = path_in_dir(s, name);
    struct stat st;
    long long n = stat(path, &st) == 0 ? (long long)st.st_size : 0;
    free(path);
    return n;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* A file name as Redis's aofInfoFormat writes it: quoted when it holds
 * anything sdscatrepr would escape. */
static void put_name(resp_buf *b, const char *name)
{
    int plain = 1;
    for (const char *p = name; *p; p++)
        if (*p <= ' ' || *p >= 127 || *p == '"' || *p == '\\' || *p == '\'') plain = 0;
    if (plain) {
        resp_buf_append(b, name, strlen(name));
        return;
    }
    resp_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        switch (*p) {
        case '\\': resp_buf_append(b, "\\\\", 2); break;
        case '"': resp_buf_append(b, "\\\"", 2); break;
        case '\n': resp_buf_append(b, "\\n", 2); break;
        case '\r': resp_buf_append(b, "\\r", 2); break;
        case '\t': resp_buf_append(b, "\\t", 2); break;
        case '\a': resp_buf_append(b, "\\a", 2); break;
        case '\b': resp_buf_append(b, "\\b", 2); break;
        default:
            if (*p > ' ' && *p < 127) resp_buf_append(b, p, 1);
            else resp_buf_appendf(b, "\\x%02x", *p);
        }
    }
    resp_buf_append(b, "\"", 1);
}

static void put_info(resp_buf *b, const aof_file *f, char type)
{
    resp_buf_append(b, "file ", 5);
    put_name(b, f->name);
    resp_buf_appendf(b, " seq %lld type %c\n", f->seq, type);
}

/* Redis's persistAofManifest: a temp file, synced, renamed over the
 * manifest, the directory synced. */
static int write_manifest(server *s)
{
    aof_state *a = s->aof;
    resp_buf b;
    resp_buf_init(&b);
    if (a->base.name) put_info(&b, &a->base, 'b');
    for (size_t i = 0; i < a->nhist; i++) put_info(&b, &a->hist[i], 'h');
    for (size_t i = 0; i < a->nincr; i++) put_info(&b, &a->incr[i], 'i');
    char name[PERSIST_AOF_NAME_MAX + 32];
    snprintf(name, sizeof name, "temp-%s.manifest", s->cfg.appendfilename);
    char *tmp = path_in_dir(s, name);
    snprintf(name, sizeof name, "%s.manifest", s->cfg.appendfilename);
    char *final = path_in_dir(s, name);
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        log_msg(s, LOG_WARNING, "Can't open the AOF manifest file %s: %s", name, strerror(errno));
    } else if (write_all(fd, (const char *)b.data, b.len) != (ssize_t)b.len || fsync(fd) != 0) {
        log_msg(s, LOG_WARNING, "Error trying to write the temporary AOF manifest file %s: %s", name, strerror(errno));
        close(fd);
    } else if (close(fd) != 0 || rename(tmp, final) != 0) {
        log_msg(s, LOG_WARNING, "Error trying to rename the temporary AOF manifest file %s into %s: %s", tmp, name,
                strerror(errno));
    } else {
        fsync_dir(s->cfg.appenddirname);
        rc = 0;
    }
    resp_buf_free(&b);
    free(tmp);
    free(final);
    return rc;
}

static void file_list_push(aof_file **v, size_t *n, char *name, long long seq)
{
    *v = mem_realloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = (aof_file){name, seq};
}

static void manifest_clear(aof_state *a)
{
    free(a->base.name);
    a->base.name = NULL;
    for (size_t i = 0; i < a->nhist; i++) free(a->hist[i].name);
    for (size_t i = 0; i < a->nincr; i++) free(a->incr[i].name);
    free(a->hist);
    free(a->incr);
    a->hist = a->incr = NULL;
    a->nhist = a->nincr = 0;
    a->base_seq = a->incr_seq = 0;
}

/* Redis's aofLoadManifestFromFile: 1 loaded, 0 none there, -1 (logged). */
static int read_manifest(server *s)
{
    aof_state *a = s->aof;
    char name[PERSIST_AOF_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s.manifest", s->cfg.appendfilename);
    char *path = path_in_dir(s, name);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f) {
        if (errno == ENOENT) return 0;
        log_msg(s, LOG_WARNING, "Fail to open AOF manifest file, errno: %d", errno);
        return -1;
    }
    char line[PERSIST_AOF_NAME_MAX + 64];
    const char *err = NULL;
    persist_aof_info info;
    manifest_clear(a);
    while (!err && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') err = "The AOF manifest file contains too long line";
        else {
            int r = persist_aof_manifest_line(line, len, &info);
            if (r < 0) err = "Invalid AOF manifest file format";
            else if (r == 0) continue;
            else if (info.type == 'b') {
                if (a->base.name) err = "Found duplicate base file information";
                else {
                    a->base = (aof_file){mem_strdup(info.name), info.seq};
                    a->base_seq = info.seq;
                    size_t nl = strlen(info.name);
                    a->base_is_rdb = nl > 4 && strcmp(info.name + nl - 4, ".rdb") == 0;
                }
            } else if (info.type == 'h') {
                file_list_push(&a->hist, &a->nhist, mem_strdup(info.name), info.seq);
            } else {
                if (info.seq <= a->incr_seq) err = "Found a non-monotonic sequence number";
                else {
                    file_list_push(&a->incr, &a->nincr, mem_strdup(info.name), info.seq);
                    a->incr_seq = info.seq;
                }
            }
            if (a->nhist + a->nincr > MAX_FILES) err = "Too many AOF files";
        }
    }
    fclose(f);
    if (!err && !a->base.name && !a->nincr) err = "Found an empty AOF manifest";
    if (err) {
        log_msg(s, LOG_WARNING, "%s", err);
        return -1;
    }
    return 1;
}

/* Redis's bg_unlink: the name goes now, the blocks when the lazyfree
 * worker closes the last descriptor. */
static void unlink_in_background(server *s, const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {   /* cannot hold it open: unlinked here */
        unlink(path);
        return;
    }
    if (unlink(path) != 0) {
        close(fd);
        return;
    }
    lazyfree_close_file(s, fd);
}

/* Redis's aofDelHistoryFiles: the manifest stops naming them, then they go. */
static void delete_history(server *s)
{
    aof_state *a = s->aof;
    if (!a->nhist) return;
    size_t n = a->nhist;
    a->nhist = 0;
    if (write_manifest(s) != 0) {
        a->nhist = n;   /* named still: kept, and tried again after the next rewrite */
        return;
    }
    a->nhist = n;
    for (size_t i = 0; i < a->nhist; i++) {
        char *path = path_in_dir(s, a->hist[i].name);
        log_msg(s, LOG_NOTICE, "Removing the history file %s in the background", a->hist[i].name);
        unlink_in_background(s, path);
        free(path);
        free(a->hist[i].name);
    }
    a->nhist = 0;
}

static int open_incr(server *s, const char *name)
{
    aof_state *a = s->aof;
    char *path = path_in_dir(s, name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    free(path);
    if (fd < 0) {
        log_msg(s, LOG_WARNING, "Can't open the append-only file %s: %s", name, strerror(errno));
        return -1;
    }
    if (a->fd >= 0) close(a->fd);
    a->fd = fd;
    a->selected_db = -1;   /* a loader reads each file with a client of its own, from db 0 */
    a->ts_s = 0;
    a->incr_size = a->fsynced_size = file_size(s, name);
    a->file_gen++;
    return 0;
}

/* ---- loading: Redis's loadSingleAppendOnlyFile ---- */

enum { LOAD_OK, LOAD_EMPTY, LOAD_TRUNCATED, LOAD_FAILED };

static int run_commands(server *s, const char *name, const unsigned char *p, size_t len, size_t *valid_up_to,
                        int *in_multi)
{
    aof_state *a = s->aof;
    client *c = client_new_detached(s);
    client_set_authenticated(c, 1);
    persist_aof_args args = {0};
    size_t pos = 0, before_multi = 0;
    int rc;
    *valid_up_to = 0;
    while ((rc = persist_aof_next(p, len, &pos, &args)) == PERSIST_OK) {
        const command *cmd = command_lookup(args.v[0].p, args.v[0].len);
        if (!cmd) {
            log_msg(s, LOG_WARNING, "Unknown command '%.*s' reading the append only file %s", (int)args.v[0].len,
                    args.v[0].p, name);
            rc = PERSIST_ERR_FORMAT + 100;   /* fatal, not a format error */
            break;
        }
        if (cmd->proc == cmd_multi) before_multi = *valid_up_to;
        resp_slice *argv = scratch(a, (size_t)args.argc);
        for (int i = 0; i < args.argc; i++) argv[i] = (resp_slice){args.v[i].p, args.v[i].len};
        client_run_postponed(c, argv, args.argc);
        c->out.len = 0;   /* nobody reads a loader's replies */
        *valid_up_to = pos;
    }
    *in_multi = (c->flags & CLIENT_MULTI) != 0;
    if (*in_multi) *valid_up_to = before_multi;
    c->flags &= ~(unsigned)CLIENT_MULTI;
    multi_client_reset(c);
    client_free_detached(c);
    persist_aof_args_free(&args);
    return rc;
}

static int load_file(server *s, const char *name, int last)
{
    char *path = path_in_dir(s, name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        int en = errno;
        struct stat st;
        int exists = stat(path, &st) == 0 || errno != ENOENT;
        free(path);
        if (exists) {
            log_msg(s, LOG_WARNING, "Fatal error: can't open the append log file %s for reading: %s", name, strerror(en));
            return LOAD_FAILED;
        }
        log_msg(s, LOG_WARNING, "The append log file %s doesn't exist: %s", name, strerror(en));
        return LOAD_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        free(path);
        return LOAD_EMPTY;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        log_msg(s, LOG_WARNING, "Unrecoverable error reading the append only file %s: %s", name, strerror(errno));
        free(path);
        return LOAD_FAILED;
    }
    int ret = LOAD_OK;
    size_t from = 0;   /* where the commands start: after an RDB, if there is one */
    if (len >= 5 && memcmp(p, "REDIS", 5) == 0) {
        /* a 7.0 base is RDB alone; a pre-7.0 AOF may have commands after its preamble */
        int old_style = strcmp(name, s->cfg.appendfilename) == 0;
        log_msg(s, LOG_NOTICE, old_style ? "Reading RDB preamble from AOF file..." : "Reading RDB base file on AOF loading...");
        if (rdb_load_mem(s, p, len, &from) != PERSIST_OK) {
            log_msg(s, LOG_WARNING, old_style ? "Error reading the RDB preamble of the AOF file %s, AOF loading aborted"
                                              : "Error reading the RDB base file %s, AOF loading aborted", name);
            munmap(p, len);
            free(path);
            return LOAD_FAILED;
        }
        if (old_style) log_msg(s, LOG_NOTICE, "Reading the remaining AOF tail...");
    }
    size_t valid = 0;
    int in_multi = 0;
    int rc = run_commands(s, name, p + from, len - from, &valid, &in_multi);
    valid += from;
    munmap(p, len);
    if (rc == PERSIST_ERR_FORMAT + 100) {
        ret = LOAD_FAILED;
    } else if (rc == PERSIST_ERR_FORMAT) {
        log_msg(s, LOG_WARNING, "Bad file format reading the append only file %s: make a backup of your AOF file, "
                                "then use ./redis-check-aof --fix <filename.manifest>", name);
        ret = LOAD_FAILED;
    } else if (rc == PERSIST_ERR_TRUNCATED || in_multi) {
        if (in_multi && rc != PERSIST_ERR_TRUNCATED)
            log_msg(s, LOG_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", name);
        ret = LOAD_FAILED;
        if (s->cfg.aof_load_truncated) {
            log_msg(s, LOG_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", name);
            log_msg(s, LOG_WARNING, "!!! Truncating the AOF %s at offset %llu !!!", name, (unsigned long long)valid);
            if (truncate(path, (off_t)valid) == -1) {
                log_msg(s, LOG_WARNING, "Error truncating the AOF file %s: %s", name, strerror(errno));
            } else {
                log_msg(s, LOG_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", name);
                ret = LOAD_TRUNCATED;
            }
        }
        if (ret == LOAD_FAILED)
            log_msg(s, LOG_WARNING, "Unexpected end of file reading the append only file %s. You can: 1) Make a "
                                    "backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) "
                                    "Alternatively you can set the 'aof-load-truncated' configuration option to yes "
                                    "and restart the server.", name);
        else if (!last) {
            log_msg(s, LOG_WARNING, "Fatal error: the truncated file is not the last file");
            ret = LOAD_FAILED;
        }
    }
    free(path);
    return ret;
}

/* Redis's loadAppendOnlyFiles: the base, then each incr in order; 0 or -1. */
static int load_files(server *s)
{
    aof_state *a = s->aof;
    uint64_t start = server_real_ms(s);
    size_t total = (a->base.name ? 1 : 0) + a->nincr;
    int loaded_any = 0;
    if (a->base.name) {
        uint64_t t0 = server_real_ms(s);
        int r = load_file(s, a->base.name, total == 1);
        if (r == LOAD_FAILED) return -1;
        if (r != LOAD_EMPTY) loaded_any = 1;
        if (r == LOAD_OK || r == LOAD_TRUNCATED)
            log_msg(s, LOG_NOTICE, "DB loaded from base file %s: %.3f seconds", a->base.name,
                    (double)(server_real_ms(s) - t0) / 1000);
    }
    for (size_t i = 0; i < a->nincr; i++) {
        uint64_t t0 = server_real_ms(s);
        int r = load_file(s, a->incr[i].name, i + 1 == a->nincr);
        if (r == LOAD_FAILED) return -1;
        if (r != LOAD_EMPTY) loaded_any = 1;
        if (r == LOAD_OK || r == LOAD_TRUNCATED)
            log_msg(s, LOG_NOTICE, "DB loaded from incr file %s: %.3f seconds", a->incr[i].name,
                    (double)(server_real_ms(s) - t0) / 1000);
    }
    a->base_size = a->base.name ? file_size(s, a->base.name) : 0;
    a->current_size = a->base_size;
    for (size_t i = 0; i < a->nincr; i++) a->current_size += file_size(s, a->incr[i].name);
    if (loaded_any)
        log_msg(s, LOG_NOTICE, "DB loaded from append only file: %.3f seconds", (double)(server_real_ms(s) - start) / 1000);
    return 0;
}

/* ---- rewriting: a new base made from the dataset ---- */

typedef struct base_writer {
    server *s;
    resp_buf b;
    persist_buf dump;
    persist_opts o;
    int fd, failed;
} base_writer;

static void base_flush(base_writer *w, size_t over)
{
    if (w->b.len < over || w->failed) return;
    if (write_all(w->fd, (const char *)w->b.data, w->b.len) != (ssize_t)w->b.len) w->failed = 1;
    w->b.len = 0;
}

/* A key as commands: a string by SET, the rest by RESTORE of its DUMP
 * payload (every type in one form redis-server and latchd both load), the
 * deadline by PEXPIREAT. */
static void base_key(store_key *k, void *ctx)
{
    base_writer *w = ctx;
    size_t klen;
    const char *key = store_key_name(k, &klen);
    if (store_key_type(k) == STORE_STRING) {
        size_t vlen;
        const char *val = store_string_get(k, &vlen);
        resp_slice r[3] = {S_SET, {key, klen}, {val, vlen}};
        put_cmd(&w->b, 3, r);
    } else {
        w->dump.len = 0;
        persist_dump(k, &w->o, &w->dump);
        resp_slice r[4] = {{"RESTORE", 7}, {key, klen}, {"0", 1}, {(const char *)w->dump.p, w->dump.len}};
        put_cmd(&w->b, 4, r);
    }
    if (store_key_deadline(k) != STORE_NO_DEADLINE) {
        char n[24];
        int nl = snprintf(n, sizeof n, "%lld", (long long)store_key_deadline(k));
        resp_slice r[3] = {S_PEXPIREAT, {key, klen}, {n, (size_t)nl}};
        put_cmd(&w->b, 3, r);
    }
    base_flush(w, 1 << 16);
}

static int write_aof_base(server *s, int fd)
{
    base_writer w = {.s = s, .o = rdb_opts(s), .fd = fd};
    resp_buf_init(&w.b);
    if (s->cfg.aof_timestamp_enabled)
        resp_buf_appendf(&w.b, "#TS:%llu\r\n", (unsigned long long)(server_real_ms(s) / 1000));
    size_t nlibs;
    persist_pstr *libs = functions_codes(s, &nlibs);
    for (size_t i = 0; i < nlibs; i++) {
        resp_slice r[3] = {{"FUNCTION", 8}, {"LOAD", 4}, {libs[i].p, libs[i].len}};
        put_cmd(&w.b, 3, r);
    }
    free(libs);
    for (int i = 0; i < s->ndbs; i++) {
        store *st = server_db_if_used(s, i);
        if (!st || store_size(st) == 0) continue;
        char n[16];
        int nl = snprintf(n, sizeof n, "%d", i);
        resp_slice sel[2] = {{"SELECT", 6}, {n, (size_t)nl}};
        put_cmd(&w.b, 2, sel);
        store_walk(st, base_key, &w);
    }
    base_flush(&w, 0);
    resp_buf_free(&w.b);
    persist_buf_free(&w.dump);
    return w.failed ? -1 : 0;
}

/* Redis's rewriteAppendOnlyFile: the dataset into tmpfile (a path),
 * synced; 0 or -1 (logged). */
static int write_base(server *s, const char *tmpfile)
{
    int fd = open(tmpfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        log_msg(s, LOG_WARNING, "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): %s", strerror(errno));
        return -1;
    }
    int rc = s->cfg.aof_use_rdb_preamble ? rdb_write_fd(s, fd) : write_aof_base(s, fd);
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    if (close(fd) != 0) rc = -1;
    if (rc != 0) {
        log_msg(s, LOG_WARNING, "Write error writing append only file on disk: %s", strerror(errno));
        unlink(tmpfile);
    }
    return rc;
}

static void cron_start(server *s);

/* The rewrite child's file becomes the base: the old base and every incr
 * but the last become history, deleted once the manifest says so. */
static void rewrite_done(server *s, int ok)
{
    aof_state *a = s->aof;
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-rewriteaof-bg-%d.aof", a->child);
    uint64_t now = server_real_ms(s);
    a->last_rewrite_s = (long long)((now - a->rewrite_start_ms) / 1000);
    a->child = 0;
    server_children_changed(s);
    a->last_cow = persist_child_cow(&a->cow_fd);
    if (!ok) {
        log_msg(s, LOG_WARNING, "Background AOF rewrite terminated with error");
        unlink(tmp);
        goto failed;
    }
    log_msg(s, LOG_NOTICE, "Background AOF rewrite terminated with success");
    flush_file(s, 1);
    const char *ext = s->cfg.aof_use_rdb_preamble ? ".rdb" : ".aof";
    char *base = file_name(s, a->base_seq + 1, ".base", ext);
    char *base_path = path_in_dir(s, base);
    if (rename(tmp, base_path) != 0) {
        log_msg(s, LOG_WARNING, "Error trying to rename the temporary AOF file %s into %s: %s", tmp, base,
                strerror(errno));
        unlink(tmp);
        free(base);
        free(base_path);
        goto failed;
    }
    free(base_path);
    log_msg(s, LOG_NOTICE, "Successfully renamed the temporary AOF base file %s into %s", tmp, base);
    /* the manifest as it will be: the new base, the last incr */
    if (a->base.name) file_list_push(&a->hist, &a->nhist, a->base.name, a->base.seq);
    a->base = (aof_file){base, ++a->base_seq};
    a->base_is_rdb = s->cfg.aof_use_rdb_preamble;
    if (a->temp_incr) {   /* the first rewrite of CONFIG SET appendonly yes: its incr gets its name */
        char *incr = file_name(s, a->incr_seq + 1, ".incr", ".aof");
        char *from = path_in_dir(s, a->temp_incr), *to = path_in_dir(s, incr);
        int r = rename(from, to);
        free(from);
        free(to);
        if (r != 0) {
            log_msg(s, LOG_WARNING, "Error trying to rename the temporary AOF incr file %s into %s: %s", a->temp_incr,
                    incr, strerror(errno));
            free(incr);
            goto failed;
        }
        for (size_t i = 0; i < a->nincr; i++) file_list_push(&a->hist, &a->nhist, a->incr[i].name, a->incr[i].seq);
        a->nincr = 0;
        file_list_push(&a->incr, &a->nincr, incr, ++a->incr_seq);
        free(a->temp_incr);
        a->temp_incr = NULL;
    } else {
        while (a->nincr > (a->fd >= 0 ? 1u : 0u)) {
            file_list_push(&a->hist, &a->nhist, a->incr[0].name, a->incr[0].seq);
            memmove(a->incr, a->incr + 1, (a->nincr - 1) * sizeof(*a->incr));
            a->nincr--;
        }
    }
    if (write_manifest(s) != 0) goto failed;
    delete_history(s);
    a->base_size = file_size(s, a->base.name);
    a->current_size = a->base_size;
    for (size_t i = 0; i < a->nincr; i++) a->current_size += file_size(s, a->incr[i].name);
    if (a->state == AOF_WAIT_REWRITE) {
        a->state = AOF_ON;
        log_msg(s, LOG_NOTICE, "AOF rewrite successful");
    }
    a->rewrites++;
    a->consecutive_failures = 0;
    a->last_rewrite_ok = 1;
    log_msg(s, LOG_NOTICE, "Background AOF rewrite finished successfully");
    return;
failed:
    a->last_rewrite_ok = 0;
    a->consecutive_failures++;
    if (a->state == AOF_WAIT_REWRITE) a->scheduled = 1;   /* retried by the cron */
}

static void on_child_exit(uv_signal_t *h, int signum)
{
    (void)signum;
    server *s = h->data;
    aof_state *a = s->aof;
    int status;
    if (!a->child || waitpid(a->child, &status, WNOHANG) != a->child) return;
    uv_signal_stop(h);
    rewrite_done(s, WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Redis's openNewIncrAofForAppend: from now on records go to a new incr
 * file (a temp one while no manifest names this AOF yet), so the child's
 * base plus it are the whole dataset. */
static int open_new_incr(server *s)
{
    aof_state *a = s->aof;
    if (a->state == AOF_OFF) return 0;
    if (a->state == AOF_WAIT_REWRITE) {
        char name[PERSIST_AOF_NAME_MAX];
        snprintf(name, sizeof name, "temp-%s.incr", s->cfg.appendfilename);
        char *path = path_in_dir(s, name);
        unlink(path);
        free(path);
        if (open_incr(s, name) != 0) return -1;
        free(a->temp_incr);
        a->temp_incr = mem_strdup(name);
        return 0;
    }
    char *incr = file_name(s, a->incr_seq + 1, ".incr", ".aof");
    int old = a->fd;
    a->fd = -1;
    if (open_incr(s, incr) != 0) {
        a->fd = old;
        free(incr);
        return -1;
    }
    file_list_push(&a->incr, &a->nincr, incr, ++a->incr_seq);
    if (write_manifest(s) != 0) {   /* as Redis: the old file stays in use */
        close(a->fd);
        a->fd = old;
        a->nincr--;
        a->incr_seq--;
        char *path = path_in_dir(s, incr);
        unlink(path);
        free(path);
        free(incr);
        return -1;
    }
    if (old >= 0) close(old);
    return 0;
}

static int start_rewrite(server *s)
{
    aof_state *a = s->aof;
    if (a->child || s->rdb_child) return -1;
    if (mkdir(s->cfg.appenddirname, 0755) != 0 && errno != EEXIST) {
        log_msg(s, LOG_WARNING, "Can't open or create append-only dir %s: %s", s->cfg.appenddirname, strerror(errno));
        a->last_rewrite_ok = 0;
        return -1;
    }
    flush_file(s, 1);
    if (open_new_incr(s) != 0) {
        a->last_rewrite_ok = 0;
        return -1;
    }
    a->scheduled = 0;
    a->rewrite_start_ms = server_real_ms(s);
    pid_t pid = persist_fork(s, &a->cow_fd, s->cfg.aof_rewrite_cpulist);
    if (pid < 0) {
        log_msg(s, LOG_WARNING, "Can't rewrite append only file in background: fork: %s", strerror(errno));
        a->last_rewrite_ok = 0;
        return -1;
    }
    if (pid == 0) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "temp-rewriteaof-bg-%d.aof", (int)getpid());
        persist_child_exit(a->cow_fd, write_base(s, tmp) == 0);
    }
    log_msg(s, LOG_NOTICE, "Background append only file rewriting started by pid %d", (int)pid);
    a->child = pid;
    server_children_changed(s);
    cron_start(s);
    uv_signal_start(&a->sigchld, on_child_exit, SIGCHLD);
    on_child_exit(&a->sigchld, SIGCHLD);
    return 0;
}

int aof_bgrewrite(server *s, int *scheduled, const char **err)
{
    aof_state *a = state(s);
    *scheduled = 0;
    if (a->child) {
        *err = "ERR Background append only file rewriting already in progress";
        return -1;
    }
    if (s->rdb_child || (s->current_client && s->current_client->mstate.executing)) {
        a->scheduled = 1;
        a->consecutive_failures = 0;
        cron_start(s);
        *scheduled = 1;
        return 0;
    }
    if (start_rewrite(s) != 0) {
        *err = "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.";
        return -1;
    }
    return 0;
}

/* ---- serverCron's part: everysec's fsync, write errors retried, the
 * scheduled and automatic rewrites ---- */

static void on_cron(uv_timer_t *t)
{
    server *s = t->data;
    aof_state *a = s->aof;
    if (a->child) on_child_exit(&a->sigchld, SIGCHLD);
    if (a->state != AOF_OFF && a->fd >= 0) {
        if (a->buf.len || (s->cfg.appendfsync == CONFIG_FSYNC_EVERYSEC && a->fsynced_size != a->incr_size))
            flush_file(s, 0);
        if (a->fsync_failed && !a->fsync_running) {
            /* Redis's aof_bio_fsync_status: an everysec fsync failed */
            s->aof_write_err = 1;
            background_fsync(s);
        } else if (!a->fsync_failed && a->write_ok) {
            s->aof_write_err = 0;
        }
    }
    if (a->child || s->rdb_child || s->cron_paused || a->stopping) return;
    if (a->scheduled) {
        start_rewrite(s);
        return;
    }
    long long perc = s->cfg.auto_aof_rewrite_percentage;
    if (a->state == AOF_ON && perc && a->current_size > s->cfg.auto_aof_rewrite_min_size) {
        long long base = a->base_size ? a->base_size : 1;
        long long growth = a->current_size * 100 / base - 100;
        if (growth >= perc) {
            log_msg(s, LOG_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth", growth);
            start_rewrite(s);
        }
    }
}

static void cron_start(server *s)
{
    aof_state *a = s->aof;
    if (!a->handles) {
        uv_timer_init(s->loop, &a->cron);
        a->cron.data = s;
        uv_unref((uv_handle_t *)&a->cron);
        uv_signal_init(s->loop, &a->sigchld);
        a->sigchld.data = s;
        uv_unref((uv_handle_t *)&a->sigchld);
        a->handles = 1;
    }
    if (!uv_is_active((uv_handle_t *)&a->cron)) {
        long long hz = s->cfg.hz > 0 ? s->cfg.hz : 10;
        uint64_t every = (uint64_t)(1000 / hz) ? (uint64_t)(1000 / hz) : 1;
        uv_timer_start(&a->cron, on_cron, every, every);
    }
}

/* ---- start, switch, stop ---- */

static int open_for_append(server *s)
{
    aof_state *a = s->aof;
    if (mkdir(s->cfg.appenddirname, 0755) != 0 && errno != EEXIST) {
        log_msg(s, LOG_WARNING, "Can't open or create append-only dir %s: %s", s->cfg.appenddirname, strerror(errno));
        return -1;
    }
    if (!a->base.name && !a->nincr) {   /* a new AOF: the dataset as its base, now */
        const char *ext = s->cfg.aof_use_rdb_preamble ? ".rdb" : ".aof";
        char *base = file_name(s, ++a->base_seq, ".base", ext);
        char *path = path_in_dir(s, base);
        int rc = write_base(s, path);
        free(path);
        if (rc != 0) {
            free(base);
            return -1;
        }
        a->base = (aof_file){base, a->base_seq};
        a->base_is_rdb = s->cfg.aof_use_rdb_preamble;
        log_msg(s, LOG_NOTICE, "Creating AOF base file %s on server start", base);
        /* as Redis: the sizes count from the next load or rewrite */
    }
    int created = a->nincr == 0;
    if (created) {
        a->incr_seq++;
        file_list_push(&a->incr, &a->nincr, file_name(s, a->incr_seq, ".incr", ".aof"), a->incr_seq);
    }
    const char *incr = a->incr[a->nincr - 1].name;
    if (open_incr(s, incr) != 0 || write_manifest(s) != 0) return -1;
    log_msg(s, LOG_NOTICE, created ? "Creating AOF incr file %s on server start" : "Opening AOF incr file %s on server start",
            incr);
    return 0;
}

static void set_on(server *s, int st)
{
    if (!s->aof->kinds) s->aof->kinds = kinds_new();
    s->aof->state = st;
    s->aof_on = st != AOF_OFF;
    cron_start(s);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Redis's loadAppendOnlyFiles upgrade test: appendfilename alone in dir
 * (a pre-7.0 AOF), and no directory, no manifest (r 0), or a manifest that
 * names it as its only file but the move into the directory never came. */
static int old_style_file(server *s, int r)
{
    aof_state *a = s->aof;
    if (!is_file(s->cfg.appendfilename)) return 0;
    struct stat st;
    if (stat(s->cfg.appenddirname, &st) != 0 || !S_ISDIR(st.st_mode) || r == 0) return 1;
    if (!a->base.name || a->nincr || strcmp(a->base.name, s->cfg.appendfilename) != 0) return 0;
    char *path = path_in_dir(s, a->base.name);
    int there = is_file(path);
    free(path);
    return !there;
}

/* Redis's aofUpgradePrepare: the manifest naming the old file as base 1 is
 * written first, then the file is moved in; a crash between the two is
 * retried by the next start (the test above). */
static int upgrade_old_file(server *s)
{
    aof_state *a = s->aof;
    if (mkdir(s->cfg.appenddirname, 0755) != 0 && errno != EEXIST) {
        log_msg(s, LOG_WARNING, "Can't open or create append-only dir %s: %s", s->cfg.appenddirname, strerror(errno));
        return -1;
    }
    manifest_clear(a);
    a->base = (aof_file){mem_strdup(s->cfg.appendfilename), 1};
    a->base_seq = 1;
    a->base_is_rdb = 0;
    if (write_manifest(s) != 0) return -1;
    char *path = path_in_dir(s, s->cfg.appendfilename);
    int rc = rename(s->cfg.appendfilename, path);
    free(path);
    if (rc != 0) {
        log_msg(s, LOG_WARNING, "Error trying to move the old AOF file %s into dir %s: %s", s->cfg.appendfilename,
                s->cfg.appenddirname, strerror(errno));
        return -1;
    }
    log_msg(s, LOG_NOTICE, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).",
            s->cfg.appendfilename, s->cfg.appenddirname);
    return 1;
}

int aof_start(server *s)
{
    if (!s->cfg.appendonly) return 0;
    aof_state *a = state(s);
    int r = read_manifest(s);
    if (r < 0) return -1;
    if (old_style_file(s, r) && (r = upgrade_old_file(s)) < 0) return -1;
    if (r > 0 && load_files(s) != 0) return -1;
    if (open_for_append(s) != 0) return -1;
    delete_history(s);
    set_on(s, AOF_ON);
    (void)a;
    return 0;
}

/* Redis's killAppendOnlyChild: the child stopped, its temp file removed. */
static void kill_child(server *s)
{
    aof_state *a = s->aof;
    if (!a->child) return;
    kill(a->child, SIGUSR1);
    waitpid(a->child, NULL, 0);
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-rewriteaof-bg-%d.aof", a->child);
    unlink(tmp);
    a->child = 0;
    server_children_changed(s);
    persist_child_cow(&a->cow_fd);   /* stopped: no report */
    if (a->handles) uv_signal_stop(&a->sigchld);
}

int aof_set_enabled(server *s, int on)
{
    aof_state *a = state(s);
    if (a->repl) {   /* the Raft log is the durable log: one stream of records, one reader */
        if (on) log_msg(s, LOG_WARNING, "appendonly is not available with raft-id set: the Raft log is the log");
        return on ? -1 : 0;
    }
    if (!on) {
        if (a->state == AOF_OFF) return 0;
        flush_file(s, 1);
        if (a->child) log_msg(s, LOG_NOTICE, "Killing running AOF rewrite child: %ld", (long)a->child);
        if (a->fd >= 0) {
            fdatasync(a->fd);
            close(a->fd);
        }
        a->fd = -1;
        kill_child(s);
        a->buf.len = 0;
        a->scheduled = 0;
        set_on(s, AOF_OFF);
        s->aof_on = 0;
        s->aof_write_err = 0;
        return 0;
    }
    if (a->state != AOF_OFF) return 0;
    /* Redis's startAppendOnly: records wait for the rewrite's base */
    set_on(s, AOF_WAIT_REWRITE);
    if (read_manifest(s) < 0) manifest_clear(a);
    kill_child(s);
    if (s->rdb_child) {
        a->scheduled = 1;
        log_msg(s, LOG_NOTICE, "AOF was enabled but there is already another background operation. An AOF "
                               "background was scheduled to start when possible.");
    } else if (start_rewrite(s) != 0) {
        log_msg(s, LOG_WARNING, "Redis needs to enable the AOF but can't trigger a background AOF rewrite "
                                "operation. Check the above logs for more info about the error.");
        set_on(s, AOF_OFF);
        return -1;
    }
    return 0;
}

void aof_shutdown(server *s)
{
    aof_state *a = s->aof;
    if (!a) return;
    /* the exit comes an iteration later (latchd_stop): the cron, overdue
     * after the fsync below, would start the rewrite killed here again */
    a->stopping = 1;
    if (a->child) log_msg(s, LOG_WARNING, "There is a child rewriting the AOF. Killing it!");
    kill_child(s);
    if (a->state != AOF_OFF && a->fd >= 0) {
        log_msg(s, LOG_NOTICE, "Calling fsync() on the AOF file.");
        flush_file(s, 1);
        fdatasync(a->fd);
        a->fsynced_size = a->incr_size;
    }
}

int aof_reload(server *s)
{
    aof_state *a = state(s);
    if (a->state == AOF_ON) flush_file(s, 1);
    server_flush_all(s);
    functions_flush(s);
    int on = s->aof_on;
    s->aof_on = 0;   /* the loader's commands are not logged again */
    int rc = read_manifest(s) > 0 ? load_files(s) : 0;
    s->aof_on = on;
    return rc;
}

size_t aof_buffer_memory(const server *s)
{
    const aof_state *a = s->aof;
    return a && a->state != AOF_OFF ? a->buf.cap : 0;
}

void aof_info(server *s, resp_buf *b)
{
    aof_state *a = s->aof;
    int st = a ? a->state : AOF_OFF;
    uint64_t now = server_real_ms(s);
    resp_buf_appendf(b,
        "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
        "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\n"
        "aof_last_bgrewrite_status:%s\r\naof_rewrites:%lld\r\naof_rewrites_consecutive_failures:%lld\r\n"
        "aof_last_write_status:%s\r\naof_last_cow_size:%zu\r\nmodule_fork_in_progress:0\r\n"
        "module_fork_last_cow_size:0\r\n",
        st != AOF_OFF, a && a->child, a && a->scheduled, a ? a->last_rewrite_s : -1LL,
        a && a->child ? (long long)((now - a->rewrite_start_ms) / 1000) : -1LL,
        !a || a->last_rewrite_ok ? "ok" : "err", a ? a->rewrites : 0LL, a ? a->consecutive_failures : 0LL,
        !a || (a->write_ok && !a->fsync_failed) ? "ok" : "err", a ? a->last_cow : 0);
    if (s->cfg.appendonly && a)
        resp_buf_appendf(b,
            "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\naof_buffer_length:%zu\r\n"
            "aof_pending_bio_fsync:%d\r\naof_delayed_fsync:%lu\r\n",
            a->current_size, a->base_size, a->scheduled, a->buf.len, a->fsync_running, a->delayed_fsync);
}

void aof_shutdown_aborted(server *s)
{
    if (s->aof) s->aof->stopping = 0;
}

void aof_close(server *s)
{
    aof_state *a = s->aof;
    if (!a) return;
    kill_child(s);   /* none outlives the server (it holds the listeners) */
    if (a->handles) {
        server_close_handle(s, (uv_handle_t *)&a->cron);
        server_close_handle(s, (uv_handle_t *)&a->sigchld);
        a->handles = 0;
    }
    if (a->linger_init) {
        server_close_handle(s, (uv_handle_t *)&a->linger);
        a->linger_init = 0;
    }
    if (a->rehash_init) {
        server_close_handle(s, (uv_handle_t *)&a->rehash);
        a->rehash_init = 0;
    }
}

void aof_free(server *s)
{
    aof_state *a = s->aof;
    if (!a) return;
    if (a->fd >= 0) close(a->fd);
    manifest_clear(a);
    free(a->temp_incr);
    free(a->scratch);
    free(a->kinds);
    resp_buf_free(&a->buf);
    free(a);
    s->aof = NULL;
    s->aof_on = 0;
}

/* Redis's writeCommandsDeniedByDiskError for the AOF: writes (and PING)
 * refused while the file cannot be written. */
int aof_refuses(client *c, const command *cmd)
{
    unsigned flags = cmd->flags;
    if (cmd->proc == cmd_exec) flags |= c->mstate.cmd_flags;
    if (!(flags & CMD_WRITE) && cmd->proc != cmd_ping) return 0;
    reply_errorf(c, "MISCONF Errors writing to the AOF file: %s", aof_write_error(c->srv));
    return 1;
}
