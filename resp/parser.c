/* parser.c - the incremental request parser: inline lines and multibulk
 * arrays, behaving like Redis 7.0's processInlineBuffer/processMultibulkBuffer.
 *
 * The state survives across calls as offsets from the start of the current
 * command, never as pointers, so the caller may move its buffer between
 * calls. A line's terminator search resumes where the last call stopped
 * (scan_pos) and payloads are never scanned, so a huge bulk trickling in is
 * O(n) overall, not O(n^2). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "resp.h"

/* Where the parser is inside the current command. */
enum {
    ST_START,     /* nothing of the command seen yet */
    ST_INLINE,    /* waiting for the '\n' that ends an inline line */
    ST_MB_COUNT,  /* waiting for the "*<count>\r\n" line */
    ST_BULK_LEN,  /* waiting for a "$<len>\r\n" line */
    ST_BULK_DATA  /* waiting for <len> payload bytes plus two */
};

/* What parsing the current command came to. */
enum { STEP_COMMAND, STEP_SKIP, STEP_MORE, STEP_ERROR, STEP_ARGS };

#define PROTO_ERR "Protocol error: "

/* Redis's string2ll(): strict decimal, no sign '+', no leading zeros, no
 * spaces, at most 20 chars, in range. Anything else is not a length. */
