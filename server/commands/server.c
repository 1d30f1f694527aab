/* server.c - server commands: CONFIG, COMMAND, TIME, DBSIZE, FLUSHALL,
 * FUNCTION, WAIT, LASTSAVE, SHUTDOWN (INFO lives in info.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl.h"
#include "commands.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "scripting/script.h"
#include "tls.h"
#include "mem.h"
#include "num.h"

#define W CMD_WRITE
#define NS CMD_NOSCRIPT
#define L CMD_LOADING
#define S CMD_STALE
#define A CMD_ADMIN

/* ---- CONFIG ---- */

typedef struct config_reply {
    client *c;
    long long count;
    const char **seen;            /* names matched so far, each once */
    const resp_slice *as_given;   /* a plain name is echoed as the client typed it */
} config_reply;

static void config_count(const char *name, const char *value, size_t vlen, void *ctx)
{
    config_reply *r = ctx;
    (void)value;
    (void)vlen;
    for (long long i = 0; i < r->count; i++)
        if (r->seen[i] == name) return;
    r->seen[r->count++] = name;
}

static void config_emit(const char *name, const char *value, size_t vlen, void *ctx)
{
    config_reply *r = ctx;
    for (long long i = 0; i < r->count; i++) {
        if (r->seen[i] != name) continue;
        r->seen[i] = NULL;   /* emit each parameter once across patterns */
        if (r->as_given) reply_bulk(r->c, r->as_given->ptr, r->as_given->len);
        else reply_bulk_cstr(r->c, name);
        reply_bulk(r->c, value, vlen);
    }
}

static void config_get_cmd(client *c)
{
    config_reply r = {.c = c, .seen = mem_alloc(config_name_count() * sizeof(*r.seen))};
    for (int i = 2; i < c->argc; i++)
        config_get(&c->srv->cfg, c->argv[i].ptr, c->argv[i].len, config_count, &r);
    reply_map(c, r.count);
    for (int i = 2; i < c->argc; i++) {
        const resp_slice *pat = &c->argv[i];
        r.as_given = memchr(pat->ptr, '*', pat->len) || memchr(pat->ptr, '?', pat->len) ||
                             memchr(pat->ptr, '[', pat->len) ? NULL : pat;
        config_get(&c->srv->cfg, pat->ptr, pat->len, config_emit, &r);
    }
    free(r.seen);
}

static int listeners_changed(const latchd_config *a, const latchd_config *b)
{
    if (a->port != b->port || a->tls_port != b->tls_port || a->nbind != b->nbind) return 1;
    for (int i = 0; i < a->nbind; i++)
        if (strcmp(a->bind[i], b->bind[i]) != 0) return 1;
    return 0;
}

static int differ(const char *a, const char *b) { return strcmp(a, b) != 0; }

/* A parameter Redis's applyTlsCfg follows changed: the context is made
 * again (tls-auth-clients applies to the next connections by itself). */
static int tls_context_changed(const latchd_config *a, const latchd_config *b)
{
    return differ(a->tls_cert_file, b->tls_cert_file) || differ(a->tls_key_file, b->tls_key_file) ||
           differ(a->tls_key_file_pass, b->tls_key_file_pass) ||
           differ(a->tls_client_cert_file, b->tls_client_cert_file) ||
           differ(a->tls_client_key_file, b->tls_client_key_file) ||
           differ(a->tls_client_key_file_pass, b->tls_client_key_file_pass) ||
           differ(a->tls_dh_params_file, b->tls_dh_params_file) || differ(a->tls_ca_cert_file, b->tls_ca_cert_file) ||
           differ(a->tls_ca_cert_dir, b->tls_ca_cert_dir) || differ(a->tls_protocols, b->tls_protocols) ||
           differ(a->tls_ciphers, b->tls_ciphers) || differ(a->tls_ciphersuites, b->tls_ciphersuites) ||
           a->tls_prefer_server_ciphers != b->tls_prefer_server_ciphers ||
           a->tls_session_caching != b->tls_session_caching ||
           a->tls_session_cache_size != b->tls_session_cache_size ||
           a->tls_session_cache_timeout != b->tls_session_cache_timeout;
}

