/* config.c - one table of parameters drives defaults, the config file,
 * command-line flags and CONFIG GET/SET, so the four never disagree. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mem.h"
#include "num.h"
#include "resp.h"
#include "server.h"

/* Each type names the C type of its field, checked where the table names
 * the field (FIELD), so a row and its struct member cannot disagree:
 * P_INT32 an int, P_INT64 a long long, both parsed as integers and checked
 * against min/max; P_OCTAL an int written in octal; P_MEMORY a long long
 * checked against min/max after the unsigned memory value is taken as
 * signed (as Redis does); P_UMEMORY an unsigned long long that takes any
 * memory value (maxmemory); P_BOOL an int; P_ENUM an int indexing the
 * row's NULL-terminated names; P_NOTIFY an int of NOTIFY_* bits; P_STRING
 * a malloc'd char *; P_BIND and P_OBUF the bind list and the output
 * buffer limits, each set and shown by its own code. */
typedef enum { P_INT32, P_INT64, P_OCTAL, P_MEMORY, P_UMEMORY, P_BOOL, P_ENUM, P_NOTIFY, P_STRING, P_BIND,
               P_OBUF } param_type;

typedef struct param {
    const char *name;
    param_type type;
    size_t off;
    int mutable_;
    long long min, max;
    const char *const *names;   /* P_ENUM: value i is names[i] */
} param;

/* The offset of latchd_config's member f, which must be of type T: a row
 * whose type and member disagree does not compile. */
#define FIELD(f, T)                                                                           \
    (offsetof(latchd_config, f) +                                                             \
     0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((latchd_config *)0)->f), T) ? 1 : -1]))

/* Indexed by LOG_* (server.h). */
static const char *const loglevel_names[] = {
    [LOG_DEBUG] = "debug", [LOG_VERBOSE] = "verbose", [LOG_NOTICE] = "notice", [LOG_WARNING] = "warning",
    [LOG_WARNING + 1] = NULL,
};
/* Indexed by CONFIG_MAXMEMORY_*, in Redis's order. All are accepted;
 * latchd never evicts, so every policy behaves as noeviction (writes that
 * may grow memory are refused). */
const char *const config_maxmemory_policies[] = {
    [CONFIG_MAXMEMORY_VOLATILE_LRU] = "volatile-lru",
    [CONFIG_MAXMEMORY_VOLATILE_LFU] = "volatile-lfu",
    [CONFIG_MAXMEMORY_VOLATILE_RANDOM] = "volatile-random",
    [CONFIG_MAXMEMORY_VOLATILE_TTL] = "volatile-ttl",
    [CONFIG_MAXMEMORY_ALLKEYS_LRU] = "allkeys-lru",
    [CONFIG_MAXMEMORY_ALLKEYS_LFU] = "allkeys-lfu",
    [CONFIG_MAXMEMORY_ALLKEYS_RANDOM] = "allkeys-random",
    [CONFIG_MAXMEMORY_NOEVICTION] = "noeviction",
    [CONFIG_MAXMEMORY_POLICY_COUNT] = NULL,
};
/* Indexed by CONFIG_PROTECTED_*. */
static const char *const protected_names[] = {
    [CONFIG_PROTECTED_NO] = "no", [CONFIG_PROTECTED_YES] = "yes", [CONFIG_PROTECTED_LOCAL] = "local",
    [CONFIG_PROTECTED_LOCAL + 1] = NULL,
};

