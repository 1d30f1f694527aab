/* test_resp_writer.c - byte-exact output of every reply writer in RESP2 and
 * RESP3, and the resp_buf they append to. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "resp.h"

/* Assert the buffer holds exactly `want` (binary-safe), then empty it. */
#define EXPECT(b, want) expect_bytes((b), (want), sizeof(want) - 1, __LINE__)

static void expect_bytes(resp_buf *b, const char *want, size_t n, int line)
{
    if (b->len != n || (n && memcmp(b->data, want, n) != 0)) {
        print_error("line %d: got %zu bytes \"%.*s\", want %zu bytes \"%.*s\"\n", line, b->len,
                    (int)b->len, b->data ? b->data : "", n, (int)n, want);
        fail();
    }
    resp_buf_consume(b, b->len);
}

/* ---- resp_buf ---- */

static void test_buf_init_free(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    resp_buf_append(&b, NULL, 0); /* empty append allocates nothing */
    assert_null(b.data);
    resp_buf_free(&b);
    assert_null(b.data);
    resp_buf_append(&b, "x", 1);
    resp_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
}

static void test_buf_reserve_grows_geometrically(void **state)
{
    resp_buf b;
    size_t i, grows = 0, cap = 0;
    (void)state;

    resp_buf_init(&b);
    resp_buf_reserve(&b, 10);
    assert_true(b.cap >= 10);
    for (i = 0; i < 100000; i++) {
        resp_buf_append(&b, "ab", 2);
        if (b.cap != cap) {
            grows++;
            cap = b.cap;
        }
    }
    assert_int_equal(b.len, 200000);
    assert_true(grows < 20);
    for (i = 0; i < 200000; i += 2) assert_memory_equal(b.data + i, "ab", 2);
    /* reserve leaves len alone and guarantees the room */
    resp_buf_reserve(&b, b.cap); /* more than is free */
    assert_true(b.cap - b.len >= 200000);
    assert_int_equal(b.len, 200000);
    resp_buf_free(&b);
}

static void test_buf_consume(void **state)
{
    resp_buf b;
    (void)state;

    resp_buf_init(&b);
    resp_buf_append(&b, "hello world", 11);
    resp_buf_consume(&b, 0);
    assert_int_equal(b.len, 11);
    resp_buf_consume(&b, 6);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "world", 5);
    resp_buf_append(&b, "!\0", 2);
    assert_int_equal(b.len, 7);
    assert_memory_equal(b.data, "world!\0", 7);
    resp_buf_consume(&b, 7);
    assert_int_equal(b.len, 0);
    resp_buf_append(&b, "ab", 2);
    resp_buf_consume(&b, 100); /* more than there is: empty, no harm */
    assert_int_equal(b.len, 0);
    resp_buf_free(&b);
}

/* Growth that cannot be had is fatal: message on stderr, then abort(). */
static void test_buf_overflow_aborts(void **state)
{
    pid_t pid;
    int status;
    (void)state;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        resp_buf b;
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, 2);
        resp_buf_init(&b);
        resp_buf_append(&b, "x", 1);
        resp_buf_reserve(&b, SIZE_MAX);
        _exit(0); /* not reached if the reserve aborts */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

/* ---- simple, status, error ---- */

static void test_simple_and_status(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_simple(&b, "OK", 2);
    EXPECT(&b, "+OK\r\n");
    resp_add_simple(&b, "QUEUEDxx", 6);
    EXPECT(&b, "+QUEUED\r\n");
    resp_add_simple(&b, "", 0);
    EXPECT(&b, "+\r\n");
    resp_add_status(&b, "PONG");
    EXPECT(&b, "+PONG\r\n");
    resp_buf_free(&b);
}

static void test_error(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_error(&b, "ERR unknown command", 19);
    EXPECT(&b, "-ERR unknown command\r\n");
    /* CR and LF anywhere become spaces, so the reply stays one line */
    resp_add_error(&b, "ERR a\r\nb\rc\nd\r\n", 14);
    EXPECT(&b, "-ERR a  b c d  \r\n");
    resp_add_error(&b, "\n", 1);
    EXPECT(&b, "- \r\n");
    resp_add_error(&b, "", 0);
    EXPECT(&b, "-\r\n");
    /* the bytes before it in the buffer are left alone */
    resp_add_simple(&b, "OK", 2);
    resp_add_error(&b, "E\rX", 3);
    EXPECT(&b, "+OK\r\n-E X\r\n");
    resp_buf_free(&b);
}

