/* test_persist.c - persist/'s codecs: CRC64 against the Jones check value
 * and redis-server's DUMP trailers, LZF both ways (and against liblzf's
 * output in Redis's payloads), listpack encodings and validation, and a
 * value round trip through a store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "list.h"
#include "persist/persist.h"
#include "zset.h"

/* DUMPed by redis-server 7.0.15: SET s hello; SET lz abcdefghij x5;
 * RPUSH l a 1 -300; HSET h f v. */
static const unsigned char dump_s[] = "\x00\x05hello\x0a\x00\x63\x72\xdf\x76\x65\x34\x20\x0a";
static const unsigned char dump_lz[] =
    "\x00\xc3\x12\x32\x0a\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x61\xe0\x1c\x09\x01\x69\x6a"
    "\x0a\x00\xbf\x2c\x58\xb7\x29\x1a\xaf\x30";
static const unsigned char dump_l[] =
    "\x12\x01\x02\x0f\x0f\x00\x00\x00\x03\x00\x81\x61\x02\x01\x01\xde\xd4\x02\xff\x0a\x00"
    "\x80\x04\x20\x48\x29\x3b\xe2\x89";
static const unsigned char dump_h[] =
    "\x10\x0d\x0d\x00\x00\x00\x02\x00\x81\x66\x02\x81\x76\x02\xff\x0a\x00\x20\xf1\x3d\x44\x23\x54\x08\x9d";

static uint64_t trailer_crc(const unsigned char *p, size_t len)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[len - 8 + i] << (8 * i);
    return v;
}

static void test_crc64(void **state)
{
    (void)state;
    assert_true(persist_crc64(0, "123456789", 9) == UINT64_C(0xe9c6d914c4b8d9ca));
    assert_true(persist_crc64(0, "", 0) == 0);
    /* chaining is the same as one call */
    assert_true(persist_crc64(persist_crc64(0, "1234", 4), "56789", 5) == UINT64_C(0xe9c6d914c4b8d9ca));
    const unsigned char *dumps[] = {dump_s, dump_lz, dump_l, dump_h};
    size_t lens[] = {sizeof dump_s - 1, sizeof dump_lz - 1, sizeof dump_l - 1, sizeof dump_h - 1};
    for (int i = 0; i < 4; i++) {
        assert_true(persist_crc64(0, dumps[i], lens[i] - 8) == trailer_crc(dumps[i], lens[i]));
        assert_int_equal(persist_payload_check(dumps[i], lens[i]), PERSIST_OK);
    }
    unsigned char bad[sizeof dump_s];
    memcpy(bad, dump_s, sizeof bad);
    bad[3] ^= 1;
    assert_int_equal(persist_payload_check(bad, sizeof dump_s - 1), PERSIST_ERR_CHECKSUM);
    assert_int_equal(persist_payload_check(dump_s, 9), PERSIST_ERR_CHECKSUM);
}

/* Redis's CRC64 a bit at a time: the reference the table and carry-less
 * multiply paths must both agree with. */
static uint64_t crc64_bitwise(uint64_t crc, const unsigned char *s, size_t len)
{
    const uint64_t poly = UINT64_C(0x95ac9329ac4bc9b5);   /* 0xad93d23594c935a9 reflected */
    for (size_t i = 0; i < len; i++) {
        crc ^= s[i];
        for (int b = 0; b < 8; b++) crc = crc & 1 ? (crc >> 1) ^ poly : crc >> 1;
    }
    return crc;
}

static void test_crc64_long_inputs(void **state)
{
    (void)state;
    enum { MAX = 1200 };
    unsigned char buf[MAX + 16];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    /* every length across the 128-byte switch and the 64/16-byte steps, at
     * odd alignments, from a nonzero running crc */
    for (size_t len = 0; len <= MAX; len += len < 300 ? 1 : 37) {
        for (size_t off = 0; off < 16; off += 5) {
            uint64_t seed = len * 0x9e3779b97f4a7c15ULL;
            if (persist_crc64(seed, buf + off, len) != crc64_bitwise(seed, buf + off, len))
                fail_msg("crc64 differs at len %zu offset %zu", len, off);
        }
    }
    /* a split anywhere chains to the same value */
    uint64_t whole = crc64_bitwise(0, buf, MAX);
    for (size_t cut = 0; cut <= MAX; cut += 61)
        assert_true(persist_crc64(persist_crc64(0, buf, cut), buf + cut, MAX - cut) == whole);
}

