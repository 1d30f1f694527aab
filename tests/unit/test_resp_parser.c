/* test_resp_parser.c - the request parser: every command shape, input split
 * at every byte boundary into moving buffers, the exact error texts, caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

/* ---- expected commands ---- */

typedef struct arg {
    const char *p;
    size_t n;
} arg;

/* sizeof, not strlen: arguments may hold NUL bytes. */
#define A(s) { (s), sizeof(s) - 1 }

typedef struct cmd {
    size_t argc;
    arg argv[6];
} cmd;

/* Commands are compared in one binary-safe rendering: "<argc>{<len>:<bytes>}". */
static void render_args(resp_buf *out, size_t argc, const resp_slice *argv)
{
    char hdr[32];
    size_t i;
    int n = snprintf(hdr, sizeof(hdr), "%zu{", argc);
    resp_buf_append(out, hdr, (size_t)n);
    for (i = 0; i < argc; i++) {
        n = snprintf(hdr, sizeof(hdr), "%zu:", argv[i].len);
        resp_buf_append(out, hdr, (size_t)n);
        resp_buf_append(out, argv[i].ptr, argv[i].len);
        resp_buf_append(out, ",", 1);
    }
    resp_buf_append(out, "}", 1);
}

static void render_expected(resp_buf *out, const cmd *cmds, size_t ncmds)
{
    size_t i, j;
    for (i = 0; i < ncmds; i++) {
        resp_slice sl[6];
        for (j = 0; j < cmds[i].argc; j++) {
            sl[j].ptr = cmds[i].argv[j].p;
            sl[j].len = cmds[i].argv[j].n;
        }
        render_args(out, cmds[i].argc, sl);
    }
}

static void assert_bytes(const resp_buf *got, const resp_buf *want)
{
    if (got->len != want->len || (got->len && memcmp(got->data, want->data, got->len) != 0)) {
        print_error("got  %zu bytes: %.*s\nwant %zu bytes: %.*s\n", got->len, (int)got->len,
                    got->data ? got->data : "", want->len, (int)want->len,
                    want->data ? want->data : "");
        fail();
    }
}

/* ---- a simulated connection: the server's side of the contract ---- */

typedef struct conn {
    resp_parser p;
    char *buf; /* unconsumed input; a fresh malloc after every call */
    size_t len;
    resp_buf out; /* rendered commands */
    int failed;
    char err[128];
} conn;

static void conn_init(conn *c, const resp_limits *lim)
{
    memset(c, 0, sizeof(*c));
    resp_parser_init(&c->p, lim);
    resp_buf_init(&c->out);
}

static void conn_free(conn *c)
{
    resp_parser_free(&c->p);
    resp_buf_free(&c->out);
    free(c->buf);
}

/* Replace the buffer with a fresh copy of buf[drop..] + extra and poison and
 * free the old one, so any pointer the parser kept would be caught (ASan) or
 * read garbage. */
static void conn_move(conn *c, size_t drop, const char *extra, size_t n)
{
    size_t keep = c->len - drop;
    char *nb = malloc(keep + n + 1);
    assert_non_null(nb);
    if (keep) memcpy(nb, c->buf + drop, keep);
    if (n) memcpy(nb + keep, extra, n);
    if (c->buf) {
        memset(c->buf, 0xA5, c->len);
        free(c->buf);
    }
    c->buf = nb;
    c->len = keep + n;
}

static void conn_feed(conn *c, const char *data, size_t n)
{
    conn_move(c, 0, data, n);
    while (!c->failed) {
        size_t consumed = (size_t)-1;
        resp_status st = resp_parse(&c->p, c->buf, c->len, &consumed);

        assert_true(consumed <= c->len);
        if (st == RESP_COMMAND) {
            assert_true(consumed > 0);
            assert_true(c->p.argc > 0);
            render_args(&c->out, c->p.argc, c->p.argv);
            conn_move(c, consumed, NULL, 0);
        } else if (st == RESP_NEED_MORE) {
            conn_move(c, consumed, NULL, 0);
            return;
        } else {
            assert_int_equal(st, RESP_ERROR);
            assert_non_null(resp_parser_error(&c->p));
            snprintf(c->err, sizeof(c->err), "%s", resp_parser_error(&c->p));
            c->failed = 1;
        }
    }
}