static void test_errorf(void **state)
{
    resp_buf b;
    char big[1000], want[1010];
    (void)state;
    resp_buf_init(&b);

    resp_add_errorf(&b, "ERR wrong number of arguments for '%s' command", "get");
    EXPECT(&b, "-ERR wrong number of arguments for 'get' command\r\n");
    resp_add_errorf(&b, "ERR %s %d", "x\ry\nz", -5);
    EXPECT(&b, "-ERR x y z -5\r\n");
    /* as Redis's addReplyErrorFormat: CR/LF at the ends trimmed, not mapped */
    resp_add_errorf(&b, "\r\nERR oops%s", "\r\n\n");
    EXPECT(&b, "-ERR oops\r\n");
    resp_add_errorf(&b, "%s", "\r\n");
    EXPECT(&b, "-\r\n");
    /* a NUL from %c ends the text, as sdscat would */
    resp_add_errorf(&b, "ERR a%cb", 0);
    EXPECT(&b, "-ERR a\r\n");

    /* longer than the stack buffer */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    big[500] = '\n';
    resp_add_errorf(&b, "ERR %s!", big);
    big[500] = ' ';
    snprintf(want, sizeof(want), "-ERR %s!\r\n", big);
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    resp_buf_free(&b);
}

/* ---- integers ---- */

static void test_int(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_int(&b, 0);
    EXPECT(&b, ":0\r\n");
    resp_add_int(&b, 1);
    EXPECT(&b, ":1\r\n");
    resp_add_int(&b, -1);
    EXPECT(&b, ":-1\r\n");
    resp_add_int(&b, 9);
    EXPECT(&b, ":9\r\n");
    resp_add_int(&b, 10);
    EXPECT(&b, ":10\r\n");
    resp_add_int(&b, 99);
    EXPECT(&b, ":99\r\n");
    resp_add_int(&b, 100);
    EXPECT(&b, ":100\r\n");
    resp_add_int(&b, -10);
    EXPECT(&b, ":-10\r\n");
    resp_add_int(&b, 1234567);
    EXPECT(&b, ":1234567\r\n");
    resp_add_int(&b, LLONG_MAX);
    EXPECT(&b, ":9223372036854775807\r\n");
    resp_add_int(&b, LLONG_MIN);
    EXPECT(&b, ":-9223372036854775808\r\n");
    resp_add_int(&b, LLONG_MIN + 1);
    EXPECT(&b, ":-9223372036854775807\r\n");
    resp_buf_free(&b);
}

/* The hand-written conversion agrees with printf around every power of ten
 * and across a pseudo-random sweep. */
static void test_int_matches_printf(void **state)
{
    resp_buf b;
    char want[32];
    long long p = 1;
    unsigned long long x = 88172645463325252ULL;
    int i, n;
    (void)state;

    resp_buf_init(&b);
    for (i = 0; i < 19; i++) {
        long long vals[6];
        int j;
        if (i > 0) p *= 10; /* 1 .. 10^18, never past LLONG_MAX */
        vals[0] = p - 1, vals[1] = p, vals[2] = p + 1;
        vals[3] = -(p - 1), vals[4] = -p, vals[5] = -(p + 1);
        for (j = 0; j < 6; j++) {
            n = snprintf(want, sizeof(want), ":%lld\r\n", vals[j]);
            resp_add_int(&b, vals[j]);
            expect_bytes(&b, want, (size_t)n, __LINE__);
        }
    }
    for (i = 0; i < 100000; i++) {
        long long v;
        x ^= x << 13; /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        v = (long long)(x >> (x & 63));
        if (x & 64) v = ~v; /* negative, LLONG_MIN included, without overflow */
        n = snprintf(want, sizeof(want), ":%lld\r\n", v);
        resp_add_int(&b, v);
        expect_bytes(&b, want, (size_t)n, __LINE__);
        n = snprintf(want, sizeof(want), "*%lld\r\n", v);
        resp_add_array_len(&b, v);
        expect_bytes(&b, want, (size_t)n, __LINE__);
    }
    resp_buf_free(&b);
}

/* ---- bulk strings ---- */

