/* test_stream_group.c - streams' consumer groups (store/stream_group.c):
 * the chunked ID maps against a sorted-array model (random puts, deletes,
 * seeks; chunk splits and appends), groups and consumers kept in rax
 * order, PEL hand-overs and acks, deleting a consumer, the lag rules, and
 * memory given back. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "store_internal.h"   /* used_memory: what the maps account */
#include "stream.h"
#include "value_fixture.h"

static int setup(void **state) { return fixture_setup(state, STORE_STREAM, "s"); }

static store_sid sid(uint64_t ms, uint64_t seq) { return (store_sid){ms, seq}; }

static int cmp_sid(const void *a, const void *b) { return store_sid_cmp(*(const store_sid *)a, *(const store_sid *)b); }

/* Random puts and deletes over a small ID space (so both hit), each map
 * walk and seek checked against a sorted array. */
static void test_sidmap_random_against_model(void **state)
{
    fixture *f = *state;
    size_t before = f->s->used_memory;
    store_sidmap m;
    store_sidmap_init(&m, sizeof(uint64_t));
    store_sid model[2200];
    size_t n = 0;
    uint64_t rng = 42;
    for (int op = 0; op < 20000; op++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        store_sid id = sid((rng >> 33) % 700, (rng >> 20) % 3);
        store_sid *at = bsearch(&id, model, n, sizeof *model, cmp_sid);
        if ((rng >> 60) < 9) {   /* put */
            int created;
            uint64_t *v = store_sidmap_put(f->s, &m, id, &created);
            assert_int_equal(created, at == NULL);
            if (created) {
                *v = id.ms * 10 + id.seq;
                model[n++] = id;
                qsort(model, n, sizeof *model, cmp_sid);
            }
            assert_int_equal(*v, id.ms * 10 + id.seq);
        } else {
            assert_int_equal(store_sidmap_del(f->s, &m, id), at != NULL);
            if (at) {
                memmove(at, at + 1, (size_t)(model + n - at - 1) * sizeof *model);
                n--;
            }
        }
        assert_int_equal(m.count, n);
        if (op % 500) continue;
        store_sidmap_it it;
        store_sid got;
        void *v;
        store_sidmap_seek(&m, sid(0, 0), &it);
        for (size_t i = 0; i < n; i++) {
            assert_true(store_sidmap_next(&m, &it, &got, &v));
            assert_int_equal(store_sid_cmp(got, model[i]), 0);
            assert_int_equal(*(uint64_t *)v, got.ms * 10 + got.seq);
        }
        assert_false(store_sidmap_next(&m, &it, &got, NULL));
        store_sid probe = sid(350, 1);   /* the first at or above it */
        size_t lo = 0;
        while (lo < n && store_sid_cmp(model[lo], probe) < 0) lo++;
        store_sidmap_seek(&m, probe, &it);
        if (lo < n) {
            assert_true(store_sidmap_next(&m, &it, &got, NULL));
            assert_int_equal(store_sid_cmp(got, model[lo]), 0);
        } else {
            assert_false(store_sidmap_next(&m, &it, &got, NULL));
        }
    }
    store_sidmap_free(f->s, &m);
    assert_int_equal(f->s->used_memory, before);
}

/* Appends in order fill whole chunks: a million-entry PEL costs about its
 * entries' bytes. */
static void test_sidmap_appends_stay_dense(void **state)
{
    fixture *f = *state;
    size_t before = f->s->used_memory;
    store_sidmap m;
    store_sidmap_init(&m, sizeof(store_snack));
    int created;
    for (uint64_t i = 1; i <= 100000; i++) store_sidmap_put(f->s, &m, sid(i, 0), &created);
    size_t per = (f->s->used_memory - before) / 100000;
    assert_true(per <= 48);   /* 16-byte ID + 24-byte NACK, and the chunk index */
    store_sid e;
    assert_true(store_sidmap_edge(&m, 0, &e) && e.ms == 1);
    assert_true(store_sidmap_edge(&m, 1, &e) && e.ms == 100000);
    for (uint64_t i = 1; i <= 100000; i++) assert_int_equal(store_sidmap_del(f->s, &m, sid(i, 0)), 1);
    assert_int_equal(m.count, 0);
    assert_int_equal(f->s->used_memory, before);
}

static void test_groups_and_consumers_in_rax_order(void **state)
{
    fixture *f = *state;
    store_stream *st = store_stream_of(f->k);
    const char *names[] = {"b", "a", "ab", "", "B", "abc"};
    for (size_t i = 0; i < 6; i++)
        assert_non_null(store_sgroup_create(f->s, st, names[i], strlen(names[i]), sid(0, 0), 0));
    assert_null(store_sgroup_create(f->s, st, "ab", 2, sid(1, 1), 0));
    const char *order[] = {"", "B", "a", "ab", "abc", "b"};
    assert_int_equal(st->ngroups, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(st->groups[i]->nlen, strlen(order[i]));
        assert_memory_equal(st->groups[i]->name, order[i], strlen(order[i]));
    }
    store_sgroup *g = store_sgroup_find(st, "ab", 2);
    assert_non_null(g);
    assert_non_null(store_sconsumer_create(f->s, g, "zed", 3, 5));
    assert_non_null(store_sconsumer_create(f->s, g, "al", 2, 6));
    assert_null(store_sconsumer_create(f->s, g, "al", 2, 7));
    assert_memory_equal(g->consumers[0]->name, "al", 2);
    assert_int_equal(store_sgroup_destroy(f->s, st, "ab", 2), 1);
    assert_int_equal(store_sgroup_destroy(f->s, st, "ab", 2), 0);
    assert_null(store_sgroup_find(st, "ab", 2));
}

