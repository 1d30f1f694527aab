/* repl.c - the server as a replicated state machine (repl.h): entries of
 * the AOF's effect records, replies held until their entry commits, the
 * followers' applier, snapshots in the RDB encoding, roles for INFO/ROLE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem.h"
#include "persist/persist.h"
#include "repl.h"
#include "scripting/script.h"

#define ENTRY_MAGIC "LRF1"
#define ENTRY_HEADER 24   /* magic, records' length (4), the proposer's nonce (8), its ticket (8) */
#define MAX_MEMBERS 16

static const char unknown_err[] =
    "-UNKNOWN leadership was lost before the command committed: its outcome is unknown";

typedef struct repl_state {
    server *s;
    repl_engine *e;
    repl_member members[MAX_MEMBERS];
    int nmembers;
    char dir[1024];
    uint64_t nonce;          /* the engine instance's entries carry it: ours were applied as they ran */
    uint64_t proposed, done; /* tickets: the last proposed, the last committed or failed */
    uint64_t effect_ticket;  /* the last proposed with records (an empty entry changes nothing) */
    int draining;            /* writes paused until a snapshot can be taken (on_snapshot) */
    int serving;             /* leader whose own-term barrier committed: commands run here */
    uint64_t serving_term;
    int barrier_pending;
    int rebuilding;          /* closing the engine to load snapshot + log again */
    int close_pending;       /* the rebuild's close, not yet called (never from inside the engine) */
    int closing;
    client *applier;         /* runs other leaders' entries */
    persist_aof_args args;
    resp_slice *argv;
    size_t argv_cap;
    resp_buf entry;          /* the next entry, built in place */
} repl_state;

static void open_engine(repl_state *r);

/* ---- the peers: id@host:port[@client_port],... ---- */

static int parse_members(repl_state *r, const char *spec, char *err, size_t errlen)
{
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[256];
        if (n == 0 || n >= sizeof item || r->nmembers == MAX_MEMBERS) goto bad;
        memcpy(item, p, n);
        item[n] = '\0';
        char *at = strchr(item, '@');
        if (!at) goto bad;
        *at = '\0';
        char *addr = at + 1, *cport = strchr(addr, '@');
        if (cport) *cport++ = '\0';
        char *colon = strrchr(addr, ':');
        char *idend;
        unsigned long long id = strtoull(item, &idend, 10);
        if (*idend || id == 0 || !colon || colon == addr || strlen(addr) >= sizeof r->members[0].address) goto bad;
        repl_member *m = &r->members[r->nmembers++];
        m->id = id;
        snprintf(m->address, sizeof m->address, "%s", addr);
        snprintf(m->host, sizeof m->host, "%.*s", (int)(colon - addr), addr);
        m->client_port = cport ? atoi(cport) : 0;
        p += n + (end ? 1 : 0);
    }
    if (r->nmembers) return 0;
bad:
    snprintf(err, errlen, "raft-peers must be id@host:port[@client_port],... (got '%s')", spec);
    return -1;
}

static const repl_member *member(const repl_state *r, uint64_t id)
{
    for (int i = 0; i < r->nmembers; i++)
        if (r->members[i].id == id) return &r->members[i];
    return NULL;
}

/* ---- roles ---- */

/* A follower never expires keys on its own clock: a key past its deadline
 * reads as missing but stays until the leader's DEL arrives. */
static void follower_mode(server *s)
{
    s->repl_gate = 1;
    s->active_expire = 0;
    s->env.hold_expired = 1;
}

static void leader_mode(server *s)
{
    s->active_expire = 1;
    s->env.hold_expired = 0;
    s->repl_gate = 0;
}

static void rebuild_done(void *ctx)
{
    repl_state *r = ctx;
    r->e = NULL;
    if (r->closing) return;
    open_engine(r);
}

/* Own entries may never commit: the state holds effects the log may not,
 * so it is rebuilt from the snapshot and the log (the engine restarted,
 * under a new nonce: its old entries are applied like anyone's). The node
 * stops serving at once; the engine closes from poll_role, because the loss
 * is mostly reported from inside libraft (a failed proposal's callback, in
 * the middle of its step down), and libraft 0.15 goes on using its state
 * and its disk log after such a callback returns: closing there crashed. */
