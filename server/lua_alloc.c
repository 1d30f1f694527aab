/* lua_alloc.c - the Lua state's allocator: blocks up to 256 bytes come from
 * per-size free lists carved from 64 KiB chunks, larger ones from malloc. */
/* Lua 5.1 passes a block's size on every realloc and free, so pooled blocks
 * need no header. Scripts make and drop many small strings and tables per
 * call (KEYS/ARGV, redis.call's arguments and replies), and glibc's
 * malloc/free of them was a sixth of a Lua-path EVALSHA's instructions. The
 * pool keeps what Lua frees for Lua; it goes back to the system with the
 * state. Sanitizer builds use malloc for everything, so they still see
 * every block. */
#include <stdlib.h>
#include <string.h>

#include "script.h"

#define STEP 16
#define POOLED_MAX 256
#define CLASSES (POOLED_MAX / STEP)
#define CHUNK_BYTES (64 * 1024)

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ENABLED 0
#endif
#endif
#ifndef POOL_ENABLED
#define POOL_ENABLED 1
#endif

typedef struct chunk {
    struct chunk *next;
    /* blocks follow, STEP-aligned */
} chunk;

struct lua_pool {
    void *free[CLASSES];   /* free blocks of (class + 1) * STEP bytes, linked
                              through their first word */
    chunk *chunks;
    char *carve, *carve_end;   /* the unused tail of the newest chunk */
};

lua_pool *lua_pool_new(void)
{
    lua_pool *p = calloc(1, sizeof(*p));
    if (!p) {
        log_msg(LOG_WARNING, "Fatal: cannot allocate the Lua allocator (out of memory)");
        abort();
    }
    return p;
}

void lua_pool_free(lua_pool *p)
{
    if (!p) return;
    for (chunk *c = p->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(p);
}

static int pooled(size_t n) { return POOL_ENABLED && n > 0 && n <= POOLED_MAX; }
static size_t class_of(size_t n) { return (n - 1) / STEP; }

static void *carve(lua_pool *p, size_t bytes)
{
    if ((size_t)(p->carve_end - p->carve) < bytes) {
        /* the old tail (< 256 bytes) is left unused */
        chunk *c = malloc(CHUNK_BYTES);
        if (!c) return NULL;
        c->next = p->chunks;
        p->chunks = c;
        p->carve = (char *)c + STEP;
        p->carve_end = (char *)c + CHUNK_BYTES;
    }
    void *b = p->carve;
    p->carve += bytes;
    return b;
}

static void *block_get(lua_pool *p, size_t n)
{
    size_t cls = class_of(n);
    void *b = p->free[cls];
    if (!b) return carve(p, (cls + 1) * STEP);
    memcpy(&p->free[cls], b, sizeof(void *));
    return b;
}

static void block_put(lua_pool *p, void *b, size_t n)
{
    size_t cls = class_of(n);
    memcpy(b, &p->free[cls], sizeof(void *));
    p->free[cls] = b;
}

/* Lua's lua_Alloc. NULL on failure: Lua raises "not enough memory". */
void *lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lua_pool *p = ud;
    if (!ptr) osize = 0;   /* Lua 5.1: a new block's old size is 0 */
    if (nsize == 0) {
        if (pooled(osize)) block_put(p, ptr, osize);
        else free(ptr);
        return NULL;
    }
    if (pooled(osize) && pooled(nsize) && class_of(osize) == class_of(nsize)) return ptr;
    if (!pooled(osize) && !pooled(nsize)) return realloc(ptr, nsize);
    void *q = pooled(nsize) ? block_get(p, nsize) : malloc(nsize);
    if (!q) return NULL;
    if (ptr) {
        memcpy(q, ptr, osize < nsize ? osize : nsize);
        if (pooled(osize)) block_put(p, ptr, osize);
        else free(ptr);
    }
    return q;
}
