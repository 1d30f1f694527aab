/* script.c - the script cache (server-wide, by SHA1 of the exact body) and
 * the path every EVAL takes: native lock script if there is one, else Lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "commands/commands.h"
#include "mem.h"
#include "persist/persist.h"
#include "script.h"

void script_sha1hex(char out[41], const void *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA1_DIGEST_LEN];
    sha1_digest(p, len, md);
    for (int i = 0; i < SHA1_DIGEST_LEN; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[40] = '\0';
}

void scripts_init(server *s)
{
    scripts *st = mem_calloc(1, sizeof(*st));
    store_dict_init(&st->cache, STORE_DICT_KEY_OFF(script, node, sha), STORE_DICT_KEY_INLINE);
    st->self = client_new_detached(s);
    client_set_authenticated(st->self, 1);
    s->scripts = st;
    st->lua = script_engine_new(s);
    functions_init(s);
}

static void free_script(store_dict_node *n, void *ctx)
{
    script *sc = (script *)n;
    script_engine_forget(ctx, sc);
    free(sc->body);
    free(sc);
}

void scripts_flush(server *s)
{
    scripts *st = s->scripts;
    store_dict_clear(&st->cache, free_script, st->lua);   /* empty and ready for use */
    memset(st->by_body, 0, sizeof(st->by_body));
    st->last_found = NULL;
    st->body_bytes = 0;
}

void scripts_renew_vm(server *s)
{
    scripts *st = s->scripts;
    if (store_dict_size(&st->libs)) {
        script_engine_collect(st->lua);
        return;
    }
    script_engine_free(st->lua);
    st->lua = script_engine_new(s);
}

size_t scripts_cache_memory(server *s)
{
    const scripts *st = s->scripts;
    return st->body_bytes + store_dict_size(&st->cache) * sizeof(script) + store_dict_mem(&st->cache);
}

void scripts_free(server *s)
{
    scripts *st = s->scripts;
    if (!st) return;
    scripts_flush(s);
    functions_free(s);
    script_engine_free(st->lua);
    free(st->pfds);
    free(st->pclients);
    free(st->plisteners);
    client_free_detached(st->self);
    free(st);
    s->scripts = NULL;
}

script *script_lookup(server *s, const char *sha, size_t len)
{
    char lower[40];
    if (len != 40) return NULL;
    for (size_t i = 0; i < 40; i++) {
        char ch = sha[i];
        lower[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch + 32) : ch;
    }
    scripts *st = s->scripts;
    if (st->last_found && memcmp(st->last_found->sha, lower, 40) == 0) return st->last_found;
    script *sc = (script *)store_dict_find(&st->cache, lower, 40);
    if (sc) st->last_found = sc;
    return sc;
}

const char *const script_flag_names[SCRIPT_FLAG_COUNT] = {
    "no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys",
};

int script_flag_bit(const char *name, int (*cmp)(const char *, const char *))
{
    for (int i = 0; i < SCRIPT_FLAG_COUNT; i++)
        if (cmp(name, script_flag_names[i]) == 0) return SCRIPT_NO_WRITES << i;
    return 0;
}

/* One "flags=a,b" list of a shebang (parsed in place); 0, or -1 with err. */
static int parse_shebang_flags(char *list, int *flags, char *err, size_t errlen)
{
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        int bit = script_flag_bit(f, strcmp);
        if (!bit) {
            snprintf(err, errlen, "ERR Unexpected flag in script shebang: %s", f);
            return -1;
        }
        *flags |= bit;
    }
    return 0;
}

/* The words of a "#!lua [flags=...]" first line, on a private copy. */
static int parse_shebang_line(char *line, int *flags, char *err, size_t errlen)
{
    char *save = NULL, *part = strtok_r(line, " ", &save);
    if (!part || strcmp(part, "#!lua") != 0) {
        snprintf(err, errlen, "ERR Unexpected engine in script shebang: %s", part ? part : line);
        return -1;
    }
    while ((part = strtok_r(NULL, " ", &save))) {
        if (strncmp(part, "flags=", 6) != 0) {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %s", part);
            return -1;
        }
        if (parse_shebang_flags(part + 6, flags, err, errlen) != 0) return -1;
    }
    return 0;
}

/* Redis 7's "#!lua [flags=...]" first line; 0, or -1 with err set. */
static int parse_shebang(const char *body, size_t len, int *flags, char *err, size_t errlen)
{
    *flags = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        snprintf(err, errlen, "ERR Invalid script shebang");
        return -1;
    }
    *flags = SCRIPT_DECLARED;
    char *line = mem_strndup(body, (size_t)(nl - body));   /* any length: no truncation */
    int rc = parse_shebang_line(line, flags, err, errlen);
    free(line);
    return rc;
}

unsigned script_command_flags(client *c, const command *cmd)
{
    int by_sha = cmd->proc == cmd_evalsha || cmd->proc == cmd_evalsha_ro;
    if (cmd->proc == cmd_fcall && c->argc >= 2) {   /* a function declares its flags when registered */
        const function *fn = function_lookup(c->srv, c->argv[1].ptr, c->argv[1].len);
        if (!fn) return cmd->flags;
        unsigned f = cmd->flags & ~(unsigned)(CMD_WRITE | CMD_MAY_REPLICATE);
        return (fn->flags & SCRIPT_NO_WRITES) ? f : f | CMD_WRITE;
    }
    if ((!by_sha && cmd->proc != cmd_eval && cmd->proc != cmd_eval_ro) || c->argc < 2) return cmd->flags;
    const resp_slice *a = &c->argv[1];
    const script *sc = by_sha ? script_lookup(c->srv, a->ptr, a->len) : NULL;
    char err[64];
    int sflags = 0;
    if (sc)
        sflags = sc->flags;
    else if (by_sha || parse_shebang(a->ptr, a->len, &sflags, err, sizeof(err)) != 0)
        return cmd->flags;
    if (!(sflags & SCRIPT_DECLARED)) return cmd->flags;
    unsigned f = cmd->flags & ~(unsigned)(CMD_WRITE | CMD_MAY_REPLICATE);
    return (sflags & SCRIPT_NO_WRITES) ? f : f | CMD_WRITE;
}

