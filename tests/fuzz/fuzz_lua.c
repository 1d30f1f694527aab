/* fuzz_lua.c - libFuzzer target for the Lua bridge: the input's bytes pick
 * productions of a small Lua grammar (redis.call/pcall, every reply type,
 * the bundled libraries, pcall/error, bounded loops, global writes, shebang
 * flags) or a known client script (the native ones) with chosen KEYS/ARGV.
 * The scripts go through EVAL/EVALSHA on a detached client exactly as a
 * connection's would, once with native-scripts on and once off: each
 * command must get exactly one well-formed reply, the keyspace must hold
 * its invariants, and both runs must agree on every reply byte and key. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "list.h"
#include "scripting/script.h"
#include "set.h"
#include "stream.h"
#include "zset.h"

#define MAX_SCRIPTS 3
#define MAX_STMTS 24
#define MAX_DEPTH 3
#define MAX_LOOP 6
#define SCRIPT_CAP 8192
#define MAX_ARGS 4
#define MAX_LOCAL_REFS 8
#define REPLY_DEPTH 64

/* ---- the input, read as grammar choices ---- */

typedef struct gen {
    const uint8_t *p, *end;
    char out[SCRIPT_CAP];
    size_t len;
    int depth, loops, stmts;
    /* Locals may be read only a few times and never in loops or inserts:
     * t = {t, t} repeated, or a table inserted into itself, makes a reply
     * exponentially large, in Redis as well; a hang, not a finding. */
    int local_refs, no_local_refs;
} gen;

/* Past the end of the input every choice is 0: the shortest production. */
static unsigned take(gen *g)
{
    return g->p < g->end ? *g->p++ : 0;
}

static unsigned pick(gen *g, unsigned n)
{
    return take(g) % n;
}

/* A script too long for the buffer is cut; the cut one fails to compile,
 * which is a path worth taking too. */
static void emit(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->out + g->len, SCRIPT_CAP - g->len, fmt, ap);
    va_end(ap);
    if (n > 0) g->len += (size_t)n < SCRIPT_CAP - g->len ? (size_t)n : SCRIPT_CAP - 1 - g->len;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Lua source text of values the bridge treats specially. */
static const char *const numbers[] = {
    "0", "1", "-1", "3.5", "-0.0", "1e308", "-1e308", "2^53", "2^53+1", "2^63", "-2^63",
    "2^64", "1/0", "-1/0", "0/0", "9007199254740993", "0.1", "123456789012", "1e-300",
    "4294967296", "65536", "255", "-2147483648",
};
static const char *const strings[] = {
    "''", "'x'", "'OK'", "'PONG'", "'ERR boom'", "'-ERR dash'", "'+plus'", "'WRONGTYPE x'",
    "'a\\0b'", "'\\r\\n'", "'10'", "'-5'", "'3.14'", "'inf'", "'nan'", "'9223372036854775807'",
    "'9223372036854775808'", "'{k1}'", "'k1'", "'k2'", "'h'", "'f1'", "'PX'", "'EX'", "'NX'",
    "'XX'", "'GET'", "'KEEPTTL'", "'WITHSCORES'", "'+inf'", "'-inf'", "'('", "'['", "'*'",
    "'[1,2,{\"a\":null}]'", "'{\"err\":\"x\"}'", "'\\255\\254'", "string.rep('ab', 100)",
    "'%d %s'", "'message'",
};
static const char *const unknown_commands[] = {
    "nosuchcommand", "", "GET\\0", "eval", "evalsha", "script", "multi", "exec",
    "subscribe", "shutdown", "client", "config",
};
/* Commands called as PING instead: those whose replies differ between two
 * fresh servers for reasons that are no bug (memory figures, run ids,
 * timings) ... */
static const char *const nondeterministic[] = {
    "info", "memory", "debug", "lastsave", "latency", "slowlog", "config", "client", "hello",
    "command", "object",
    /* and one that is deterministic but takes seconds under ASan, which
     * the run's -timeout would report as a hang */
    "pfselftest",
};

static void expr(gen *g);
static void block(gen *g, int nstmts);

