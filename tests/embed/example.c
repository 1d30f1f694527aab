/* example.c - liblatchd's README example, built against the installed
 * library by tests/integration/test_embed_latchd.py: two servers in one
 * process, one on the caller's uv loop and one on its own thread, talked
 * to over TCP (PING, SET/GET, a Redisson lock script) and natively. */
#include <latchd.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Redisson's RLock acquire: nil when acquired, else the holder's PTTL. */
#define LOCK_SCRIPT                                                                    \
    "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], "    \
    "ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if "       \
    "(redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', "       \
    "KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; " \
    "return redis.call('pttl', KEYS[1]);"

static int connect_to(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* Send argv as a RESP array; 0 if the reply starts with want. */
static int call(int fd, const char *want, int argc, const char **argv)
{
    char req[1024], reply[256];
    int n = snprintf(req, sizeof(req), "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        n += snprintf(req + n, sizeof(req) - (size_t)n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (write(fd, req, (size_t)n) != n) return -1;
    size_t got = 0, need = strlen(want);
    while (got < need) {
        ssize_t r = read(fd, reply + got, sizeof(reply) - 1 - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    reply[got] = '\0';
    printf("  %-8s -> %s", argv[0], reply);
    return strncmp(reply, want, need) == 0 ? 0 : -1;
}

#define CALL(fd, want, ...) \
    call(fd, want, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), (const char *[]){__VA_ARGS__})

/* Each server: PING, its own SET/GET, and the lock script. */
static int talk(int port, const char *value, const char *lock_reply)
{
    int fd = connect_to(port), bad = fd < 0;
    printf("server on port %d\n", port);
    bad = bad || CALL(fd, "+PONG", "PING");
    bad = bad || CALL(fd, "+OK", "SET", "who", value);
    char bulk[64];
    snprintf(bulk, sizeof(bulk), "$%zu\r\n%s\r\n", strlen(value), value);
    bad = bad || CALL(fd, bulk, "GET", "who");
    bad = bad || CALL(fd, lock_reply, "EVAL", LOCK_SCRIPT, "1", "orders", "30000", "worker-1:1");
    if (fd >= 0) close(fd);
    return bad;
}

typedef struct clients {
    latchd_server *on_loop, *on_thread;
    int failed;
} clients;

/* A client thread: the caller's loop keeps running its server meanwhile. */
static void *run_clients(void *arg)
{
    clients *c = arg;
    c->failed = talk(latchd_port(c->on_loop), "loop", "$-1") ||   /* nil: acquired */
                talk(latchd_port(c->on_thread), "thread", ":");   /* held natively: PTTL */
    latchd_stop(c->on_loop);   /* any thread may stop a server */
    return NULL;
}

int main(void)
{
    char err[256];
    latchd_options opt = {.port = 0};   /* 0: an ephemeral port */
    uv_loop_t loop;
    uv_loop_init(&loop);

    latchd_server *a = latchd_create(&opt, err, sizeof(err));
    latchd_server *b = latchd_create(&opt, err, sizeof(err));
    if (!a || !b || latchd_set(b, "maxmemory", "64mb", err, sizeof(err)) != LATCHD_OK ||
        latchd_start(a, &loop) != LATCHD_OK || latchd_start_thread(b) != LATCHD_OK) {
        fprintf(stderr, "start: %s\n", err);
        return 1;
    }

    /* Native lock on the threaded server: the RESP lock script sees it held. */
    latchd_lock_state st;
    latchd_status rc = latchd_lock_acquire(b, "orders", "embedder", 30000, &st);
    printf("native acquire: %s token=%lld holds=%lld\n", latchd_status_name(rc),
           (long long)st.token, (long long)st.holds);

    clients c = {a, b, 1};
    pthread_t t;
    pthread_create(&t, NULL, run_clients, &c);
    uv_run(&loop, UV_RUN_DEFAULT);   /* returns once latchd_stop(a) has closed it */
    pthread_join(t, NULL);

    rc = latchd_lock_release(b, "orders", "embedder", 30000, &st);
    printf("native release: %s holds=%lld\n", latchd_status_name(rc), (long long)st.holds);
    latchd_destroy(a);
    latchd_destroy(b);
    uv_loop_close(&loop);
    puts(c.failed ? "FAILED" : "ok");
    return c.failed;
}
