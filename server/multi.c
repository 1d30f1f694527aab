/* multi.c - transactions as Redis 7.0 runs them: MULTI queues owned copies
 * of commands, EXEC runs them back to back, and WATCH makes EXEC fail when
 * a watched key changed (told by the keyspace's event hook). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "commands/commands.h"
#include "dict.h"
#include "mem.h"
#include "scripting/script.h"

/* A key somebody WATCHes, with its watchers. */
typedef struct watched_key {
    store_dict_node node;          /* in its database's registry; key is name */
    struct watch_entry *head;
    int db;
    size_t len;
    char name[];
} watched_key;

/* One client watching one key: linked from both sides, so unwatching
 * never searches. */
struct watch_entry {
    watched_key *key;
    client *c;
    struct watch_entry *kprev, *knext;   /* the key's watchers */
    struct watch_entry *cnext;           /* the client's other keys */
    int expired;   /* the key was past its deadline at WATCH: its reclaiming changes nothing */
};

/* One dict of watched keys per database, made on the first WATCH in it. */
struct watch_registry {
    store_dict **dbs;
};

/* A queued command's record in multi_state.queue; argc resp_slices follow
 * (ptr holding an offset into the queue until EXEC), then the bytes. */
typedef struct multi_cmd {
    const command *cmd;
    size_t size;   /* the whole record, a multiple of the slices' alignment */
    int argc;
} multi_cmd;

#define RECORD_ALIGN (sizeof(resp_slice))

void multi_init(server *s)
{
    s->watching = mem_calloc(1, sizeof(*s->watching));
    s->watching->dbs = mem_calloc((size_t)s->cfg.databases, sizeof(*s->watching->dbs));
}

/* Clients leave before the server is freed, so the registry is empty. */
void multi_free(server *s)
{
    if (!s->watching) return;
    for (long long i = 0; i < s->cfg.databases; i++) {
        if (!s->watching->dbs[i]) continue;
        store_dict_clear(s->watching->dbs[i], NULL, NULL);
        free(s->watching->dbs[i]);
    }
    free(s->watching->dbs);
    free(s->watching);
    s->watching = NULL;
}

static store_dict *db_watched(server *s, int db, int create)
{
    store_dict **d = &s->watching->dbs[db];
    if (!*d && create) {
        *d = mem_calloc(1, sizeof(**d));
        store_dict_init(*d, STORE_DICT_KEY_OFF(watched_key, node, name), STORE_DICT_KEY_INLINE);
    }
    return *d;
}

/* ---- WATCH ---- */

static int already_watching(const client *c, const resp_slice *key)
{
    for (const struct watch_entry *e = c->watched; e; e = e->cnext)
        if (e->key->db == c->db && e->key->len == key->len && !memcmp(e->key->name, key->ptr, key->len))
            return 1;
    return 0;
}

static watched_key *watched_key_get(server *s, int db, const resp_slice *key)
{
    store_dict *d = db_watched(s, db, 1);
    store_dict_node *n = store_dict_find(d, key->ptr, key->len);
    if (n) return (watched_key *)n;
    watched_key *wk = mem_calloc(1, sizeof(*wk) + key->len + 1);
    memcpy(wk->name, key->ptr, key->len);
    wk->db = db;
    wk->len = key->len;
    wk->node.keylen = wk->len;
    store_dict_insert(d, &wk->node);
    s->watched_keys++;
    return wk;
}

static void watch_key(client *c, const resp_slice *key)
{
    if (already_watching(c, key)) return;
    watched_key *wk = watched_key_get(c->srv, c->db, key);
    struct watch_entry *e = mem_calloc(1, sizeof(*e));
    e->key = wk;
    e->c = c;
    e->expired = store_peek(client_db(c), key->ptr, key->len) == STORE_PRESENT_EXPIRED;
    e->knext = wk->head;
    if (wk->head) wk->head->kprev = e;
    wk->head = e;
    e->cnext = c->watched;
    c->watched = e;
    c->nwatched++;
}

static void entry_unlink(server *s, struct watch_entry *e)
{
    watched_key *wk = e->key;
    if (e->kprev) e->kprev->knext = e->knext;
    else wk->head = e->knext;
    if (e->knext) e->knext->kprev = e->kprev;
    free(e);
    if (wk->head) return;
    store_dict_unlink(db_watched(s, wk->db, 0), &wk->node);
    s->watched_keys--;
    free(wk);
}

static void unwatch_all(client *c)
{
    struct watch_entry *e = c->watched;
    c->watched = NULL;
    c->nwatched = 0;
    while (e) {
        struct watch_entry *next = e->cnext;
        entry_unlink(c->srv, e);
        e = next;
    }
}

