/* fuzz_store.c - libFuzzer target for the keyspace: a command-ish stream
 * (RESP or inline, so client captures are seeds) drives store operations
 * under a fake clock, mirrored in a plain model; after every operation the
 * store must agree with the model (size, deadlines, values, hash fields).
 * TICK <ms> moves the clock and ACTIVE runs the wheel; RANDOMKEY <n>
 * draws with n as the random word. A set's members are model fields with
 * empty values; SPOP <key> <n> draws one with n as the random word and
 * SSCAN <key> <cursor> must see only members. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "num.h"
#include "resp.h"
#include "set.h"
#include "stream.h"

#define MAX_KEYS 64
#define MAX_FIELDS 300   /* past the 128-entry small-hash limit */

typedef struct blob {
    char *p;
    size_t len;
} blob;

typedef struct mfield {
    blob name, val;
} mfield;

typedef struct mkey {
    blob name;
    store_type type;
    int64_t deadline;
    blob str;
    mfield *fields;
    size_t nfields;
    store_sid *pel;   /* a stream's group "g": its pending IDs in order, */
    char *owner;      /* and which of the consumers "c" or "d" holds each */
    size_t npel;
    int group;        /* the group exists */
} mkey;

typedef struct model {
    store *s;
    uint64_t now;
    mkey keys[MAX_KEYS];
    size_t n;
} model;

/* ---- the model ---- */

static blob blob_of(const resp_slice *a)
{
    blob b = {malloc(a->len ? a->len : 1), a->len};
    FUZZ_CHECK(b.p != NULL);
    memcpy(b.p, a->ptr, a->len);
    return b;
}

static int blob_is(const blob *b, const char *p, size_t len)
{
    return b->len == len && memcmp(b->p, p, len) == 0;
}

static void blob_set(blob *b, const char *p, size_t len)
{
    resp_slice a = {p, len};
    free(b->p);
    *b = blob_of(&a);
}

static mkey *model_find(model *m, const char *name, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (blob_is(&m->keys[i].name, name, len)) return &m->keys[i];
    return NULL;
}

static void model_clear_value(mkey *k)
{
    for (size_t i = 0; i < k->nfields; i++) {
        free(k->fields[i].name.p);
        free(k->fields[i].val.p);
    }
    free(k->fields);
    free(k->str.p);
    free(k->pel);
    free(k->owner);
    k->pel = NULL;
    k->owner = NULL;
    k->npel = 0;
    k->group = 0;
    k->fields = NULL;
    k->nfields = 0;
    k->str = (blob){NULL, 0};
}

static void model_remove(model *m, mkey *k)
{
    model_clear_value(k);
    free(k->name.p);
    *k = m->keys[--m->n];
}

static mkey *model_add(model *m, const resp_slice *name, store_type t)
{
    mkey *k = &m->keys[m->n++];
    memset(k, 0, sizeof(*k));
    k->name = blob_of(name);
    k->type = t;
    k->deadline = STORE_NO_DEADLINE;
    return k;
}

static mfield *model_field(mkey *k, const char *f, size_t flen)
{
    for (size_t i = 0; i < k->nfields; i++)
        if (blob_is(&k->fields[i].name, f, flen)) return &k->fields[i];
    return NULL;
}

static void model_hset(mkey *k, const resp_slice *f, const resp_slice *v)
{
    mfield *mf = model_field(k, f->ptr, f->len);
    if (!mf) {
        k->fields = realloc(k->fields, (k->nfields + 1) * sizeof(*k->fields));
        FUZZ_CHECK(k->fields != NULL);
        mf = &k->fields[k->nfields++];
        mf->name = blob_of(f);
        mf->val = (blob){NULL, 0};
    }
    blob_set(&mf->val, v->ptr, v->len);
}

static void model_hdel(mkey *k, mfield *f)
{
    free(f->name.p);
    free(f->val.p);
    *f = k->fields[--k->nfields];
}

/* Reclaims (lazy or by the wheel) must be due, and are the only way a key
 * leaves the model other than the operations that delete. */
static void on_expired(const char *key, size_t len, void *ctx)
{
    model *m = ctx;
    mkey *k = model_find(m, key, len);
    FUZZ_CHECK(k != NULL);
    FUZZ_CHECK(k->deadline != STORE_NO_DEADLINE && (uint64_t)k->deadline <= m->now);
    model_remove(m, k);
}

static uint64_t fake_clock(void *ctx) { return ((model *)ctx)->now; }

/* ---- agreement between store and model ---- */

typedef struct agree {
    model *m;
    size_t live;
} agree;

