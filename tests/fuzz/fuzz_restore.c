/* fuzz_restore.c - libFuzzer target for RESTORE's payload parser: the input
 * is an RDB value (type byte and body; the CRC is checked before the parser
 * and would stop the fuzzer at the door). Whatever decodes must store into
 * a consistent keyspace, DUMP again, and decode back to the same DUMP; the
 * input also goes through the payload check and an LZF round trip, and,
 * after "REDIS0010", through the whole-file loader: what loads is written
 * as a file again and loads back to as many keys. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "persist/persist.h"
#include "set.h"

static uint64_t frozen_clock(void *ctx)
{
    (void)ctx;
    return FUZZ_T0;
}

static const persist_opts opts = {512, 64, 128, 64, -2, 1, 1};

static void dump_key(store *s, const char *key, persist_buf *out)
{
    store_key *k = store_lookup(s, key, strlen(key));
    FUZZ_CHECK(k != NULL);
    persist_value_encode(k, &opts, out);
}

static void same_field(const char *f, size_t flen, const char *val, size_t vlen, void *ctx)
{
    size_t len;
    const char *other = store_hash_get(ctx, f, flen, &len);
    FUZZ_CHECK(other && len == vlen && memcmp(other, val, len) == 0);
}

static void same_member(const char *m, size_t len, void *ctx)
{
    FUZZ_CHECK(store_set_has(ctx, m, len));
}

static void lzf_round_trip(const uint8_t *data, size_t size)
{
    if (size == 0) return;
    size_t cap = size + size / 16 + 64;
    unsigned char *c = malloc(cap), *d = malloc(size);
    persist_lzf_table *t = persist_lzf_table_new();
    size_t n = persist_lzf_compress(t, data, size, c, cap);
    persist_lzf_table_free(t);
    FUZZ_CHECK(n > 0);
    FUZZ_CHECK(persist_lzf_decompress(c, n, d, size) == size);
    FUZZ_CHECK(memcmp(d, data, size) == 0);
    /* and the input as if it were compressed: bounded, whatever it is */
    unsigned char out[4096];
    FUZZ_CHECK(persist_lzf_decompress(data, size, out, sizeof out) <= sizeof out);
    free(c);
    free(d);
}

static int load_into(int db, const char *key, size_t klen, persist_value *v, int64_t deadline, void *ctx)
{
    if (db != 0) {
        persist_value_free(v);
        return PERSIST_ERR_FORMAT;
    }
    store *s = ctx;
    if (deadline != STORE_NO_DEADLINE && (uint64_t)deadline <= FUZZ_T0) {   /* as the server loads: dropped */
        persist_value_free(v);
        return PERSIST_OK;
    }
    store_key *old = store_lookup(s, key, klen);
    if (old) store_delete_key(s, old);
    store_key *k = persist_value_store(v, s, key, klen);
    if (deadline != STORE_NO_DEADLINE) store_key_set_deadline(s, k, deadline);
    return PERSIST_OK;
}

/* RESIZEDB's hint, as the server takes it (bounded by the file's length). */
static size_t resize_limit;
static void resize_into(int db, uint64_t keys, uint64_t expires, void *ctx)
{
    FUZZ_CHECK(keys <= resize_limit && expires <= keys);
    if (db == 0) store_reserve(ctx, (size_t)keys);
}

/* The next key's name, as the server takes it: a bucket prefetched. */
static void next_into(int db, const char *key, size_t klen, void *ctx)
{
    if (db == 0) store_prefetch(ctx, key, klen);
}

static const persist_rdb_hooks hooks = {resize_into, next_into};

static int to_buf(const void *p, size_t n, void *ctx)
{
    persist_buf_put(ctx, p, n);
    return 0;
}

static void file_round_trip(const uint8_t *data, size_t size)
{
    unsigned char *file = malloc(size + 9);
    memcpy(file, "REDIS0010", 9);
    memcpy(file + 9, data, size);
    store *s = store_create(frozen_clock, NULL), *again = store_create(frozen_clock, NULL);
    size_t used = 0;
    resize_limit = size + 9;
    if (persist_rdb_load_prefix(file, size + 9, 1, load_into, NULL, &hooks, s, &used) == PERSIST_OK) {
        FUZZ_CHECK(used >= 9 && used <= size + 9);
        FUZZ_CHECK(fuzz_check_store(s) == store_size(s));
        persist_buf out = {0};
        persist_rdb_writer w;
        persist_rdb_aux aux = {"7.0.15", 0, 0};
        persist_rdb_begin(&w, &opts, &aux, to_buf, &out);
        persist_rdb_db(&w, 0, s);
        FUZZ_CHECK(persist_rdb_end(&w) == PERSIST_OK);
        FUZZ_CHECK(persist_rdb_load(out.p, out.len, 1, load_into, NULL, again) == PERSIST_OK);
        FUZZ_CHECK(store_size(again) == store_size(s));
        persist_buf_free(&out);
    }
    store_destroy(s);
    store_destroy(again);
    free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    file_round_trip(data, size);
    (void)persist_payload_check(data, size);
    lzf_round_trip(data, size);
    persist_value *v;
    if (persist_value_decode(data, size, &v, NULL) != PERSIST_OK) return 0;
    store *s = store_create(frozen_clock, NULL);
    store_type t = persist_value_type(v);
    store_key *k = persist_value_store(v, s, "k", 1);
    FUZZ_CHECK(k != NULL && store_key_type(k) == t);
    FUZZ_CHECK(fuzz_check_store(s) == 1);
    /* DUMP, RESTORE that under another name: the same value, the same DUMP */
    persist_buf a = {0}, b = {0};
    dump_key(s, "k", &a);
    FUZZ_CHECK(persist_value_decode(a.p, a.len, &v, NULL) == PERSIST_OK);
    persist_value_store(v, s, "k2", 2);
    dump_key(s, "k2", &b);
    if (a.p[0] == PERSIST_TYPE_HASH) {   /* a hashtable's order is its dict's */
        store_hash_foreach(store_lookup(s, "k", 1), same_field, store_lookup(s, "k2", 2));
    } else if (a.p[0] == PERSIST_TYPE_SET) {
        const store_set *k2 = store_set_of(store_lookup(s, "k2", 2));
        FUZZ_CHECK(store_set_len(k2) == store_set_len(store_set_of(store_lookup(s, "k", 1))));
        store_set_foreach(store_set_of(store_lookup(s, "k", 1)), same_member, (void *)k2);
    } else {
        FUZZ_CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
    }
    FUZZ_CHECK(fuzz_check_store(s) == 2);
    persist_buf_free(&a);
    persist_buf_free(&b);
    store_destroy(s);
    return 0;
}