/* Feed `in` as chunks cut at the given (sorted) points. */
static void feed_cut(conn *c, const char *in, size_t n, const size_t *cuts, size_t ncuts)
{
    size_t i, at = 0;
    for (i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;
        conn_feed(c, in + at, end - at);
        at = end;
    }
}

/* Parse `in` cut at `cuts` and compare: commands, leftover, error text. */
static void check_cut(const resp_limits *lim, const char *in, size_t n, const size_t *cuts,
                      size_t ncuts, const resp_buf *want, size_t want_left, const char *want_err)
{
    conn c;
    conn_init(&c, lim);
    feed_cut(&c, in, n, cuts, ncuts);
    assert_bytes(&c.out, want);
    if (want_err) {
        assert_true(c.failed);
        assert_string_equal(c.err, want_err);
    } else {
        assert_false(c.failed);
        assert_int_equal(c.len, want_left);
    }
    conn_free(&c);
}

/* Every way of delivering `in`: whole, byte by byte, cut at every single
 * point, and (for short inputs) cut at every pair of points. Each must give
 * the same commands and the same error. */
static void check_all_splits(const resp_limits *lim, const char *in, size_t n, const cmd *cmds,
                             size_t ncmds, size_t want_left, const char *want_err)
{
    resp_buf want;
    size_t i, j, cuts[2];
    size_t *every = malloc((n + 1) * sizeof(size_t));

    resp_buf_init(&want);
    render_expected(&want, cmds, ncmds);

    check_cut(lim, in, n, NULL, 0, &want, want_left, want_err);
    for (i = 0; i + 1 < n; i++) every[i] = i + 1;
    check_cut(lim, in, n, every, n ? n - 1 : 0, &want, want_left, want_err);
    for (i = 0; i <= n; i++) {
        cuts[0] = i;
        check_cut(lim, in, n, cuts, 1, &want, want_left, want_err);
    }
    if (n <= 400) {
        for (i = 0; i <= n; i++) {
            for (j = i; j <= n; j++) {
                cuts[0] = i;
                cuts[1] = j;
                check_cut(lim, in, n, cuts, 2, &want, want_left, want_err);
            }
        }
    }
    free(every);
    resp_buf_free(&want);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- shapes and splitting ---- */

static const char PIPELINE[] =
    "*3\r\n$3\r\nSET\r\n$7\r\nk\0e\r\ny\n\r\n$4\r\n\0\0\r\n\r\n" /* binary args */
    "PING\r\n"
    "\r\n"         /* empty line: skipped */
    "   \t \n"     /* blanks only: skipped */
    "*0\r\n"       /* empty multibulk: skipped */
    "*-1\r\n"      /* null multibulk: skipped */
    "set \"a b\" 'c\\'d' \"\\x41\\n\"\n" /* inline quoting, bare LF */
    "\"\"\n"       /* one empty argument */
    "*1\r\n$0\r\n\r\n"
    "*2\r\n$4\r\nECHO\r\n$10\r\n0123456789\r\n"
    "ECHO \"\" x\r\n"
    "*1\r\n$4\r\n*1\r\n\r\n" /* a payload that looks like a header */
    "  GET   k  \r\n";

static const cmd PIPELINE_CMDS[] = {
    {3, {A("SET"), A("k\0e\r\ny\n"), A("\0\0\r\n")}},
    {1, {A("PING")}},
    {4, {A("set"), A("a b"), A("c'd"), A("A\n")}},
    {1, {A("")}},
    {1, {A("")}},
    {2, {A("ECHO"), A("0123456789")}},
    {3, {A("ECHO"), A(""), A("x")}},
    {1, {A("*1\r\n")}},
    {2, {A("GET"), A("k")}},
};

static void test_pipeline_every_split(void **state)
{
    (void)state;
    check_all_splits(NULL, PIPELINE, sizeof(PIPELINE) - 1, PIPELINE_CMDS,
                     ARRAY_LEN(PIPELINE_CMDS), 0, NULL);
}

/* A trailing partial command stays buffered: nothing is consumed from it. */
static void test_pipeline_partial_tail(void **state)
{
    static const char in[] = "PING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk";
    static const cmd cmds[] = {{1, {A("PING")}}};
    (void)state;
    check_all_splits(NULL, in, sizeof(in) - 1, cmds, 1, sizeof(in) - 1 - 6, NULL);
}

static void test_single_command_consumed(void **state)
{
    static const char in[] = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n$4\r\nPING\r\n";
    resp_parser p;
    size_t consumed = 0;
    (void)state;

    resp_parser_init(&p, NULL);
    assert_int_equal(resp_parse(&p, in, sizeof(in) - 1, &consumed), RESP_COMMAND);
    assert_int_equal(consumed, 22);
    assert_int_equal(p.argc, 2);
    /* zero copy: the slices point into the caller's buffer */
    assert_ptr_equal(p.argv[0].ptr, in + 8);
    assert_ptr_equal(p.argv[1].ptr, in + 17);
    assert_int_equal(p.argv[1].len, 3);
    assert_int_equal(resp_parse(&p, in + 22, sizeof(in) - 1 - 22, &consumed), RESP_COMMAND);
    assert_int_equal(consumed, 14);
    assert_int_equal(p.argc, 1);
    assert_memory_equal(p.argv[0].ptr, "PING", 4);
    assert_int_equal(resp_parse(&p, in + 36, 0, &consumed), RESP_NEED_MORE);
    assert_int_equal(consumed, 0);
    assert_int_equal(p.argc, 0);
    assert_int_equal(resp_parse(&p, NULL, 0, &consumed), RESP_NEED_MORE);
    resp_parser_free(&p);
}

/* Skippable input before a partial command is reported as consumed, and
 * the next call starts after it. */
static void test_skipped_prefix_consumed_on_need_more(void **state)
{
    static const char in[] = "\r\n*0\r\n   \n*-1\r\n*1\r\n$3\r\nfo";
    static const char rest[] = "*1\r\n$3\r\nfoo\r\n";
    resp_parser p;
    size_t consumed = 0;
    (void)state;

    resp_parser_init(&p, NULL);
    assert_int_equal(resp_parse(&p, in, sizeof(in) - 1, &consumed), RESP_NEED_MORE);
    assert_int_equal(consumed, 15);
    assert_int_equal(resp_parse(&p, rest, sizeof(rest) - 1, &consumed), RESP_COMMAND);
    assert_int_equal(consumed, sizeof(rest) - 1);
    assert_int_equal(p.argc, 1);
    assert_memory_equal(p.argv[0].ptr, "foo", 3);
    resp_parser_free(&p);
}

static void test_only_skippable(void **state)
{
    static const char in[] = "\r\n\n \r\n*0\r\n*-1\r\n*-9223372036854775808\r\n\t\n";
    (void)state;
    check_all_splits(NULL, in, sizeof(in) - 1, NULL, 0, 0, NULL);
}

static void test_inline_line_endings(void **state)
{
    /* LF alone, CRLF, and a CR that is not before the LF (a blank). */
    static const char in[] = "A\nB\r\nC\r D\r\r\nE";
    static const cmd cmds[] = {
        {1, {A("A")}}, {1, {A("B")}}, {2, {A("C"), A("D")}},
    };
    (void)state;
    check_all_splits(NULL, in, sizeof(in) - 1, cmds, ARRAY_LEN(cmds), 1, NULL);
}

/* Redis skips the two bytes after '\r' and after a payload unchecked. */
static void test_unchecked_terminators(void **state)
{
    static const char in[] = "*2\rX$3\r!foo??$1\r\nbYZ";
    static const cmd cmds[] = {{2, {A("foo"), A("b")}}};
    (void)state;
    check_all_splits(NULL, in, sizeof(in) - 1, cmds, 1, 0, NULL);
}

/* Redis finds line ends with strchr(): a NUL before the terminator hides
 * it, so the request waits, and only the size cap ends the wait. */
static void test_nul_hides_line_end(void **state)
{
    resp_limits lim = {16, RESP_MULTIBULK_MAX, RESP_BULK_MAX, 0};
    static const char in1[] = "PING\0\r\n";
    static const char in2[] = "*1\0\r\n";
    static const char in3[] = "*1\r\n$3\0\r\nfoo\r\n";
    static const char pad[] = "0123456789abcdef";
    conn c;
    (void)state;

    conn_init(&c, &lim);
    conn_feed(&c, in1, sizeof(in1) - 1);
    assert_false(c.failed);
    assert_int_equal(c.len, sizeof(in1) - 1);
    conn_feed(&c, pad, 9); /* 16 bytes buffered: still waiting */
    assert_false(c.failed);
    conn_feed(&c, pad, 1);
    assert_true(c.failed);
    assert_string_equal(c.err, "Protocol error: too big inline request");
    conn_free(&c);

    check_all_splits(&lim, in2, sizeof(in2) - 1, NULL, 0, sizeof(in2) - 1, NULL);
    conn_init(&c, &lim);
    conn_feed(&c, in2, sizeof(in2) - 1);
    conn_feed(&c, pad, 16);
    assert_string_equal(c.err, "Protocol error: too big mbulk count string");
    conn_free(&c);

    conn_init(&c, &lim);
    conn_feed(&c, in3, sizeof(in3) - 1);
    assert_false(c.failed);
    conn_feed(&c, pad, 16);
    assert_string_equal(c.err, "Protocol error: too big bulk count string");
    conn_free(&c);
}

/* ---- errors: exact texts ---- */

typedef struct err_case {
    const char *in;
    size_t n;
    const char *err;
} err_case;

#define E(s, e) { (s), sizeof(s) - 1, (e) }
#define BAD_MB "Protocol error: invalid multibulk length"
#define BAD_BULK "Protocol error: invalid bulk length"

static void test_error_texts(void **state)
{
    static const err_case cases[] = {
        E("*x\r\n", BAD_MB),
        E("*\r\n", BAD_MB),
        E("*01\r\n", BAD_MB),
        E("*-0\r\n", BAD_MB),
        E("*+1\r\n", BAD_MB),
        E("* 1\r\n", BAD_MB),
        E("*1 \r\n", BAD_MB),
        E("*-\r\n", BAD_MB),
        E("*1x\r\n", BAD_MB),
        E("*9223372036854775808\r\n", BAD_MB),  /* LLONG_MAX + 1 */
        E("*-9223372036854775809\r\n", BAD_MB), /* LLONG_MIN - 1 */
        E("*000000000000000000001\r\n", BAD_MB),
        E("*2147483648\r\n", BAD_MB), /* one above the INT_MAX default cap */
        E("*1\r\n$-1\r\n", BAD_BULK),
        E("*1\r\n$\r\n", BAD_BULK),
        E("*1\r\n$01\r\n", BAD_BULK),
        E("*1\r\n$+1\r\n", BAD_BULK),
        E("*1\r\n$ 1\r\n", BAD_BULK),
        E("*1\r\n$1 \r\n", BAD_BULK),
        E("*1\r\n$-0\r\n", BAD_BULK),
        E("*1\r\n$536870913\r\n", BAD_BULK), /* 512 MiB + 1 */
        E("*1\r\n$99999999999999999999\r\n", BAD_BULK),
        E("*1\r\nX\r\n", "Protocol error: expected '$', got 'X'"),
        E("*1\r\n:1\r\n", "Protocol error: expected '$', got ':'"),
        E("*1\r\n\r\n", "Protocol error: expected '$', got '\r'"),
        E("*1\r\n\n\r\n", "Protocol error: expected '$', got '\n'"),
        E("*1\r\n\xff\r\n", "Protocol error: expected '$', got '\xff'"),
        E("*2\r\n$1\r\na\r\n*1\r\n", "Protocol error: expected '$', got '*'"),
        E("SET \"a\r\n", "Protocol error: unbalanced quotes in request"),
        E("SET \"a\"b\r\n", "Protocol error: unbalanced quotes in request"),
        E("SET 'a\n", "Protocol error: unbalanced quotes in request"),
    };
    size_t i;
    (void)state;

    for (i = 0; i < ARRAY_LEN(cases); i++)
        check_all_splits(NULL, cases[i].in, cases[i].n, NULL, 0, 0, cases[i].err);
}

/* Commands before a bad one are still delivered; the error follows. */
static void test_error_after_commands(void **state)
{
    static const char in[] = "PING\r\n*1\r\n$4\r\nECHO\r\n*1\r\n$x\r\n*1\r\n$4\r\nPING\r\n";
    static const cmd cmds[] = {{1, {A("PING")}}, {1, {A("ECHO")}}};
    (void)state;
    check_all_splits(NULL, in, sizeof(in) - 1, cmds, 2, 0, BAD_BULK);
}

static void test_error_is_sticky_until_reset(void **state)
{
    static const char bad[] = "\r\n*x\r\n";
    static const char good[] = "PING\r\n";
    resp_parser p;
    size_t consumed = 99;
    (void)state;

    resp_parser_init(&p, NULL);
    assert_int_equal(resp_parse(&p, bad, sizeof(bad) - 1, &consumed), RESP_ERROR);
    assert_int_equal(consumed, 2); /* the blank line before it was skipped */
    assert_string_equal(resp_parser_error(&p), BAD_MB);
    assert_int_equal(resp_parse(&p, good, sizeof(good) - 1, &consumed), RESP_ERROR);
    assert_int_equal(consumed, 0);
    resp_parser_reset(&p);
    assert_null(resp_parser_error(&p));
    assert_int_equal(resp_parse(&p, good, sizeof(good) - 1, &consumed), RESP_COMMAND);
    assert_int_equal(consumed, 6);
    resp_parser_free(&p);
}

static void test_reset_forgets_partial_command(void **state)
{
    static const char part[] = "*2\r\n$3\r\nGET\r\n$";
    static const char good[] = "*1\r\n$4\r\nPING\r\n";
    resp_parser p;
    size_t consumed;
    (void)state;

    resp_parser_init(&p, NULL);
    assert_int_equal(resp_parse(&p, part, sizeof(part) - 1, &consumed), RESP_NEED_MORE);
    resp_parser_reset(&p);
    assert_int_equal(resp_parse(&p, good, sizeof(good) - 1, &consumed), RESP_COMMAND);
    assert_int_equal(p.argc, 1);
    assert_memory_equal(p.argv[0].ptr, "PING", 4);
    resp_parser_free(&p);
}

/* ---- caps ---- */

static void test_caps(void **state)
{
    resp_limits lim = {16, 4, 8, 0};
    static const char cnt_ok[] = "*4\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n";
    static const cmd cnt_cmd[] = {{4, {A(""), A(""), A(""), A("")}}};
    static const char bulk_ok[] = "*1\r\n$8\r\n12345678\r\n";
    static const cmd bulk_cmd[] = {{1, {A("12345678")}}};
    static const char inl16[] = "AAAAAAAAAAAAAAAA";
    static const char inl17[] = "AAAAAAAAAAAAAAAAA";
    static const char mb16[] = "*111111111111111";
    static const char mb17[] = "*1111111111111111";
    static const char bl16[] = "*1\r\n$111111111111111";
    static const char bl17[] = "*1\r\n$1111111111111111";
    (void)state;

    check_all_splits(&lim, cnt_ok, sizeof(cnt_ok) - 1, cnt_cmd, 1, 0, NULL);
    check_all_splits(&lim, "*5\r\n", 4, NULL, 0, 0, BAD_MB);
    check_all_splits(&lim, bulk_ok, sizeof(bulk_ok) - 1, bulk_cmd, 1, 0, NULL);
    check_all_splits(&lim, "*1\r\n$9\r\n", 8, NULL, 0, 0, BAD_BULK);

    /* Exactly at the cap a line without its end still waits; one byte
     * more and it is refused. */
    check_all_splits(&lim, inl16, sizeof(inl16) - 1, NULL, 0, 16, NULL);
    check_all_splits(&lim, inl17, sizeof(inl17) - 1, NULL, 0, 0, "Protocol error: too big inline request");
    check_all_splits(&lim, mb16, sizeof(mb16) - 1, NULL, 0, 16, NULL);
    check_all_splits(&lim, mb17, sizeof(mb17) - 1, NULL, 0, 0, "Protocol error: too big mbulk count string");
    /* the bulk line is measured from its own start, not the command's */
    check_all_splits(&lim, bl16, sizeof(bl16) - 1, NULL, 0, 20, NULL);
    check_all_splits(&lim, bl17, sizeof(bl17) - 1, NULL, 0, 0, "Protocol error: too big bulk count string");
}

/* Before AUTH Redis allows 10 arguments and 16 KiB bulks, with their own
 * error texts; authenticated clients keep the normal caps. */
static void test_unauthenticated_caps(void **state)
{
    resp_limits lim = {RESP_INLINE_MAX, RESP_MULTIBULK_MAX, RESP_BULK_MAX, 1};
    static const char ten[] = "*10\r\n";
    (void)state;
    check_all_splits(&lim, ten, sizeof(ten) - 1, NULL, 0, sizeof(ten) - 1, NULL);
    check_all_splits(&lim, "*11\r\n", 5, NULL, 0, 0, "Protocol error: unauthenticated multibulk length");
    check_all_splits(&lim, "*1\r\n$16385\r\n", 13, NULL, 0, 0, "Protocol error: unauthenticated bulk length");
    lim.unauthenticated = 0;
    check_all_splits(&lim, "*11\r\n", 5, NULL, 0, 5, NULL);
    check_all_splits(&lim, "*1\r\n$16385\r\n", 13, NULL, 0, 13, NULL);
}

/* Like Redis the cap applies only while the line end is missing: a long
 * line that arrives whole is judged on its content. */
static void test_cap_applies_only_without_line_end(void **state)
{
    resp_limits lim = {16, 4, 8, 0};
    static const char inl[] = "SET key 0123456789abcdef0123\r\n";
    static const char mb[] = "*1111111111111111111\r\n";
    static const char bl[] = "*1\r\n$0000000000000000001\r\n";
    static const cmd inl_cmd[] = {{3, {A("SET"), A("key"), A("0123456789abcdef0123")}}};
    resp_buf want;
    (void)state;

    resp_buf_init(&want);
    render_expected(&want, inl_cmd, 1);
    check_cut(&lim, inl, sizeof(inl) - 1, NULL, 0, &want, 0, NULL);
    resp_buf_free(&want);
    resp_buf_init(&want);
    check_cut(&lim, mb, sizeof(mb) - 1, NULL, 0, &want, 0, BAD_MB);
    check_cut(&lim, bl, sizeof(bl) - 1, NULL, 0, &want, 0, BAD_BULK);
    resp_buf_free(&want);
}

/* A huge declared count must not allocate up front. */
static void test_huge_count_does_not_preallocate(void **state)
{
    static const char in[] = "*2147483647\r\n$1\r\na\r\n";
    resp_parser p;
    size_t consumed;
    (void)state;

    resp_parser_init(&p, NULL);
    assert_int_equal(resp_parse(&p, in, sizeof(in) - 1, &consumed), RESP_NEED_MORE);
    assert_true(p.offsets_cap < 1024);
    resp_parser_free(&p);
}

/* ---- scan position: no rescans ---- */

/* While a line grows one byte at a time the search resumes where it
 * stopped, so the total work is linear in the line length. */
static void test_line_search_resumes(void **state)
{
    enum { N = 60000 };
    char *in = malloc(N + 2);
    resp_parser p;
    size_t i, consumed;
    (void)state;

    memset(in, 'a', N);
    in[N] = '\r';
    in[N + 1] = '\n';
    resp_parser_init(&p, NULL);
    for (i = 1; i <= N; i++) {
        assert_int_equal(resp_parse(&p, in, i, &consumed), RESP_NEED_MORE);
        assert_int_equal(p.scan_pos, i);
    }
    assert_int_equal(resp_parse(&p, in, N + 2, &consumed), RESP_COMMAND);
    assert_int_equal(consumed, N + 2);
    assert_int_equal(p.argc, 1);
    assert_int_equal(p.argv[0].len, N);
    resp_parser_free(&p);
    free(in);
}

/* A 32 MiB argument arriving 16 KiB at a time into a buffer that realloc
 * keeps moving: correct and linear. */
static void test_big_bulk_streamed(void **state)
{
    enum { BULK = 32 << 20, CHUNK = 16 << 10 };
    static const char head[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$33554432\r\n";
    size_t total = sizeof(head) - 1 + BULK + 2, sent = 0, cap = 0, len = 0, i;
    char *src = malloc(total), *buf = NULL;
    resp_parser p;
    resp_status st = RESP_NEED_MORE;
    size_t consumed = 0;
    (void)state;

    memcpy(src, head, sizeof(head) - 1);
    for (i = 0; i < BULK; i++) src[sizeof(head) - 1 + i] = (char)(i * 7 + (i >> 12));
    memcpy(src + total - 2, "\r\n", 2);

    resp_parser_init(&p, NULL);
    while (sent < total) {
        size_t n = total - sent < CHUNK ? total - sent : CHUNK;
        if (len + n > cap) {
            cap = cap ? cap * 2 : CHUNK;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        memcpy(buf + len, src + sent, n);
        len += n;
        sent += n;
        st = resp_parse(&p, buf, len, &consumed);
        if (sent < total) {
            assert_int_equal(st, RESP_NEED_MORE);
            assert_int_equal(consumed, 0);
        }
    }
    assert_int_equal(st, RESP_COMMAND);
    assert_int_equal(consumed, total);
    assert_int_equal(p.argc, 3);
    assert_int_equal(p.argv[2].len, BULK);
    assert_ptr_equal(p.argv[2].ptr, buf + sizeof(head) - 1);
    assert_memory_equal(p.argv[2].ptr, src + sizeof(head) - 1, BULK);
    resp_parser_free(&p);
    free(buf);
    free(src);
}

/* Steady state reuses the parser's arrays: no growth once warmed up. */
static void test_arrays_are_reused(void **state)
{
    static const char in[] = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\nSET \"x y\" z\r\n";
    resp_parser p;
    size_t consumed, round;
    void *argv = NULL, *offsets = NULL, *scratch = NULL;
    (void)state;

    resp_parser_init(&p, NULL);
    for (round = 0; round < 3; round++) {
        assert_int_equal(resp_parse(&p, in, sizeof(in) - 1, &consumed), RESP_COMMAND);
        assert_int_equal(resp_parse(&p, in + consumed, sizeof(in) - 1 - consumed, &consumed),
                         RESP_COMMAND);
        assert_int_equal(p.argc, 3);
        assert_memory_equal(p.argv[1].ptr, "x y", 3);
        if (round == 0) {
            argv = p.argv;
            offsets = p.offsets;
            scratch = p.scratch;
        }
        assert_ptr_equal(argv, p.argv);
        assert_ptr_equal(offsets, p.offsets);
        assert_ptr_equal(scratch, p.scratch);
    }
    resp_parser_free(&p);
}

/* ---- inline quoting (sdssplitargs) ---- */

typedef struct quote_case {
    const char *line;
    int argc; /* -1: unbalanced quotes */
    arg argv[4];
} quote_case;

static void test_inline_quoting(void **state)
{
    static const quote_case cases[] = {
        {"a b c", 3, {A("a"), A("b"), A("c")}},
        {"  a   b  ", 2, {A("a"), A("b")}},
        {"\"a b\" c", 2, {A("a b"), A("c")}},
        {"\"a\\\"b\"", 1, {A("a\"b")}},
        {"\"\\n\\r\\t\\b\\a\\\\\\\"\"", 1, {A("\n\r\t\b\a\\\"")}},
        {"\"\\x41\\x4a\\x4A\\x00z\"", 1, {A("AJJ\0z")}},
        {"\"\\xff\\x7F\"", 1, {A("\xff\x7f")}},
        {"\"\\x4\"", 1, {A("x4")}},
        {"\"\\xZZ\"", 1, {A("xZZ")}},
        {"\"\\q\\'\"", 1, {A("q'")}},
        {"'a\\'b'", 1, {A("a'b")}},
        {"'a\\nb'", 1, {A("a\\nb")}},
        {"'a\"b'", 1, {A("a\"b")}},
        {"\"a'b\"", 1, {A("a'b")}},
        {"foo\"bar baz\"", 1, {A("foobar baz")}},
        {"a'b c'", 1, {A("ab c")}},
        {"\"\"", 1, {A("")}},
        {"'' x", 2, {A(""), A("x")}},
        {"'a' 'b'", 2, {A("a"), A("b")}},
        {"x \"\\\"\"", 2, {A("x"), A("\"")}},
        {"\"a\"\tb", 2, {A("a"), A("b")}},
        {"a\tb", 2, {A("a"), A("b")}},
        {"a\vb", 1, {A("a\vb")}},     /* \v ends no bare argument... */
        {"\va", 1, {A("a")}},          /* ...but is a blank between them */
        {"a\f b", 2, {A("a\f"), A("b")}},
        {"\"a\"\vb", 2, {A("a"), A("b")}},
        {"a\r b", 2, {A("a"), A("b")}},
        {"\"a\rb\"", 1, {A("a\rb")}},
        {"\xff\xfe", 1, {A("\xff\xfe")}},
        {"\"a b\"", 1, {A("a b")}},
        {"\"a\"b", -1, {{0}}},
        {"'a'b", -1, {{0}}},
        {"\"abc", -1, {{0}}},
        {"'abc", -1, {{0}}},
        {"\"abc\\", -1, {{0}}},
        {"'\\\\'", -1, {{0}}}, /* \\ is no escape in '...': \' then eats the quote */
        {"\"a\"\"b\"", -1, {{0}}},
        {"a\"b\"c", -1, {{0}}},
        {"\"", -1, {{0}}},
    };
    static const char *ends[] = {"\r\n", "\n"};
    size_t i, e;
    char line[128];
    (void)state;

    for (i = 0; i < ARRAY_LEN(cases); i++) {
        for (e = 0; e < 2; e++) {
            cmd want = {0, {{0}}};
            int n = snprintf(line, sizeof(line), "%s%s", cases[i].line, ends[e]);
            if (cases[i].argc < 0) {
                check_all_splits(NULL, line, (size_t)n, NULL, 0, 0,
                                 "Protocol error: unbalanced quotes in request");
                continue;
            }
            want.argc = (size_t)cases[i].argc;
            memcpy(want.argv, cases[i].argv, sizeof(cases[i].argv));
            check_all_splits(NULL, line, (size_t)n, &want, 1, 0, NULL);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_every_split),
        cmocka_unit_test(test_pipeline_partial_tail),
        cmocka_unit_test(test_single_command_consumed),
        cmocka_unit_test(test_skipped_prefix_consumed_on_need_more),
        cmocka_unit_test(test_only_skippable),
        cmocka_unit_test(test_inline_line_endings),
        cmocka_unit_test(test_unchecked_terminators),
        cmocka_unit_test(test_nul_hides_line_end),
        cmocka_unit_test(test_error_texts),
        cmocka_unit_test(test_error_after_commands),
        cmocka_unit_test(test_error_is_sticky_until_reset),
        cmocka_unit_test(test_reset_forgets_partial_command),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_unauthenticated_caps),
        cmocka_unit_test(test_cap_applies_only_without_line_end),
        cmocka_unit_test(test_huge_count_does_not_preallocate),
        cmocka_unit_test(test_line_search_resumes),
        cmocka_unit_test(test_big_bulk_streamed),
        cmocka_unit_test(test_arrays_are_reused),
        cmocka_unit_test(test_inline_quoting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
