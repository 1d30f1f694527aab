/* lazyfree.c - UNLINK, FLUSHDB/FLUSHALL ASYNC and the lazyfree-lazy-*
 * configs: big values and whole keyspaces freed by one worker thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "mem.h"
#include "server.h"

/* Redis's LAZYFREE_THRESHOLD: a value whose freeing takes fewer
 * allocations than this is freed at once, as handing it over costs more. */
#define LAZYFREE_EFFORT_MIN 64

typedef struct lazy_job {
    struct lazy_job *next;
    store_orphan *orphan;   /* one value, or */
    store *whole;           /* a whole keyspace, destroyed, or */
    int fd, is_file;        /* a file to close (lazyfree_close_file) */
    store *origin;          /* the orphan's store, until that goes away whole (NULL) */
    size_t whole_bytes;     /* whole's used_memory when handed over */
    size_t objects;         /* lazyfree_pending_objects it stands for */
    size_t freed;           /* bytes the worker freed (orphans) */
} lazy_job;

struct lazyfree {
    server *srv;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    lazy_job *head, *tail;  /* queued, oldest first */
    lazy_job *busy;         /* the one being freed */
    lazy_job *done;         /* freed, to settle on the loop thread (any order) */
    int stop;
    uv_async_t wake;        /* the worker tells the loop something is done */
    store *freer;           /* the worker's own store: orphans are freed through it */
    size_t whole_bytes;     /* handed-over keyspaces' bytes not freed yet (loop thread) */
    size_t jobs;            /* handed over and not settled (loop thread) */
    /* written by the worker, read by the loop without the lock */
    _Atomic size_t unsettled;        /* bytes freed whose store is not told yet */
    _Atomic size_t pending_objects;  /* INFO's lazyfree_pending_objects */
    _Atomic size_t freed_objects;    /* INFO's lazyfreed_objects */
};

static void *worker(void *arg)
{
    lazyfree *lf = arg;
    (void)affinity_apply(lf->srv->cfg.bio_cpulist);   /* as Redis's bio threads */
    pthread_mutex_lock(&lf->mu);
    for (;;) {
        while (!lf->head && !lf->stop) pthread_cond_wait(&lf->work, &lf->mu);
        if (!lf->head) break;
        lazy_job *j = lf->head;
        lf->head = j->next;
        if (!lf->head) lf->tail = NULL;
        lf->busy = j;
        pthread_mutex_unlock(&lf->mu);
        if (j->is_file) close(j->fd);
        else if (j->orphan) j->freed = store_orphan_free(lf->freer, j->orphan);
        else store_destroy(j->whole);
        pthread_mutex_lock(&lf->mu);
        /* under the lock: lazyfree_flush_db may clear origin meanwhile */
        if (j->orphan && j->origin) atomic_fetch_add(&lf->unsettled, j->freed);
        atomic_fetch_sub(&lf->pending_objects, j->objects);
        atomic_fetch_add(&lf->freed_objects, j->objects);
        lf->busy = NULL;
        j->next = lf->done;
        lf->done = j;
        if (!lf->head) pthread_cond_broadcast(&lf->idle);
        uv_async_send(&lf->wake);
    }
    pthread_mutex_unlock(&lf->mu);
    return NULL;
}

/* On the loop thread: what the worker freed is taken off its stores. */
static void settle(lazyfree *lf)
{
    pthread_mutex_lock(&lf->mu);
    lazy_job *j = lf->done;
    lf->done = NULL;
    pthread_mutex_unlock(&lf->mu);
    while (j) {
        lazy_job *next = j->next;
        if (j->is_file) {
            /* nothing was charged for it */
        } else if (j->whole) {
            lf->whole_bytes -= j->whole_bytes;
        } else if (j->origin) {
            store_orphan_settle(j->origin, j->orphan);
            atomic_fetch_sub(&lf->unsettled, j->freed);
        } else {
            store_orphan_drop(j->orphan);
        }
        lf->jobs--;
        free(j);
        j = next;
    }
}

static void on_wake(uv_async_t *h) { settle(h->data); }

static uint64_t freer_clock(void *ctx)
{
    (void)ctx;
    return 0;
}

static lazyfree *lazyfree_get(server *s)
{
    if (s->lazy) return s->lazy;
    lazyfree *lf = mem_calloc(1, sizeof(*lf));
    lf->srv = s;
    lf->freer = store_create(freer_clock, NULL);
    pthread_mutex_init(&lf->mu, NULL);
    pthread_cond_init(&lf->work, NULL);
    pthread_cond_init(&lf->idle, NULL);
    uv_async_init(s->loop, &lf->wake, on_wake);
    lf->wake.data = lf;
    if (pthread_create(&lf->thread, NULL, worker, lf) != 0) mem_oom(0);
    s->lazy = lf;
    return lf;
}

