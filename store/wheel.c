/* wheel.c - hierarchical timing wheel: owns where an armed node sits (level,
 * slot, occupancy bits), cascading it down as time passes, and firing it. */
#include "wheel.h"

#define MASK ((uint64_t)WHEEL_SLOTS - 1)
#define TOP (WHEEL_LEVELS - 1)
#define SHIFT(l) ((unsigned)(l) * WHEEL_BITS)

static uint64_t bit(uint64_t i) { return (uint64_t)1 << i; }

static uint64_t rotr(uint64_t x, unsigned s)
{
    return (x >> s) | (x << ((64u - s) & 63u));
}

static void list_init(wheel_node *h) { h->next = h->prev = h; }

static int list_empty(const wheel_node *h) { return h->next == h; }

static void list_append(wheel_node *h, wheel_node *n)
{
    n->prev = h->prev;
    n->next = h;
    h->prev->next = n;
    h->prev = n;
}

/* Move all of src's nodes to the tail of dst (keeping their order). */
static void list_splice(wheel_node *dst, wheel_node *src)
{
    if (list_empty(src))
        return;
    src->next->prev = dst->prev;
    dst->prev->next = src->next;
    src->prev->next = dst;
    dst->prev = src->prev;
    list_init(src);
}

/* Unlink and disarm; prev == NULL is the "not armed" marker. */
static void list_unlink(wheel_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = NULL;
}

/* Take a whole slot onto a caller-owned head so callbacks and re-placement
 * can touch the slot again without disturbing the walk. */
static void slot_detach(wheel *w, unsigned lvl, uint64_t idx, wheel_node *to)
{
    list_init(to);
    list_splice(to, &w->slots[lvl][idx]);
    w->occupied[lvl] &= ~bit(idx);
}

/* If h is one of the wheel's slot heads (not a local list head), its slot
 * just became empty: clear the bit. Compared as integers: h may be a stack
 * head, and relational compares across objects are undefined. */
static void slot_emptied(wheel *w, const wheel_node *h)
{
    uintptr_t off = (uintptr_t)h - (uintptr_t)&w->slots[0][0];
    size_t i;

    if (off >= sizeof w->slots)
        return;
    i = (size_t)off / sizeof(wheel_node);
    w->occupied[i / WHEEL_SLOTS] &= ~bit(i % WHEEL_SLOTS);
}

/* Lowest level where d shares every higher bit with now: the node's slot is
 * then reached (cascaded or fired) exactly when now enters it. The top level
 * is a ring: a deadline whole laps ahead is cascaded each time now enters its
 * slot (once per 2^48 ms) and simply re-placed. Overdue nodes use now's own
 * level-0 slot, which no future deadline maps to. */
static void place(wheel *w, wheel_node *n)
{
    uint64_t d = n->deadline, now = w->now, idx = now & MASK;
    unsigned lvl = 0;

    if (d > now) {
        lvl = (63u - (unsigned)__builtin_clzll(d ^ now)) / WHEEL_BITS;
        if (lvl > TOP)
            lvl = TOP;
        idx = (d >> SHIFT(lvl)) & MASK;
    }
    list_append(&w->slots[lvl][idx], n);
    w->occupied[lvl] |= bit(idx);
}

/* When now next enters an occupied slot of level lvl (slots after now's own,
 * ring order, now's own counting as 64 ahead). UINT64_MAX if none. */
static uint64_t level_due(const wheel *w, unsigned lvl, uint64_t occ)
{
    unsigned sh = SHIFT(lvl);
    uint64_t q = w->now >> sh, k;

    if (!occ)
        return UINT64_MAX;
    k = (uint64_t)__builtin_ctzll(rotr(occ, (unsigned)((q + 1) & MASK))) + 1;
    if (q + k > (UINT64_MAX >> sh))
        return UINT64_MAX;
    return (q + k) << sh;
}

/* Earliest time > now with work: a level-0 fire or a higher-level cascade.
 * now's own level-0 slot (overdue nodes) is not a future event. */
static uint64_t next_event(const wheel *w)
{
    uint64_t best = level_due(w, 0, w->occupied[0] & ~bit(w->now & MASK));

    for (unsigned l = 1; l < WHEEL_LEVELS; l++) {
        uint64_t t = level_due(w, l, w->occupied[l]);
        if (t < best)
            best = t;
    }
    return best;
}

static void cascade(wheel *w, unsigned lvl, uint64_t idx)
{
    wheel_node local;

    if (!(w->occupied[lvl] & bit(idx)))
        return;
    slot_detach(w, lvl, idx, &local);
    while (!list_empty(&local)) {
        wheel_node *n = local.next;
        list_unlink(n);
        place(w, n);
    }
}

/* Jump to t (nothing in between is due). Nodes re-armed overdue during the
 * last tick go to *deferred so they fire on the next advance, not in a loop
 * within this one. Only the level of t's lowest non-zero digit can have a
 * slot starting at t (below it t's digit is 0, and a level never holds a
 * slot at or before now's digit); its nodes land below it, or back on the
 * top ring if they are laps ahead. */
