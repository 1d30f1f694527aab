/* script_lua.c - the embedded Lua 5.1 that runs every script as Redis 7.0
 * does: a sandbox with read-only globals, the redis.* API, and values
 * converted both ways through RESP exactly as Redis converts them. */
#include <limits.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl.h"
#include "commands/commands.h"
#include "mem.h"
#include "persist/persist.h"
#include "script.h"

/* Debian's lua-cjson-dev and lua-bitop-dev static libraries. */
int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);
/* lua_struct.c, lua_cmsgpack.c: Redis's other two, which Debian lacks. */
int latchd_luaopen_struct(lua_State *L);
int latchd_luaopen_cmsgpack(lua_State *L);

#define NUMBER_ARG_MAX 32   /* "%.17g" of any double fits */
#define GC_STEP_EVERY 50    /* scripts between incremental GC steps, as Redis */

struct script_engine {
    lua_State *L;
    lua_pool *pool;          /* L's allocator */
    server *srv;
    int globals_ref;         /* the real globals table (KEYS/ARGV go here) */
    int readonly_ref;        /* set of tables scripts may not modify */
    int resp;                /* redis.setresp() of the running script */
    unsigned runs;
    resp_slice *argv;        /* redis.call arguments, reused */
    char *numbufs;           /* text of numeric arguments, NUMBER_ARG_MAX each */
    int argv_cap;
    /* Functions: every library body and its functions run with lib_env as
     * their globals, whose metatable (lib_meta) reads through to the load
     * API while FUNCTION LOAD runs a body, and to the globals otherwise. */
    int lib_env_ref, lib_meta_ref, load_api_ref;
    function_lib *loading;   /* the library FUNCTION LOAD is building */
    uint64_t load_start_ms;
};

static script_engine *engine_of(lua_State *L)
{
    return lua_touserdata(L, lua_upvalueindex(1));
}

/* ---- errors in Redis's table form {err="CODE message"} ---- */

/* luaPushError semantics: "-CODE msg" keeps its code (without the dash),
 * anything else gets "ERR "; trailing CR/LF are dropped. */
static void push_error(lua_State *L, const char *s, size_t len)
{
    luaL_Buffer b;
    while (len && (s[len - 1] == '\r' || s[len - 1] == '\n')) len--;
    luaL_buffinit(L, &b);
    if (len && s[0] == '-' && memchr(s, ' ', len)) {
        luaL_addlstring(&b, s + 1, len - 1);
    } else {
        if (len && s[0] == '-') s++, len--;
        luaL_addstring(&b, "ERR ");
        luaL_addlstring(&b, s, len);
    }
    lua_newtable(L);
    lua_pushliteral(L, "err");
    luaL_pushresult(&b);
    lua_rawset(L, -3);
}

static void push_error_cstr(lua_State *L, const char *s) { push_error(L, s, strlen(s)); }

static int raise_error_cstr(lua_State *L, const char *s)
{
    push_error_cstr(L, s);
    return lua_error(L);
}

/* Runs as the pcall message handler: turns any error into the table form
 * and records where in the script it was raised (skipping the C function
 * that raised it), which Redis prints as "on @user_script:N". */
static int error_handler(lua_State *L)
{
    lua_Debug ar;
    int found = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
    if (found && strcmp(ar.what, "C") == 0)
        found = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    if (!lua_istable(L, 1)) {
        lua_getglobal(L, "tostring");
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        lua_pushliteral(L, "ERR ");
        lua_insert(L, -2);
        lua_concat(L, 2);
        lua_newtable(L);
        lua_pushliteral(L, "err");
        lua_pushvalue(L, -3);
        lua_rawset(L, -3);
        lua_replace(L, 1);
        lua_settop(L, 1);
    }
    if (found) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    return 1;
}

/* Redis's pcall: an error table caught here is handed to the script as
 * its message string, as before Redis 7 made errors tables. */
static int lua_redis_style_pcall(lua_State *L)
{
    int argc = lua_gettop(L);
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) lua_replace(L, -2);
            else lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

/* ---- loading source, never bytecode ---- */

typedef struct text_reader {
    const char *prefix, *buf;
    size_t plen, len;
    int step;
} text_reader;

static const char *read_text(lua_State *L, void *ud, size_t *size)
{
    text_reader *r = ud;
    switch (r->step++) {
    case 0:
        *size = r->plen;
        return r->prefix;
    case 1:
        *size = r->len;
        return r->buf;
    default:
        return NULL;
    }
}

/* Loads buf as Lua source. Bytecode could crash the VM, so a leading ESC
 * is parsed as text (a syntax error), as in Redis's patched Lua; with
 * shebang set, a "#!" first line becomes a comment. */
static int load_text(lua_State *L, const char *buf, size_t len, const char *chunkname,
                     int shebang)
{
    text_reader r = {"", buf, 0, len, 0};
    if (len && buf[0] == LUA_SIGNATURE[0]) {
        r.prefix = " ";
        r.plen = 1;
    } else if (shebang && len >= 2 && buf[0] == '#' && buf[1] == '!') {
        r.prefix = "--";
        r.plen = 2;
        r.buf += 2;
        r.len -= 2;
    }
    return lua_load(L, read_text, &r, chunkname);
}

/* unpack(t [, i [, j]]) with the range counted in unsigned arithmetic:
 * Debian's Lua 5.1 computes j - i + 1 in an int, so unpack({}, -2,
 * 2147483647) overflows it and pushes past the stack (a crash). The range
 * is refused with the text Redis's patched Lua gives. */
static int safe_unpack(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int first = luaL_optint(L, 2, 1);
    int last = lua_isnoneornil(L, 3) ? (int)lua_objlen(L, 1) : luaL_checkint(L, 3);
    if (first > last) return 0;
    unsigned int extra = (unsigned int)last - (unsigned int)first;
    if (extra >= INT_MAX || !lua_checkstack(L, (int)extra + 1))
        return luaL_error(L, "too many results to unpack");
    for (int i = first;; i++) {
        lua_rawgeti(L, 1, i);
        if (i == last) break;
    }
    return (int)extra + 1;
}

