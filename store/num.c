/* num.c - string <-> number conversions with Redis's exact acceptance rules,
 * so replies and errors match what Redis clients expect. */
#include "num.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest accepted: "-9223372036854775808" (20); Redis rejects >= 21. */
#define LL_STR_MAX 20
/* Redis's MAX_LONG_DOUBLE_CHARS: longer input is refused, not truncated. */
#define DOUBLE_STR_MAX (5 * 1024)

int store_str2ll(const char *s, size_t len, long long *out)
{
    size_t i = 0;
    int neg = 0;
    unsigned long long v;

    if (len == 0 || len > LL_STR_MAX) return 0;
    if (len == 1 && s[0] == '0') {   /* "0" is the only form with a leading 0 */
        if (out) *out = 0;
        return 1;
    }
    if (s[0] == '-') {
        neg = 1;
        if (++i == len) return 0;
    }
    if (s[i] < '1' || s[i] > '9') return 0;   /* rejects "+1", " 1", "01", "-0" */
    v = (unsigned long long)(s[i++] - '0');
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) return 0;
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        /* Negate in unsigned space: -(LLONG_MIN) is not representable. */
        if (out) *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        if (out) *out = (long long)v;
    }
    return 1;
}

static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static size_t digits10(uint64_t v)
{
    size_t n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Two digits per division, written back to front (as Redis's ull2string). */
size_t store_ll2str(char *dst, long long v)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;   /* LLONG_MIN safe */
    size_t neg = v < 0, n = digits10(u), len = neg + n;
    char *p = dst + len - 1;

    if (neg) dst[0] = '-';
    while (u >= 100) {
        size_t i = (size_t)(u % 100) * 2;
        u /= 100;
        *p-- = digit_pairs[i + 1];
        *p-- = digit_pairs[i];
    }
    if (u < 10) {
        *p = (char)('0' + u);
    } else {
        p[0] = digit_pairs[u * 2 + 1];
        p[-1] = digit_pairs[u * 2];
    }
    dst[len] = '\0';
    return len;
}

/* strtod needs a NUL-terminated copy; the checks mirror Redis's string2d
 * and string2ld: no leading space (strtod would skip it), every byte used,
 * no overflow to +-HUGE_VAL or underflow to 0, no nan. */
int store_str2double(const char *s, size_t len, double *out)
{
    char buf[DOUBLE_STR_MAX + 1];
    char *end;
    double v;

    if (len == 0 || len > DOUBLE_STR_MAX || isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if ((size_t)(end - buf) != len) return 0;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return 0;
    if (isnan(v)) return 0;
    if (out) *out = v;
    return 1;
}

int store_str2ld(const char *s, size_t len, long double *out)
{
    char buf[STORE_LD_STR_MAX];
    char *end;
    long double v;

    if (len == 0 || len >= sizeof(buf) || isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if ((size_t)(end - buf) != len) return 0;
    if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) return 0;
    if (errno == EINVAL || isnan(v)) return 0;
    if (out) *out = v;
    return 1;
}

size_t store_ld2str(char *dst, long double v)
{
    if (isinf(v)) {
        strcpy(dst, v > 0 ? "inf" : "-inf");
        return strlen(dst);
    }
    int n = snprintf(dst, STORE_LD_STR_MAX, "%.17Lf", v);
    if (n < 0 || (size_t)n + 1 > STORE_LD_STR_MAX) {
        dst[0] = '\0';
        return 0;
    }
    size_t l = (size_t)n;
    if (memchr(dst, '.', l)) {
        while (dst[l - 1] == '0') l--;
        if (dst[l - 1] == '.') l--;
    }
    if (l == 2 && dst[0] == '-' && dst[1] == '0') {
        dst[0] = '0';
        l = 1;
    }
    dst[l] = '\0';
    return l;
}
