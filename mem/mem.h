/* mem.h - latchd's one out-of-memory policy and the allocation wrappers
 * that apply it, for every module (resp/, store/, server/ all use these). */
#ifndef LATCHD_MEM_H
#define LATCHD_MEM_H

#include <stddef.h>

/* The policy: a message on stderr naming `size` (0: unknown), then abort(). A server
 * that cannot allocate cannot keep a half-made key or lock consistent nor
 * answer anyone, so it stops loudly instead of limping on. Embedders bound
 * memory with maxmemory; latchd.h states this. Also used for sizes that
 * overflow what can be allocated at all. */
void mem_oom(size_t size) __attribute__((noreturn));

/* malloc/calloc/realloc that never return NULL for a nonzero size: on
 * failure they call mem_oom. mem_realloc(p, 0) is realloc's (it may free
 * p and return NULL). The caller owns and free()s the result. */
void *mem_alloc(size_t n);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t n);
/* NUL-terminated copies (of s, or of its first n bytes); mem_oom on failure. */
char *mem_strdup(const char *s);
char *mem_strndup(const char *s, size_t n);

#endif
