/* acl.h - ACL users as Redis 7.0 has them: rules, selectors, the permission
 * check of every command, AUTH, the ACL LOG, the aclfile and user lines. */
#ifndef LATCHD_ACL_H
#define LATCHD_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"

#define ACL_HASH_LEN 64   /* a password's SHA-256 in hex */

/* Redis's ACL_* results, in its order (the most relevant error wins). */
enum { ACL_OK, ACL_DENIED_CMD, ACL_DENIED_KEY, ACL_DENIED_AUTH, ACL_DENIED_CHANNEL };
/* Where a denial happened, as ACL LOG's "context" names it. */
enum { ACL_LOG_CTX_TOPLEVEL, ACL_LOG_CTX_MULTI, ACL_LOG_CTX_LUA };

/* The categories, in Redis's order (ACL CAT, COMMAND INFO). */
enum {
    ACL_CAT_KEYSPACE = 1 << 0, ACL_CAT_READ = 1 << 1, ACL_CAT_WRITE = 1 << 2, ACL_CAT_SET = 1 << 3,
    ACL_CAT_SORTEDSET = 1 << 4, ACL_CAT_LIST = 1 << 5, ACL_CAT_HASH = 1 << 6, ACL_CAT_STRING = 1 << 7,
    ACL_CAT_BITMAP = 1 << 8, ACL_CAT_HYPERLOGLOG = 1 << 9, ACL_CAT_GEO = 1 << 10, ACL_CAT_STREAM = 1 << 11,
    ACL_CAT_PUBSUB = 1 << 12, ACL_CAT_ADMIN = 1 << 13, ACL_CAT_FAST = 1 << 14, ACL_CAT_SLOW = 1 << 15,
    ACL_CAT_BLOCKING = 1 << 16, ACL_CAT_DANGEROUS = 1 << 17, ACL_CAT_CONNECTION = 1 << 18,
    ACL_CAT_TRANSACTION = 1 << 19, ACL_CAT_SCRIPTING = 1 << 20,
};
#define ACL_CAT_COUNT 21
extern const char *const acl_category_names[ACL_CAT_COUNT];

/* Key-spec flags as COMMAND INFO shows them. */
enum {
    ACL_KS_RO = 1 << 0, ACL_KS_RW = 1 << 1, ACL_KS_OW = 1 << 2, ACL_KS_RM = 1 << 3,
    ACL_KS_ACCESS = 1 << 4, ACL_KS_UPDATE = 1 << 5, ACL_KS_INSERT = 1 << 6, ACL_KS_DELETE = 1 << 7,
    ACL_KS_NOT_KEY = 1 << 8, ACL_KS_INCOMPLETE = 1 << 9, ACL_KS_VARIABLE_FLAGS = 1 << 10,
};
enum { ACL_FK_NONE, ACL_FK_RANGE, ACL_FK_KEYNUM };

/* One Redis key spec: where the search begins (bs_index > 0, else after
 * bs_keyword searched from bs_startfrom) and how keys are found from there
 * (range: a = lastkey, b = step, c = limit; keynum: a = keynumidx,
 * b = firstkey, c = step). */
typedef struct acl_key_spec {
    unsigned flags;
    int bs_index;
    const char *bs_keyword;
    int bs_startfrom;
    int fk;
    int a, b, c;
} acl_key_spec;

typedef struct acl_command_spec {
    const char *name;      /* "get", "client|list" */
    unsigned categories;
    int nspecs;
    acl_key_spec specs[3];
} acl_command_spec;
/* acl_table.c (scripts/gen-acl-table), ended by a NULL name. */
extern const acl_command_spec acl_command_specs[];

/* A command as the ACL sees it: its id (bit in a selector's bitmaps),
 * container, categories and key specs. Redis's commands latchd lacks
 * have one too, so that rules naming them load and describe as in Redis. */