static void rebuild(repl_state *r)
{
    if (r->rebuilding || r->closing || !r->e) return;
    log_msg(r->s, LOG_WARNING, "Raft: leadership lost with entries in flight: rebuilding the dataset from the log");
    r->rebuilding = 1;
    r->close_pending = 1;
}

/* Outside the engine's callbacks only. */
static void close_engine(repl_state *r)
{
    r->close_pending = 0;
    repl_engine_close(r->e, rebuild_done, r);
}

static void lost_leadership(repl_state *r)
{
    server *s = r->s;
    size_t pending;
    aof_records(s, &pending);
    /* effects in the dataset that the log may never hold: entries with
     * records in flight, or this iteration's records not yet proposed */
    int ahead = r->done < r->effect_ticket || pending;
    r->serving = 0;
    r->barrier_pending = 0;
    if (r->draining) {
        r->draining = 0;
        block_unpause(s);
    }
    follower_mode(s);
    r->done = r->proposed;   /* later failure reports of these are old news */
    net_hold_pending(s, r->proposed);   /* this iteration's replies too: they saw what may not commit */
    net_fail_held(s, unknown_err);
    if (ahead) rebuild(r);
}

static void check_role(repl_state *r)
{
    int role = repl_engine_role(r->e);
    if (role != REPL_ROLE_LEADER) {
        if (r->serving || r->proposed != r->done) lost_leadership(r);
        return;
    }
    if (r->serving && repl_engine_term(r->e) != r->serving_term) {   /* lost and won again meanwhile */
        lost_leadership(r);
        return;
    }
    if (!r->serving && !r->barrier_pending && repl_engine_barrier(r->e) == 0) r->barrier_pending = 1;
}

/* Each loop iteration, outside the engine: role changes, and a rebuild's
 * close. */
static void poll_role(repl_state *r)
{
    if (r->e && !r->rebuilding) check_role(r);
    if (r->close_pending) close_engine(r);
}

/* ---- engine hooks ---- */

static void apply_records(repl_state *r, const unsigned char *p, size_t len)
{
    server *s = r->s;
    size_t pos = 0;
    int rc, hold = s->env.hold_expired, paused = s->clients_paused;
    s->env.hold_expired = STORE_SEE_EXPIRED;   /* the leader decided expiry: its DELs are in the log */
    s->clients_paused = 0;   /* CLIENT PAUSE holds clients, not the log (nor a replica's link in Redis) */
    while ((rc = persist_aof_next(p, len, &pos, &r->args)) == PERSIST_OK) {
        if ((size_t)r->args.argc > r->argv_cap) {
            r->argv_cap = (size_t)r->args.argc + 8;
            r->argv = mem_realloc(r->argv, r->argv_cap * sizeof(*r->argv));
        }
        for (int i = 0; i < r->args.argc; i++) r->argv[i] = (resp_slice){r->args.v[i].p, r->args.v[i].len};
        client_run_postponed(r->applier, r->argv, r->args.argc);
        r->applier->out.len = 0;   /* nobody reads the applier's replies */
    }
    s->env.hold_expired = hold;
    s->clients_paused = paused;
    if (rc != PERSIST_AOF_END) log_msg(s, LOG_WARNING, "Raft: a malformed entry was not applied fully");
}

/* Before a snapshot or the log is loaded: keys and function libraries
 * (the RDB holds both), with nothing of it going into an entry. */
static void reset_dataset(server *s)
{
    server_flush_all(s);
    functions_flush(s);
    aof_records_taken(s);
}

