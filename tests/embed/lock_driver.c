/* lock_driver.c - a liblatchd server driven line by line from stdin, for
 * tests/integration/test_embed_lock_latchd.py: "acquire|renew|release
 * <name> <owner> <lease_ms>" runs the native lock call and prints its
 * outcome; RESP clients meanwhile talk to the printed port. argv[1] is
 * "thread" (calls cross threads onto the server's loop; "stress <name>
 * <threads> <rounds>" contends from many) or "loop" (the server and stdin
 * share the caller's loop; calls run on it directly). More arguments are
 * "name value" pairs given to latchd_set before the start (tls-port and
 * its certificates, say). */
#include <latchd.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One command line; prints one result line. */
static void run_line(latchd_server *srv, char *line)
{
    char op[16], name[256], owner[256];
    long long lease;
    if (sscanf(line, "%15s %255s %255s %lld", op, name, owner, &lease) != 4) {
        printf("bad line\n");
        fflush(stdout);
        return;
    }
    latchd_lock_state st;
    latchd_status rc = !strcmp(op, "acquire") ? latchd_lock_acquire(srv, name, owner, lease, &st)
                       : !strcmp(op, "renew") ? latchd_lock_renew(srv, name, owner, lease, &st)
                       : !strcmp(op, "release") ? latchd_lock_release(srv, name, owner, lease, &st)
                       : LATCHD_ERR_ARG;
    printf("%s holds=%lld token=%lld ttl=%lld\n", latchd_status_name(rc), (long long)st.holds,
           (long long)st.token, (long long)st.ttl_ms);
    fflush(stdout);
}

/* ---- "stress <name> <threads> <rounds>" (thread mode): contention ---- */

typedef struct stress {
    latchd_server *srv;
    const char *name;
    int rounds;
    int inside;            /* holders right now: must never exceed 1 */
    long long last_token;  /* written only while holding the lock */
    int broken;
} stress;

typedef struct stress_worker {
    stress *st;
    pthread_t thread;
    char owner[32];
} stress_worker;

/* Take the lock rounds times: inside it, nobody else is, and the token
 * exceeds every token handed out before. */
static void *stress_run(void *arg)
{
    stress_worker *w = arg;
    stress *st = w->st;
    for (int i = 0; i < st->rounds; i++) {
        latchd_lock_state ls;
        latchd_status rc;
        while ((rc = latchd_lock_acquire(st->srv, st->name, w->owner, 30000, &ls)) == LATCHD_LOCK_HELD)
            sched_yield();
        if (rc != LATCHD_OK || __atomic_add_fetch(&st->inside, 1, __ATOMIC_SEQ_CST) != 1 ||
            ls.token <= st->last_token)
            __atomic_store_n(&st->broken, 1, __ATOMIC_RELAXED);
        st->last_token = ls.token;
        __atomic_sub_fetch(&st->inside, 1, __ATOMIC_SEQ_CST);
        if (latchd_lock_release(st->srv, st->name, w->owner, 30000, &ls) != LATCHD_OK)
            __atomic_store_n(&st->broken, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void run_stress(latchd_server *srv, const char *name, int threads, int rounds)
{
    stress st = {srv, name, rounds, 0, 0, 0};
    stress_worker w[16];
    if (threads > 16) threads = 16;
    for (int i = 0; i < threads; i++) {
        w[i].st = &st;
        snprintf(w[i].owner, sizeof(w[i].owner), "worker-%d", i);
        pthread_create(&w[i].thread, NULL, stress_run, &w[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(w[i].thread, NULL);
    printf("%s last_token=%lld\n", st.broken ? "STRESS_BROKEN" : "STRESS_OK", st.last_token);
    fflush(stdout);
}

/* ---- "loop": stdin read on the server's own (the caller's) loop ---- */

typedef struct input {
    uv_pipe_t pipe;
    latchd_server *srv;
    char line[1024];
    size_t len;
} input;

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    static char chunk[4096];   /* one reader, one read at a time */
    *buf = uv_buf_init(chunk, sizeof(chunk));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    input *in = s->data;
    if (n < 0) {   /* EOF: stop the server; the loop then runs dry */
        latchd_stop(in->srv);
        uv_close((uv_handle_t *)s, NULL);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char ch = buf->base[i];
        if (ch != '\n' && in->len + 1 < sizeof(in->line)) {
            in->line[in->len++] = ch;
            continue;
        }
        in->line[in->len] = '\0';
        run_line(in->srv, in->line);
        in->len = 0;
    }
}

static int serve_on_loop(latchd_server *srv)
{
    uv_loop_t loop;
    input in = {.srv = srv};
    uv_loop_init(&loop);
    if (latchd_start(srv, &loop) != LATCHD_OK) return 1;
    printf("port %d\n", latchd_port(srv));
    fflush(stdout);
    uv_pipe_init(&loop, &in.pipe, 0);
    in.pipe.data = &in;
    if (uv_pipe_open(&in.pipe, 0) != 0 || uv_read_start((uv_stream_t *)&in.pipe, on_alloc, on_read) != 0)
        return 1;
    uv_run(&loop, UV_RUN_DEFAULT);
    latchd_destroy(srv);
    return uv_loop_close(&loop) == 0 ? 0 : 1;
}

/* ---- "thread": the server on its own thread, calls from this one ---- */

static int serve_on_thread(latchd_server *srv)
{
    char line[1024];
    if (latchd_start_thread(srv) != LATCHD_OK) return 1;
    printf("port %d\n", latchd_port(srv));
    fflush(stdout);
    while (fgets(line, sizeof(line), stdin)) {
        char name[256];
        int threads, rounds;
        if (sscanf(line, "stress %255s %d %d", name, &threads, &rounds) == 3)
            run_stress(srv, name, threads, rounds);
        else
            run_line(srv, line);
    }
    latchd_destroy(srv);
    return 0;
}

int main(int argc, char **argv)
{
    char err[256];
    latchd_options opt = {.port = 0, .bind = "127.0.0.1"};
    latchd_server *srv = latchd_create(&opt, err, sizeof(err));
    if (argc < 2 || argc % 2 != 0 || !srv) {
        fprintf(stderr, "usage: lock_driver thread|loop [name value ...] (%s)\n", srv ? "" : err);
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (latchd_set(srv, argv[i], argv[i + 1], err, sizeof(err)) != LATCHD_OK) {
            fprintf(stderr, "%s\n", err);
            latchd_destroy(srv);
            return 2;
        }
    }
    /* stdout is the test's channel: the server logs to stderr. */
    if (latchd_set(srv, "logfile", "/dev/stderr", err, sizeof(err)) != LATCHD_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    return strcmp(argv[1], "loop") == 0 ? serve_on_loop(srv) : serve_on_thread(srv);
}
