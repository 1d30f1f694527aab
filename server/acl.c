/* acl.c - ACL users as Redis 7.0 has them: users and their selectors, the
 * rules that set them, the permission check, AUTH, the ACL LOG and the
 * aclfile / user lines. The ACL command's replies are commands/acl.c's. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "acl.h"
#include "commands/commands.h"
#include "mem.h"
#include "num.h"
#include "pubsub.h"

const char *const acl_category_names[ACL_CAT_COUNT] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog", "geo",
    "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
};

/* ---- the command registry: ids for the permission bitmaps ---- */

/* Process-wide, filled once (registry_once) and only read after, as the
 * command table it describes (latchd.h). */
struct by_ptr { const command *cmd; unsigned id; };
static struct {
    acl_cmd cmds[ACL_MAX_COMMANDS];
    size_t n;
    unsigned sub_ids[ACL_MAX_COMMANDS];   /* each container's subcommand ids, at its sub_first */
    struct by_ptr by_ptr[ACL_MAX_COMMANDS];   /* sorted by pointer: a command's id in O(log n) */
    size_t nby_ptr;
} acl_registry;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static const acl_cmd *find_named(const char *name, size_t len)
{
    for (size_t id = 0; id < acl_registry.n; id++)
        if (strlen(acl_registry.cmds[id].fullname) == len && !strncasecmp(acl_registry.cmds[id].fullname, name, len))
            return &acl_registry.cmds[id];
    return NULL;
}

/* cmd NULL: a Redis command latchd lacks, known by name only. */
static void registry_add(const command *cmd, const char *fullname, const acl_command_spec *spec)
{
    if (acl_registry.n == ACL_MAX_COMMANDS) return;
    acl_cmd *e = &acl_registry.cmds[acl_registry.n];
    const char *bar = strchr(fullname, '|');
    const acl_cmd *parent = bar ? find_named(fullname, (size_t)(bar - fullname)) : NULL;
    e->cmd = cmd;
    e->parent = parent ? (int)parent->id : -1;
    e->id = (unsigned)acl_registry.n;
    snprintf(e->fullname, sizeof(e->fullname), "%s", fullname);
    e->spec = spec;
    e->categories = spec ? spec->categories : ACL_CAT_SLOW;
    if (cmd) {
        acl_registry.by_ptr[acl_registry.nby_ptr].cmd = cmd;
        acl_registry.by_ptr[acl_registry.nby_ptr++].id = e->id;
    }
    acl_registry.n++;
}

static const acl_command_spec *spec_named(const char *name)
{
    for (const acl_command_spec *s = acl_command_specs; s->name; s++)
        if (!strcmp(s->name, name)) return s;
    return NULL;
}

static int by_ptr_cmp(const void *a, const void *b)
{
    const command *x = ((const struct by_ptr *)a)->cmd, *y = ((const struct by_ptr *)b)->cmd;
    return x < y ? -1 : x > y;
}

/* latchd's commands, then the rest of Redis's; each container's
 * subcommands listed for it. */
static void registry_build(void)
{
    char name[64];
    for (size_t i = 0; i < command_count(); i++) {
        const command *cmd = command_at(i);
        registry_add(cmd, cmd->name, spec_named(cmd->name));
        for (const command *sub = cmd->subs; sub && sub->name; sub++) {
            command_fullname(cmd, sub, name, sizeof(name));
            registry_add(sub, name, spec_named(name));
        }
    }
    for (const acl_command_spec *s = acl_command_specs; s->name; s++)
        if (!find_named(s->name, strlen(s->name))) registry_add(NULL, s->name, s);
    qsort(acl_registry.by_ptr, acl_registry.nby_ptr, sizeof(acl_registry.by_ptr[0]), by_ptr_cmp);
    size_t used = 0;
    for (size_t id = 0; id < acl_registry.n; id++) {
        acl_registry.cmds[id].sub_first = (unsigned)used;
        for (size_t j = 0; j < acl_registry.n; j++)
            if (acl_registry.cmds[j].parent == (int)id) acl_registry.sub_ids[used++] = (unsigned)j;
        acl_registry.cmds[id].nsubs = (unsigned)(used - acl_registry.cmds[id].sub_first);
    }
}

void acl_table_init(void) { pthread_once(&registry_once, registry_build); }

size_t acl_command_total(void) { return acl_registry.n; }
const acl_cmd *acl_command_at(size_t id) { return &acl_registry.cmds[id]; }

const acl_cmd *acl_command_of(const command *cmd)
{
    size_t lo = 0, hi = acl_registry.nby_ptr;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (acl_registry.by_ptr[mid].cmd == cmd) return &acl_registry.cmds[acl_registry.by_ptr[mid].id];
        if (acl_registry.by_ptr[mid].cmd < cmd) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ACLLookupCommand: "get" or "config|get", any case; Redis's commands
 * latchd lacks too. */
static const acl_cmd *lookup_rule_command(const char *name, size_t len) { return find_named(name, len); }

unsigned acl_category_flag(const char *name, size_t len)
{
    for (int i = 0; i < ACL_CAT_COUNT; i++)
        if (strlen(acl_category_names[i]) == len && !strncasecmp(acl_category_names[i], name, len)) return 1u << i;
    return 0;
}

/* ---- selectors ---- */

static int bit_get(const acl_selector *s, unsigned id) { return (s->allowed[id / 64] >> (id % 64)) & 1; }

static void bit_set(acl_selector *s, unsigned id, int on)
{
    if (on) {
        s->allowed[id / 64] |= 1ull << (id % 64);
    } else {
        s->allowed[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~ACL_SEL_ALLCOMMANDS;
    }
}

static void firstargs_free(acl_firstargs *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->args[i]);
    free(f->args);
}

static acl_firstargs *firstargs_of(const acl_selector *s, unsigned id)
{
    for (size_t i = 0; i < s->nfirst; i++)
        if (s->first[i].id == id) return &s->first[i];
    return NULL;
}

static void firstargs_reset(acl_selector *s, unsigned id)
{
    acl_firstargs *f = firstargs_of(s, id);
    if (!f) return;
    firstargs_free(f);
    *f = s->first[--s->nfirst];
}

static void firstargs_reset_all(acl_selector *s)
{
    for (size_t i = 0; i < s->nfirst; i++) firstargs_free(&s->first[i]);
    free(s->first);
    s->first = NULL;
    s->nfirst = 0;
}

static void firstargs_add(acl_selector *s, unsigned id, const char *arg, size_t len)
{
    acl_firstargs *f = firstargs_of(s, id);
    if (!f) {
        s->first = mem_realloc(s->first, (s->nfirst + 1) * sizeof(*s->first));
        f = &s->first[s->nfirst++];
        memset(f, 0, sizeof(*f));
        f->id = id;
    }
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->args[i]) == len && !strncasecmp(f->args[i], arg, len)) return;
    f->args = mem_realloc(f->args, (f->n + 1) * sizeof(char *));
    f->args[f->n++] = mem_strndup(arg, len);
}

static void patterns_free(acl_pattern *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].p);
    free(v);
}

static acl_pattern *patterns_copy(const acl_pattern *v, size_t n)
{
    acl_pattern *out = n ? mem_alloc(n * sizeof(*out)) : NULL;
    for (size_t i = 0; i < n; i++) {
        out[i] = v[i];
        out[i].p = mem_strndup(v[i].p, v[i].len);
    }
    return out;
}

static void selector_init(acl_selector *s, unsigned flags, const server *srv)
{
    memset(s, 0, sizeof(*s));
    s->flags = flags | (srv->cfg.acl_pubsub_default == CONFIG_ACL_PUBSUB_ALLCHANNELS ? ACL_SEL_ALLCHANNELS : 0);
}

static void selector_free(acl_selector *s)
{
    patterns_free(s->keys, s->nkeys);
    patterns_free(s->chans, s->nchans);
    firstargs_reset_all(s);
}

