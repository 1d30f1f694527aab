/* memory.c - MEMORY USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and HELP: what
 * a key costs and where the server's memory goes, in Redis 7.0's shapes. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

#define DOCTOR_EMPTY_BELOW (5u << 20)   /* Redis's doctor will not judge a smaller instance */

/* What a key costs is measured, not estimated: its value is copied into
 * an empty store, in the same representation, and that store's counted
 * bytes are the key's (SAMPLES is accepted and checked; nothing is
 * sampled). */
static uint64_t scratch_clock(void *srv) { return server_now_ms(srv); }

static void memory_usage(client *c)
{
    for (int i = 3; i < c->argc; i++) {
        long long samples;
        if (!arg_is(&c->argv[i], "SAMPLES") || i + 1 >= c->argc) {
            reply_syntax_error(c);
            return;
        }
        if (!arg_ll_or_reply(c, &c->argv[++i], &samples)) return;
        if (samples < 0) {
            reply_syntax_error(c);
            return;
        }
    }
    store *db = client_db(c);
    if (store_peek(db, c->argv[2].ptr, c->argv[2].len) == STORE_ABSENT) {
        reply_null(c);
        return;
    }
    store_key *k = store_lookup(db, c->argv[2].ptr, c->argv[2].len);
    if (!k) {   /* past its deadline: reclaimed by the lookup, as good as gone */
        reply_null(c);
        return;
    }
    store *scratch = store_create(scratch_clock, c->srv);
    store_set_env(scratch, &c->srv->env);
    size_t empty = store_used_memory(scratch), len;
    const char *name = store_key_name(k, &len);
    store_copy(scratch, k, name, len);
    reply_int(c, (long long)(store_used_memory(scratch) - empty));
    store_destroy(scratch);
}

static void reply_stat(client *c, const char *name, long long v)
{
    reply_bulk_cstr(c, name);
    reply_int(c, v);
}

static void reply_ratio(client *c, const char *name, double v)
{
    reply_bulk_cstr(c, name);
    reply_double(c, v);
}

/* Redis's 27 fields and one map per used database; latchd has no
 * replication, AOF, cluster links or allocator fragmentation to report
 * (zeros, ratios of 1), and counts keys and clients from its own books. */
static void memory_stats(client *c)
{
    server *s = c->srv;
    size_t used = server_used_memory(s), keys = 0, dataset = 0;
    if (used > s->stat_peak_memory) s->stat_peak_memory = used;
    int dbs = 0;
    for (int i = 0; i < s->ndbs; i++) {
        store *db = server_db_if_used(s, i);
        if (!db) continue;
        dbs += store_size(db) != 0;
        keys += store_size(db);
        dataset += store_used_memory(db);
    }
    size_t startup = s->startup_memory < used ? s->startup_memory : used;
    size_t overhead = used > dataset ? used - dataset : 0;
    reply_map(c, 27 + dbs);
    reply_stat(c, "peak.allocated", (long long)s->stat_peak_memory);
    reply_stat(c, "total.allocated", (long long)used);
    reply_stat(c, "startup.allocated", (long long)startup);
    reply_stat(c, "replication.backlog", 0);
    reply_stat(c, "clients.slaves", 0);
    reply_stat(c, "clients.normal", (long long)(s->nclients * sizeof(client)));
    reply_stat(c, "cluster.links", 0);
    reply_stat(c, "aof.buffer", 0);
    reply_stat(c, "lua.caches", 0);
    reply_stat(c, "functions.caches", 0);
    for (int i = 0; i < s->ndbs; i++) {
        store *db = server_db_if_used(s, i);
        if (!db || !store_size(db)) continue;
        char name[32];
        snprintf(name, sizeof name, "db.%d", i);
        reply_bulk_cstr(c, name);
        reply_map(c, 3);
        reply_stat(c, "overhead.hashtable.main", 0);
        reply_stat(c, "overhead.hashtable.expires", 0);
        reply_stat(c, "overhead.hashtable.slot-to-keys", 0);
    }
    reply_stat(c, "overhead.total", (long long)overhead);
    reply_stat(c, "keys.count", (long long)keys);
    reply_stat(c, "keys.bytes-per-key", keys ? (long long)(dataset / keys) : 0);
    reply_stat(c, "dataset.bytes", (long long)dataset);
    reply_ratio(c, "dataset.percentage", used ? 100.0 * (double)dataset / (double)used : 0);
    reply_ratio(c, "peak.percentage", s->stat_peak_memory ? 100.0 * (double)used / (double)s->stat_peak_memory : 0);
    reply_stat(c, "allocator.allocated", (long long)used);
    reply_stat(c, "allocator.active", (long long)used);
    reply_stat(c, "allocator.resident", (long long)used);
    reply_ratio(c, "allocator-fragmentation.ratio", 1);
    reply_stat(c, "allocator-fragmentation.bytes", 0);
    reply_ratio(c, "allocator-rss.ratio", 1);
    reply_stat(c, "allocator-rss.bytes", 0);
    reply_ratio(c, "rss-overhead.ratio", 1);
    reply_stat(c, "rss-overhead.bytes", 0);
    reply_ratio(c, "fragmentation", 1);
    reply_stat(c, "fragmentation.bytes", 0);
}

/* Redis's doctor judges only instances of 5 MB or more; below that, and
 * with nothing it looks for (latchd has no fragmentation or replication
 * figures), its two stock answers. */
static void memory_doctor(client *c)
{
    static const char empty[] =
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
        "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I "
        "will be back to our programming as soon as I finished rebooting.\n";
    static const char fine[] =
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
        "base.\n";
    if (server_used_memory(c->srv) < DOCTOR_EMPTY_BELOW) reply_verbatim(c, empty, sizeof empty - 1);
    else reply_verbatim(c, fine, sizeof fine - 1);
}

/* glibc's malloc, as Redis without jemalloc says. */
static void memory_malloc_stats(client *c) { reply_bulk_cstr(c, "Stats not supported for the current allocator"); }

static void memory_purge(client *c)
{
    malloc_trim(0);
    reply_ok(c);
}

static void memory_help(client *c)
{
    static const char *const lines[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

void cmd_memory(client *c) { subcommand_dispatch(c); }

const command memory_subcommands[] = {
    {"doctor", memory_doctor, 2, 0, 0, 0, 0, "server", "4.0.0", "Outputs memory problems report", NULL, NULL},
    {"help", memory_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "4.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"malloc-stats", memory_malloc_stats, 2, 0, 0, 0, 0, "server", "4.0.0", "Show allocator internal stats", NULL, NULL},
    {"purge", memory_purge, 2, 0, 0, 0, 0, "server", "4.0.0", "Ask the allocator to release memory", NULL, NULL},
    {"stats", memory_stats, 2, 0, 0, 0, 0, "server", "4.0.0", "Show memory usage details", NULL, NULL},
    {"usage", memory_usage, -3, CMD_READONLY, 2, 2, 1, "server", "4.0.0", "Estimate the memory usage of a key", "key [SAMPLES count]", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};
