/* lua_alloc.c - the Lua state's allocator: blocks up to 256 bytes come from
 * a store_pool (16-byte classes), larger ones from malloc. */
/* Lua 5.1 passes a block's size on every realloc and free, so pooled blocks
 * need no header. Scripts make and drop many small strings and tables per
 * call (KEYS/ARGV, redis.call's arguments and replies); glibc's
 * malloc/free of them would be a sixth of a Lua-path EVALSHA's instructions. The
 * pool keeps what Lua frees for Lua; it goes back to the system with the
 * state. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "pool.h"
#include "script.h"

struct lua_pool {
    store_pool blocks;
};

lua_pool *lua_pool_new(void)
{
    lua_pool *p = mem_calloc(1, sizeof(*p));
    store_pool_init(&p->blocks, 16, 256);
    return p;
}

void lua_pool_free(lua_pool *p)
{
    if (!p) return;
    store_pool_release(&p->blocks);
    free(p);
}

static void release(lua_pool *p, void *b, size_t n)
{
    if (store_pool_holds(&p->blocks, n))
        store_pool_put(&p->blocks, b, n);
    else
        free(b);
}

/* Lua's lua_Alloc. NULL on failure: Lua raises "not enough memory". */
void *lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lua_pool *p = ud;
    store_pool *bp = &p->blocks;
    if (!ptr) osize = 0;   /* Lua 5.1: a new block's old size is 0 */
    if (nsize == 0) {
        if (ptr) release(p, ptr, osize);
        return NULL;
    }
    int was = store_pool_holds(bp, osize), will = store_pool_holds(bp, nsize);
    if (was && will && store_pool_size(bp, osize) == store_pool_size(bp, nsize)) return ptr;
    if (!was && !will) return realloc(ptr, nsize);
    void *q = will ? store_pool_get(bp, nsize) : malloc(nsize);
    if (!q) return NULL;
    if (ptr) {
        memcpy(q, ptr, osize < nsize ? osize : nsize);
        release(p, ptr, osize);
    }
    return q;
}
