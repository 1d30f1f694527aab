/* debug.c - the DEBUG subcommands test suites use (SLEEP, RELOAD, DIGEST,
 * DIGEST-VALUE, PAUSE-CRON, SET-ACTIVE-EXPIRE, OBJECT, LISTPACK, REPLYBUFFER,
 * QUICKLIST-PACKED-THRESHOLD, HELP), allowed as enable-debug-command says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "stream.h"
#include "persist/persist.h"
#include "scripting/script.h"
#include "list.h"
#include "num.h"
#include "set.h"
#include "zset.h"

/* Redis 7's allowProtectedAction: "local" means loopback or unix socket. */
int debug_command_allowed(const client *c)
{
    int mode = c->srv->cfg.enable_debug_command;
    return mode == CONFIG_PROTECTED_YES || (mode == CONFIG_PROTECTED_LOCAL && client_is_local(c));
}

/* Arguments as C strings, read as Redis reads them (strtod, atoi): what
 * does not parse counts as 0. */
static void arg_cstr(const resp_slice *a, char *dst, size_t len)
{
    snprintf(dst, len, "%.*s", (int)a->len, a->ptr);
}

/* The whole server stops, as in Redis: that is what tests use it for. */
static void debug_sleep(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    long long usec = (long long)(strtod(num, NULL) * 1000000);
    struct timespec ts = {(time_t)(usec / 1000000), (long)(usec % 1000000) * 1000};
    if (usec > 0) nanosleep(&ts, NULL);
    reply_ok(c);
}

/* Redis's DEBUG RELOAD: the dump file saved (unless NOSAVE), the
 * databases and functions emptied (unless NOFLUSH) and the file loaded
 * back; a key or library that is there already fails it, unless MERGE. */
static void debug_reload(client *c)
{
    int flush = 1, save = 1, merge = 0;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "NOFLUSH")) flush = 0;
        else if (arg_is(&c->argv[i], "NOSAVE")) save = 0;
        else if (arg_is(&c->argv[i], "MERGE")) merge = 1;
        else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    server *s = c->srv;
    if (save && rdb_save(s) != 0) {
        reply_error(c, "ERR");
        return;
    }
    if (flush) {   /* Redis's emptyData: functions too, unlike FLUSHALL */
        server_flush_all(s);
        functions_flush(s);
    }
    if (rdb_load(s, merge) != 0) {
        reply_error(c, "ERR Error trying to load the RDB dump");
        return;
    }
    log_msg(s, LOG_WARNING, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

/* Redis's DEBUG LOADAOF: the buffer flushed, the databases emptied and the
 * append-only files loaded back; as Redis, a failure exits. */
static void debug_loadaof(client *c)
{
    server *s = c->srv;
    if (aof_reload(s) != 0) _exit(1);
    s->dirty = 0;
    log_msg(s, LOG_WARNING, "Append Only File loaded by DEBUG LOADAOF");
    reply_ok(c);
}

/* ---- DIGEST and DIGEST-VALUE: Redis's dataset digest, to the bit ---- */

/* xorDigest: digest ^= SHA1(data) (order does not matter). */
static void digest_xor(unsigned char *d, const void *p, size_t len)
{
    unsigned char h[SHA1_DIGEST_LEN];
    sha1_digest(p, len, h);
    for (int i = 0; i < SHA1_DIGEST_LEN; i++) d[i] ^= h[i];
}

/* mixDigest: digest = SHA1(digest ^ SHA1(data)) (order matters). */
static void digest_mix(unsigned char *d, const void *p, size_t len)
{
    digest_xor(d, p, len);
    sha1_digest(d, SHA1_DIGEST_LEN, d);
}

static void mix_elem(const char *v, size_t len, void *ctx) { digest_mix(ctx, v, len); }

static void xor_member(const char *m, size_t len, void *ctx) { digest_xor(ctx, m, len); }

/* a member and its score ("%.17g"), or a field and its value, mixed in a
 * digest of their own that is xored in: the pairs' order does not matter */
static void xor_pair(unsigned char *d, const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char e[SHA1_DIGEST_LEN] = {0};
    digest_mix(e, a, alen);
    digest_mix(e, b, blen);
    digest_xor(d, e, sizeof e);
}

static void xor_scored(const char *m, size_t mlen, double score, void *ctx)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%.17g", score);
    xor_pair(ctx, m, mlen, buf, (size_t)n);
}

