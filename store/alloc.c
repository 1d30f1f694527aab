/* alloc.c - store/'s allocation wrappers: running out of memory is fatal
 * (message + abort), and key/value bytes are counted for used_memory. */
#include "store_internal.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

/* A store that cannot allocate cannot keep its promises (a half-made key,
 * a lost lock), so stop loudly instead of limping on. */
void store_oom(size_t n)
{
    fprintf(stderr, "latchd: store out of memory allocating %zu bytes\n", n);
    abort();
}

void *store_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) store_oom(n);
    return p;
}

void *store_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) store_oom(n * size);
    return p;
}

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
    void *q = realloc(p, n ? n : 1);
    if (!q) store_oom(n);
    *acct = *acct - old + store_mem_size(q);
    return q;
}

void store_mem_free(size_t *acct, void *p)
{
    if (!p) return;
    *acct -= store_mem_size(p);
    free(p);
}
