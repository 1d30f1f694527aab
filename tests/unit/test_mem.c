/* test_mem.c - the one out-of-memory policy (mem.h): a failed allocation
 * prints its size on stderr and aborts; success never returns NULL. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mem.h"

/* Which failure the child provokes. */
enum { OOM_DIRECT, OOM_ALLOC, OOM_CALLOC_OVERFLOW, OOM_REALLOC };

static void provoke(int how)
{
    void *volatile p = NULL;
    switch (how) {
    case OOM_DIRECT: mem_oom(1234); break;
    case OOM_ALLOC: p = mem_alloc(SIZE_MAX - 4096); break;
    case OOM_CALLOC_OVERFLOW: p = mem_calloc(SIZE_MAX / 2, 4); break;
    case OOM_REALLOC: p = mem_realloc(NULL, SIZE_MAX - 4096); break;
    }
    (void)p;
}

/* Run provoke(how) in a child; its stderr goes to *msg. Returns the wait status. */
static int in_child(int how, char *msg, size_t len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        provoke(how);
        _exit(0);   /* reached only if the policy did not abort */
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(fds[0], msg + got, len - 1 - got)) > 0) got += (size_t)r;
    msg[got] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void expect_abort(int how, const char *want)
{
    char msg[512];
    int status = in_child(how, msg, sizeof(msg));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    if (!strstr(msg, want)) fail_msg("stderr \"%s\" lacks \"%s\"", msg, want);
}

static void test_oom_reports_and_aborts(void **state)
{
    (void)state;
    expect_abort(OOM_DIRECT, "latchd: out of memory allocating 1234 bytes\n");
}

/* ASan's allocator reports impossible sizes itself, before ours can. */
#if !defined(__SANITIZE_ADDRESS__)
static void test_failed_allocations_take_the_policy(void **state)
{
    (void)state;
    char want[96];
    snprintf(want, sizeof(want), "out of memory allocating %zu bytes", SIZE_MAX - 4096);
    expect_abort(OOM_ALLOC, want);
    expect_abort(OOM_REALLOC, want);
    snprintf(want, sizeof(want), "out of memory allocating %zu bytes", SIZE_MAX);
    expect_abort(OOM_CALLOC_OVERFLOW, want);
}
#endif

static void test_success_is_never_null(void **state)
{
    (void)state;
    char *s = mem_strndup("lockname", 4);
    assert_string_equal(s, "lock");
    char *d = mem_strdup("owner");
    assert_string_equal(d, "owner");
    int *z = mem_calloc(8, sizeof(int));
    for (int i = 0; i < 8; i++) assert_int_equal(z[i], 0);
    z = mem_realloc(z, 1024 * sizeof(int));
    assert_non_null(z);
    free(s);
    free(d);
    free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_reports_and_aborts),
#if !defined(__SANITIZE_ADDRESS__)
        cmocka_unit_test(test_failed_allocations_take_the_policy),
#endif
        cmocka_unit_test(test_success_is_never_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
