/* resp.h - the RESP codec: an incremental, resumable request parser and a
 * reply writer for RESP2 and RESP3. No I/O: callers own every buffer. */
#ifndef LATCHD_RESP_H
#define LATCHD_RESP_H

#include <stddef.h>
#include <stdint.h>

/* ---- growable byte buffer (replies are appended here) ---- */

typedef struct resp_buf {
    char *data;
    size_t len;
    size_t cap;
} resp_buf;

void resp_buf_init(resp_buf *b);
void resp_buf_free(resp_buf *b);
/* Room for exactly n more bytes (no doubling): for a size known ahead. */
void resp_buf_reserve_exact(resp_buf *b, size_t n);
/* Make room for n more bytes; allocation failure is mem.h's policy
 * (mem_oom: message + abort). */
void resp_buf_reserve(resp_buf *b, size_t n);
void resp_buf_append(resp_buf *b, const void *p, size_t n);
/* Append as printf would, whatever the length; a NUL is left right past
 * len (not counted), so data is a C string of what was appended so far. */
void resp_buf_appendf(resp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drop the first n bytes (after a partial write). */
void resp_buf_consume(resp_buf *b, size_t n);

/* ---- request parser ---- */

typedef struct resp_slice {
    const char *ptr;
    size_t len;
} resp_slice;

typedef enum resp_status {
    RESP_COMMAND,   /* one full command: argv/argc valid, *consumed set */
    RESP_NEED_MORE, /* input ends mid-command: call again with more bytes */
    RESP_ERROR      /* protocol error: resp_parser_error() has the text */
} resp_status;

typedef struct resp_limits {
    size_t max_inline;      /* 64 KiB: longest inline line / count line */
    long long max_multibulk;/* INT_MAX like Redis 7 */
    long long max_bulk;     /* proto-max-bulk-len, 512 MiB */
    int unauthenticated;    /* Redis's tighter caps before AUTH (10 args, 16 KiB bulks) */
} resp_limits;

#define RESP_INLINE_MAX (64 * 1024)
#define RESP_MULTIBULK_MAX 2147483647LL
#define RESP_BULK_MAX (512LL * 1024 * 1024)
#define RESP_UNAUTH_MULTIBULK_MAX 10
#define RESP_UNAUTH_BULK_MAX 16384

typedef struct resp_parser {
    resp_limits lim;
    /* resumable state; offsets are relative to the start of the command so
     * the caller may move (realloc/compact) its buffer between calls */
    int state;
    int eol_hidden;  /* a NUL came before the line end (Redis uses strchr) */
    long long multibulk_left;
    long long bulk_len;
    size_t line_pos; /* start of the line or payload being read */
    size_t scan_pos; /* the line-end search resumes here */
    size_t nargs;    /* (offset,len) pairs collected so far */
    size_t *offsets; /* argv as (offset,len) pairs while parsing */
    size_t offsets_cap;
    /* output */
    resp_slice *argv;
    size_t argc;
    size_t argv_cap;
    char *scratch;   /* unescaped inline arguments live here */
    size_t scratch_cap;
    const char *error;
    char errbuf[48]; /* formatted error text, when it needs the bad byte */
} resp_parser;

void resp_parser_init(resp_parser *p, const resp_limits *lim);
void resp_parser_free(resp_parser *p);
/* Parse the next command from buf[0..len), where buf starts at the first
 * byte not yet consumed. On RESP_COMMAND, p->argv[0..argc) point into buf
 * (or into the parser's scratch for inline commands) and stay valid until
 * the next call; *consumed is the command's length in bytes. Empty inline
 * lines and "*0"/"*-1" headers are skipped (counted in *consumed) without
 * yielding a command. On RESP_NEED_MORE, *consumed tells how many bytes of
 * skippable prefix may be dropped; call again with the rest plus new bytes. */
resp_status resp_parse(resp_parser *p, const char *buf, size_t len, size_t *consumed);
/* "Protocol error: ..." text of the last RESP_ERROR. */
const char *resp_parser_error(const resp_parser *p);
/* Forget any partial command (e.g. after the caller resets its buffer). */
void resp_parser_reset(resp_parser *p);
/* While a bulk's payload is arriving: the bytes still missing to end it
 * (its CRLF included), given the `have` bytes of the command buffered so
 * far; else 0. A caller can size its buffer for a big argument at once. */
size_t resp_parser_bulk_missing(const resp_parser *p, size_t have);
/* While a bulk's payload is arriving: its declared length, and in *start
 * where the payload begins in the command's bytes; else -1. */
long long resp_parser_bulk_arriving(const resp_parser *p, size_t *start);

/* ---- reply writer ----
 * proto is 2 or 3. RESP3 types degrade exactly as Redis 7 writes them for
 * RESP2: map -> flat array of 2n, set -> array, null -> $-1 (or *-1 for the
 * array flavour), double -> bulk string, bool -> :1/:0, verbatim -> bulk,
 * push -> array. */

void resp_add_simple(resp_buf *b, const char *s, size_t len);  /* +s */
void resp_add_status(resp_buf *b, const char *s);              /* +s (NUL-terminated) */
void resp_add_error(resp_buf *b, const char *s, size_t len);   /* -s, \r\n stripped to spaces */
void resp_add_errorf(resp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void resp_add_int(resp_buf *b, long long v);                  /* :v */
void resp_add_bulk(resp_buf *b, const void *p, size_t len);    /* $len */
void resp_add_bulk_cstr(resp_buf *b, const char *s);
void resp_add_bulk_ll(resp_buf *b, long long v);              /* integer as bulk string */
void resp_add_null(resp_buf *b, int proto);                   /* $-1 / _ */
void resp_add_null_array(resp_buf *b, int proto);             /* *-1 / _ */
void resp_add_array_len(resp_buf *b, long long n);             /* *n */
void resp_add_map_len(resp_buf *b, int proto, long long n);    /* %n / *2n */
void resp_add_set_len(resp_buf *b, int proto, long long n);    /* ~n / *n */
void resp_add_push_len(resp_buf *b, int proto, long long n);   /* >n / *n */
void resp_add_attribute_len(resp_buf *b, long long n);          /* |n: RESP3 only */
void resp_add_double(resp_buf *b, int proto, double d);       /* ,d / $ bulk, Redis's %.17g formatting, inf/-inf/nan */
void resp_add_double_text(resp_buf *b, int proto, const char *s, size_t len); /* ,s / $ bulk: a double already formatted */
void resp_add_bool(resp_buf *b, int proto, int v);            /* #t/#f / :1/:0 */
void resp_add_verbatim(resp_buf *b, int proto, const char *fmt3, const char *p, size_t len); /* =len+4 fmt: / $ */
void resp_add_bignum(resp_buf *b, int proto, const char *digits, size_t len); /* (n / $ */

/* ---- reply reader ----
 * Walks a complete reply, item by item, as the writer above produced it
 * (scripts turn command replies into Lua values with it). An aggregate's
 * elements are the items that follow it. */
typedef struct resp_reply {
    char type;          /* the RESP type byte: + - : $ * % ~ _ # , ( = > | */
    const char *str;    /* payload of + - $ , ( =  (for '=' without "fmt:") */
    size_t len;
    long long n;        /* ':' value; element count of * ~ > (pairs for % |);
                         * '#' 1/0; -1 for the RESP2 nulls $-1 and *-1 */
    const char *fmt;    /* '=': its 3-byte format */
} resp_reply;

/* Reads the item at *pos and advances past it; 0 if the bytes there are
 * not a well-formed item. */
int resp_read_reply(const char **pos, const char *end, resp_reply *out);


#endif