static void test_lzf_matches_liblzf(void **state)
{
    (void)state;
    char in[50], out[64];
    for (int i = 0; i < 5; i++) memcpy(in + 10 * i, "abcdefghij", 10);
    /* what redis-server wrote: type, LZF marker, 0x12 = 18 compressed bytes, 0x32 = 50 */
    persist_lzf_table *t = persist_lzf_table_new();
    size_t n = persist_lzf_compress(t, in, sizeof in, out, sizeof in - 4);
    persist_lzf_table_free(t);
    assert_int_equal(n, 0x12);
    assert_memory_equal(out, dump_lz + 4, n);
    char back[50];
    assert_int_equal(persist_lzf_decompress(out, n, back, sizeof back), sizeof back);
    assert_memory_equal(back, in, sizeof in);
}

static void test_lzf_round_trips(void **state)
{
    (void)state;
    srand(7);
    persist_lzf_table *t = persist_lzf_table_new(), *fresh;
    for (int round = 0; round < 300; round++) {
        size_t len = 1 + (size_t)rand() % 20000;
        unsigned char *in = malloc(len), *c = malloc(len + len / 16 + 64), *d = malloc(len);
        int alphabet = 1 + rand() % 255;
        for (size_t i = 0; i < len; i++) in[i] = (unsigned char)(rand() % alphabet);
        size_t n = persist_lzf_compress(t, in, len, c, len + len / 16 + 64);
        assert_true(n > 0);
        /* a reused table compresses exactly as a new one: each call leaves it empty */
        unsigned char *c2 = malloc(len + len / 16 + 64);
        fresh = persist_lzf_table_new();
        assert_int_equal(persist_lzf_compress(fresh, in, len, c2, len + len / 16 + 64), n);
        assert_memory_equal(c2, c, n);
        persist_lzf_table_free(fresh);
        free(c2);
        assert_int_equal(persist_lzf_decompress(c, n, d, len), len);
        assert_memory_equal(d, in, len);
        /* one byte less room than it needs: refused, never overrun */
        if (len > 1) assert_int_equal(persist_lzf_decompress(c, n, d, len - 1), 0);
        free(in);
        free(c);
        free(d);
    }
    persist_lzf_table_free(t);
}

static void test_lzf_refuses_bad_input(void **state)
{
    (void)state;
    unsigned char out[64];
    /* a literal run longer than the input */
    assert_int_equal(persist_lzf_decompress("\x05" "ab", 3, out, sizeof out), 0);
    /* a back reference before the start */
    assert_int_equal(persist_lzf_decompress("\x00" "a" "\x20\x05", 4, out, sizeof out), 0);
    /* a back reference cut short */
    assert_int_equal(persist_lzf_decompress("\x00" "a" "\xe0", 3, out, sizeof out), 0);
    /* incompressible input does not fit in less room than it has */
    unsigned char rnd[100];
    for (int i = 0; i < 100; i++) rnd[i] = (unsigned char)(i * 37 + 11);
    persist_lzf_table *t = persist_lzf_table_new();
    assert_int_equal(persist_lzf_compress(t, rnd, sizeof rnd, out, sizeof out), 0);
    persist_lzf_table_free(t);
}

typedef struct lp_case {
    const char *s;
    size_t enc_bytes;   /* the entry without its backlen */
} lp_case;

static void test_listpack_encodings(void **state)
{
    (void)state;
    static const lp_case cases[] = {
        {"0", 1}, {"127", 1}, {"128", 2}, {"-1", 2}, {"-4096", 2}, {"4095", 2}, {"4096", 3},
        {"-32768", 3}, {"32768", 4}, {"8388607", 4}, {"8388608", 5}, {"-2147483648", 5},
        {"2147483648", 9}, {"-9223372036854775808", 9}, {"9223372036854775807", 9},
        {"01", 3}, {"+1", 3}, {"-0", 3}, {"abc", 4}, {"", 1},
    };
    persist_buf b = {0};
    persist_lp_writer w;
    persist_lp_begin(&w, &b);
    size_t want = 6 + 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        persist_lp_append(&w, cases[i].s, strlen(cases[i].s));
        want += cases[i].enc_bytes + 1;
    }
    persist_lp_end(&w);
    assert_int_equal(b.len, want);
    size_t count, pos = 0, i = 0;
    assert_int_equal(persist_lp_validate(b.p, b.len, &count), PERSIST_OK);
    assert_int_equal(count, sizeof cases / sizeof cases[0]);
    persist_elem e;
    while (persist_lp_next(b.p, &pos, &e)) {
        char text[32];
        if (e.s)
            snprintf(text, sizeof text, "%.*s", (int)e.len, (const char *)e.s);
        else
            snprintf(text, sizeof text, "%lld", e.v);
        assert_string_equal(text, cases[i++].s);
    }
    assert_int_equal(i, count);
    persist_buf_free(&b);
}

