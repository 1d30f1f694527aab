/* internal.h - helpers shared by the resp/ sources and nothing else: the
 * growth helpers (failure is mem.h's mem_oom) and the inline splitter. */
#ifndef LATCHD_RESP_INTERNAL_H
#define LATCHD_RESP_INTERNAL_H

#include <stddef.h>
#include "resp.h"

/* realloc() that never returns NULL: failure is mem_oom. */
void *resp_xrealloc(void *ptr, size_t size);
/* Capacity for at least `need` items, growing `cap` geometrically;
 * mem_oom on size_t overflow. `min` is the first capacity handed out. */
size_t resp_grow_cap(size_t cap, size_t need, size_t min);

/* Split one inline request line (no line terminator) into p->argv/p->argc
 * with sdssplitargs() rules, unescaping into p->scratch. Returns 0, or -1
 * on unbalanced quotes. */
int resp_split_inline(resp_parser *p, const char *line, size_t len);

#endif
