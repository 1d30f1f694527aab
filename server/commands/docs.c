/* docs.c - COMMAND DOCS: Redis's own maps (meta_table.c) for Redis's commands;
 * for latchd's own, the one-line argument hints of the command table
 * ("key [key ...]", "[NX|XX] [EX seconds|PX milliseconds]") made into the
 * structured "arguments" from which redis-cli draws hints. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define DOC_MAX_NODES 64
#define DOC_MAX_KIDS 16

typedef struct doc_arg {
    const char *name, *token;   /* slices into the hint */
    size_t name_len, token_len;
    const char *type;
    int optional, multiple;
    int kids[DOC_MAX_KIDS];
    int nkids;
} doc_arg;

typedef struct doc_tree {
    doc_arg nodes[DOC_MAX_NODES];
    int n;
} doc_tree;

/* Splits s at depth-0 occurrences of sep; returns the number of parts. */
static int split(const char *s, size_t len, char sep, const char **part, size_t *plen, int max)
{
    int depth = 0, n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len && n < max; i++) {
        if (i < len && s[i] == '[') depth++;
        if (i < len && s[i] == ']') depth--;
        if (i < len && (s[i] != sep || depth != 0)) continue;
        if (i > start) part[n] = s + start, plen[n++] = i - start;
        start = i + 1;
    }
    return n;
}

static int is_token(const char *w, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (islower((unsigned char)w[i])) return 0;
    return 1;
}

static const char *infer_type(const char *w, size_t len)
{
    static const char *ints[] = {"seconds", "milliseconds", "count", "numreplicas", "timeout", "index",
                                 "cursor", "increment", "decrement", "protover", "unix-time-seconds",
                                 "unix-time-milliseconds", "start", "stop", "offset"};
    if (len >= 3 && memmem(w, len, "key", 3)) return "key";
    if (len == 7 && !memcmp(w, "pattern", 7)) return "pattern";
    if (len == 5 && !memcmp(w, "score", 5)) return "double";
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        if (strlen(ints[i]) == len && !memcmp(w, ints[i], len)) return "integer";
    return "string";
}

static int new_node(doc_tree *t)
{
    if (t->n >= DOC_MAX_NODES) return -1;
    memset(&t->nodes[t->n], 0, sizeof(doc_arg));
    return t->n++;
}

static int parse_items(doc_tree *t, int parent, const char *s, size_t len);

/* One alternative: "TOKEN", "name", "TOKEN name", or a longer sequence. */
static int parse_seq(doc_tree *t, const char *s, size_t len)
{
    const char *w[DOC_MAX_KIDS];
    size_t wl[DOC_MAX_KIDS];
    int nw = split(s, len, ' ', w, wl, DOC_MAX_KIDS);
    int id = new_node(t);
    if (id < 0) return -1;
    doc_arg *a = &t->nodes[id];
    if (nw == 1 && w[0][0] != '[') {
        int tok = is_token(w[0], wl[0]);
        a->name = w[0], a->name_len = wl[0];
        a->type = tok ? "pure-token" : infer_type(w[0], wl[0]);
        if (tok) a->token = w[0], a->token_len = wl[0];
    } else if (nw == 2 && is_token(w[0], wl[0]) && w[1][0] != '[' && !is_token(w[1], wl[1])) {
        a->name = w[1], a->name_len = wl[1];
        a->token = w[0], a->token_len = wl[0];
        a->type = infer_type(w[1], wl[1]);
    } else {
        a->name = w[0], a->name_len = wl[0];
        a->type = "block";
        if (parse_items(t, id, s, len) < 0) return -1;
    }
    return id;
}

/* "(x ...)": a block named after its first word; Redis documents
 * PSUBSCRIBE's patterns that way. */
static int parse_group(doc_tree *t, const char *s, size_t len)
{
    int id = new_node(t);
    if (id < 0) return -1;
    const char *sp = memchr(s, ' ', len);
    t->nodes[id].name = s, t->nodes[id].name_len = sp ? (size_t)(sp - s) : len, t->nodes[id].type = "block";
    return parse_items(t, id, s, len) < 0 ? -1 : id;
}

/* One item: an optional "[...]", a group "(...)" or a bare alternative
 * list "A|B". */
static int parse_item(doc_tree *t, const char *s, size_t len)
{
    if (len >= 2 && s[0] == '(' && s[len - 1] == ')') return parse_group(t, s + 1, len - 2);
    int optional = len >= 2 && s[0] == '[' && s[len - 1] == ']';
    if (optional) s++, len -= 2;
    const char *alt[DOC_MAX_KIDS];
    size_t al[DOC_MAX_KIDS];
    int nalt = split(s, len, '|', alt, al, DOC_MAX_KIDS);
    int id;
    if (nalt == 1) {
        id = parse_seq(t, alt[0], al[0]);
        /* "[x [x ...]]" is one optional, repeatable x, not a block around
         * it: that is how Redis documents INFO's sections or UNSUBSCRIBE's
         * channels. */
        if (id >= 0 && optional && !strcmp(t->nodes[id].type, "block") && t->nodes[id].nkids == 1)
            id = t->nodes[id].kids[0];
    } else {
        id = new_node(t);
        if (id < 0) return -1;
        t->nodes[id].name = "choice", t->nodes[id].name_len = 6, t->nodes[id].type = "oneof";
        for (int i = 0; i < nalt && t->nodes[id].nkids < DOC_MAX_KIDS; i++) {
            int k = parse_seq(t, alt[i], al[i]);
            if (k < 0) return -1;
            t->nodes[id].kids[t->nodes[id].nkids++] = k;
        }
    }
    if (id >= 0) t->nodes[id].optional = optional;
    return id;
}

