/* fuzz_resp.c - libFuzzer target for the request parser: any bytes, split
 * any way, must parse to the same commands (and the same error) as when
 * parsed in one piece; with tiny limits it must merely stay sane. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "resp.h"

/* What a parse produced, as bytes: each command as its argc and arguments,
 * then how it ended. Two parses agree iff their logs are equal. */
typedef struct parse_log {
    resp_buf bytes;
    size_t consumed;
} parse_log;

typedef size_t (*chunker)(fuzz_rng *r, size_t left);

static size_t whole(fuzz_rng *r, size_t left) { return left; }
static size_t single(fuzz_rng *r, size_t left) { return 1; }

static void log_command(parse_log *log, const resp_parser *p)
{
    FUZZ_CHECK(p->argc > 0);
    resp_buf_append(&log->bytes, "C", 1);
    resp_buf_append(&log->bytes, &p->argc, sizeof(p->argc));
    for (size_t i = 0; i < p->argc; i++) {
        resp_buf_append(&log->bytes, &p->argv[i].len, sizeof(p->argv[i].len));
        resp_buf_append(&log->bytes, p->argv[i].ptr, p->argv[i].len);
    }
}

/* Parse what is buffered; 0 once the parser has failed. */
static int drain(resp_parser *p, const char *buf, size_t len, size_t *off, parse_log *log)
{
    for (;;) {
        size_t consumed = 0;
        resp_status st = resp_parse(p, buf + *off, len - *off, &consumed);
        FUZZ_CHECK(consumed <= len - *off);
        *off += consumed;
        log->consumed += consumed;
        if (st == RESP_NEED_MORE) return 1;
        if (st == RESP_ERROR) {
            const char *err = resp_parser_error(p);
            FUZZ_CHECK(err && strncmp(err, "Protocol error: ", 16) == 0);
            resp_buf_append(&log->bytes, "E", 1);
            resp_buf_append(&log->bytes, err, strlen(err));
            return 0;
        }
        FUZZ_CHECK(consumed > 0);
        log_command(log, p);
    }
}

/* Feed data in chunks the way the server does, except that the unparsed
 * tail moves to a fresh allocation every time: a parser that kept a
 * pointer instead of an offset reads freed memory, which ASan reports. */
static void parse_chunked(const uint8_t *data, size_t size, const resp_limits *lim,
                          chunker next, fuzz_rng *r, parse_log *log)
{
    resp_parser p;
    char *buf = NULL;
    size_t len = 0, off = 0, pos = 0;
    resp_parser_init(&p, lim);
    while (pos < size) {
        size_t n = next(r, size - pos);
        char *fresh = malloc(len - off + n);
        FUZZ_CHECK(fresh != NULL);
        if (len > off) memcpy(fresh, buf + off, len - off);
        memcpy(fresh + len - off, data + pos, n);
        free(buf);
        buf = fresh;
        len = len - off + n;
        off = 0;
        pos += n;
        if (!drain(&p, buf, len, &off, log)) break;
    }
    free(buf);
    resp_parser_free(&p);
}

static int logs_equal(const parse_log *a, const parse_log *b)
{
    return a->consumed == b->consumed && a->bytes.len == b->bytes.len &&
           (a->bytes.len == 0 || memcmp(a->bytes.data, b->bytes.data, a->bytes.len) == 0);
}

/* Size caps on unterminated lines depend on how much has arrived (as in
 * Redis), so the equivalence check runs without them. */
static void check_equivalence(const uint8_t *data, size_t size, fuzz_rng *r)
{
    resp_limits lim = {(size_t)-1, RESP_MULTIBULK_MAX, RESP_BULK_MAX, (int)(fuzz_rng_next(r) & 1)};
    chunker chunkers[] = {single, fuzz_chunk_len};
    parse_log ref = {{0}, 0};
    parse_chunked(data, size, &lim, whole, r, &ref);
    for (size_t i = 0; i < sizeof(chunkers) / sizeof(chunkers[0]); i++) {
        parse_log got = {{0}, 0};
        parse_chunked(data, size, &lim, chunkers[i], r, &got);
        FUZZ_CHECK(logs_equal(&ref, &got));
        resp_buf_free(&got.bytes);
    }
    resp_buf_free(&ref.bytes);
}

/* Tiny caps reach every "too big" and "invalid length" path. */
static void check_tiny_limits(const uint8_t *data, size_t size, fuzz_rng *r)
{
    uint64_t x = fuzz_rng_next(r);
    resp_limits lim = {1 + x % 300, (long long)(x >> 16) % 20, (long long)(x >> 24) % 64, (int)(x >> 40) & 1};
    parse_log log = {{0}, 0};
    parse_chunked(data, size, &lim, fuzz_chunk_len, r, &log);
    FUZZ_CHECK(log.consumed <= size);
    resp_buf_free(&log.bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_rng r;
    fuzz_rng_seed(&r, data, size);
    check_equivalence(data, size, &r);
    check_tiny_limits(data, size, &r);
    return 0;
}
