/* expire.c - key deadlines: armed on the timing wheel (O(1) set/cancel)
 * and reclaimed either lazily on access or when the wheel fires. */
#include "store_internal.h"

/* The wheel node is the single record of a deadline (no second copy in
 * the entry): armed <=> has one, and the wheel keeps deadline exact. */
int store_key_is_expired(const store_key *k, uint64_t now)
{
    return wheel_node_armed(&k->timer) && k->timer.deadline <= now;
}

int64_t store_key_deadline(const store_key *k)
{
    return wheel_node_armed(&k->timer) ? (int64_t)k->timer.deadline : STORE_NO_DEADLINE;
}

void store_key_clear_timer(store *s, store_key *k)
{
    if (!wheel_node_armed(&k->timer)) return;
    wheel_del(&s->wheel, &k->timer);
    s->expires--;
}

/* Deadlines before the epoch are simply "already past": stored as 0. */
void store_key_set_deadline(store *s, store_key *k, int64_t deadline_ms)
{
    if (deadline_ms == STORE_NO_DEADLINE) {
        store_key_clear_timer(s, k);
        return;
    }
    if (!wheel_node_armed(&k->timer)) s->expires++;
    wheel_add(&s->wheel, &k->timer, deadline_ms < 0 ? 0 : (uint64_t)deadline_ms);
}

/* Unlinked first, so a hook that looks the key up finds nothing, and the
 * name is still readable while the hook runs. */
void store_reclaim(store *s, store_key *k)
{
    store_key_unlink(s, k);
    if (s->expired) s->expired(k->name, k->node.keylen, s->expired_ctx);
    store_value_release(s, k, STORE_RELEASE_EXPIRED);
    store_entry_free(s, k);
}

store_key *store_random_volatile_key(store *s, uint64_t rnd)
{
    for (;;) {
        wheel_node *n = wheel_any(&s->wheel, rnd);
        if (!n) return NULL;
        store_key *k = STORE_CONTAINER(n, store_key, timer);
        if (!store_key_is_expired(k, store_now(s))) return k;
        store_reclaim(s, k);
        rnd = store_redraw(rnd);
    }
}

struct due {
    store *s;
    uint64_t now;
    size_t reclaimed;
};

/* The wheel disarms n before calling us, so the expires count is ours to
 * drop here. It never fires early; the check only guards that promise. */
static void fire(wheel_node *n, void *ctx)
{
    struct due *d = ctx;
    store_key *k = STORE_CONTAINER(n, store_key, timer);
    if (n->deadline > d->now) {
        wheel_add(&d->s->wheel, n, n->deadline);
        return;
    }
    d->s->expires--;
    store_reclaim(d->s, k);
    d->reclaimed++;
}

size_t store_expire_due(store *s)
{
    uint64_t now = store_now(s);
    /* The clock must not go backwards; if it does, hold time still. */
    if (now < s->wheel.now) now = s->wheel.now;
    struct due d = { s, now, 0 };
    wheel_advance(&s->wheel, now, fire, &d);
    return d.reclaimed;
}

uint64_t store_next_due(const store *s)
{
    return wheel_next_due(&s->wheel);
}