static void selector_copy(acl_selector *dst, const acl_selector *src)
{
    *dst = *src;
    dst->keys = patterns_copy(src->keys, src->nkeys);
    dst->chans = patterns_copy(src->chans, src->nchans);
    dst->first = src->nfirst ? mem_alloc(src->nfirst * sizeof(*dst->first)) : NULL;
    for (size_t i = 0; i < src->nfirst; i++) {
        dst->first[i].id = src->first[i].id;
        dst->first[i].n = src->first[i].n;
        dst->first[i].args = mem_alloc(src->first[i].n * sizeof(char *));
        for (size_t j = 0; j < src->first[i].n; j++) dst->first[i].args[j] = mem_strdup(src->first[i].args[j]);
    }
}

/* ACLChangeSelectorPerm: a container's subcommands follow it. */
static void change_perm(acl_selector *s, const acl_cmd *e, int allow)
{
    bit_set(s, e->id, allow);
    firstargs_reset(s, e->id);
    for (unsigned i = 0; i < e->nsubs; i++) bit_set(s, acl_registry.sub_ids[e->sub_first + i], allow);
}

/* +@cat / -@cat: every command of the category, then each subcommand of
 * the category on its own (after its container, which set them all). */
static void change_category(acl_selector *s, unsigned cat, int allow)
{
    for (size_t id = 0; id < acl_registry.n; id++)
        if (acl_registry.cmds[id].categories & cat) change_perm(s, &acl_registry.cmds[id], allow);
}

static int has_space(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0) return 1;
    return 0;
}

static acl_pattern *pattern_find(acl_pattern *v, size_t n, const char *p, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].len == len && !memcmp(v[i].p, p, len)) return &v[i];
    return NULL;
}

static void pattern_add(acl_pattern **v, size_t *n, const char *p, size_t len, int flags)
{
    acl_pattern *found = pattern_find(*v, *n, p, len);
    if (found) {
        found->flags |= flags;
        return;
    }
    *v = mem_realloc(*v, (*n + 1) * sizeof(**v));
    (*v)[*n].p = mem_strndup(p, len);
    (*v)[*n].len = len;
    (*v)[*n].flags = flags;
    (*n)++;
}

static void patterns_clear(acl_pattern **v, size_t *n)
{
    patterns_free(*v, *n);
    *v = NULL;
    *n = 0;
}

static int op_is(const char *op, size_t len, const char *lit)
{
    return strlen(lit) == len && !strncasecmp(op, lit, len);
}

/* %RW~pattern, %R~, %W~: the permission letters, or -1. */
static int key_perm_prefix(const char *op, size_t len, size_t *offset)
{
    int flags = 0;
    size_t i = 1;
    for (; i < len; i++) {
        char ch = (char)toupper((unsigned char)op[i]);
        if (ch == 'R' && !(flags & ACL_PERM_READ)) flags |= ACL_PERM_READ;
        else if (ch == 'W' && !(flags & ACL_PERM_WRITE)) flags |= ACL_PERM_WRITE;
        else if (op[i] == '~') break;
        else return -1;
    }
    if (!flags) return -1;
    *offset = i < len ? i + 1 : len;   /* "%RW" alone: an empty pattern, no key (Redis accepts it) */
    return flags;
}

/* +cmd|firstarg or +container|sub (split at the last bar, as Redis). */
static int allow_with_bar(acl_selector *s, const char *op, size_t len)
{
    const char *bar = op + len;
    while (bar[-1] != '|') bar--;
    bar--;
    const acl_cmd *e = lookup_rule_command(op, (size_t)(bar - op));
    if (!e) return ACL_ERR_NOENT;
    if (e->parent >= 0) return ACL_ERR_CHILD;
    size_t sublen = len - (size_t)(bar - op) - 1;
    if (sublen == 0) return ACL_ERR_SYNTAX;
    if (e->nsubs) {
        const acl_cmd *sube = lookup_rule_command(op, len);
        if (!sube) return ACL_ERR_NOENT;
        change_perm(s, sube, 1);
        return 0;
    }
    firstargs_add(s, e->id, bar + 1, sublen);
    return 0;
}

/* ACLSetSelector: 0, or an ACL_ERR_*. */
static int selector_op(acl_selector *s, const char *op, size_t len)
{
    if (op_is(op, len, "allkeys") || op_is(op, len, "~*")) {
        s->flags |= ACL_SEL_ALLKEYS;
        patterns_clear(&s->keys, &s->nkeys);
    } else if (op_is(op, len, "resetkeys")) {
        s->flags &= ~ACL_SEL_ALLKEYS;
        patterns_clear(&s->keys, &s->nkeys);
    } else if (op_is(op, len, "allchannels") || op_is(op, len, "&*")) {
        s->flags |= ACL_SEL_ALLCHANNELS;
        patterns_clear(&s->chans, &s->nchans);
    } else if (op_is(op, len, "resetchannels")) {
        s->flags &= ~ACL_SEL_ALLCHANNELS;
        patterns_clear(&s->chans, &s->nchans);
    } else if (op_is(op, len, "allcommands") || op_is(op, len, "+@all")) {
        memset(s->allowed, 0xff, sizeof(s->allowed));
        s->flags |= ACL_SEL_ALLCOMMANDS;
        firstargs_reset_all(s);
    } else if (op_is(op, len, "nocommands") || op_is(op, len, "-@all")) {
        memset(s->allowed, 0, sizeof(s->allowed));
        s->flags &= ~ACL_SEL_ALLCOMMANDS;
        firstargs_reset_all(s);
    } else if (op[0] == '~' || op[0] == '%') {
        if (s->flags & ACL_SEL_ALLKEYS) return ACL_ERR_KEYS_AFTER_ALL;
        size_t offset = 1;
        int flags = ACL_PERM_READ | ACL_PERM_WRITE;
        if (op[0] == '%' && (flags = key_perm_prefix(op, len, &offset)) < 0) return ACL_ERR_SYNTAX;
        if (has_space(op + offset, len - offset)) return ACL_ERR_SYNTAX;
        pattern_add(&s->keys, &s->nkeys, op + offset, len - offset, flags);
        s->flags &= ~ACL_SEL_ALLKEYS;
    } else if (op[0] == '&') {
        if (s->flags & ACL_SEL_ALLCHANNELS) return ACL_ERR_CHANNELS_AFTER_ALL;
        if (has_space(op + 1, len - 1)) return ACL_ERR_SYNTAX;
        pattern_add(&s->chans, &s->nchans, op + 1, len - 1, 0);
        s->flags &= ~ACL_SEL_ALLCHANNELS;
    } else if (op[0] == '+' && op[1] != '@') {
        if (!memchr(op, '|', len)) {
            const acl_cmd *e = lookup_rule_command(op + 1, len - 1);
            if (!e) return ACL_ERR_NOENT;
            change_perm(s, e, 1);
        } else {
            return allow_with_bar(s, op + 1, len - 1);
        }
    } else if (op[0] == '-' && op[1] != '@') {
        const acl_cmd *e = lookup_rule_command(op + 1, len - 1);
        if (!e) return ACL_ERR_NOENT;
        change_perm(s, e, 0);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
        unsigned cat = acl_category_flag(op + 2, len - 2);
        if (!cat) return ACL_ERR_NOENT;
        change_category(s, cat, op[0] == '+');
    } else {
        return ACL_ERR_SYNTAX;
    }
    return 0;
}

/* ---- users ---- */

static void user_update_fast_path(acl_user *u)
{
    unsigned all = ACL_SEL_ALLCOMMANDS | ACL_SEL_ALLKEYS | ACL_SEL_ALLCHANNELS;
    u->unrestricted = u->nsel == 1 && (u->sel[0].flags & all) == all;
}

static void user_clear_desc(acl_user *u)
{
    free(u->desc);
    u->desc = NULL;
}

static acl_user *user_new(server *s, const char *name, size_t len)
{
    acl_user *u = mem_calloc(1, sizeof(*u));
    u->name = mem_strndup(name, len);
    u->namelen = len;
    u->flags = ACL_USER_DISABLED;
    u->sel = mem_alloc(sizeof(*u->sel));
    u->nsel = 1;
    selector_init(&u->sel[0], ACL_SEL_ROOT, s);
    user_update_fast_path(u);
    return u;
}

static void user_clear_selectors(acl_user *u, size_t keep)
{
    for (size_t i = keep; i < u->nsel; i++) selector_free(&u->sel[i]);
    u->nsel = keep;
}

