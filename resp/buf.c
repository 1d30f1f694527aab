/* buf.c - resp_buf, the growable byte buffer replies are appended to.
 * data[0..len) is always the bytes not yet handed to the socket. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mem.h"
#include "resp.h"

#define RESP_BUF_MIN 64

void resp_buf_init(resp_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void resp_buf_free(resp_buf *b)
{
    free(b->data);
    resp_buf_init(b);
}

void resp_buf_reserve(resp_buf *b, size_t n)
{
    if (b->cap - b->len >= n) return;
    if (n > SIZE_MAX - b->len) mem_oom(n);
    b->cap = resp_grow_cap(b->cap, b->len + n, RESP_BUF_MIN);
    b->data = resp_xrealloc(b->data, b->cap);
}

void resp_buf_reserve_exact(resp_buf *b, size_t n)
{
    if (b->cap - b->len >= n) return;
    if (n > SIZE_MAX - b->len) mem_oom(n);
    b->cap = b->len + n;
    b->data = resp_xrealloc(b->data, b->cap);
}

void resp_buf_append(resp_buf *b, const void *p, size_t n)
{
    if (n == 0) return; /* p may be NULL for an empty payload */
    resp_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void resp_buf_appendf(resp_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    resp_buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void resp_buf_consume(resp_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    /* A partial write leaves a tail; moving it to the front keeps the
     * invariant simple for the writer (data is what is still unsent). */
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}
