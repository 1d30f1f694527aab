/* alloc.c - resp/'s growth helpers: buffers grow geometrically, and a
 * failed or impossible allocation goes to the one policy, mem_oom. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "mem.h"

void *resp_xrealloc(void *ptr, size_t size)
{
    /* realloc(p, 0) may free and return NULL; never ask for zero bytes. */
    return mem_realloc(ptr, size ? size : 1);
}

size_t resp_grow_cap(size_t cap, size_t need, size_t min)
{
    size_t ncap = cap < min ? min : cap;
    while (ncap < need) {
        /* Doubling keeps appends amortised O(1); past SIZE_MAX/2 nothing
         * this process could hold is being asked for. */
        if (ncap > SIZE_MAX / 2) mem_oom(need);
        ncap *= 2;
    }
    return ncap;
}
