/* pool.c - size-class free lists carved from 64 KiB chunks (see pool.h):
 * no per-block header or rounding to 16, and no search on reuse. */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64 * 1024)

void store_pool_init(store_pool *p, size_t step, size_t max)
{
    memset(p, 0, sizeof(*p));
    p->step = step;
    p->max = max;
    p->shift = (unsigned)__builtin_ctzl(step);
}

void store_pool_release(store_pool *p)
{
    void *c = p->chunks;
    while (c) {
        void *next;
        memcpy(&next, c, sizeof(next));
        free(c);
        c = next;
    }
    store_pool_init(p, p->step, p->max);
}

static size_t class_of(const store_pool *p, size_t n) { return (n - 1) >> p->shift; }

static void *carve(store_pool *p, size_t bytes)
{
    if ((size_t)(p->carve_end - p->carve) < bytes) {
        char *c = malloc(CHUNK_BYTES);   /* the old tail (< max bytes) stays unused */
        if (!c) return NULL;
        memcpy(c, &p->chunks, sizeof(void *));
        p->chunks = c;
        p->carve = c + p->step;   /* the link word, padded to keep blocks aligned */
        p->carve_end = c + CHUNK_BYTES;
    }
    void *b = p->carve;
    p->carve += bytes;
    return b;
}

void *store_pool_get(store_pool *p, size_t n)
{
    size_t cls = class_of(p, n);
    void *b = p->free[cls];
    if (!b) return carve(p, (cls + 1) * p->step);
    memcpy(&p->free[cls], b, sizeof(void *));
    return b;
}

void store_pool_put(store_pool *p, void *b, size_t n)
{
    size_t cls = class_of(p, n);
    memcpy(b, &p->free[cls], sizeof(void *));
    p->free[cls] = b;
}

void store_pool_take(store_pool *p, store_pool_spill *out)
{
    for (size_t c = 0; c < STORE_POOL_MAX_CLASSES; c++) {
        void *b = out->head[c] = p->free[c];
        out->tail[c] = NULL;
        p->free[c] = NULL;
        while (b) {
            out->tail[c] = b;
            memcpy(&b, b, sizeof(void *));
        }
    }
}

void store_pool_give(store_pool *p, const store_pool_spill *in)
{
    for (size_t c = 0; c < STORE_POOL_MAX_CLASSES; c++) {
        if (!in->head[c]) continue;
        memcpy(in->tail[c], &p->free[c], sizeof(void *));
        p->free[c] = in->head[c];
    }
}
