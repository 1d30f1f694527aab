/* test_dict.c - store_dict: growth and shrink with lookups spanning both
 * tables mid-rehash, SCAN across resizes, paused rehash, random, SipHash. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "store_internal.h"   /* store_siphash24: the reference vectors */

typedef struct item {
    store_dict_node n;
    unsigned id;
    unsigned seen;
    char key[16];
} item;

static item *make_items(size_t count)
{
    item *it = calloc(count, sizeof(*it));
    assert_non_null(it);
    for (size_t i = 0; i < count; i++) {
        it[i].id = (unsigned)i;
        it[i].n.keylen = (size_t)snprintf(it[i].key, sizeof(it[i].key), "key:%zu", i);
    }
    return it;
}

#define ITEM_KEY_OFF STORE_DICT_KEY_OFF(item, n, key)

static item *item_of(store_dict_node *n) { return STORE_CONTAINER(n, item, n); }

static int rehashing(const store_dict *d) { return d->rehash_idx != -1; }

/* 1 if n sits in table t's bucket for its hash. */
static int in_table(const store_dict *d, int t, const store_dict_node *n)
{
    const store_dict_table *tb = &d->t[t];
    if (!tb->size) return 0;
    for (store_dict_node *x = tb->buckets[n->hash & (tb->size - 1)]; x; x = x->next)
        if (x == n) return 1;
    return 0;
}

static void test_siphash_vectors(void **state)
{
    (void)state;
    uint8_t k[16], m[16];
    for (int i = 0; i < 16; i++) k[i] = m[i] = (uint8_t)i;
    /* From the SipHash paper's reference implementation (vectors.h). */
    assert_true(store_siphash24(m, 0, k) == UINT64_C(0x726fdb47dd0e0e31));
    assert_true(store_siphash24(m, 1, k) == UINT64_C(0x74f839c593dc67fd));
    assert_true(store_siphash24(m, 8, k) == UINT64_C(0x93f5f5799a932462));
    assert_true(store_siphash24(m, 15, k) == UINT64_C(0xa129ca6149be45e5));
}

static void test_seed_changes_hash(void **state)
{
    (void)state;
    uint8_t dflt[16], other[16] = { 1, 2, 3 };
    memcpy(dflt, "latchd-siphash-k", 16);   /* siphash.c's default key */
    uint64_t a = store_dict_hash("lock", 4);
    assert_true(a == store_dict_hash("lock", 4));
    assert_true(a != store_dict_hash("lockx", 5));
    store_dict_set_seed(other);
    assert_true(a != store_dict_hash("lock", 4));
    store_dict_set_seed(dflt);
    assert_true(a == store_dict_hash("lock", 4));
}

static void test_empty(void **state)
{
    (void)state;
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    assert_null(store_dict_find(&d, "x", 1));
    assert_null(store_dict_remove(&d, "x", 1));
    assert_null(store_dict_random(&d, 42));
    assert_int_equal(store_dict_scan(&d, 0, NULL, NULL), 0);
    assert_int_equal(store_dict_size(&d), 0);
    store_dict_clear(&d, NULL, NULL);
}

#define MANY 150000

