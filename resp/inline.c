/* inline.c - splits an inline request line into arguments with the rules of
 * Redis's sdssplitargs(), unescaping into the parser's reusable scratch. */
#include <string.h>

#include "internal.h"

/* isspace() in the C locale, without its locale lookup or the sign trap of
 * passing a plain char: sdssplitargs uses isspace() to skip blanks. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The byte a backslash escape inside "..." stands for. */
static char unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c; /* \\ \" and any other char stand for themselves */
    }
}

/* A closing quote must end the argument: Redis rejects "foo"bar. The end
 * of the line counts as an end (sdssplitargs sees the string's NUL). */
static int quote_closes(const char *s, size_t n, size_t i)
{
    return i + 1 == n || is_space(s[i + 1]);
}

/* What one step inside quotes found. */
enum { Q_BYTE, Q_CLOSED, Q_UNBALANCED };

/* Inside "...": copy one escape or byte to out[*op], advancing *ip. */
static int dquote_step(const char *s, size_t n, size_t *ip, char *out, size_t *op)
{
    size_t i = *ip;

    if (i == n) return Q_UNBALANCED; /* line ended inside the quotes */
    if (s[i] == '"') return quote_closes(s, n, i) ? Q_CLOSED : Q_UNBALANCED;
    if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' &&
        hex_val(s[i + 2]) >= 0 && hex_val(s[i + 3]) >= 0) {
        out[(*op)++] = (char)(hex_val(s[i + 2]) * 16 + hex_val(s[i + 3]));
        *ip = i + 4;
    } else if (s[i] == '\\' && i + 1 < n) {
        out[(*op)++] = unescape(s[i + 1]);
        *ip = i + 2;
    } else {
        out[(*op)++] = s[i]; /* a lone trailing backslash is literal too */
        *ip = i + 1;
    }
    return Q_BYTE;
}

/* Inside '...': only \' is an escape, everything else is literal. */
static int squote_step(const char *s, size_t n, size_t *ip, char *out, size_t *op)
{
    size_t i = *ip;

    if (i == n) return Q_UNBALANCED;
    if (s[i] == '\'') return quote_closes(s, n, i) ? Q_CLOSED : Q_UNBALANCED;
    if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\'') {
        out[(*op)++] = '\'';
        *ip = i + 2;
    } else {
        out[(*op)++] = s[i];
        *ip = i + 1;
    }
    return Q_BYTE;
}

/* Read one argument starting at s[*ip] (not a blank) into out[*op..].
 * Bare bytes and quoted parts may be glued: a"b c" is one argument "ab c",
 * exactly as sdssplitargs does it. Returns 0, or -1 on unbalanced quotes. */
static int read_arg(const char *s, size_t n, size_t *ip, char *out, size_t *op)
{
    size_t i = *ip;

    while (i < n) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            int r;
            i++;
            do {
                r = c == '"' ? dquote_step(s, n, &i, out, op)
                             : squote_step(s, n, &i, out, op);
            } while (r == Q_BYTE);
            if (r == Q_UNBALANCED) return -1;
            i++; /* past the closing quote; a blank or the end follows */
            break;
        }
        /* Only these end a bare argument; \v and \f are kept (though they
         * are skipped between arguments) because sdssplitargs does that. */
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            i++;
            break;
        }
        out[(*op)++] = c;
        i++;
    }
    *ip = i;
    return 0;
}

static void push_arg(resp_parser *p, const char *ptr, size_t len)
{
    if (p->argc == p->argv_cap) {
        p->argv_cap = resp_grow_cap(p->argv_cap, p->argc + 1, 8);
        p->argv = resp_xrealloc(p->argv, p->argv_cap * sizeof(*p->argv));
    }
    p->argv[p->argc].ptr = ptr;
    p->argv[p->argc].len = len;
    p->argc++;
}

int resp_split_inline(resp_parser *p, const char *line, size_t len)
{
    size_t i = 0, o = 0;

    /* Unescaping never grows an argument, so the line length is enough and
     * the scratch never moves while argv points into it. */
    if (p->scratch_cap < len) {
        p->scratch_cap = resp_grow_cap(p->scratch_cap, len, 64);
        p->scratch = resp_xrealloc(p->scratch, p->scratch_cap);
    }
    p->argc = 0;
    for (;;) {
        size_t start;
        while (i < len && is_space(line[i])) i++;
        if (i == len) return 0;
        start = o;
        if (read_arg(line, len, &i, p->scratch, &o) < 0) return -1;
        push_arg(p, p->scratch + start, o - start);
    }
}
