/* get_check.c - ctest embed_get: latchd_get's values, truncation and
 * errors, before start and on a started server's loop thread. Uses
 * latchd.h alone and links the installed-form archive, as an embedder. */
#include <latchd.h>

#include <stdio.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

/* latchd_get into a fresh buffer; the status must be want and, for
 * LATCHD_OK, the value value. */
static void expect_get(const latchd_server *srv, const char *name, latchd_status want, const char *value)
{
    char buf[128];
    memset(buf, 'x', sizeof(buf));
    latchd_status st = latchd_get(srv, name, buf, sizeof(buf));
    if (st != want) {
        fprintf(stderr, "latchd_get(%s): %s, expected %s\n", name, latchd_status_name(st),
                latchd_status_name(want));
        failures++;
    } else if (value && strcmp(buf, value) != 0) {
        fprintf(stderr, "latchd_get(%s) = \"%.*s\", expected \"%s\"\n", name, 100, buf, value);
        failures++;
    } else if (!value && buf[0] != 'x') {
        fprintf(stderr, "latchd_get(%s) wrote into buf on an error\n", name);
        failures++;
    }
}

static void before_start(latchd_server *srv)
{
    char err[128];
    /* The library's own default, then Redis 7's. */
    expect_get(srv, "loglevel", LATCHD_OK, "warning");
    expect_get(srv, "maxclients", LATCHD_OK, "10000");
    expect_get(srv, "appendonly", LATCHD_OK, "no");
    /* Names are case-insensitive, as in CONFIG GET. */
    expect_get(srv, "LogLevel", LATCHD_OK, "warning");

    /* What latchd_set stored, shown as CONFIG GET shows it (units resolved). */
    EXPECT(latchd_set(srv, "maxmemory", "100mb", err, sizeof(err)) == LATCHD_OK);
    expect_get(srv, "maxmemory", LATCHD_OK, "104857600");
    EXPECT(latchd_set(srv, "save", "900 1 300 10", err, sizeof(err)) == LATCHD_OK);
    expect_get(srv, "save", LATCHD_OK, "900 1 300 10");
    EXPECT(latchd_set(srv, "maxmemory-policy", "allkeys-lru", err, sizeof(err)) == LATCHD_OK);
    expect_get(srv, "maxmemory-policy", LATCHD_OK, "allkeys-lru");
    /* A refused set leaves the value alone. */
    EXPECT(latchd_set(srv, "maxclients", "-5", err, sizeof(err)) == LATCHD_ERR_ARG);
    expect_get(srv, "maxclients", LATCHD_OK, "10000");
    /* Redis's range, its error text past it. */
    EXPECT(latchd_set(srv, "proto-max-bulk-len", "1000", err, sizeof(err)) == LATCHD_ERR_ARG);
    EXPECT(strstr(err, "between 1048576 and 9223372036854775807 inclusive") != NULL);
    expect_get(srv, "proto-max-bulk-len", LATCHD_OK, "536870912");
    EXPECT(latchd_set(srv, "proto-max-bulk-len", "4gb", err, sizeof(err)) == LATCHD_OK);
    expect_get(srv, "proto-max-bulk-len", LATCHD_OK, "4294967296");

    /* Errors: unknown names, patterns (one parameter, not CONFIG GET's glob), NULLs. */
    expect_get(srv, "no-such-parameter", LATCHD_ERR_ARG, NULL);
    expect_get(srv, "max*", LATCHD_ERR_ARG, NULL);
    expect_get(srv, "", LATCHD_ERR_ARG, NULL);
    char buf[16] = "untouched";
    EXPECT(latchd_get(NULL, "port", buf, sizeof(buf)) == LATCHD_ERR_ARG);
    EXPECT(latchd_get(srv, NULL, buf, sizeof(buf)) == LATCHD_ERR_ARG);
    EXPECT(latchd_get(srv, "port", NULL, sizeof(buf)) == LATCHD_ERR_ARG);
    EXPECT(strcmp(buf, "untouched") == 0);

    /* Truncated to len, always NUL-terminated; len 0 writes nothing. */
    EXPECT(latchd_get(srv, "loglevel", buf, 4) == LATCHD_OK);
    EXPECT(strcmp(buf, "war") == 0);
    memcpy(buf, "untouched", 10);
    EXPECT(latchd_get(srv, "loglevel", buf, 0) == LATCHD_OK);
    EXPECT(strcmp(buf, "untouched") == 0);
}

int main(void)
{
    char err[128] = "";
    latchd_options opt = {.port = 0, .bind = "127.0.0.1"};
    latchd_server *srv = latchd_create(&opt, err, sizeof(err));
    if (!srv) {
        fprintf(stderr, "latchd_create: %s\n", err);
        return 1;
    }
    expect_get(srv, "bind", LATCHD_OK, "127.0.0.1");
    before_start(srv);

    /* Started on this thread's loop: the running server's values, and
     * latchd_set is refused. */
    uv_loop_t loop;
    EXPECT(uv_loop_init(&loop) == 0);
    EXPECT(latchd_start(srv, &loop) == LATCHD_OK);
    expect_get(srv, "maxmemory", LATCHD_OK, "104857600");
    expect_get(srv, "save", LATCHD_OK, "900 1 300 10");
    EXPECT(latchd_set(srv, "maxmemory", "1mb", err, sizeof(err)) == LATCHD_ERR_STATE);
    expect_get(srv, "maxmemory", LATCHD_OK, "104857600");
    expect_get(srv, "no-such-parameter", LATCHD_ERR_ARG, NULL);

    EXPECT(latchd_stop(srv) == LATCHD_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    latchd_destroy(srv);
    EXPECT(uv_loop_close(&loop) == 0);

    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
