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

/* A shebang's or a function's flags; the ones after SCRIPT_DECLARED are
 * Redis's scripts_flags_def, in its order (FUNCTION LIST prints them so). */
enum {
    SCRIPT_DECLARED = 1 << 0,      /* has a shebang: its flags are binding */
    SCRIPT_NO_WRITES = 1 << 1,
    SCRIPT_ALLOW_OOM = 1 << 2,
    SCRIPT_ALLOW_STALE = 1 << 3,
    SCRIPT_NO_CLUSTER = 1 << 4,
    SCRIPT_ALLOW_CROSS_SLOT = 1 << 5,
};
#define SCRIPT_FLAG_COUNT 5
/* The names of SCRIPT_NO_WRITES .. SCRIPT_ALLOW_CROSS_SLOT, in bit order. */
extern const char *const script_flag_names[SCRIPT_FLAG_COUNT];

typedef struct function_lib function_lib;

/* One function of a library (FUNCTION LOAD's redis.register_function). */
typedef struct function {
    store_dict_node node;          /* keyed by key, in scripts.functions */
    char *key;                     /* the name in lower case: FCALL ignores case */
    char *name;                    /* as registered */
    char *desc;                    /* NULL: none given */
    int flags;                     /* SCRIPT_* */
    int lua_ref;                   /* the callback in the Lua registry */
    int linked;                    /* in scripts.functions (see lib_link) */
    function_lib *lib;
    struct function *next;         /* the library's next function */
} function;

struct function_lib {
    store_dict_node node;          /* keyed by name (case counts), in scripts.libs */
    char *name;
    char *code;                    /* the whole FUNCTION LOAD payload */
    size_t code_len;
    function *fns;                 /* in registration order */
    size_t nfns;
};

/* One EVAL/EVALSHA or FCALL invocation. */
typedef struct script_call {
    client *c;
    const script *sc;              /* EVAL's script, or NULL for a function */
    const function *fn;            /* FCALL's function, or NULL */
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
    int loading;                   /* FUNCTION LOAD is running a library's body */
    int busy;                      /* past busy-reply-threshold: others get -BUSY */
    int kill;                      /* SCRIPT KILL or SHUTDOWN asked it to stop */
    int shutdown;                  /* SHUTDOWN arrived while busy: do it after */
    /* INFO latchd: script runs the native path completed, and runs handed
     * to the engine (Lua; refused in a build without Lua). */
    uint64_t native_runs, engine_runs;
    store_dict libs;               /* function_lib by lower-case name */
    store_dict functions;          /* function by lower-case name, all libraries */
    struct pollfd *pfds;           /* script_busy.c's poll set, reused */
    client **pclients;             /* NULL where the fd is a listener's */
    uv_stream_t **plisteners;
    size_t pcap;
} scripts;

/* script.c */
void scripts_init(server *s);
void scripts_free(server *s);
void script_sha1hex(char out[41], const void *p, size_t len);
/* A cached script by hex SHA1 of any case; NULL if unknown. */
script *script_lookup(server *s, const char *sha, size_t len);
/* cmd's flags as Redis's evalGetCommandFlags / fcallGetCommandFlags see
 * them for c's argv: an EVAL* whose script has a shebang, or an FCALL of a
 * known function, writes unless it says no-writes, and is no longer "may
 * replicate" (CLIENT PAUSE WRITE, MULTI's flags). */
unsigned script_command_flags(client *c, const command *cmd);
/* Cache body under sha (which the caller computed); on a compile error
 * replies it to c and returns NULL. */
script *script_create(client *c, const char *body, size_t len, const char sha[41]);
/* The cached script with exactly this body, created (and compiled) if
 * new; NULL after replying a compile error to c. */
script *script_for_body(client *c, const char *body, size_t len);
void scripts_flush(server *s);
/* SCRIPT FLUSH after scripts_flush: Redis makes a new Lua VM, and so does
 * latchd while no function library lives in its one state; with some, the
 * state stays and a full collection frees what the scripts left (the
 * registry keeps its size: INFO used_memory_lua). */
void scripts_renew_vm(server *s);
/* INFO's used_memory_scripts_eval (Redis's evalScriptsMemory): the cached
 * bodies, their entries and the cache's buckets. */
