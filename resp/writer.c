/* writer.c - the reply writer: every RESP2/RESP3 reply shape, byte for byte
 * as Redis 7.0's addReply* functions emit them, appended to a resp_buf. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "resp.h"

/* Longest "<prefix><long long>\r\n": 1 + 20 digits and sign + 2. */
#define HDR_MAX 24

/* Decimal digits of v into dst (no NUL); returns the count. Integers are
 * the hottest thing a reply writes, so no snprintf: two digits per step
 * from a table, as Redis's ll2string does. */
static size_t ll_to_str(char *dst, long long v)
{
    static const char pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char tmp[20];
    size_t n = 0, len = 0;
    /* Negate in unsigned so LLONG_MIN has a magnitude too. */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        tmp[n++] = pairs[i + 1];
        tmp[n++] = pairs[i];
    }
    if (u >= 10) {
        tmp[n++] = pairs[u * 2 + 1];
        tmp[n++] = pairs[u * 2];
    } else {
        tmp[n++] = (char)('0' + u);
    }
    if (v < 0) dst[len++] = '-';
    while (n) dst[len++] = tmp[--n];
    return len;
}

/* "<prefix><v>\r\n": integers and every aggregate or bulk header. */
static void add_header(resp_buf *b, char prefix, long long v)
{
    char *p;
    size_t n;

    resp_buf_reserve(b, HDR_MAX);
    p = b->data + b->len;
    p[0] = prefix;
    n = 1 + ll_to_str(p + 1, v);
    p[n++] = '\r';
    p[n++] = '\n';
    b->len += n;
}

/* "<prefix><s>\r\n" with the payload copied verbatim. */
static void add_line(resp_buf *b, char prefix, const char *s, size_t len)
{
    resp_buf_reserve(b, len + 3);
    b->data[b->len++] = prefix;
    resp_buf_append(b, s, len);
    b->data[b->len++] = '\r';
    b->data[b->len++] = '\n';
}

void resp_add_status(resp_buf *b, const char *s)
{
    add_line(b, '+', s, strlen(s));
}

static int is_crlf(char c)
{
    return c == '\r' || c == '\n';
}

/* A CR or LF inside the text would end the line early and leave the
 * rest to be read as a bogus reply; Redis turns them into spaces. */
static void add_safe_line(resp_buf *b, char type, const char *s, size_t len)
{
    add_line(b, type, s, len);
    char *p = b->data + b->len - 2 - len;
    for (size_t i = 0; i < len; i++)
        if (is_crlf(p[i])) p[i] = ' ';
}

void resp_add_simple(resp_buf *b, const char *s, size_t len)
{
    add_safe_line(b, '+', s, len);
}

void resp_add_error(resp_buf *b, const char *s, size_t len)
{
    add_safe_line(b, '-', s, len);
}

/* Like Redis's addReplyErrorFormat: CR/LF at either end are trimmed (the
 * writer adds the CRLF), any left inside become spaces. */