/* The first tls-* name c's CONFIG SET gave (the one Redis's error names),
 * lower-cased into name. */
static const char *first_tls_arg(client *c, char name[64], const char *fallback)
{
    for (int i = 2; i + 1 < c->argc; i += 2) {
        const resp_slice *a = &c->argv[i];
        if (a->len < 64 && a->len > 4 && !strncasecmp(a->ptr, "tls-", 4) &&
            (a->len != 8 || strncasecmp(a->ptr, "tls-port", 8))) {
            memcpy(name, a->ptr, a->len);
            name[a->len] = '\0';
            for (size_t k = 0; k < a->len; k++) name[k] = (char)tolower((unsigned char)name[k]);
            return name;
        }
    }
    return fallback;
}

/* Redis's applyTlsCfg and applyTLSPort's first half: 0, or the error
 * replied. */
static int tls_take_effect(client *c, const latchd_config *old)
{
    server *s = c->srv;
    int port_set = s->cfg.tls_port != old->tls_port && s->cfg.tls_port;
    if (!(port_set && !tls_configured(s)) && !(s->cfg.tls_port && tls_context_changed(&s->cfg, old))) return 0;
    if (tls_configure(s) == 0) return 0;
    char name[64];
    reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS "
                    "configuration. Check server logs.", first_tls_arg(c, name, "tls-port"));
    return -1;
}

/* What has to follow a changed configuration (old: the one before), and
 * may fail: 0 ok, else the error is replied and the caller puts old back. */
static int config_take_effect(client *c, const latchd_config *old)
{
    server *s = c->srv;
    if (tls_take_effect(c, old) != 0) return -1;
    if (s->cfg.maxclients != old->maxclients && server_fit_maxclients(s) != 0) {
        reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating "
                        "system is not able to handle the specified number of clients, try with %lld",
                     s->cfg.maxclients);
        return -1;
    }
    if (listeners_changed(&s->cfg, old) && server_rebind(s) != 0) {
        if (s->cfg.port != old->port || s->cfg.tls_port != old->tls_port)
            reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - Unable to listen on "
                            "this port. Check server logs.", s->cfg.port != old->port ? "port" : "tls-port");
        else
            reply_error(c, "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to "
                           "specified addresses.");
        return -1;
    }
    if (server_oom_changed(&s->cfg, old) && server_oom_apply(s) != 0) {
        reply_error(c, "ERR CONFIG SET failed (possibly related to argument 'oom-score-adj') - Failed to set "
                       "current oom_score_adj. Check server logs.");
        return -1;
    }
    if (s->cfg.appendonly != old->appendonly && aof_set_enabled(s, s->cfg.appendonly) != 0) {
        reply_error(c, "ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. "
                       "Check server logs.");
        return -1;
    }
    /* a lower maxmemory evicts at once (Redis's updateMaxmemory) */
    if (s->cfg.maxmemory > 0 && s->cfg.maxmemory != old->maxmemory) evict_to_maxmemory(s);
    server_idle_timer_update(s);
    rdb_save_points_update(s);
    server_env_sync(s);
    /* requirepass is the default user's password (Redis's updateRequirePass) */
    if (s->cfg.requirepass.len != old->requirepass.len ||
        memcmp(s->cfg.requirepass.s, old->requirepass.s, old->requirepass.len) != 0)
        acl_set_requirepass(s, s->cfg.requirepass.s, s->cfg.requirepass.len);
    return 0;
}

/* Redis 7.0's CONFIG SET: every pair checked and set on a copy, which
 * replaces the configuration only when all of it took. */
