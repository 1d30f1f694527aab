/* rdb_file.c - the server's dump file: SAVE, BGSAVE (a forked child writes
 * it while the parent serves), loading at start, DEBUG RELOAD, save points. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem.h"
#include "persist.h"
#include "scripting/script.h"

#define BGSAVE_RETRY_S 5   /* Redis's CONFIG_BGSAVE_RETRY_DELAY after a failed one */

persist_opts rdb_opts(const server *s)
{
    const latchd_config *cfg = &s->cfg;
    return (persist_opts){
        .hash_max_listpack_entries = cfg->hash_max_listpack_entries,
        .hash_max_listpack_value = cfg->hash_max_listpack_value,
        .zset_max_listpack_entries = cfg->zset_max_listpack_entries,
        .zset_max_listpack_value = cfg->zset_max_listpack_value,
        .list_max_listpack_size = cfg->list_max_listpack_size,
        .rdbcompression = cfg->rdbcompression,
        .rdbchecksum = cfg->rdbchecksum,
    };
}

typedef struct file_sink {
    int fd;
    long long key_delay_us;
} file_sink;

static int write_all(const void *p, size_t n, void *ctx)
{
    int fd = ((file_sink *)ctx)->fd;
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* rdb-key-save-delay: Redis's debugDelay after each key (negative: that
 * many nanoseconds, here rounded to a yield). */
static void key_delay(void *ctx)
{
    long long us = ((file_sink *)ctx)->key_delay_us;
    if (us > 0) usleep((useconds_t)us);
    else sched_yield();
}

/* Every database and the function libraries, as rdbSaveRio writes them. */
int rdb_write_fd(server *s, int fd)
{
    persist_opts o = rdb_opts(s);
    persist_rdb_aux aux = {LATCHD_REDIS_VERSION, (long long)(server_now_ms(s) / 1000),
                           (long long)server_used_memory(s)};
    persist_rdb_writer w;
    file_sink sink = {fd, s->cfg.rdb_key_save_delay};
    persist_rdb_begin(&w, &o, &aux, write_all, &sink);
    if (sink.key_delay_us) w.after_key = key_delay;
    size_t nlibs;
    persist_pstr *libs = functions_codes(s, &nlibs);
    persist_rdb_functions(&w, libs, nlibs);
    free(libs);
    for (int i = 0; i < s->ndbs; i++) {
        store *st = server_db_if_used(s, i);
        if (st) persist_rdb_db(&w, i, st);
    }
    return persist_rdb_end(&w) == PERSIST_OK ? 0 : -1;
}

/* rdbSave: into temp-<pid>.rdb, flushed to disk, then renamed over the
 * dump file, so a failure leaves the previous one as it was. */
static int write_file(server *s)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-%d.rdb", (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        char cwd[1024];
        log_msg(s, LOG_WARNING, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                getcwd(cwd, sizeof cwd) ? cwd : "unknown", strerror(errno));
        return -1;
    }
    int rc = rdb_write_fd(s, fd) == 0 && fsync(fd) == 0 ? 0 : -1;
    if (close(fd) != 0) rc = -1;
    if (rc == 0 && rename(tmp, s->cfg.dbfilename) != 0) rc = -1;
    if (rc != 0) {
        log_msg(s, LOG_WARNING, "Write error saving DB on disk: %s", strerror(errno));
        unlink(tmp);
    }
    return rc;
}

/* A failed SAVE leaves rdb_last_bgsave_status as it was; a failed BGSAVE
 * sets it (Redis's lastbgsave_status); any success clears it. */
static void saved(server *s, int ok, int background, uint64_t dirty_then)
{
    if (ok || background) s->rdb_last_ok = ok;
    if (!ok) return;
    s->dirty -= dirty_then < s->dirty ? dirty_then : s->dirty;
    s->lastsave_s = server_now_ms(s) / 1000;
    s->rdb_saves++;
}

int rdb_save(server *s)
{
    int rc = write_file(s);
    if (rc == 0) log_msg(s, LOG_NOTICE, "DB saved on disk");
    saved(s, rc == 0, 0, s->dirty);
    s->rdb_last_try_s = server_now_ms(s) / 1000;
    return rc;
}

/* ---- children ---- */

/* Redis's zmalloc_get_private_dirty(-1): the pages this process wrote
 * since the fork, its own and those the parent copied away from it. */