static void xor_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    xor_pair(ctx, f, flen, v, vlen);
}

static void mix_pair(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    digest_mix(ctx, f, flen);
    digest_mix(ctx, v, vlen);
}

/* A stream entry: "<ms>.<seq>", then each field and value, in order. */
static int mix_entry(const store_sentry *e, void *ctx)
{
    char id[48];
    int n = snprintf(id, sizeof id, "%llu.%llu", (unsigned long long)e->id.ms, (unsigned long long)e->id.seq);
    digest_mix(ctx, id, (size_t)n);
    store_sentry_foreach(e, mix_pair, ctx);
    return 0;
}

/* digest d mixed with x as Redis's htonl(x) bytes */
static void digest_mix_u32(unsigned char *d, uint32_t x)
{
    unsigned char be[4] = {(unsigned char)(x >> 24), (unsigned char)(x >> 16), (unsigned char)(x >> 8),
                           (unsigned char)x};
    digest_mix(d, be, sizeof be);
}

/* Redis's xorObjectDigest: the type (network order), the value, and a
 * mark when the key has a deadline. */
static void digest_value(store_key *k, unsigned char *d)
{
    static const uint32_t rdb_type[] = {[STORE_STRING] = 0, [STORE_LIST] = 1, [STORE_SET] = 2,
                                        [STORE_ZSET] = 3, [STORE_HASH] = 4, [STORE_STREAM] = 6};
    digest_mix_u32(d, rdb_type[store_key_type(k)]);
    size_t len;
    switch (store_key_type(k)) {
    case STORE_STRING: {
        const char *v = store_string_get(k, &len);
        digest_mix(d, v, len);
        break;
    }
    case STORE_LIST: store_list_range(k, 0, store_list_len(k), 0, mix_elem, d); break;
    case STORE_SET: store_set_foreach(store_set_of(k), xor_member, d); break;
    case STORE_ZSET: store_zset_visit(k, 0, store_zset_len(k), 0, xor_scored, d); break;
    case STORE_HASH: store_hash_foreach(k, xor_field, d); break;
    case STORE_STREAM: {
        store_sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        store_stream_range(store_stream_of(k), lo, hi, 0, 0, mix_entry, d);
        break;
    }
    }
    if (store_key_deadline(k) != STORE_NO_DEADLINE) digest_xor(d, "!!expire!!", 10);
}

static void reply_digest(client *c, const unsigned char *d)
{
    char hex[2 * SHA1_DIGEST_LEN + 1];
    for (int i = 0; i < SHA1_DIGEST_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    reply_status(c, hex);
}

static void digest_key(store_key *k, void *ctx)
{
    unsigned char d[SHA1_DIGEST_LEN] = {0};
    size_t len;
    const char *name = store_key_name(k, &len);
    digest_mix(d, name, len);
    digest_value(k, d);
    digest_xor(ctx, d, sizeof d);
}

static void debug_digest(client *c)
{
    unsigned char final[SHA1_DIGEST_LEN] = {0};
    for (int i = 0; i < c->srv->ndbs; i++) {
        store *db = server_db_if_used(c->srv, i);
        if (!db || !store_size(db)) continue;
        digest_mix_u32(final, (uint32_t)i);
        store_walk(db, digest_key, final);
    }
    reply_digest(c, final);
}

/* (Redis digests a key past its deadline that is not reclaimed yet; here
 * looking it up reclaims it, and it digests as missing: zeros.) */
static void debug_digest_value(client *c)
{
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        unsigned char d[SHA1_DIGEST_LEN] = {0};
        store_key *k = store_lookup(client_db(c), c->argv[i].ptr, c->argv[i].len);
        if (k) digest_value(k, d);
        reply_digest(c, d);
    }
}

/* Redis's serverCron, paused: the periodic checks stop, and a signal's
 * shutdown waits; unpausing runs a pending one, as the next cron would. */
static void debug_pause_cron(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    server *s = c->srv;
    s->cron_paused = atoi(num) != 0;
    reply_ok(c);
    if (!s->cron_paused && s->shutdown_asap && rdb_shutdown_save(s, 0, 0, 0) == 0) server_shutdown(s);
}

