/* mem.c - the out-of-memory policy (mem_oom: say so, abort) and the
 * allocation wrappers every module uses to apply it. */
#include "mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mem_oom(size_t size)
{
    if (size) fprintf(stderr, "latchd: out of memory allocating %zu bytes\n", size);
    else fprintf(stderr, "latchd: out of memory\n");
    fflush(stderr);
    abort();
}

static void *checked(void *p, size_t n)
{
    if (!p && n) mem_oom(n);
    return p;
}

void *mem_alloc(size_t n) { return checked(malloc(n), n); }

void *mem_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    /* calloc refuses an n * size that overflows: report it as SIZE_MAX. */
    if (!p && n && size) mem_oom(n > SIZE_MAX / size ? SIZE_MAX : n * size);
    return p;
}

void *mem_realloc(void *p, size_t n) { return checked(realloc(p, n), n); }

char *mem_strndup(const char *s, size_t n)
{
    char *d = mem_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *mem_strdup(const char *s) { return mem_strndup(s, strlen(s)); }