static const param params[] = {
    {"port", P_INT32, FIELD(port, int), 0, 0, 65535, NULL},
    {"bind", P_BIND, FIELD(bind, char *[CONFIG_MAX_BIND]), 0, 0, 0, NULL},
    {"unixsocket", P_STRING, FIELD(unixsocket, char *), 0, 0, 0, NULL},
    {"unixsocketperm", P_OCTAL, FIELD(unixsocketperm, int), 0, 0, 0777, NULL},
    {"loglevel", P_ENUM, FIELD(loglevel, int), 1, 0, 0, loglevel_names},
    {"logfile", P_STRING, FIELD(logfile, char *), 0, 0, 0, NULL},
    {"daemonize", P_BOOL, FIELD(daemonize, int), 0, 0, 0, NULL},
    {"pidfile", P_STRING, FIELD(pidfile, char *), 0, 0, 0, NULL},
    {"requirepass", P_STRING, FIELD(requirepass, char *), 1, 0, 0, NULL},
    {"proto-max-bulk-len", P_MEMORY, FIELD(proto_max_bulk_len, long long), 1, 1024 * 1024, LLONG_MAX, NULL},
    {"client-query-buffer-limit", P_MEMORY, FIELD(client_query_buffer_limit, long long), 1, 1024 * 1024,
     LLONG_MAX, NULL},
    {"maxmemory", P_UMEMORY, FIELD(maxmemory, unsigned long long), 1, 0, 0, NULL},
    {"maxmemory-policy", P_ENUM, FIELD(maxmemory_policy, int), 1, 0, 0, config_maxmemory_policies},
    {"maxclients", P_INT64, FIELD(maxclients, long long), 1, 1, INT_MAX, NULL},
    {"timeout", P_INT64, FIELD(timeout, long long), 1, 0, INT_MAX, NULL},
    {"tcp-keepalive", P_INT64, FIELD(tcp_keepalive, long long), 1, 0, INT_MAX, NULL},
    {"databases", P_INT64, FIELD(databases, long long), 0, 1, INT_MAX, NULL},
    {"protected-mode", P_BOOL, FIELD(protected_mode, int), 1, 0, 0, NULL},
    {"save", P_STRING, FIELD(save, char *), 1, 0, 0, NULL},
    {"appendonly", P_BOOL, FIELD(appendonly, int), 1, 0, 0, NULL},
    {"dir", P_STRING, FIELD(dir, char *), 1, 0, 0, NULL},
    {"hz", P_INT64, FIELD(hz, long long), 1, 1, 500, NULL},
    {"busy-reply-threshold", P_INT64, FIELD(busy_reply_ms, long long), 1, 0, LLONG_MAX, NULL},
    {"lua-time-limit", P_INT64, FIELD(busy_reply_ms, long long), 1, 0, LLONG_MAX, NULL},
    {"native-scripts", P_BOOL, FIELD(native_scripts, int), 1, 0, 0, NULL},
    {"client-output-buffer-limit", P_OBUF, FIELD(obuf_limits, obuf_limit[CLIENT_TYPE_OBUF_COUNT]), 1, 0, 0,
     NULL},
    {"notify-keyspace-events", P_NOTIFY, FIELD(notify_keyspace_events, int), 1, 0, 0, NULL},
    /* OBJECT ENCODING's thresholds and OBJECT FREQ's counter. The ziplist
     * names are Redis 7.0's aliases, listed by CONFIG GET as it lists them. */
    {"lfu-log-factor", P_INT32, FIELD(lfu_log_factor, int), 1, 0, INT_MAX, NULL},
    {"lfu-decay-time", P_INT32, FIELD(lfu_decay_time, int), 1, 0, INT_MAX, NULL},
    {"hash-max-listpack-entries", P_INT64, FIELD(hash_max_listpack_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"hash-max-ziplist-entries", P_INT64, FIELD(hash_max_listpack_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"hash-max-listpack-value", P_MEMORY, FIELD(hash_max_listpack_value, long long), 1, 0, LLONG_MAX, NULL},
    {"hash-max-ziplist-value", P_MEMORY, FIELD(hash_max_listpack_value, long long), 1, 0, LLONG_MAX, NULL},
    {"zset-max-listpack-entries", P_INT64, FIELD(zset_max_listpack_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"zset-max-ziplist-entries", P_INT64, FIELD(zset_max_listpack_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"zset-max-listpack-value", P_MEMORY, FIELD(zset_max_listpack_value, long long), 1, 0, LLONG_MAX, NULL},
    {"zset-max-ziplist-value", P_MEMORY, FIELD(zset_max_listpack_value, long long), 1, 0, LLONG_MAX, NULL},
    {"hll-sparse-max-bytes", P_MEMORY, FIELD(hll_sparse_max_bytes, long long), 1, 0, LONG_MAX, NULL},
    /* Accepted without effect yet (README: Configuration). */
    {"list-max-listpack-size", P_INT32, FIELD(list_max_listpack_size, int), 1, INT_MIN, INT_MAX, NULL},
    {"list-max-ziplist-size", P_INT32, FIELD(list_max_listpack_size, int), 1, INT_MIN, INT_MAX, NULL},
    {"list-compress-depth", P_INT32, FIELD(list_compress_depth, int), 1, 0, INT_MAX, NULL},
    {"set-max-intset-entries", P_INT64, FIELD(set_max_intset_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"stream-node-max-entries", P_INT64, FIELD(stream_node_max_entries, long long), 1, 0, LLONG_MAX, NULL},
    {"stream-node-max-bytes", P_MEMORY, FIELD(stream_node_max_bytes, long long), 1, 0, LLONG_MAX, NULL},
    {"slowlog-log-slower-than", P_INT64, FIELD(slowlog_log_slower_than, long long), 1, -1, LLONG_MAX, NULL},
    {"slowlog-max-len", P_INT64, FIELD(slowlog_max_len, long long), 1, 0, LLONG_MAX, NULL},
    {"latency-monitor-threshold", P_INT64, FIELD(latency_monitor_threshold, long long), 1, 0, LLONG_MAX, NULL},
    {"aof-use-rdb-preamble", P_BOOL, FIELD(aof_use_rdb_preamble, int), 1, 0, 0, NULL},
    /* Test-double switches: fixed at start, as Redis fixes enable-debug-command. */
    {"port-file", P_STRING, FIELD(port_file, char *), 0, 0, 0, NULL},
    {"enable-clock-control", P_BOOL, FIELD(enable_clock_control, int), 0, 0, 0, NULL},
    {"enable-debug-command", P_ENUM, FIELD(enable_debug_command, int), 0, 0, 0, protected_names},
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

long long config_max_bulk(const latchd_config *cfg)
{
    return cfg->proto_max_bulk_len < (long long)STORE_MAX_LEN ? cfg->proto_max_bulk_len : (long long)STORE_MAX_LEN;
}

int client_type_by_name(const char *name, size_t len)
{
    static const struct { const char *name; int type; } types[] = {
        {"normal", CLIENT_TYPE_NORMAL}, {"slave", CLIENT_TYPE_REPLICA}, {"replica", CLIENT_TYPE_REPLICA},
        {"pubsub", CLIENT_TYPE_PUBSUB}, {"master", CLIENT_TYPE_MASTER},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strlen(types[i].name) == len && strncasecmp(types[i].name, name, len) == 0) return types[i].type;
    return -1;
}

static void set_string(char **slot, const char *v)
{
    free(*slot);
    *slot = mem_strdup(v);
}

void config_defaults(latchd_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->port = 6379;
    cfg->bind[0] = mem_strdup("127.0.0.1");
    cfg->bind[1] = mem_strdup("-::1");
    cfg->nbind = 2;
    cfg->unixsocket = mem_strdup("");
    cfg->loglevel = LOG_NOTICE;
    cfg->logfile = mem_strdup("");
    cfg->pidfile = mem_strdup("");
    cfg->requirepass = mem_strdup("");
    cfg->proto_max_bulk_len = 512LL * 1024 * 1024;
    cfg->client_query_buffer_limit = 1024LL * 1024 * 1024;
    cfg->maxmemory_policy = CONFIG_MAXMEMORY_NOEVICTION;
    cfg->maxclients = 10000;
    cfg->tcp_keepalive = 300;
    cfg->databases = 16;
    cfg->protected_mode = 1;
    cfg->save = mem_strdup("");
    cfg->dir = mem_strdup(".");
    cfg->hz = 10;
    cfg->busy_reply_ms = 5000;
    cfg->list_max_listpack_size = -2;
    cfg->set_max_intset_entries = 512;
    cfg->hll_sparse_max_bytes = 3000;
    cfg->hash_max_listpack_entries = 512;
    cfg->hash_max_listpack_value = 64;
    cfg->zset_max_listpack_entries = 128;
    cfg->zset_max_listpack_value = 64;
    cfg->lfu_log_factor = 10;
    cfg->lfu_decay_time = 1;
    cfg->stream_node_max_entries = 100;
    cfg->stream_node_max_bytes = 4096;
    cfg->slowlog_log_slower_than = 10000;
    cfg->slowlog_max_len = 128;
    cfg->aof_use_rdb_preamble = 1;
    cfg->native_scripts = 1;
    cfg->port_file = mem_strdup("");
    cfg->enable_debug_command = CONFIG_PROTECTED_LOCAL;
    cfg->obuf_limits[CLIENT_TYPE_NORMAL] = (obuf_limit){0, 0, 0};
    cfg->obuf_limits[CLIENT_TYPE_REPLICA] = (obuf_limit){256ULL << 20, 64ULL << 20, 60};
    cfg->obuf_limits[CLIENT_TYPE_PUBSUB] = (obuf_limit){32ULL << 20, 8ULL << 20, 60};
}

static void free_binds(latchd_config *cfg)
{
    for (int i = 0; i < cfg->nbind; i++) free(cfg->bind[i]);
    cfg->nbind = 0;
}

void config_free(latchd_config *cfg)
{
    free_binds(cfg);
    free(cfg->unixsocket);
    free(cfg->logfile);
    free(cfg->pidfile);
    free(cfg->requirepass);
    free(cfg->save);
    free(cfg->dir);
    free(cfg->port_file);
    memset(cfg, 0, sizeof(*cfg));
}

static const param *find_param(const char *name, size_t len)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (strlen(params[i].name) == len && strncasecmp(params[i].name, name, len) == 0)
            return &params[i];
    return NULL;
}

int config_exists(const char *name, size_t len) { return find_param(name, len) != NULL; }

int config_is_mutable(const char *name, size_t len)
{
    const param *p = find_param(name, len);
    return p && p->mutable_;
}

/* "1gb", "512mb", "100k", "42" as Redis 7.0's memtoull reads them (k=1000,
 * kb=1024): digits then a unit, no sign; no digits at all ("", "kb") is 0;
 * up to 127 digits, saturating at ULLONG_MAX; the unit's product wraps. */
#define MEMORY_MAX_DIGITS 127
static int parse_memory(const char *v, unsigned long long *out)
{
    static const struct { const char *unit; unsigned long long mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000 * 1000},
        {"mb", 1024 * 1024}, {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024},
    };
    size_t n = 0;
    unsigned long long num = 0;
    for (; isdigit((unsigned char)v[n]); n++) {
        unsigned digit = (unsigned)(v[n] - '0');
        num = num > (ULLONG_MAX - digit) / 10 ? ULLONG_MAX : num * 10 + digit;
    }
    if (n > MEMORY_MAX_DIGITS) return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(v + n, units[i].unit) != 0) continue;
        *out = num * units[i].mul;
        return 0;
    }
    return -1;
}

int config_parse_memory(const char *v, unsigned long long *out) { return parse_memory(v, out); }

static int parse_bool(const char *v, int *out)
{
    if (strcasecmp(v, "yes") == 0) *out = 1;
    else if (strcasecmp(v, "no") == 0) *out = 0;
    else return -1;
    return 0;
}

static int set_binds(latchd_config *cfg, const char **vals, int n, char *err, size_t errlen)
{
    if (n > CONFIG_MAX_BIND) {
        snprintf(err, errlen, "Too many bind addresses specified.");
        return -1;
    }
    free_binds(cfg);
    for (int i = 0; i < n; i++) cfg->bind[i] = mem_strdup(vals[i]);
    cfg->nbind = n;
    return 0;
}

static int set_number(const param *p, long long *slot, const char *v, char *err, size_t errlen)
{
    long long n;
    unsigned long long mem;
    int ok = p->type == P_MEMORY ? parse_memory(v, &mem) == 0 && (n = (long long)mem, 1)
           : p->type == P_OCTAL ? (errno = 0, n = strtoll(v, NULL, 8), errno == 0)
                                : store_str2ll(v, strlen(v), &n);
    if (!ok) {
        snprintf(err, errlen, "%s", p->type == P_MEMORY ? "argument must be a memory value"
                                                         : "argument couldn't be parsed into an integer");
        return -1;
    }
    if (n < p->min || n > p->max) {
        snprintf(err, errlen, "argument must be between %lld and %lld inclusive", p->min, p->max);
        return -1;
    }
    *slot = n;
    return 0;
}

static int set_enum(const char *const *names, int *slot, const char *v, char *err, size_t errlen)
{
    int used = snprintf(err, errlen, "argument(s) must be one of the following: ");
    for (int i = 0; names[i]; i++) {
        if (strcasecmp(v, names[i]) == 0) return *slot = i, 0;
        if (used >= 0 && (size_t)used < errlen)
            used += snprintf(err + used, errlen - (size_t)used, "%s%s", i ? ", " : "", names[i]);
    }
    return -1;
}

static int set_one(latchd_config *cfg, const param *p, const char *v, char *err, size_t errlen)
{
    void *slot = (char *)cfg + p->off;
    long long n;
    switch (p->type) {
    case P_STRING:
        set_string((char **)slot, v);
        return 0;
    case P_BOOL:
        if (parse_bool(v, (int *)slot) == 0) return 0;
        snprintf(err, errlen, "argument must be 'yes' or 'no'");
        return -1;
    case P_ENUM:
        return set_enum(p->names, (int *)slot, v, err, errlen);
    case P_INT32:
    case P_OCTAL:
        /* min/max of every P_INT32 and P_OCTAL row fit an int */
        if (set_number(p, &n, v, err, errlen) != 0) return -1;
        *(int *)slot = (int)n;
        return 0;
    case P_INT64:
    case P_MEMORY:
        return set_number(p, (long long *)slot, v, err, errlen);
    case P_UMEMORY:
        if (parse_memory(v, (unsigned long long *)slot) == 0) return 0;
        snprintf(err, errlen, "argument must be a memory value");
        return -1;
    case P_NOTIFY:
        if ((n = notify_flags_parse(v, strlen(v))) >= 0) return *(int *)slot = (int)n, 0;
        snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    case P_BIND:
    case P_OBUF:
        break;
    }
    return -1;
}

/* "save 900 1 300 10" keeps its words as one string: we never persist,
 * but CONFIG GET shows what was configured. */
static int set_joined(char **slot, const char **vals, int n)
{
    size_t total = 1;
    for (int i = 0; i < n; i++) total += strlen(vals[i]) + 1;
    char *joined = mem_alloc(total);
    joined[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i) strcat(joined, " ");
        strcat(joined, vals[i]);
    }
    free(*slot);
    *slot = joined;
    return 0;
}

#define OBUF_MAX_WORDS 64

/* CONFIG SET passes the whole limit as one string, split on single spaces
 * as Redis does; the config file and flags may pass the words apart. */
static int obuf_words(const char **vals, int nvals, char *buf, size_t buflen, const char **words)
{
    if (nvals != 1) {
        if (nvals > OBUF_MAX_WORDS) return -1;
        memcpy(words, vals, (size_t)nvals * sizeof(*words));
        return nvals;
    }
    if (!vals[0][0]) return 0;
    if (strlen(vals[0]) >= buflen) return -1;
    strcpy(buf, vals[0]);
    int n = 0;
    for (char *w = buf, *sp; n < OBUF_MAX_WORDS; w = sp + 1) {
        words[n++] = w;
        if (!(sp = strchr(w, ' '))) return n;
        *sp = '\0';
    }
    return -1;
}

static int obuf_group(const char **w, obuf_limit *limits, char *err, size_t errlen)
{
    unsigned long long hard, soft;
    char *end;
    int type = client_type_by_name(w[0], strlen(w[0]));
    if (type < 0 || type == CLIENT_TYPE_MASTER) {
        snprintf(err, errlen, "Invalid client class specified in buffer limit configuration.");
        return -1;
    }
    long long secs = strtoll(w[3], &end, 10);
    if (parse_memory(w[1], &hard) || parse_memory(w[2], &soft) || *end || secs < 0) {
        snprintf(err, errlen, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
        return -1;
    }
    limits[type] = (obuf_limit){hard, soft, secs};
    return 0;
}

/* "class hard soft seconds ..." for any of the classes; every group is
 * checked before any applies. */
static int set_obuf(latchd_config *cfg, const char **vals, int nvals, char *err, size_t errlen)
{
    char buf[1024];
    const char *words[OBUF_MAX_WORDS];
    obuf_limit next[CLIENT_TYPE_OBUF_COUNT];
    int n = obuf_words(vals, nvals, buf, sizeof(buf), words);
    if (n < 0 || n % 4) {
        snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        return -1;
    }
    memcpy(next, cfg->obuf_limits, sizeof(next));
    for (int j = 0; j < n; j += 4)
        if (obuf_group(words + j, next, err, errlen) != 0) return -1;
    memcpy(cfg->obuf_limits, next, sizeof(next));
    return 0;
}

int config_set(latchd_config *cfg, const char *name, const char **vals, int nvals,
               char *err, size_t errlen)
{
    const param *p = find_param(name, strlen(name));
    if (!p) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    if (p->type == P_BIND) return set_binds(cfg, vals, nvals, err, errlen);
    if (p->type == P_OBUF) return set_obuf(cfg, vals, nvals, err, errlen);
    if (p->type == P_STRING && nvals > 1) return set_joined((char **)((char *)cfg + p->off), vals, nvals);
    if (nvals != 1) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    return set_one(cfg, p, vals[0], err, errlen);
}

static void format_value(const latchd_config *cfg, const param *p, char *buf, size_t len)
{
    const void *slot = (const char *)cfg + p->off;
    buf[0] = '\0';
    switch (p->type) {
    case P_STRING: snprintf(buf, len, "%s", *(char *const *)slot); break;
    case P_BOOL: snprintf(buf, len, "%s", *(const int *)slot ? "yes" : "no"); break;
    case P_ENUM: snprintf(buf, len, "%s", p->names[*(const int *)slot]); break;
    case P_OCTAL: snprintf(buf, len, "%o", *(const int *)slot); break;
    case P_INT32: snprintf(buf, len, "%d", *(const int *)slot); break;
    case P_INT64:
    case P_MEMORY: snprintf(buf, len, "%lld", *(const long long *)slot); break;
    case P_UMEMORY: snprintf(buf, len, "%llu", *(const unsigned long long *)slot); break;
    case P_NOTIFY: notify_flags_format(*(const int *)slot, buf); break;
    case P_OBUF:
        for (int i = 0; i < CLIENT_TYPE_OBUF_COUNT; i++) {
            static const char *const names[] = {
                [CLIENT_TYPE_NORMAL] = "normal", [CLIENT_TYPE_REPLICA] = "slave", [CLIENT_TYPE_PUBSUB] = "pubsub",
            };
            const obuf_limit *l = &cfg->obuf_limits[i];
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s %llu %llu %lld", i ? " " : "", names[i], l->hard, l->soft,
                     l->soft_seconds);
        }
        break;
    case P_BIND:
        for (int i = 0; i < cfg->nbind; i++) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", i ? " " : "", cfg->bind[i]);
        }
        break;
    }
}