/* 0 leaves expired keys to lazy expiry on access; the wheel stops firing. */
static void debug_set_active_expire(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    c->srv->active_expire = atoi(num) != 0;
    server_expire_reschedule(c->srv);
    reply_ok(c);
}

/* REPLYBUFFER PEAK-RESET-TIME never|reset|ms, REPLYBUFFER RESIZING 0|1:
 * the reply buffer model's settings (net.c), as Redis's cron has them. */
static void debug_replybuffer(client *c)
{
    server *s = c->srv;
    char num[64];
    if (arg_is(&c->argv[2], "peak-reset-time")) {
        long long ms;
        if (arg_is(&c->argv[3], "never")) s->reply_peak_reset_ms = -1;
        else if (arg_is(&c->argv[3], "reset")) s->reply_peak_reset_ms = NET_REPLY_PEAK_RESET_MS;
        else if (!arg_ll_or_reply(c, &c->argv[3], &ms)) return;
        else s->reply_peak_reset_ms = ms;
    } else if (arg_is(&c->argv[2], "resizing")) {
        arg_cstr(&c->argv[3], num, sizeof(num));
        s->reply_resizing = atoi(num);
    } else {
        reply_subcommand_syntax_error(c);
        return;
    }
    reply_ok(c);
}

static void debug_set_disable_deny_scripts(client *c)
{
    char num[64];
    arg_cstr(&c->argv[2], num, sizeof(num));
    c->srv->script_allow_noscript = atoi(num) != 0;
    reply_ok(c);
}

