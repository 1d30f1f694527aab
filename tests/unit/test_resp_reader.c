/* test_resp_reader.c - reading replies back: every RESP2/RESP3 type the
 * writer produces round-trips, and malformed input is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "resp.h"

static resp_reply read_one(const char **pos, const char *end)
{
    resp_reply r;
    assert_true(resp_read_reply(pos, end, &r));
    return r;
}

static void test_writer_round_trip(void **state)
{
    resp_buf b;
    resp_buf_init(&b);
    resp_add_array_len(&b, 3);
    resp_add_int(&b, -42);
    resp_add_bulk(&b, "a\r\nb", 4);
    resp_add_null(&b, 2);
    resp_add_map_len(&b, 3, 1);
    resp_add_simple(&b, "OK", 2);
    resp_add_double(&b, 3, 1.5);
    resp_add_bool(&b, 3, 1);
    resp_add_verbatim(&b, 3, "txt", "hi", 2);
    resp_add_error(&b, "ERR x", 5);
    resp_add_null(&b, 3);
    const char *p = b.data, *end = b.data + b.len;
    resp_reply r = read_one(&p, end);
    assert_int_equal(r.type, '*');
    assert_int_equal(r.n, 3);
    r = read_one(&p, end);
    assert_int_equal(r.n, -42);
    r = read_one(&p, end);
    assert_int_equal(r.len, 4);
    assert_memory_equal(r.str, "a\r\nb", 4);
    r = read_one(&p, end);
    assert_int_equal(r.type, '$');
    assert_int_equal(r.n, -1);
    r = read_one(&p, end);
    assert_int_equal(r.type, '%');
    assert_int_equal(r.n, 1);
    r = read_one(&p, end);
    assert_int_equal(r.type, '+');
    r = read_one(&p, end);
    assert_int_equal(r.type, ',');
    assert_memory_equal(r.str, "1.5", 3);
    r = read_one(&p, end);
    assert_int_equal(r.type, '#');
    assert_int_equal(r.n, 1);
    r = read_one(&p, end);
    assert_int_equal(r.type, '=');
    assert_memory_equal(r.fmt, "txt", 3);
    assert_int_equal(r.len, 2);
    r = read_one(&p, end);
    assert_int_equal(r.type, '-');
    assert_memory_equal(r.str, "ERR x", 5);
    r = read_one(&p, end);
    assert_int_equal(r.type, '_');
    assert_ptr_equal(p, end);
    resp_buf_free(&b);
}

static void test_int64_extremes(void **state)
{
    static const char in[] = ":-9223372036854775808\r\n:9223372036854775807\r\n*-1\r\n";
    const char *p = in, *end = in + sizeof(in) - 1;
    assert_true(read_one(&p, end).n == INT64_MIN);
    assert_true(read_one(&p, end).n == INT64_MAX);
    assert_int_equal(read_one(&p, end).n, -1);
    assert_ptr_equal(p, end);
}

static void test_malformed_is_refused(void **state)
{
    static const char *bad[] = {
        "", "?x\r\n", ":12", ":1x\r\n", "$5\r\nab\r\n", "$2\r\nabXY", "$-2\r\n", "*-2\r\n",
        "%-1\r\n", "#x\r\n", "=2\r\nab\r\n", "+no end", ":99999999999999999999\r\n",
        ":9223372036854775808\r\n", ":-9223372036854775809\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *p = bad[i];
        resp_reply r;
        assert_false(resp_read_reply(&p, bad[i] + strlen(bad[i]), &r));
        assert_ptr_equal(p, bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_int64_extremes),
        cmocka_unit_test(test_malformed_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