/* A Lua number as BitOp reads it: the low 32 bits of the number rounded
 * to an integer, by adding 2^52 + 2^51 so the FPU puts it in the low word. */
static uint32_t bit_arg(lua_State *L, int idx)
{
    union { double d; uint64_t u; } v;
    v.d = luaL_checknumber(L, idx) + 6755399441055744.0;
    return (uint32_t)v.u;
}

/* bit.tohex(x [, n]) as Redis's patched BitOp: Debian's negates n = INT32_MIN
 * (undefined, then a write far past its 8-byte buffer: a crash). n < 0 asks
 * for upper-case digits; at most 8 are printed. */
static int safe_tohex(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    int32_t n = lua_isnoneornil(L, 2) ? 8 : (int32_t)bit_arg(L, 2);
    const char *digits = "0123456789abcdef";
    char buf[8];
    if (n == INT32_MIN) n = INT32_MIN + 1;
    if (n < 0) n = -n, digits = "0123456789ABCDEF";
    if (n > 8) n = 8;
    for (int i = n - 1; i >= 0; i--, b >>= 4) buf[i] = digits[b & 15];
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* The two loaders scripts may use, on load_text. */
static int safe_loadstring(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, s);
    if (load_text(L, s, len, name, 0) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

static int safe_load(lua_State *L)
{
    luaL_Buffer b;
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *name = luaL_optstring(L, 2, "=(load)");
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) break;
        if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
        if (lua_objlen(L, -1) == 0) break;
        luaL_addvalue(&b);
    }
    lua_pop(L, 1);
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (load_text(L, s, len, name, 0) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* ---- read-only globals ---- */

static int readonly_newindex(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

static int missing_global(lua_State *L)
{
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2));
}

static int is_readonly(lua_State *L, int idx)
{
    script_engine *e = engine_of(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->readonly_ref);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    int ro = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return ro;
}

/* Raised the way Redis's VM raises it: no "user_script:N:" position. */
static int readonly_error(lua_State *L)
{
    lua_pushliteral(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

/* The table behind a read-only proxy at idx replaces it there, so pairs
 * and next see the contents (Lua 5.1 has no __pairs). */
static void unproxy(lua_State *L, int idx)
{
    script_engine *e = engine_of(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->readonly_ref);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    if (lua_istable(L, -1)) lua_replace(L, idx);
    else lua_pop(L, 1);
    lua_pop(L, 1);
}

static int proxy_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    unproxy(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int proxy_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    unproxy(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, proxy_next, 1);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* rawset and setmetatable would otherwise go around the proxies. */
static int guarded_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (is_readonly(L, 1)) return readonly_error(L);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int guarded_setmetatable(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (is_readonly(L, 1)) return readonly_error(L);
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* The metatable on top gets a __metatable field: a read-only view of
 * itself, which is what getmetatable() then returns, so no script can
 * rewire a proxy (getmetatable(_G).__index = ...) or a basic type's
 * metatable for the scripts after it. */
static void seal_metatable(script_engine *e)
{
    lua_State *L = e->L;
    lua_newtable(L);
    lua_newtable(L);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->readonly_ref);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -4);   /* view -> the metatable, for pairs/next */
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_setfield(L, -2, "__metatable");
}

/* Pushes an empty table that reads through to the table at idx and
 * refuses writes; index_fn (if any) decides what a missing name does. */
static void push_proxy(script_engine *e, int idx, lua_CFunction index_fn)
{
    lua_State *L = e->L;
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_newtable(L);
    lua_newtable(L);
    if (index_fn) {
        lua_pushvalue(L, idx);
        lua_pushcclosure(L, index_fn, 1);
    } else {
        lua_pushvalue(L, idx);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    seal_metatable(e);
    lua_setmetatable(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->readonly_ref);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, idx);   /* proxy -> the table behind it, for pairs/next */
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Library tables become read-only proxies, then the globals table itself
 * is replaced by one: scripts share this state, so none may change what
 * the next one sees. */
static void protect_globals(script_engine *e)
{
    static const char *libs[] = {"redis", "string", "table", "math", "cjson", "bit", "struct",
                                 "cmsgpack", "coroutine"};
    lua_State *L = e->L;
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        lua_getfield(L, -1, libs[i]);
        push_proxy(e, -1, NULL);
        lua_setfield(L, -3, libs[i]);
        lua_pop(L, 1);
    }
    push_proxy(e, -1, missing_global);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "_G");
    lua_replace(L, LUA_GLOBALSINDEX);
    e->globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ---- redis.call / redis.pcall ---- */

static void ensure_argv(script_engine *e, int argc)
{
    if (argc <= e->argv_cap) return;
    e->argv_cap = argc * 2;
    e->argv = mem_realloc(e->argv, sizeof(*e->argv) * (size_t)e->argv_cap);
    e->numbufs = mem_realloc(e->numbufs, NUMBER_ARG_MAX * (size_t)e->argv_cap);
}

/* Arguments stay on the Lua stack (and so alive) during the call; numbers
 * are written with "%.17g" as Redis does, not with Lua's "%.14g". 1 when
 * collected, 0 for an argument of another type, -1 for a string longer
 * than the store holds (a client's bulk cannot be; a script's can). */
static int collect_args(lua_State *L, script_engine *e, int argc)
{
    ensure_argv(e, argc);
    for (int j = 0; j < argc; j++) {
        if (lua_type(L, j + 1) == LUA_TNUMBER) {
            char *buf = e->numbufs + (size_t)j * NUMBER_ARG_MAX;
            int n = snprintf(buf, NUMBER_ARG_MAX, "%.17g", (double)lua_tonumber(L, j + 1));
            e->argv[j].ptr = buf;
            e->argv[j].len = (size_t)n;
        } else if (lua_type(L, j + 1) == LUA_TSTRING) {
            e->argv[j].ptr = lua_tolstring(L, j + 1, &e->argv[j].len);
            if (e->argv[j].len > STORE_MAX_LEN) return -1;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Redis's checks, in Redis's order; NULL when the command may run. */
static const char *call_refusal(const script_call *run, const command *cmd, const resp_slice *argv, int argc)
{
    if (!cmd) return "Unknown Redis command called from script";
    if (!command_arity_ok(cmd, argc)) return "Wrong number of args calling Redis command from script";
    /* Redis looks the subcommand up first: its flags decide (CLUSTER RESET) */
    const command *sub = (cmd->flags & CMD_CONTAINER) && argc >= 2
                             ? subcommand_lookup(cmd, argv[1].ptr, argv[1].len) : NULL;
    if (((cmd->flags | (sub ? sub->flags : 0)) & CMD_NOSCRIPT) && !run->c->srv->script_allow_noscript)
        return "This Redis command is not allowed from script";
    if (run->readonly && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)))
        return "Write commands are not allowed from read-only scripts.";
    return NULL;
}

/* scriptVerifyOOM: over maxmemory, a script that has not written yet may
 * not start with a command that can grow memory, unless it is allow-oom. */
static int oom_refuses(server *s, const script_call *run, const command *cmd)
{
    if (s->cfg.maxmemory <= 0 || !(cmd->flags & CMD_DENYOOM) || s->scripts->wrote) return 0;
    int flags = run->fn ? run->fn->flags : run->sc->flags;
    return !(flags & SCRIPT_ALLOW_OOM) && server_used_memory(s) > s->cfg.maxmemory;
}

static int push_reply(lua_State *L, const char **pos, const char *end);

/* Starts Redis's tagged form {tag=<value>}: the table and the tag are
 * pushed; the caller pushes the value and does lua_settable(L, -3). */
static void push_tagged(lua_State *L, const char *tag)
{
    lua_newtable(L);
    lua_pushstring(L, tag);
}

/* An aggregate as a Lua table: arrays by position, maps {map={k=v}},
 * sets {set={member=true}}. */
static int push_aggregate(lua_State *L, const resp_reply *r, const char **pos, const char *end)
{
    int tagged = r->type == '%' || r->type == '~';
    if (tagged) push_tagged(L, r->type == '%' ? "map" : "set");
    lua_newtable(L);
    for (long long i = 0; i < r->n; i++) {
        if (r->type == '%') {
            if (!push_reply(L, pos, end) || !push_reply(L, pos, end)) return 0;
        } else if (r->type == '~') {
            if (!push_reply(L, pos, end)) return 0;
            lua_pushboolean(L, 1);
        } else {
            lua_pushnumber(L, (lua_Number)(i + 1));
            if (!push_reply(L, pos, end)) return 0;
        }
        lua_settable(L, -3);
    }
    if (tagged) lua_settable(L, -3);
    return 1;
}

static void push_verbatim(lua_State *L, const resp_reply *r)
{
    push_tagged(L, "verbatim_string");
    lua_newtable(L);
    lua_pushlstring(L, r->str, r->len);
    lua_setfield(L, -2, "string");
    lua_pushlstring(L, r->fmt, 3);
    lua_setfield(L, -2, "format");
    lua_settable(L, -3);
}

/* One reply item as Redis hands it to Lua: nil bulk/array -> false,
 * status -> {ok=}, error -> {err=}, RESP3 types tagged. */
static int push_reply(lua_State *L, const char **pos, const char *end)
{
    resp_reply r;
    if (!lua_checkstack(L, 5) || !resp_read_reply(pos, end, &r)) return 0;
    switch (r.type) {
    case ':': lua_pushnumber(L, (lua_Number)r.n); return 1;
    case '$':
        if (r.n == -1) lua_pushboolean(L, 0);
        else lua_pushlstring(L, r.str, r.len);
        return 1;
    case '+':
        push_tagged(L, "ok");
        lua_pushlstring(L, r.str, r.len);
        lua_settable(L, -3);
        return 1;
    case '-': {
        lua_pushliteral(L, "-");
        lua_pushlstring(L, r.str, r.len);
        lua_concat(L, 2);
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        push_error(L, s, len);
        lua_remove(L, -2);
        return 1;
    }
    case '*':
        if (r.n == -1) {
            lua_pushboolean(L, 0);
            return 1;
        }
        return push_aggregate(L, &r, pos, end);
    case '%': case '~': case '>': return push_aggregate(L, &r, pos, end);
    case '_': lua_pushnil(L); return 1;
    case '#': lua_pushboolean(L, (int)r.n); return 1;
    case ',':
        push_tagged(L, "double");
        lua_pushnumber(L, strtod(r.str, NULL));
        lua_settable(L, -3);
        return 1;
    case '(':
        push_tagged(L, "big_number");
        lua_pushlstring(L, r.str, r.len);
        lua_settable(L, -3);
        return 1;
    case '=': push_verbatim(L, &r); return 1;
    case '|':   /* attributes are not shown to scripts: skip them */
        for (long long i = 0; i < 2 * r.n; i++) {
            if (!push_reply(L, pos, end)) return 0;
            lua_pop(L, 1);
        }
        return push_reply(L, pos, end);
    }
    return 0;
}

/* Redis tags errors that came from running (or refusing) a command: its
 * error statistics already counted them. Scripts can see the field. */
static void mark_counted(lua_State *L)
{
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ignore_error_stats_update");
}

static int redis_call_generic(lua_State *L, int raise)
{
    script_engine *e = engine_of(L);
    const script_call *run = e->srv->scripts->running;
    int argc = lua_gettop(L);
    if (!run) return raise_error_cstr(L, "redis.call/pcall can only be called inside a script invocation");
    int collected = argc == 0 ? 0 : collect_args(L, e, argc);
    if (collected != 1) {
        push_error_cstr(L, argc == 0 ? "Please specify at least one argument for this redis lib call"
                           : collected == 0 ? "Lua redis lib command arguments must be strings or integers"
                                            : "Lua redis lib command argument is longer than 2047 MiB, "
                                              "the most latchd holds");
        return raise ? lua_error(L) : 1;
    }
    const command *cmd = command_lookup(e->argv[0].ptr, e->argv[0].len);
    const char *refusal = call_refusal(run, cmd, e->argv, argc);
    if (!refusal && oom_refuses(e->srv, run, cmd))
        refusal = "-OOM command not allowed when used memory > 'maxmemory'.";
    char misconf[128];
    if (!refusal && e->srv->aof_write_err && cmd && (cmd->flags & CMD_WRITE)) {   /* scriptVerifyWriteCommandAllow */
        snprintf(misconf, sizeof misconf, "-MISCONF Errors writing to the AOF file: %s", aof_write_error(e->srv));
        refusal = misconf;
    }
    if (refusal) {
        stats_script_refused(e->srv, cmd, refusal);
        push_error_cstr(L, refusal);
        mark_counted(L);
        return raise ? lua_error(L) : 1;
    }
    int denied = run->c->user->unrestricted ? ACL_OK : acl_script_check(run->c, cmd, e->argv, argc);
    if (denied != ACL_OK) {
        char text[160];
        snprintf(text, sizeof(text), "The user executing the script %s", acl_denial_text(denied));
        push_error_cstr(L, text);
        mark_counted(L);
        return raise ? lua_error(L) : 1;
    }
    client *self = e->srv->scripts->self;
    if (cmd->flags & CMD_WRITE) e->srv->scripts->wrote = 1;
    script_exec(e->srv, cmd, e->argv, argc);
    /* the arguments are done with: their stack slots go to the reply (with
     * ~8000 of them the stack has no room left for even an integer) */
    lua_settop(L, 0);
    const char *pos = self->out.data, *end = pos + self->out.len;
    int is_error = self->out.len && pos[0] == '-';
    int ok = self->out.len && push_reply(L, &pos, end);
    self->out.len = 0;
    if (!ok) return raise_error_cstr(L, "latchd: unreadable reply in script");
    if (is_error) mark_counted(L);
    return raise && is_error ? lua_error(L) : 1;
}

/* redis.acl_check_cmd(command, arg, ...): whether the script's caller
 * could run that command with those arguments. */
static int redis_acl_check_cmd(lua_State *L)
{
    script_engine *e = engine_of(L);
    const script_call *run = e->srv->scripts->running;
    int argc = lua_gettop(L);
    if (!run) return raise_error_cstr(L, "redis.acl_check_cmd can only be called inside a script invocation");
    int collected = argc == 0 ? 0 : collect_args(L, e, argc);
    if (collected != 1)
        return raise_error_cstr(L, argc == 0 ? "Please specify at least one argument for this redis lib call"
                                             : "Lua redis lib command arguments must be strings or integers");
    const command *cmd = command_lookup(e->argv[0].ptr, e->argv[0].len), *sub = NULL;
    if (cmd && (cmd->flags & CMD_CONTAINER) && argc >= 2) {
        sub = subcommand_lookup(cmd, e->argv[1].ptr, e->argv[1].len);
        if (!sub) cmd = NULL;
    }
    if (!cmd) return raise_error_cstr(L, "Invalid command passed to redis.acl_check_cmd()");
    int may = acl_user_may(run->c->user, cmd, sub, e->argv, argc);
    lua_settop(L, 0);
    lua_pushboolean(L, may);
    return 1;
}

static int redis_call(lua_State *L) { return redis_call_generic(L, 1); }
static int redis_pcall(lua_State *L) { return redis_call_generic(L, 0); }

/* ---- the rest of redis.* ---- */

static int redis_sha1hex(lua_State *L)
{
    char hex[41];
    size_t len = 0;
    if (lua_gettop(L) != 1) return raise_error_cstr(L, "wrong number of arguments");
    const char *s = lua_tolstring(L, 1, &len);
    script_sha1hex(hex, s ? s : "", s ? len : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int redis_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (s[0] == '-') {
        push_error(L, s, len);
    } else {
        lua_pushliteral(L, "-");
        lua_pushvalue(L, 1);
        lua_concat(L, 2);
        s = lua_tolstring(L, -1, &len);
        push_error(L, s, len);
    }
    return 1;
}

static int redis_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushliteral(L, "ok");
    lua_pushvalue(L, 1);
    lua_rawset(L, -3);
    return 1;
}

/* Lua numbers become integers by truncation; like C on x86, what has no
 * integer value becomes LLONG_MIN (done explicitly: the cast is UB). */
static long long number_to_ll(lua_Number d)
{
    if (isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) return LLONG_MIN;
    return (long long)d;
}

/* The same for Redis's int casts (setresp, set_repl, log levels): out of
 * range is INT_MIN, so redis.setresp(2^32+2) is refused as in Redis. */
static int number_to_int(lua_Number d)
{
    if (isnan(d) || d >= 2147483648.0 || d <= -2147483649.0) return INT_MIN;
    return (int)d;
}

static int redis_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) return raise_error_cstr(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_error_cstr(L, "First argument must be a number (log level).");
    int level = number_to_int(lua_tonumber(L, 1));
    if (level < LOG_DEBUG || level > LOG_WARNING) return raise_error_cstr(L, "Invalid debug level.");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = 2; j <= argc; j++) {
        size_t len;
        const char *s = lua_tolstring(L, j, &len);
        if (!s) continue;
        if (j != 2) luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, len);
    }
    luaL_pushresult(&b);
    void *ud;
    lua_getallocf(L, &ud);
    const script_engine *e = ud;
    log_msg(e->srv, level, "%s", lua_tostring(L, -1));
    return 0;
}

/* The engine, for redis.<fn> functions that only make sense while a
 * script runs (a Lua hook or a saved closure could call them later). */
static script_engine *engine_in_script(lua_State *L, const char *fn)
{
    script_engine *e = engine_of(L);
    if (!e->srv->scripts->running) {
        lua_pushfstring(L, "redis.%s can only be called inside a script invocation", fn);
        raise_error_cstr(L, lua_tostring(L, -1));
    }
    return e;
}

static int redis_setresp(lua_State *L)
{
    script_engine *e = engine_in_script(L, "setresp");
    if (lua_gettop(L) != 1) return raise_error_cstr(L, "redis.setresp() requires one argument.");
    int resp = number_to_int(lua_tonumber(L, 1));
    if (resp != 2 && resp != 3) return raise_error_cstr(L, "RESP version must be 2 or 3.");
    e->resp = resp;
    e->srv->scripts->self->proto = resp;
    return 0;
}

/* No replication here: the flags are checked and otherwise ignored. */
static int redis_set_repl(lua_State *L)
{
    engine_in_script(L, "set_repl");
    if (lua_gettop(L) != 1) return raise_error_cstr(L, "redis.set_repl() requires two arguments.");
    int flags = number_to_int(lua_tonumber(L, -1));
    if (flags & ~3)
        return raise_error_cstr(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return 0;
}

static int redis_replicate_commands(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static int redis_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

static int redis_debug(lua_State *L) { return 0; }

static void set_number(lua_State *L, const char *name, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void register_redis_api(script_engine *e)
{
    static const struct { const char *name; lua_CFunction fn; } fns[] = {
        {"call", redis_call}, {"pcall", redis_pcall}, {"sha1hex", redis_sha1hex},
        {"error_reply", redis_error_reply}, {"status_reply", redis_status_reply},
        {"log", redis_log}, {"setresp", redis_setresp}, {"set_repl", redis_set_repl},
        {"replicate_commands", redis_replicate_commands}, {"breakpoint", redis_breakpoint},
        {"debug", redis_debug}, {"acl_check_cmd", redis_acl_check_cmd},
    };
    lua_State *L = e->L;
    lua_newtable(L);
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        lua_pushlightuserdata(L, e);
        lua_pushcclosure(L, fns[i].fn, 1);
        lua_setfield(L, -2, fns[i].name);
    }
    set_number(L, "LOG_DEBUG", LOG_DEBUG);
    set_number(L, "LOG_VERBOSE", LOG_VERBOSE);
    set_number(L, "LOG_NOTICE", LOG_NOTICE);
    set_number(L, "LOG_WARNING", LOG_WARNING);
    set_number(L, "REPL_NONE", 0);
    set_number(L, "REPL_AOF", 1);
    set_number(L, "REPL_SLAVE", 2);
    set_number(L, "REPL_REPLICA", 2);
    set_number(L, "REPL_ALL", 3);
    set_number(L, "REDIS_VERSION_NUM", 0x0007000f);   /* 7.0.15 */
    lua_pushliteral(L, LATCHD_REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    lua_setglobal(L, "redis");
}

/* ---- redis.register_function (only while FUNCTION LOAD runs a body) ---- */

typedef struct reg_args {
    const char *name, *desc;
    size_t name_len, desc_len;
    int flags;
    int ref;                 /* the callback, LUA_NOREF until given */
} reg_args;

/* A flags table {'no-writes', ...}: 0, or -1 for a value that is not a
 * known flag's name. */
static int read_flags(lua_State *L, int idx, int *flags)
{
    for (int j = 1;; j++) {
        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) break;
        int bit = lua_isstring(L, -1) ? script_flag_bit(lua_tostring(L, -1), strcasecmp) : 0;
        lua_pop(L, 1);
        if (!bit) return -1;
        *flags |= bit;
    }
    lua_pop(L, 1);
    return 0;
}

/* The table form {function_name=, callback=, flags=, description=};
 * NULL, or Redis's error text. Names and descriptions stay alive in the
 * table, which is on the stack for the whole call. */
static const char *read_named_args(lua_State *L, reg_args *a)
{
    if (!lua_istable(L, 1))
        return "calling redis.register_function with a single argument is only applicable to Lua table "
               "(representing named arguments).";
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            if (lua_type(L, -2) != LUA_TNUMBER) return "named argument key given to redis.register_function is not a string";
            return "unknown argument given to redis.register_function";
        }
        const char *key = lua_tostring(L, -2);
        if (!strcasecmp(key, "function_name")) {
            if (!lua_isstring(L, -1)) return "function_name argument given to redis.register_function must be a string";
            a->name = lua_tolstring(L, -1, &a->name_len);
        } else if (!strcasecmp(key, "description")) {
            if (!lua_isstring(L, -1)) return "description argument given to redis.register_function must be a string";
            a->desc = lua_tolstring(L, -1, &a->desc_len);
        } else if (!strcasecmp(key, "callback")) {
            if (!lua_isfunction(L, -1)) return "callback argument given to redis.register_function must be a function";
            if (a->ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, a->ref);
            a->ref = luaL_ref(L, LUA_REGISTRYINDEX);   /* pops the value */
            continue;
        } else if (!strcasecmp(key, "flags")) {
            if (!lua_istable(L, -1))
                return "flags argument to redis.register_function must be a table representing function flags";
            if (read_flags(L, lua_gettop(L), &a->flags) != 0) return "unknown flag given";
        } else {
            return "unknown argument given to redis.register_function";
        }
        lua_pop(L, 1);
    }
    if (!a->name) return "redis.register_function must get a function name argument";
    if (a->ref == LUA_NOREF) return "redis.register_function must get a callback argument";
    return NULL;
}

static const char *read_reg_args(lua_State *L, reg_args *a)
{
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) return "wrong number of arguments to redis.register_function";
    if (argc == 1) return read_named_args(L, a);
    if (!lua_isstring(L, 1)) return "first argument to redis.register_function must be a string";
    if (!lua_isfunction(L, 2)) return "second argument to redis.register_function must be a function";
    a->name = lua_tolstring(L, 1, &a->name_len);
    lua_pushvalue(L, 2);
    a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return NULL;
}

