/* function.c - the registry of Redis 7 function libraries: the "#!lua
 * name=..." metadata, loading through the engine, replace/delete/flush,
 * and FUNCTION DUMP/RESTORE's payload (RDB FUNCTION2 records). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mem.h"
#include "persist/persist.h"
#include "script.h"

#define LIB_NAME_ERR "Library names can only contain letters, numbers, or underscores(_) " \
                     "and must be at least one character long"

void functions_init(server *s)
{
    scripts *st = s->scripts;
    store_dict_init(&st->libs, STORE_DICT_KEY_OFF(function_lib, node, name), STORE_DICT_KEY_POINTER);
    store_dict_init(&st->functions, STORE_DICT_KEY_OFF(function, node, key), STORE_DICT_KEY_POINTER);
}

/* Redis's functionsVerifyName: [A-Za-z0-9_]+ */
static int name_ok(const char *p, size_t len)
{
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 1;
}

/* A verified name (ASCII letters, digits, _) in lower case, NUL-ended. */
static char *lower_dup(const char *p, size_t len)
{
    char *k = mem_strndup(p, len);
    for (size_t i = 0; i < len; i++)
        if (k[i] >= 'A' && k[i] <= 'Z') k[i] = (char)(k[i] + 32);
    return k;
}

/* A name to look up by: lower case into buf, or NULL if it cannot be a
 * valid name (and so is in no registry). */
static const char *lookup_key(char *buf, size_t cap, const char *p, size_t len)
{
    if (len >= cap || !name_ok(p, len)) return NULL;
    for (size_t i = 0; i < len; i++) buf[i] = (p[i] >= 'A' && p[i] <= 'Z') ? (char)(p[i] + 32) : p[i];
    return buf;
}

function *function_lookup(server *s, const char *name, size_t len)
{
    char buf[256];
    if (len >= sizeof(buf)) {   /* a long name: rare, so a copy of its own */
        char *k = name_ok(name, len) ? lower_dup(name, len) : NULL;
        function *fn = k ? (function *)store_dict_find(&s->scripts->functions, k, len) : NULL;
        free(k);
        return fn;
    }
    const char *k = lookup_key(buf, sizeof(buf), name, len);
    return k ? (function *)store_dict_find(&s->scripts->functions, k, len) : NULL;
}

/* Library names, unlike function names, are case-sensitive in Redis. */
function_lib *function_lib_lookup(server *s, const char *name, size_t len)
{
    return (function_lib *)store_dict_find(&s->scripts->libs, name, len);
}

int function_lib_add(function_lib *lib, const char *name, size_t len, const char *desc,
                     size_t desclen, int flags, int lua_ref, char *err, size_t errlen)
{
    if (!name_ok(name, len) || strlen(name) != len) {
        snprintf(err, errlen, "%s", LIB_NAME_ERR);
        return -1;
    }
    function **tail = &lib->fns;
    for (; *tail; tail = &(*tail)->next) {
        if (strcmp((*tail)->name, name) == 0) {   /* case-sensitive here, as Redis */
            snprintf(err, errlen, "Function already exists in the library");
            return -1;
        }
    }
    function *fn = mem_calloc(1, sizeof(*fn));
    fn->key = lower_dup(name, len);
    fn->node.keylen = (uint32_t)len;
    fn->name = mem_strndup(name, len);
    fn->desc = desc ? mem_strndup(desc, desclen) : NULL;
    fn->flags = flags;
    fn->lua_ref = lua_ref;
    fn->lib = lib;
    *tail = fn;
    lib->nfns++;
    return 0;
}

static void lib_free(server *s, function_lib *lib)
{
    for (function *fn = lib->fns, *next; fn; fn = next) {
        next = fn->next;
        script_engine_forget_function(s->scripts->lua, fn);
        free(fn->key);
        free(fn->name);
        free(fn->desc);
        free(fn);
    }
    free(lib->name);
    free(lib->code);
    free(lib);
}

/* A library's "f" and "F" are two functions to Redis but one FCALL name:
 * only the first is reachable (Redis's dictAdd of the second fails too). */