static void check_field(const char *f, size_t flen, const char *v, size_t vlen, void *ctx)
{
    mfield *mf = model_field(ctx, f, flen);
    FUZZ_CHECK(mf != NULL && blob_is(&mf->val, v, vlen));
}

static void check_member(const char *m, size_t len, void *ctx)
{
    FUZZ_CHECK(model_field(ctx, m, len) != NULL);
}

/* A stream's model: its entries in ID order, each named by its ID as 16
 * big-endian bytes, holding the value of its one pair (field "f"). */
static void sid_name(store_sid id, char out[16])
{
    for (int i = 0; i < 8; i++) {
        out[i] = (char)(id.ms >> (56 - 8 * i));
        out[8 + i] = (char)(id.seq >> (56 - 8 * i));
    }
}

typedef struct swalk {
    const mkey *k;
    size_t i;
    int rev;
} swalk;

static int stream_visit(const store_sentry *e, void *ctx)
{
    swalk *w = ctx;
    FUZZ_CHECK(w->i < w->k->nfields);
    const mfield *mf = &w->k->fields[w->rev ? w->k->nfields - 1 - w->i : w->i];
    char name[16];
    sid_name(e->id, name);
    FUZZ_CHECK(blob_is(&mf->name, name, 16));
    const char *f, *v;
    size_t flen, vlen;
    FUZZ_CHECK(e->pairs == 1);
    store_spos pos = {e->p, e->mp};
    store_sentry_pair(&pos, &f, &flen, &v, &vlen);
    FUZZ_CHECK(flen == 1 && f[0] == 'f' && blob_is(&mf->val, v, vlen));
    w->i++;
    return 0;
}

/* The group's PEL, walked whole and from each ID, and its consumers'. */
static void pel_check(const store_stream *st, const mkey *k)
{
    const store_sgroup *g = store_sgroup_find(st, "g", 1);
    FUZZ_CHECK((g != NULL) == k->group);
    if (!g) return;
    FUZZ_CHECK(g->pel.count == k->npel);
    store_sidmap_it it;
    store_sid id;
    void *v;
    store_sidmap_seek(&g->pel, (store_sid){0, 0}, &it);
    for (size_t i = 0; i < k->npel; i++) {
        FUZZ_CHECK(store_sidmap_next(&g->pel, &it, &id, &v));
        FUZZ_CHECK(!store_sid_cmp(id, k->pel[i]));
        const store_snack *n = v;
        FUZZ_CHECK(n->consumer && n->consumer->name[0] == k->owner[i]);
        FUZZ_CHECK(store_sidmap_get(&n->consumer->pel, id) != NULL);
    }
    FUZZ_CHECK(!store_sidmap_next(&g->pel, &it, &id, &v));
    uint64_t owned = 0;
    for (uint32_t i = 0; i < g->nconsumers; i++) owned += g->consumers[i]->pel.count;
    FUZZ_CHECK(owned == k->npel);
    if (k->npel) {   /* a seek lands on the first ID at or above it */
        store_sid mid = k->pel[k->npel / 2], lo;
        store_sidmap_seek(&g->pel, mid, &it);
        FUZZ_CHECK(store_sidmap_next(&g->pel, &it, &id, NULL) && !store_sid_cmp(id, mid));
        FUZZ_CHECK(store_sidmap_edge(&g->pel, 0, &lo) && !store_sid_cmp(lo, k->pel[0]));
        FUZZ_CHECK(store_sidmap_edge(&g->pel, 1, &lo) && !store_sid_cmp(lo, k->pel[k->npel - 1]));
    }
}

static void stream_check(store_key *sk, const mkey *k)
{
    const store_stream *st = store_stream_of(sk);
    store_sid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    FUZZ_CHECK(st->len == k->nfields);
    for (int rev = 0; rev < 2; rev++) {
        swalk w = {k, 0, rev};
        FUZZ_CHECK(store_stream_range(st, lo, hi, rev, 0, stream_visit, &w) == k->nfields);
    }
    pel_check(st, k);
}

static void check_key(store_key *sk, void *ctx)
{
    agree *a = ctx;
    size_t len;
    const char *name = store_key_name(sk, &len);
    mkey *k = model_find(a->m, name, len);
    a->live++;
    FUZZ_CHECK(k != NULL);
    FUZZ_CHECK(store_key_type(sk) == k->type);
    FUZZ_CHECK(store_key_deadline(sk) == k->deadline);
    if (k->type == STORE_STRING) {
        const char *v = store_string_get(sk, &len);
        FUZZ_CHECK(blob_is(&k->str, v, len));
        return;
    }
    if (k->type == STORE_STREAM) {
        stream_check(sk, k);
        return;
    }
    if (k->type == STORE_SET) {
        FUZZ_CHECK(store_set_len(store_set_of(sk)) == k->nfields);
        store_set_foreach(store_set_of(sk), check_member, k);
        return;
    }
    FUZZ_CHECK(store_hash_len(sk) == k->nfields);
    store_hash_foreach(sk, check_field, k);
}