/* Redis unwatches a dirty client at once: nothing it watches matters now. */
static void mark_dirty(client *c)
{
    c->flags |= CLIENT_DIRTY_CAS;
    unwatch_all(c);
}

void multi_key_changed(server *s, int db, const char *key, size_t klen, int expired)
{
    store_dict *d = db_watched(s, db, 0);
    watched_key *wk = d ? (watched_key *)store_dict_find(d, key, klen) : NULL;
    if (!wk) return;
    /* mark_dirty removes e, and wk with its last watcher: the next entry
     * belongs to another client, so it (and then wk) is still there. */
    for (struct watch_entry *e = wk->head, *next; e; e = next) {
        next = e->knext;
        if (e->expired && expired) {
            e->expired = 0;   /* watched already dead: its reclaiming is no change */
            continue;
        }
        mark_dirty(e->c);
    }
}

struct db_touch {
    store *emptied;    /* the database whose contents go */
    store *with;       /* what replaces them (SWAPDB), or NULL (FLUSHDB) */
};

static store_presence presence(store *db, const watched_key *wk)
{
    return db ? store_peek(db, wk->name, wk->len) : STORE_ABSENT;
}

/* Redis's touchAllWatchedKeysInDb: a watched key that exists on either
 * side changes, unless it is dead before and after (a key past its
 * deadline that goes, or is replaced by another past its deadline). No
 * entry is removed while the registry is walked: a dirty client keeps its
 * entries until it unwatches, which costs nothing but memory. */
static void touch_watched(store_dict_node *n, void *ctx)
{
    const struct db_touch *t = ctx;
    watched_key *wk = (watched_key *)n;
    store_presence before = presence(t->emptied, wk), after = presence(t->with, wk);
    if (before == STORE_ABSENT && after == STORE_ABSENT) return;
    for (struct watch_entry *e = wk->head; e; e = e->knext) {
        if (e->expired) {
            if (after == STORE_ABSENT) {
                e->expired = 0;   /* the dead key is gone: no logical change */
                continue;
            }
            if (after == STORE_PRESENT_EXPIRED) continue;
        } else if (before == STORE_ABSENT && after == STORE_PRESENT_EXPIRED) {
            e->expired = 1;   /* nothing became a dead key: still nothing */
            continue;
        }
        e->c->flags |= CLIENT_DIRTY_CAS;
    }
}

void multi_db_touched(server *s, int db, int with)
{
    if (!s->watched_keys) return;
    for (int i = db < 0 ? 0 : db; i < (db < 0 ? s->ndbs : db + 1); i++) {
        store_dict *d = db_watched(s, i, 0);
        struct db_touch t = {server_db_if_used(s, i), with < 0 ? NULL : server_db_if_used(s, with)};
        if (d) store_dict_foreach(d, touch_watched, &t);
    }
}

/* Redis's isWatchedKeyExpired: a key alive at WATCH and past its deadline
 * now changed, reclaimed or not. */
static int watched_key_expired(client *c)
{
    for (const struct watch_entry *e = c->watched; e; e = e->cnext)
        if (!e->expired && store_peek(server_db_if_used(c->srv, e->key->db), e->key->name, e->key->len) == STORE_PRESENT_EXPIRED) return 1;
    return 0;
}

void cmd_watch(client *c)
{
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    if (!(c->flags & CLIENT_DIRTY_CAS))   /* already doomed: watching more changes nothing */
        for (int i = 1; i < c->argc; i++) watch_key(c, &c->argv[i]);
    reply_ok(c);
}

void cmd_unwatch(client *c)
{
    unwatch_all(c);
    c->flags &= ~CLIENT_DIRTY_CAS;
    reply_ok(c);
}

/* ---- MULTI / EXEC / DISCARD ---- */

static void discard_transaction(client *c)
{
    multi_state *m = &c->mstate;
    if (!m->executing) resp_buf_free(&m->queue);   /* EXEC frees it when done */
    m->count = 0;
    m->cmd_flags = 0;
    c->flags &= ~(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC);
    unwatch_all(c);
}

void multi_client_reset(client *c) { discard_transaction(c); }

void cmd_multi(client *c)
{
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->flags |= CLIENT_MULTI;
    reply_ok(c);
}

void cmd_discard(client *c)
{
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    discard_transaction(c);
    reply_ok(c);
}

static size_t record_size(const client *c)
{
    size_t n = sizeof(multi_cmd) + (size_t)c->argc * sizeof(resp_slice);
    for (int i = 0; i < c->argc; i++) n += c->argv[i].len;
    return (n + RECORD_ALIGN - 1) / RECORD_ALIGN * RECORD_ALIGN;
}