static int is_nondeterministic(const char *name)
{
    for (size_t i = 0; i < COUNT(nondeterministic); i++)
        if (strcmp(name, nondeterministic[i]) == 0) return 1;
    return 0;
}

static void command_name(gen *g)
{
    unsigned x = take(g);
    if (x < 32) {
        emit(g, "'%s'", unknown_commands[x % COUNT(unknown_commands)]);
        return;
    }
    const command *cmd = command_at((x * 7 + take(g)) % command_count());
    const char *name = is_nondeterministic(cmd->name) ? "ping" : cmd->name;
    emit(g, (x & 1) ? "'%s'" : "string.upper('%s')", name);
}

static void atom(gen *g)
{
    unsigned x = take(g);
    switch (x % 12) {
    case 0: case 1: emit(g, "%s", numbers[take(g) % COUNT(numbers)]); return;
    case 2: case 3: case 4: emit(g, "%s", strings[take(g) % COUNT(strings)]); return;
    case 5: emit(g, "%s", (x & 16) ? "true" : "false"); return;
    case 6: emit(g, "nil"); return;
    case 7: emit(g, "KEYS[%u]", 1 + pick(g, 3)); return;
    case 8: emit(g, "ARGV[%u]", 1 + pick(g, 3)); return;
    case 9:
        if (g->no_local_refs || g->local_refs >= MAX_LOCAL_REFS) emit(g, "%u", take(g));
        else emit(g, "v%u", pick(g, 4)), g->local_refs++;
        return;
    case 10: emit(g, "%s", (x & 16) ? "#KEYS" : "#ARGV"); return;
    default: emit(g, "%d", (int)(int8_t)take(g)); return;
    }
}

static void exprs(gen *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (i) emit(g, ", ");
        expr(g);
    }
}

static void table(gen *g)
{
    unsigned x = take(g);
    switch (x % 7) {
    case 0: emit(g, "{"); exprs(g, pick(g, 5)); emit(g, "}"); return;
    case 1: emit(g, "{err="); expr(g); emit(g, "}"); return;
    case 2: emit(g, "{ok="); expr(g); emit(g, "}"); return;
    case 3: emit(g, "{"); expr(g); emit(g, ", nil, "); expr(g); emit(g, "}"); return;   /* a hole */
    case 4: emit(g, "{[1]="); expr(g); emit(g, ", [3]="); expr(g); emit(g, "}"); return;
    case 5: emit(g, "{k="); expr(g); emit(g, ", "); expr(g); emit(g, "}"); return;
    default:
        if (g->depth >= MAX_DEPTH) {   /* the nesting is bounded like expressions' */
            emit(g, "{{}}");
            return;
        }
        g->depth++;
        emit(g, "{{");
        exprs(g, pick(g, 3));
        emit(g, "}, {");
        table(g);
        emit(g, "}}");
        g->depth--;
        return;
    }
}

/* redis.call / redis.pcall with arguments biased towards what commands
 * accept, plus anything at all. */
static void redis_call(gen *g)
{
    emit(g, (take(g) & 1) ? "redis.call(" : "redis.pcall(");
    command_name(g);
    unsigned n = pick(g, MAX_ARGS + 1);
    for (unsigned i = 0; i < n; i++) {
        emit(g, ", ");
        unsigned x = take(g);
        if (x < 96) emit(g, "%s", strings[x % COUNT(strings)]);
        else if (x < 144) emit(g, "KEYS[%u]", 1 + x % 3);
        else if (x < 192) emit(g, "%s", numbers[x % COUNT(numbers)]);
        else expr(g);
    }
    emit(g, ")");
}