static void move_to(wheel *w, uint64_t t, wheel_node *deferred)
{
    uint64_t cur = w->now & MASK;
    unsigned lvl = (unsigned)__builtin_ctzll(t) / WHEEL_BITS;

    if (w->occupied[0] & bit(cur)) {
        list_splice(deferred, &w->slots[0][cur]);
        w->occupied[0] &= ~bit(cur);
    }
    w->now = t;
    if (lvl > TOP)
        lvl = TOP;
    if (lvl > 0)
        cascade(w, lvl, (t >> SHIFT(lvl)) & MASK);
}

static wheel_node *merge(wheel_node *a, wheel_node *b)
{
    wheel_node head, *t = &head;

    while (a && b) {
        wheel_node **lo = b->deadline < a->deadline ? &b : &a;
        t->next = *lo;
        t = *lo;
        *lo = (*lo)->next;
    }
    t->next = a ? a : b;
    return head.next;
}

/* Stable merge sort of a NULL-terminated next-chain; prev is ignored. */
static wheel_node *msort(wheel_node *h)
{
    wheel_node *slow = h, *fast, *mid;

    if (!h || !h->next)
        return h;
    for (fast = h->next; fast && fast->next; fast = fast->next->next)
        slow = slow->next;
    mid = slow->next;
    slow->next = NULL;
    return merge(msort(h), msort(mid));
}

/* A level-0 slot holds one exact ms, except now's slot which also collects
 * overdue nodes of mixed deadlines; sort only then (usually a single scan). */
static void sort_by_deadline(wheel_node *h)
{
    wheel_node *n, *prev = h;

    for (n = h->next; n->next != h; n = n->next)
        if (n->next->deadline < n->deadline)
            break;
    if (n->next == h)
        return;
    h->prev->next = NULL;
    for (n = msort(h->next); n; prev = n, n = n->next) {
        n->prev = prev;
        prev->next = n;
    }
    prev->next = h;
    h->prev = prev;
}

/* Fire level-0 slot idx. The slot is detached first: fire() may arm or
 * cancel anything, including nodes still waiting on the local list. */
static size_t fire_slot(wheel *w, uint64_t idx, wheel_fire_fn fire, void *ctx)
{
    wheel_node local;
    size_t n = 0;

    if (!(w->occupied[0] & bit(idx)))
        return 0;
    slot_detach(w, 0, idx, &local);
    sort_by_deadline(&local);
    while (!list_empty(&local)) {
        wheel_node *x = local.next;
        list_unlink(x);
        w->count--;
        fire(x, ctx);
        n++;
    }
    return n;
}

void wheel_init(wheel *w, uint64_t now_ms)
{
    w->now = now_ms;
    w->count = 0;
    for (unsigned l = 0; l < WHEEL_LEVELS; l++) {
        w->occupied[l] = 0;
        for (unsigned i = 0; i < WHEEL_SLOTS; i++)
            list_init(&w->slots[l][i]);
    }
}

void wheel_node_init(wheel_node *n)
{
    n->next = n->prev = NULL;
    n->deadline = 0;
}

int wheel_node_armed(const wheel_node *n) { return n->prev != NULL; }

void wheel_add(wheel *w, wheel_node *n, uint64_t deadline_ms)
{
    wheel_del(w, n);
    n->deadline = deadline_ms;
    place(w, n);
    w->count++;
}

void wheel_del(wheel *w, wheel_node *n)
{
    wheel_node *p = n->prev, *nx = n->next;

    if (!p)
        return;
    list_unlink(n);
    w->count--;
    if (p == nx)  /* only the head is left */
        slot_emptied(w, p);
}

size_t wheel_advance(wheel *w, uint64_t now_ms, wheel_fire_fn fire, void *ctx)
{
    wheel_node deferred;
    size_t n = fire_slot(w, w->now & MASK, fire, ctx);

    list_init(&deferred);
    while (w->now < now_ms) {
        uint64_t t = next_event(w);
        move_to(w, t < now_ms ? t : now_ms, &deferred);
        n += fire_slot(w, w->now & MASK, fire, ctx);
    }
    if (!list_empty(&deferred)) {
        list_splice(&w->slots[0][w->now & MASK], &deferred);
        w->occupied[0] |= bit(w->now & MASK);
    }
    return n;
}

uint64_t wheel_next_due(const wheel *w)
{
    if (w->occupied[0] & bit(w->now & MASK))
        return w->now;  /* overdue nodes: due immediately */
    return next_event(w);
}

size_t wheel_count(const wheel *w) { return w->count; }

wheel_node *wheel_any(const wheel *w, uint64_t rnd)
{
    if (!w->count) return NULL;
    unsigned slots = 0;
    for (unsigned l = 0; l < WHEEL_LEVELS; l++) slots += (unsigned)__builtin_popcountll(w->occupied[l]);
    unsigned pick = (unsigned)(rnd % slots);
    for (unsigned l = 0;; l++) {
        uint64_t occ = w->occupied[l];
        unsigned here = (unsigned)__builtin_popcountll(occ);
        if (pick >= here) {
            pick -= here;
            continue;
        }
        while (pick--) occ &= occ - 1;   /* drop the lower set bits */
        const wheel_node *head = &w->slots[l][__builtin_ctzll(occ)];
        wheel_node *n = head->next;
        /* the list is circular through its head: step over it */
        for (unsigned steps = (unsigned)(rnd >> 32) % 8; steps; steps--) {
            n = n->next;
            if (n == head) n = n->next;
        }
        return n;
    }
}