static int redis_register_function(lua_State *L)
{
    script_engine *e = engine_of(L);
    if (!e->loading) return raise_error_cstr(L, "redis.register_function can only be called on FUNCTION LOAD command");
    reg_args a = {.ref = LUA_NOREF};
    char err[256];
    const char *msg = read_reg_args(L, &a);
    if (!msg && function_lib_add(e->loading, a.name, a.name_len, a.desc, a.desc_len, a.flags, a.ref,
                                 err, sizeof(err)) != 0)
        msg = err;
    if (!msg) return 0;
    if (a.ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, a.ref);
    return raise_error_cstr(L, msg);
}

/* ---- time limit ---- */

#define HOOK_EVERY 100000   /* VM instructions between checks, as Redis */

/* Every HOOK_EVERY instructions: serve other clients once the script is
 * busy, and stop it when asked. After a kill the hook fires on every line,
 * so a pcall in the script cannot swallow the error for long. */
static void time_hook(lua_State *L, lua_Debug *ar)
{
    void *ud;
    lua_getallocf(L, &ud);
    script_engine *e = ud;
    if (!script_busy_tick(e->srv)) return;
    log_msg(e->srv, LOG_WARNING, "Lua script killed by user with SCRIPT KILL.");
    lua_sethook(L, time_hook, LUA_MASKLINE, 0);
    raise_error_cstr(L, "Script killed by user with SCRIPT KILL...");
}

