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

#endif
