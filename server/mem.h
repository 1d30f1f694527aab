/* mem.h - allocation for server/: failure is deliberately fatal, with a
 * message, because a server that cannot allocate cannot answer anyone. */
#ifndef LATCHD_MEM_H
#define LATCHD_MEM_H

#include <stddef.h>

void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t n);
char *mem_strdup(const char *s);
char *mem_strndup(const char *s, size_t n);

#endif