static void config_set_cmd(client *c)
{
    if (c->argc % 2 != 0) {
        reply_syntax_error(c);
        return;
    }
    server *s = c->srv;
    int n = c->argc - 2, prot = config_protected_configs(&s->cfg);
    char **argv = mem_alloc((size_t)n * sizeof(*argv)), err[1024];
    size_t *lens = mem_alloc((size_t)n * sizeof(*lens));
    for (int i = 0; i < n; i++) {
        argv[i] = arg_strdup(&c->argv[i + 2]);
        lens[i] = c->argv[i + 2].len;
    }
    int protected_ok = prot == CONFIG_PROTECTED_YES || (prot == CONFIG_PROTECTED_LOCAL && client_is_local(c));
    latchd_config next, old;
    if (config_set_pairs(&s->cfg, &next, (const char *const *)argv, lens, n / 2, protected_ok, err, sizeof(err)) !=
        0) {
        reply_errorf(c, "ERR %s", err);
    } else {
        old = s->cfg;
        s->cfg = next;
        if (config_take_effect(c, &old) == 0) {
            config_free(&old);
            reply_ok(c);
        } else {
            int rebind = listeners_changed(&s->cfg, &old), oom = server_oom_changed(&s->cfg, &old);
            config_free(&s->cfg);
            s->cfg = old;
            if (rebind && server_rebind(s) != 0)
                log_msg(s, LOG_WARNING, "Failed to restore the previous listening sockets");
            if (oom) server_oom_apply(s);   /* logged if it fails */
            if (s->cfg.tls_port && tls_context_changed(&s->cfg, &old)) tls_configure(s);   /* the old context back */
            server_idle_timer_update(s);
            rdb_save_points_update(s);
        }
    }
    for (int i = 0; i < n; i++) free(argv[i]);
    free(argv);
    free(lens);
}

static void config_resetstat(client *c)
{
    server_reset_stats(c->srv);
    reply_ok(c);
}

