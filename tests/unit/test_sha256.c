/* test_sha256.c - SHA-256 (ACL passwords) against FIPS 180 examples, a
 * million 'a's, and lengths around the 55/56/64-byte padding boundaries
 * (digests from Python's hashlib). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "acl.h"

static void assert_sha256(const void *p, size_t len, const char *want)
{
    char got[ACL_HASH_LEN + 1];
    acl_sha256_hex(p, len, got);
    assert_string_equal(got, want);
}

static void test_known_vectors(void **state)
{
    (void)state;
    assert_sha256("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_sha256("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";   /* 56 bytes */
    assert_sha256(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_sha256("foobar", 6, "c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2");   /* Redis's test of ACL hashes */
}

static void test_million_a(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *a = malloc(n);
    assert_non_null(a);
    memset(a, 'a', n);
    assert_sha256(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void test_tail_lengths(void **state)
{
    (void)state;
    static const struct { size_t len; const char *hex; } want[] = {
        {0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {1, "4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a"},
        {55, "16fa57a0a3423a715d594516339f36189d6b5f93754a9714fef202616a9fabfe"},
        {56, "c37b44e5f1b18554b36966f4f8e08bfbf3164c4b6c10374d12d89850892073c5"},
        {57, "12b234922502022f755ab8550a3d4e202ad39c81d961a4f59ec39d5fd83d15a7"},
        {63, "bbba992d2c85af960fb2987a1fd05e0aa82a3db3c740dd8982a9e273b75e36a3"},
        {64, "66bd4633ed6f71c4ecfa4763bf7ba1c8ec7612de9aa6c0578a7b675207c71e0b"},
        {65, "9f7dc47107b750a1f3d35db5d9547f24ef40da5b731b9540d4f43710a154f6c9"},
        {119, "a3ed307b730fa77c07531300c6e4a282330011d4d4caf6bb7b63ae05950f4b66"},
        {120, "8e3b15d9fea7472655aa069620b7f8c2e55ee1499f763200a7515fe826e99d20"},
        {128, "e462c130fef8c97e34f7dc3ff3ad2f8b3533ab849af21c10531552a2852387a4"},
        {130, "a234574a31eaa90ec795dcd0a21f34674b8ae54f47912ae62cb0571c1cb6b9ab"},
    };
    unsigned char buf[130];
    for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) assert_sha256(buf, want[i].len, want[i].hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors),
        cmocka_unit_test(test_million_a),
        cmocka_unit_test(test_tail_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