/* "[x y ...]" after "x y" means the preceding group repeats. */
static int is_repeat_of(const char *s, size_t len, const char *prev, size_t prevlen)
{
    return len == prevlen + 6 && s[0] == '[' && !memcmp(s + 1, prev, prevlen) && !memcmp(s + 1 + prevlen, " ...]", 5);
}

static int parse_items(doc_tree *t, int parent, const char *s, size_t len)
{
    const char *it[DOC_MAX_KIDS];
    size_t il[DOC_MAX_KIDS];
    int n = split(s, len, ' ', it, il, DOC_MAX_KIDS);
    doc_arg *p = &t->nodes[parent];
    for (int i = 0; i < n; i++) {
        int j;
        for (j = 1; j <= p->nkids && j <= i; j++) {
            size_t span = (size_t)(it[i - 1] + il[i - 1] - it[i - j]);
            if (is_repeat_of(it[i], il[i], it[i - j], span)) break;
        }
        if (j <= p->nkids && j <= i) {   /* fold the last j items into one repeating argument */
            int first = p->nkids - j;
            if (j == 1) {
                t->nodes[p->kids[first]].multiple = 1;
                continue;
            }
            int b = new_node(t);
            if (b < 0) return -1;
            p = &t->nodes[parent];
            t->nodes[b] = (doc_arg){.name = "data", .name_len = 4, .type = "block", .multiple = 1, .nkids = j};
            memcpy(t->nodes[b].kids, &p->kids[first], (size_t)j * sizeof(int));
            p->kids[first] = b;
            p->nkids = first + 1;
            continue;
        }
        int k = parse_item(t, it[i], il[i]);
        if (k < 0) return -1;
        p = &t->nodes[parent];
        if (p->nkids < DOC_MAX_KIDS) p->kids[p->nkids++] = k;
    }
    return 0;
}

static void reply_lower(client *c, const char *s, size_t len)
{
    char buf[64];
    if (len > sizeof(buf)) len = sizeof(buf);
    for (size_t i = 0; i < len; i++) buf[i] = (char)tolower((unsigned char)s[i]);
    reply_bulk(c, buf, len);
}

static void reply_arg(client *c, const doc_tree *t, int id)
{
    const doc_arg *a = &t->nodes[id];
    int nflags = a->optional + a->multiple;
    int is_key = strcmp(a->type, "key") == 0;
    reply_map(c, 2 + (a->token != NULL) + (nflags > 0) + (a->nkids > 0) + is_key);
    reply_bulk_cstr(c, "name");
    reply_lower(c, a->name, a->name_len);
    reply_bulk_cstr(c, "type");
    reply_bulk_cstr(c, a->type);
    if (is_key) {
        reply_bulk_cstr(c, "key_spec_index");
        reply_int(c, 0);
    }
    if (a->token) {
        reply_bulk_cstr(c, "token");
        reply_bulk(c, a->token, a->token_len);
    }
    if (nflags) {
        reply_bulk_cstr(c, "flags");
        reply_set(c, nflags);
        if (a->optional) reply_status(c, "optional");
        if (a->multiple) reply_status(c, "multiple");
    }
    if (a->nkids) {
        reply_bulk_cstr(c, "arguments");
        reply_array(c, a->nkids);
        for (int i = 0; i < a->nkids; i++) reply_arg(c, t, a->kids[i]);
    }
}

void command_fullname(const command *container, const command *cmd, char *dst, size_t len)
{
    if (container) snprintf(dst, len, "%s|%s", container->name, cmd->name);
    else snprintf(dst, len, "%s", cmd->name);
}

static int meta_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const command_meta *)elem)->name);
}

const command_meta *command_meta_of(const char *fullname)
{
    return bsearch(fullname, command_metas, command_metas_count, sizeof(command_metas[0]), meta_cmp);
}

static void reply_subcommand_docs(client *c, const command *cmd, long long nsubs)
{
    reply_bulk_cstr(c, "subcommands");
    reply_map(c, nsubs);
    for (const command *sub = cmd->subs; sub->name; sub++) command_doc_reply(c, sub, cmd);
}

void command_doc_reply(client *c, const command *cmd, const command *container)
{
    char name[64];
    long long nsubs = 0;
    for (const command *sub = cmd->subs; sub && sub->name; sub++) nsubs++;
    command_fullname(container, cmd, name, sizeof(name));
    reply_bulk_cstr(c, name);
    const command_meta *meta = command_meta_of(name);
    if (meta) {
        reply_map(c, meta->doc_pairs + (nsubs > 0));
        reply_resp3(c, meta->doc, meta->doc_len);
        if (nsubs) reply_subcommand_docs(c, cmd, nsubs);
        return;
    }
    doc_tree t = {.n = 0};
    int root = new_node(&t);
    int has_args = cmd->args && parse_items(&t, root, cmd->args, strlen(cmd->args)) == 0;
    reply_map(c, 3 + has_args + (nsubs > 0));
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary);
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, cmd->since);
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, container ? container->group : cmd->group);
    if (has_args) {
        reply_bulk_cstr(c, "arguments");
        reply_array(c, t.nodes[root].nkids);
        for (int i = 0; i < t.nodes[root].nkids; i++) reply_arg(c, &t, t.nodes[root].kids[i]);
    }
    if (nsubs) reply_subcommand_docs(c, cmd, nsubs);
}