/* While a library body runs its globals are only "redis", with
 * register_function, log and the constants (Redis's load-time API); both
 * tables are read-only proxies that name a missing field as a missing
 * global, as Redis does. */
static void make_library_env(script_engine *e)
{
    static const char *consts[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                                   "REDIS_VERSION", "REDIS_VERSION_NUM"};
    lua_State *L = e->L;
    lua_newtable(L);   /* the load-time globals */
    lua_newtable(L);   /* their redis */
    lua_pushlightuserdata(L, e);
    lua_pushcclosure(L, redis_register_function, 1);
    lua_setfield(L, -2, "register_function");
    lua_getglobal(L, "redis");
    lua_getfield(L, -1, "log");
    lua_setfield(L, -3, "log");
    for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
        lua_getfield(L, -1, consts[i]);
        lua_setfield(L, -3, consts[i]);
    }
    lua_pop(L, 1);
    push_proxy(e, -1, missing_global);
    lua_setfield(L, -3, "redis");
    lua_pop(L, 1);
    push_proxy(e, -1, missing_global);
    e->load_api_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    /* lib_env: empty, writes refused, reads through its metatable */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, -1);
    e->lib_meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    seal_metatable(e);
    lua_setmetatable(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->readonly_ref);
    lua_pushvalue(L, -2);
    lua_newtable(L);   /* what pairs() sees of it: nothing */
    lua_rawset(L, -3);
    lua_pop(L, 1);
    e->lib_env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ---- the state ---- */