static void check_model(model *m)
{
    agree a = {m, 0};
    size_t live = 0, expiring = 0;
    uint64_t earliest = UINT64_MAX;
    for (size_t i = 0; i < m->n; i++) {
        int64_t d = m->keys[i].deadline;
        if (d == STORE_NO_DEADLINE) {
            live++;
            continue;
        }
        expiring++;
        live += (uint64_t)d > m->now;
        if ((uint64_t)d < earliest) earliest = (uint64_t)d;
    }
    FUZZ_CHECK(fuzz_check_store(m->s) == live);
    FUZZ_CHECK(store_size(m->s) == m->n);
    FUZZ_CHECK(store_expires_count(m->s) == expiring);
    /* Overdue deadlines are due now, not in the past. */
    FUZZ_CHECK(store_next_due(m->s) <= (earliest > m->now ? earliest : m->now));
    store_foreach(m->s, check_key, &a);
    FUZZ_CHECK(a.live == live);
}

/* ---- commands ---- */

typedef struct cmd {
    model *m;
    const resp_slice *argv;
    size_t argc;
} cmd;

static long long arg_num(const resp_slice *a, long long lo, long long hi)
{
    long long v = 0;
    if (!store_str2ll(a->ptr, a->len, &v)) v = (long long)a->len;
    return v < lo ? lo : v > hi ? hi : v;
}

/* The live key named by argv[i], as the store sees it (an expired one is
 * reclaimed here, through on_expired). */
static store_key *lookup(cmd *c, size_t i)
{
    store_key *k = store_lookup(c->m->s, c->argv[i].ptr, c->argv[i].len);
    FUZZ_CHECK((k != NULL) == (model_find(c->m, c->argv[i].ptr, c->argv[i].len) != NULL));
    return k;
}

static mkey *mirror(cmd *c, size_t i)
{
    return model_find(c->m, c->argv[i].ptr, c->argv[i].len);
}

/* The key argv[1] as type t, created if missing and there is room; NULL
 * if it holds another type or the model is full. */
static store_key *lookup_or_create(cmd *c, store_type t)
{
    store_key *k = lookup(c, 1);
    if (k) return store_key_type(k) == t ? k : NULL;
    if (c->m->n == MAX_KEYS) return NULL;
    model_add(c->m, &c->argv[1], t);
    return store_create_key(c->m->s, c->argv[1].ptr, c->argv[1].len, t);
}

static void op_set(cmd *c)
{
    for (size_t i = 1; i + 1 < c->argc; i += 2) {
        store_key *k = lookup(c, i);
        if (!k && c->m->n == MAX_KEYS) continue;
        mkey *mk = k ? mirror(c, i) : model_add(c->m, &c->argv[i], STORE_STRING);
        const resp_slice *v = &c->argv[i + 1];
        if (k) store_string_set(c->m->s, k, v->ptr, v->len);
        else store_put_string(c->m->s, c->argv[i].ptr, c->argv[i].len, v->ptr, v->len);
        model_clear_value(mk);
        mk->type = STORE_STRING;
        blob_set(&mk->str, v->ptr, v->len);
    }
}

static void op_incrby(cmd *c, long long delta)
{
    store_key *k = lookup(c, 1);
    if (!k && c->m->n < MAX_KEYS) {
        k = store_put_string(c->m->s, c->argv[1].ptr, c->argv[1].len, "0", 1);
        blob_set(&model_add(c->m, &c->argv[1], STORE_STRING)->str, "0", 1);
    }
    if (!k || store_key_type(k) != STORE_STRING) return;
    mkey *mk = mirror(c, 1);
    long long cur = 0, out = 0, sum = 0;
    int want = !store_str2ll(mk->str.p, mk->str.len, &cur) ? STORE_ERR_NOT_INT
             : __builtin_add_overflow(cur, delta, &sum)      ? STORE_ERR_OVERFLOW
                                                              : STORE_OK;
    FUZZ_CHECK(store_string_incrby(c->m->s, k, delta, &out) == want);
    if (want != STORE_OK) return;
    char buf[24];
    FUZZ_CHECK(out == sum);
    blob_set(&mk->str, buf, store_ll2str(buf, sum));
}

/* SETRANGE k off v / APPEND k v: bytes written in place through
 * store_string_writable, the string grown zero-filled to reach them. */
