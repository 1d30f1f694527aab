/* alloc.c - the allocation policy of resp/: running out of memory is fatal.
 * A server that cannot grow a buffer cannot answer anyone, so say so, abort. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void resp_oom(size_t size)
{
    fprintf(stderr, "latchd: out of memory allocating %zu bytes\n", size);
    fflush(stderr);
    abort();
}

void *resp_xrealloc(void *ptr, size_t size)
{
    /* realloc(p, 0) may free and return NULL; never ask for zero bytes. */
    void *np = realloc(ptr, size ? size : 1);
    if (np == NULL) resp_oom(size);
    return np;
}

size_t resp_grow_cap(size_t cap, size_t need, size_t min)
{
    size_t ncap = cap < min ? min : cap;
    while (ncap < need) {
        /* Doubling keeps appends amortised O(1); past SIZE_MAX/2 nothing
         * this process could hold is being asked for. */
        if (ncap > SIZE_MAX / 2) resp_oom(need);
        ncap *= 2;
    }
    return ncap;
}