/* The allocator's user data carries the engine to the hook, which has no
 * upvalues. */
static void *engine_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    return lua_pool_alloc(((script_engine *)ud)->pool, ptr, osize, nsize);
}

/* Lua calls this for an error outside every lua_pcall; the state is then
 * unusable, and Lua exit()s the process if this returns. Scripts run under
 * lua_pcall, so only memory running out in the unprotected steps (setting
 * the state up, pushing KEYS/ARGV) or a latchd bug gets here: fatal, as
 * latchd.h says. */
static int engine_panic(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    const script_engine *e = ud;
    log_msg(e->srv, LOG_WARNING, "Fatal: unprotected Lua error: %s", lua_tostring(L, -1));
    abort();
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open)
{
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_istable(L, -1)) lua_setglobal(L, name);
    else lua_pop(L, 1);
}

static void set_global_fn(script_engine *e, const char *name, lua_CFunction fn)
{
    lua_pushlightuserdata(e->L, e);
    lua_pushcclosure(e->L, fn, 1);
    lua_setglobal(e->L, name);
}

script_engine *script_engine_new(server *s)
{
    script_engine *e = mem_calloc(1, sizeof(*e));
    e->pool = lua_pool_new();
    lua_State *L = lua_newstate(engine_alloc, e);
    if (!L) mem_oom(0);   /* only its first allocation can fail it */
    lua_atpanic(L, engine_panic);
    e->L = L;
    e->srv = s;
    e->resp = 2;
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "bit", luaopen_bit);
    lua_getglobal(L, "bit");
    lua_pushcfunction(L, safe_tohex);
    lua_setfield(L, -2, "tohex");
    lua_pop(L, 1);
    open_lib(L, "struct", latchd_luaopen_struct);
    open_lib(L, "cmsgpack", latchd_luaopen_cmsgpack);
    /* Redis's sandbox: no file access, no printing to the server's stdout. */
    static const char *denied[] = {"dofile", "loadfile", "print", "newproxy", "setfenv", "getfenv"};
    for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
        lua_pushnil(L);
        lua_setglobal(L, denied[i]);
    }
    lua_newtable(L);
    e->readonly_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    set_global_fn(e, "pcall", lua_redis_style_pcall);
    set_global_fn(e, "loadstring", safe_loadstring);
    set_global_fn(e, "load", safe_load);
    set_global_fn(e, "rawset", guarded_rawset);
    set_global_fn(e, "setmetatable", guarded_setmetatable);
    set_global_fn(e, "next", proxy_next);
    set_global_fn(e, "__redis__err__handler", error_handler);   /* a global in Redis too */
    set_global_fn(e, "pairs", proxy_pairs);
    set_global_fn(e, "unpack", safe_unpack);
    register_redis_api(e);
    protect_globals(e);
    lua_pushliteral(L, "");   /* strings are the one basic type with a metatable */
    lua_getmetatable(L, -1);
    seal_metatable(e);
    lua_pop(L, 2);
    make_library_env(e);
    return e;
}