static void op_setrange(cmd *c, int append)
{
    if (c->argc < (append ? 3u : 4u)) return;
    store_key *k = lookup_or_create(c, STORE_STRING);
    if (!k) return;
    mkey *mk = mirror(c, 1);
    const resp_slice *v = &c->argv[append ? 2 : 3];
    size_t off = append ? mk->str.len : (size_t)arg_num(&c->argv[2], 0, 4096), len;
    size_t want = off + v->len > mk->str.len ? off + v->len : mk->str.len;
    char *p = store_string_writable(c->m->s, k, off + v->len, &len);
    FUZZ_CHECK(len == want);
    FUZZ_CHECK(store_string_form(k) == STORE_STR_RAW);
    if (v->len) memcpy(p + off, v->ptr, v->len);
    char *m = calloc(want ? want : 1, 1);
    if (mk->str.len) memcpy(m, mk->str.p, mk->str.len);
    if (v->len) memcpy(m + off, v->ptr, v->len);
    blob_set(&mk->str, m, want);
    free(m);
}

static void op_hset(cmd *c)
{
    store_key *k = lookup_or_create(c, STORE_HASH);
    if (!k) return;
    mkey *mk = mirror(c, 1);
    for (size_t i = 2; i + 1 < c->argc && mk->nfields < MAX_FIELDS; i += 2) {
        const resp_slice *f = &c->argv[i], *v = &c->argv[i + 1];
        int added = model_field(mk, f->ptr, f->len) == NULL;
        FUZZ_CHECK(store_hash_set(c->m->s, k, f->ptr, f->len, v->ptr, v->len) == added);
        model_hset(mk, f, v);
    }
    if (mk->nfields == 0) {   /* "HSET k" alone: callers never keep empty hashes */
        store_delete_key(c->m->s, k);
        model_remove(c->m, mk);
    }
}

static void op_hdel(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_HASH) return;
    mkey *mk = mirror(c, 1);
    for (size_t i = 2; i < c->argc; i++) {
        mfield *f = model_field(mk, c->argv[i].ptr, c->argv[i].len);
        FUZZ_CHECK(store_hash_del(c->m->s, k, c->argv[i].ptr, c->argv[i].len) == (f != NULL));
        if (f) model_hdel(mk, f);
    }
    if (store_hash_len(k) == 0) {
        store_delete_key(c->m->s, k);
        model_remove(c->m, mk);
    }
}

static void op_hincrby(cmd *c)
{
    if (c->argc < 4) return;
    store_key *k = lookup_or_create(c, STORE_HASH);
    if (!k) return;
    mkey *mk = mirror(c, 1);
    const resp_slice *f = &c->argv[2];
    mfield *mf = model_field(mk, f->ptr, f->len);
    long long delta = arg_num(&c->argv[3], LLONG_MIN, LLONG_MAX), cur = 0, out = 0, sum = 0;
    int want = mf && !store_str2ll(mf->val.p, mf->val.len, &cur) ? STORE_ERR_NOT_INT
             : __builtin_add_overflow(cur, delta, &sum)           ? STORE_ERR_OVERFLOW
                                                                   : STORE_OK;
    FUZZ_CHECK(store_hash_incrby(c->m->s, k, f->ptr, f->len, delta, &out) == want);
    if (want == STORE_OK) {
        char buf[24];
        resp_slice v = {buf, store_ll2str(buf, sum)};
        FUZZ_CHECK(out == sum);
        model_hset(mk, f, &v);
    }
    if (mk->nfields == 0) {   /* a new hash whose only increment failed */
        store_delete_key(c->m->s, k);
        model_remove(c->m, mk);
    }
}

static const resp_slice empty_val = {"", 0};

static void op_sadd(cmd *c)
{
    store_key *k = lookup_or_create(c, STORE_SET);
    if (!k) return;
    mkey *mk = mirror(c, 1);
    for (size_t i = 2; i < c->argc && mk->nfields < MAX_FIELDS; i++) {
        const resp_slice *m = &c->argv[i];
        int added = model_field(mk, m->ptr, m->len) == NULL;
        FUZZ_CHECK(store_set_add(c->m->s, store_set_of(k), m->ptr, m->len) == added);
        FUZZ_CHECK(store_set_has(store_set_of(k), m->ptr, m->len));
        if (added) model_hset(mk, m, &empty_val);
    }
    if (mk->nfields == 0) {   /* "SADD k" alone: a set is never kept empty */
        store_delete_key(c->m->s, k);
        model_remove(c->m, mk);
    }
}

/* XADD k ms [seq [value]]: appended when above the top ID, into nodes of
 * at most 4 entries or 64 bytes, so node edges are met often. */
