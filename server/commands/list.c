/* list.c - list commands (LPUSH ... LTRIM): Redis 7.0's argument
 * checks in Redis's order, its replies and keyspace events. A list key
 * never exists empty: the removal that empties it deletes it ("del"). */
#include "commands.h"
#include "list.h"

static void emit_elem(const char *v, size_t len, void *ctx) { reply_bulk(ctx, v, len); }

static void push_generic(client *c, int where)
{
    store_key *k = db_write_create(c, &c->argv[1], STORE_LIST);
    if (!k) return;
    for (int i = 2; i < c->argc; i++)
        store_list_push(client_db(c), k, where, c->argv[i].ptr, c->argv[i].len);
    db_notify(c, STORE_EV_LIST, where == STORE_HEAD ? "lpush" : "rpush", &c->argv[1]);
    reply_int(c, (long long)store_list_len(k));
}

void cmd_lpush(client *c) { push_generic(c, STORE_HEAD); }
void cmd_rpush(client *c) { push_generic(c, STORE_TAIL); }

/* The popped elements are replied before they go; without a count one
 * bulk (nil when missing), with one an array (a null array when missing). */
static void pop_generic(client *c, int where)
{
    long long count = 1;
    int has_count = c->argc == 3, head = where == STORE_HEAD;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (has_count && !arg_positive_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        if (has_count)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    size_t len = store_list_len(k), n = (unsigned long long)count < len ? (size_t)count : len;
    if (has_count) reply_array(c, (long long)n);
    store_list_range(k, head ? 0 : len - 1, n, !head, emit_elem, c);
    store_list_del_range(client_db(c), k, head ? 0 : len - n, n);
    db_notify(c, STORE_EV_LIST, head ? "lpop" : "rpop", &c->argv[1]);
    if (n == len) db_delete_emptied(c, k);
}

void cmd_lpop(client *c) { pop_generic(c, STORE_HEAD); }
void cmd_rpop(client *c) { pop_generic(c, STORE_TAIL); }

void cmd_llen(client *c)
{
    store_key *k;
    if (db_read_typed(c, &c->argv[1], STORE_LIST, &k))
        reply_int(c, k ? (long long)store_list_len(k) : 0);
}

/* The key is looked at before the index, as in Redis. */
void cmd_lindex(client *c)
{
    store_key *k;
    long long idx;
    size_t len;
    if (!db_read_typed(c, &c->argv[1], STORE_LIST, &k)) return;
    if (!k) {
        reply_null(c);
        return;
    }
    if (!arg_ll_or_reply(c, &c->argv[2], &idx)) return;
    const char *v = store_list_index(k, idx, &len);
    if (v)
        reply_bulk(c, v, len);
    else
        reply_null(c);
}

/* argv[2..3] as start/stop: 0 after an error reply. */
static int parse_start_stop(client *c, long long *start, long long *end)
{
    return arg_ll_or_reply(c, &c->argv[2], start) && arg_ll_or_reply(c, &c->argv[3], end);
}

void cmd_lrange(client *c)
{
    long long start, end;
    size_t first, n = 0;
    store_key *k;
    if (!parse_start_stop(c, &start, &end)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_LIST, &k)) return;
    if (k && !arg_index_range(start, end, store_list_len(k), &first, &n)) n = 0;
    reply_array(c, (long long)n);
    if (n) store_list_range(k, first, n, 0, emit_elem, c);
}

/* As LINDEX: the key before the index. */
void cmd_lset(client *c)
{
    long long idx;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!k) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (!db_check_type(c, k, STORE_LIST) || !arg_ll_or_reply(c, &c->argv[2], &idx)) return;
    if (!store_list_set(client_db(c), k, idx, c->argv[3].ptr, c->argv[3].len)) {
        reply_error(c, "ERR index out of range");
        return;
    }
    db_notify(c, STORE_EV_LIST, "lset", &c->argv[1]);
    reply_ok(c);
}

void cmd_linsert(client *c)
{
    int after;
    if (arg_is(&c->argv[2], "after")) {
        after = 1;
    } else if (arg_is(&c->argv[2], "before")) {
        after = 0;
    } else {
        reply_syntax_error(c);
        return;
    }
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    long long len = store_list_insert(client_db(c), k, after, c->argv[3].ptr, c->argv[3].len,
                                      c->argv[4].ptr, c->argv[4].len);
    if (len > 0) db_notify(c, STORE_EV_LIST, "linsert", &c->argv[1]);
    reply_int(c, len);
}

void cmd_lrem(client *c)
{
    long long count;
    if (!arg_ll_or_reply(c, &c->argv[2], &count)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    size_t removed = k ? store_list_remove(client_db(c), k, count, c->argv[3].ptr, c->argv[3].len) : 0;
    if (removed) {
        db_notify(c, STORE_EV_LIST, "lrem", &c->argv[1]);
        if (store_list_len(k) == 0) db_delete_emptied(c, k);
    }
    reply_int(c, (long long)removed);
}

void cmd_ltrim(client *c)
{
    long long start, end;
    size_t first = 0, n = 0;
    if (!parse_start_stop(c, &start, &end)) return;
    store_key *k = db_lookup_write(c, &c->argv[1]);
    if (!db_check_type(c, k, STORE_LIST)) return;
    if (k) {
        size_t len = store_list_len(k);
        if (!arg_index_range(start, end, len, &first, &n)) first = n = 0;
        store_list_del_range(client_db(c), k, first + n, len - first - n);   /* the tail first */
        store_list_del_range(client_db(c), k, 0, first);
        db_notify(c, STORE_EV_LIST, "ltrim", &c->argv[1]);
        if (n == 0) db_delete_emptied(c, k);
    }
    reply_ok(c);
}