static void user_free(acl_user *u)
{
    if (!u) return;
    user_clear_selectors(u, 0);
    free(u->sel);
    free(u->pass);
    free(u->name);
    free(u->desc);
    free(u);
}

/* ACLCopyUser: dst gets src's rules, keeping its name. */
static void user_copy_rules(acl_user *dst, const acl_user *src)
{
    user_clear_selectors(dst, 0);
    free(dst->pass);
    dst->flags = src->flags;
    dst->npass = src->npass;
    dst->pass = src->npass ? mem_alloc(src->npass * sizeof(*dst->pass)) : NULL;
    if (src->npass) memcpy(dst->pass, src->pass, src->npass * sizeof(*dst->pass));
    dst->sel = mem_realloc(dst->sel, src->nsel * sizeof(*dst->sel));
    for (size_t i = 0; i < src->nsel; i++) selector_copy(&dst->sel[i], &src->sel[i]);
    dst->nsel = src->nsel;
    user_clear_desc(dst);
    user_update_fast_path(dst);
}

static int valid_hash(const char *p, size_t len)
{
    if (len != ACL_HASH_LEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'f') || (p[i] >= '0' && p[i] <= '9'))) return 0;
    return 1;
}

static long pass_find(const acl_user *u, const char *hash)
{
    for (size_t i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], hash, ACL_HASH_LEN)) return (long)i;
    return -1;
}

/* >pass #hash <pass !hash */
static int password_op(acl_user *u, const char *op, size_t len)
{
    char hash[ACL_HASH_LEN + 1];
    if (op[0] == '>' || op[0] == '<') {
        acl_sha256_hex(op + 1, len - 1, hash);
    } else {
        if (!valid_hash(op + 1, len - 1)) return ACL_ERR_BADHASH;
        memcpy(hash, op + 1, ACL_HASH_LEN);
        hash[ACL_HASH_LEN] = '\0';
    }
    long at = pass_find(u, hash);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            u->pass = mem_realloc(u->pass, (u->npass + 1) * sizeof(*u->pass));
            memcpy(u->pass[u->npass++], hash, ACL_HASH_LEN + 1);
        }
        u->flags &= ~ACL_USER_NOPASS;
        return 0;
    }
    if (at < 0) return ACL_ERR_NOPASS;
    memmove(&u->pass[at], &u->pass[at + 1], (u->npass - (size_t)at - 1) * sizeof(*u->pass));
    u->npass--;
    return 0;
}

/* Splits on blanks in place of sdssplitargs (a selector's rules). */
static int selector_from_set(server *s, acl_user *u, const char *op, size_t len)
{
    acl_selector sel;
    selector_init(&sel, 0, s);
    size_t i = 1, end = len - 1;
    while (i < end) {
        while (i < end && isspace((unsigned char)op[i])) i++;
        size_t start = i;
        while (i < end && !isspace((unsigned char)op[i])) i++;
        if (i == start) break;
        int rc = selector_op(&sel, op + start, i - start);
        if (rc) {
            selector_free(&sel);
            return rc;
        }
    }
    u->sel = mem_realloc(u->sel, (u->nsel + 1) * sizeof(*u->sel));
    u->sel[u->nsel++] = sel;
    return 0;
}

static void set_flag_pair(acl_user *u, unsigned on, unsigned off)
{
    u->flags |= on;
    u->flags &= ~off;
}

/* ACLSetUser: one rule; 0 or an ACL_ERR_*. */
static int acl_user_op(server *s, acl_user *u, const char *op, size_t len)
{
    int rc = 0;
    user_clear_desc(u);
    if (len == 0) return 0;
    if (op_is(op, len, "on")) {
        set_flag_pair(u, ACL_USER_ENABLED, ACL_USER_DISABLED);
    } else if (op_is(op, len, "off")) {
        set_flag_pair(u, ACL_USER_DISABLED, ACL_USER_ENABLED);
    } else if (op_is(op, len, "skip-sanitize-payload")) {
        set_flag_pair(u, ACL_USER_SKIP_SANITIZE, ACL_USER_SANITIZE);
    } else if (op_is(op, len, "sanitize-payload")) {
        set_flag_pair(u, ACL_USER_SANITIZE, ACL_USER_SKIP_SANITIZE);
    } else if (op_is(op, len, "nopass") || op_is(op, len, "resetpass")) {
        if (op[0] == 'n' || op[0] == 'N') u->flags |= ACL_USER_NOPASS;
        else u->flags &= ~ACL_USER_NOPASS;
        free(u->pass);
        u->pass = NULL;
        u->npass = 0;
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        rc = password_op(u, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        rc = selector_from_set(s, u, op, len);
    } else if (op_is(op, len, "clearselectors")) {
        user_clear_selectors(u, 1);
    } else if (op_is(op, len, "reset")) {
        acl_user_op(s, u, "resetpass", 9);
        acl_user_op(s, u, "resetkeys", 9);
        acl_user_op(s, u, "resetchannels", 13);
        if (s->cfg.acl_pubsub_default == CONFIG_ACL_PUBSUB_ALLCHANNELS) acl_user_op(s, u, "allchannels", 11);
        acl_user_op(s, u, "off", 3);
        acl_user_op(s, u, "sanitize-payload", 16);
        acl_user_op(s, u, "clearselectors", 14);
        acl_user_op(s, u, "-@all", 5);
    } else {
        rc = selector_op(&u->sel[0], op, len);
    }
    user_update_fast_path(u);
    return rc;
}

static const char *acl_error_text(int err)
{
    switch (err) {
    case ACL_ERR_NOENT: return "Unknown command or category name in ACL";
    case ACL_ERR_SYNTAX: return "Syntax error";
    case ACL_ERR_KEYS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case ACL_ERR_CHANNELS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have "
               "any effect. Try 'resetchannels' to start with an empty list of channels";
    case ACL_ERR_NOPASS: return "The password you are trying to remove from the user does not exist";
    case ACL_ERR_BADHASH:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case ACL_ERR_DUPLICATE: return "Duplicate user found. A user can only be defined once in config files";
    case ACL_ERR_CHILD: return "Allowing first-arg of a subcommand is not supported";
    default: return "Wrong format";
    }
}

/* ---- describing a user (ACL LIST, GETUSER, SAVE) ---- */

static size_t category_count(const acl_selector *s, unsigned cat, int on)
{
    size_t n = 0;
    for (size_t id = 0; id < acl_registry.n; id++)
        if ((acl_registry.cmds[id].categories & cat) && bit_get(s, (unsigned)id) == on) n++;
    return n;
}

static void append_str(resp_buf *b, const char *str) { resp_buf_append(b, str, strlen(str)); }

/* ACLDescribeSelectorCommandRules: +@all or -@all, the categories that
 * fit best, then single commands until a selector built from the text has
 * exactly these bits. */
void acl_describe_commands(const acl_selector *s, resp_buf *out)
{
    acl_selector fake, temp;
    memset(&fake, 0, sizeof(fake));
    memset(&temp, 0, sizeof(temp));
    int additive = !bit_get(s, ACL_FUTURE_BIT);
    append_str(out, additive ? "-@all " : "+@all ");
    selector_op(&fake, additive ? "-@all" : "+@all", 5);
    memcpy(temp.allowed, s->allowed, sizeof(temp.allowed));
    char applied[ACL_CAT_COUNT] = {0};
    for (;;) {
        int best = -1;
        size_t mindiff = INT_MAX, maxsame = 0;
        for (int j = 0; j < ACL_CAT_COUNT; j++) {
            if (applied[j]) continue;
            size_t on = category_count(&temp, 1u << j, 1), off = category_count(&temp, 1u << j, 0);
            size_t diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        change_category(&fake, 1u << best, additive);
        change_category(&temp, 1u << best, !additive);
        resp_buf_appendf(out, "%s@%s ", additive ? "+" : "-", acl_category_names[best]);
        applied[best] = 1;
    }
    for (size_t id = 0; id < acl_registry.n; id++) {
        int userbit = bit_get(s, (unsigned)id), fakebit = bit_get(&fake, (unsigned)id);
        if (userbit != fakebit) {
            resp_buf_appendf(out, "%c%s ", userbit ? '+' : '-', acl_registry.cmds[id].fullname);
            change_perm(&fake, &acl_registry.cmds[id], userbit);
        }
        const acl_firstargs *f = userbit ? NULL : firstargs_of(s, (unsigned)id);
        for (size_t j = 0; f && j < f->n; j++) resp_buf_appendf(out, "+%s|%s ", acl_registry.cmds[id].fullname, f->args[j]);
    }
    out->len--;   /* the last blank */
    firstargs_reset_all(&fake);
}

void acl_describe_pattern(const acl_pattern *p, resp_buf *out)
{
    int all = ACL_PERM_READ | ACL_PERM_WRITE;
    append_str(out, p->flags == all ? "~" : p->flags == ACL_PERM_READ ? "%R~" : "%W~");
    resp_buf_append(out, p->p, p->len);
}

static void describe_selector(const acl_selector *s, resp_buf *out)
{
    if (s->flags & ACL_SEL_ALLKEYS) {
        append_str(out, "~* ");
    } else {
        for (size_t i = 0; i < s->nkeys; i++) {
            acl_describe_pattern(&s->keys[i], out);
            append_str(out, " ");
        }
    }
    if (s->flags & ACL_SEL_ALLCHANNELS) {
        append_str(out, "&* ");
    } else {
        append_str(out, "resetchannels ");
        for (size_t i = 0; i < s->nchans; i++) {
            append_str(out, "&");
            resp_buf_append(out, s->chans[i].p, s->chans[i].len);
            append_str(out, " ");
        }
    }
    acl_describe_commands(s, out);
}

static const struct { unsigned flag; const char *name; } user_flag_names[] = {
    {ACL_USER_ENABLED, "on"}, {ACL_USER_DISABLED, "off"}, {ACL_USER_NOPASS, "nopass"},
    {ACL_USER_SKIP_SANITIZE, "skip-sanitize-payload"}, {ACL_USER_SANITIZE, "sanitize-payload"},
};

size_t acl_user_flag_names(const acl_user *u, const char **names)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(user_flag_names) / sizeof(user_flag_names[0]); i++)
        if (u->flags & user_flag_names[i].flag) names[n++] = user_flag_names[i].name;
    return n;
}

