/* mem.c - the server's allocation wrappers: one place that decides what
 * running out of memory means (log and abort). */
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked(void *p, size_t n)
{
    if (!p && n) {
        fprintf(stderr, "latchd: out of memory allocating %zu bytes\n", n);
        abort();
    }
    return p;
}

void *mem_alloc(size_t n) { return checked(malloc(n), n); }
void *mem_calloc(size_t n, size_t size) { return checked(calloc(n, size), n * size); }
void *mem_realloc(void *p, size_t n) { return checked(realloc(p, n), n); }

char *mem_strndup(const char *s, size_t n)
{
    char *d = mem_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *mem_strdup(const char *s) { return mem_strndup(s, strlen(s)); }
