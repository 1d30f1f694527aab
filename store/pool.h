/* pool.h - size-class free lists for small blocks whose size the caller
 * always knows, so blocks carry no header: carved from 64 KiB chunks,
 * reused by size, returned to the system when the pool is released. */
#ifndef LATCHD_STORE_POOL_H
#define LATCHD_STORE_POOL_H

#include <stddef.h>

#define STORE_POOL_MAX_CLASSES 64

typedef struct store_pool {
    void *free[STORE_POOL_MAX_CLASSES];   /* linked through their first word */
    void *chunks;                         /* linked through their first word */
    char *carve, *carve_end;              /* the newest chunk's unused tail */
    size_t step, max;                     /* class width, largest pooled size */
    unsigned shift;                       /* log2(step) */
} store_pool;

/* Classes of `step` bytes (a power of two >= sizeof(void *)) up to `max`
 * (at most STORE_POOL_MAX_CLASSES * step). */
void store_pool_init(store_pool *p, size_t step, size_t max);
/* Frees every chunk: blocks still out become invalid. */
void store_pool_release(store_pool *p);
#if defined(__SANITIZE_ADDRESS__)
#define STORE_POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STORE_POOL_ENABLED 0
#endif
#endif
#ifndef STORE_POOL_ENABLED
#define STORE_POOL_ENABLED 1
#endif

/* 1 if a block of n bytes comes from the pool. Never in sanitizer builds,
 * so they see every block on its own. (Inline: on every Lua allocation.) */
static inline int store_pool_holds(const store_pool *p, size_t n)
{
    return STORE_POOL_ENABLED && n > 0 && n <= p->max;
}

/* What a pooled block of n bytes really occupies. */
static inline size_t store_pool_size(const store_pool *p, size_t n)
{
    return (((n - 1) >> p->shift) + 1) << p->shift;
}
/* A block of n (store_pool_holds) bytes, or NULL when out of memory. */
void *store_pool_get(store_pool *p, size_t n);
/* Back to the pool: n must be the size it was got with (same class). */
void store_pool_put(store_pool *p, void *b, size_t n);

/* Free blocks on their way from one pool to another of the same classes:
 * each class's list with its last block, so giving them back is O(classes)
 * (blocks freed on another thread go home without a walk on the owner's). */
typedef struct store_pool_spill {
    void *head[STORE_POOL_MAX_CLASSES], *tail[STORE_POOL_MAX_CLASSES];
} store_pool_spill;
/* Every free list of p moves to out (walked for their tails); p has none after. */
void store_pool_take(store_pool *p, store_pool_spill *out);
/* The blocks of in join p's free lists; they must be blocks of p's chunks. */
void store_pool_give(store_pool *p, const store_pool_spill *in);

#endif
