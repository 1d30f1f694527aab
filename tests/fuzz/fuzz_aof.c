/* fuzz_aof.c - libFuzzer target for the append-only file's readers: the
 * input as AOF text (records and "#" annotations) and, line by line, as a
 * manifest. A record read must lie inside the input and encode back to
 * bytes that read as the same record; a cut-off record stays cut off
 * whatever is cut; a manifest line's name is one a file can have. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "persist/persist.h"

static void encode(persist_buf *b, const persist_aof_args *a)
{
    char head[32];
    int n = snprintf(head, sizeof head, "*%d\r\n", a->argc);
    persist_buf_put(b, head, (size_t)n);
    for (int i = 0; i < a->argc; i++) {
        n = snprintf(head, sizeof head, "$%zu\r\n", a->v[i].len);
        persist_buf_put(b, head, (size_t)n);
        persist_buf_put(b, a->v[i].p, a->v[i].len);
        persist_buf_put(b, "\r\n", 2);
    }
}

static void records(const uint8_t *data, size_t size)
{
    persist_aof_args a = {0}, again = {0};
    persist_buf b = {0};
    size_t pos = 0;
    int rc;
    while ((rc = persist_aof_next(data, size, &pos, &a)) == PERSIST_OK) {
        FUZZ_CHECK(pos <= size && a.argc >= 1);
        for (int i = 0; i < a.argc; i++)
            FUZZ_CHECK(a.v[i].p >= (const char *)data && a.v[i].p + a.v[i].len <= (const char *)data + size);
        b.len = 0;
        encode(&b, &a);
        size_t p2 = 0;
        FUZZ_CHECK(persist_aof_next(b.p, b.len, &p2, &again) == PERSIST_OK && p2 == b.len);
        FUZZ_CHECK(again.argc == a.argc);
        for (int i = 0; i < a.argc; i++)
            FUZZ_CHECK(again.v[i].len == a.v[i].len && memcmp(again.v[i].p, a.v[i].p, a.v[i].len) == 0);
        /* any cut inside the record's bytes reads as cut off, never as a record */
        if (b.len > 1) {
            size_t cut = 1 + (size_t)(b.p[b.len / 2]) % (b.len - 1), p3 = 0;
            FUZZ_CHECK(persist_aof_next(b.p, cut, &p3, &again) == PERSIST_ERR_TRUNCATED && p3 == 0);
        }
    }
    FUZZ_CHECK(rc == PERSIST_AOF_END || rc == PERSIST_ERR_TRUNCATED || rc == PERSIST_ERR_FORMAT);
    FUZZ_CHECK(pos <= size);
    persist_aof_args_free(&a);
    persist_aof_args_free(&again);
    persist_buf_free(&b);
}

static void manifest(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        persist_aof_info info;
        int r = persist_aof_manifest_line(p, len, &info);
        FUZZ_CHECK(r == 0 || r == 1 || r == PERSIST_ERR_FORMAT);
        if (r == 1) {
            size_t n = strlen(info.name);
            FUZZ_CHECK(n > 0 && n < PERSIST_AOF_NAME_MAX && !strchr(info.name, '/'));
            FUZZ_CHECK(info.type == 'b' || info.type == 'h' || info.type == 'i');
            FUZZ_CHECK(info.seq >= 0);
        }
        p += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    records(data, size);
    manifest(data, size);
    return 0;
}