static void on_apply(void *ctx, const unsigned char *p, size_t len)
{
    repl_state *r = ctx;
    uint64_t nonce;
    uint32_t rlen = 0;
    if (len >= ENTRY_HEADER) memcpy(&rlen, p + 4, 4);
    if (len < ENTRY_HEADER || memcmp(p, ENTRY_MAGIC, 4) != 0 || rlen > len - ENTRY_HEADER) {
        log_msg(r->s, LOG_WARNING, "Raft: an entry of unknown format was skipped (%zu bytes: %.*s)", len,
                (int)(len < 8 ? len : 8), (const char *)p);
        return;
    }
    memcpy(&nonce, p + 8, 8);
    if (nonce == r->nonce) return;   /* ours: its effects were made when it ran */
    apply_records(r, p + ENTRY_HEADER, rlen);
    /* what applying logged is the log's already: never part of an entry of
     * ours (a node that becomes leader right after would propose it again) */
    aof_records_taken(r->s);
}

static int on_snapshot(void *ctx, void *(*alloc)(size_t), void **out, size_t *outlen)
{
    repl_state *r = ctx;
    server *s = r->s;
    if (r->rebuilding) return -1;   /* the dataset may hold what never commits, until reloaded */
    size_t pending;
    aof_records(s, &pending);
    /* the leader's state runs ahead of the log while own entries with
     * effects are in flight: a snapshot now would hold what may never
     * commit. Writes (and expiry) pause until those have committed, reads
     * go on: the next commit's apply tries again (the pause ends by itself
     * after a second at the latest). */
    if (r->done < r->effect_ticket || pending) {
        if (r->serving && !block_pause_active(s)) {
            r->draining = 1;
            block_pause(s, server_now_ms(s) + 1000, 0);
        }
        return -1;
    }
    int fd = memfd_create("latchd-raft-snapshot", MFD_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    int rc = -1;
    if (rdb_write_fd(s, fd) == 0 && fstat(fd, &st) == 0) {
        size_t len = (size_t)st.st_size;
        void *p = alloc(len ? len : 1);
        if (p && pread(fd, p, len, 0) == (ssize_t)len) {
            *out = p;
            *outlen = len;
            rc = 0;
        }
    }
    close(fd);
    if (r->draining) {
        r->draining = 0;
        block_unpause(s);
    }
    return rc;
}

static int on_restore(void *ctx, const unsigned char *p, size_t len)
{
    repl_state *r = ctx;
    server *s = r->s;
    reset_dataset(s);
    size_t used;
    int rc = rdb_load_mem(s, p, len, &used);
    aof_records_taken(s);   /* loading is no change of anyone's */
    if (rc != PERSIST_OK) {
        log_msg(s, LOG_WARNING, "Raft: the snapshot does not load (%d)", rc);
        return -1;
    }
    log_msg(s, LOG_NOTICE, "Raft: dataset restored from a snapshot (%zu bytes)", len);
    return 0;
}

static void on_proposed(void *ctx, uint64_t ticket, int ok)
{
    repl_state *r = ctx;
    if (ticket <= r->done) return;   /* failed already */
    if (!ok) {
        lost_leadership(r);
        return;
    }
    r->done = ticket;
    net_release(r->s, ticket);
}

static void on_barrier(void *ctx, int ok)
{
    repl_state *r = ctx;
    r->barrier_pending = 0;
    if (!ok || !r->e || r->rebuilding || repl_engine_role(r->e) != REPL_ROLE_LEADER) return;
    r->serving = 1;
    r->serving_term = repl_engine_term(r->e);
    leader_mode(r->s);
    log_msg(r->s, LOG_NOTICE, "Raft: leader for term %llu, serving", (unsigned long long)r->serving_term);
}

static void open_engine(repl_state *r)
{
    server *s = r->s;
    char err[512];
    reset_dataset(s);   /* the snapshot and the log are the dataset */
    uv_random(NULL, NULL, &r->nonce, sizeof r->nonce, 0, NULL);
    r->nonce ^= server_random(s);
    const repl_member *self = member(r, (uint64_t)s->cfg.raft_id);
    repl_engine_opts o = {
        .id = (uint64_t)s->cfg.raft_id,
        .address = s->cfg.raft_address[0] ? s->cfg.raft_address : self->address,
        .members = r->members,
        .nmembers = r->nmembers,
        .dir = r->dir,
        .election_ms = (unsigned)s->cfg.raft_election_timeout,
        .heartbeat_ms = (unsigned)s->cfg.raft_heartbeat_timeout,
        .snapshot_threshold = (unsigned)s->cfg.raft_snapshot_threshold,
    };
    repl_engine_hooks h = {r, on_apply, on_snapshot, on_restore, on_proposed, on_barrier};
    r->rebuilding = 0;
    r->e = repl_engine_open(s->loop, &o, &h, err, sizeof err);
    if (!r->e) {
        log_msg(s, LOG_WARNING, "Raft: %s", err);
        return;
    }
}

/* ---- the server's side ---- */

int repl_start(server *s)
{
    char err[1400];
    repl_state *r = mem_calloc(1, sizeof(*r));
    r->s = s;
    if (s->cfg.appendonly) {   /* one stream of effect records, one reader: the log */
        snprintf(err, sizeof err, "appendonly yes can't be combined with raft-id: the Raft log is the log");
        goto fail;
    }
    if (parse_members(r, s->cfg.raft_peers, err, sizeof err) != 0) goto fail;
    if (!member(r, (uint64_t)s->cfg.raft_id)) {
        snprintf(err, sizeof err, "raft-id %lld is not among raft-peers", s->cfg.raft_id);
        goto fail;
    }
    if (s->cfg.raft_dir[0]) snprintf(r->dir, sizeof r->dir, "%s", s->cfg.raft_dir);
    else snprintf(r->dir, sizeof r->dir, "raft-%lld", s->cfg.raft_id);
    if (mkdir(r->dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, sizeof err, "can't create raft-dir %s: %s", r->dir, strerror(errno));
        goto fail;
    }
    s->repl = r;
    r->applier = client_new_detached(s);
    client_set_authenticated(r->applier, 1);
    aof_replicate(s);
    follower_mode(s);
    open_engine(r);
    if (!r->e) return -1;
    log_msg(s, LOG_NOTICE, "Raft: node %lld of %d, log in %s", s->cfg.raft_id, r->nmembers, r->dir);
    return 0;
fail:
    log_msg(s, LOG_WARNING, "Raft: %s", err);
    free(r);
    return -1;
}

void repl_before_sleep(server *s, client *keep)
{
    repl_state *r = s->repl;
    poll_role(r);
    if (keep) return;   /* mid-command: its records are unfinished */
    size_t len;
    const char *rec = aof_records(s, &len);
    if (!r->serving) {
        aof_records_taken(s);   /* applied entries' records: the log has them */
        return;
    }
    if (!len && !s->pending) return;
    uint64_t ticket = r->proposed + 1;
    resp_buf *b = &r->entry;
    b->len = 0;
    /* padded to 8 bytes: libraft 0.15 misreads entries of other lengths
     * from its disk log after a snapshot (seen: payloads shifted) */
    size_t total = (ENTRY_HEADER + len + 7) & ~(size_t)7;
    uint32_t rlen = (uint32_t)len;
    resp_buf_reserve(b, total);
    memcpy(b->data, ENTRY_MAGIC, 4);
    memcpy(b->data + 4, &rlen, 4);
    memcpy(b->data + 8, &r->nonce, 8);
    memcpy(b->data + 16, &ticket, 8);
    if (len) memcpy(b->data + ENTRY_HEADER, rec, len);
    memset(b->data + ENTRY_HEADER + len, 0, total - ENTRY_HEADER - len);
    b->len = total;
    aof_records_taken(s);
    r->proposed = ticket;
    if (len) r->effect_ticket = ticket;
    net_hold_pending(s, ticket);
    if (repl_engine_propose(r->e, b->data, b->len, ticket) != 0) lost_leadership(r);
}

int repl_refuses(client *c, const command *cmd)
{
    repl_state *r = c->srv->repl;
    if (!r || c == r->applier) return 0;
    unsigned f = cmd->flags;
    if (!(f & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE)) || (f & CMD_PUBSUB)) return 0;
    if (r->e && !r->rebuilding && repl_engine_role(r->e) == REPL_ROLE_FOLLOWER && repl_engine_leader(r->e)) {
        if (!(f & (CMD_WRITE | CMD_MAY_REPLICATE))) return 0;   /* a replica's reads: maybe stale */
        reply_error(c, "READONLY You can't write against a read only replica.");
        return 1;
    }
    reply_error(c, "CLUSTERDOWN The cluster is down");
    return 1;
}

