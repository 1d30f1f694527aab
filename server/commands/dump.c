/* dump.c - DUMP and RESTORE: a key's value as Redis 7.0's serialized
 * payload and back (the codec is persist/persist.h's). */
#include <stdlib.h>

#include "commands.h"
#include "persist/persist.h"


void cmd_dump(client *c)
{
    store_key *k = db_lookup_read(c, &c->argv[1]);
    if (!k) {
        reply_null(c);
        return;
    }
    persist_opts o = rdb_opts(c->srv);
    persist_buf b = {0};
    persist_dump(k, &o, &b);
    reply_bulk(c, b.p, b.len);
    persist_buf_free(&b);
}

/* RESTORE's options, parsed as restoreCommand does: IDLETIME and FREQ
 * exclude each other (the second is a syntax error); -1 when not given. */
static int restore_options(client *c, int *replace, int *absttl, long long *idlep, long long *freqp)
{
    long long idle = -1, freq = -1;
    for (int j = 4; j < c->argc; j++) {
        const resp_slice *a = &c->argv[j];
        int more = c->argc - j - 1;
        if (arg_is(a, "replace")) {
            *replace = 1;
        } else if (arg_is(a, "absttl")) {
            *absttl = 1;
        } else if (arg_is(a, "idletime") && more >= 1 && freq == -1) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &idle)) return 0;
            if (idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return 0;
            }
        } else if (arg_is(a, "freq") && more >= 1 && idle == -1) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &freq)) return 0;
            if (freq < 0 || freq > 255) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return 0;
            }
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    *idlep = idle;
    *freqp = freq;
    return 1;
}

void cmd_restore(client *c)
{
    int replace = 0, absttl = 0;
    long long ttl, idle, freq;
    if (!restore_options(c, &replace, &absttl, &idle, &freq)) return;
    const resp_slice *key = &c->argv[1], *payload = &c->argv[3];
    store *db = client_db(c);
    store_key *old = db_lookup_write(c, key);
    if (!replace && old) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!arg_ll_or_reply(c, &c->argv[2], &ttl)) return;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    const unsigned char *p = (const unsigned char *)payload->ptr;
    if (persist_payload_check(p, payload->len) != PERSIST_OK) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    persist_value *v;
    size_t checks;
    int rc = persist_value_decode(p, payload->len, &v, &checks);
    server_count_deep_checks(c->srv, c, checks);   /* failed ones too, as in Redis */
    if (rc != PERSIST_OK) {
        reply_error(c, "ERR Bad data format");
        return;
    }
    int deleted = 0;
    if (old) {
        store_release_key(db, old, STORE_RELEASE_REPLACED);
        deleted = 1;
    }
    /* relative TTLs wrap as Redis's ttl += mstime() does: a wrapped one is
     * in the past, so the key is not made */
    uint64_t now = store_now(db);   /* read once: a positive relative TTL is never past */
    if (ttl && !absttl) ttl = (long long)((unsigned long long)ttl + now);
    if (ttl && ttl <= (long long)now) {
        persist_value_free(v);
        if (deleted) db_notify(c, STORE_EV_GENERIC, "del", key);
        reply_ok(c);
        return;
    }
    store_key *k = persist_value_store(v, db, key->ptr, key->len);
    if (ttl) store_key_set_deadline(db, k, ttl);
    if (idle >= 0) store_key_set_idle(db, k, idle);
    if (freq >= 0) store_key_set_freq(db, k, (unsigned)freq);
    db_notify(c, STORE_EV_GENERIC, "restore", key);
    reply_ok(c);
}
