/* db.c - the commands' way into the keyspace: read lookups counted where
 * Redis's lookupKeyRead counts them (hits, misses, keymiss), and events. */
#include <limits.h>

#include "commands.h"

/* A miss is also a "keymiss" event, where Redis's lookupKeyRead raises
 * it; a hit is an access (OBJECT IDLETIME, FREQ) unless DB_NOTOUCH. */
store_key *db_lookup_read_flags(client *c, const resp_slice *key, int flags)
{
    store_key *k = store_lookup(client_db(c), key->ptr, key->len);
    if (k) {
        if (!(flags & DB_NOTOUCH)) store_key_touch(client_db(c), k);
        c->srv->stat_keyspace_hits++;
    } else {
        c->srv->stat_keyspace_misses++;
        if (!(flags & DB_NONOTIFY)) db_notify(c, NOTIFY_KEY_MISS, "keymiss", key);
    }
    return k;
}

store_key *db_lookup_read(client *c, const resp_slice *key) { return db_lookup_read_flags(c, key, 0); }

void db_notify(client *c, int cls, const char *event, const resp_slice *key)
{
    store_notify(client_db(c), cls, event, key->ptr, key->len);
}

store_key *db_lookup_write(client *c, const resp_slice *key)
{
    store_key *k = store_lookup(client_db(c), key->ptr, key->len);
    if (k) store_key_touch(client_db(c), k);
    return k;
}

int db_check_type(client *c, const store_key *k, store_type want)
{
    if (!k || store_key_type(k) == want) return 1;
    reply_wrongtype(c);
    return 0;
}

int db_read_typed(client *c, const resp_slice *key, store_type t, store_key **k)
{
    *k = db_lookup_read(c, key);
    return db_check_type(c, *k, t);
}

store_key *db_write_create(client *c, const resp_slice *key, store_type t)
{
    store_key *k = db_lookup_write(c, key);
    if (!db_check_type(c, k, t)) return NULL;
    return k ? k : store_create_key(client_db(c), key->ptr, key->len, t);
}

void db_delete_emptied(client *c, store_key *k)
{
    store_delete_key(client_db(c), k);
    db_notify(c, STORE_EV_GENERIC, "del", &c->argv[1]);
}

void db_release_key(client *c, store_key *k, const resp_slice *name, store_release_why why)
{
    store_release_key(client_db(c), k, why);
    db_notify(c, STORE_EV_GENERIC, "del", name);
}

store *db_index_or_reply(client *c, const resp_slice *a, int *id)
{
    long long v;
    if (!arg_ll_or_reply(c, a, &v)) return NULL;
    if (v < INT_MIN || v > INT_MAX) {
        reply_errorf(c, "ERR value is out of range, value must between %d and %d", INT_MIN, INT_MAX);
        return NULL;
    }
    store *db = server_db(c->srv, v);
    if (!db) reply_error(c, "ERR DB index is out of range");
    else if (id) *id = (int)v;
    return db;
}
