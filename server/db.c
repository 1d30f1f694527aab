/* db.c - the commands' way into the keyspace. Read lookups feed INFO's
 * keyspace_hits/misses exactly where Redis's lookupKeyRead does; writes don't. */
#include "commands.h"

store_key *db_lookup_read(client *c, const resp_slice *key)
{
    store_key *k = store_lookup(c->srv->db, key->ptr, key->len);
    if (k)
        c->srv->stat_keyspace_hits++;
    else
        c->srv->stat_keyspace_misses++;
    return k;
}

store_key *db_lookup_write(client *c, const resp_slice *key)
{
    return store_lookup(c->srv->db, key->ptr, key->len);
}

int db_check_type(client *c, const store_key *k, store_type want)
{
    if (!k || store_key_type(k) == want) return 1;
    reply_wrongtype(c);
    return 0;
}
