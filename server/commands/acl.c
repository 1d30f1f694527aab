/* acl.c - the ACL command: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI,
 * CAT, GENPASS, LOG, DRYRUN, LOAD, SAVE, HELP with Redis 7.0's replies. */
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "commands.h"
#include "mem.h"

static void acl_setuser_cmd(client *c)
{
    const resp_slice *name = &c->argv[2];
    if (memchr(name->ptr, ' ', name->len) || memchr(name->ptr, '\0', name->len) ||
        memchr(name->ptr, '\t', name->len) || memchr(name->ptr, '\n', name->len) ||
        memchr(name->ptr, '\r', name->len)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    int argc = c->argc - 3;
    char **argv = mem_alloc(((size_t)argc + 1) * sizeof(char *));
    size_t *lens = mem_alloc(((size_t)argc + 1) * sizeof(size_t));
    for (int i = 0; i < argc; i++) {
        argv[i] = arg_strdup(&c->argv[i + 3]);
        lens[i] = c->argv[i + 3].len;
    }
    char *err = acl_setuser_on(c->srv, c, name->ptr, name->len, argv, lens, argc);
    if (err) reply_errorf(c, "ERR %s", err);
    else reply_ok(c);
    free(err);
    free(lens);
    acl_free_args(argv, argc);
}

static void acl_deluser_cmd(client *c)
{
    for (int j = 2; j < c->argc; j++) {
        if (c->argv[j].len == 7 && !memcmp(c->argv[j].ptr, "default", 7)) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    }
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) deleted += acl_deluser(c, c->argv[j].ptr, c->argv[j].len);
    reply_int(c, deleted);
}

static void reply_buf(client *c, resp_buf *b)
{
    reply_bulk(c, b->data ? b->data : "", b->len);
    b->len = 0;
}

/* aclAddReplySelectorDescription: commands, keys, channels. */
static void reply_selector(client *c, const acl_selector *s)
{
    resp_buf b;
    resp_buf_init(&b);
    reply_bulk_cstr(c, "commands");
    acl_describe_commands(s, &b);
    reply_buf(c, &b);
    reply_bulk_cstr(c, "keys");
    if (s->flags & ACL_SEL_ALLKEYS) {
        reply_bulk_cstr(c, "~*");
    } else {
        for (size_t i = 0; i < s->nkeys; i++) {
            if (i) resp_buf_append(&b, " ", 1);
            acl_describe_pattern(&s->keys[i], &b);
        }
        reply_buf(c, &b);
    }
    reply_bulk_cstr(c, "channels");
    if (s->flags & ACL_SEL_ALLCHANNELS) {
        reply_bulk_cstr(c, "&*");
    } else {
        for (size_t i = 0; i < s->nchans; i++) resp_buf_appendf(&b, "%s&%.*s", i ? " " : "", (int)s->chans[i].len,
                                                              s->chans[i].p);
        reply_buf(c, &b);
    }
    resp_buf_free(&b);
}

static void acl_getuser_cmd(client *c)
{
    acl_user *u = acl_user_find(c->srv, c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        reply_null(c);
        return;
    }
    const char *names[8];
    size_t n = acl_user_flag_names(u, names);
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    reply_set(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_bulk_cstr(c, names[i]);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, (long long)u->npass);
    for (size_t i = 0; i < u->npass; i++) reply_bulk(c, u->pass[i], ACL_HASH_LEN);
    reply_selector(c, &u->sel[0]);
    reply_bulk_cstr(c, "selectors");
    reply_array(c, (long long)u->nsel - 1);
    for (size_t i = 1; i < u->nsel; i++) {
        reply_map(c, 3);
        reply_selector(c, &u->sel[i]);
    }
}

static void acl_list_or_users(client *c, int names_only)
{
    acl_state *st = c->srv->acl;
    reply_array(c, (long long)st->nusers);
    for (size_t i = 0; i < st->nusers; i++) {
        acl_user *u = st->users[i];
        if (names_only) {
            reply_bulk(c, u->name, u->namelen);
        } else {
            resp_buf b;
            resp_buf_init(&b);
            resp_buf_appendf(&b, "user %s %s", u->name, acl_describe_user(u));
            reply_buf(c, &b);
            resp_buf_free(&b);
        }
    }
}