void config_get(const latchd_config *cfg, const char *pattern, size_t plen,
                config_visit_fn fn, void *ctx)
{
    char value[1024];
    for (size_t i = 0; i < NPARAMS; i++) {
        const param *p = &params[i];
        if (!glob_match(pattern, plen, p->name, strlen(p->name), 1)) continue;
        format_value(cfg, p, value, sizeof(value));
        fn(p->name, value, ctx);
    }
}

/* Applies one "name value..." directive given as argv; used by both the
 * file loader and the command line so they accept the same things. */
static int apply_directive(latchd_config *cfg, int argc, const char **argv, char *err, size_t errlen)
{
    if (argc < 2) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    return config_set(cfg, argv[0], argv + 1, argc - 1, err, errlen);
}

#define MAX_DIRECTIVE_ARGS 16

/* Split one line with Redis's quoting rules by feeding it to the RESP
 * inline parser: one piece of code for quoting, however the line arrives. */
static int split_line(resp_parser *rp, const char *line, size_t len, const char **argv,
                      char *store_, size_t storelen, int *argc)
{
    char buf[4096];
    size_t consumed;
    if (len + 1 > sizeof(buf)) return -1;
    memcpy(buf, line, len);
    buf[len] = '\n';
    resp_parser_reset(rp);
    resp_status st = resp_parse(rp, buf, len + 1, &consumed);
    if (st == RESP_NEED_MORE) return *argc = 0, 0;   /* blank line */
    if (st != RESP_COMMAND || rp->argc > MAX_DIRECTIVE_ARGS) return -1;
    size_t used = 0;
    for (size_t i = 0; i < rp->argc; i++) {
        if (used + rp->argv[i].len + 1 > storelen) return -1;
        memcpy(store_ + used, rp->argv[i].ptr, rp->argv[i].len);
        store_[used + rp->argv[i].len] = '\0';
        argv[i] = store_ + used;
        used += rp->argv[i].len + 1;
    }
    *argc = (int)rp->argc;
    return 0;
}