static void enqueue(lazyfree *lf, lazy_job *j)
{
    atomic_fetch_add(&lf->pending_objects, j->objects);
    lf->jobs++;
    pthread_mutex_lock(&lf->mu);
    if (lf->tail) lf->tail->next = j;
    else lf->head = j;
    lf->tail = j;
    pthread_cond_signal(&lf->work);
    pthread_mutex_unlock(&lf->mu);
}

/* One value's job: o, charged to st until the worker has freed it. */
static void enqueue_orphan(server *s, store *st, store_orphan *o)
{
    lazyfree *lf = lazyfree_get(s);
    lazy_job *j = mem_calloc(1, sizeof(*j));
    j->orphan = o;
    j->origin = st;
    j->objects = 1;
    enqueue(lf, j);
}

void lazyfree_delete_key(server *s, store *st, store_key *k)
{
    if (store_key_free_effort(k) <= LAZYFREE_EFFORT_MIN) {
        store_delete_key(st, k);
        return;
    }
    enqueue_orphan(s, st, store_key_orphan(st, k));
}

int lazyfree_take_value(server *s, store *st, store_key *k)
{
    if (store_key_free_effort(k) <= LAZYFREE_EFFORT_MIN) return 0;
    enqueue_orphan(s, st, store_value_orphan(st, k));
    return 1;
}

int lazyfree_delete(server *s, store *st, const char *key, size_t len)
{
    store_key *k = store_lookup(st, key, len);
    if (!k) return 0;
    lazyfree_delete_key(s, st, k);
    return 1;
}

/* Jobs still charged to st now charge nobody: st's bytes, theirs
 * included, leave with it whole. */
static void forget_origin(lazyfree *lf, store *st)
{
    pthread_mutex_lock(&lf->mu);
    for (lazy_job *j = lf->head; j; j = j->next)
        if (j->origin == st) j->origin = NULL;
    if (lf->busy && lf->busy->origin == st) lf->busy->origin = NULL;
    for (lazy_job *j = lf->done; j; j = j->next) {
        if (j->origin != st) continue;
        /* freed already: its bytes were counted unsettled and are also in st's */
        atomic_fetch_sub(&lf->unsettled, j->freed);
        j->origin = NULL;
    }
    pthread_mutex_unlock(&lf->mu);
}

void lazyfree_flush_db(server *s, int db)
{
    store *old = server_db_if_used(s, db);
    if (!old) return;
    if (store_size(old) == 0 && (!s->lazy || !s->lazy->jobs)) {
        store_flush(old);   /* nothing to hand over, and no value of its still out */
        return;
    }
    lazyfree *lf = lazyfree_get(s);
    forget_origin(lf, old);
    lazy_job *j = mem_calloc(1, sizeof(*j));
    j->whole = old;
    j->whole_bytes = store_used_memory(old);
    j->objects = store_size(old);
    lf->whole_bytes += j->whole_bytes;
    s->dbs[db].st = NULL;
    server_db(s, db);   /* a fresh store in the slot, hooks bound */
    enqueue(lf, j);
}

void lazyfree_drain(server *s)
{
    lazyfree *lf = s->lazy;
    if (!lf || !lf->jobs) return;
    pthread_mutex_lock(&lf->mu);
    while (lf->head || lf->busy) pthread_cond_wait(&lf->idle, &lf->mu);
    pthread_mutex_unlock(&lf->mu);
    settle(lf);
}

size_t lazyfree_charged(const server *s)
{
    const lazyfree *lf = s->lazy;
    if (!lf) return 0;
    return lf->whole_bytes - atomic_load_explicit(&lf->unsettled, memory_order_relaxed);
}

size_t lazyfree_pending_objects(const server *s)
{
    return s->lazy ? atomic_load(&s->lazy->pending_objects) : 0;
}

size_t lazyfree_freed_objects(const server *s)
{
    return s->lazy ? atomic_load(&s->lazy->freed_objects) : 0;
}

void lazyfree_reset_stats(server *s)
{
    if (s->lazy) atomic_store(&s->lazy->freed_objects, 0);
}

void lazyfree_close_file(server *s, int fd)
{
    lazyfree *lf = lazyfree_get(s);
    lazy_job *j = mem_calloc(1, sizeof(*j));
    j->fd = fd;
    j->is_file = 1;
    enqueue(lf, j);
}

void lazyfree_shutdown(server *s)
{
    lazyfree *lf = s->lazy;
    if (!lf) return;
    pthread_mutex_lock(&lf->mu);
    lf->stop = 1;
    pthread_cond_signal(&lf->work);
    pthread_mutex_unlock(&lf->mu);
    pthread_join(lf->thread, NULL);   /* it finishes the queue first */
    settle(lf);
    server_close_handle(s, (uv_handle_t *)&lf->wake);
}

void lazyfree_free(server *s)
{
    lazyfree *lf = s->lazy;
    if (!lf) return;
    store_destroy(lf->freer);
    pthread_mutex_destroy(&lf->mu);
    pthread_cond_destroy(&lf->work);
    pthread_cond_destroy(&lf->idle);
    free(lf);
    s->lazy = NULL;
}