size_t scripts_cache_memory(server *s);
void script_run(const script_call *call);
/* A script that declared its flags (a shebang, a function) and may write
 * is refused over maxmemory unless allow-oom, as Redis's processCommand
 * refuses it by the flags it declared: 1 after replying OOM. */
int script_oom_refuses(client *c, int flags);
/* The running call's name as Redis prints it: the SHA1, or the function. */
const char *script_call_name(const script_call *call);
/* A "#!lua flags=..." or register_function flag name (case as cmp says);
 * its SCRIPT_* bit, or 0 if unknown. */
int script_flag_bit(const char *name, int (*cmp)(const char *, const char *));
/* Run one command as the script client; the reply is left in
 * s->scripts->self->out for the caller to consume. */
void script_exec(server *s, const command *cmd, resp_slice *argv, int argc);
/* The PUBLISH or SPUBLISH command a script names (any case), else NULL:
 * native scripts check it before changing anything. */
const command *script_publish_command(const resp_slice *name);
/* Publish from inside a script, as redis.call(name, chan, msg) would. */
void script_publish(server *s, const command *pub, const resp_slice *name,
                    const resp_slice *chan, const resp_slice *msg);

/* function.c: the libraries of FUNCTION LOAD, kept apart from the EVAL
 * cache (SCRIPT FLUSH leaves them). Errors come back as Redis's texts. */
void functions_init(server *s);
void functions_free(server *s);
function *function_lookup(server *s, const char *name, size_t len);
function_lib *function_lib_lookup(server *s, const char *name, size_t len);
/* FUNCTION LOAD: the library's name (owned by the registry) or NULL with
 * err set (no "ERR " prefix in it: the caller adds Redis's). */
const char *function_load(server *s, const char *code, size_t len, int replace,
                          char *err, size_t errlen);
void function_lib_delete(server *s, function_lib *lib);
void functions_flush(server *s);
/* FUNCTION STATS's functions_count: every library's functions. */
size_t functions_count(server *s);
/* INFO's used_memory_functions (Redis's functionsMemoryOverhead): the
 * registry's structures, names and code, not the VM's share. */
size_t functions_memory(server *s);
/* Every library's code (pointers into the registry, valid until it
 * changes), in an array the caller frees; *n of them. */
struct persist_pstr *functions_codes(server *s, size_t *n);
/* FUNCTION DUMP's payload (FUNCTION2 opcodes, RDB version, CRC64). */
void functions_dump(server *s, int rdbcompression, unsigned char **out, size_t *outlen);
/* FUNCTION RESTORE; policy 'f'lush, 'a'ppend or 'r'eplace. 0, or -1 with err. */
int functions_restore(server *s, const unsigned char *p, size_t len, int policy,
                      char *err, size_t errlen);
/* Called by the engine from redis.register_function while loading lib:
 * 0, or -1 with err (the function's ref stays the caller's to free). */
int function_lib_add(function_lib *lib, const char *name, size_t len, const char *desc,
                     size_t desclen, int flags, int lua_ref, char *err, size_t errlen);

/* script_busy.c: called by the engine while a script runs; 1 if the
 * script must stop now (SCRIPT KILL / SHUTDOWN). */
int script_busy_tick(server *s);
/* -BUSY for a command that may not run while a script is busy. */
int script_busy_refuses(client *c, const command *cmd);
/* SCRIPT KILL (from_eval) or FUNCTION KILL: each stops only its own kind. */
void script_kill_reply(client *c, int from_eval);

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
/* The VM's bytes as Lua counts them (Redis's luaMemory); 0 without Lua. */
size_t script_engine_memory(script_engine *e);
/* A full garbage collection (SCRIPT FLUSH). */
void script_engine_collect(script_engine *e);
/* 0, or -1 with Redis's compile error text in err. */
int script_engine_compile(script_engine *e, script *sc, char *err, size_t errlen);
void script_engine_forget(script_engine *e, script *sc);
void script_engine_run(script_engine *e, const script_call *call);
/* Run a library's body (code, after its shebang line) in the load-time
 * sandbox, registering its functions into lib. 0, or -1 with err. */
int script_engine_load_library(script_engine *e, function_lib *lib, const char *code,
                               size_t len, char *err, size_t errlen);
void script_engine_forget_function(script_engine *e, function *fn);

#endif
