/* value_fixture.h - the cmocka fixture of the value-type tests (lists,
 * zsets): a store on a fixed clock holding one key of the type under test. */
#ifndef LATCHD_TEST_VALUE_FIXTURE_H
#define LATCHD_TEST_VALUE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "store.h"

typedef struct fixture {
    store *s;
    store_key *k;   /* the key under test; tests may replace it */
} fixture;

static uint64_t fixed_clock(void *ctx) { return 1000; }

static int fixture_setup(void **state, store_type t, const char *name)
{
    fixture *f = calloc(1, sizeof(*f));
    f->s = store_create(fixed_clock, f);
    f->k = store_create_key(f->s, name, strlen(name), t);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_destroy(f->s);
    free(f);
    return 0;
}

#endif