static uint64_t private_dirty(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[256];
    uint64_t kb = 0;
    unsigned long long n;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Private_Dirty: %llu kB", &n) == 1) kb += n;
    fclose(f);
    return kb * 1024;
}

pid_t persist_fork(server *s, int *report, const char *cpulist)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) fds[0] = fds[1] = -1;
    uint64_t t0 = stats_ticks();
    pid_t pid = fork();
    if (pid == 0) {
        if (fds[0] >= 0) close(fds[0]);
        *report = fds[1];
        (void)affinity_apply(cpulist);   /* as Redis: a list that does not apply leaves the child unpinned */
        return 0;
    }
    uint64_t took = stats_ticks() - t0;
    if (fds[1] >= 0) close(fds[1]);
    *report = fds[0];
    if (pid < 0) {
        int err = errno;
        persist_child_cow(report);
        errno = err;
        return pid;
    }
    s->stat_total_forks++;
    s->stat_fork_usec = stats_ticks_to_us(took);
    if (took >= s->latency_ticks) latency_add_sample(s, "fork", s->stat_fork_usec / 1000);
    return pid;
}

void persist_child_exit(int report, int ok)
{
    if (report >= 0) {
        uint64_t cow = private_dirty();
        if (write(report, &cow, sizeof cow) != sizeof cow) _exit(ok ? 0 : 1);   /* the parent reads 0 */
    }
    _exit(ok ? 0 : 1);
}

size_t persist_child_cow(int *report)
{
    uint64_t cow = 0;
    if (*report < 0) return 0;
    if (read(*report, &cow, sizeof cow) != sizeof cow) cow = 0;
    close(*report);
    *report = -1;
    return (size_t)cow;
}

/* ---- BGSAVE ---- */

static void on_child_exit(uv_signal_t *h, int signum)
{
    (void)signum;
    server *s = h->data;
    int status;
    if (!s->rdb_child || waitpid(s->rdb_child, &status, WNOHANG) != s->rdb_child) return;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) log_msg(s, LOG_NOTICE, "Background saving terminated with success");
    else log_msg(s, LOG_WARNING, "Background saving error");
    saved(s, ok, 1, s->rdb_dirty_at_fork);
    s->rdb_child = 0;
    server_children_changed(s);
    s->rdb_last_cow = persist_child_cow(&s->rdb_cow_fd);
    s->rdb_last_bgsave_s = (long long)((server_now_ms(s) - s->rdb_fork_ms) / 1000);
    uv_signal_stop(h);
    if (s->rdb_bgsave_scheduled) {
        s->rdb_bgsave_scheduled = 0;
        rdb_bgsave(s);
    }
}

int rdb_bgsave(server *s)
{
    if (s->rdb_child) return -1;
    s->rdb_last_try_s = server_now_ms(s) / 1000;
    pid_t pid = persist_fork(s, &s->rdb_cow_fd, s->cfg.bgsave_cpulist);
    if (pid < 0) {
        log_msg(s, LOG_WARNING, "Can't save in background: fork: %s", strerror(errno));
        s->rdb_last_ok = 0;
        return -1;
    }
    if (pid == 0)   /* the child: the pages as they were at fork, written out */
        persist_child_exit(s->rdb_cow_fd, write_file(s) == 0);
    log_msg(s, LOG_NOTICE, "Background saving started by pid %d", (int)pid);
    s->rdb_child = pid;
    server_children_changed(s);
    s->rdb_fork_ms = server_now_ms(s);
    s->rdb_dirty_at_fork = s->dirty;
    if (!s->rdb_sigchld_init) {
        uv_signal_init(s->loop, &s->rdb_sigchld);
        s->rdb_sigchld.data = s;
        uv_unref((uv_handle_t *)&s->rdb_sigchld);
        s->rdb_sigchld_init = 1;
    }
    uv_signal_start(&s->rdb_sigchld, on_child_exit, SIGCHLD);
    on_child_exit(&s->rdb_sigchld, SIGCHLD);   /* it may be done already */
    return 0;
}

void rdb_wait_child(server *s)
{
    if (!s->rdb_child) return;
    int status;
    kill(s->rdb_child, SIGUSR1);
    waitpid(s->rdb_child, &status, 0);
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-%d.rdb", (int)s->rdb_child);
    unlink(tmp);
    s->rdb_child = 0;
    server_children_changed(s);
    persist_child_cow(&s->rdb_cow_fd);   /* stopped: no report */
}

/* ---- save points ---- */