static void test_listpack_long_strings_and_validation(void **state)
{
    (void)state;
    size_t lens[] = {63, 64, 126, 127, 128, 4095, 4096, 16383, 16384, 70000};
    char *s = malloc(70000);
    memset(s, 'x', 70000);
    persist_buf b = {0};
    persist_lp_writer w;
    persist_lp_begin(&w, &b);
    for (size_t i = 0; i < 10; i++) persist_lp_append(&w, s, lens[i]);
    persist_lp_end(&w);
    size_t count, pos = 0, i = 0;
    assert_int_equal(persist_lp_validate(b.p, b.len, &count), PERSIST_OK);
    persist_elem e;
    while (persist_lp_next(b.p, &pos, &e)) assert_int_equal(e.len, lens[i++]);
    assert_int_equal(i, 10);
    /* every single-byte corruption is caught or still decodes in bounds */
    for (size_t at = 0; at < 64; at++) {
        unsigned char save = b.p[at];
        b.p[at] ^= 0x5a;
        if (persist_lp_validate(b.p, b.len, &count) == PERSIST_OK) {
            pos = 0;
            while (persist_lp_next(b.p, &pos, &e)) assert_true(pos < b.len);
        }
        b.p[at] = save;
    }
    assert_int_equal(persist_lp_validate(b.p, b.len - 1, &count), PERSIST_ERR_FORMAT);
    b.p[4] = 3;   /* wrong count */
    assert_int_equal(persist_lp_validate(b.p, b.len, &count), PERSIST_ERR_FORMAT);
    b.p[4] = 0xff, b.p[5] = 0xff;   /* "unknown": counted instead */
    assert_int_equal(persist_lp_validate(b.p, b.len, &count), PERSIST_OK);
    assert_int_equal(count, 10);
    persist_buf_free(&b);
    free(s);
}

/* persist_lp_pair writes the bytes begin/append/append/end write, for
 * every pair of encodings, lengths up to PERSIST_LP_PAIR_MAX included. */
static void test_listpack_pair_matches_the_writer(void **state)
{
    (void)state;
    char longest[PERSIST_LP_PAIR_MAX];
    memset(longest, 'k', sizeof longest);
    const struct {
        const char *s;
        size_t len;
    } items[] = {{"", 0},       {"1", 1},         {"127", 3},  {"-4096", 5}, {"32768", 5},
                 {"9223372036854775807", 19},    {"01", 2},   {"owner:1", 7},
                 {"0b9a7f0e-3d4c-4a5b-9c8d-7e6f5a4b3c2d:57", 39}, {longest, 63}, {longest, 64}};
    size_t n = sizeof items / sizeof items[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            persist_buf b = {0};
            persist_lp_writer w;
            persist_lp_begin(&w, &b);
            persist_lp_append(&w, items[i].s, items[i].len);
            persist_lp_append(&w, items[j].s, items[j].len);
            persist_lp_end(&w);
            unsigned char pair[PERSIST_LP_PAIR_ROOM];
            size_t len = persist_lp_pair(pair, items[i].s, items[i].len, items[j].s, items[j].len);
            assert_int_equal(len, b.len);
            assert_memory_equal(pair, b.p, len);
            persist_buf_free(&b);
        }
    }
}

static uint64_t clock_fn(void *ctx)
{
    (void)ctx;
    return 1000;
}

static const persist_opts opts = {512, 64, 128, 64, -2, 1, 1};

static void restore_as(store *s, const unsigned char *p, size_t len, const char *key)
{
    persist_value *v;
    assert_int_equal(persist_payload_check(p, len), PERSIST_OK);
    assert_int_equal(persist_value_decode(p, len, &v, NULL), PERSIST_OK);
    assert_non_null(persist_value_store(v, s, key, strlen(key)));
}