static void op_xadd(cmd *c)
{
    if (c->argc < 3) return;
    store_key *k = lookup_or_create(c, STORE_STREAM);
    if (!k) return;
    mkey *mk = mirror(c, 1);
    store_stream *st = store_stream_of(k);
    store_sid id = {(uint64_t)arg_num(&c->argv[2], 0, LLONG_MAX), c->argc > 3 ? (uint64_t)arg_num(&c->argv[3], 0, LLONG_MAX) : 0};
    if (store_sid_cmp(id, st->last) <= 0 || mk->nfields == MAX_FIELDS) return;
    resp_slice v = c->argc > 4 ? c->argv[4] : empty_val;
    const char *items[2] = {"f", v.ptr};
    size_t lens[2] = {1, v.len};
    store_stream_append(c->m->s, st, id, items, lens, 2, 4, 64);
    char name[16];
    sid_name(id, name);
    resp_slice n = {name, 16};
    model_hset(mk, &n, &v);
}

/* Drop model entry i of a stream, keeping the order. */
static void stream_model_del(mkey *mk, size_t i)
{
    free(mk->fields[i].name.p);
    free(mk->fields[i].val.p);
    memmove(mk->fields + i, mk->fields + i + 1, (mk->nfields - i - 1) * sizeof *mk->fields);
    mk->nfields--;
}

static void op_xdel(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_STREAM || c->argc < 3) return;
    mkey *mk = mirror(c, 1);
    store_sid id = {(uint64_t)arg_num(&c->argv[2], 0, LLONG_MAX), c->argc > 3 ? (uint64_t)arg_num(&c->argv[3], 0, LLONG_MAX) : 0};
    char name[16];
    sid_name(id, name);
    size_t i = 0;
    while (i < mk->nfields && !blob_is(&mk->fields[i].name, name, 16)) i++;
    FUZZ_CHECK(store_stream_delete(c->m->s, store_stream_of(k), id) == (i < mk->nfields));
    if (i < mk->nfields) stream_model_del(mk, i);
}

/* XTRIM k maxlen [~]: exact leaves min(len, maxlen); ~ whole nodes only. */
static void op_xtrim(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_STREAM || c->argc < 3) return;
    mkey *mk = mirror(c, 1);
    uint64_t maxlen = (uint64_t)arg_num(&c->argv[2], 0, MAX_FIELDS);
    int approx = c->argc > 3;
    size_t before = mk->nfields;
    store_sid none = {0, 0};
    size_t deleted = store_stream_trim(c->m->s, store_stream_of(k), 0, maxlen, none, approx, 0);
    FUZZ_CHECK(deleted <= before);
    if (!approx) FUZZ_CHECK(before - deleted == (before < maxlen ? before : maxlen));
    else FUZZ_CHECK(before - deleted >= (before < maxlen ? before : maxlen));
    for (size_t i = 0; i < deleted; i++) stream_model_del(mk, 0);
}

/* XPEL k ms seq: id pending in group "g" (made on first use) for
 * consumer "c"; XACK k ms seq acknowledges it; XCLAIM k ms seq hands it
 * to the other consumer. The model is a sorted array. */
static void op_pel(cmd *c, int what)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_STREAM || c->argc < 3) return;
    mkey *mk = mirror(c, 1);
    store *s = c->m->s;
    store_stream *st = store_stream_of(k);
    store_sid id = {(uint64_t)arg_num(&c->argv[2], 0, 1000), c->argc > 3 ? (uint64_t)arg_num(&c->argv[3], 0, 3) : 0};
    store_sgroup *g = store_sgroup_find(st, "g", 1);
    if (!g) {
        g = store_sgroup_create(s, st, "g", 1, (store_sid){0, 0}, STORE_SCG_INVALID_READ);
        FUZZ_CHECK(g && !store_sgroup_create(s, st, "g", 1, id, 0));
        mk->group = 1;
    }
    size_t i = 0;
    while (i < mk->npel && store_sid_cmp(mk->pel[i], id) < 0) i++;
    int found = i < mk->npel && !store_sid_cmp(mk->pel[i], id);
    if (what == 0) {   /* XPEL */
        if (found || mk->npel == 4 * MAX_FIELDS) return;
        store_sconsumer *con = store_sconsumer_find(g, "c", 1);
        if (!con) con = store_sconsumer_create(s, g, "c", 1, 0);
        int created;
        store_snack *n = store_sidmap_put(s, &g->pel, id, &created);
        FUZZ_CHECK(created);
        store_snack_assign(s, n, id, con);
        mk->pel = realloc(mk->pel, (mk->npel + 1) * sizeof *mk->pel);
        mk->owner = realloc(mk->owner, mk->npel + 1);
        FUZZ_CHECK(mk->pel && mk->owner);
        memmove(mk->pel + i + 1, mk->pel + i, (mk->npel - i) * sizeof *mk->pel);
        memmove(mk->owner + i + 1, mk->owner + i, mk->npel - i);
        mk->pel[i] = id;
        mk->owner[i] = 'c';
        mk->npel++;
    } else if (what == 1) {   /* XACK */
        FUZZ_CHECK(store_snack_ack(s, g, id) == found);
        if (!found) return;
        memmove(mk->pel + i, mk->pel + i + 1, (mk->npel - i - 1) * sizeof *mk->pel);
        memmove(mk->owner + i, mk->owner + i + 1, mk->npel - i - 1);
        mk->npel--;
    } else {   /* XCLAIM */
        store_snack *n = store_sidmap_get(&g->pel, id);
        FUZZ_CHECK((n != NULL) == found);
        if (!n) return;
        char to = mk->owner[i] == 'c' ? 'd' : 'c';
        store_sconsumer *con = store_sconsumer_find(g, &to, 1);
        if (!con) con = store_sconsumer_create(s, g, &to, 1, 0);
        store_snack_assign(s, n, id, con);
        mk->owner[i] = to;
    }
}

