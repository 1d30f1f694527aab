/* clientmem.c - what clients hold counted as Redis counts it: in used_memory
 * (maxmemory evicts keys for it) and against maxmemory-clients (clients go). */
#include "pubsub.h"
#include "server.h"

/* What one watched key or one subscription costs a client: its entry
 * (multi.c's watch_entry; a subscription's dict node and bucket), as
 * Redis's multiStateMemOverhead and pubsubMemOverhead estimate them. */
#define WATCH_ENTRY_BYTES 48
#define SUBSCRIPTION_BYTES 32
/* A BCAST prefix: its slot and a share of the radix tree Redis keeps. */
#define PREFIX_BYTES 64

size_t client_memory(const client *c)
{
    size_t n = sizeof(*c) + c->query.cap + client_output_bytes(c) + c->mstate.queue.cap;
    n += c->nwatched * WATCH_ENTRY_BYTES;
    if (c->tracking) n += tracking_client_prefixes(c) * PREFIX_BYTES;
    if (c->pubsub)
        n += (pubsub_client_count(c, PUBSUB_CHANNEL) + pubsub_client_count(c, PUBSUB_PATTERN) +
              pubsub_client_count(c, PUBSUB_SHARD)) * SUBSCRIPTION_BYTES;
    return n;
}

/* Redis's getClientEvictionLimit: maxmemory-clients in bytes, N or N% of
 * maxmemory (kept as -N; none without a maxmemory); 0: off. Never under
 * 128 KiB, so a tiny setting cannot cut everyone off. */
static size_t clients_limit(const server *s)
{
    long long v = s->cfg.maxmemory_clients;
    size_t limit;
    if (v < 0 && s->cfg.maxmemory > 0) limit = (size_t)((double)s->cfg.maxmemory * (double)-v / 100.0);
    else if (v > 0) limit = (size_t)v;
    else return 0;
    return limit < 128 * 1024 ? 128 * 1024 : limit;
}

/* Redis's clientEvictionAllowed: not a NO-EVICT client, nor one without a
 * connection (a script's, the embedder's). */
static int evictable(const client *c)
{
    return !(c->flags & (CLIENT_NO_EVICT | CLIENT_DETACHED | CLIENT_CLOSING));
}

/* Redis's evictClients: the biggest evictable clients go until all the
 * clients (NO-EVICT ones counted too, as Redis sums them) hold no more
 * than the limit. Walks the clients, but only once over it. */
static void evict_clients(server *s, size_t limit)
{
    while (s->clients_mem >= limit) {
        size_t most = 0;
        client *big = NULL;
        for (client *c = s->clients; c; c = c->next)
            if (evictable(c) && c->mem_counted > most) most = c->mem_counted, big = c;
        if (!big) return;
        log_msg(s, LOG_VERBOSE, "Evicting client: id=%llu addr=%s", (unsigned long long)big->id, big->addr);
        s->stat_evicted_clients++;
        client_close(big);
    }
}

void clientmem_update_slow(client *c)
{
    server *s = c->srv;
    if (c->flags & (CLIENT_CLOSING | CLIENT_DETACHED)) return;
    size_t now = client_memory(c);
    s->clients_mem = s->clients_mem - c->mem_counted + now;
    c->mem_counted = now;
    size_t limit = clients_limit(s);
    if (limit && s->clients_mem >= limit) evict_clients(s, limit);
}

void clientmem_forget(client *c)
{
    c->srv->clients_mem -= c->mem_counted;
    c->mem_counted = 0;
}

void clientmem_sync(server *s)
{
    int on = s->cfg.maxmemory != 0 || s->cfg.maxmemory_clients != 0;
    if (on && !s->client_mem_on) {
        /* counted from scratch: nothing was kept while off */
        s->clients_mem = 0;
        for (client *c = s->clients; c; c = c->next) {
            c->mem_counted = (c->flags & CLIENT_DETACHED) ? 0 : client_memory(c);
            s->clients_mem += c->mem_counted;
        }
    }
    s->client_mem_on = on;
    size_t limit = on ? clients_limit(s) : 0;
    if (limit && s->clients_mem >= limit) evict_clients(s, limit);
}

size_t clientmem_total(const server *s)
{
    if (s->client_mem_on) return s->clients_mem;
    size_t n = 0;
    for (const client *c = s->clients; c; c = c->next) n += client_memory(c);
    return n;
}