typedef struct acl_cmd {
    const command *cmd;     /* NULL: a command of Redis's latchd lacks (named in rules only) */
    int parent;             /* the container's id, or -1 */
    unsigned id;
    unsigned categories;
    const acl_command_spec *spec;   /* NULL: no keys */
    unsigned sub_first, nsubs;      /* its subcommands' ids (acl.c) */
    char fullname[48];
} acl_cmd;
#define ACL_MAX_COMMANDS 1023
#define ACL_FUTURE_BIT ACL_MAX_COMMANDS   /* set only by +@all: commands added later */
#define ACL_WORDS ((ACL_MAX_COMMANDS + 1) / 64)

enum { ACL_PERM_READ = 1 << 0, ACL_PERM_WRITE = 1 << 1 };
enum { ACL_SEL_ROOT = 1 << 0, ACL_SEL_ALLKEYS = 1 << 1, ACL_SEL_ALLCOMMANDS = 1 << 2, ACL_SEL_ALLCHANNELS = 1 << 3 };
enum {
    ACL_USER_ENABLED = 1 << 0, ACL_USER_DISABLED = 1 << 1, ACL_USER_NOPASS = 1 << 2,
    ACL_USER_SANITIZE = 1 << 3, ACL_USER_SKIP_SANITIZE = 1 << 4,
};
/* Why a rule was refused (Redis's errno values), worded by acl.c. */
enum {
    ACL_ERR_NOENT = 1, ACL_ERR_SYNTAX, ACL_ERR_KEYS_AFTER_ALL, ACL_ERR_CHANNELS_AFTER_ALL, ACL_ERR_NOPASS,
    ACL_ERR_BADHASH, ACL_ERR_DUPLICATE, ACL_ERR_CHILD,
};

/* A key pattern (flags: ACL_PERM_*) or a channel pattern. */
typedef struct acl_pattern {
    char *p;
    size_t len;
    int flags;
} acl_pattern;

/* +cmd|arg rules: the first arguments allowed of an otherwise denied command. */
typedef struct acl_firstargs {
    unsigned id;
    char **args;
    size_t n;
} acl_firstargs;

typedef struct acl_selector {
    unsigned flags;   /* ACL_SEL_* */
    uint64_t allowed[ACL_WORDS];
    acl_pattern *keys;
    size_t nkeys;
    acl_pattern *chans;
    size_t nchans;
    acl_firstargs *first;
    size_t nfirst;
} acl_selector;

typedef struct acl_user {
    int unrestricted;   /* one selector with every command, key and channel: nothing to check */
    char *name;
    size_t namelen;
    unsigned flags;     /* ACL_USER_* */
    char (*pass)[ACL_HASH_LEN + 1];
    size_t npass;
    acl_selector *sel;  /* sel[0] is the root selector */
    size_t nsel;
    char *desc;         /* acl_describe_user's text, until the user changes */
} acl_user;

typedef struct acl_log_entry {
    uint64_t count;
    int reason, context;
    char *object, *username, *cinfo;
    size_t objlen, userlen;
    uint64_t ctime_ms;
} acl_log_entry;

/* A server's users (sorted by name, as Redis's rax lists them) and log. */
typedef struct acl_state {
    acl_user **users;
    size_t nusers;
    acl_user *def;          /* never freed while the server lives: clients point at it */
    acl_log_entry *log;     /* newest first */
    size_t nlog, logcap;
} acl_state;

/* sha256.c */
void acl_sha256(const void *data, size_t len, unsigned char out[32]);
void acl_sha256_hex(const void *data, size_t len, char out[ACL_HASH_LEN + 1]);

/* Once per process, after the command table: ids and categories. */
void acl_table_init(void);
size_t acl_command_total(void);
const acl_cmd *acl_command_at(size_t id);
const acl_cmd *acl_command_of(const command *cmd);
/* ACL_CAT_* of a category name, 0 if none. */
unsigned acl_category_flag(const char *name, size_t len);

/* The default user, with requirepass as its password. */
void acl_init(server *s);
/* At start, before listening: the config's user lines or the aclfile;
 * -1 with Redis's message in err. */