static void library_call(gen *g)
{
    static const char *const unary[] = {
        "redis.error_reply", "redis.status_reply", "redis.sha1hex", "cjson.encode",
        "cjson.decode", "cmsgpack.pack", "cmsgpack.unpack", "bit.tohex", "bit.bnot",
        "tonumber", "type", "string.len", "string.upper", "string.byte",
        "math.floor", "unpack", "redis.setresp", "redis.breakpoint", "redis.replicate_commands",
        "redis.set_repl", "rawget", "getmetatable",
    };   /* no loadstring: error(f) of a function says its address */
    static const char *const binary[] = {
        "bit.band", "bit.bor", "bit.bxor", "bit.lshift", "bit.rshift", "bit.arshift",
        "string.rep", "string.sub", "string.format", "string.find", "math.max", "math.fmod",
        "cmsgpack.pack", "redis.log", "string.char", "table.concat", "rawequal", "select",
    };
    static const char *const struct_fmts[] = {"'>I2'", "'<i4'", "'b'", "'d'", "'s'", "'c0'", "'!4 i8'", "'>L'"};
    unsigned x = take(g);
    if (x % 9 == 0) {
        emit(g, "struct.%s(%s, ", (x & 16) ? "pack" : "unpack", struct_fmts[take(g) % COUNT(struct_fmts)]);
        exprs(g, 1 + pick(g, 2));
        emit(g, ")");
    } else if (x % 9 == 2) {
        /* only of numbers: a table's or function's text is its address */
        emit(g, "tostring(%s)", numbers[take(g) % COUNT(numbers)]);
    } else if (x % 9 == 1) {
        emit(g, "redis.log(redis.LOG_%s, ", (x & 16) ? "WARNING" : "DEBUG");
        expr(g);
        emit(g, ")");
    } else if (x & 1) {
        emit(g, "%s(", unary[take(g) % COUNT(unary)]);
        expr(g);
        emit(g, ")");
    } else {
        emit(g, "%s(", binary[take(g) % COUNT(binary)]);
        expr(g);
        emit(g, ", ");
        /* small, so nested string.rep stays within about 100 KB */
        emit(g, "%u", pick(g, 9));
        emit(g, ")");
    }
}

static void operator(gen *g)
{
    static const char *const ops[] = {" + ", " - ", " * ", " / ", " % ", " .. ", " == ", " < ", " and ", " or "};
    unsigned x = take(g);
    if (x % 4 == 0) {
        emit(g, (x & 4) ? "(not " : "(#");
        expr(g);
        emit(g, ")");
        return;
    }
    emit(g, "(");
    expr(g);
    emit(g, "%s", ops[take(g) % COUNT(ops)]);
    expr(g);
    emit(g, ")");
}

static void expr(gen *g)
{
    if (g->depth >= MAX_DEPTH) {
        atom(g);
        return;
    }
    g->depth++;
    unsigned x = take(g);
    switch (x % 8) {
    case 0: case 1: atom(g); break;
    case 2: table(g); break;
    case 3: case 4: redis_call(g); break;
    case 5: library_call(g); break;
    case 6: operator(g); break;
    default:
        emit(g, "select(2, pcall(function() ");
        block(g, 1 + pick(g, 3));
        emit(g, " return ");
        expr(g);
        emit(g, " end))");
    }
    g->depth--;
}

static void statement(gen *g)
{
    unsigned x = take(g);
    g->stmts++;
    switch (x % 14) {
    case 0: case 1: emit(g, "v%u = ", pick(g, 4)); expr(g); break;
    case 2: case 3: redis_call(g); break;
    case 4: emit(g, "do return "); expr(g); emit(g, " end"); break;
    case 5: emit(g, "if "); expr(g); emit(g, " then "); block(g, 1 + pick(g, 3));
            emit(g, " else "); block(g, pick(g, 3)); emit(g, " end"); break;
    case 6:
        if (g->loops >= 2) { redis_call(g); break; }
        g->loops++;
        emit(g, "for i%d = 1, %u do ", g->loops, pick(g, MAX_LOOP + 1));
        g->no_local_refs++;
        block(g, 1 + pick(g, 3));
        g->no_local_refs--;
        emit(g, " end");
        g->loops--;
        break;
    case 7:
        if (g->loops >= 2) { redis_call(g); break; }
        g->loops++;
        emit(g, "for k%d, e%d in pairs(", g->loops, g->loops);
        table(g);
        emit(g, ") do ");
        g->no_local_refs++;
        block(g, 1 + pick(g, 2));
        g->no_local_refs--;
        emit(g, " end");
        g->loops--;
        break;
    case 8: emit(g, "redis.setresp(%u)", 1 + pick(g, 4)); break;   /* 1 and 4 are refused */
    case 9: emit(g, "error("); (x & 16) ? table(g) : expr(g); emit(g, ")"); break;
    case 10: emit(g, (x & 16) ? "global_%u = " : "_G.g%u = ", pick(g, 3)); expr(g); break;
    case 11:
        emit(g, "table.insert(v%u, ", pick(g, 4));
        g->no_local_refs++;
        expr(g);
        g->no_local_refs--;
        emit(g, ")");
        break;
    case 12: emit(g, "v%u = {}", pick(g, 4)); break;
    default: emit(g, "pcall(function() "); block(g, 1 + pick(g, 3)); emit(g, " end)"); break;
    }
    emit(g, "\n");
}

