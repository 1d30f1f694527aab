/* reader.c - reads back complete replies item by item, so a command's
 * reply can be handed to a script as values. Trusts nothing it is given. */
#include <string.h>
#include <stdint.h>

#include "resp.h"

/* The line at p (up to CRLF) as a signed integer; NULL if malformed. */
static const char *read_int_line(const char *p, const char *end, long long *v)
{
    int neg = 0;
    unsigned long long acc = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
        if (acc > (unsigned long long)INT64_MAX / 10) return NULL;
        acc = acc * 10 + (unsigned long long)(*p++ - '0');
    }
    /* INT64_MIN's magnitude is one past INT64_MAX (DECR can reach it) */
    if (p == digits || acc > (unsigned long long)INT64_MAX + (unsigned long long)neg) return NULL;
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return NULL;
    *v = neg ? (long long)(0 - acc) : (long long)acc;
    return p + 2;
}

/* A line payload (+ - , ( _ #): bytes up to CRLF. */
static const char *read_line(const char *p, const char *end, resp_reply *r)
{
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || end - cr < 2 || cr[1] != '\n') return NULL;
    r->str = p;
    r->len = (size_t)(cr - p);
    return cr + 2;
}

/* $ and = : a length line, then that many bytes and CRLF. */
static const char *read_bulk(const char *p, const char *end, resp_reply *r)
{
    p = read_int_line(p, end, &r->n);
    if (!p || r->n < -1) return NULL;
    if (r->n == -1) return p;   /* RESP2 null bulk */
    if ((unsigned long long)(end - p) < (unsigned long long)r->n + 2) return NULL;
    r->str = p;
    r->len = (size_t)r->n;
    p += r->len;
    if (p[0] != '\r' || p[1] != '\n') return NULL;
    if (r->type == '=') {
        if (r->len < 4 || r->str[3] != ':') return NULL;
        r->fmt = r->str;
        r->str += 4;
        r->len -= 4;
    }
    return p + 2;
}

int resp_read_reply(const char **pos, const char *end, resp_reply *r)
{
    const char *p = *pos;
    if (p >= end) return 0;
    memset(r, 0, sizeof(*r));
    r->type = *p++;
    switch (r->type) {
    case '+': case '-': case ',': case '(': case '_':
        p = read_line(p, end, r);
        break;
    case '#':
        p = read_line(p, end, r);
        if (p && (r->len != 1 || (r->str[0] != 't' && r->str[0] != 'f'))) return 0;
        if (p) r->n = r->str[0] == 't';
        break;
    case ':':
        p = read_int_line(p, end, &r->n);
        break;
    case '$': case '=':
        p = read_bulk(p, end, r);
        break;
    case '*': case '%': case '~': case '>': case '|':
        p = read_int_line(p, end, &r->n);
        if (p && (r->n < -1 || (r->n == -1 && r->type != '*'))) return 0;
        break;
    default:
        return 0;
    }
    if (!p) return 0;
    *pos = p;
    return 1;
}