/* serverCron's check: the first "<seconds> <changes>" pair met starts a
 * BGSAVE; after a failed one, not again for BGSAVE_RETRY_S. */
static void on_save_check(uv_timer_t *t)
{
    server *s = t->data;
    if (s->rdb_child || s->cron_paused || aof_rewriting(s)) return;   /* one child at a time */
    if (s->rdb_bgsave_scheduled) {
        s->rdb_bgsave_scheduled = 0;
        rdb_bgsave(s);
        if (!s->cfg.save[0]) uv_timer_stop(t);
        return;
    }
    uint64_t now_s = server_now_ms(s) / 1000;
    const char *p = s->cfg.save;
    long long secs, changes;
    int used;
    while (sscanf(p, " %lld %lld%n", &secs, &changes, &used) == 2) {
        p += used;
        if (s->dirty < (uint64_t)changes || now_s - s->lastsave_s <= (uint64_t)secs) continue;
        if (!s->rdb_last_ok && now_s - s->rdb_last_try_s <= BGSAVE_RETRY_S) continue;
        log_msg(s, LOG_NOTICE, "%lld changes in %lld seconds. Saving...", changes, secs);
        rdb_bgsave(s);
        return;
    }
}

static void timer_init(server *s)
{
    if (s->rdb_timer_init) return;
    uv_timer_init(s->loop, &s->rdb_timer);
    s->rdb_timer.data = s;
    uv_unref((uv_handle_t *)&s->rdb_timer);
    s->rdb_timer_init = 1;
}

void rdb_save_points_update(server *s)
{
    timer_init(s);
    if (s->cfg.save[0]) uv_timer_start(&s->rdb_timer, on_save_check, 1000, 1000);
    else if (!s->rdb_bgsave_scheduled) uv_timer_stop(&s->rdb_timer);   /* a scheduled BGSAVE still waits */
}

void rdb_schedule_bgsave(server *s)
{
    s->rdb_bgsave_scheduled = 1;
    if (s->rdb_child) return;   /* on_child_exit starts it */
    timer_init(s);
    uv_timer_start(&s->rdb_timer, on_save_check, 0, 1000);   /* until it starts (an AOF rewrite may run) */
}

void rdb_close(server *s)
{
    if (s->rdb_timer_init) server_close_handle(s, (uv_handle_t *)&s->rdb_timer);
    if (s->rdb_sigchld_init) server_close_handle(s, (uv_handle_t *)&s->rdb_sigchld);
    s->rdb_timer_init = s->rdb_sigchld_init = 0;
}

/* ---- loading ---- */

typedef struct load_ctx {
    server *s;
    uint64_t now_ms;
    long long loaded, expired;
    int bad_db;
    int merge;
} load_ctx;

/* As a master loads: keys already past their deadline are dropped. */
static int load_key(int db, const char *key, size_t klen, persist_value *v, int64_t deadline, void *ctx)
{
    load_ctx *lc = ctx;
    server_count_deep_checks(lc->s, NULL, persist_value_deep_checks(v));
    store *st = server_db(lc->s, db);
    if (!st) {
        persist_value_free(v);
        lc->bad_db = db;
        return PERSIST_ERR_FORMAT;
    }
    if (deadline != STORE_NO_DEADLINE && (uint64_t)deadline <= lc->now_ms) {
        persist_value_free(v);
        lc->expired++;
        return PERSIST_OK;
    }
    store_key *old = store_lookup(st, key, klen);
    if (old && !lc->merge) {
        log_msg(lc->s, LOG_WARNING, "RDB has duplicated key '%.*s' in DB %d", (int)klen, key, db);
        persist_value_free(v);
        return PERSIST_ERR_FORMAT;
    }
    if (old) store_delete_key(st, old);
    store_key *k = persist_value_store(v, st, key, klen);
    if (deadline != STORE_NO_DEADLINE) store_key_set_deadline(st, k, deadline);
    lc->loaded++;
    return PERSIST_OK;
}

static void load_resize(int db, uint64_t keys, uint64_t expires, void *ctx)
{
    load_ctx *lc = ctx;
    (void)expires;   /* deadlines live in the timing wheel: nothing to size */
    store *st = server_db(lc->s, db);
    if (st) store_reserve(st, (size_t)keys);
}

static void load_next_key(int db, const char *key, size_t klen, void *ctx)
{
    load_ctx *lc = ctx;
    store *st = server_db(lc->s, db);
    if (st) store_prefetch(st, key, klen);
}

