/* test_num.c - Redis-exact number parsing: string2ll's accepted and rejected
 * forms, ll2str at the extremes, string2d's rules for doubles. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

struct ll_case {
    const char *s;
    int ok;
    long long v;
};

static void test_str2ll_table(void **state)
{
    (void)state;
    static const struct ll_case cases[] = {
        { "", 0, 0 },
        { "-", 0, 0 },
        { "+1", 0, 0 },
        { "01", 0, 0 },
        { "00", 0, 0 },
        { " 1", 0, 0 },
        { "1 ", 0, 0 },
        { "-0", 0, 0 },
        { "-01", 0, 0 },
        { "1a", 0, 0 },
        { "a", 0, 0 },
        { "1.0", 0, 0 },
        { "0x10", 0, 0 },
        { "--1", 0, 0 },
        { "0", 1, 0 },
        { "1", 1, 1 },
        { "-1", 1, -1 },
        { "99", 1, 99 },
        { "-99", 1, -99 },
        { "1234567890", 1, 1234567890LL },
        { "9223372036854775807", 1, LLONG_MAX },
        { "9223372036854775808", 0, 0 },
        { "18446744073709551615", 0, 0 },
        { "18446744073709551616", 0, 0 },
        { "99999999999999999999", 0, 0 },
        { "-9223372036854775808", 1, LLONG_MIN },
        { "-9223372036854775809", 0, 0 },
        { "-18446744073709551616", 0, 0 },
        { "000000000000000000001", 0, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long long v = 12345;
        int ok = store_str2ll(cases[i].s, strlen(cases[i].s), &v);
        if (ok != cases[i].ok) fail_msg("str2ll(\"%s\") = %d, want %d", cases[i].s, ok, cases[i].ok);
        if (ok) assert_true(v == cases[i].v);
        else assert_true(v == 12345);   /* untouched on failure */
    }
}

static void test_str2ll_uses_len(void **state)
{
    (void)state;
    long long v;
    assert_true(store_str2ll("123xyz", 3, &v) && v == 123);
    assert_false(store_str2ll("12\0" "3", 4, &v));   /* embedded NUL */
    assert_true(store_str2ll("-5", 2, NULL));        /* out may be NULL */
}

static void check_ll2str(long long v, const char *want)
{
    char buf[21];
    memset(buf, 'x', sizeof(buf));
    size_t n = store_ll2str(buf, v);
    assert_int_equal(n, strlen(want));
    assert_string_equal(buf, want);
}

static void test_ll2str(void **state)
{
    (void)state;
    check_ll2str(0, "0");
    check_ll2str(7, "7");
    check_ll2str(-7, "-7");
    check_ll2str(10, "10");
    check_ll2str(99, "99");
    check_ll2str(100, "100");
    check_ll2str(-100, "-100");
    check_ll2str(1000000007, "1000000007");
    check_ll2str(LLONG_MAX, "9223372036854775807");
    check_ll2str(LLONG_MIN, "-9223372036854775808");
    check_ll2str(LLONG_MIN + 1, "-9223372036854775807");
}

static void test_ll2str_roundtrip(void **state)
{
    (void)state;
    char buf[21], ref[32];
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        long long v = (long long)(x >> (x & 63));   /* all magnitudes */
        if ((i & 1) && v != LLONG_MIN) v = -v;
        size_t n = store_ll2str(buf, v);
        snprintf(ref, sizeof(ref), "%lld", v);
        assert_string_equal(buf, ref);
        long long back;
        assert_true(store_str2ll(buf, n, &back) && back == v);
    }
}

static int d_ok(const char *s, double *out) { return store_str2double(s, strlen(s), out); }

