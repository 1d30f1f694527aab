/* num.h - Redis-exact conversions between strings and numbers, shared by
 * the value types and by command argument parsing. */
#ifndef LATCHD_STORE_NUM_H
#define LATCHD_STORE_NUM_H

#include <stddef.h>

/* Strict like Redis's string2ll: optional '-', digits, no spaces, no '+',
 * no leading zeros except "0", no overflow. 1 on success. */
int store_str2ll(const char *s, size_t len, long long *out);
/* Writes the decimal digits of v into dst (>= 21 bytes), returns length. */
size_t store_ll2str(char *dst, long long v);
/* Like Redis's string2ld/strtold checks for INCRBYFLOAT/ZADD scores:
 * rejects spaces, empty, nan. 1 on success. */
int store_str2double(const char *s, size_t len, double *out);

/* Redis's MAX_LONG_DOUBLE_CHARS: the buffer store_ld2str writes into,
 * and the length from which store_str2ld refuses text. */
#define STORE_LD_STR_MAX (5 * 1024)
/* Redis's string2ld (INCRBYFLOAT, HINCRBYFLOAT): strtold on the whole
 * text, no leading space, no nan, no overflow; "inf" and hex pass as
 * there. 1 on success. */
int store_str2ld(const char *s, size_t len, long double *out);
/* Redis's ld2string in LD_STR_HUMAN mode: "%.17Lf" with the fraction's
 * trailing zeros (and a bare '.') dropped, "-0" as "0", "inf"/"-inf".
 * dst holds STORE_LD_STR_MAX bytes; returns the length (0 if it would
 * not fit, which Redis stores as an empty string too). */
size_t store_ld2str(char *dst, long double v);

#endif