static void test_grow_find_remove_shrink(void **state)
{
    (void)state;
    item *it = make_items(MANY);
    store_dict d;
    int saw_rehash = 0, saw_shrink = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);

    for (size_t i = 0; i < MANY; i++) {
        store_dict_insert(&d, &it[i].n);
        if (rehashing(&d)) saw_rehash = 1;
        /* A key inserted just now and one from long ago are both found,
         * whichever table they are in right now. */
        assert_ptr_equal(store_dict_find(&d, it[i].key, it[i].n.keylen), &it[i].n);
        assert_ptr_equal(store_dict_find(&d, it[i / 2].key, it[i / 2].n.keylen), &it[i / 2].n);
    }
    assert_true(saw_rehash);
    assert_int_equal(store_dict_size(&d), MANY);
    assert_true(d.t[0].size >= MANY || d.t[1].size >= MANY);
    assert_null(store_dict_find(&d, "key:x", 5));

    for (size_t i = 0; i < MANY; i += 2)
        assert_ptr_equal(store_dict_remove(&d, it[i].key, it[i].n.keylen), &it[i].n);
    assert_null(store_dict_remove(&d, it[0].key, it[0].n.keylen));
    for (size_t i = 0; i < MANY; i++) {
        store_dict_node *f = store_dict_find(&d, it[i].key, it[i].n.keylen);
        if (i % 2) assert_ptr_equal(f, &it[i].n);
        else assert_null(f);
    }
    for (size_t i = 1; i < MANY; i += 2) {
        assert_ptr_equal(store_dict_remove(&d, it[i].key, it[i].n.keylen), &it[i].n);
        if (rehashing(&d) && d.t[1].size < d.t[0].size) saw_shrink = 1;
        if (i + 2 < MANY) /* the next survivor is still reachable mid-shrink */
            assert_ptr_equal(store_dict_find(&d, it[i + 2].key, it[i + 2].n.keylen), &it[i + 2].n);
    }
    assert_true(saw_shrink);
    assert_int_equal(store_dict_size(&d), 0);
    while (store_dict_rehash(&d, 100)) {}
    assert_true(d.t[0].size < MANY / 64);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void test_both_tables_consulted(void **state)
{
    (void)state;
    item *it = make_items(64);
    store_dict d;
    size_t n = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    while (!rehashing(&d)) store_dict_insert(&d, &it[n++].n);

    d.iterators++;   /* pause steps: the split between tables stays put */
    assert_true(d.t[0].used > 0 && d.t[1].used > 0);
    size_t found[2] = { 0, 0 };
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(store_dict_find(&d, it[i].key, it[i].n.keylen), &it[i].n);
        assert_ptr_equal(store_dict_peek(&d, it[i].key, it[i].n.keylen), &it[i].n);
        found[in_table(&d, 1, &it[i].n)]++;
    }
    assert_true(found[0] > 0 && found[1] > 0);
    /* Remove one node from each table, by key and by node. */
    size_t in0 = 0, in1 = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_table(&d, 0, &it[i].n)) in0 = i;
        else in1 = i;
    }
    assert_ptr_equal(store_dict_remove(&d, it[in0].key, it[in0].n.keylen), &it[in0].n);
    store_dict_unlink(&d, &it[in1].n);
    assert_null(store_dict_find(&d, it[in0].key, it[in0].n.keylen));
    assert_null(store_dict_find(&d, it[in1].key, it[in1].n.keylen));
    assert_int_equal(store_dict_size(&d), n - 2);
    d.iterators--;

    assert_int_equal(store_dict_rehash(&d, 1000), 0);
    assert_false(rehashing(&d));
    assert_int_equal(d.t[0].used, n - 2);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void test_force_grow_while_paused(void **state)
{
    (void)state;
    item *it = make_items(64);
    store_dict d;
    size_t n = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    store_dict_insert(&d, &it[n++].n);
    assert_int_equal(d.t[0].size, 4);
    d.iterators++;
    while (!rehashing(&d)) store_dict_insert(&d, &it[n++].n);
    /* Grew only once the load factor reached 5 (20 nodes in 4 buckets). */
    assert_int_equal(n, 21);
    assert_int_equal(d.t[0].used, 20);
    d.iterators--;
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(store_dict_find(&d, it[i].key, it[i].n.keylen), &it[i].n);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

/* While a fork child shares the pages (Redis 7.0's dictDisableResize): the
 * table grows only 5 times overloaded and never shrinks; once allowed
 * again the next insert or removal resizes. */
static void test_avoid_resize(void **state)
{
    (void)state;
    item *it = make_items(64);
    store_dict d;
    size_t n = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    for (; n < 8; n++) store_dict_insert(&d, &it[n].n);
    while (store_dict_rehash(&d, 100)) {}
    assert_int_equal(d.t[0].size, 8);
    store_dict_avoid_resize(&d, 1);
    while (!rehashing(&d)) store_dict_insert(&d, &it[n++].n);
    assert_int_equal(n, 41);   /* 40 nodes in 8 buckets before it grew */
    while (store_dict_rehash(&d, 100)) {}
    assert_int_equal(d.t[0].size, 64);
    for (size_t i = 2; i < n; i++) assert_ptr_equal(store_dict_remove(&d, it[i].key, it[i].n.keylen), &it[i].n);
    assert_false(rehashing(&d));   /* 2 in 64 buckets: no shrink yet */
    assert_int_equal(d.t[0].size, 64);
    store_dict_avoid_resize(&d, 0);
    assert_ptr_equal(store_dict_remove(&d, it[1].key, it[1].n.keylen), &it[1].n);
    assert_true(rehashing(&d));
    assert_ptr_equal(store_dict_find(&d, it[0].key, it[0].n.keylen), &it[0].n);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void mark_seen(store_dict_node *n, void *ctx)
{
    (void)ctx;
    item_of(n)->seen++;
}

/* Scan `first` keys, grow or shrink the dict after `at` scan calls (and
 * maybe let the rehash finish), and check every key present throughout
 * was reported at least once. */
static void scan_across_resize(size_t first, size_t total, int shrink, int at, int finish)
{
    item *it = make_items(total);
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    size_t initial = shrink ? total : first;
    for (size_t i = 0; i < initial; i++) store_dict_insert(&d, &it[i].n);
    while (store_dict_rehash(&d, 100)) {}

    uint64_t cur = 0;
    int steps = 0, resized = 0;
    do {
        cur = store_dict_scan(&d, cur, mark_seen, NULL);
        if (++steps == at) {
            resized = 1;
            if (shrink)
                for (size_t i = first; i < total; i++) store_dict_remove(&d, it[i].key, it[i].n.keylen);
            else
                for (size_t i = first; i < total; i++) store_dict_insert(&d, &it[i].n);
            assert_true(rehashing(&d));   /* resize in progress */
            if (finish) while (store_dict_rehash(&d, 100)) {}
        }
    } while (cur != 0);
    assert_true(resized);
    for (size_t i = 0; i < first; i++)
        if (it[i].seen == 0) fail_msg("key %zu never visited", i);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void test_scan_across_grow(void **state)
{
    (void)state;
    scan_across_resize(1000, 9000, 0, 8, 0);
    scan_across_resize(1000, 9000, 0, 700, 1);
}

static void test_scan_across_shrink(void **state)
{
    (void)state;
    scan_across_resize(300, 8000, 1, 8, 0);
    /* Cursor already past the small table's size when the shrink lands:
     * only the reverse-binary cursor still covers the folded buckets. */
    scan_across_resize(300, 8000, 1, 3000, 1);
}

static void test_scan_full_no_resize(void **state)
{
    (void)state;
    item *it = make_items(5000);
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    for (size_t i = 0; i < 5000; i++) store_dict_insert(&d, &it[i].n);
    while (store_dict_rehash(&d, 100)) {}
    uint64_t cur = 0;
    do cur = store_dict_scan(&d, cur, mark_seen, NULL); while (cur);
    for (size_t i = 0; i < 5000; i++) assert_int_equal(it[i].seen, 1);   /* exactly once */
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

struct pause_ctx {
    store_dict *d;
    long long idx_at_start;
    size_t visits;
};

static void find_inside_foreach(store_dict_node *n, void *ctx)
{
    struct pause_ctx *pc = ctx;
    assert_int_equal(pc->d->iterators, 1);
    /* A find would normally do a rehash step; it must not move anything. */
    assert_ptr_equal(store_dict_find(pc->d, item_of(n)->key, n->keylen), n);
    assert_true(pc->d->rehash_idx == pc->idx_at_start);
    item_of(n)->seen++;
    pc->visits++;
}

static void test_foreach_pauses_rehash(void **state)
{
    (void)state;
    item *it = make_items(2000);
    store_dict d;
    size_t n = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    while (n < 1000 || !rehashing(&d)) store_dict_insert(&d, &it[n++].n);
    struct pause_ctx pc = { &d, d.rehash_idx, 0 };
    store_dict_foreach(&d, find_inside_foreach, &pc);
    assert_int_equal(pc.visits, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(it[i].seen, 1);
    assert_int_equal(d.iterators, 0);
    assert_true(d.rehash_idx == pc.idx_at_start);
    store_dict_find(&d, it[0].key, it[0].n.keylen);   /* steps resume */
    assert_true(d.rehash_idx != pc.idx_at_start);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void test_random(void **state)
{
    (void)state;
    item *it = make_items(65);
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    for (size_t i = 0; i < 65; i++) store_dict_insert(&d, &it[i].n);
    /* The 65th insert started 64 -> 128; pausing keeps nodes in both. */
    assert_true(rehashing(&d));
    d.iterators++;
    for (uint64_t r = 0; r < 20000; r++) {
        store_dict_node *n = store_dict_random(&d, r * 7919);
        assert_non_null(n);
        item_of(n)->seen++;
    }
    d.iterators--;
    for (size_t i = 0; i < 65; i++) assert_true(it[i].seen > 0);
    assert_non_null(store_dict_random(&d, 1));   /* and after the pause */
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

struct walk_order {
    uintptr_t last_page;
    size_t visits, descents;   /* a visit on a lower page than the one before */
};

static void note_walk(store_dict_node *n, void *ctx)
{
    struct walk_order *w = ctx;
    uintptr_t page = (uintptr_t)n >> 12;
    if (w->visits++ && page < w->last_page) w->descents++;
    w->last_page = page;
    item_of(n)->seen++;
}

/* store_dict_walk visits every node once, across its windows, chains and
 * both tables of a rehash, in ascending runs of pages: one run per window
 * and chain depth, where bucket order descends at every other node. */
static void walk_all(size_t count, int mid_rehash)
{
    item *it = make_items(count);
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    size_t n = 0;
    while (n < count && !(mid_rehash && n > count / 2 && rehashing(&d))) store_dict_insert(&d, &it[n++].n);
    if (mid_rehash) assert_true(rehashing(&d) && d.t[0].used > 0 && d.t[1].used > 0);
    else while (store_dict_rehash(&d, 1000)) {}
    struct walk_order w = {0, 0, 0};
    store_dict_walk(&d, note_walk, &w);
    assert_int_equal(w.visits, n);
    for (size_t i = 0; i < count; i++)
        if (it[i].seen != (i < n)) fail_msg("key %zu visited %u times", i, it[i].seen);
    if (n >= 65536) assert_true(w.descents < 64);
    assert_int_equal(d.iterators, 0);
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

static void test_walk_visits_all_in_page_runs(void **state)
{
    (void)state;
    walk_all(300000, 0);   /* 2^19 buckets: two windows, and chains */
    walk_all(300000, 1);
    walk_all(1000, 0);     /* small: bucket order */
}

static void count_free(store_dict_node *n, void *ctx)
{
    (void)n;
    (*(size_t *)ctx)++;
}

static void test_clear_visits_all(void **state)
{
    (void)state;
    item *it = make_items(777);
    store_dict d;
    size_t freed = 0;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    for (size_t i = 0; i < 777; i++) store_dict_insert(&d, &it[i].n);
    store_dict_clear(&d, count_free, &freed);
    assert_int_equal(freed, 777);
    assert_int_equal(store_dict_size(&d), 0);
    assert_int_equal(store_dict_mem(&d), 0);
    assert_null(store_dict_find(&d, it[0].key, it[0].n.keylen));
    free(it);
}

static void test_hashed_variants(void **state)
{
    (void)state;
    item *it = make_items(10);
    store_dict d;
    store_dict_init(&d, ITEM_KEY_OFF, STORE_DICT_KEY_INLINE);
    for (size_t i = 0; i < 10; i++) {
        it[i].n.hash = store_dict_hash(it[i].key, it[i].n.keylen);
        store_dict_insert_hashed(&d, &it[i].n);
    }
    for (size_t i = 0; i < 10; i++)
        assert_ptr_equal(store_dict_find_hashed(&d, it[i].key, it[i].n.keylen, it[i].n.hash), &it[i].n);
    /* Same hash, different bytes: compared, not trusted. */
    assert_null(store_dict_find_hashed(&d, "nope", 4, it[3].n.hash));
    assert_true(store_dict_mem(&d) >= d.t[0].size * sizeof(void *));
    store_dict_clear(&d, NULL, NULL);
    free(it);
}

/* Owners that keep their key elsewhere store a pointer to it after the
 * node; the dict follows it, and keeps doing so after a clear. */
typedef struct pointed_item {
    store_dict_node n;
    const char *key;
} pointed_item;

static void test_key_by_pointer(void **state)
{
    (void)state;
    static const char *const names[] = { "alpha", "beta", "", "delta" };
    pointed_item p[4];
    store_dict d;
    store_dict_init(&d, STORE_DICT_KEY_OFF(pointed_item, n, key), STORE_DICT_KEY_POINTER);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 4; i++) {
            p[i].key = names[i];
            p[i].n.keylen = (uint32_t)strlen(names[i]);
            store_dict_insert(&d, &p[i].n);
        }
        for (size_t i = 0; i < 4; i++) {
            assert_ptr_equal(store_dict_find(&d, names[i], strlen(names[i])), &p[i].n);
            assert_ptr_equal(store_dict_key(&d, &p[i].n), names[i]);
        }
        assert_null(store_dict_find(&d, "alph", 4));
        assert_ptr_equal(store_dict_remove(&d, "beta", 4), &p[1].n);
        assert_null(store_dict_find(&d, "beta", 4));
        store_dict_clear(&d, NULL, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash_vectors),
        cmocka_unit_test(test_seed_changes_hash),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_grow_find_remove_shrink),
        cmocka_unit_test(test_both_tables_consulted),
        cmocka_unit_test(test_force_grow_while_paused),
        cmocka_unit_test(test_avoid_resize),
        cmocka_unit_test(test_scan_across_grow),
        cmocka_unit_test(test_scan_across_shrink),
        cmocka_unit_test(test_scan_full_no_resize),
        cmocka_unit_test(test_foreach_pauses_rehash),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_clear_visits_all),
        cmocka_unit_test(test_walk_visits_all_in_page_runs),
        cmocka_unit_test(test_hashed_variants),
        cmocka_unit_test(test_key_by_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