/* One reply of each RESP type, for clients' and scripts' parsers. */
static void debug_protocol(client *c)
{
    const resp_slice *name = &c->argv[2];
    if (arg_is(name, "string")) {
        reply_bulk(c, "Hello World", 11);
    } else if (arg_is(name, "integer")) {
        reply_int(c, 12345);
    } else if (arg_is(name, "double")) {
        reply_double(c, 3.141);
    } else if (arg_is(name, "bignum")) {
        reply_bignum(c, "1234567999999999999999999999999999999", 37);
    } else if (arg_is(name, "null")) {
        reply_null(c);
    } else if (arg_is(name, "array") || arg_is(name, "set")) {
        if (arg_is(name, "set")) reply_set(c, 3);
        else reply_array(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (arg_is(name, "map")) {
        reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(c, j);
            reply_bool(c, j == 1);
        }
    } else if (arg_is(name, "attrib")) {
        if (c->proto >= 3) {   /* an attribute is not a reply: a real one follows */
            reply_attribute(c, 1);
            reply_bulk(c, "key-popularity", 14);
            reply_array(c, 2);
            reply_bulk(c, "key:123", 7);
            reply_int(c, 90);
        }
        reply_bulk(c, "Some real reply following the attribute", 39);
    } else if (arg_is(name, "push")) {
        if (c->proto < 3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_push(c, 2);
        reply_bulk(c, "server-cpu-usage", 16);
        reply_int(c, 42);
        reply_bulk(c, "Some real reply following the push reply", 40);
    } else if (arg_is(name, "true") || arg_is(name, "false")) {
        reply_bool(c, arg_is(name, "true"));
    } else if (arg_is(name, "verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25);
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

/* Bytes an RDB length prefix takes (6, 14 or 32 bits). */
static size_t rdb_len_size(size_t n) { return n < 64 ? 1 : n < 16384 ? 2 : 5; }

static size_t rdb_string_size(const char *p, size_t len)
{
    long long v;
    /* rdbTryIntegerEncoding: an integer that fits 32 bits is 1 + 1, 2 or 4 */
    if (len <= 11 && store_str2ll(p, len, &v) && v >= INT32_MIN && v <= INT32_MAX)
        return v >= INT8_MIN && v <= INT8_MAX ? 2 : v >= INT16_MIN && v <= INT16_MAX ? 3 : 5;
    return rdb_len_size(len) + len;
}

static void add_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    *(size_t *)ctx += rdb_string_size(f, flen) + rdb_string_size(v, vlen);
}

static void add_elem(const char *v, size_t len, void *ctx) { *(size_t *)ctx += rdb_string_size(v, len); }

static void add_member(const char *m, size_t mlen, double score, void *ctx)
{
    (void)score;
    *(size_t *)ctx += rdb_string_size(m, mlen) + 8;   /* binary double */
}

static int add_entry(const store_sentry *e, void *ctx)
{
    *(size_t *)ctx += 16;   /* the ID */
    store_sentry_foreach(e, add_field, ctx);
    return 0;
}

/* serializedlength: what DUMP's payload would roughly take, each element
 * as an RDB string (without LZF compression or the listpack blobs Redis
 * writes for small values): an estimate, which is all tests read it for. */
static size_t serialized_estimate(const store_key *k)
{
    size_t n = 0;
    switch (store_key_type(k)) {
    case STORE_STRING: {
        size_t len;
        const char *p = store_string_get(k, &len);
        return rdb_string_size(p, len);
    }
    case STORE_HASH: store_hash_foreach(k, add_field, &n); return rdb_len_size(store_hash_len(k)) + n;
    case STORE_LIST:
        store_list_range(k, 0, store_list_len(k), 0, add_elem, &n);
        return rdb_len_size(store_list_len(k)) + n;
    case STORE_ZSET:
        store_zset_visit(k, 0, store_zset_len(k), 0, add_member, &n);
        return rdb_len_size(store_zset_len(k)) + n;
    case STORE_SET: {
        const store_set *v = store_set_of_const(k);
        size_t count;
        unsigned width;
        if (store_set_intset_raw(v, &count, &width))   /* one blob: header and members */
            return rdb_len_size(8 + count * width) + 8 + count * width;
        store_set_foreach(v, add_elem, &n);
        return rdb_len_size(store_set_len(v)) + n;
    }
    case STORE_STREAM: {
        store_sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        store_stream_range(store_stream_of_const(k), lo, hi, 0, 0, add_entry, &n);
        return n;
    }
    }
    return 0;
}

struct ql_shape {
    unsigned long nodes, bytes, node_bytes;
};

/* Redis's default list-max-listpack-size -2: nodes of up to 8 KiB, each
 * element costing its bytes and about two of header. */
static void ql_add(const char *v, size_t len, void *ctx)
{
    struct ql_shape *q = ctx;
    (void)v;
    size_t entry = len + 2;
    if (q->nodes == 0 || q->node_bytes + entry > 8192) {
        q->nodes++;
        q->node_bytes = 0;
    }
    q->node_bytes += entry;
    q->bytes += entry;
}

/* Redis's format; a quicklist's node figures are an estimate of how Redis
 * would have packed the same elements. */
static void debug_object(client *c)
{
    /* Redis reads its dict directly: no access, no hit/miss counted. */
    store_key *k = store_lookup_raw(client_db(c), c->argv[2].ptr, c->argv[2].len);
    char extra[160] = "";
    if (!k) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (store_key_type(k) == STORE_LIST) {
        struct ql_shape q = {0, 0, 0};
        size_t n = store_list_len(k);
        store_list_range(k, 0, n, 0, ql_add, &q);
        snprintf(extra, sizeof(extra),
                 " ql_nodes:%lu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%lu",
                 q.nodes, q.nodes ? (double)n / (double)q.nodes : 0.0, c->srv->cfg.list_max_listpack_size,
                 c->srv->cfg.list_compress_depth != 0, q.bytes);
    }
    /* The key entry never moves while the key lives: INCR in place keeps
     * the address, as Redis's tests expect of an unshared integer. */
    char line[384];
    snprintf(line, sizeof(line),
             "Value at:%p refcount:%lld encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu%s", (void *)k,
             object_refcount(c->srv, k), store_key_encoding(k), serialized_estimate(k),
             (unsigned)store_key_access_clock(k), (unsigned long long)store_key_idle_seconds(client_db(c), k), extra);
    reply_status(c, line);
}

/* latchd keeps no listpacks to print: the reply says what Redis's says. */
static void debug_listpack(client *c)
{
    store_key *k = db_lookup_read_flags(c, &c->argv[2], DB_NOTOUCH | DB_NONOTIFY);
    if (!k) reply_error(c, "ERR no such key");
    else if (strcmp(store_key_encoding(k), "listpack") != 0) reply_error(c, "ERR Not a listpack encoded object.");
    else reply_status(c, "Listpack structure printed on stdout");
}

/* Lists here have no plain nodes, so the threshold changes nothing; it is
 * checked as Redis checks it (a memory value up to 4 GiB - 1 MiB). */
static void debug_quicklist_packed_threshold(client *c)
{
    char num[64];
    unsigned long long sz;
    arg_cstr(&c->argv[2], num, sizeof(num));
    if (config_parse_memory(num, &sz) != 0 || sz > (1ULL << 32) - (1ULL << 20)) {
        reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(c);
}

static void debug_help(client *c)
{
    static const char *const lines[] = {
        "LISTPACK <key>",
        "    Show low level info about the listpack encoding of <key>.",
        "OBJECT <key>",
        "    Show low level info about `key` and associated value.",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    Sets the threshold for elements to be inserted as plain vs packed nodes",
        "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
        "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
        "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
        "    In case NEVER is provided the last observed peak will never be reset",
        "    In case RESET is provided the peak reset time will be restored to the default value",
        "REPLYBUFFER RESIZING <0|1>",
        "    Enable or disable the reply buffer resize cron job",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* A subcommand table like every container's, but not the DEBUG entry's
 * subs: Redis 7.0 lists no DEBUG subcommands in COMMAND, counts DEBUG
 * itself in CLIENT LIST, and answers an unknown name and a wrong argument
 * count alike. */
static const command debug_subcommands[] = {
    {"help", debug_help, 2, 0, 0, 0, 0, "server", "1.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"digest", debug_digest, 2, 0, 0, 0, 0, "server", "1.0.0", "The digest of the whole dataset, as Redis computes it", NULL, NULL},
    {"digest-value", debug_digest_value, -2, 0, 0, 0, 0, "server", "1.0.0", "The digest of each key's value", "key [key ...]", NULL},
    {"pause-cron", debug_pause_cron, 3, 0, 0, 0, 0, "server", "1.0.0", "Pause or resume the periodic checks", "0|1", NULL},
    {"reload", debug_reload, -2, 0, 0, 0, 0, "server", "1.0.0", "Save the dataset, empty it and load it back", "[MERGE] [NOFLUSH] [NOSAVE]", NULL},
    {"loadaof", debug_loadaof, 2, 0, 0, 0, 0, "server", "1.0.0", "Flush the AOF buffer, empty the dataset and load the AOF back", NULL, NULL},
    {"sleep", debug_sleep, 3, 0, 0, 0, 0, "server", "1.0.0", "Stop the server for some seconds", "seconds", NULL},
    {"object", debug_object, 3, 0, 0, 0, 0, "server", "1.0.0", "Show low-level information about a key", "key", NULL},
    {"listpack", debug_listpack, 3, 0, 0, 0, 0, "server", "1.0.0", "Show a listpack encoded value's structure", "key", NULL},
    {"quicklist-packed-threshold", debug_quicklist_packed_threshold, 3, 0, 0, 0, 0, "server", "1.0.0", "Set the size at which a list element gets a node of its own", "size", NULL},
    {"protocol", debug_protocol, 3, 0, 0, 0, 0, "server", "1.0.0", "Reply with one value of a RESP type", "type", NULL},
    {"set-disable-deny-scripts", debug_set_disable_deny_scripts, 3, 0, 0, 0, 0, "server", "1.0.0", "Let scripts call commands flagged noscript", "0|1", NULL},
    {"replybuffer", debug_replybuffer, 4, 0, 0, 0, 0, "server", "1.0.0", "Tune the reply buffer's peak reset time or turn its resizing off", "PEAK-RESET-TIME never|reset|ms|RESIZING 0|1", NULL},
    {"set-active-expire", debug_set_active_expire, 3, 0, 0, 0, 0, "server", "1.0.0", "Turn active expiry off or on", "0|1", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_debug(client *c)
{
    const command *sub = subcommand_in(debug_subcommands, c->argv[1].ptr, c->argv[1].len);
    if (!sub || !command_arity_ok(sub, c->argc)) {
        reply_subcommand_syntax_error(c);
        return;
    }
    sub->proc(c);
}