static void block(gen *g, int nstmts)
{
    for (int i = 0; i < nstmts && g->stmts < MAX_STMTS && g->depth < MAX_DEPTH + 1; i++) {
        g->depth++;
        statement(g);
        g->depth--;
    }
}

static void shebang(gen *g, unsigned x)
{
    static const char *const lines[] = {
        "", "", "", "", "#!lua\n", "#!lua flags=no-writes\n", "#!lua flags=no-writes,allow-oom\n",
        "#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\n", "#!lua name=x\n",
        "#!lua flags=bogus\n", "#!notlua\n", "#!lua flags=\n",
    };
    emit(g, "%s", lines[x % COUNT(lines)]);
}

/* A generated script: locals first so statements can assign them, then a
 * final return of any expression. */
static void grammar_script(gen *g)
{
    shebang(g, take(g));
    emit(g, "local v0, v1, v2, v3 = ");
    exprs(g, 4);
    emit(g, "\n");
    block(g, 1 + (int)pick(g, MAX_STMTS));
    emit(g, "return ");
    expr(g);
    emit(g, "\n");
}

/* ---- the known client scripts (native ones), from the shared vectors ---- */

typedef struct vector {
    char *body;
    size_t len;
} vector;

static vector vectors[64];
static size_t nvectors;

/* The folder is $LATCHD_SCRIPT_VECTORS, else (as in the Python tests)
 * ../shared/protocol/vectors next to the source tree when it exists, else
 * build/vectors (scripts/vectors). LATCHD_SOURCE_DIR comes from CMake. */
#ifndef LATCHD_SOURCE_DIR
#define LATCHD_SOURCE_DIR "."
#endif

static void load_vector(const char *dir, const char *sha)
{
    char path[1024], check[41];
    snprintf(path, sizeof(path), "%s/%s.lua", dir, sha);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    vector *v = &vectors[nvectors];
    v->body = malloc(SCRIPT_CAP);
    FUZZ_CHECK(v->body != NULL);
    v->len = fread(v->body, 1, SCRIPT_CAP, f);
    fclose(f);
    script_sha1hex(check, v->body, v->len);
    if (memcmp(check, sha, 40) == 0) nvectors++;
    else free(v->body);
}

/* Absent vectors (a clone without ../shared) leave only the grammar. */
static void load_vectors(void)
{
    static int loaded;
    const char *dir = getenv("LATCHD_SCRIPT_VECTORS");
    struct stat st;
    if (loaded) return;
    loaded = 1;
    if (!dir || !*dir) {
        dir = LATCHD_SOURCE_DIR "/../shared/protocol/vectors";
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) dir = LATCHD_SOURCE_DIR "/build/vectors";
    }
    for (size_t i = 0; i < script_native_count() && nvectors < COUNT(vectors); i++)
        load_vector(dir, script_native_at(i)->sha);
}

/* ---- one session: the commands an input decodes to ---- */

#define MAX_COMMANDS (1 + 3 * MAX_SCRIPTS)   /* HELLO, then per script SELECT, EVAL, EVALSHA */

typedef struct session {
    resp_buf cmds;       /* RESP commands, in order */
    size_t ncmds;
    size_t ends[MAX_COMMANDS];   /* where each command's bytes end */
} session;