/* A set emptied by a removal goes, as the commands delete it. */
static void set_drop_if_empty(cmd *c, store_key *k, mkey *mk)
{
    if (store_set_len(store_set_of(k)) > 0) return;
    FUZZ_CHECK(mk->nfields == 0);
    store_delete_key(c->m->s, k);
    model_remove(c->m, mk);
}

static void op_srem(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_SET) return;
    mkey *mk = mirror(c, 1);
    for (size_t i = 2; i < c->argc; i++) {
        mfield *f = model_field(mk, c->argv[i].ptr, c->argv[i].len);
        FUZZ_CHECK(store_set_remove(c->m->s, store_set_of(k), c->argv[i].ptr, c->argv[i].len) == (f != NULL));
        if (f) model_hdel(mk, f);
    }
    set_drop_if_empty(c, k, mk);
}

static void op_spop(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_SET) return;
    mkey *mk = mirror(c, 1);
    char buf[STORE_SET_INT_BUF];
    size_t len;
    uint64_t rnd = c->argc > 2 ? (uint64_t)arg_num(&c->argv[2], 0, LLONG_MAX) : 0;
    const char *m = store_set_random(store_set_of(k), rnd, buf, &len);
    mfield *f = model_field(mk, m, len);
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(store_set_remove(c->m->s, store_set_of(k), m, len) == 1);
    model_hdel(mk, f);
    set_drop_if_empty(c, k, mk);
}

static void op_sscan(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_SET) return;
    uint64_t cursor = c->argc > 2 ? (uint64_t)arg_num(&c->argv[2], 0, LLONG_MAX) : 0;
    for (int i = 0; i < 4 && (cursor = store_set_scan(store_set_of(k), cursor, check_member, mirror(c, 1))); i++) {}
}

static void op_del(cmd *c)
{
    for (size_t i = 1; i < c->argc; i++) {
        int deleted = store_delete(c->m->s, c->argv[i].ptr, c->argv[i].len);
        mkey *mk = mirror(c, i);
        FUZZ_CHECK(deleted == (mk != NULL));
        if (mk) model_remove(c->m, mk);
    }
}

enum { DL_NONE, DL_RELATIVE, DL_ABSOLUTE };

/* PEXPIRE takes ms from now, PEXPIREAT absolute ms, PERSIST none. */
static void op_deadline(cmd *c, int how)
{
    store_key *k = lookup(c, 1);
    if (!k) return;
    int64_t d = STORE_NO_DEADLINE;
    if (how != DL_NONE && c->argc > 2) {
        long long v = how == DL_RELATIVE ? arg_num(&c->argv[2], -1000000000000LL, 1000000000000LL)
                                         : arg_num(&c->argv[2], LLONG_MIN, LLONG_MAX);
        d = how == DL_RELATIVE ? (int64_t)c->m->now + v : v;
        if (d < 0) d = 0;   /* the store keeps pre-epoch deadlines as 0 */
    }
    store_key_set_deadline(c->m->s, k, d);
    mirror(c, 1)->deadline = d;
}

static void op_rename(cmd *c)
{
    if (c->argc < 3) return;
    store_key *k = lookup(c, 1);
    if (!k) return;
    const resp_slice *to = &c->argv[2];
    store_key *nk = store_rename(c->m->s, k, to->ptr, to->len);
    FUZZ_CHECK(nk != NULL);
    mkey *src = mirror(c, 1), *dst = model_find(c->m, to->ptr, to->len);
    if (src == dst) return;
    if (dst) {
        model_remove(c->m, dst);
        src = mirror(c, 1);   /* removal moved the last entry */
    }
    blob_set(&src->name, to->ptr, to->len);
}