static int load_lines(latchd_config *cfg, FILE *f, resp_parser *rp, char *err, size_t errlen)
{
    char line[4096], store_[4096], why[256];
    const char *argv[MAX_DIRECTIVE_ARGS];
    int lineno = 0, argc;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t len = strcspn(line, "\r\n");
        size_t lead = strspn(line, " \t");
        if (lead == len || line[lead] == '#') continue;
        if (split_line(rp, line, len, argv, store_, sizeof(store_), &argc) != 0) {
            snprintf(why, sizeof(why), "Unbalanced quotes in configuration line");
        } else if (argc == 0 || apply_directive(cfg, argc, argv, why, sizeof(why)) == 0) {
            continue;
        }
        line[len] = '\0';
        snprintf(err, errlen,
                 "\n*** FATAL CONFIG FILE ERROR (latchd %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
                 LATCHD_VERSION, lineno, line, why);
        return -1;
    }
    return 0;
}

int config_load_file(latchd_config *cfg, const char *path, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    resp_limits lim = {RESP_INLINE_MAX, RESP_MULTIBULK_MAX, RESP_BULK_MAX, 0};
    resp_parser rp;
    resp_parser_init(&rp, &lim);
    int rc = load_lines(cfg, f, &rp, err, errlen);
    resp_parser_free(&rp);
    if (f != stdin) fclose(f);
    return rc;
}