static const persist_rdb_hooks load_hooks = {load_resize, load_next_key};

static int load_lib(const char *code, size_t len, void *ctx)
{
    load_ctx *lc = ctx;
    char err[256];
    if (function_load(lc->s, code, len, lc->merge, err, sizeof err)) return PERSIST_OK;
    log_msg(lc->s, LOG_WARNING, "Failed loading library, %s", err);
    return PERSIST_ERR_FORMAT;
}

int rdb_load_mem(server *s, const unsigned char *p, size_t len, size_t *used)
{
    load_ctx lc = {s, server_now_ms(s), 0, 0, -1, 0};
    int rc = persist_rdb_load_prefix(p, len, s->cfg.rdbchecksum, load_key, load_lib, &load_hooks, &lc, used);
    s->rdb_loaded = lc.loaded;
    s->rdb_load_expired = lc.expired;
    if (lc.bad_db >= 0)
        log_msg(s, LOG_WARNING, "FATAL: Data file was created with a Redis server configured to handle more than %d databases. Exiting", s->ndbs);
    return rc;
}

int rdb_load(server *s, int merge)
{
    int fd = open(s->cfg.dbfilename, O_RDONLY);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    uint64_t start = server_now_ms(s);
    void *p = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (st.st_size && p == MAP_FAILED) return -1;
    load_ctx lc = {s, start, 0, 0, -1, merge};
    size_t used;
    int rc = persist_rdb_load_prefix(p, (size_t)st.st_size, s->cfg.rdbchecksum, load_key, load_lib, &load_hooks,
                                     &lc, &used);
    if (p) munmap(p, (size_t)st.st_size);
    s->rdb_loaded = lc.loaded;
    s->rdb_load_expired = lc.expired;
    if (rc == PERSIST_OK) {
        log_msg(s, LOG_NOTICE, "Done loading RDB, keys loaded: %lld, keys expired: %lld.", lc.loaded, lc.expired);
        log_msg(s, LOG_NOTICE, "DB loaded from disk: %.3f seconds", (double)(server_now_ms(s) - start) / 1000);
        return 0;
    }
    if (lc.bad_db >= 0)
        log_msg(s, LOG_WARNING, "FATAL: Data file was created with a Redis server configured to handle more than %d databases. Exiting", s->ndbs);
    else if (rc == PERSIST_ERR_CHECKSUM)
        log_msg(s, LOG_WARNING, "Wrong RDB checksum. Aborting now.");
    else
        log_msg(s, LOG_WARNING, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
    return -1;
}

/* ---- shutdown ---- */

/* While the final save runs, the loop cannot see signals: a second SIGINT
 * ("you insist") exits at once from the handler, removing the temp file,
 * as Redis's sigShutdownHandler does. The name is made in the handler, with
 * async-signal-safe steps only. */
static void on_insist(int sig)
{
    (void)sig;
    char name[32] = "temp-", digits[16];
    int n = 0, at = 5;
    for (unsigned pid = (unsigned)getpid(); pid || !n; pid /= 10) digits[n++] = (char)('0' + pid % 10);
    while (n) name[at++] = digits[--n];
    memcpy(name + at, ".rdb", 5);
    unlink(name);
    _exit(1);
}

static int final_save(server *s)
{
    struct sigaction insist = {.sa_handler = on_insist}, old;
    sigemptyset(&insist.sa_mask);
    sigaction(SIGINT, &insist, &old);
    int rc = rdb_save(s);
    sigaction(SIGINT, &old, NULL);
    return rc;
}

int rdb_shutdown_save(server *s, int save, int nosave, int force)
{
    aof_shutdown(s);   /* Redis's finishShutdown: the AOF child killed, the file synced, first */
    if (s->rdb_child) {
        log_msg(s, LOG_WARNING, "There is a child saving an .rdb. Killing it!");
        rdb_wait_child(s);
    }
    if (nosave || (!save && !s->cfg.save[0])) return 0;
    log_msg(s, LOG_NOTICE, "Saving the final RDB snapshot before exiting.");
    if (final_save(s) == 0) return 0;
    if (force) {
        log_msg(s, LOG_WARNING, "Error trying to save the DB. Exit anyway.");
        return 0;
    }
    log_msg(s, LOG_WARNING, "Error trying to save the DB, can't exit.");
    log_msg(s, LOG_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
    aof_shutdown_aborted(s);
    return -1;
}