void script_engine_free(script_engine *e)
{
    if (!e) return;
    lua_close(e->L);
    lua_pool_free(e->pool);
    free(e->argv);
    free(e->numbufs);
    free(e);
}

size_t script_engine_memory(script_engine *e)
{
    return (size_t)lua_gc(e->L, LUA_GCCOUNT, 0) * 1024;   /* Redis's luaMemory: whole KiB */
}

void script_engine_collect(script_engine *e) { lua_gc(e->L, LUA_GCCOLLECT, 0); }

int script_engine_compile(script_engine *e, script *sc, char *err, size_t errlen)
{
    lua_State *L = e->L;
    if (load_text(L, sc->body, sc->len, "@user_script", 1) != 0) {
        snprintf(err, errlen, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    sc->lua_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

void script_engine_forget(script_engine *e, script *sc)
{
    luaL_unref(e->L, LUA_REGISTRYINDEX, sc->lua_ref);
}

void script_engine_forget_function(script_engine *e, function *fn)
{
    luaL_unref(e->L, LUA_REGISTRYINDEX, fn->lua_ref);
}

#define LOAD_TIMEOUT_MS 500   /* Redis's LOAD_TIMEOUT_MS */

/* A library body may not run forever: FUNCTION LOAD fails after 500 ms. */
static void load_hook(lua_State *L, lua_Debug *ar)
{
    void *ud;
    lua_getallocf(L, &ud);
    script_engine *e = ud;
    if (server_real_ms(e->srv) - e->load_start_ms <= LOAD_TIMEOUT_MS) return;
    lua_sethook(L, load_hook, LUA_MASKLINE, 0);
    raise_error_cstr(L, "FUNCTION LOAD timeout");
}

/* lib_env's reads go to the table registered under ref. */
static void lib_env_reads(script_engine *e, int ref)
{
    lua_State *L = e->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->lib_meta_ref);
    lua_pushliteral(L, "__index");
    if (ref == LUA_NOREF) lua_pushvalue(L, LUA_GLOBALSINDEX);
    else lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

int script_engine_load_library(script_engine *e, function_lib *lib, const char *code,
                               size_t len, char *err, size_t errlen)
{
    lua_State *L = e->L;
    lua_pushcfunction(L, error_handler);
    if (load_text(L, code, len, "@user_function", 0) != 0) {
        snprintf(err, errlen, "Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 2);
        return -1;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->lib_env_ref);
    lua_setfenv(L, -2);   /* its functions inherit it */
    lib_env_reads(e, e->load_api_ref);
    e->loading = lib;
    e->load_start_ms = server_real_ms(e->srv);
    lua_sethook(L, load_hook, LUA_MASKCOUNT, HOOK_EVERY);
    int rc = lua_pcall(L, 0, 0, -2);
    lua_sethook(L, NULL, 0, 0);
    e->loading = NULL;
    lib_env_reads(e, LUA_NOREF);
    if (rc != 0) {
        const char *msg = "";
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
        } else if (lua_isstring(L, -1)) {
            msg = lua_tostring(L, -1);
        }
        snprintf(err, errlen, "Error registering functions: %s", msg);
        lua_settop(L, lua_gettop(L) - (lua_istable(L, -2) ? 3 : 2));
        return -1;
    }
    lua_pop(L, 1);   /* the error handler */
    return 0;
}

/* ---- running a script and converting its result ---- */

static void push_arg_table(lua_State *L, const resp_slice *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].ptr, v[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}

static void set_arg_table(lua_State *L, const char *name, const resp_slice *v, int n)
{
    push_arg_table(L, v, n);
    lua_setfield(L, -2, name);   /* into the real globals table below it */
}

static void reply_value(script_engine *e, client *c, resp_buf *b);

/* t.field of the table on top, pushed; its Lua type. */
static int field_type(lua_State *L, const char *field)
{
    lua_pushstring(L, field);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

enum { T_ARRAY, T_ERR, T_OK, T_DOUBLE, T_BIGNUM, T_VERBATIM, T_MAP, T_SET };

/* {format="txt", string="..."} with both fields usable. */
static int verbatim_ok(lua_State *L)
{
    int ok = field_type(L, "format") == LUA_TSTRING && lua_objlen(L, -1) == 3;
    lua_pop(L, 1);
    ok = ok && field_type(L, "string") == LUA_TSTRING;
    lua_pop(L, 1);
    return ok;
}

/* How a table result replies, by the first tag field present (in Redis's
 * order). For a tagged table the field's value is left on top. */
static int table_kind(lua_State *L)
{
    static const struct { const char *field; int type, kind; } tags[] = {
        {"err", LUA_TSTRING, T_ERR}, {"ok", LUA_TSTRING, T_OK},
        {"double", LUA_TNUMBER, T_DOUBLE}, {"big_number", LUA_TSTRING, T_BIGNUM},
        {"verbatim_string", LUA_TTABLE, T_VERBATIM}, {"map", LUA_TTABLE, T_MAP},
        {"set", LUA_TTABLE, T_SET},
    };
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        if (field_type(L, tags[i].field) == tags[i].type &&
            (tags[i].kind != T_VERBATIM || verbatim_ok(L)))
            return tags[i].kind;
        lua_pop(L, 1);
    }
    return T_ARRAY;
}

static void reply_aggregate(script_engine *e, client *c, resp_buf *b, int is_map)
{
    lua_State *L = e->L;
    long long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    if (is_map) resp_add_map_len(b, c->proto, n);
    else resp_add_set_len(b, c->proto, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (!is_map) lua_pop(L, 1);   /* a set's values are just "true" */
        lua_pushvalue(L, -1 - is_map);
        reply_value(e, c, b);         /* the key */
        if (is_map) reply_value(e, c, b);
    }
}

static void reply_array_table(script_engine *e, client *c, resp_buf *b)
{
    lua_State *L = e->L;
    int n = 0;
    for (;; n++) {
        lua_rawgeti(L, -1, n + 1);
        int end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end) break;
    }
    resp_add_array_len(b, n);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        reply_value(e, c, b);
    }
}

/* Redis reads these fields as C strings, so they end at a NUL. */
static void reply_error_text(resp_buf *b, const char *s)
{
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\r' || s[len - 1] == '\n')) len--;
    resp_add_error(b, s, len);
}

/* Pushes s with CR and LF as spaces. Out of line: a luaL_Buffer is BUFSIZ
 * bytes, too much for every frame of reply_table's recursion. */
static __attribute__((noinline)) void blank_line_breaks(lua_State *L, const char *s, size_t len)
{
    luaL_Buffer lb;
    luaL_buffinit(L, &lb);
    for (size_t i = 0; i < len; i++) luaL_addchar(&lb, s[i] == '\r' || s[i] == '\n' ? ' ' : s[i]);
    luaL_pushresult(&lb);
}

static void reply_table(script_engine *e, client *c, resp_buf *b)
{
    lua_State *L = e->L;
    size_t len;
    const char *s;
    int kind = table_kind(L);
    switch (kind) {
    case T_ARRAY: reply_array_table(e, c, b); return;
    case T_ERR:
        lua_getfield(L, -2, "ignore_error_stats_update");
        if (lua_toboolean(L, -1)) e->srv->stat_error_counted = 1;   /* a redis.pcall's, counted then */
        lua_pop(L, 1);
        reply_error_text(b, lua_tostring(L, -1));
        break;
    case T_OK: s = lua_tostring(L, -1); resp_add_simple(b, s, strlen(s)); break;
    case T_DOUBLE: resp_add_double(b, c->proto, lua_tonumber(L, -1)); break;
    case T_BIGNUM:
        /* Redis blanks CR and LF so a script cannot break the protocol line */
        s = lua_tolstring(L, -1, &len);
        if (memchr(s, '\r', len) || memchr(s, '\n', len)) {
            blank_line_breaks(L, s, len);
            s = lua_tolstring(L, -1, &len);
            resp_add_bignum(b, c->proto, s, len);
            lua_pop(L, 1);
        } else {
            resp_add_bignum(b, c->proto, s, len);
        }
        break;
    case T_VERBATIM:
        lua_getfield(L, -1, "format");
        lua_getfield(L, -2, "string");
        s = lua_tolstring(L, -1, &len);
        resp_add_verbatim(b, c->proto, lua_tostring(L, -2), s, len);
        lua_pop(L, 2);
        break;
    case T_MAP: case T_SET: reply_aggregate(e, c, b, kind == T_MAP); break;
    }
    lua_pop(L, 1);
}

/* The value on top of the stack as a reply (and popped), per Redis's
 * Lua-to-RESP rules; booleans follow redis.setresp(). */
static void reply_value(script_engine *e, client *c, resp_buf *b)
{
    lua_State *L = e->L;
    if (!lua_checkstack(L, 4)) {
        resp_add_errorf(b, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        resp_add_bulk(b, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (e->resp == 3) resp_add_bool(b, c->proto, lua_toboolean(L, -1));
        else if (lua_toboolean(L, -1)) resp_add_int(b, 1);
        else resp_add_null(b, c->proto);
        break;
    case LUA_TNUMBER: resp_add_int(b, number_to_ll(lua_tonumber(L, -1))); break;
    case LUA_TTABLE: reply_table(e, c, b); break;
    default: resp_add_null(b, c->proto); break;
    }
    lua_pop(L, 1);
}

/* A failed script: "<err> script: <sha>, on <source>:<line>." as 7.0. */
static void reply_script_error(script_engine *e, const script_call *call, resp_buf *b)
{
    lua_State *L = e->L;
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        resp_add_errorf(b, "ERR Error running script %s, %.100s", script_call_name(call), msg);
        return;
    }
    lua_getfield(L, -1, "ignore_error_stats_update");
    if (lua_toboolean(L, -1)) e->srv->stat_error_counted = 1;   /* the redis.call counted it */
    lua_pop(L, 1);
    lua_getfield(L, -1, "err");
    lua_getfield(L, -2, "source");
    lua_getfield(L, -3, "line");
    const char *msg = lua_isstring(L, -3) ? lua_tostring(L, -3) : "";
    if (lua_isstring(L, -2) && lua_isstring(L, -1))
        resp_add_errorf(b, "%s script: %s, on %s:%s.", msg, script_call_name(call),
                        lua_tostring(L, -2), lua_tostring(L, -1));
    else
        reply_error_text(b, msg);
    lua_pop(L, 3);
}

void script_engine_run(script_engine *e, const script_call *call)
{
    lua_State *L = e->L;
    e->resp = 2;
    e->srv->scripts->self->proto = 2;
    int nargs = 0;
    if (call->fn) {   /* a function gets KEYS and ARGV as its arguments */
        lua_pushcfunction(L, error_handler);
        lua_rawgeti(L, LUA_REGISTRYINDEX, call->fn->lua_ref);
        push_arg_table(L, call->keys, call->nkeys);
        push_arg_table(L, call->args, call->nargs);
        nargs = 2;
    } else {
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->globals_ref);
        set_arg_table(L, "KEYS", call->keys, call->nkeys);
        set_arg_table(L, "ARGV", call->args, call->nargs);
        lua_pop(L, 1);
        lua_pushcfunction(L, error_handler);
        lua_rawgeti(L, LUA_REGISTRYINDEX, call->sc->lua_ref);
    }
    if (e->srv->cfg.busy_reply_ms > 0) lua_sethook(L, time_hook, LUA_MASKCOUNT, HOOK_EVERY);
    int err = lua_pcall(L, nargs, 1, -2 - nargs);
    lua_sethook(L, NULL, 0, 0);
    resp_buf *b = client_out(call->c);
    if (!b) {
        lua_pop(L, 1);   /* CLIENT REPLY OFF: nothing to convert */
    } else if (err) {
        reply_script_error(e, call, b);
        lua_pop(L, 1);
    } else {
        reply_value(e, call->c, b);
    }
    lua_pop(L, 1);   /* the error handler */
    if (++e->runs % GC_STEP_EVERY == 0) lua_gc(L, LUA_GCSTEP, GC_STEP_EVERY);
}