void resp_add_errorf(resp_buf *b, const char *fmt, ...)
{
    char stack[256], *s = stack;
    size_t start = 0, end;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(stack, sizeof(stack), fmt, ap);
    va_end(ap);
    if (n < 0) {
        n = 0; /* an encoding error: send an empty error rather than junk */
        stack[0] = '\0';
    }
    if ((size_t)n >= sizeof(stack)) {
        s = resp_xrealloc(NULL, (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    /* strlen, not n: Redis builds the text with sdscat, which stops at a
     * NUL that a %c or %s put in. */
    end = strlen(s);
    while (end > 0 && is_crlf(s[end - 1])) end--;
    while (start < end && is_crlf(s[start])) start++;
    resp_add_error(b, s + start, end - start);
    if (s != stack) free(s);
}

void resp_add_int(resp_buf *b, long long v)
{
    add_header(b, ':', v);
}

void resp_add_bulk(resp_buf *b, const void *p, size_t len)
{
    resp_buf_reserve(b, HDR_MAX + len + 2);
    add_header(b, '$', (long long)len);
    resp_buf_append(b, p, len);
    b->data[b->len++] = '\r';
    b->data[b->len++] = '\n';
}

/* NULL has no protocol to pick a null for, so it is the RESP2 null bulk,
 * which every RESP3 client also reads as null. */
void resp_add_bulk_cstr(resp_buf *b, const char *s)
{
    if (s == NULL)
        resp_buf_append(b, "$-1\r\n", 5);
    else
        resp_add_bulk(b, s, strlen(s));
}

void resp_add_bulk_ll(resp_buf *b, long long v)
{
    char digits[20];
    resp_add_bulk(b, digits, ll_to_str(digits, v));
}

void resp_add_null(resp_buf *b, int proto)
{
    if (proto >= 3)
        resp_buf_append(b, "_\r\n", 3);
    else
        resp_buf_append(b, "$-1\r\n", 5);
}

void resp_add_null_array(resp_buf *b, int proto)
{
    if (proto >= 3)
        resp_buf_append(b, "_\r\n", 3);
    else
        resp_buf_append(b, "*-1\r\n", 5);
}

void resp_add_array_len(resp_buf *b, long long n)
{
    add_header(b, '*', n);
}

/* RESP2 has no map: the pairs go flat, so the array holds 2n items. */
void resp_add_map_len(resp_buf *b, int proto, long long n)
{
    if (proto >= 3)
        add_header(b, '%', n);
    else
        add_header(b, '*', n * 2);
}

void resp_add_set_len(resp_buf *b, int proto, long long n)
{
    add_header(b, proto >= 3 ? '~' : '*', n);
}

void resp_add_push_len(resp_buf *b, int proto, long long n)
{
    add_header(b, proto >= 3 ? '>' : '*', n);
}

void resp_add_attribute_len(resp_buf *b, long long n) { add_header(b, '|', n); }

/* %.17g round-trips every double. Infinity is spelled out by hand, as in
 * Redis, because some libcs print it differently; NaN is left to %.17g
 * ("nan" or "-nan" with glibc), again as Redis does. */
void resp_add_double(resp_buf *b, int proto, double d)
{
    char dbuf[40];
    int n;

    if (isinf(d))
        n = snprintf(dbuf, sizeof(dbuf), "%s", d > 0 ? "inf" : "-inf");
    else
        n = snprintf(dbuf, sizeof(dbuf), "%.17g", d);
    resp_add_double_text(b, proto, dbuf, (size_t)n);
}

void resp_add_double_text(resp_buf *b, int proto, const char *s, size_t len)
{
    if (proto >= 3)
        add_line(b, ',', s, len);
    else
        resp_add_bulk(b, s, len);
}

void resp_add_bool(resp_buf *b, int proto, int v)
{
    if (proto >= 3)
        resp_buf_append(b, v ? "#t\r\n" : "#f\r\n", 4);
    else
        resp_buf_append(b, v ? ":1\r\n" : ":0\r\n", 4);
}

/* RESP3 "=<len+4>\r\nfmt:<payload>\r\n". Like Redis, a format shorter than
 * three chars is padded with spaces and a longer one is cut. */
void resp_add_verbatim(resp_buf *b, int proto, const char *fmt3, const char *p, size_t len)
{
    char ext[5] = "   :";
    int i;

    if (proto < 3) {
        resp_add_bulk(b, p, len);
        return;
    }
    for (i = 0; i < 3 && fmt3 && fmt3[i]; i++) ext[i] = fmt3[i];
    resp_buf_reserve(b, HDR_MAX + 4 + len + 2);
    add_header(b, '=', (long long)len + 4);
    resp_buf_append(b, ext, 4);
    resp_buf_append(b, p, len);
    resp_buf_append(b, "\r\n", 2);
}

void resp_add_bignum(resp_buf *b, int proto, const char *digits, size_t len)
{
    if (proto >= 3)
        add_line(b, '(', digits, len);
    else
        resp_add_bulk(b, digits, len);
}