script *script_create(client *c, const char *body, size_t len, const char sha[41])
{
    scripts *st = c->srv->scripts;
    char err[512];
    int flags;
    if (parse_shebang(body, len, &flags, err, sizeof(err)) != 0) {
        reply_error(c, err);
        return NULL;
    }
    script *sc = mem_calloc(1, sizeof(*sc));
    memcpy(sc->sha, sha, 41);
    sc->body = mem_alloc(len + 1);
    memcpy(sc->body, body, len);
    sc->body[len] = '\0';
    sc->len = len;
    sc->native = script_native_find(sc->sha);
    sc->flags = flags;
    if (script_engine_compile(st->lua, sc, err, sizeof(err)) != 0) {
        reply_error(c, err);
        free(sc->body);
        free(sc);
        return NULL;
    }
    sc->node.keylen = 40;
    store_dict_insert(&st->cache, &sc->node);
    st->body_bytes += len;
    return sc;
}

/* The slot for a body: a keyed hash of its length, head and tail. Bodies
 * that share all three only evict each other. */
static script **body_slot(scripts *st, const char *body, size_t len)
{
    enum { SAMPLE = 32 };
    char sample[sizeof(uint64_t) + 2 * SAMPLE];
    uint64_t len64 = len;
    size_t n = len < SAMPLE ? len : SAMPLE;
    memcpy(sample, &len64, sizeof(len64));
    memcpy(sample + sizeof(len64), body, n);
    memcpy(sample + sizeof(len64) + n, body + len - n, n);
    uint64_t h = store_dict_hash(sample, sizeof(len64) + 2 * n);
    return &st->by_body[h & (SCRIPT_BODY_SLOTS - 1)];
}

script *script_for_body(client *c, const char *body, size_t len)
{
    script **slot = body_slot(c->srv->scripts, body, len);
    script *sc = *slot;
    if (sc && sc->len == len && memcmp(sc->body, body, len) == 0) return sc;
    char sha[41];
    script_sha1hex(sha, body, len);
    sc = script_lookup(c->srv, sha, 40);
    if (!sc) sc = script_create(c, body, len, sha);
    if (sc) *slot = sc;
    return sc;
}

void script_exec(server *s, const command *cmd, resp_slice *argv, int argc)
{
    client *self = s->scripts->self;
    self->argv = argv;
    self->argc = argc;
    self->cmd = cmd;
    self->sub = NULL;
    size_t mark = self->out.len;
    uint64_t t0 = stats_ticks();
    if (s->aof_on) aof_proc(self);
    else cmd->proc(self);
    /* Redis tracks a script's declared keys for its caller once it reads */
    client *caller = s->scripts->running ? s->scripts->running->c : NULL;
    if (caller && (caller->flags & CLIENT_TRACKING) && (cmd->flags & CMD_READONLY)) tracking_remember_keys(caller);
    monitor_command(self);
    s->stat_commands++;
    stats_record(self, mark, stats_ticks() - t0);
    self->argv = NULL;
    self->argc = 0;
}

const command *script_publish_command(const resp_slice *name)
{
    const command *pub = command_lookup(name->ptr, name->len);
    if (!pub || (strcmp(pub->name, "publish") != 0 && strcmp(pub->name, "spublish") != 0))
        return NULL;
    return pub;
}

void script_publish(server *s, const command *pub, const resp_slice *name,
                    const resp_slice *chan, const resp_slice *msg)
{
    resp_slice argv[3] = {*name, *chan, *msg};
    script_exec(s, pub, argv, 3);
    s->scripts->self->out.len = 0;   /* the receiver count is not wanted */
}

int script_oom_refuses(client *c, int flags)
{
    server *s = c->srv;
    if (s->cfg.maxmemory <= 0 || (flags & (SCRIPT_NO_WRITES | SCRIPT_ALLOW_OOM))) return 0;
    if (server_used_memory(s) <= s->cfg.maxmemory) return 0;
    reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
    return 1;
}

const char *script_call_name(const script_call *call)
{
    return call->fn ? call->fn->name : call->sc->sha;
}

void script_run(const script_call *call)
{
    server *s = call->c->srv;
    scripts *st = s->scripts;
    st->started_ms = server_now_ms(s);
    st->busy_since_ms = server_real_ms(s);
    st->running = call;
    st->self->db = call->c->db;
    /* While someone monitors, Lua runs it: monitors see each redis.call;
     * and a user with limits, whose every redis.call is checked;
     * and a tracking caller's reads are Lua's redis.calls too. */
    int done = call->sc && call->sc->native && s->cfg.native_scripts && !call->readonly && !s->monitors &&
               call->c->user->unrestricted && !(call->c->flags & CLIENT_TRACKING) && call->sc->native->run(call);
    if (done) {
        st->native_runs++;
    } else {
        st->engine_runs++;
        script_engine_run(st->lua, call);
    }
    st->running = NULL;
    st->wrote = st->busy = st->kill = 0;
    if (st->shutdown) server_shutdown(s);
}
