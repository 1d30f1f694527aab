/* alloc.c - store/'s allocation wrappers: failure is mem_oom's (mem.h),
 * and key/value bytes are counted for used_memory. */
#include "store_internal.h"

#include <malloc.h>
#include <stdlib.h>

#include "mem.h"

/* Zero-byte requests get one byte, so NULL only ever means failure. */
void *store_xmalloc(size_t n) { return mem_alloc(n ? n : 1); }

void *store_xcalloc(size_t n, size_t size) { return mem_calloc(n ? n : 1, size ? size : 1); }

/* used_memory counts malloc_usable_size(), i.e. what the allocator really
 * handed out (size-class rounding included), not the requested sizes. */
size_t store_mem_size(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

void *store_mem_alloc(size_t *acct, size_t n)
{
    void *p = store_xmalloc(n);
    *acct += store_mem_size(p);
    return p;
}

void *store_mem_realloc(size_t *acct, void *p, size_t n)
{
    size_t old = store_mem_size(p);
    void *q = mem_realloc(p, n ? n : 1);
    *acct = *acct - old + store_mem_size(q);
    return q;
}

void store_mem_free(size_t *acct, void *p)
{
    if (!p) return;
    *acct -= store_mem_size(p);
    free(p);
}