int acl_load_users(server *s, char *err, size_t errlen);
void acl_free(server *s);
acl_user *acl_default_user(server *s);
acl_user *acl_user_find(server *s, const char *name, size_t len);
const char *acl_user_name(const acl_user *u);
/* Redis's authRequired: the default user is off or has a password. */
int acl_auth_required(server *s);
/* A new or RESET connection: the default user, authenticated unless
 * acl_auth_required. */
void acl_client_reset_auth(client *c);
/* requirepass (len bytes, NULs allowed): the default user's one password,
 * or nopass when empty. */
void acl_set_requirepass(server *s, const char *pass, size_t len);
/* AUTH / HELLO AUTH: 1 and c is that user, else 0 (logged). */
int acl_authenticate(client *c, const resp_slice *user, const resp_slice *pass);

/* ACL SETUSER: all rules or none; NULL, or the error (free it). current,
 * the client asking, is closed after its reply if its rules revoke it. */
char *acl_setuser_on(server *s, client *current, const char *name, size_t namelen, char **argv,
                     const size_t *lens, int argc);
/* ACL DELUSER of one user: 1 if it existed (its clients are closed). */
int acl_deluser(client *c, const char *name, size_t len);
void acl_free_args(char **v, int n);
/* ACL LOAD / SAVE: NULL or the errors (free it); 0 or -1 (logged). */
char *acl_load_file(server *s, const char *path, client *current);
int acl_save_file(server *s, const char *path);
/* Every user as ACL LIST / SAVE write them, a line each (free it). */
char *acl_users_text(server *s);

/* Descriptions as ACL LIST / GETUSER show them. */
const char *acl_describe_user(acl_user *u);
void acl_describe_commands(const acl_selector *s, resp_buf *out);
void acl_describe_pattern(const acl_pattern *p, resp_buf *out);
size_t acl_user_flag_names(const acl_user *u, const char **names);

/* ACLCheckAllUserCommandPerm: ACL_OK or ACL_DENIED_*, *errpos the
 * argument denied (key or channel). */
int acl_check(const acl_user *u, const acl_cmd *e, const resp_slice *argv, int argc, int *errpos);
/* c (its user not unrestricted) may run cmd (sub: its subcommand if known)
 * with c->argv? Otherwise the NOPERM error is replied, logged with ctx,
 * and 0. */
int acl_admit(client *c, const command *cmd, const command *sub, int ctx);
/* EXEC: c's queued command (c->cmd, c->argv) checked again, as the rules
 * may have changed since it was queued; 0 after Redis's NOPERM reply. */
int acl_exec_admit(client *c);
/* A script's redis.call by caller: ACL_OK, or the denial (logged with the
 * Lua context); acl_denial_text words it. */
/* redis.acl_check_cmd: may u run cmd (sub: its subcommand or NULL) with
 * argv? Nothing is logged. */
int acl_user_may(const acl_user *u, const command *cmd, const command *sub, const resp_slice *argv, int argc);
int acl_script_check(client *caller, const command *cmd, const resp_slice *argv, int argc);
const char *acl_denial_text(int rc);
/* c's user may run cmd with c->argv and has ksflags's access (ACL_KS_*)
 * to every key: SORT's BY and GET patterns name any key. */
/* Redis's getKeysFromCommandWithSpecs (COMMAND GETKEYSANDFLAGS): fn for
 * each key of cmd in argv (argv[0] its name) with its key-spec flags
 * (ACL_KS_*), from the specs, or the command's own rule where they cannot
 * say; the number of keys. */
typedef void (*acl_key_fn)(int pos, unsigned ksflags, void *ctx);
int acl_command_keys_each(const command *cmd, const resp_slice *argv, int argc, acl_key_fn fn, void *ctx);
int acl_all_keys_allowed(const client *c, const command *cmd, unsigned ksflags);

/* The ACL LOG: user NULL means c's user. */
void acl_log_add(client *c, int reason, int ctx, const char *obj, size_t objlen, const char *user, size_t userlen);
void acl_log_reset(server *s);
/* GENPASS: n random hex digits. */
void acl_random_hex(server *s, char *dst, size_t n);

#endif
