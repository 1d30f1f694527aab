/* list.h - list values: elements by position, pushed and popped at both
 * ends, scanned for LREM/LINSERT. Indexes are 0-based from the head. */
#ifndef LATCHD_STORE_LIST_H
#define LATCHD_STORE_LIST_H

#include "store.h"

enum { STORE_HEAD = 0, STORE_TAIL = 1 };

typedef void (*store_elem_fn)(const char *v, size_t len, void *ctx);

/* Like a hash, a list key never stays empty: callers delete the key when
 * a removal leaves it with no elements. */
size_t store_list_len(const store_key *k);
void store_list_push(store *s, store_key *k, int where, const char *v, size_t len);
/* The element at idx (negative: from the tail), NULL when out of range. */
const char *store_list_index(const store_key *k, long long idx, size_t *len);
/* Visit n elements from index start: towards the tail, or (reverse)
 * towards the head. The range must lie inside the list. */
void store_list_range(const store_key *k, size_t start, size_t n, int reverse,
                      store_elem_fn fn, void *ctx);
/* Remove the n elements from index start (inside the list). */
void store_list_del_range(store *s, store_key *k, size_t start, size_t n);
/* LSET: 1 if the element at idx (negative: from the tail) was replaced. */
int store_list_set(store *s, store_key *k, long long idx, const char *v, size_t len);
/* LINSERT: put v before (or after) the first element equal to pivot;
 * the new length, or -1 when there is no such element. */
long long store_list_insert(store *s, store_key *k, int after, const char *pivot,
                            size_t plen, const char *v, size_t len);
/* LREM: remove elements equal to v, at most `count` of them scanning from
 * the head (count > 0) or -count from the tail (count < 0), every one for
 * count == 0. Returns how many went. */
size_t store_list_remove(store *s, store_key *k, long long count, const char *v, size_t len);

#endif