int config_set_text(latchd_config *cfg, const char *name, const char *value, char *err, size_t errlen)
{
    char store_[4096];
    const char *vals[MAX_DIRECTIVE_ARGS];
    int n = 0, rc = -1;
    resp_limits lim = {RESP_INLINE_MAX, RESP_MULTIBULK_MAX, RESP_BULK_MAX, 0};
    resp_parser rp;
    resp_parser_init(&rp, &lim);
    if (split_line(&rp, value, strlen(value), vals, store_, sizeof(store_), &n) != 0)
        snprintf(err, errlen, "Unbalanced quotes in configuration line");
    else if (n == 0)
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
    else
        rc = config_set(cfg, name, vals, n, err, errlen);
    resp_parser_free(&rp);
    return rc;
}

/* Flags are "--name v1 v2 ..." up to the next "--"; the config file, if
 * any, comes first and flags override it, as with redis-server. */
int config_parse_args(latchd_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;
    if (i < argc && strncmp(argv[i], "--", 2) != 0) {
        if (config_load_file(cfg, argv[i], err, errlen) != 0) return -1;
        i++;
    }
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0) {
            snprintf(err, errlen, "Invalid argument '%s'", argv[i]);
            return -1;
        }
        const char *dargv[MAX_DIRECTIVE_ARGS];
        int n = 0;
        dargv[n++] = argv[i] + 2;
        for (i++; i < argc && strncmp(argv[i], "--", 2) != 0 && n < MAX_DIRECTIVE_ARGS; i++)
            dargv[n++] = argv[i];
        char why[256];
        if (apply_directive(cfg, n, dargv, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "Invalid option '--%s': %s", dargv[0], why);
            return -1;
        }
    }
    return 0;
}