static int str_to_ll(const char *s, size_t n, long long *out)
{
    unsigned long long v = 0;
    size_t i = 0;
    int neg = 0;

    if (n == 0 || n >= 21) return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    if (s[0] == '-') {
        neg = 1;
        if (++i == n) return 0;
    }
    if (s[i] < '1' || s[i] > '9') return 0; /* also rejects "-0" and "01" */
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (s[i] < '0' || s[i] > '9') return 0;
        if (v > (~0ULL - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

/* The usual header line in one pass: the type byte, "0" or up to 18
 * digits without a leading zero (no overflow possible), then '\r' with
 * the byte after it in buf. 0 for anything else, which the general path
 * (find_eol, str_to_ll) then parses with all of Redis's errors; the
 * digits hold no NUL, so skipping find_eol's NUL rule changes nothing. */
static int quick_len(const char *buf, size_t at, size_t len, char type, long long *n, size_t *eol)
{
    size_t i = at + 1, lim = len - i > 18 ? i + 18 : len;
    unsigned long long v = 0;
    if (at >= len || buf[at] != type) return 0;
    if (i < lim && buf[i] == '0') i++;
    else
        while (i < lim && (unsigned)(buf[i] - '0') <= 9) v = v * 10 + (unsigned)(buf[i++] - '0');
    if (i == at + 1 || i + 1 >= len || buf[i] != '\r') return 0;
    *n = (long long)v;
    *eol = i;
    return 1;
}

static int fail(resp_parser *p, const char *text)
{
    p->error = text;
    return STEP_ERROR;
}

/* Forget the command in progress (not argv: it is the caller's output). */
static void begin_command(resp_parser *p)
{
    p->state = ST_START;
    p->eol_hidden = 0;
    p->multibulk_left = 0;
    p->bulk_len = -1;
    p->line_pos = 0;
    p->scan_pos = 0;
    p->nargs = 0;
}

size_t resp_parser_bulk_missing(const resp_parser *p, size_t have)
{
    if (p->state != ST_BULK_DATA || p->bulk_len < 0) return 0;
    size_t end = p->line_pos + (size_t)p->bulk_len + 2;
    return end > have ? end - have : 0;
}

long long resp_parser_bulk_arriving(const resp_parser *p, size_t *start)
{
    if (p->state != ST_BULK_DATA || p->bulk_len < 0) return -1;
    *start = p->line_pos;
    return p->bulk_len;
}

/* Move on to a line starting at pos. */
static void begin_line(resp_parser *p, int state, size_t pos)
{
    p->state = state;
    p->line_pos = pos;
    p->scan_pos = pos;
    p->eol_hidden = 0;
}

/* Find `term` in the line at p->line_pos, resuming where the last search
 * stopped. Redis searches with strchr(), which gives up at a NUL: a NUL
 * before the terminator hides it for good and the request just waits until
 * the size cap trips. We mirror that, remembering it so we never rescan.
 * Returns 1 and the terminator's offset in *eol, or 0 if it is not there. */
static int find_eol(resp_parser *p, const char *buf, size_t len, char term, size_t *eol)
{
    const char *hit, *nul;
    size_t from = p->scan_pos, end;

    if (p->eol_hidden || from >= len) return 0;
    hit = memchr(buf + from, term, len - from);
    end = hit ? (size_t)(hit - buf) : len;
    nul = memchr(buf + from, '\0', end - from);
    if (nul) {
        p->eol_hidden = 1;
        p->scan_pos = (size_t)(nul - buf);
        return 0;
    }
    p->scan_pos = end; /* on a hit, the next search finds it at once */
    if (!hit) return 0;
    *eol = end;
    return 1;
}

/* An inline command: one line up to '\n', a '\r' before it dropped. */
static int parse_inline(resp_parser *p, const char *buf, size_t len)
{
    size_t eol, end;

    if (!find_eol(p, buf, len, '\n', &eol)) {
        if (len > p->lim.max_inline)
            return fail(p, PROTO_ERR "too big inline request");
        return STEP_MORE;
    }
    end = eol > 0 && buf[eol - 1] == '\r' ? eol - 1 : eol;
    if (resp_split_inline(p, buf, end) < 0)
        return fail(p, PROTO_ERR "unbalanced quotes in request");
    p->line_pos = eol + 1; /* the whole line, terminator included */
    /* An empty or all-blank line is no command; Redis just drops it. */
    return p->argc ? STEP_COMMAND : STEP_SKIP;
}

/* A "*<count>\r" line. Like Redis, the byte after '\r' is taken as the
 * '\n' without looking at it. */
static int parse_count(resp_parser *p, const char *buf, size_t len)
{
    size_t eol;
    long long n;

    if (!quick_len(buf, 0, len, '*', &n, &eol)) {
        if (!find_eol(p, buf, len, '\r', &eol)) {
            if (len > p->lim.max_inline)
                return fail(p, PROTO_ERR "too big mbulk count string");
            return STEP_MORE;
        }
        if (eol + 2 > len) return STEP_MORE;
        if (!str_to_ll(buf + 1, eol - 1, &n)) return fail(p, PROTO_ERR "invalid multibulk length");
    }
    if (n > p->lim.max_multibulk) return fail(p, PROTO_ERR "invalid multibulk length");
    if (n > RESP_UNAUTH_MULTIBULK_MAX && p->lim.unauthenticated)
        return fail(p, PROTO_ERR "unauthenticated multibulk length");
    if (n <= 0) {
        p->line_pos = eol + 2; /* "*0" and "*-1" are skipped, not run */
        return STEP_SKIP;
    }
    p->multibulk_left = n;
    begin_line(p, ST_BULK_LEN, eol + 2);
    return STEP_ARGS;
}

/* A "$<len>\r" line. Redis checks the '$' only once the whole line is in,
 * so the size cap is what catches garbage without a '\r'. */
static int parse_bulk_len(resp_parser *p, const char *buf, size_t len)
{
    size_t eol, at = p->line_pos;
    long long n;

    if (!quick_len(buf, at, len, '$', &n, &eol)) {
        if (!find_eol(p, buf, len, '\r', &eol)) {
            if (len - at > p->lim.max_inline)
                return fail(p, PROTO_ERR "too big bulk count string");
            return STEP_MORE;
        }
        if (eol + 2 > len) return STEP_MORE;
        if (buf[at] != '$') {
            /* %c, as Redis formats it: the offending byte verbatim. */
            snprintf(p->errbuf, sizeof(p->errbuf), PROTO_ERR "expected '$', got '%c'", buf[at]);
            return fail(p, p->errbuf);
        }
        if (!str_to_ll(buf + at + 1, eol - at - 1, &n)) return fail(p, PROTO_ERR "invalid bulk length");
    }
    if (n < 0 || n > p->lim.max_bulk) return fail(p, PROTO_ERR "invalid bulk length");
    if (n > RESP_UNAUTH_BULK_MAX && p->lim.unauthenticated)
        return fail(p, PROTO_ERR "unauthenticated bulk length");
    p->bulk_len = n;
    begin_line(p, ST_BULK_DATA, eol + 2);
    return STEP_ARGS;
}

static void push_offset(resp_parser *p, size_t off, size_t len)
{
    if (p->nargs == p->offsets_cap) {
        /* Grown as arguments arrive, never from the declared count: a
         * "*2147483647" header alone must not allocate gigabytes. */
        p->offsets_cap = resp_grow_cap(p->offsets_cap, p->nargs + 1, 8);
        p->offsets = resp_xrealloc(p->offsets, p->offsets_cap * 2 * sizeof(size_t));
    }
    p->offsets[2 * p->nargs] = off;
    p->offsets[2 * p->nargs + 1] = len;
    p->nargs++;
}

/* Turn the collected offsets into slices of the caller's current buffer. */
static void publish_argv(resp_parser *p, const char *buf)
{
    size_t i;

    if (p->argv_cap < p->nargs) {
        p->argv_cap = resp_grow_cap(p->argv_cap, p->nargs, 8);
        p->argv = resp_xrealloc(p->argv, p->argv_cap * sizeof(*p->argv));
    }
    for (i = 0; i < p->nargs; i++) {
        p->argv[i].ptr = buf + p->offsets[2 * i];
        p->argv[i].len = p->offsets[2 * i + 1];
    }
    p->argc = p->nargs;
}

/* The bulk arguments of a multibulk command, resuming mid-argument. */
static int parse_bulks(resp_parser *p, const char *buf, size_t len)
{
    while (p->multibulk_left > 0) {
        size_t need;
        int r;

        if (p->state == ST_BULK_LEN && (r = parse_bulk_len(p, buf, len)) != STEP_ARGS)
            return r;
        /* Payload plus two bytes that, as in Redis, are skipped unchecked. */
        need = (size_t)p->bulk_len + 2;
        if (len < p->line_pos || len - p->line_pos < need) return STEP_MORE;
        push_offset(p, p->line_pos, (size_t)p->bulk_len);
        p->multibulk_left--;
        begin_line(p, ST_BULK_LEN, p->line_pos + need);
    }
    publish_argv(p, buf);
    return STEP_COMMAND;
}

/* Advance the command that starts at buf[0]. On STEP_COMMAND and STEP_SKIP
 * p->line_pos is the command's length. */
static int parse_command(resp_parser *p, const char *buf, size_t len)
{
    int r;

    if (p->state == ST_START) {
        if (len == 0) return STEP_MORE;
        begin_line(p, buf[0] == '*' ? ST_MB_COUNT : ST_INLINE, 0);
    }
    if (p->state == ST_INLINE) return parse_inline(p, buf, len);
    if (p->state == ST_MB_COUNT && (r = parse_count(p, buf, len)) != STEP_ARGS)
        return r;
    return parse_bulks(p, buf, len);
}

resp_status resp_parse(resp_parser *p, const char *buf, size_t len, size_t *consumed)
{
    size_t done = 0;

    *consumed = 0;
    p->argc = 0;
    /* After a protocol error the stream has no trustworthy framing left;
     * stay failed until the caller resets (Redis closes the connection). */
    if (p->error) return RESP_ERROR;
    for (;;) {
        /* (len ? ... : buf) only so an empty NULL buffer is not offset. */
        int r = parse_command(p, len ? buf + done : buf, len - done);

        if (r == STEP_MORE) break;
        if (r == STEP_ERROR) {
            *consumed = done;
            begin_command(p);
            return RESP_ERROR;
        }
        done += p->line_pos;
        begin_command(p);
        if (r == STEP_COMMAND) {
            *consumed = done;
            return RESP_COMMAND;
        }
        p->argc = 0; /* STEP_SKIP: a blank line or "*0"; look further */
    }
    /* What was skipped may go; the partial command is kept as offsets from
     * buf + done, which is where the caller's next call must start. */
    *consumed = done;
    return RESP_NEED_MORE;
}

void resp_parser_init(resp_parser *p, const resp_limits *lim)
{
    memset(p, 0, sizeof(*p));
    if (lim) {
        p->lim = *lim;
    } else {
        p->lim.max_inline = RESP_INLINE_MAX;
        p->lim.max_multibulk = RESP_MULTIBULK_MAX;
        p->lim.max_bulk = RESP_BULK_MAX;
    }
    begin_command(p);
}

void resp_parser_free(resp_parser *p)
{
    free(p->offsets);
    free(p->argv);
    free(p->scratch);
    memset(p, 0, sizeof(*p));
}

const char *resp_parser_error(const resp_parser *p)
{
    return p->error;
}

void resp_parser_reset(resp_parser *p)
{
    begin_command(p);
    p->argc = 0;
    p->error = NULL;
}