/* COPY src dst [REPLACE]: the model gets a deep copy (fields, deadline). */
static void op_copy(cmd *c)
{
    if (c->argc < 3) return;
    const resp_slice *to = &c->argv[2];
    if (c->argv[1].len == to->len && memcmp(c->argv[1].ptr, to->ptr, to->len) == 0) return;   /* refused */
    store_key *k = lookup(c, 1);
    store_key *old = lookup(c, 2);
    if (!k || (old && c->argc < 4)) return;
    if (!old && c->m->n == MAX_KEYS) return;
    if (old) {
        store_delete_key(c->m->s, old);
        model_remove(c->m, mirror(c, 2));
    }
    store_key *nk = store_copy(c->m->s, k, to->ptr, to->len);
    FUZZ_CHECK(nk != NULL && store_lookup(c->m->s, to->ptr, to->len) == nk);
    mkey *src = mirror(c, 1), *dst = model_add(c->m, to, src->type);
    dst->deadline = src->deadline;
    if (src->type == STORE_STRING) blob_set(&dst->str, src->str.p, src->str.len);
    for (size_t i = 0; i < src->nfields; i++) {
        resp_slice f = {src->fields[i].name.p, src->fields[i].name.len};
        resp_slice v = {src->fields[i].val.p, src->fields[i].val.len};
        model_hset(dst, &f, &v);
    }
    if (src->npel) {   /* COPY takes a stream's groups along */
        dst->pel = malloc(src->npel * sizeof *dst->pel);
        dst->owner = malloc(src->npel);
        FUZZ_CHECK(dst->pel && dst->owner);
        memcpy(dst->pel, src->pel, src->npel * sizeof *dst->pel);
        memcpy(dst->owner, src->owner, src->npel);
    }
    dst->npel = src->npel;
    dst->group = src->group;
}

/* RANDOMKEY: a live key of the model, or none left (expired ones drawn
 * are reclaimed through on_expired, which checks they were due). */
static void op_random(cmd *c)
{
    store_key *k = store_random_key(c->m->s, (uint64_t)arg_num(&c->argv[1], 0, LLONG_MAX));
    if (!k) {
        for (size_t i = 0; i < c->m->n; i++) {
            int64_t d = c->m->keys[i].deadline;
            FUZZ_CHECK(d != STORE_NO_DEADLINE && (uint64_t)d <= c->m->now);
        }
        return;
    }
    size_t len;
    const char *name = store_key_name(k, &len);
    mkey *mk = model_find(c->m, name, len);
    FUZZ_CHECK(mk != NULL);
    FUZZ_CHECK(mk->deadline == STORE_NO_DEADLINE || (uint64_t)mk->deadline > c->m->now);
}

/* The volatile-* eviction draw: a live key of the model with a deadline,
 * or none left with one. */
static void op_random_volatile(cmd *c)
{
    store_key *k = store_random_volatile_key(c->m->s, (uint64_t)arg_num(&c->argv[1], 0, LLONG_MAX));
    if (!k) {
        for (size_t i = 0; i < c->m->n; i++) {
            int64_t d = c->m->keys[i].deadline;
            FUZZ_CHECK(d == STORE_NO_DEADLINE || (uint64_t)d <= c->m->now);
        }
        return;
    }
    size_t len;
    const char *name = store_key_name(k, &len);
    mkey *mk = model_find(c->m, name, len);
    FUZZ_CHECK(mk != NULL);
    FUZZ_CHECK(mk->deadline != STORE_NO_DEADLINE && (uint64_t)mk->deadline > c->m->now);
    FUZZ_CHECK(store_key_deadline(k) == mk->deadline);
}

static void op_get(cmd *c)
{
    for (size_t i = 1; i < c->argc; i++) lookup(c, i);
}

static void op_hget(cmd *c)
{
    store_key *k = lookup(c, 1);
    if (!k || store_key_type(k) != STORE_HASH) return;
    mkey *mk = mirror(c, 1);
    for (size_t i = 2; i < c->argc; i++) {
        size_t vlen;
        const char *v = store_hash_get(k, c->argv[i].ptr, c->argv[i].len, &vlen);
        mfield *mf = model_field(mk, c->argv[i].ptr, c->argv[i].len);
        FUZZ_CHECK((v != NULL) == (mf != NULL));
        FUZZ_CHECK(!mf || blob_is(&mf->val, v, vlen));
    }
}

