/* wheel.h - hierarchical timing wheel: millisecond deadlines, O(1) arm and
 * cancel, nodes embedded in their owners so arming never allocates. */
#ifndef LATCHD_WHEEL_H
#define LATCHD_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#define WHEEL_BITS 6                       /* 64 slots per level */
#define WHEEL_SLOTS (1u << WHEEL_BITS)
#define WHEEL_LEVELS 8                     /* 48 bits of ms: ~8900 years */

typedef struct wheel_node {
    struct wheel_node *next, *prev;  /* NULL prev => not armed */
    uint64_t deadline;               /* absolute ms */
} wheel_node;
/* Embedded in every key entry: a held lock's 88 bytes count on 24 (on a
 * 64-bit target; store_internal.h pins the rest of the key header). */
_Static_assert(sizeof(void *) != 8 || sizeof(wheel_node) == 24, "wheel_node grew: a lock no longer fits 88 bytes");

typedef struct wheel {
    uint64_t now;                               /* last processed ms */
    uint64_t occupied[WHEEL_LEVELS];            /* bit per non-empty slot */
    wheel_node slots[WHEEL_LEVELS][WHEEL_SLOTS];/* list heads (sentinels) */
    size_t count;
} wheel;

typedef void (*wheel_fire_fn)(wheel_node *n, void *ctx);

void wheel_init(wheel *w, uint64_t now_ms);
void wheel_node_init(wheel_node *n);
int wheel_node_armed(const wheel_node *n);
/* Arm n for deadline_ms (re-arms if already armed). A deadline at or before
 * the wheel's now fires on the next wheel_advance. */
void wheel_add(wheel *w, wheel_node *n, uint64_t deadline_ms);
void wheel_del(wheel *w, wheel_node *n);
/* Move time to now_ms and call fire() for every node whose deadline <= now_ms,
 * in deadline order (never early). A node is disarmed before fire() sees it;
 * fire() may arm or cancel any node, including others that are due.
 * Returns how many fired. */
size_t wheel_advance(wheel *w, uint64_t now_ms, wheel_fire_fn fire, void *ctx);
/* Absolute ms at which wheel_advance next has work (a due slot or a cascade),
 * or UINT64_MAX when empty. Never later than the earliest deadline, or than
 * the wheel's now when a deadline is already past. */
uint64_t wheel_next_due(const wheel *w);
size_t wheel_count(const wheel *w);
/* An armed node drawn from rnd in O(1): a random non-empty slot, then a
 * few steps along its list. Not uniform (a node sharing its slot with many
 * is less likely), but never NULL while a node is armed: what sampling
 * needs when armed nodes are few among many owners. */
wheel_node *wheel_any(const wheel *w, uint64_t rnd);

#endif