/* A doomed transaction keeps nothing more, as in Redis (its EXEC only
 * reports the failure). */
void multi_queue(client *c)
{
    multi_state *m = &c->mstate;
    if (!(c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC))) {
        multi_cmd h = {c->cmd, record_size(c), c->argc};
        resp_buf_reserve(&m->queue, h.size);
        char *rec = m->queue.data + m->queue.len;
        resp_slice *argv = (resp_slice *)(void *)(rec + sizeof(h));
        size_t off = m->queue.len + sizeof(h) + (size_t)c->argc * sizeof(resp_slice);
        memcpy(rec, &h, sizeof(h));
        for (int i = 0; i < c->argc; i++) {
            argv[i].ptr = (const char *)(uintptr_t)off;
            argv[i].len = c->argv[i].len;
            if (c->argv[i].len) memcpy(m->queue.data + off, c->argv[i].ptr, c->argv[i].len);
            off += c->argv[i].len;
        }
        m->queue.len += h.size;
        m->count++;
        m->cmd_flags |= script_command_flags(c, c->cmd);
    }
    reply_status(c, "QUEUED");
}

/* Each queued command runs as if just sent, but CLIENT LIST keeps showing
 * EXEC as the last command, as in Redis. The queue is complete, so its
 * offsets turn into pointers for good. */
static void run_queued(client *c)
{
    multi_state *m = &c->mstate;
    const command *exec_cmd = c->cmd, *last_sub = c->last_sub;
    resp_slice *exec_argv = c->argv;
    int exec_argc = c->argc;
    m->executing = 1;
    reply_array(c, m->count);
    for (size_t pos = 0; pos < m->queue.len;) {
        multi_cmd h;
        memcpy(&h, m->queue.data + pos, sizeof(h));
        resp_slice *argv = (resp_slice *)(void *)(m->queue.data + pos + sizeof(h));
        for (int i = 0; i < h.argc; i++) argv[i].ptr = m->queue.data + (uintptr_t)argv[i].ptr;
        c->cmd = h.cmd;
        c->sub = NULL;
        c->argv = argv;
        c->argc = h.argc;
        if (c->user->unrestricted || acl_exec_admit(c)) command_call(c);
        pos += h.size;
    }
    c->cmd = exec_cmd;
    c->last_sub = last_sub;
    c->argv = exec_argv;
    c->argc = exec_argc;
    m->executing = 0;
}

void cmd_exec(client *c)
{
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (watched_key_expired(c)) c->flags |= CLIENT_DIRTY_CAS;
    if (c->flags & CLIENT_DIRTY_EXEC) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
    } else if (c->flags & CLIENT_DIRTY_CAS) {
        reply_null_array(c);
    } else {
        unwatch_all(c);   /* the transaction's own writes must not doom it */
        run_queued(c);
    }
    discard_transaction(c);
}

/* ---- refusals ---- */

/* Over maxmemory Redis refuses every command inside MULTI (queueing grows
 * memory) but the ones that end it, and EXEC when it would run a denyoom
 * command. */
unsigned multi_oom_flags(const client *c, const command *cmd)
{
    if (cmd->proc == cmd_exec) return c->mstate.cmd_flags & CMD_DENYOOM;
    if (!(c->flags & CLIENT_MULTI) || cmd->proc == cmd_discard || cmd->proc == cmd_quit || cmd->proc == cmd_reset)
        return 0;
    return CMD_DENYOOM;
}

/* The error just written from mark on becomes the reason of an EXECABORT
 * (Redis's execCommandAbort), which names generic errors without "ERR "
 * and the others (OOM, BUSY, NOAUTH) with their code. */
static void exec_abort(client *c, size_t mark)
{
    resp_buf *out = &c->out;
    char reason[512] = "";
    if (out->len > mark + 3 && out->data[mark] == '-') {
        size_t skip = out->len - mark > 6 && !memcmp(out->data + mark, "-ERR ", 5) ? 5 : 1;
        size_t n = out->len - mark - skip - 2;   /* without the code and CRLF */
        if (n >= sizeof(reason)) n = sizeof(reason) - 1;
        memcpy(reason, out->data + mark + skip, n);
        reason[n] = '\0';
        out->len = mark;
    }
    discard_transaction(c);
    reply_errorf(c, "EXECABORT Transaction discarded because of: %s", reason);
}

void multi_refused(client *c, size_t mark)
{
    if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
    if (c->cmd && c->cmd->proc == cmd_exec) exec_abort(c, mark);
}