static void scanned(store_key *k, void *ctx)
{
    size_t len;
    const char *name = store_key_name(k, &len);
    FUZZ_CHECK(model_find(ctx, name, len) != NULL);
}

static void op_scan(cmd *c)
{
    uint64_t cursor = (uint64_t)arg_num(&c->argv[1], 0, LLONG_MAX);
    for (int i = 0; i < 4 && (cursor = store_scan(c->m->s, cursor, scanned, c->m)); i++) {}
}

static void op_tick(cmd *c)
{
    c->m->now += (uint64_t)arg_num(&c->argv[1], 0, 10000000);
}

static void op_active(cmd *c)
{
    store_expire_due(c->m->s);
    for (size_t i = 0; i < c->m->n; i++) {
        int64_t d = c->m->keys[i].deadline;
        FUZZ_CHECK(d == STORE_NO_DEADLINE || (uint64_t)d > c->m->now);
    }
}

static void op_flush(cmd *c)
{
    store_flush(c->m->s);
    while (c->m->n) model_remove(c->m, &c->m->keys[0]);
}

static int is(const resp_slice *a, const char *name)
{
    return a->len == strlen(name) && strncasecmp(a->ptr, name, a->len) == 0;
}

static void run(cmd *c)
{
    const resp_slice *a = &c->argv[0];
    if (c->argc < 2) {
        if (is(a, "FLUSHALL") || is(a, "FLUSHDB")) op_flush(c);
        else if (is(a, "ACTIVE")) op_active(c);
        return;
    }
    if (is(a, "SET") || is(a, "MSET") || is(a, "SETNX") || is(a, "GETSET")) op_set(c);
    else if (is(a, "INCR")) op_incrby(c, 1);
    else if (is(a, "DECR")) op_incrby(c, -1);
    else if (is(a, "INCRBY") && c->argc > 2) op_incrby(c, arg_num(&c->argv[2], LLONG_MIN, LLONG_MAX));
    else if (is(a, "SETRANGE") || is(a, "SETBIT")) op_setrange(c, 0);
    else if (is(a, "APPEND")) op_setrange(c, 1);
    else if (is(a, "HSET") || is(a, "HMSET") || is(a, "HSETNX")) op_hset(c);
    else if (is(a, "HDEL")) op_hdel(c);
    else if (is(a, "HINCRBY")) op_hincrby(c);
    else if (is(a, "SADD")) op_sadd(c);
    else if (is(a, "SREM")) op_srem(c);
    else if (is(a, "SPOP")) op_spop(c);
    else if (is(a, "SSCAN")) op_sscan(c);
    else if (is(a, "XADD")) op_xadd(c);
    else if (is(a, "XDEL")) op_xdel(c);
    else if (is(a, "XTRIM")) op_xtrim(c);
    else if (is(a, "XPEL")) op_pel(c, 0);
    else if (is(a, "XACK")) op_pel(c, 1);
    else if (is(a, "XCLAIM")) op_pel(c, 2);
    else if (is(a, "DEL") || is(a, "UNLINK") || is(a, "GETDEL")) op_del(c);
    else if (is(a, "PEXPIRE") || is(a, "EXPIRE")) op_deadline(c, DL_RELATIVE);
    else if (is(a, "PEXPIREAT")) op_deadline(c, DL_ABSOLUTE);
    else if (is(a, "PERSIST")) op_deadline(c, DL_NONE);
    else if (is(a, "RENAME")) op_rename(c);
    else if (is(a, "COPY")) op_copy(c);
    else if (is(a, "RANDOMKEY")) op_random(c);
    else if (is(a, "RANDOMVOLATILE")) op_random_volatile(c);
    else if (is(a, "GET") || is(a, "EXISTS") || is(a, "MGET") || is(a, "TYPE")) op_get(c);
    else if (is(a, "HGET") || is(a, "HMGET") || is(a, "HEXISTS")) op_hget(c);
    else if (is(a, "SCAN")) op_scan(c);
    else if (is(a, "TICK")) op_tick(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    model m = {.now = FUZZ_T0};
    resp_parser p;
    size_t off = 0, consumed;
    m.s = store_create(fake_clock, &m);
    store_set_expired_hook(m.s, on_expired, &m);
    resp_parser_init(&p, NULL);
    while (resp_parse(&p, (const char *)data + off, size - off, &consumed) == RESP_COMMAND) {
        cmd c = {&m, p.argv, p.argc};
        off += consumed;
        run(&c);
        check_model(&m);
    }
    resp_parser_free(&p);
    op_flush(&(cmd){&m, NULL, 0});
    store_destroy(m.s);
    return 0;
}