static void config_rewrite(client *c)
{
    char err[1024];
    char *users = c->srv->cfg.aclfile[0] ? NULL : acl_users_text(c->srv);
    int rc = config_rewrite_file(&c->srv->cfg, users, err, sizeof(err));
    free(users);
    if (rc != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    log_msg(c->srv, LOG_NOTICE, "CONFIG REWRITE executed with success.");
    reply_ok(c);
}

static void config_help(client *c)
{
    static const char *const lines[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

const command config_subcommands[] = {
    {"get", config_get_cmd, -3, A | NS | L | S, 0, 0, 0, "server", "2.0.0", "Get the values of configuration parameters", "parameter [parameter ...]", NULL},
    {"set", config_set_cmd, -4, A | NS | L | S, 0, 0, 0, "server", "2.0.0", "Set configuration parameters to the given values", "parameter value [parameter value ...]", NULL},
    {"resetstat", config_resetstat, 2, A | NS | L | S, 0, 0, 0, "server", "2.0.0", "Reset the stats returned by INFO", NULL, NULL},
    {"rewrite", config_rewrite, 2, A | NS | L | S, 0, 0, 0, "server", "2.8.0", "Rewrite the configuration file with the in memory configuration", NULL, NULL},
    {"help", config_help, 2, L | S, 0, 0, 0, "server", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_config(client *c)
{
    subcommand_dispatch(c);
}

/* ---- COMMAND ---- */

/* latchd's own commands' flags, in Redis's order (addCommandFlags);
 * Redis's commands show Redis's own (meta_table.c). */
static void reply_flags(client *c, const command *cmd)
{
    static const struct { unsigned flag; const char *name; } names[] = {
        {CMD_WRITE, "write"}, {CMD_READONLY, "readonly"}, {CMD_DENYOOM, "denyoom"}, {CMD_ADMIN, "admin"},
        {CMD_PUBSUB, "pubsub"}, {CMD_NOSCRIPT, "noscript"}, {CMD_BLOCKING, "blocking"}, {CMD_LOADING, "loading"}, {CMD_STALE, "stale"},
        {CMD_SKIP_SLOWLOG, "skip_slowlog"}, {CMD_FAST, "fast"}, {CMD_NOAUTH, "no_auth"}, {CMD_NO_MULTI, "no_multi"},
        {CMD_MOVABLE_KEYS, "movablekeys"}, {CMD_ALLOW_BUSY, "allow_busy"},
    };
    long long n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) n += (cmd->flags & names[i].flag) != 0;
    reply_set(c, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (cmd->flags & names[i].flag) reply_status(c, names[i].name);
}

/* addReplyCommandCategories: "@read" ... in Redis's category order. */
static void reply_categories(client *c, const command *cmd)
{
    const acl_cmd *e = acl_command_of(cmd);
    unsigned cats = e ? e->categories : 0;
    reply_set(c, __builtin_popcount(cats));
    for (int j = 0; j < ACL_CAT_COUNT; j++)
        if (cats & (1u << j)) {
            char name[32];
            snprintf(name, sizeof(name), "@%s", acl_category_names[j]);
            reply_status(c, name);
        }
}

static long long count_subs(const command *cmd)
{
    long long n = 0;
    for (const command *sub = cmd->subs; sub && sub->name; sub++) n++;
    return n;
}

/* The Redis 7 COMMAND INFO entry: name, arity, flags, first/last/step,
 * ACL categories, tips, key specs, subcommands (each an entry itself). */
static void reply_command_info(client *c, const command *cmd, const command *container)
{
    char name[64];
    command_fullname(container, cmd, name, sizeof(name));
    reply_array(c, 10);
    reply_bulk_cstr(c, name);
    reply_int(c, cmd->arity);
    const command_meta *meta = command_meta_of(name);
    if (meta) reply_resp3(c, meta->flags, meta->flags_len);
    else reply_flags(c, cmd);
    reply_int(c, cmd->first_key);
    reply_int(c, cmd->last_key);
    reply_int(c, cmd->key_step);
    reply_categories(c, cmd);
    if (meta) {
        reply_resp3(c, meta->tips, meta->tips_len);
        reply_resp3(c, meta->key_specs, meta->key_specs_len);
    } else {
        reply_set(c, 0);
        reply_array(c, 0);
    }
    long long nsubs = count_subs(cmd);
    if (nsubs) reply_array(c, nsubs);
    else reply_set(c, 0);   /* addReplyCommandSubCommands: a set when empty */
    for (const command *sub = cmd->subs; sub && sub->name; sub++) reply_command_info(c, sub, cmd);
}

/* "get" or "client|setname"; *container is set for a subcommand. */
static const command *lookup_path(const resp_slice *a, const command **container)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    *container = NULL;
    if (!bar) return command_lookup(a->ptr, a->len);
    const command *parent = command_lookup(a->ptr, (size_t)(bar - a->ptr));
    if (!parent || !parent->subs) return NULL;
    *container = parent;
    return subcommand_lookup(parent, bar + 1, a->len - (size_t)(bar - a->ptr) - 1);
}

static void command_all(client *c)
{
    reply_array(c, (long long)command_count());
    for (size_t i = 0; i < command_count(); i++) reply_command_info(c, command_at(i), NULL);
}

static void command_count_cmd(client *c) { reply_int(c, (long long)command_count()); }

static void command_info(client *c)
{
    if (c->argc == 2) {
        command_all(c);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const command *container, *cmd = lookup_path(&c->argv[i], &container);
        if (cmd) reply_command_info(c, cmd, container);
        else reply_null(c);
    }
}

static void command_docs(client *c)
{
    const command *container, *cmd;
    if (c->argc == 2) {
        reply_map(c, (long long)command_count());
        for (size_t i = 0; i < command_count(); i++) command_doc_reply(c, command_at(i), NULL);
        return;
    }
    long long found = 0;
    for (int i = 2; i < c->argc; i++) found += lookup_path(&c->argv[i], &container) != NULL;
    reply_map(c, found);
    for (int i = 2; i < c->argc; i++)
        if ((cmd = lookup_path(&c->argv[i], &container))) command_doc_reply(c, cmd, container);
}

/* COMMAND LIST's FILTERBY: a PATTERN (glob, any case) on the full name,
 * an ACLCAT category (an unknown one matches nothing), or nothing at all
 * for MODULE: latchd has no modules. */
typedef struct {
    const resp_slice *pattern;
    unsigned acl_cat;
    int match_none;
} list_filter;

static int list_filter_match(const list_filter *f, const command *cmd, const char *name)
{
    if (f->match_none) return 0;
    if (f->acl_cat) return (acl_command_of(cmd)->categories & f->acl_cat) != 0;
    return !f->pattern || glob_match(f->pattern->ptr, f->pattern->len, name, strlen(name), 1);
}

static long long list_name(client *c, const list_filter *f, const command *cmd, const char *name, int emit)
{
    if (!list_filter_match(f, cmd, name)) return 0;
    if (emit) reply_bulk_cstr(c, name);
    return 1;
}

/* Counts the commands and subcommands ("client|list") that pass, and
 * replies with their names when emit is set (the array length comes first). */
static long long command_list_walk(client *c, const list_filter *f, int emit)
{
    char name[64];
    long long n = 0;
    for (size_t i = 0; i < command_count(); i++) {
        const command *cmd = command_at(i);
        n += list_name(c, f, cmd, cmd->name, emit);
        for (const command *sub = cmd->subs; sub && sub->name; sub++) {
            command_fullname(cmd, sub, name, sizeof(name));
            n += list_name(c, f, sub, name, emit);
        }
    }
    return n;
}

static void command_list(client *c)
{
    list_filter f = {NULL, 0, 0};
    if (c->argc != 2) {
        if (c->argc != 5 || !arg_is(&c->argv[2], "FILTERBY")) {
            reply_syntax_error(c);
            return;
        }
        if (arg_is(&c->argv[3], "PATTERN")) {
            f.pattern = &c->argv[4];
        } else if (arg_is(&c->argv[3], "ACLCAT")) {
            f.acl_cat = acl_category_flag(c->argv[4].ptr, c->argv[4].len);
            f.match_none = !f.acl_cat;
        } else if (arg_is(&c->argv[3], "MODULE")) {
            f.match_none = 1;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    reply_array(c, command_list_walk(c, &f, 0));
    command_list_walk(c, &f, 1);
}

/* A count argument of a movable-keys command: keys follow it. */
static int numkeys_at(const resp_slice *argv, int argc, int at, long long *n)
{
    char buf[32];
    if (at >= argc || argv[at].len == 0 || argv[at].len >= sizeof(buf)) return 0;
    memcpy(buf, argv[at].ptr, argv[at].len);
    buf[argv[at].len] = '\0';
    char *end;
    *n = strtoll(buf, &end, 10);
    return *end == '\0' && *n >= 0 && *n <= argc - at - 1;
}

/* The argument positions of cmd's keys in argv (argv[0] the name), into
 * keys (room for argc); -1 when the arguments do not say (a bad numkeys).
 * Fixed positions come from the table, the movable ones as Redis finds them. */
static int command_keys(const command *cmd, const resp_slice *argv, int argc, int *keys)
{
    int n = 0;
    long long nk;
    const char *name = cmd->name;
    if (!strcmp(name, "eval") || !strcmp(name, "evalsha") || !strcmp(name, "eval_ro") || !strcmp(name, "evalsha_ro") ||
        !strcmp(name, "fcall") || !strcmp(name, "fcall_ro")) {
        if (!numkeys_at(argv, argc, 2, &nk)) return -1;
        for (int i = 0; i < nk; i++) keys[n++] = 3 + i;
        return n;
    }
    if (!strcmp(name, "zunionstore") || !strcmp(name, "zinterstore") || !strcmp(name, "zdiffstore")) {
        if (!numkeys_at(argv, argc, 2, &nk) || nk == 0) return -1;
        keys[n++] = 1;
        for (int i = 0; i < nk; i++) keys[n++] = 3 + i;
        return n;
    }
    if (cmd->proc == cmd_xread || cmd->proc == cmd_xreadgroup) {
        int first, nstreams = stream_xread_keys(argv, argc, &first);
        for (int i = 0; i < nstreams; i++) keys[n++] = first + i;
        return nstreams ? n : -1;
    }
    if (cmd->flags & CMD_MOVABLE_KEYS && cmd->first_key == 0) {   /* numkeys first: ZUNION, LMPOP, SINTERCARD */
        if (!numkeys_at(argv, argc, 1, &nk) || nk == 0) return -1;
        for (int i = 0; i < nk; i++) keys[n++] = 2 + i;
        return n;
    }
    if (!strcmp(name, "sort") || !strcmp(name, "sort_ro")) {
        int dest = 0;   /* only the last STORE counts, as SORT itself takes it */
        keys[n++] = 1;
        for (int i = 2; i < argc; i++) {
            if (arg_is(&argv[i], "limit")) i += 2;
            else if ((arg_is(&argv[i], "by") || arg_is(&argv[i], "get"))) i++;
            else if (arg_is(&argv[i], "store") && i + 1 < argc && !strcmp(name, "sort")) dest = i + 1;
        }
        if (dest) keys[n++] = dest;
        return n;
    }
    if (cmd->first_key <= 0) return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    for (int i = cmd->first_key; i <= last && i < argc; i += cmd->key_step) keys[n++] = i;
    return n;
}

static int command_has_keys(const command *cmd) { return cmd->first_key > 0 || (cmd->flags & CMD_MOVABLE_KEYS); }

/* The command GETKEYS and GETKEYSANDFLAGS name (a container's
 * subcommand), or NULL after Redis's error. */
static const command *getkeys_target(client *c)
{
    const command *cmd = command_lookup(c->argv[2].ptr, c->argv[2].len);
    int argc = c->argc - 2;
    if (cmd && (cmd->flags & CMD_CONTAINER) && argc >= 2) cmd = subcommand_lookup(cmd, c->argv[3].ptr, c->argv[3].len);
    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
    } else if (!command_has_keys(cmd)) {
        reply_error(c, "ERR The command has no key arguments");
    } else if (!command_arity_ok(cmd, argc)) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
    } else {
        return cmd;
    }
    return NULL;
}

/* Redis's CMD_NO_MANDATORY_KEYS: scripts may name no key */
static int no_mandatory_keys(const command *cmd)
{
    return !strncmp(cmd->name, "eval", 4) || !strncmp(cmd->name, "fcall", 5);
}

/* COMMAND GETKEYS <command> [arg ...], with Redis's errors. */
static void command_getkeys(client *c)
{
    const command *cmd = getkeys_target(c);
    if (!cmd) return;
    const resp_slice *argv = &c->argv[2];
    int argc = c->argc - 2;
    int *keys = mem_alloc(sizeof(int) * (size_t)argc);
    int n = command_keys(cmd, argv, argc, keys);
    if (n <= 0 && !(n == 0 && no_mandatory_keys(cmd))) {
        reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        reply_array(c, n);
        for (int i = 0; i < n; i++) reply_bulk(c, argv[keys[i]].ptr, argv[keys[i]].len);
    }
    free(keys);
}

/* addReplyFlagsForKeyArgs: a key spec's flags in Redis's order. */
static void reply_key_flags(client *c, unsigned ksflags)
{
    static const struct { unsigned flag; const char *name; } names[] = {
        {ACL_KS_RO, "RO"}, {ACL_KS_RW, "RW"}, {ACL_KS_OW, "OW"}, {ACL_KS_RM, "RM"},
        {ACL_KS_ACCESS, "access"}, {ACL_KS_UPDATE, "update"}, {ACL_KS_INSERT, "insert"},
        {ACL_KS_DELETE, "delete"}, {ACL_KS_NOT_KEY, "not_key"}, {ACL_KS_INCOMPLETE, "incomplete"},
        {ACL_KS_VARIABLE_FLAGS, "variable_flags"},
    };
    long long n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) n += (ksflags & names[i].flag) != 0;
    reply_set(c, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (ksflags & names[i].flag) reply_status(c, names[i].name);
}

static void count_key(int pos, unsigned ksflags, void *ctx)
{
    (void)pos, (void)ksflags;
    (*(long long *)ctx)++;
}

static void reply_key_and_flags(int pos, unsigned ksflags, void *ctx)
{
    client *c = ctx;
    reply_array(c, 2);
    reply_bulk(c, c->argv[2 + pos].ptr, c->argv[2 + pos].len);
    reply_key_flags(c, ksflags);
}

/* COMMAND GETKEYSANDFLAGS <command> [arg ...]: the keys as the key specs
 * (or the command's own rule) find them, each with its flags. */
static void command_getkeysandflags(client *c)
{
    const command *cmd = getkeys_target(c);
    if (!cmd) return;
    long long n = 0;
    acl_command_keys_each(cmd, &c->argv[2], c->argc - 2, count_key, &n);
    if (n == 0 && !no_mandatory_keys(cmd)) {
        reply_error(c, "ERR Invalid arguments specified for command");
        return;
    }
    reply_array(c, n);
    acl_command_keys_each(cmd, &c->argv[2], c->argc - 2, reply_key_and_flags, c);
}

static void command_help(client *c)
{
    static const char *const lines[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

const command command_subcommands[] = {
    {"getkeys", command_getkeys, -4, L | S, 0, 0, 0, "server", "2.8.13", "Extract keys given a full Redis command", "command [arg [arg ...]]", NULL},
    {"getkeysandflags", command_getkeysandflags, -4, L | S, 0, 0, 0, "server", "7.0.0", "Extract keys and access flags given a full Redis command", "command [arg [arg ...]]", NULL},
    {"help", command_help, 2, L | S, 0, 0, 0, "server", "5.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"count", command_count_cmd, 2, L | S, 0, 0, 0, "server", "2.8.13", "Get total number of Redis commands", NULL, NULL},
    {"info", command_info, -2, L | S, 0, 0, 0, "server", "2.8.13", "Get array of specific Redis command details, or all when no argument is given.", "[command-name [command-name ...]]", NULL},
    {"docs", command_docs, -2, L | S, 0, 0, 0, "server", "7.0.0", "Get array of specific Redis command documentation", "[command-name [command-name ...]]", NULL},
    {"list", command_list, -2, L | S, 0, 0, 0, "server", "7.0.0", "Get an array of Redis command names",
     "[FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]", NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_command(client *c)
{
    if (c->argc == 1) command_all(c);
    else subcommand_dispatch(c);
}

/* ---- the rest ---- */

void cmd_time(client *c)
{
    uint64_t now_us = server_clock_us(c->srv);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)(now_us / 1000000u));
    reply_bulk_ll(c, (long long)(now_us % 1000000u));
}

void cmd_dbsize(client *c) { reply_int(c, (long long)store_size(client_db(c))); }

/* ASYNC and SYNC are the same thing for us: freeing is quick. */
static int flush_mode_ok(client *c, int first)
{
    if (c->argc == first) return 1;
    if (c->argc == first + 1 && (arg_is(&c->argv[first], "ASYNC") || arg_is(&c->argv[first], "SYNC"))) return 1;
    reply_syntax_error(c);
    return 0;
}

void cmd_flushdb(client *c)
{
    if (!flush_mode_ok(c, 1)) return;
    multi_db_touched(c->srv, c->db, -1);
    store_flush(client_db(c));
    block_db_flushed(c->srv, c->db);
    tracking_flushed(c->srv);
    reply_ok(c);
}

/* With save points set, Redis saves the empty dataset at once, so a
 * restart does not bring back what was flushed. */
void cmd_flushall(client *c)
{
    if (!flush_mode_ok(c, 1)) return;
    server_flush_all(c->srv);
    if (c->srv->cfg.save[0]) {
        rdb_wait_child(c->srv);
        rdb_save(c->srv);
    }
    c->srv->dirty++;
    reply_ok(c);
}

/* Redis's getIntFromObjectOrReply with a message: one error for any bad index. */
static int swapdb_index_or_reply(client *c, const resp_slice *a, const char *err, int *out)
{
    long long v;
    if (!store_str2ll(a->ptr, a->len, &v) || v < INT_MIN || v > INT_MAX) {
        reply_error(c, err);
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* Clients stay on their numbers and see the other contents. */
void cmd_swapdb(client *c)
{
    int a, b;
    if (!swapdb_index_or_reply(c, &c->argv[1], "ERR invalid first DB index", &a)) return;
    if (!swapdb_index_or_reply(c, &c->argv[2], "ERR invalid second DB index", &b)) return;
    if (a < 0 || a >= c->srv->ndbs || b < 0 || b >= c->srv->ndbs) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    if (a != b) {
        multi_db_touched(c->srv, a, b);
        multi_db_touched(c->srv, b, a);
        server_db_swap(c->srv, a, b);
    }
    reply_ok(c);
}

void cmd_wait(client *c)
{
    long long replicas, timeout;
    if (!arg_ll_or_reply(c, &c->argv[1], &replicas)) return;
    if (!block_ms_or_reply(c, &c->argv[2], &timeout)) return;
    /* No replica ever acknowledges: 0 at once when none is asked for (or
     * blocking is not allowed), else 0 once the timeout passes, as Redis
     * without replicas does. */
    if (replicas <= 0 || !block_allowed(c)) {
        reply_int(c, 0);
        return;
    }
    block_for_wait(c, timeout == 0 ? 0 : block_deadline_after(c->srv, (uint64_t)timeout));
}

/* LOLWUT [VERSION v]: 7.0's own version is one line. The computer art of
 * versions 5 and 6 (Schotter, skyscrapers) is not drawn: those get an
 * error saying so rather than a reply that only looks like Redis's. */
void cmd_lastsave(client *c) { reply_int(c, (long long)c->srv->lastsave_s); }

void cmd_save(client *c)
{
    if (c->srv->rdb_child) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (rdb_save(c->srv) == 0) reply_ok(c);
    else reply_error(c, "ERR");
}

/* Inside EXEC a fork would copy a half-done transaction: scheduled, as
 * Redis does. */
void cmd_bgsave(client *c)
{
    int schedule = 0;
    if (c->argc > 1) {
        if (c->argc != 2 || !arg_is(&c->argv[1], "SCHEDULE")) {
            reply_syntax_error(c);
            return;
        }
        schedule = 1;
    }
    server *s = c->srv;
    if (s->rdb_child) {
        if (schedule) {
            rdb_schedule_bgsave(s);
            reply_status(c, "Background saving scheduled");
        } else {
            reply_error(c, "ERR Background save already in progress");
        }
    } else if (c->mstate.executing || aof_rewriting(s)) {
        if (schedule || c->mstate.executing) {
            rdb_schedule_bgsave(s);
            reply_status(c, "Background saving scheduled");
        } else {
            reply_error(c, "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
                           "SCHEDULE in order to schedule a BGSAVE whenever possible.");
        }
    } else if (rdb_bgsave(s) == 0) {
        reply_status(c, "Background saving started");
    } else {
        reply_error(c, "ERR");
    }
}

/* Redis's bgrewriteaofCommand: inside EXEC or beside a BGSAVE, scheduled. */
void cmd_bgrewriteaof(client *c)
{
    int scheduled;
    const char *err;
    if (aof_bgrewrite(c->srv, &scheduled, &err) != 0) reply_error(c, err);
    else reply_status(c, scheduled ? "Background append only file rewriting scheduled"
                                   : "Background append only file rewriting started");
}

/* latchd is always a master without replicas: offset 0, none listed. */
void cmd_role(client *c)
{
    if (c->srv->repl) {
        repl_role(c);
        return;
    }
    reply_array(c, 3);
    reply_bulk_cstr(c, "master");
    reply_int(c, 0);
    reply_array(c, 0);
}

void cmd_shutdown(client *c)
{
    /* Redis 7.0's rules: ABORT stands alone, SAVE and NOSAVE exclude each
     * other. ABORT finds a shutdown in progress only when a signal's waits
     * for a paused cron (DEBUG PAUSE-CRON). */
    int save = 0, nosave = 0, other = 0, abort_req = 0, force = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "NOSAVE")) nosave = 1;
        else if (arg_is(&c->argv[i], "SAVE")) save = 1;
        else if (arg_is(&c->argv[i], "NOW")) other = 1;
        else if (arg_is(&c->argv[i], "FORCE")) other = force = 1;
        else if (arg_is(&c->argv[i], "ABORT")) abort_req = 1;
        else {
            reply_syntax_error(c);
            return;
        }
    }
    if ((abort_req && (save || nosave || other)) || (save && nosave)) {
        reply_syntax_error(c);
        return;
    }
    if (abort_req) {
        if (!c->srv->shutdown_asap) {
            reply_error(c, "ERR No shutdown in progress.");
            return;
        }
        c->srv->shutdown_asap = 0;
        log_msg(c->srv, LOG_WARNING, "Shutdown manually aborted.");
        reply_ok(c);
        return;
    }
    log_msg(c->srv, LOG_WARNING, "User requested shutdown...");
    if (rdb_shutdown_save(c->srv, save, nosave, force) != 0) {
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    scripts *st = c->srv->scripts;
    if (st->running) {
        /* From inside a busy script's hook: stop the script (writes or
         * not: nothing is kept anyway), then shut down after it. */
        st->kill = st->shutdown = 1;
        return;
    }
    server_shutdown(c->srv);
}