static void test_bulk(void **state)
{
    resp_buf b;
    char big[10000];
    (void)state;
    resp_buf_init(&b);
    resp_add_bulk(&b, "foo", 3);
    EXPECT(&b, "$3\r\nfoo\r\n");
    resp_add_bulk(&b, "", 0);
    EXPECT(&b, "$0\r\n\r\n");
    resp_add_bulk(&b, NULL, 0);
    EXPECT(&b, "$0\r\n\r\n");
    resp_add_bulk(&b, "a\0\r\nb", 5);
    EXPECT(&b, "$5\r\na\0\r\nb\r\n");
    resp_add_bulk_cstr(&b, "hello");
    EXPECT(&b, "$5\r\nhello\r\n");
    resp_add_bulk_cstr(&b, "");
    EXPECT(&b, "$0\r\n\r\n");
    resp_add_bulk_cstr(&b, NULL);
    EXPECT(&b, "$-1\r\n");
    resp_add_bulk_ll(&b, 0);
    EXPECT(&b, "$1\r\n0\r\n");
    resp_add_bulk_ll(&b, -42);
    EXPECT(&b, "$3\r\n-42\r\n");
    resp_add_bulk_ll(&b, LLONG_MAX);
    EXPECT(&b, "$19\r\n9223372036854775807\r\n");
    resp_add_bulk_ll(&b, LLONG_MIN);
    EXPECT(&b, "$20\r\n-9223372036854775808\r\n");

    memset(big, 'z', sizeof(big));
    resp_add_bulk(&b, big, sizeof(big));
    assert_int_equal(b.len, 6 + 2 + sizeof(big) + 2);
    assert_memory_equal(b.data, "$10000\r\n", 8);
    assert_memory_equal(b.data + 8, big, sizeof(big));
    assert_memory_equal(b.data + 8 + sizeof(big), "\r\n", 2);
    resp_buf_free(&b);
}

/* ---- nulls and aggregates ---- */

static void test_nulls(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_null(&b, 2);
    EXPECT(&b, "$-1\r\n");
    resp_add_null(&b, 3);
    EXPECT(&b, "_\r\n");
    resp_add_null_array(&b, 2);
    EXPECT(&b, "*-1\r\n");
    resp_add_null_array(&b, 3);
    EXPECT(&b, "_\r\n");
    resp_buf_free(&b);
}

static void test_aggregate_headers(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_array_len(&b, 0);
    EXPECT(&b, "*0\r\n");
    resp_add_array_len(&b, 3);
    EXPECT(&b, "*3\r\n");
    resp_add_array_len(&b, -1);
    EXPECT(&b, "*-1\r\n");
    resp_add_array_len(&b, 2147483647);
    EXPECT(&b, "*2147483647\r\n");

    resp_add_map_len(&b, 2, 2);
    EXPECT(&b, "*4\r\n");
    resp_add_map_len(&b, 3, 2);
    EXPECT(&b, "%2\r\n");
    resp_add_map_len(&b, 2, 0);
    EXPECT(&b, "*0\r\n");
    resp_add_map_len(&b, 3, 0);
    EXPECT(&b, "%0\r\n");

    resp_add_set_len(&b, 2, 5);
    EXPECT(&b, "*5\r\n");
    resp_add_set_len(&b, 3, 5);
    EXPECT(&b, "~5\r\n");

    resp_add_push_len(&b, 2, 3);
    EXPECT(&b, "*3\r\n");
    resp_add_push_len(&b, 3, 3);
    EXPECT(&b, ">3\r\n");
    resp_buf_free(&b);
}

/* ---- doubles ---- */

static void test_double(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_double(&b, 3, 1.5);
    EXPECT(&b, ",1.5\r\n");
    resp_add_double(&b, 2, 1.5);
    EXPECT(&b, "$3\r\n1.5\r\n");
    resp_add_double(&b, 3, 3.0);
    EXPECT(&b, ",3\r\n");
    resp_add_double(&b, 2, 3.0);
    EXPECT(&b, "$1\r\n3\r\n");
    resp_add_double(&b, 3, 0.1);
    EXPECT(&b, ",0.10000000000000001\r\n");
    resp_add_double(&b, 2, 0.1);
    EXPECT(&b, "$19\r\n0.10000000000000001\r\n");
    resp_add_double(&b, 3, -2.25);
    EXPECT(&b, ",-2.25\r\n");
    resp_add_double(&b, 3, 0.0);
    EXPECT(&b, ",0\r\n");
    resp_add_double(&b, 3, -0.0);
    EXPECT(&b, ",-0\r\n");
    resp_add_double(&b, 3, 1e300);
    EXPECT(&b, ",1.0000000000000001e+300\r\n");
    resp_add_double(&b, 2, 1e-5);
    EXPECT(&b, "$22\r\n1.0000000000000001e-05\r\n");
    resp_add_double(&b, 3, 123456789012345680.0);
    EXPECT(&b, ",1.2345678901234568e+17\r\n");
    resp_add_double(&b, 2, -1.7976931348623157e308);
    EXPECT(&b, "$24\r\n-1.7976931348623157e+308\r\n");
    resp_add_double(&b, 3, INFINITY);
    EXPECT(&b, ",inf\r\n");
    resp_add_double(&b, 3, -INFINITY);
    EXPECT(&b, ",-inf\r\n");
    resp_add_double(&b, 2, INFINITY);
    EXPECT(&b, "$3\r\ninf\r\n");
    resp_add_double(&b, 2, -INFINITY);
    EXPECT(&b, "$4\r\n-inf\r\n");
    resp_add_double(&b, 3, NAN);
    EXPECT(&b, ",nan\r\n");
    resp_add_double(&b, 2, NAN);
    EXPECT(&b, "$3\r\nnan\r\n");
    resp_add_double(&b, 3, -NAN); /* glibc's %.17g keeps the sign, as in Redis */
    EXPECT(&b, ",-nan\r\n");
    resp_buf_free(&b);
}