static void test_redis_payloads_restore_and_dump_back(void **state)
{
    (void)state;
    store *s = store_create(clock_fn, NULL);
    const unsigned char *dumps[] = {dump_s, dump_lz, dump_l, dump_h};
    size_t lens[] = {sizeof dump_s - 1, sizeof dump_lz - 1, sizeof dump_l - 1, sizeof dump_h - 1};
    const char *keys[] = {"s", "lz", "l", "h"};
    for (int i = 0; i < 4; i++) {
        restore_as(s, dumps[i], lens[i], keys[i]);
        persist_buf b = {0};
        persist_dump(store_lookup(s, keys[i], strlen(keys[i])), &opts, &b);
        assert_int_equal(b.len, lens[i]);
        assert_memory_equal(b.p, dumps[i], lens[i]);
        persist_buf_free(&b);
    }
    size_t len;
    assert_int_equal(store_list_len(store_lookup(s, "l", 1)), 3);
    assert_memory_equal(store_list_index(store_lookup(s, "l", 1), 2, &len), "-300", 4);
    store_destroy(s);
}

static void test_value_round_trip(void **state)
{
    (void)state;
    store *s = store_create(clock_fn, NULL);
    store_key *z = store_create_key(s, "z", 1, STORE_ZSET);
    store_key *l = store_create_key(s, "l", 1, STORE_LIST);
    char m[32];
    for (int i = 0; i < 300; i++) {
        int out;
        double now;
        snprintf(m, sizeof m, "m%d", i);
        store_zset_add(s, z, i * 0.25 - 10, m, strlen(m), 0, &out, &now);
        store_list_push(s, l, STORE_TAIL, m, strlen(m));
    }
    const char *names[] = {"z", "l"};
    for (int i = 0; i < 2; i++) {
        persist_buf b = {0};
        persist_dump(store_lookup(s, names[i], 1), &opts, &b);
        char copy[8];
        snprintf(copy, sizeof copy, "%s2", names[i]);
        restore_as(s, b.p, b.len, copy);
        persist_buf b2 = {0};
        persist_dump(store_lookup(s, copy, 2), &opts, &b2);
        assert_int_equal(b.len, b2.len);
        assert_memory_equal(b.p, b2.p, b.len);
        persist_buf_free(&b);
        persist_buf_free(&b2);
    }
    /* a truncated payload at every length is refused, never half-read */
    persist_buf b = {0};
    persist_value_encode(store_lookup(s, "z", 1), &opts, &b);
    for (size_t cut = 0; cut < b.len; cut++) {
        persist_value *v;
        assert_int_equal(persist_value_decode(b.p, cut, &v, NULL), PERSIST_ERR_FORMAT);
    }
    persist_buf_free(&b);
    store_destroy(s);
}

/* ---- whole files ---- */

static int to_buf(const void *p, size_t n, void *ctx)
{
    persist_buf_put(ctx, p, n);
    return 0;
}

static int failing_sink(const void *p, size_t n, void *ctx)
{
    (void)p, (void)n, (void)ctx;
    return -1;
}

typedef struct loaded {
    store *st;
    int db;
    int64_t deadline;
    int keys;
} loaded;

static int load_into(int db, const char *key, size_t klen, persist_value *v, int64_t deadline, void *ctx)
{
    loaded *l = ctx;
    l->db = db;
    if (deadline != STORE_NO_DEADLINE) l->deadline = deadline;
    l->keys++;
    persist_value_store(v, l->st, key, klen);
    return PERSIST_OK;
}

/* The hooks' view of a load: each key named to next_key just before fn
 * gets it, RESIZEDB's counts as written. */
typedef struct hooked {
    loaded l;
    char hint[16];
    size_t hint_len;
    int hints, hint_mismatches;
    uint64_t resize_keys, resize_expires;
} hooked;

static void hook_resize(int db, uint64_t keys, uint64_t expires, void *ctx)
{
    hooked *h = ctx;
    assert_int_equal(db, 5);
    h->resize_keys = keys;
    h->resize_expires = expires;
}

static void hook_next_key(int db, const char *key, size_t klen, void *ctx)
{
    hooked *h = ctx;
    assert_int_equal(db, 5);
    assert_true(klen < sizeof h->hint);
    memcpy(h->hint, key, klen);
    h->hint_len = klen;
    h->hints++;
}

