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
 * [u8 flags][varint ms - first.ms][varint seq][varint pairs] then each
 * field and value as [varint length][bytes], or, when its fields are the
 * node's first entry's (flag STORE_SENTRY_SAME, Redis's SAMEFIELDS), the
 * values only. */
enum { STORE_SENTRY_DELETED = 1, STORE_SENTRY_SAME = 2 };
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
    struct store_sgroup **groups; /* consumer groups, sorted by name (Redis's rax order) */
    uint32_t ngroups, gcap;
} store_stream;

/* An entry as visited: its ID and its pairs, packed (store_sentry_pair):
 * p holds fields and values, or values only when mp (the node's first
 * entry's items, where the fields are read) is set. */
typedef struct store_sentry {
    store_sid id;
    size_t pairs;
    const char *p, *mp;
} store_sentry;

/* Where store_sentry_pair reads next: start at {e->p, e->mp}. */
typedef struct store_spos {
    const char *p, *mp;
} store_spos;

/* The next pair of the entry, moving pos on. */
void store_sentry_pair(store_spos *pos, const char **f, size_t *flen, const char **v, size_t *vlen);

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
/* Every entry of node i, deleted ones too, in order (RDB's listpacks). */
typedef int (*store_sentry_all_fn)(const store_sentry *e, int deleted, void *ctx);
void store_stream_node_walk(const store_stream *st, size_t i, store_sentry_all_fn fn, void *ctx);
/* Loading: an entry (deleted or live) appended as it was, to a new node
 * whose first ID is node_first when new_node, else to the last one. The
 * caller keeps IDs increasing and sets len and the bookkeeping after. */
void store_stream_append_raw(store *s, store_stream *st, store_sid id, const char *const *f, const size_t *lens,
                             size_t n, int deleted, int new_node, store_sid node_first);
/* Node count (XINFO's radix-tree-keys). */
size_t store_stream_nodes(const store_stream *st);

/* ---- ordered maps keyed by stream ID (the PELs): chunks of up to
 * STORE_SIDMAP_CHUNK entries, each an ID then vsize bytes of value, found
 * by binary search over the chunks' first IDs. Values move when the map
 * changes: a pointer from store_sidmap_get lives until the next change. ---- */
typedef struct store_sidmap {
    struct store_sidchunk **chunks;
    uint32_t nchunks, ccap;
    uint32_t vsize;
    uint64_t count;
} store_sidmap;

typedef struct store_sidmap_it {
    uint32_t ci, ei;
} store_sidmap_it;

void store_sidmap_init(store_sidmap *m, uint32_t vsize);
void store_sidmap_free(store *s, store_sidmap *m);
/* The value of id, or NULL. */
void *store_sidmap_get(const store_sidmap *m, store_sid id);
/* The value of id, made (zeroed, *created = 1) if it was not there. */
void *store_sidmap_put(store *s, store_sidmap *m, store_sid id, int *created);
/* 1 if id was there and went. */
int store_sidmap_del(store *s, store_sidmap *m, store_sid id);
/* The iterator at the first ID >= id (SID 0-0: the first of all). */
void store_sidmap_seek(const store_sidmap *m, store_sid id, store_sidmap_it *it);
/* The entry at it, and it moves on; 0 at the end. *val may be NULL. */
int store_sidmap_next(const store_sidmap *m, store_sidmap_it *it, store_sid *id, void **val);
/* The lowest (or last: highest) ID; 0 if empty. */
int store_sidmap_edge(const store_sidmap *m, int last, store_sid *id);

/* ---- consumer groups (Redis 7.0's streamCG, streamConsumer, streamNACK) ---- */

typedef struct store_sconsumer {
    uint64_t seen_time;
    store_sidmap pel;       /* its IDs (no values: the group's PEL has them) */
    uint32_t nlen;
    char name[];
} store_sconsumer;

/* A pending entry: the group PEL's value. consumer is NULL only between
 * XCLAIM FORCE's creation and its claim. */
typedef struct store_snack {
    uint64_t delivery_time, delivery_count;
    store_sconsumer *consumer;
} store_snack;

#define STORE_SCG_INVALID_READ (-1LL)

typedef struct store_sgroup {
    store_sid last_id;
    long long entries_read;     /* STORE_SCG_INVALID_READ: unknown */
    store_sidmap pel;           /* store_snack values */
    store_sconsumer **consumers; /* sorted by name */
    uint32_t nconsumers, ccap;
    uint32_t nlen;
    char name[];
} store_sgroup;

store_sgroup *store_sgroup_find(const store_stream *st, const char *name, size_t len);
/* NULL if a group of that name exists. */
store_sgroup *store_sgroup_create(store *s, store_stream *st, const char *name, size_t len, store_sid last,
                                  long long entries_read);
/* 1 if it existed and went (with its PEL and consumers). */
int store_sgroup_destroy(store *s, store_stream *st, const char *name, size_t len);
store_sconsumer *store_sconsumer_find(const store_sgroup *g, const char *name, size_t len);
/* NULL if it exists already. */
store_sconsumer *store_sconsumer_create(store *s, store_sgroup *g, const char *name, size_t len, uint64_t now);
/* Drops the consumer and its pending entries from the group PEL; returns how many it had. */
uint64_t store_sconsumer_delete(store *s, store_sgroup *g, store_sconsumer *c);
/* Give the pending id to consumer to (moving it out of its owner's PEL). */
void store_snack_assign(store *s, store_snack *n, store_sid id, store_sconsumer *to);
/* Acknowledge id: out of the group PEL and its consumer's. 1 if it was pending. */
int store_snack_ack(store *s, store_sgroup *g, store_sid id);

/* Redis 7.0's lag bookkeeping: streamRangeHasTombstones (end NULL: to the
 * top), streamEstimateDistanceFromFirstEverEntry, and the group's lag
 * (0 with *valid = 0 when it cannot be known). */
int store_stream_has_tombstones(const store_stream *st, store_sid start, const store_sid *end);
long long store_stream_distance(const store_stream *st, store_sid id);
long long store_sgroup_lag(const store_stream *st, const store_sgroup *g, int *valid);
/* A live entry with this ID exists. */
int store_stream_exists(const store_stream *st, store_sid id);

#endif
