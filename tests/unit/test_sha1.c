/* test_sha1.c - SHA-1 against FIPS 180 and NIST example vectors, at every
 * tail length around the 55/56/64-byte padding boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scripting/script.h"

static void hex(const unsigned char md[SHA1_DIGEST_LEN], char out[41])
{
    for (int i = 0; i < SHA1_DIGEST_LEN; i++) sprintf(out + 2 * i, "%02x", md[i]);
}

static void assert_sha1(const void *p, size_t len, const char *want)
{
    unsigned char md[SHA1_DIGEST_LEN];
    char got[41];
    sha1_digest(p, len, md);
    hex(md, got);
    assert_string_equal(got, want);
}

static void test_known_vectors(void **state)
{
    (void)state;
    assert_sha1("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_sha1("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";   /* 56 bytes */
    assert_sha1(two, strlen(two), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";   /* 112 bytes */
    assert_sha1(four, strlen(four), "a49b2446a02c645bf419f995b67091253a04a259");
    assert_sha1("return 1", 8, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");   /* Redis's EVAL name for it */
}

static void test_million_a(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *a = malloc(n);
    assert_non_null(a);
    memset(a, 'a', n);
    assert_sha1(a, n, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(a);
}

/* Lengths 0..130 of one buffer: each digest differs from its neighbours and
 * a prefix hashed from a copy matches, so no tail length reads past the end
 * or drops a byte. */
static void test_every_tail_length(void **state)
{
    (void)state;
    unsigned char buf[130], prev[SHA1_DIGEST_LEN] = {0};
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)(i * 7 + 1);
    for (size_t len = 0; len <= sizeof(buf); len++) {
        unsigned char md[SHA1_DIGEST_LEN], again[SHA1_DIGEST_LEN];
        unsigned char *copy = malloc(len ? len : 1);
        assert_non_null(copy);
        memcpy(copy, buf, len);
        sha1_digest(buf, len, md);
        sha1_digest(copy, len, again);
        free(copy);
        assert_memory_equal(md, again, SHA1_DIGEST_LEN);
        assert_memory_not_equal(md, prev, SHA1_DIGEST_LEN);
        memcpy(prev, md, SHA1_DIGEST_LEN);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors),
        cmocka_unit_test(test_million_a),
        cmocka_unit_test(test_every_tail_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