static void test_pel_assign_ack_and_consumer_delete(void **state)
{
    fixture *f = *state;
    store_stream *st = store_stream_of(f->k);
    store_sgroup *g = store_sgroup_create(f->s, st, "g", 1, sid(0, 0), STORE_SCG_INVALID_READ);
    store_sconsumer *a = store_sconsumer_create(f->s, g, "a", 1, 0), *b = store_sconsumer_create(f->s, g, "b", 1, 0);
    int created;
    for (uint64_t i = 1; i <= 10; i++) {
        store_snack *n = store_sidmap_put(f->s, &g->pel, sid(i, 0), &created);
        store_snack_assign(f->s, n, sid(i, 0), i % 2 ? a : b);
    }
    assert_int_equal(a->pel.count, 5);
    store_snack_assign(f->s, store_sidmap_get(&g->pel, sid(1, 0)), sid(1, 0), b);   /* a hand-over */
    assert_int_equal(a->pel.count, 4);
    assert_int_equal(b->pel.count, 6);
    assert_int_equal(store_snack_ack(f->s, g, sid(2, 0)), 1);
    assert_int_equal(store_snack_ack(f->s, g, sid(2, 0)), 0);
    assert_int_equal(b->pel.count, 5);
    assert_int_equal(store_sconsumer_delete(f->s, g, b), 5);   /* its entries leave the group's PEL */
    assert_int_equal(g->pel.count, 4);
    assert_null(store_sidmap_get(&g->pel, sid(1, 0)));
    assert_non_null(store_sidmap_get(&g->pel, sid(3, 0)));
}

static void test_lag_rules(void **state)
{
    fixture *f = *state;
    store_stream *st = store_stream_of(f->k);
    store_sgroup *g = store_sgroup_create(f->s, st, "g", 1, sid(0, 0), STORE_SCG_INVALID_READ);
    int valid;
    assert_int_equal(store_sgroup_lag(st, g, &valid), 0);   /* nothing ever added */
    assert_true(valid);
    const char *items[2] = {"f", "v"};
    size_t lens[2] = {1, 1};
    for (uint64_t i = 1; i <= 5; i++) store_stream_append(f->s, st, sid(i, 0), items, lens, 2, 100, 4096);
    assert_int_equal(store_sgroup_lag(st, g, &valid), 5);   /* before the first entry */
    assert_int_equal(store_stream_distance(st, sid(3, 0)), STORE_SCG_INVALID_READ);   /* in the middle */
    assert_int_equal(store_stream_distance(st, sid(1, 0)), 1);
    assert_int_equal(store_stream_distance(st, sid(5, 0)), 5);
    assert_int_equal(store_stream_delete(f->s, st, sid(3, 0)), 1);
    assert_true(store_stream_has_tombstones(st, sid(2, 0), NULL));
    assert_false(store_stream_has_tombstones(st, sid(4, 0), NULL));
    g->last_id = sid(2, 0);
    g->entries_read = 2;
    store_sgroup_lag(st, g, &valid);   /* a tombstone ahead: unknown */
    assert_false(valid);
    g->last_id = sid(5, 0);   /* a counter kept: the lag is read from it */
    assert_int_equal(store_sgroup_lag(st, g, &valid), 3);
    g->entries_read = STORE_SCG_INVALID_READ;   /* none: at the last ID it is known */
    assert_int_equal(store_sgroup_lag(st, g, &valid), 0);
    assert_true(valid);
}

/* COPY takes the groups along, each NACK pointing at the copy's consumer. */
static void test_copy_keeps_groups_apart(void **state)
{
    fixture *f = *state;
    store_stream *st = store_stream_of(f->k);
    store_sgroup *g = store_sgroup_create(f->s, st, "g", 1, sid(7, 0), 3);
    store_sconsumer *a = store_sconsumer_create(f->s, g, "a", 1, 9);
    int created;
    for (uint64_t i = 1; i <= 200; i++)
        store_snack_assign(f->s, store_sidmap_put(f->s, &g->pel, sid(i, 0), &created), sid(i, 0), a);
    store_key *c = store_copy(f->s, f->k, "c", 1);
    store_stream *cs = store_stream_of(c);
    store_sgroup *cg = store_sgroup_find(cs, "g", 1);
    assert_non_null(cg);
    assert_ptr_not_equal(cg, g);
    assert_int_equal(cg->pel.count, 200);
    assert_int_equal(cg->entries_read, 3);
    store_snack *n = store_sidmap_get(&cg->pel, sid(100, 0));
    assert_ptr_equal(n->consumer, cg->consumers[0]);
    assert_ptr_not_equal(n->consumer, a);
    assert_int_equal(store_snack_ack(f->s, cg, sid(100, 0)), 1);
    assert_non_null(store_sidmap_get(&g->pel, sid(100, 0)));
    assert_int_equal(a->pel.count, 200);
    size_t used = f->s->used_memory;
    store_delete_key(f->s, c);
    assert_true(f->s->used_memory < used);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sidmap_random_against_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sidmap_appends_stay_dense, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups_and_consumers_in_rax_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pel_assign_ack_and_consumer_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lag_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_keeps_groups_apart, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