/* ---- bool, verbatim, bignum ---- */

static void test_bool(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_bool(&b, 3, 1);
    EXPECT(&b, "#t\r\n");
    resp_add_bool(&b, 3, 0);
    EXPECT(&b, "#f\r\n");
    resp_add_bool(&b, 3, 42);
    EXPECT(&b, "#t\r\n");
    resp_add_bool(&b, 2, 1);
    EXPECT(&b, ":1\r\n");
    resp_add_bool(&b, 2, 0);
    EXPECT(&b, ":0\r\n");
    resp_buf_free(&b);
}

static void test_verbatim(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_verbatim(&b, 3, "txt", "hello", 5);
    EXPECT(&b, "=9\r\ntxt:hello\r\n");
    resp_add_verbatim(&b, 2, "txt", "hello", 5);
    EXPECT(&b, "$5\r\nhello\r\n");
    resp_add_verbatim(&b, 3, "mkd", "", 0);
    EXPECT(&b, "=4\r\nmkd:\r\n");
    resp_add_verbatim(&b, 3, "txt", "a\r\nb", 4);
    EXPECT(&b, "=8\r\ntxt:a\r\nb\r\n");
    /* short formats are padded with spaces, long ones cut, as Redis does */
    resp_add_verbatim(&b, 3, "md", "x", 1);
    EXPECT(&b, "=5\r\nmd :x\r\n");
    resp_add_verbatim(&b, 3, "markdown", "x", 1);
    EXPECT(&b, "=5\r\nmar:x\r\n");
    resp_add_verbatim(&b, 2, "txt", "", 0);
    EXPECT(&b, "$0\r\n\r\n");
    resp_buf_free(&b);
}

static void test_bignum(void **state)
{
    resp_buf b;
    (void)state;
    resp_buf_init(&b);
    resp_add_bignum(&b, 3, "3492890328409238509324850943850943825024385", 43);
    EXPECT(&b, "(3492890328409238509324850943850943825024385\r\n");
    resp_add_bignum(&b, 2, "3492890328409238509324850943850943825024385", 43);
    EXPECT(&b, "$43\r\n3492890328409238509324850943850943825024385\r\n");
    resp_add_bignum(&b, 3, "-1", 2);
    EXPECT(&b, "(-1\r\n");
    resp_buf_free(&b);
}

/* A whole reply built from pieces, as a command would, in both protocols. */
static void test_composite_reply(void **state)
{
    resp_buf b;
    int proto;
    (void)state;
    resp_buf_init(&b);
    for (proto = 2; proto <= 3; proto++) {
        resp_add_map_len(&b, proto, 2);
        resp_add_bulk_cstr(&b, "owner");
        resp_add_bulk(&b, "c1", 2);
        resp_add_bulk_cstr(&b, "ttl");
        resp_add_double(&b, proto, 2.5);
        resp_add_set_len(&b, proto, 1);
        resp_add_null(&b, proto);
        if (proto == 2)
            EXPECT(&b, "*4\r\n$5\r\nowner\r\n$2\r\nc1\r\n$3\r\nttl\r\n$3\r\n2.5\r\n*1\r\n$-1\r\n");
        else
            EXPECT(&b, "%2\r\n$5\r\nowner\r\n$2\r\nc1\r\n$3\r\nttl\r\n,2.5\r\n~1\r\n_\r\n");
    }
    resp_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_init_free),
        cmocka_unit_test(test_buf_reserve_grows_geometrically),
        cmocka_unit_test(test_buf_consume),
        cmocka_unit_test(test_buf_overflow_aborts),
        cmocka_unit_test(test_simple_and_status),
        cmocka_unit_test(test_error),
        cmocka_unit_test(test_errorf),
        cmocka_unit_test(test_int),
        cmocka_unit_test(test_int_matches_printf),
        cmocka_unit_test(test_bulk),
        cmocka_unit_test(test_nulls),
        cmocka_unit_test(test_aggregate_headers),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_verbatim),
        cmocka_unit_test(test_bignum),
        cmocka_unit_test(test_composite_reply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
