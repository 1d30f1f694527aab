/* fuzz.h - what the fuzz harnesses share: a check that survives NDEBUG, a
 * deterministic PRNG seeded from the input, the keyspace invariants and a
 * quiet, never-listening server with a frozen clock. */
#ifndef LATCHD_FUZZ_H
#define LATCHD_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"
#include "store.h"

/* The frozen clock every harness starts from. */
#define FUZZ_T0 UINT64_C(1700000000000)

/* assert() vanishes in Release builds; a fuzz check must not. */
#define FUZZ_CHECK(cond) \
    ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond))

void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* The same input always gets the same chunking and clock steps, so a
 * crash found by libFuzzer reproduces from its file alone. */
typedef struct fuzz_rng {
    uint64_t state;
} fuzz_rng;

void fuzz_rng_seed(fuzz_rng *r, const uint8_t *data, size_t size);
uint64_t fuzz_rng_next(fuzz_rng *r);
/* A chunk length in [1, left]: mostly tiny (mid-token splits), sometimes
 * large, so both resumption and batching are exercised. */
size_t fuzz_chunk_len(fuzz_rng *r, size_t left);

/* Invariants any keyspace must hold between commands: keys visited are
 * counted by store_size, hashes are never empty and their length matches
 * their fields, an empty store accounts no memory. Returns the live keys. */
size_t fuzz_check_store(store *s);

/* A server as main() makes one, minus listening: nothing on disk, quiet,
 * clock frozen at FUZZ_T0, SCAN order fixed. name/value (both NULL: none)
 * is one more config parameter. */
void fuzz_server_start(server *s, const char *name, const char *value);
void fuzz_server_stop(server *s);

#endif