static void test_str2double(void **state)
{
    (void)state;
    double d;
    static const char *bad[] = {
        "", " 1", "1 ", "\t1", "abc", "1x", "nan", "NaN", "-nan", "1e", "--1",
        "1e400", "-1e400", "1e-400", ".", "+", "1.2.3",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (d_ok(bad[i], &d)) fail_msg("str2double(\"%s\") accepted", bad[i]);

    assert_true(d_ok("1", &d) && d == 1.0);
    assert_true(d_ok("-1.5", &d) && d == -1.5);
    assert_true(d_ok("+2.25", &d) && d == 2.25);
    assert_true(d_ok("1e3", &d) && d == 1000.0);
    assert_true(d_ok("1E-3", &d) && d == 0.001);
    assert_true(d_ok(".5", &d) && d == 0.5);
    assert_true(d_ok("5.", &d) && d == 5.0);
    assert_true(d_ok("0", &d) && d == 0.0);
    assert_true(d_ok("-0", &d) && d == 0.0 && signbit(d));
    assert_true(d_ok("inf", &d) && isinf(d) && d > 0);
    assert_true(d_ok("+inf", &d) && isinf(d) && d > 0);
    assert_true(d_ok("-inf", &d) && isinf(d) && d < 0);
    assert_true(d_ok("Infinity", &d) && isinf(d));
    assert_true(d_ok("1.7976931348623157e308", &d) && !isinf(d));
    assert_true(d_ok("4e-320", &d) && d > 0);   /* subnormal is not zero */

    assert_true(store_str2double("2.5xyz", 3, &d) && d == 2.5);   /* length, not NUL */
    assert_false(store_str2double("1\0" "2", 3, &d));
}

static void test_str2double_long(void **state)
{
    (void)state;
    static char s[6000];
    double d;
    memset(s, '0', sizeof(s));
    s[0] = '1';
    assert_true(store_str2double("0.1", 3, &d));
    s[1] = '.';
    assert_true(store_str2double(s, 5000, &d) && d == 1.0);
    assert_false(store_str2double(s, sizeof(s), &d));   /* over Redis's 5k cap */
}

static int ld_ok(const char *s, long double *out) { return store_str2ld(s, strlen(s), out); }

/* Redis's string2ld: what strtold takes, whole, no leading space, no nan,
 * no overflow; "inf" and hex pass. */
static void test_str2ld(void **state)
{
    (void)state;
    long double v;
    static const char *bad[] = {"", " 1", "1 ", "abc", "nan", "-nan", "1e5000", "-1e5000", "1e-5000", "1x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (ld_ok(bad[i], &v)) fail_msg("str2ld(\"%s\") accepted", bad[i]);
    assert_true(ld_ok("1.5", &v) && v == 1.5L);
    assert_true(ld_ok("0x10", &v) && v == 16.0L);
    assert_true(ld_ok("inf", &v) && v > 1e4932L);
    assert_true(ld_ok("1e4000", &v));   /* a long double, not a double */
    char *longest = malloc(STORE_LD_STR_MAX + 1);
    memset(longest, '1', STORE_LD_STR_MAX);
    assert_false(store_str2ld(longest, STORE_LD_STR_MAX, &v));   /* refused, not truncated */
    assert_true(store_str2ld(longest, 30, &v));
    free(longest);
}

/* What redis-server 7.0.15 prints for INCRBYFLOAT's results. */
static void test_ld2str(void **state)
{
    (void)state;
    static const struct { long double v; const char *want; } cases[] = {
        {10.6L, "10.6"}, {3.0L, "3"}, {-0.0L, "0"}, {-2.5L, "-2.5"}, {0.00001L, "0.00001"},
        {1e20L, "100000000000000000000"}, {100000000000000000.5L, "100000000000000000.5"},
        {1.1e-20L, "0"}, {-1.5e-7L, "-0.00000015"},
    };
    char buf[STORE_LD_STR_MAX];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = store_ld2str(buf, cases[i].v);
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
    assert_int_equal(store_ld2str(buf, 1.0L / 0.0L), 3);
    assert_string_equal(buf, "inf");
    assert_int_equal(store_ld2str(buf, -1.0L / 0.0L), 4);
    assert_string_equal(buf, "-inf");
    assert_int_equal(store_ld2str(buf, 1e4000L), 4000);   /* 9.99...e3999 once rounded to binary */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str2ll_table),
        cmocka_unit_test(test_str2ll_uses_len),
        cmocka_unit_test(test_ll2str),
        cmocka_unit_test(test_ll2str_roundtrip),
        cmocka_unit_test(test_str2double),
        cmocka_unit_test(test_str2double_long),
        cmocka_unit_test(test_str2ld),
        cmocka_unit_test(test_ld2str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
