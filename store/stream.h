/* stream.h - stream values: entries (an ID and field/value pairs) in ID
 * order, packed in runs of nodes, appended at the tail, ranged, deleted and trimmed. */
#ifndef LATCHD_STORE_STREAM_H
#define LATCHD_STORE_STREAM_H

#include "store.h"

/* A stream ID: milliseconds and a sequence number, ordered as a pair. */
typedef struct store_sid {
    uint64_t ms, seq;
} store_sid;

static inline int store_sid_cmp(store_sid a, store_sid b)
{
    if (a.ms != b.ms) return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq) return a.seq < b.seq ? -1 : 1;
    return 0;
}

/* One node: up to stream-node-max-entries entries (deleted ones included,
 * as Redis's listpacks keep them flagged) in one buffer. An entry is
 * [u8 deleted][varint ms - first.ms][varint seq][varint pairs] then each
 * field and value as [varint length][bytes]. */
typedef struct store_snode {
    store_sid first;      /* the ID of its first entry, live or not */
    store_sid last;       /* the ID of its last entry */
    uint32_t live, total; /* entries not deleted; all of them */
    uint32_t bytes, cap;
    char *buf;
} store_snode;

/* The stream: nodes in ID order (a binary search over their first IDs
 * finds an ID's node), and Redis 7.0's bookkeeping. */
typedef struct store_stream {
    store_snode *nodes;
    uint32_t nnodes, ncap;
    uint64_t len;             /* live entries */
    store_sid last;           /* last_id: the top ID ever added (or XSETID's) */
    store_sid first;          /* first_id: the first live entry's, 0-0 if none */
    store_sid max_deleted;    /* max_deleted_entry_id */
    uint64_t entries_added;
} store_stream;

/* An entry as visited: its ID and its pairs, packed (store_sentry_pair). */
typedef struct store_sentry {
    store_sid id;
    size_t pairs;
    const char *p;
} store_sentry;

/* The next pair of e, from *p (start at e->p); returns where the one after starts. */
const char *store_sentry_pair(const char *p, const char **f, size_t *flen, const char **v,
                              size_t *vlen);

/* Every pair of e, in order, to fn. */
void store_sentry_foreach(const store_sentry *e, store_field_fn fn, void *ctx);

/* Return nonzero to stop. */
typedef int (*store_sentry_fn)(const store_sentry *e, void *ctx);

store_stream *store_stream_of(store_key *k);
const store_stream *store_stream_of_const(const store_key *k);

/* Append id (greater than st->last: the caller checks) with n field/value
 * items (2 per pair, ptr/len alternating in f and lens). A node holds at
 * most max_entries entries and about max_bytes bytes (0: no limit). */
void store_stream_append(store *s, store_stream *st, store_sid id, const char *const *f,
                         const size_t *lens, size_t n, long long max_entries, long long max_bytes);
/* Visit live entries with start <= id <= end, ascending (or rev: descending),
 * at most count of them (0: all). Returns how many were visited. */
size_t store_stream_range(const store_stream *st, store_sid start, store_sid end, int rev,
                          size_t count, store_sentry_fn fn, void *ctx);
/* 1 if the live entry id was deleted (max_deleted and first follow). */
int store_stream_delete(store *s, store_stream *st, store_sid id);
/* XTRIM: drop entries from the head until at most maxlen are left (or,
 * by_minid, none below minid). approx removes whole nodes only, at most
 * limit entries (0: no limit). Returns how many went. */
size_t store_stream_trim(store *s, store_stream *st, int by_minid, uint64_t maxlen,
                         store_sid minid, int approx, long long limit);
/* The live entry with the lowest (or last: highest) ID; 0 if empty. */
int store_stream_edge(const store_stream *st, int last, store_sid *id);
/* Node count (XINFO's radix-tree-keys). */
size_t store_stream_nodes(const store_stream *st);

#endif