/* ACLDescribeUser, cached until the user changes. */
const char *acl_describe_user(acl_user *u)
{
    if (u->desc) return u->desc;
    resp_buf b;
    resp_buf_init(&b);
    const char *names[8];
    size_t n = acl_user_flag_names(u, names);
    for (size_t i = 0; i < n; i++) resp_buf_appendf(&b, "%s ", names[i]);
    for (size_t i = 0; i < u->npass; i++) resp_buf_appendf(&b, "#%s ", u->pass[i]);
    for (size_t i = 0; i < u->nsel; i++) {
        if (i) append_str(&b, " (");
        describe_selector(&u->sel[i], &b);
        if (i) append_str(&b, ")");
    }
    u->desc = mem_strndup(b.data ? b.data : "", b.len);
    resp_buf_free(&b);
    return u->desc;
}

/* ---- the users of a server ---- */

static acl_state *state(server *s) { return s->acl; }

/* rax order: bytes, a prefix first. */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static size_t user_pos(const acl_state *st, const char *name, size_t len, int *found)
{
    size_t lo = 0, hi = st->nusers;
    *found = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = name_cmp(st->users[mid]->name, st->users[mid]->namelen, name, len);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

acl_user *acl_user_find(server *s, const char *name, size_t len)
{
    int found;
    size_t at = user_pos(state(s), name, len, &found);
    return found ? state(s)->users[at] : NULL;
}

static void user_insert(acl_state *st, acl_user *u)
{
    int found;
    size_t at = user_pos(st, u->name, u->namelen, &found);
    st->users = mem_realloc(st->users, (st->nusers + 1) * sizeof(*st->users));
    memmove(&st->users[at + 1], &st->users[at], (st->nusers - at) * sizeof(*st->users));
    st->users[at] = u;
    st->nusers++;
}

acl_user *acl_default_user(server *s) { return state(s)->def; }
const char *acl_user_name(const acl_user *u) { return u->name; }

int acl_auth_required(server *s)
{
    const acl_user *d = state(s)->def;
    return !(d->flags & ACL_USER_NOPASS) || (d->flags & ACL_USER_DISABLED);
}

void acl_client_reset_auth(client *c)
{
    c->user = c->srv->acl->def;
    client_set_authenticated(c, !acl_auth_required(c->srv));
}

/* ACLFreeUserAndKillClients: its connections go back to the default user,
 * unauthenticated, and are closed (the current one after its reply). */
static void user_kill_clients(server *s, acl_user *u, client *current)
{
    for (client *c = s->clients, *next; c; c = next) {
        next = c->next;
        if (c->user != u) continue;
        c->user = s->acl->def;
        client_set_authenticated(c, 0);
        if (c == current) client_close_after_reply(c);
        else client_close(c);
    }
}

static acl_user *default_user_new(server *s)
{
    acl_user *u = user_new(s, "default", 7);
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    for (size_t i = 0; i < 5; i++) acl_user_op(s, u, rules[i], strlen(rules[i]));
    return u;
}

void acl_set_requirepass(server *s, const char *pass, size_t len)
{
    acl_user *d = state(s)->def;
    acl_user_op(s, d, "resetpass", 9);
    if (!len) {
        acl_user_op(s, d, "nopass", 6);
        return;
    }
    char *op = mem_alloc(len + 2);
    op[0] = '>';
    memcpy(op + 1, pass, len);
    op[len + 1] = '\0';
    acl_user_op(s, d, op, len + 1);
    free(op);
}

/* ACLMergeSelectorArguments: "(+get" "~x)" -> "(+get ~x)". NULL with
 * *bad the argument the unmatched parenthesis opens at. lens: argv's
 * lengths (NULL: C strings); outlens, if not NULL, gets the merged ones
 * (free it), as a rule such as >pass may hold NULs. */
static char **acl_merge_selectors(char **argv, const size_t *lens, int argc, int *merged, size_t **outlens,
                                  int *bad)
{
    char **out = mem_alloc(((size_t)argc + 1) * sizeof(char *));
    size_t *olens = mem_alloc(((size_t)argc + 1) * sizeof(size_t));
    resp_buf sel;
    int open = -1;
    *merged = 0;
    resp_buf_init(&sel);
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j];
        size_t len = lens ? lens[j] : strlen(op);
        if (open < 0 && op[0] == '(' && (len == 0 || op[len - 1] != ')')) {
            open = j;
            sel.len = 0;
            resp_buf_append(&sel, op, len);
            continue;
        }
        if (open >= 0) {
            resp_buf_append(&sel, " ", 1);
            resp_buf_append(&sel, op, len);
            if (len && op[len - 1] == ')') {
                olens[*merged] = sel.len;
                out[(*merged)++] = mem_strndup(sel.data, sel.len);
                open = -1;
            }
            continue;
        }
        olens[*merged] = len;
        out[(*merged)++] = mem_strndup(op, len);
    }
    resp_buf_free(&sel);
    if (open >= 0) {
        for (int i = 0; i < *merged; i++) free(out[i]);
        free(out);
        free(olens);
        *bad = open;
        return NULL;
    }
    if (outlens) *outlens = olens;
    else free(olens);
    return out;
}