static void lib_link(server *s, function_lib *lib)
{
    store_dict_insert(&s->scripts->libs, &lib->node);
    for (function *fn = lib->fns; fn; fn = fn->next) {
        fn->linked = !store_dict_find(&s->scripts->functions, fn->key, fn->node.keylen);
        if (fn->linked) store_dict_insert(&s->scripts->functions, &fn->node);
    }
}

static void lib_unlink(server *s, function_lib *lib)
{
    store_dict_unlink(&s->scripts->libs, &lib->node);
    for (function *fn = lib->fns; fn; fn = fn->next)
        if (fn->linked) store_dict_unlink(&s->scripts->functions, &fn->node);
}


void function_lib_delete(server *s, function_lib *lib)
{
    lib_unlink(s, lib);
    lib_free(s, lib);
}

static void collect_lib(store_dict_node *n, void *ctx)
{
    function_lib ***at = ctx;
    *(*at)++ = (function_lib *)n;
}

/* Every library, in an array the caller frees (the dict is not changed
 * while it is walked). */
static function_lib **all_libs(server *s, size_t *n)
{
    *n = store_dict_size(&s->scripts->libs);
    function_lib **v = mem_alloc((*n ? *n : 1) * sizeof(*v)), **at = v;
    store_dict_foreach(&s->scripts->libs, collect_lib, &at);
    return v;
}

size_t functions_count(server *s)
{
    size_t n, total = 0;
    function_lib **v = all_libs(s, &n);
    for (size_t i = 0; i < n; i++) total += v[i]->nfns;
    free(v);
    return total;
}

static void add_lib_memory(store_dict_node *n, void *ctx)
{
    const function_lib *lib = (const function_lib *)n;
    size_t *sum = ctx;
    *sum += sizeof(*lib) + strlen(lib->name) + 1 + lib->code_len + 1;
    for (const function *fn = lib->fns; fn; fn = fn->next)
        *sum += sizeof(*fn) + 2 * (fn->node.keylen + 1) + (fn->desc ? strlen(fn->desc) + 1 : 0);
}

size_t functions_memory(server *s)
{
    size_t sum = store_dict_mem(&s->scripts->libs) + store_dict_mem(&s->scripts->functions);
    store_dict_foreach(&s->scripts->libs, add_lib_memory, &sum);
    return sum;
}

void functions_flush(server *s)
{
    size_t n;
    function_lib **v = all_libs(s, &n);
    for (size_t i = 0; i < n; i++) function_lib_delete(s, v[i]);
    free(v);
}

void functions_free(server *s)
{
    functions_flush(s);
    store_dict_clear(&s->scripts->libs, NULL, NULL);
    store_dict_clear(&s->scripts->functions, NULL, NULL);
}

/* One word of the shebang line as sdssplitargs reads it (quotes and
 * escapes), appended to out; *pp advanced. 1, 0 at the end, -1 if the
 * quoting is unbalanced. */