static int load_hooked(int db, const char *key, size_t klen, persist_value *v, int64_t deadline, void *ctx)
{
    hooked *h = ctx;
    if (klen != h->hint_len || memcmp(key, h->hint, klen) != 0) h->hint_mismatches++;
    h->hint_len = 0;
    return load_into(db, key, klen, v, deadline, &h->l);
}

static void test_file_round_trip(void **state)
{
    (void)state;
    store *s = store_create(clock_fn, NULL);
    store_put_string(s, "plain", 5, "v", 1);
    store_key *k = store_put_string(s, "long", 4, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 40);
    store_key_set_deadline(s, k, 99999);
    persist_buf file = {0};
    persist_rdb_writer w;
    persist_rdb_aux aux = {"7.0.15", 1, 2};
    persist_rdb_begin(&w, &opts, &aux, to_buf, &file);
    persist_rdb_db(&w, 5, s);
    assert_int_equal(persist_rdb_end(&w), PERSIST_OK);
    assert_memory_equal(file.p, "REDIS0010", 9);
    assert_int_equal(file.p[file.len - 9], 0xFF);   /* EOF, then the CRC */

    loaded l = {store_create(clock_fn, NULL), -1, 0, 0};
    assert_int_equal(persist_rdb_load(file.p, file.len, 1, load_into, NULL, &l), PERSIST_OK);
    assert_int_equal(l.keys, 2);
    assert_int_equal(l.db, 5);
    assert_int_equal(l.deadline, 99999);
    size_t len;
    assert_memory_equal(store_string_get(store_lookup(l.st, "long", 4), &len), "xxxxxxxx", 8);
    assert_int_equal(len, 40);

    /* with hooks: RESIZEDB's counts, and each key named before it is stored */
    static const persist_rdb_hooks hooks = {hook_resize, hook_next_key};
    hooked h = {{store_create(clock_fn, NULL), -1, 0, 0}, {0}, 0, 0, 0, 0, 0};
    size_t used;
    assert_int_equal(persist_rdb_load_prefix(file.p, file.len, 1, load_hooked, NULL, &hooks, &h, &used), PERSIST_OK);
    assert_int_equal(used, file.len);
    assert_int_equal(h.l.keys, 2);
    assert_int_equal(h.hints, 2);
    assert_int_equal(h.hint_mismatches, 0);
    assert_int_equal(h.resize_keys, 2);
    assert_int_equal(h.resize_expires, 1);
    store_destroy(h.l.st);

    /* a flipped CRC byte: refused when checked, loaded when not */
    file.p[file.len - 1] ^= 1;
    loaded l2 = {store_create(clock_fn, NULL), -1, 0, 0};
    assert_int_equal(persist_rdb_load(file.p, file.len, 1, load_into, NULL, &l2), PERSIST_ERR_CHECKSUM);
    assert_int_equal(persist_rdb_load(file.p, file.len, 0, load_into, NULL, &l2), PERSIST_OK);
    /* cut anywhere: refused */
    for (size_t cut = 0; cut < file.len - 8; cut++) {
        loaded l3 = {store_create(clock_fn, NULL), -1, 0, 0};
        assert_int_equal(persist_rdb_load(file.p, cut, 1, load_into, NULL, &l3), PERSIST_ERR_FORMAT);
        store_destroy(l3.st);
    }
    /* a sink that fails makes end say so */
    persist_rdb_begin(&w, &opts, &aux, failing_sink, NULL);
    persist_rdb_db(&w, 0, s);
    assert_int_equal(persist_rdb_end(&w), PERSIST_ERR_IO);
    persist_buf_free(&file);
    store_destroy(l.st);
    store_destroy(l2.st);
    store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc64),
        cmocka_unit_test(test_crc64_long_inputs),
        cmocka_unit_test(test_lzf_matches_liblzf),
        cmocka_unit_test(test_lzf_round_trips),
        cmocka_unit_test(test_lzf_refuses_bad_input),
        cmocka_unit_test(test_listpack_encodings),
        cmocka_unit_test(test_listpack_long_strings_and_validation),
        cmocka_unit_test(test_listpack_pair_matches_the_writer),
        cmocka_unit_test(test_redis_payloads_restore_and_dump_back),
        cmocka_unit_test(test_value_round_trip),
        cmocka_unit_test(test_file_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