static void acl_list_cmd(client *c) { acl_list_or_users(c, 0); }
static void acl_users_cmd(client *c) { acl_list_or_users(c, 1); }
static void acl_whoami_cmd(client *c) { reply_bulk_cstr(c, acl_user_name(c->user)); }

static int no_aclfile(client *c)
{
    if (c->srv->cfg.aclfile[0]) return 0;
    reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via "
                   "the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration "
                   "file set) in order to store users in the Redis configuration.");
    return 1;
}

static void acl_load_cmd(client *c)
{
    if (no_aclfile(c)) return;
    char *err = acl_load_file(c->srv, c->srv->cfg.aclfile, c);
    if (err) reply_errorf(c, "ERR %s", err);
    else reply_ok(c);
    free(err);
}

static void acl_save_cmd(client *c)
{
    if (no_aclfile(c)) return;
    if (acl_save_file(c->srv, c->srv->cfg.aclfile) == 0) reply_ok(c);
    else reply_error(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                        "information");
}

static void acl_cat_cmd(client *c)
{
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 2) {
        reply_array(c, ACL_CAT_COUNT);
        for (int j = 0; j < ACL_CAT_COUNT; j++) reply_bulk_cstr(c, acl_category_names[j]);
        return;
    }
    unsigned cat = acl_category_flag(c->argv[2].ptr, c->argv[2].len);
    if (!cat) {
        reply_errorf(c, "ERR Unknown category '%.*s'", (int)(c->argv[2].len < 128 ? c->argv[2].len : 128),
                     c->argv[2].ptr);
        return;
    }
    /* the commands latchd has: those it lacks are in the bitmaps only */
    long long n = 0;
    for (size_t id = 0; id < acl_command_total(); id++)
        n += acl_command_at(id)->cmd && (acl_command_at(id)->categories & cat);
    reply_array(c, n);
    for (size_t id = 0; id < acl_command_total(); id++)
        if (acl_command_at(id)->cmd && (acl_command_at(id)->categories & cat))
            reply_bulk_cstr(c, acl_command_at(id)->fullname);
}

static void acl_genpass_cmd(client *c)
{
    enum { MAX_BITS = 4096 };
    long long bits = 256;
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_ll_or_reply(c, &c->argv[2], &bits)) return;
    if (bits <= 0 || bits > MAX_BITS) {
        reply_errorf(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                        "number up to %d", MAX_BITS);
        return;
    }
    char pass[MAX_BITS / 4];
    size_t chars = (size_t)(bits + 3) / 4;
    acl_random_hex(c->srv, pass, chars);
    reply_bulk(c, pass, chars);
}

static void acl_log_cmd(client *c)
{
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
    static const char *const contexts[] = {"toplevel", "multi", "lua"};
    acl_state *st = c->srv->acl;
    long long count = 10;
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "reset")) {
            acl_log_reset(c->srv);
            reply_ok(c);
            return;
        }
        if (!arg_ll_or_reply(c, &c->argv[2], &count)) return;
        if (count < 0) count = 0;
    }
    if ((size_t)count > st->nlog) count = (long long)st->nlog;
    uint64_t now = server_real_ms(c->srv);
    reply_array(c, count);
    for (long long i = 0; i < count; i++) {
        const acl_log_entry *e = &st->log[i];
        reply_map(c, 7);
        reply_bulk_cstr(c, "count");
        reply_int(c, (long long)e->count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, reasons[e->reason]);
        reply_bulk_cstr(c, "context");
        reply_bulk_cstr(c, contexts[e->context]);
        reply_bulk_cstr(c, "object");
        reply_bulk(c, e->object, e->objlen);
        reply_bulk_cstr(c, "username");
        reply_bulk(c, e->username, e->userlen);
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000);
        reply_bulk_cstr(c, "client-info");
        reply_bulk_cstr(c, e->cinfo);
    }
}