static int split_word(const char **pp, const char *end, char *out, size_t cap, size_t *outlen)
{
    const char *p = *pp;
    size_t n = 0;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f')) p++;
    if (p == end) return 0;
    int inq = 0, insq = 0;
    for (;;) {
        char ch;
        if (inq) {
            if (p == end) return -1;
            if (*p == '\\' && p + 1 < end) {
                p++;
                switch (*p) {
                case 'n': ch = '\n'; break;
                case 'r': ch = '\r'; break;
                case 't': ch = '\t'; break;
                case 'b': ch = '\b'; break;
                case 'a': ch = '\a'; break;
                default: ch = *p; break;
                }
            } else if (*p == '"') {
                if (p + 1 < end && !(p[1] == ' ' || p[1] == '\t' || p[1] == '\r' || p[1] == '\v' || p[1] == '\f'))
                    return -1;
                inq = 0;
                p++;
                continue;
            } else {
                ch = *p;
            }
        } else if (insq) {
            if (p == end) return -1;
            if (*p == '\\' && p + 1 < end && p[1] == '\'') {
                p++;
                ch = '\'';
            } else if (*p == '\'') {
                if (p + 1 < end && !(p[1] == ' ' || p[1] == '\t' || p[1] == '\r' || p[1] == '\v' || p[1] == '\f'))
                    return -1;
                insq = 0;
                p++;
                continue;
            } else {
                ch = *p;
            }
        } else {
            if (p == end || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f') break;
            if (*p == '"') { inq = 1; p++; continue; }
            if (*p == '\'') { insq = 1; p++; continue; }
            ch = *p;
        }
        if (n + 1 < cap) out[n++] = ch;
        p++;
    }
    out[n] = '\0';
    *outlen = n;
    *pp = p;
    return 1;
}

typedef struct lib_meta {
    char engine[1024];
    char name[1024];   /* split_word keeps 1023 bytes of a word */
    size_t name_len;
    size_t body_off;   /* where the code after the shebang line starts (its '\n') */
} lib_meta;

/* functionExtractLibMetaData: "#!<engine> name=<lib>" and nothing else. */
static int parse_meta(const char *code, size_t len, lib_meta *md, char *err, size_t errlen)
{
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errlen, "Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    /* Redis reads the payload as a C string: a NUL ends it */
    const char *nul = memchr(code, '\0', len);
    if (!nl || (nul && nul < nl)) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    const char *p = code, *end = nl;
    char word[1024];
    size_t wlen;
    int rc = split_word(&p, end, word, sizeof(word), &wlen);
    if (rc <= 0) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    snprintf(md->engine, sizeof(md->engine), "%s", wlen >= 2 ? word + 2 : "");
    int have_name = 0;
    while ((rc = split_word(&p, end, word, sizeof(word), &wlen)) > 0) {
        if (strncasecmp(word, "name=", 5) == 0) {
            if (have_name) {
                snprintf(err, errlen, "Invalid metadata value, name argument was given multiple times");
                return -1;
            }
            have_name = 1;
            md->name_len = strlen(word + 5);
            if (md->name_len >= sizeof(md->name)) md->name_len = sizeof(md->name) - 1;
            memcpy(md->name, word + 5, md->name_len);
            md->name[md->name_len] = '\0';
            continue;
        }
        snprintf(err, errlen, "Invalid metadata value given: %s", word);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    if (!have_name) {
        snprintf(err, errlen, "Library name was not given");
        return -1;
    }
    md->body_off = (size_t)(nl - code);
    return 0;
}

/* functionsCreateWithLibraryCtx on the live registry: the new library is
 * built aside and linked only when it is whole; a failed REPLACE puts the
 * old one back. */
const char *function_load(server *s, const char *code, size_t len, int replace,
                          char *err, size_t errlen)
{
    lib_meta md;
    if (parse_meta(code, len, &md, err, errlen) != 0) return NULL;
    if (!name_ok(md.name, md.name_len)) {
        snprintf(err, errlen, "%s", LIB_NAME_ERR);
        return NULL;
    }
    if (strcasecmp(md.engine, "lua") != 0) {
        snprintf(err, errlen, "Engine '%s' not found", md.engine);
        return NULL;
    }
    function_lib *old = function_lib_lookup(s, md.name, md.name_len);
    if (old && !replace) {
        snprintf(err, errlen, "Library '%s' already exists", md.name);
        return NULL;
    }
    if (old) lib_unlink(s, old);
    function_lib *lib = mem_calloc(1, sizeof(*lib));
    lib->node.keylen = (uint32_t)md.name_len;
    lib->name = mem_strndup(md.name, md.name_len);
    lib->code = mem_alloc(len + 1);
    memcpy(lib->code, code, len);
    lib->code[len] = '\0';
    lib->code_len = len;
    const function *clash = NULL;
    int rc = script_engine_load_library(s->scripts->lua, lib, code + md.body_off,
                                        len - md.body_off, err, errlen);
    if (rc == 0 && lib->nfns == 0) {
        snprintf(err, errlen, "No functions registered");
        rc = -1;
    }
    for (const function *fn = lib->fns; rc == 0 && fn; fn = fn->next) {
        if (store_dict_find(&s->scripts->functions, fn->key, fn->node.keylen)) {
            clash = fn;
            snprintf(err, errlen, "Function %s already exists", clash->name);
            rc = -1;
        }
    }
    if (rc != 0) {
        lib_free(s, lib);
        if (old) lib_link(s, old);
        return NULL;
    }
    lib_link(s, lib);
    if (old) lib_free(s, old);
    return lib->name;
}

persist_pstr *functions_codes(server *s, size_t *n)
{
    function_lib **v = all_libs(s, n);
    persist_pstr *codes = mem_alloc((*n ? *n : 1) * sizeof(*codes));
    for (size_t i = 0; i < *n; i++) codes[i] = (persist_pstr){v[i]->code, v[i]->code_len};
    free(v);
    return codes;
}

void functions_dump(server *s, int rdbcompression, unsigned char **out, size_t *outlen)
{
    size_t n;
    persist_pstr *codes = functions_codes(s, &n);
    persist_buf b = {0};
    persist_functions_dump(codes, n, rdbcompression, &b);
    free(codes);
    *out = b.p;
    *outlen = b.len;
}

/* Moves every library of the registry into a fresh array (unlinked). */
static function_lib **take_all(server *s, size_t *n)
{
    function_lib **v = all_libs(s, n);
    for (size_t i = 0; i < *n; i++) lib_unlink(s, v[i]);
    return v;
}

static void put_back(server *s, function_lib **v, size_t n)
{
    for (size_t i = 0; i < n; i++) lib_link(s, v[i]);
    free(v);
}

static void free_all(server *s, function_lib **v, size_t n)
{
    for (size_t i = 0; i < n; i++) lib_free(s, v[i]);
    free(v);
}

/* FUNCTION RESTORE as Redis does it: every library of the payload is
 * loaded into an empty registry first (the current one set aside), then
 * joined to the current one by the policy, or the current one restored. */
int functions_restore(server *s, const unsigned char *p, size_t len, int policy,
                      char *err, size_t errlen)
{
    if (persist_payload_check(p, len) != PERSIST_OK) {
        snprintf(err, errlen, "DUMP payload version or checksum are wrong");
        return -1;
    }
    persist_value *codes;
    int rc = persist_functions_decode(p, len, &codes);
    if (rc != PERSIST_OK) {
        snprintf(err, errlen, "%s", rc == PERSIST_ERR_NOT_FUNCTION ? "given type is not a function"
                                                                    : "can not read data type");
        return -1;
    }
    size_t ncur;
    function_lib **cur = take_all(s, &ncur);
    rc = 0;
    for (size_t i = 0; rc == 0 && i < persist_value_count(codes); i++) {
        const char *code;
        size_t clen;
        persist_value_item(codes, i, &code, &clen);
        if (!function_load(s, code, clen, 0, err, errlen)) rc = -1;
    }
    persist_value_free(codes);
    size_t nnew;
    function_lib **fresh = take_all(s, &nnew);
    if (rc != 0) {
        free_all(s, fresh, nnew);
        put_back(s, cur, ncur);
        return -1;
    }
    if (policy == 'f') {
        free_all(s, cur, ncur);
        put_back(s, fresh, nnew);
        return 0;
    }
    put_back(s, cur, ncur);
    /* libraryJoin: library collisions first (APPEND refuses, REPLACE sets
     * the old aside), then function collisions refuse the whole join. */
    function_lib **replaced = mem_alloc((nnew ? nnew : 1) * sizeof(*replaced));
    size_t nrep = 0;
    for (size_t i = 0; rc == 0 && i < nnew; i++) {
        function_lib *old = function_lib_lookup(s, fresh[i]->name, strlen(fresh[i]->name));
        if (!old) continue;
        if (policy != 'r') {
            snprintf(err, errlen, "Library %s already exists", fresh[i]->name);
            rc = -1;
        } else {
            lib_unlink(s, old);
            replaced[nrep++] = old;
        }
    }
    for (size_t i = 0; rc == 0 && i < nnew; i++) {
        for (const function *fn = fresh[i]->fns; rc == 0 && fn; fn = fn->next) {
            if (store_dict_find(&s->scripts->functions, fn->key, fn->node.keylen)) {
                snprintf(err, errlen, "Function %s already exists", fn->name);
                rc = -1;
            }
        }
    }
    if (rc != 0) {
        put_back(s, replaced, nrep);
        free_all(s, fresh, nnew);
        return -1;
    }
    free_all(s, replaced, nrep);
    put_back(s, fresh, nnew);
    return 0;
}