void acl_free_args(char **v, int n)
{
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* A selector grants a channel: literal for a pattern subscription, glob
 * matched for a channel. */
static int channel_allowed(const acl_pattern *v, size_t n, const char *ch, size_t len, int is_pattern)
{
    for (size_t i = 0; i < n; i++) {
        if (is_pattern ? (v[i].len == len && !memcmp(v[i].p, ch, len)) : glob_match(v[i].p, v[i].len, ch, len, 0))
            return 1;
    }
    return 0;
}

typedef struct chan_list { acl_pattern *v; size_t n; } chan_list;

static int subscription_revoked(const char *name, size_t len, int is_pattern, void *ctx)
{
    const chan_list *l = ctx;
    return !channel_allowed(l->v, l->n, name, len, is_pattern);
}

/* ACLKillPubsubClientsIfNeeded: after old's rules become new's, close the
 * subscribers of old whose subscriptions new no longer grants. */
static void kill_revoked_subscribers(server *s, const acl_user *next, acl_user *old, client *current)
{
    chan_list upcoming = {NULL, 0};
    for (size_t i = 0; i < next->nsel; i++)
        if (next->sel[i].flags & ACL_SEL_ALLCHANNELS) return;
    for (size_t i = 0; i < next->nsel; i++)
        for (size_t j = 0; j < next->sel[i].nchans; j++)
            pattern_add(&upcoming.v, &upcoming.n, next->sel[i].chans[j].p, next->sel[i].chans[j].len, 0);
    int superset = 1;
    for (size_t i = 0; i < old->nsel && superset; i++) {
        if (old->sel[i].flags & ACL_SEL_ALLCHANNELS) superset = 0;
        for (size_t j = 0; j < old->sel[i].nchans && superset; j++)
            if (!pattern_find(upcoming.v, upcoming.n, old->sel[i].chans[j].p, old->sel[i].chans[j].len)) superset = 0;
    }
    for (client *c = s->clients, *nc; c && !superset; c = nc) {
        nc = c->next;
        if (c->user != old || client_type(c) != CLIENT_TYPE_PUBSUB) continue;
        if (!pubsub_client_any(c, subscription_revoked, &upcoming)) continue;
        if (c == current) client_close_after_reply(c);
        else client_close(c);
    }
    patterns_free(upcoming.v, upcoming.n);
}

/* ACLStringSetUser: every rule applied to a copy first, so that an error
 * changes nothing. NULL, or the error text (free it). */
char *acl_setuser_on(server *s, client *current, const char *name, size_t namelen, char **argv,
                     const size_t *lens, int argc)
{
    int merged = 0, bad = 0;
    size_t *arglens = NULL;
    char **args = acl_merge_selectors(argv, lens, argc, &merged, &arglens, &bad);
    char *err = NULL;
    if (!args) {
        err = mem_alloc(strlen(argv[bad]) + 64);
        sprintf(err, "Unmatched parenthesis in acl selector starting at '%s'.", argv[bad]);
        return err;
    }
    acl_user *u = acl_user_find(s, name, namelen);
    acl_user *temp = user_new(s, name, namelen);
    if (u) user_copy_rules(temp, u);
    for (int j = 0; j < merged; j++) {
        int rc = acl_user_op(s, temp, args[j], arglens[j]);
        if (rc) {
            const char *text = acl_error_text(rc);
            err = mem_alloc(strlen(args[j]) + strlen(text) + 64);
            sprintf(err, "Error in ACL SETUSER modifier '%s': %s", args[j], text);
            break;
        }
    }
    if (!err) {
        if (u) {
            kill_revoked_subscribers(s, temp, u, current);
            user_copy_rules(u, temp);
        } else {
            u = user_new(s, name, namelen);
            user_copy_rules(u, temp);
            user_insert(state(s), u);
        }
    }
    user_free(temp);
    acl_free_args(args, merged);
    free(arglens);
    return err;
}

int acl_deluser(client *c, const char *name, size_t len)
{
    acl_state *st = state(c->srv);
    int found;
    size_t at = user_pos(st, name, len, &found);
    if (!found) return 0;
    acl_user *u = st->users[at];
    memmove(&st->users[at], &st->users[at + 1], (st->nusers - at - 1) * sizeof(*st->users));
    st->nusers--;
    user_kill_clients(c->srv, u, c);
    user_free(u);
    return 1;
}

/* ---- loading and saving ---- */

static void users_free(server *s, acl_user **v, size_t n, client *current)
{
    for (size_t i = 0; i < n; i++) {
        if (s) user_kill_clients(s, v[i], current);
        user_free(v[i]);
    }
    free(v);
}

/* Splits a line on single blanks as sdssplitlen(" ") does (empty words
 * are no-op rules). */
static char **split_spaces(char *line, int *argc)
{
    size_t cap = 8;
    char **v = mem_alloc(cap * sizeof(char *));
    *argc = 0;
    for (char *p = line;;) {
        char *sp = strchr(p, ' ');
        if ((size_t)*argc == cap) v = mem_realloc(v, (cap *= 2) * sizeof(char *));
        v[(*argc)++] = p;
        if (!sp) break;
        *sp = '\0';
        p = sp + 1;
    }
    return v;
}

static char *trim(char *p, const char *set)
{
    while (*p && strchr(set, *p)) p++;
    size_t n = strlen(p);
    while (n && strchr(set, p[n - 1])) p[--n] = '\0';
    return p;
}

/* ACLLoadFromFile: NULL when loaded, else every error found (nothing is
 * changed then). current: the client of ACL LOAD. */
char *acl_load_file(server *s, const char *path, client *current)
{
    FILE *fp = fopen(path, "r");
    resp_buf errors;
    resp_buf_init(&errors);
    if (!fp) {
        resp_buf_appendf(&errors, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        char *e = mem_strndup(errors.data, errors.len);
        resp_buf_free(&errors);
        return e;
    }
    acl_state *st = state(s);
    acl_user **old = st->users;
    size_t nold = st->nusers;
    st->users = NULL;
    st->nusers = 0;
    char *line = NULL;
    size_t cap = 0;
    int linenum = 0;
    while (getline(&line, &cap, fp) >= 0) {
        linenum++;
        char *l = trim(line, " \t\r\n");
        if (!*l) continue;
        int argc;
        char **argv = split_spaces(l, &argc);
        if (strcmp(argv[0], "user") || argc < 2) {
            resp_buf_appendf(&errors, "%s:%d should start with user keyword followed by the username. ", path,
                             linenum);
        } else if (has_space(argv[1], strlen(argv[1]))) {
            resp_buf_appendf(&errors, "'%s:%d: username '%s' contains invalid characters. ", path, linenum, argv[1]);
        } else if (acl_user_find(s, argv[1], strlen(argv[1]))) {
            resp_buf_appendf(&errors, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum);
        } else {
            acl_user *u = user_new(s, argv[1], strlen(argv[1]));
            user_insert(st, u);
            int merged = 0, bad = 0, syntax_error = 0;
            char **args = acl_merge_selectors(argv + 2, NULL, argc - 2, &merged, NULL, &bad);
            if (!args)
                resp_buf_appendf(&errors, "%s:%d: Unmatched parenthesis in selector definition.", path, linenum);
            for (int j = 0; j < merged; j++) {
                char *op = trim(args[j], "\t\r\n");
                int rc = acl_user_op(s, u, op, strlen(op));
                if (rc == ACL_ERR_NOENT) {
                    resp_buf_appendf(&errors, "%s:%d: Error in applying operation '%s': %s. ", path, linenum, op,
                                     acl_error_text(rc));
                } else if (rc && !syntax_error) {
                    resp_buf_appendf(&errors, "%s:%d: %s. ", path, linenum, acl_error_text(rc));
                    syntax_error = 1;
                }
            }
            acl_free_args(args, merged);
        }
        free(argv);
    }
    free(line);
    fclose(fp);
    if (errors.len == 0) {
        /* the default user object stays (clients point at it): it takes
         * the file's rules, or the built-in ones */
        acl_user *fresh = acl_user_find(s, "default", 7);
        acl_user *rules = fresh ? fresh : default_user_new(s);
        user_copy_rules(st->def, rules);
        if (fresh) {
            int found;
            size_t at = user_pos(st, "default", 7, &found);
            st->users[at] = st->def;
            user_free(fresh);
        } else {
            user_free(rules);
            user_insert(st, st->def);
        }
        for (size_t i = 0; i < nold; i++)
            if (old[i] == st->def) old[i] = old[--nold];
        users_free(s, old, nold, current);
        resp_buf_free(&errors);
        return NULL;
    }
    users_free(NULL, st->users, st->nusers, NULL);
    st->users = old;
    st->nusers = nold;
    resp_buf_appendf(&errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was "
                              "performed");
    char *e = mem_strndup(errors.data, errors.len);
    resp_buf_free(&errors);
    return e;
}

/* ACLSaveToFile: a temporary file renamed over path. */
static void users_text(server *s, resp_buf *b)
{
    acl_state *st = state(s);
    for (size_t i = 0; i < st->nusers; i++)
        resp_buf_appendf(b, "user %s %s\n", st->users[i]->name, acl_describe_user(st->users[i]));
}

char *acl_users_text(server *s)
{
    resp_buf b;
    resp_buf_init(&b);
    users_text(s, &b);
    char *text = mem_strndup(b.data ? b.data : "", b.len);
    resp_buf_free(&b);
    return text;
}

int acl_save_file(server *s, const char *path)
{
    resp_buf b;
    resp_buf_init(&b);
    users_text(s, &b);
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%llu", path, (int)getpid(), (unsigned long long)server_real_ms(s));
    int rc = -1, fd = open(tmp, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) {
        log_msg(s, LOG_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, b.data ? b.data : "", b.len) != (ssize_t)b.len) {
        log_msg(s, LOG_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (rename(tmp, path) == -1) {
        log_msg(s, LOG_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        rc = 0;
    }
    if (fd >= 0) close(fd);
    if (rc) unlink(tmp);
    resp_buf_free(&b);
    return rc;
}

/* The config file's user lines ("name rule rule...", one a line). */
static int load_config_users(server *s, char *err, size_t errlen)
{
    const char *lines = s->cfg.acl_users ? s->cfg.acl_users : "";
    while (*lines) {
        const char *nl = strchr(lines, '\n');
        size_t len = nl ? (size_t)(nl - lines) : strlen(lines);
        char *line = mem_strndup(lines, len);
        int argc;
        char **argv = split_spaces(line, &argc);
        acl_user *u = acl_user_find(s, argv[0], strlen(argv[0]));
        if (!u) {
            u = user_new(s, argv[0], strlen(argv[0]));
            user_insert(state(s), u);
        } else {
            acl_user_op(s, u, "reset", 5);   /* the default user */
        }
        int merged = 0, bad = 0, rc = 0;
        char **args = acl_merge_selectors(argv + 1, NULL, argc - 1, &merged, NULL, &bad);
        for (int j = 0; args && j < merged && !rc; j++) {
            rc = acl_user_op(s, u, args[j], strlen(args[j]));
            if (rc) snprintf(err, errlen, "Error loading ACL rule '%s' for the user named '%s': %s", args[j], argv[0],
                             acl_error_text(rc));
        }
        if (!args) snprintf(err, errlen, "Unmatched parenthesis in acl selector starting at '%s'.", argv[1 + bad]);
        if (!rc && args && (u->flags & ACL_USER_DISABLED))
            log_msg(s, LOG_NOTICE, "The user '%s' is disabled (there is no 'on' modifier in the user description). "
                                   "Make sure this is not a configuration error.", argv[0]);
        acl_free_args(args, merged);
        free(argv);
        free(line);
        if (rc || !args) return -1;
        lines += len + (nl != NULL);
    }
    return 0;
}

void acl_init(server *s)
{
    acl_table_init();
    s->acl = mem_calloc(1, sizeof(*s->acl));
    s->acl->def = default_user_new(s);
    user_insert(s->acl, s->acl->def);
    acl_set_requirepass(s, s->cfg.requirepass.s, s->cfg.requirepass.len);
}

int acl_load_users(server *s, char *err, size_t errlen)
{
    if (s->cfg.aclfile && s->cfg.aclfile[0] && s->cfg.acl_users && s->cfg.acl_users[0]) {
        snprintf(err, errlen, "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
                              "path is invalid. This setup is very likely to lead to configuration errors and security "
                              "holes, please define either an ACL file or declare users directly in your redis.conf, "
                              "but not both.");
        return -1;
    }
    if (load_config_users(s, err, errlen) != 0) return -1;
    if (s->cfg.aclfile && s->cfg.aclfile[0]) {
        char *e = acl_load_file(s, s->cfg.aclfile, NULL);
        if (e) {
            snprintf(err, errlen, "Aborting Redis startup because of ACL errors: %s", e);
            free(e);
            return -1;
        }
    }
    return 0;
}

void acl_free(server *s)
{
    if (!s->acl) return;
    users_free(NULL, s->acl->users, s->acl->nusers, NULL);
    acl_log_reset(s);
    free(s->acl->log);
    free(s->acl);
    s->acl = NULL;
}

/* ---- authentication ---- */

static int time_independent_eq(const char *a, const char *b, size_t len)
{
    unsigned diff = 0;
    for (size_t i = 0; i < len; i++) diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* ACLCheckUserCredentials */
static int credentials_ok(const acl_user *u, const resp_slice *pass)
{
    if (!u || (u->flags & ACL_USER_DISABLED)) return 0;
    if (u->flags & ACL_USER_NOPASS) return 1;
    char hash[ACL_HASH_LEN + 1];
    acl_sha256_hex(pass->ptr, pass->len, hash);
    int ok = 0;
    for (size_t i = 0; i < u->npass; i++) ok |= time_independent_eq(hash, u->pass[i], ACL_HASH_LEN);
    return ok;
}

int acl_authenticate(client *c, const resp_slice *user, const resp_slice *pass)
{
    acl_user *u = acl_user_find(c->srv, user->ptr, user->len);
    if (credentials_ok(u, pass)) {
        c->user = u;
        client_set_authenticated(c, 1);
        return 1;
    }
    acl_log_add(c, ACL_DENIED_AUTH, (c->flags & CLIENT_MULTI) ? ACL_LOG_CTX_MULTI : ACL_LOG_CTX_TOPLEVEL,
                c->argv[0].ptr, c->argv[0].len, user->ptr, user->len);
    return 0;
}

/* ---- the permission check ---- */

/* Which key arguments a command touches, with Redis's key-spec flags. */
typedef struct key_ref { int pos; unsigned flags; } key_ref;
#define MAX_KEY_REFS 64

typedef struct key_result {
    key_ref small[MAX_KEY_REFS];
    key_ref *v;
    int n, cap;
} key_result;

static void keys_add(key_result *r, int pos, unsigned flags)
{
    if (r->n == r->cap) {
        int cap = r->cap * 2;
        if (r->v == r->small) {
            r->v = mem_alloc((size_t)cap * sizeof(key_ref));
            memcpy(r->v, r->small, sizeof(r->small));
        } else {
            r->v = mem_realloc(r->v, (size_t)cap * sizeof(key_ref));
        }
        r->cap = cap;
    }
    r->v[r->n].pos = pos;
    r->v[r->n++].flags = flags;
}

static int parse_int(const resp_slice *a, long long *out) { return store_str2ll(a->ptr, a->len, out); }

/* getKeysUsingKeySpecs: -1 when a spec cannot say (the caller falls back
 * to the command's own rule). */
static int keys_from_specs(const acl_command_spec *spec, int arity, const resp_slice *argv, int argc, key_result *r)
{
    for (int j = 0; j < spec->nspecs; j++) {
        const acl_key_spec *ks = &spec->specs[j];
        if (ks->flags & ACL_KS_NOT_KEY) continue;
        if (ks->flags & ACL_KS_INCOMPLETE) return -1;
        int first = 0, last, step;
        if (ks->bs_index > 0) {
            first = ks->bs_index;
        } else if (ks->bs_keyword) {
            int start = ks->bs_startfrom > 0 ? ks->bs_startfrom : argc + ks->bs_startfrom;
            int end = ks->bs_startfrom > 0 ? argc - 1 : 1;
            for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
                if (i >= argc || i < 1) break;
                if (arg_is(&argv[i], ks->bs_keyword)) {
                    first = i + 1;
                    break;
                }
            }
            if (!first) continue;
        } else {
            return -1;
        }
        if (ks->fk == ACL_FK_RANGE) {
            step = ks->b;
            if (ks->a >= 0) last = first + ks->a;
            else if (!ks->c) last = argc + ks->a;
            else last = first + ((argc - first) / ks->c + ks->a);
        } else if (ks->fk == ACL_FK_KEYNUM) {
            long long numkeys;
            step = ks->c;
            if (first + ks->a >= argc || !parse_int(&argv[first + ks->a], &numkeys) || numkeys < 0) return -1;
            first += ks->b;
            last = first + (int)numkeys - 1;
        } else {
            return -1;
        }
        if (last >= argc || last < first || first >= argc) return -1;   /* numkeys 0 too, as Redis */
        for (int i = first; i <= last; i += step) {
            if (i >= argc || i < first) {
                if (arity < 0) continue;
                break;
            }
            keys_add(r, i, ks->flags);
        }
    }
    return r->n;
}

/* The getkeys procs of the commands whose specs are incomplete (SORT's
 * STORE) or whose flags depend on the arguments (SET GET, BITFIELD GET). */
static void keys_by_proc(const char *name, const resp_slice *argv, int argc, key_result *r)
{
    if (!strcmp(name, "set")) {
        unsigned flags = ACL_KS_OW | ACL_KS_UPDATE;
        for (int i = 3; i < argc; i++)
            if (arg_is(&argv[i], "get")) flags = ACL_KS_RW | ACL_KS_ACCESS | ACL_KS_UPDATE;
        keys_add(r, 1, flags);
    } else if (!strcmp(name, "bitfield")) {
        int readonly = 1;
        for (int i = 2; i < argc; i++) {
            int rem = argc - i - 1;
            if (arg_is(&argv[i], "get") && rem >= 2) {
                i += 2;
            } else if ((arg_is(&argv[i], "set") || arg_is(&argv[i], "incrby")) && rem >= 3) {
                readonly = 0;
                break;
            } else if (arg_is(&argv[i], "overflow") && rem >= 1) {
                i += 1;
            } else {
                readonly = 0;
                break;
            }
        }
        keys_add(r, 1, readonly ? ACL_KS_RO | ACL_KS_ACCESS : ACL_KS_RW | ACL_KS_ACCESS | ACL_KS_UPDATE);
    } else if (!strcmp(name, "migrate")) {
        int first = 3, num = 1;   /* the key, or what follows KEYS when the key is "" */
        for (int i = 6; i < argc; i++) {
            if (arg_is(&argv[i], "auth")) {
                i += 1;
            } else if (arg_is(&argv[i], "auth2")) {
                i += 2;
            } else if (arg_is(&argv[i], "keys")) {
                if (argv[3].len > 0) return;
                first = i + 1, num = argc - first;
                break;
            }
        }
        for (int i = 0; i < num; i++) keys_add(r, first + i, ACL_KS_RW | ACL_KS_ACCESS | ACL_KS_DELETE);
    } else if (!strcmp(name, "sort") || !strcmp(name, "sort_ro")) {
        int dest = 0;
        for (int i = 2; i < argc; i++) {
            if (arg_is(&argv[i], "limit")) i += 2;
            else if (arg_is(&argv[i], "store") && i + 1 < argc) dest = i + 1;
            else if (arg_is(&argv[i], "get") || arg_is(&argv[i], "by")) i += 1;
        }
        keys_add(r, 1, ACL_KS_RO | ACL_KS_ACCESS);
        if (dest) keys_add(r, dest, ACL_KS_OW | ACL_KS_UPDATE);
    }
}

static void command_keys(const acl_cmd *e, const resp_slice *argv, int argc, key_result *r)
{
    r->v = r->small;
    r->n = 0;
    r->cap = MAX_KEY_REFS;
    const acl_command_spec *spec = e->spec;
    if (!spec) return;
    int varflags = 0;
    for (int j = 0; j < spec->nspecs; j++) varflags |= (spec->specs[j].flags & ACL_KS_VARIABLE_FLAGS) != 0;
    if (!varflags && keys_from_specs(spec, e->cmd->arity, argv, argc, r) >= 0) return;
    r->n = 0;
    keys_by_proc(e->fullname, argv, argc, r);
}

int acl_command_keys_each(const command *cmd, const resp_slice *argv, int argc, acl_key_fn fn, void *ctx)
{
    const acl_cmd *e = acl_command_of(cmd);
    key_result r;
    if (!e) return 0;
    command_keys(e, argv, argc, &r);
    for (int i = 0; i < r.n; i++) fn(r.v[i].pos, r.v[i].flags, ctx);
    int n = r.n;
    if (r.v != r.small) free(r.v);
    return n;
}

/* The key permissions (ACL_PERM_*) a key spec's flags ask for. */
static unsigned perm_needed(unsigned ksflags)
{
    unsigned need = 0;
    if (ksflags & ACL_KS_ACCESS) need |= ACL_PERM_READ;
    if (ksflags & (ACL_KS_INSERT | ACL_KS_DELETE | ACL_KS_UPDATE)) need |= ACL_PERM_WRITE;
    return need;
}

static int key_allowed(const acl_selector *s, const char *key, size_t len, unsigned ksflags)
{
    if (s->flags & ACL_SEL_ALLKEYS) return 1;
    int need = (int)perm_needed(ksflags);
    for (size_t i = 0; i < s->nkeys; i++) {
        if ((s->keys[i].flags & need) != need) continue;
        if (glob_match(s->keys[i].p, s->keys[i].len, key, len, 0)) return 1;
    }
    return 0;
}

/* commands_with_channels: (P)SUBSCRIBE's and PUBLISH's channels; the
 * unsubscribing ones are never checked. */
static int channel_args(const acl_cmd *e, int argc, int *first, int *last, int *is_pattern)
{
    const char *n = e->fullname;
    *is_pattern = !strcmp(n, "psubscribe");
    if (!strcmp(n, "subscribe") || !strcmp(n, "ssubscribe") || *is_pattern) {
        *first = 1, *last = argc - 1;
        return 1;
    }
    if (!strcmp(n, "publish") || !strcmp(n, "spublish")) {
        *first = 1, *last = 1;
        return 1;
    }
    return 0;
}

/* ACLSelectorCheckCmd */
static int selector_check(const acl_selector *s, const acl_cmd *e, const resp_slice *argv, int argc, int *errpos,
                          key_result *keys, int *keys_done)
{
    if (!(s->flags & ACL_SEL_ALLCOMMANDS) && !(e->cmd->flags & CMD_NOAUTH) && !bit_get(s, e->id)) {
        const acl_firstargs *f = firstargs_of(s, e->id);
        int idx = e->parent >= 0 ? 2 : 1;
        int ok = 0;
        for (size_t i = 0; f && argc > idx && i < f->n && !ok; i++) ok = arg_is(&argv[idx], f->args[i]);
        if (!ok) return ACL_DENIED_CMD;
    }
    if (!(s->flags & ACL_SEL_ALLKEYS) && e->spec && e->spec->nspecs) {
        if (!*keys_done) {
            command_keys(e, argv, argc, keys);
            *keys_done = 1;
        }
        for (int j = 0; j < keys->n; j++) {
            const resp_slice *k = &argv[keys->v[j].pos];
            if (!key_allowed(s, k->ptr, k->len, keys->v[j].flags)) {
                *errpos = keys->v[j].pos;
                return ACL_DENIED_KEY;
            }
        }
    }
    int first, last, is_pattern;
    if (!(s->flags & ACL_SEL_ALLCHANNELS) && channel_args(e, argc, &first, &last, &is_pattern)) {
        for (int i = first; i <= last; i++) {
            if (!channel_allowed(s->chans, s->nchans, argv[i].ptr, argv[i].len, is_pattern)) {
                *errpos = i;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

/* ACLCheckAllUserCommandPerm: the first selector that allows wins; else
 * the most relevant error, the last argument for a tie. */
int acl_check(const acl_user *u, const acl_cmd *e, const resp_slice *argv, int argc, int *errpos)
{
    if (u->unrestricted) return ACL_OK;
    key_result keys;
    int keys_done = 0, relevant = ACL_DENIED_CMD, last_idx = 0, rc = ACL_OK;
    keys.v = keys.small;
    for (size_t i = 0; i < u->nsel; i++) {
        int idx = 0;
        int r = selector_check(&u->sel[i], e, argv, argc, &idx, &keys, &keys_done);
        if (r == ACL_OK) {
            rc = ACL_OK;
            goto done;
        }
        if (r > relevant || (r == relevant && idx > last_idx)) {
            relevant = r;
            last_idx = idx;
        }
    }
    *errpos = last_idx;
    rc = relevant;
done:
    if (keys_done && keys.v != keys.small) free(keys.v);
    return rc;
}

/* ACLUserCheckCmdWithUnrestrictedKeyAccess: a selector that allows the
 * command also grants the access of ksflags to every key ("*"). */
int acl_all_keys_allowed(const client *c, const command *cmd, unsigned ksflags)
{
    const acl_user *u = c->user;
    const acl_cmd *e = acl_command_of(cmd);
    if (u->unrestricted || !e) return 1;
    key_result keys;
    int keys_done = 0, ok = 0;
    unsigned need = perm_needed(ksflags);
    keys.v = keys.small;
    for (size_t i = 0; i < u->nsel && !ok; i++) {
        const acl_selector *s = &u->sel[i];
        int idx = 0;
        if (selector_check(s, e, c->argv, c->argc, &idx, &keys, &keys_done) != ACL_OK) continue;
        ok = (s->flags & ACL_SEL_ALLKEYS) != 0;
        for (size_t j = 0; j < s->nkeys && !ok; j++)
            ok = (s->keys[j].flags & need) == need && s->keys[j].len == 1 && s->keys[j].p[0] == '*';
    }
    if (keys_done && keys.v != keys.small) free(keys.v);
    return ok;
}

/* The command Redis checks: a container's subcommand when there is one. */
static const acl_cmd *checked_command(const command *cmd, const command *sub)
{
    return acl_command_of(sub ? sub : cmd);
}

/* Checks cmd (a container's subcommand looked up from argv) for c's user
 * and logs a denial by logger with ctx: ACL_OK or the denial. */
static int check_and_log(client *c, client *logger, const command *cmd, const command *sub, const resp_slice *argv,
                         int argc, int ctx)
{
    if (!sub && (cmd->flags & CMD_CONTAINER) && argc >= 2) sub = subcommand_lookup(cmd, argv[1].ptr, argv[1].len);
    const acl_cmd *e = checked_command(cmd, sub);
    int pos = 0;
    int rc = e ? acl_check(c->user, e, argv, argc, &pos) : ACL_OK;
    if (rc == ACL_OK) return ACL_OK;
    const char *obj = rc == ACL_DENIED_CMD ? e->fullname : argv[pos].ptr;
    size_t objlen = rc == ACL_DENIED_CMD ? strlen(e->fullname) : argv[pos].len;
    acl_log_add(logger, rc, ctx, obj, objlen, NULL, 0);
    return rc;
}

int acl_user_may(const acl_user *u, const command *cmd, const command *sub, const resp_slice *argv, int argc)
{
    const acl_cmd *e = checked_command(cmd, sub);
    int pos = 0;
    return !e || acl_check(u, e, argv, argc, &pos) == ACL_OK;
}

int acl_admit(client *c, const command *cmd, const command *sub, int ctx)
{
    if (cmd->flags & CMD_CONTAINER && !sub && c->argc >= 2) {
        sub = subcommand_lookup(cmd, c->argv[1].ptr, c->argv[1].len);
        if (!sub || !command_arity_ok(sub, c->argc)) return 1;   /* the container's error comes first */
    }
    const command *last = c->last_cmd, *last_sub = c->last_sub;
    c->last_cmd = cmd;   /* Redis names the refused command in the log's client info */
    c->last_sub = sub;
    int rc = check_and_log(c, c, cmd, sub, c->argv, c->argc, ctx);
    if (rc == ACL_OK) {
        c->last_cmd = last;
        c->last_sub = last_sub;
        return 1;
    }
    const acl_cmd *e = checked_command(cmd, sub);
    if (rc == ACL_DENIED_CMD)
        reply_errorf(c, "NOPERM this user has no permissions to run the '%s' command", e->fullname);
    else if (rc == ACL_DENIED_KEY)
        reply_error(c, "NOPERM this user has no permissions to access one of the keys used as arguments");
    else
        reply_error(c, "NOPERM this user has no permissions to access one of the channels used as arguments");
    return 0;
}

int acl_exec_admit(client *c)
{
    int rc = check_and_log(c, c, c->cmd, NULL, c->argv, c->argc, ACL_LOG_CTX_MULTI);
    if (rc == ACL_OK) return 1;
    reply_errorf(c, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                    "call. This command is no longer allowed for the following reason: %s",
                 rc == ACL_DENIED_CMD ? "no permission to execute the command or subcommand"
                 : rc == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                        : "no permission to access one of the channels used as arguments");
    return 0;
}

const char *acl_denial_text(int rc)
{
    switch (rc) {
    case ACL_DENIED_CMD: return "can't run this command or subcommand";
    case ACL_DENIED_KEY: return "can't access at least one of the keys mentioned in the command arguments";
    case ACL_DENIED_CHANNEL: return "can't publish to the channel mentioned in the command";
    default: return "lacking the permissions for the command";
    }
}

int acl_script_check(client *caller, const command *cmd, const resp_slice *argv, int argc)
{
    return check_and_log(caller, caller, cmd, NULL, argv, argc, ACL_LOG_CTX_LUA);
}

/* ---- the ACL LOG ---- */

#define LOG_GROUPING_MS 60000

static void log_entry_free(acl_log_entry *e)
{
    free(e->object);
    free(e->username);
    free(e->cinfo);
}

void acl_log_reset(server *s)
{
    for (size_t i = 0; i < s->acl->nlog; i++) log_entry_free(&s->acl->log[i]);
    s->acl->nlog = 0;
}

/* addACLLogEntry: a denial like one of the last 10 (same reason, context,
 * object, user, within 60 s) bumps that entry to the front. */
void acl_log_add(client *c, int reason, int ctx, const char *obj, size_t objlen, const char *user, size_t userlen)
{
    server *s = c->srv;
    acl_state *st = s->acl;
    if (!user) {
        user = c->user->name;
        userlen = c->user->namelen;
    }
    uint64_t now = server_real_ms(s);
    resp_buf info;
    resp_buf_init(&info);
    client_info_line(c, &info);
    if (info.len && info.data[info.len - 1] == '\n') info.len--;
    char *cinfo = mem_strndup(info.data ? info.data : "", info.len);
    resp_buf_free(&info);
    for (size_t i = 0; i < st->nlog && i < 10; i++) {
        acl_log_entry *e = &st->log[i];
        uint64_t delta = e->ctime_ms > now ? e->ctime_ms - now : now - e->ctime_ms;
        if (e->reason != reason || e->context != ctx || delta > LOG_GROUPING_MS || e->objlen != objlen ||
            memcmp(e->object, obj, objlen) || e->userlen != userlen || memcmp(e->username, user, userlen))
            continue;
        acl_log_entry hit = *e;
        memmove(&st->log[1], &st->log[0], i * sizeof(*e));
        free(hit.cinfo);
        hit.cinfo = cinfo;
        hit.ctime_ms = now;
        hit.count++;
        st->log[0] = hit;
        return;
    }
    size_t max = s->cfg.acllog_max_len > 0 ? (size_t)s->cfg.acllog_max_len : 0;
    if (st->nlog == st->logcap) {
        st->logcap = st->logcap ? st->logcap * 2 : 16;
        st->log = mem_realloc(st->log, st->logcap * sizeof(*st->log));
    }
    memmove(&st->log[1], &st->log[0], st->nlog * sizeof(*st->log));
    acl_log_entry *e = &st->log[0];
    memset(e, 0, sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->context = ctx;
    e->object = mem_strndup(obj, objlen);
    e->objlen = objlen;
    e->username = mem_strndup(user, userlen);
    e->userlen = userlen;
    e->ctime_ms = now;
    e->cinfo = cinfo;
    st->nlog++;
    while (st->nlog > max) log_entry_free(&st->log[--st->nlog]);
}

/* ---- GENPASS ---- */

void acl_random_hex(server *s, char *dst, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char buf[1024];
    size_t need = (n + 1) / 2;
    int fd = open("/dev/urandom", O_RDONLY);
    ssize_t got = fd >= 0 ? read(fd, buf, need) : -1;
    if (fd >= 0) close(fd);
    for (size_t i = got < 0 ? 0 : (size_t)got; i < need; i++) buf[i] = (unsigned char)server_random(s);
    for (size_t i = 0; i < n; i++) dst[i] = digits[(buf[i / 2] >> ((i % 2) ? 0 : 4)) & 15];
}