static void acl_dryrun_cmd(client *c)
{
    acl_user *u = acl_user_find(c->srv, c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    const command *cmd = command_lookup(c->argv[3].ptr, c->argv[3].len);
    const resp_slice *argv = c->argv + 3;
    int argc = c->argc - 3;
    if (cmd && (cmd->flags & CMD_CONTAINER) && argc >= 2) cmd = subcommand_lookup(cmd, argv[1].ptr, argv[1].len);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%.*s' not found", (int)c->argv[3].len, c->argv[3].ptr);
        return;
    }
    const acl_cmd *e = acl_command_of(cmd);
    if (!command_arity_ok(cmd, argc)) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", e->fullname);
        return;
    }
    int pos = 0;
    int rc = acl_check(u, e, argv, argc, &pos);
    if (rc == ACL_OK) {
        reply_ok(c);
        return;
    }
    resp_buf b;
    resp_buf_init(&b);
    if (rc == ACL_DENIED_CMD)
        resp_buf_appendf(&b, "This user has no permissions to run the '%s' command", e->fullname);
    else
        resp_buf_appendf(&b, "This user has no permissions to access the '%.*s' %s", (int)argv[pos].len,
                         argv[pos].ptr, rc == ACL_DENIED_KEY ? "key" : "channel");
    reply_buf(c, &b);
    resp_buf_free(&b);
}

static void acl_help_cmd(client *c)
{
    static const char *const lines[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

#define ADM (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define PLAIN (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
const command acl_subcommands[] = {
    {"cat", acl_cat_cmd, -2, PLAIN, 0, 0, 0, "server", "6.0.0", "List the ACL categories or the commands inside a category", "[categoryname]", NULL},
    {"deluser", acl_deluser_cmd, -3, ADM, 0, 0, 0, "server", "6.0.0", "Remove the specified ACL users and the associated rules", "username [username ...]", NULL},
    {"dryrun", acl_dryrun_cmd, -4, ADM, 0, 0, 0, "server", "7.0.0", "Returns whether the user can execute the given command without executing the command.", "username command [arg [arg ...]]", NULL},
    {"genpass", acl_genpass_cmd, -2, PLAIN, 0, 0, 0, "server", "6.0.0", "Generate a pseudorandom secure password to use for ACL users", "[bits]", NULL},
    {"getuser", acl_getuser_cmd, 3, ADM, 0, 0, 0, "server", "6.0.0", "Get the rules for a specific ACL user", "username", NULL},
    {"help", acl_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "6.0.0", "Show helpful text about the different subcommands", NULL, NULL},
    {"list", acl_list_cmd, 2, ADM, 0, 0, 0, "server", "6.0.0", "List the current ACL rules in ACL config file format", NULL, NULL},
    {"load", acl_load_cmd, 2, ADM, 0, 0, 0, "server", "6.0.0", "Reload the ACLs from the configured ACL file", NULL, NULL},
    {"log", acl_log_cmd, -2, ADM, 0, 0, 0, "server", "6.0.0", "List latest events denied because of ACLs in place", "[count|RESET]", NULL},
    {"save", acl_save_cmd, 2, ADM, 0, 0, 0, "server", "6.0.0", "Save the current ACL rules in the configured ACL file", NULL, NULL},
    {"setuser", acl_setuser_cmd, -3, ADM, 0, 0, 0, "server", "6.0.0", "Modify or create the rules for a specific ACL user", "username [rule [rule ...]]", NULL},
    {"users", acl_users_cmd, 2, ADM, 0, 0, 0, "server", "6.0.0", "List the username of all the configured ACL rules", NULL, NULL},
    {"whoami", acl_whoami_cmd, 2, PLAIN, 0, 0, 0, "server", "6.0.0", "Return the name of the user associated to the current connection", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_acl(client *c) { subcommand_dispatch(c); }
