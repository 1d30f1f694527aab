/* script.h - EVAL's parts inside server/: the server-wide script cache
 * keyed by SHA1, the registry of native lock scripts, and the Lua engine. */
#ifndef LATCHD_SCRIPT_H
#define LATCHD_SCRIPT_H

#include "dict.h"
#include "server.h"

typedef struct script_native script_native;

typedef struct script {
    store_dict_node node;          /* keyed by sha */
    char sha[41];                  /* lowercase hex */
    char *body;
    size_t len;
    const script_native *native;   /* NULL: Lua only */
    int flags;                     /* SCRIPT_* from a "#!lua flags=..." line */
    int lua_ref;                   /* the compiled chunk in the Lua registry */
} script;

enum {
    SCRIPT_DECLARED = 1 << 0,      /* has a shebang: its flags are binding */
    SCRIPT_NO_WRITES = 1 << 1,
};

/* One EVAL/EVALSHA invocation. */
typedef struct script_call {
    client *c;
    const script *sc;
    resp_slice *keys;
    int nkeys;
    resp_slice *args;
    int nargs;
    int readonly;                  /* EVAL_RO / EVALSHA_RO */
} script_call;

/* A native script replies and returns 1, or returns 0 having changed
 * nothing, so the call runs in Lua instead (which then produces Redis's
 * exact reply, errors included). */
typedef int (*script_native_fn)(const script_call *call);

struct script_native {
    const char *sha;
    script_native_fn run;
    const char *what;              /* client and purpose, for the docs */
};

typedef struct script_engine script_engine;   /* script_lua.c / script_nolua.c */

/* Direct-mapped slots of recently run bodies, so EVAL of a known text
 * costs a sampled hash and one memcmp instead of a SHA1 of the body. A
 * slot holds one script (no chains: colliding bodies only evict each
 * other, and a miss falls back to SHA1, so no input can make it slow). */
#define SCRIPT_BODY_SLOTS 64

typedef struct scripts {
    store_dict cache;
    script *by_body[SCRIPT_BODY_SLOTS];
    script *last_found;            /* EVALSHA pipelines repeat one SHA1: tried first */
    size_t body_bytes;
    client *self;                  /* the client scripts run commands as */
    script_engine *lua;
    const script_call *running;    /* the call in progress, or NULL */
    uint64_t started_ms;           /* its start: the clock stands still for it */
    uint64_t busy_since_ms;        /* its start in real time (LATCHD.CLOCK aside) */
    int wrote;                     /* it ran a write command: SCRIPT KILL refuses */
    int busy;                      /* past busy-reply-threshold: others get -BUSY */
    int kill;                      /* SCRIPT KILL or SHUTDOWN asked it to stop */
    int shutdown;                  /* SHUTDOWN arrived while busy: do it after */
    /* INFO latchd: script runs the native path completed, and runs handed
     * to the engine (Lua; refused in a build without Lua). */
    uint64_t native_runs, engine_runs;
    struct pollfd *pfds;           /* script_busy.c's poll set, reused */
    client **pclients;
    size_t pcap;
} scripts;

/* script.c */
void scripts_init(server *s);
void scripts_free(server *s);
void script_sha1hex(char out[41], const void *p, size_t len);
/* A cached script by hex SHA1 of any case; NULL if unknown. */
script *script_lookup(server *s, const char *sha, size_t len);
/* cmd's flags as Redis's evalGetCommandFlags sees them for c's argv: an
 * EVAL* whose script has a shebang writes unless it says no-writes, and
 * is no longer "may replicate" (CLIENT PAUSE WRITE, MULTI's flags). */
unsigned script_command_flags(client *c, const command *cmd);
/* Cache body under sha (which the caller computed); on a compile error
 * replies it to c and returns NULL. */
script *script_create(client *c, const char *body, size_t len, const char sha[41]);
/* The cached script with exactly this body, created (and compiled) if
 * new; NULL after replying a compile error to c. */
script *script_for_body(client *c, const char *body, size_t len);
void scripts_flush(server *s);
void script_run(const script_call *call);
/* Run one command as the script client; the reply is left in
 * s->scripts->self->out for the caller to consume. */
void script_exec(server *s, const command *cmd, resp_slice *argv, int argc);
/* The PUBLISH or SPUBLISH command a script names (any case), else NULL:
 * native scripts check it before changing anything. */
const command *script_publish_command(const resp_slice *name);
/* Publish from inside a script, as redis.call(name, chan, msg) would. */
void script_publish(server *s, const command *pub, const resp_slice *name,
                    const resp_slice *chan, const resp_slice *msg);

/* script_busy.c: called by the engine while a script runs; 1 if the
 * script must stop now (SCRIPT KILL / SHUTDOWN). */
int script_busy_tick(server *s);
/* -BUSY for a command that may not run while a script is busy. */
int script_busy_refuses(client *c, const command *cmd);

/* script_native.c: the native implementation for a SHA1, or NULL. */
const script_native *script_native_find(const char *sha);
size_t script_native_count(void);
const script_native *script_native_at(size_t i);

/* sha1.c: SHA-1 (FIPS 180-4) for script names, as Redis keys its script
 * cache. Not for security. */
#define SHA1_DIGEST_LEN 20
void sha1_digest(const void *data, size_t len, unsigned char out[SHA1_DIGEST_LEN]);

/* lua_alloc.c: the Lua state's allocator (a lua_Alloc; ud is the pool) */
typedef struct lua_pool lua_pool;
lua_pool *lua_pool_new(void);
void lua_pool_free(lua_pool *p);
void *lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* script_lua.c (or script_nolua.c when built without Lua) */
script_engine *script_engine_new(server *s);
void script_engine_free(script_engine *e);
/* 0, or -1 with Redis's compile error text in err. */
int script_engine_compile(script_engine *e, script *sc, char *err, size_t errlen);
void script_engine_forget(script_engine *e, script *sc);
void script_engine_run(script_engine *e, const script_call *call);

#endif