static const char *const arg_pool[] = {
    "k1", "k2", "{k1}:ch", "redisson_lock__channel:{k1}", "30000", "10", "0", "-1", "uuid:1",
    "uuid:1:1", "uuid:2", "1", "abc", "9223372036854775807", "1.5", "", "PX", "100",
};

static void add_command(session *ss, const resp_slice *argv, int argc)
{
    resp_add_array_len(&ss->cmds, argc);
    for (int i = 0; i < argc; i++) resp_add_bulk(&ss->cmds, argv[i].ptr, argv[i].len);
    ss->ends[ss->ncmds++] = ss->cmds.len;
}

/* EVAL (or EVAL_RO) body numkeys keys... args..., and now and then the
 * same again by EVALSHA so the cached script runs too. */
static void add_eval(session *ss, gen *g, const char *body, size_t len, unsigned how)
{
    resp_slice argv[2 + 2 * 3 + 1];
    char sha[41], nk[2];
    int nkeys = (int)pick(g, 4), nargs = (int)pick(g, 4), argc = 0;
    nk[0] = (char)('0' + nkeys);
    argv[argc++] = (how & 1) ? (resp_slice){"EVAL_RO", 7} : (resp_slice){"EVAL", 4};
    argv[argc++] = (resp_slice){body, len};
    argv[argc++] = (resp_slice){nk, 1};
    for (int i = 0; i < nkeys + nargs; i++) {
        const char *a = arg_pool[take(g) % COUNT(arg_pool)];
        argv[argc++] = (resp_slice){a, strlen(a)};
    }
    add_command(ss, argv, argc);
    if (!(how & 2)) return;
    script_sha1hex(sha, body, len);
    argv[0] = (how & 1) ? (resp_slice){"EVALSHA_RO", 10} : (resp_slice){"EVALSHA", 7};
    argv[1] = (resp_slice){sha, 40};
    add_command(ss, argv, argc);
}

static void decode_session(session *ss, const uint8_t *data, size_t size)
{
    static gen g;
    g.p = data;
    g.end = data + size;
    unsigned head = take(&g);
    if (head & 1) add_command(ss, (resp_slice[]){{"HELLO", 5}, {"3", 1}}, 2);
    for (unsigned i = 0; i <= (head >> 1) % MAX_SCRIPTS; i++) {
        unsigned how = take(&g);
        if (how & 4) {   /* scripts run in the caller's database: move between a few */
            char db[2] = {(char)('0' + take(&g) % 3), 0};
            add_command(ss, (resp_slice[]){{"SELECT", 6}, {db, 1}}, 2);
        }
        if ((how & 0xf0) == 0xf0 && nvectors) {
            const vector *v = &vectors[take(&g) % nvectors];
            add_eval(ss, &g, v->body, v->len, how);
            continue;
        }
        g.len = 0;
        g.depth = g.loops = g.stmts = g.local_refs = g.no_local_refs = 0;
        grammar_script(&g);
        add_eval(ss, &g, g.out, g.len, how);
    }
}

/* ---- running it and checking the outcome ---- */

/* Past one whole reply (aggregates with all their elements); NULL if the
 * bytes there are not one. */
static const char *reply_end(const char *p, const char *end, int depth)
{
    resp_reply r;
    if (depth > REPLY_DEPTH || !resp_read_reply(&p, end, &r)) return NULL;
    long long n = 0;
    switch (r.type) {
    case '*': case '~': case '>': n = r.n; break;
    case '%': n = 2 * r.n; break;
    case '|': n = 2 * r.n + 1; break;   /* the attributes, then the reply */
    }
    for (long long i = 0; i < n && p; i++) p = reply_end(p, end, depth + 1);
    return p;
}

static size_t count_replies(const resp_buf *out)
{
    const char *p = out->data, *end = out->data + out->len;
    size_t n = 0;
    while (p < end) {
        p = reply_end(p, end, 0);
        FUZZ_CHECK(p != NULL);
        n++;
    }
    return n;
}