/* The leader's clients' address, as a replica names its master. */
static const repl_member *known_leader(repl_state *r)
{
    if (!r->e || r->rebuilding) return NULL;
    return member(r, repl_engine_leader(r->e));
}

void repl_info(server *s, resp_buf *b)
{
    repl_state *r = s->repl;
    uint64_t applied = r->e ? repl_engine_applied(r->e) : 0;
    int role = r->e && !r->rebuilding ? repl_engine_role(r->e) : REPL_ROLE_NONE;
    if (role == REPL_ROLE_LEADER) {
        resp_buf_appendf(b, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
    } else {
        const repl_member *m = known_leader(r);
        resp_buf_appendf(b, "# Replication\r\nrole:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\n"
                            "master_link_status:%s\r\nmaster_last_io_seconds_ago:%d\r\nmaster_sync_in_progress:0\r\n"
                            "slave_read_repl_offset:%llu\r\nslave_repl_offset:%llu\r\n",
                         m ? m->host : "?", m ? m->client_port : 0, m ? "up" : "down", m ? 0 : -1,
                         (unsigned long long)applied, (unsigned long long)applied);
        if (!m) resp_buf_appendf(b, "master_link_down_since_seconds:-1\r\n");
        resp_buf_appendf(b, "slave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\nconnected_slaves:0\r\n");
    }
    resp_buf_appendf(b, "master_failover_state:no-failover\r\nmaster_replid:%s\r\n"
                        "master_replid2:0000000000000000000000000000000000000000\r\n", s->run_id);
    resp_buf_appendf(b, "master_repl_offset:%llu\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n",
                     (unsigned long long)applied);
    resp_buf_appendf(b, "repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n");
    static const char *const names[] = {"none", "follower", "candidate", "leader"};
    resp_buf_appendf(b, "raft_id:%lld\r\nraft_state:%s\r\nraft_serving:%d\r\nraft_term:%llu\r\nraft_leader_id:%llu\r\n"
                        "raft_last_applied:%llu\r\n",
                     s->cfg.raft_id, r->rebuilding ? "rebuilding" : names[role], r->serving,
                     (unsigned long long)(r->e ? repl_engine_term(r->e) : 0),
                     (unsigned long long)(r->e && !r->rebuilding ? repl_engine_leader(r->e) : 0),
                     (unsigned long long)applied);
}

void repl_role(client *c)
{
    repl_state *r = c->srv->repl;
    uint64_t applied = r->e ? repl_engine_applied(r->e) : 0;
    if (r->e && !r->rebuilding && repl_engine_role(r->e) == REPL_ROLE_LEADER) {
        reply_array(c, 3);
        reply_bulk_cstr(c, "master");
        reply_int(c, (long long)applied);
        reply_array(c, 0);
        return;
    }
    const repl_member *m = known_leader(r);
    reply_array(c, 5);
    reply_bulk_cstr(c, "slave");
    reply_bulk_cstr(c, m ? m->host : "?");
    reply_int(c, m ? m->client_port : 0);
    reply_bulk_cstr(c, m ? "connected" : "connect");
    reply_int(c, (long long)applied);
}

void repl_close(server *s)
{
    repl_state *r = s->repl;
    if (!r || r->closing) return;
    r->closing = 1;
    r->serving = 0;
    if (r->e && (!r->rebuilding || r->close_pending)) close_engine(r);
}

void repl_free(server *s)
{
    repl_state *r = s->repl;
    if (!r) return;
    if (r->applier) client_free_detached(r->applier);
    persist_aof_args_free(&r->args);
    free(r->argv);
    resp_buf_free(&r->entry);
    free(r);
    s->repl = NULL;
}