/* An order-free digest of the keyspace: the two runs may build the same
 * keys in different orders. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static void digest_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    uint64_t h = fnv(fnv(1469598103934665603ULL, f, flen), v, vlen);
    *(uint64_t *)ctx += h;
}

static void digest_elem(const char *v, size_t len, void *ctx)
{
    uint64_t *h = ctx;
    *h = fnv(*h, v, len) * 31;
}

static void digest_member(const char *m, size_t mlen, double score, void *ctx)
{
    uint64_t *h = ctx;
    *h = fnv(fnv(*h, m, mlen), &score, sizeof(score));
}

/* A set's members in no fixed order: summed, so the order does not count. */
static void digest_set_member(const char *m, size_t len, void *ctx)
{
    *(uint64_t *)ctx += fnv(0, m, len);
}

static void digest_key(store_key *k, void *ctx)
{
    size_t len;
    const char *name = store_key_name(k, &len);
    int64_t deadline = store_key_deadline(k);
    store_type t = store_key_type(k);
    uint64_t h = fnv(fnv(fnv(1469598103934665603ULL, name, len), &deadline, sizeof(deadline)), &t, sizeof(t));
    uint64_t body = 0;
    const char *v;
    switch (t) {
    case STORE_STRING: v = store_string_get(k, &len); body = fnv(0, v, len); break;
    case STORE_HASH: store_hash_foreach(k, digest_field, &body); break;
    case STORE_LIST: store_list_range(k, 0, store_list_len(k), 0, digest_elem, &body); break;
    case STORE_ZSET: store_zset_visit(k, 0, store_zset_len(k), 0, digest_member, &body); break;
    case STORE_SET: store_set_foreach(store_set_of(k), digest_set_member, &body); break;
    case STORE_STREAM: body = store_stream_of(k)->len; break;   /* scripts here make none */
    }
    *(uint64_t *)ctx += fnv(h, &body, sizeof(body));
}

typedef struct outcome {
    resp_buf replies;
    uint64_t keys;
} outcome;

static void run_session(const session *ss, const char *native, outcome *o)
{
    static server s;
    fuzz_server_start(&s, "native-scripts", native);
    client *c = client_new_detached(&s);
    for (size_t i = 0, start = 0; i < ss->ncmds; start = ss->ends[i++]) {
        client_feed(c, ss->cmds.data + start, ss->ends[i] - start);
        if (getenv("FUZZ_LUA_SHOW")) fwrite(c->out.data, 1, c->out.len, stderr);
        FUZZ_CHECK(!(c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_AFTER_REPLY)));
        FUZZ_CHECK(c->qpos == c->query.len);
        FUZZ_CHECK(count_replies(&c->out) == 1);   /* a script replies once, whatever it did */
        resp_buf_append(&o->replies, c->out.data, c->out.len);
        c->out.len = 0;
        for (int d = 0; d < s.ndbs; d++)
            if (server_db_if_used(&s, d)) fuzz_check_store(server_db_if_used(&s, d));
    }
    /* Each database's digest weighted by its number: the same keys in
     * another database are another outcome. */
    o->keys = 0;
    for (int d = 0; d < s.ndbs; d++) {
        uint64_t keys = 0;
        if (server_db_if_used(&s, d)) store_foreach(server_db_if_used(&s, d), digest_key, &keys);
        o->keys += keys * (2 * (uint64_t)d + 1);
    }
    client_free_detached(c);
    fuzz_server_stop(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    session ss = {0};
    outcome native = {0}, lua = {0};
    load_vectors();
    resp_buf_init(&ss.cmds);
    decode_session(&ss, data, size);
    if (getenv("FUZZ_LUA_SHOW"))   /* to see what a crashing input ran */
        fwrite(ss.cmds.data, 1, ss.cmds.len, stderr);
    resp_buf_init(&native.replies);
    resp_buf_init(&lua.replies);
    run_session(&ss, "yes", &native);
    run_session(&ss, "no", &lua);
    FUZZ_CHECK(native.replies.len == lua.replies.len &&
               memcmp(native.replies.data, lua.replies.data, lua.replies.len) == 0);
    FUZZ_CHECK(native.keys == lua.keys);
    resp_buf_free(&ss.cmds);
    resp_buf_free(&native.replies);
    resp_buf_free(&lua.replies);
    return 0;
}
