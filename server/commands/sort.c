/* sort.c - SORT and SORT_RO: the elements of a list, set or sorted set ordered
 * by themselves or by keys their BY pattern names, with GET and STORE. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "commands.h"
#include "list.h"
#include "mem.h"
#include "set.h"
#include "zset.h"

/* One element. Offsets, not pointers: the bytes live in the arena, which
 * moves as it grows. Every string there is NUL-terminated, because Redis
 * compares ALPHA with strcoll and converts numbers with strtod. */
typedef struct sort_item {
    size_t off, len;        /* the element */
    size_t by_off, by_len;  /* ALPHA BY: the value compared; by_off == NO_BY when missing */
    double score;           /* numeric: the element's or its BY value's number */
} sort_item;

#define NO_BY ((size_t)-1)

typedef struct sort_req {
    int desc, alpha, dontsort;
    long long limit_start, limit_count;
    const resp_slice *by, *store;
    const resp_slice **gets;
    int ngets;
} sort_req;

typedef struct sort_run {
    client *c;
    resp_buf arena;
    sort_item *items;
    size_t n, cap;
    resp_buf name;   /* scratch: a pattern's key name */
    /* what the comparison reads, set before sorting */
    int desc, alpha, by_pattern, binary;
} sort_run;

/* ---- parsing ---- */

/* Redis's options, in any order, each checked as it comes: the first bad
 * one is the reply. The key itself is looked at only after. */
static int parse(client *c, int readonly, sort_req *r)
{
    memset(r, 0, sizeof(*r));
    r->limit_count = -1;
    r->gets = mem_alloc((size_t)c->argc * sizeof(*r->gets));
    int all_keys = acl_all_keys_allowed(c, c->cmd, ACL_KS_ACCESS);
    for (int j = 2; j < c->argc; j++) {
        const resp_slice *a = &c->argv[j];
        int left = c->argc - j - 1;
        if (arg_is(a, "asc")) {
            r->desc = 0;
        } else if (arg_is(a, "desc")) {
            r->desc = 1;
        } else if (arg_is(a, "alpha")) {
            r->alpha = 1;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (!arg_ll_or_reply(c, &c->argv[j + 1], &r->limit_start) ||
                !arg_ll_or_reply(c, &c->argv[j + 2], &r->limit_count))
                return 0;
            j += 2;
        } else if (!readonly && arg_is(a, "store") && left >= 1) {
            r->store = &c->argv[++j];
        } else if (arg_is(a, "by") && left >= 1) {
            r->by = &c->argv[++j];
            /* A pattern without '*' (before any NUL: Redis reads it as a C
             * string) names no per-element key: nothing to sort by. */
            r->dontsort = !memchr(r->by->ptr, '*', strnlen(r->by->ptr, r->by->len));
            if (!r->dontsort && !all_keys) {
                reply_error(c, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                return 0;
            }
        } else if (arg_is(a, "get") && left >= 1) {
            if (!all_keys) {
                reply_error(c, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                return 0;
            }
            r->gets[r->ngets++] = &c->argv[++j];
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    return 1;
}

/* ---- the arena and the elements ---- */

/* p may point into the arena itself (GET # when storing): it is found
 * again after the arena has grown. */
static size_t arena_put(sort_run *s, const char *p, size_t len)
{
    size_t off = s->arena.len;
    if (len && off && p >= s->arena.data && p < s->arena.data + off) {
        size_t at = (size_t)(p - s->arena.data);
        resp_buf_reserve(&s->arena, len + 1);
        p = s->arena.data + at;
    }
    resp_buf_append(&s->arena, p, len);
    resp_buf_append(&s->arena, "", 1);
    return off;
}

static const char *arena_at(const sort_run *s, size_t off) { return s->arena.data + off; }

static void add_item(const char *v, size_t len, void *ctx)
{
    sort_run *s = ctx;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->items = mem_realloc(s->items, s->cap * sizeof(*s->items));
    }
    s->items[s->n++] = (sort_item){ arena_put(s, v, len), len, NO_BY, 0, 0 };
}

static void add_member(const char *m, size_t mlen, double score, void *ctx)
{
    (void)score;
    add_item(m, mlen, ctx);
}

static size_t value_len(const store_key *k)
{
    switch (store_key_type(k)) {
    case STORE_LIST: return store_list_len(k);
    case STORE_SET: return store_set_len(store_set_of_const(k));
    default: return store_zset_len(k);
    }
}

/* n elements from index first, towards the tail or (reverse) the head:
 * copied out, so lookups of pattern keys (which may reclaim expired keys)
 * and STORE onto the sorted key itself cannot pull them away. */
static void load(sort_run *s, const store_key *k, size_t first, size_t n, int reverse)
{
    if (!n) return;
    if (store_key_type(k) == STORE_LIST) store_list_range(k, first, n, reverse, add_item, s);
    else if (store_key_type(k) == STORE_SET) store_set_foreach(store_set_of_const(k), add_item, s);   /* all of it */
    else store_zset_visit(k, first, n, reverse, add_member, s);
}

/* ---- patterns ---- */

/* Redis's lookupKeyByPattern: "#" is the element itself; otherwise the
 * first '*' is replaced by the element, and "->field" after it (non-empty)
 * reads that field of a hash instead of a string. The pattern is read as
 * a C string up to its first NUL for '#', '*' and "->", as Redis does.
 * The key is looked up as a read (hits, misses, keymiss). NULL when there
 * is no such value; the bytes stay valid until the next write. */
static const char *pattern_value(sort_run *s, const resp_slice *pat, const char *elem, size_t elen,
                                 size_t *vlen)
{
    size_t clen = strnlen(pat->ptr, pat->len);
    if (clen == 1 && pat->ptr[0] == '#') {
        *vlen = elen;
        return elem;
    }
    const char *star = memchr(pat->ptr, '*', clen);
    if (!star) return NULL;
    const char *end = pat->ptr + clen, *field = NULL;
    for (const char *f = star + 1; f + 2 < end; f++)
        if (f[0] == '-' && f[1] == '>') {
            field = f + 2;
            break;
        }
    size_t flen = field ? pat->len - (size_t)(field - pat->ptr) : 0;
    size_t pre = (size_t)(star - pat->ptr);
    size_t post = pat->len - pre - 1 - (field ? flen + 2 : 0);
    s->name.len = 0;
    resp_buf_append(&s->name, pat->ptr, pre);
    resp_buf_append(&s->name, elem, elen);
    resp_buf_append(&s->name, star + 1, post);
    resp_slice key = { s->name.data, s->name.len };
    store_key *k = db_lookup_read(s->c, &key);
    if (!k) return NULL;
    if (field) return store_key_type(k) == STORE_HASH ? store_hash_get(k, field, flen, vlen) : NULL;
    return store_key_type(k) == STORE_STRING ? store_string_get(k, vlen) : NULL;
}

/* strtod over the whole C string, as Redis converts: "" is 0, text after a
 * NUL is ignored, overflow, underflow and NaN are errors. */
static int to_score(const char *cstr, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(cstr, &end);
    return *end == '\0' && errno != ERANGE && !isnan(*out);
}

/* Scores (or ALPHA BY values) for every element; 0 if one is not a number
 * (Redis still finishes the sort, then replies with the error). */
static int weigh(sort_run *s, const sort_req *r)
{
    int ok = 1;
    for (size_t i = 0; i < s->n; i++) {
        sort_item *it = &s->items[i];
        const char *cstr = arena_at(s, it->off);
        if (r->by) {
            size_t vlen;
            const char *v = pattern_value(s, r->by, cstr, it->len, &vlen);
            if (!v) continue;   /* missing: score 0, or first in ALPHA order */
            if (r->alpha) {
                it->by_off = arena_put(s, v, vlen);
                it->by_len = vlen;
                continue;
            }
            s->name.len = 0;   /* done with the key name: reuse it for the C string */
            resp_buf_append(&s->name, v, vlen);
            resp_buf_append(&s->name, "", 1);
            cstr = s->name.data;
        } else if (r->alpha) {
            continue;
        }
        if (!to_score(cstr, &it->score)) ok = 0;
    }
    return ok;
}

/* ---- ordering ---- */

static int binary_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int cmp = memcmp(a, b, alen < blen ? alen : blen);
    if (cmp) return cmp;
    return alen < blen ? -1 : alen > blen;
}

/* Redis's sortCompare: numbers, ties broken by the element's bytes; ALPHA
 * by strcoll (the locale's collation), or by bytes when storing; a missing
 * BY value sorts first. */
static int compare(const void *pa, const void *pb, void *ctx)
{
    const sort_item *a = pa, *b = pb;
    const sort_run *s = ctx;
    int cmp;
    if (!s->alpha) {
        if (a->score != b->score) cmp = a->score > b->score ? 1 : -1;
        else cmp = binary_cmp(arena_at(s, a->off), a->len, arena_at(s, b->off), b->len);
    } else if (s->by_pattern) {
        if (a->by_off == NO_BY || b->by_off == NO_BY)
            cmp = (a->by_off == NO_BY) == (b->by_off == NO_BY) ? 0 : a->by_off == NO_BY ? -1 : 1;
        else if (s->binary)
            cmp = binary_cmp(arena_at(s, a->by_off), a->by_len, arena_at(s, b->by_off), b->by_len);
        else
            cmp = strcoll(arena_at(s, a->by_off), arena_at(s, b->by_off));
    } else if (s->binary) {
        cmp = binary_cmp(arena_at(s, a->off), a->len, arena_at(s, b->off), b->len);
    } else {
        cmp = strcoll(arena_at(s, a->off), arena_at(s, b->off));
    }
    return s->desc ? -cmp : cmp;
}

/* Redis sorts with BY and a LIMIT window by a partial quicksort (Bentley
 * and McIlroy's, leaving alone the parts that lie outside the window), so
 * equal elements (an ALPHA BY value two share, or both missing) come out
 * of it in another order than from qsort. The same algorithm, so that they
 * come out in Redis's order. */
static int cmp_at(sort_run *s, size_t i, size_t j) { return compare(&s->items[i], &s->items[j], s); }

static void swap_at(sort_item *v, size_t i, size_t j)
{
    sort_item t = v[i];
    v[i] = v[j];
    v[j] = t;
}

static void swap_run(sort_item *v, size_t i, size_t j, size_t n)
{
    while (n--) swap_at(v, i++, j++);
}

static size_t median3(sort_run *s, size_t a, size_t b, size_t c)
{
    if (cmp_at(s, a, b) < 0) return cmp_at(s, b, c) < 0 ? b : cmp_at(s, a, c) < 0 ? c : a;
    return cmp_at(s, b, c) > 0 ? b : cmp_at(s, a, c) < 0 ? a : c;
}

/* The window [l, r] (element indexes) has no element in [p, p + k). */
static int window_misses(long long l, long long r, size_t p, size_t k)
{
    long long lo = (long long)p, hi = (long long)(p + k);
    return (l < lo && r < lo) || (l >= hi && r >= hi);
}

static void partial_sort(sort_run *s, size_t lo, size_t n, long long l, long long r)
{
    sort_item *v = s->items;
    for (;;) {
        if (n < 7) {   /* insertion sort */
            for (size_t m = lo + 1; m < lo + n; m++)
                for (size_t i = m; i > lo && cmp_at(s, i - 1, i) > 0; i--) swap_at(v, i, i - 1);
            return;
        }
        size_t pm = lo + n / 2;
        if (n > 7) {   /* the pivot: a median of three, of nine when big */
            size_t pl = lo, pn = lo + n - 1;
            if (n > 40) {
                size_t d = n / 8;
                pl = median3(s, pl, pl + d, pl + 2 * d);
                pm = median3(s, pm - d, pm, pm + d);
                pn = median3(s, pn - 2 * d, pn - d, pn);
            }
            pm = median3(s, pl, pm, pn);
        }
        swap_at(v, lo, pm);
        /* three-way partition: elements equal to the pivot gather at both
         * ends ([lo, pa) and (pd, end)), then move to the middle */
        size_t pa = lo + 1, pb = pa, pc = lo + n - 1, pd = pc, end = lo + n;
        for (;;) {
            int c;
            while (pb <= pc && (c = cmp_at(s, pb, lo)) <= 0) {
                if (c == 0) swap_at(v, pa++, pb);
                pb++;
            }
            while (pb <= pc && (c = cmp_at(s, pc, lo)) >= 0) {
                if (c == 0) swap_at(v, pc, pd--);
                pc--;
            }
            if (pb > pc) break;
            swap_at(v, pb++, pc--);
        }
        size_t k = pa - lo < pb - pa ? pa - lo : pb - pa;
        swap_run(v, lo, pb - k, k);
        k = pd - pc < end - pd - 1 ? pd - pc : end - pd - 1;
        swap_run(v, pb, end - k, k);
        if ((k = pb - pa) > 1 && !window_misses(l, r, lo, k)) partial_sort(s, lo, k, l, r);
        if ((k = pd - pc) <= 1) return;
        lo = end - k;   /* the part above the pivot: a loop, not recursion */
        n = k;
        if (window_misses(l, r, lo, n)) return;
    }
}

/* ---- output ---- */

static void reply_sorted(sort_run *s, const sort_req *r, long long start, long long end,
                         long long outlen)
{
    reply_array(s->c, outlen);
    for (long long j = start; j <= end; j++) {
        const sort_item *it = &s->items[j];
        const char *elem = arena_at(s, it->off);
        if (!r->ngets) reply_bulk(s->c, elem, it->len);
        for (int g = 0; g < r->ngets; g++) {
            size_t vlen;
            const char *v = pattern_value(s, r->gets[g], elem, it->len, &vlen);
            if (v) reply_bulk(s->c, v, vlen);
            else reply_null(s->c);
        }
    }
}

/* The result as a list under the STORE key (its TTL dropped, as a SET
 * would), or that key deleted when the result is empty. The values are
 * gathered first: a GET pattern may name the destination itself. */
static void store_sorted(sort_run *s, const sort_req *r, long long start, long long end,
                         long long outlen)
{
    client *c = s->c;
    store *db = client_db(c);
    size_t first = s->n;
    for (long long j = start; j <= end; j++) {
        const sort_item it = s->items[j];
        if (!r->ngets) add_item(arena_at(s, it.off), it.len, s);
        for (int g = 0; g < r->ngets; g++) {
            size_t vlen = 0;
            const char *v = pattern_value(s, r->gets[g], arena_at(s, it.off), it.len, &vlen);
            add_item(v ? v : "", v ? vlen : 0, s);
        }
    }
    store_key *k = db_lookup_write(c, r->store);
    if (outlen) {
        if (k) {
            store_key_reset(db, k, STORE_LIST);
            store_key_set_deadline(db, k, STORE_NO_DEADLINE);
        } else {
            k = store_create_key(db, r->store->ptr, r->store->len, STORE_LIST);
        }
        for (size_t i = first; i < s->n; i++)
            store_list_push(db, k, STORE_TAIL, arena_at(s, s->items[i].off), s->items[i].len);
        db_notify(c, STORE_EV_LIST, "sortstore", r->store);
    } else if (k) {
        db_release_key(c, k, r->store, STORE_RELEASE_REPLACED);
    }
    reply_int(c, outlen);
}

static long long clamp(long long v, long long lo, long long hi) { return v < lo ? lo : v > hi ? hi : v; }

static void sort_generic(client *c, int readonly)
{
    sort_req r;
    sort_run s = { .c = c };
    store_key *k;
    if (!parse(c, readonly, &r)) goto out;
    k = db_lookup_read(c, &c->argv[1]);
    if (k && store_key_type(k) != STORE_LIST && store_key_type(k) != STORE_ZSET &&
        store_key_type(k) != STORE_SET) {
        reply_wrongtype(c);
        goto out;
    }
    int is_set = k && store_key_type(k) == STORE_SET;
    /* A set has no order of its own: stored or in a script (a detached
     * client) its elements are sorted ALPHA anyway, so the result is the
     * same everywhere, as Redis does. */
    if (r.dontsort && is_set && (r.store || (c->flags & CLIENT_DETACHED))) {
        r.dontsort = 0;
        r.alpha = 1;
        r.by = NULL;
    }
    resp_buf_init(&s.arena);
    resp_buf_init(&s.name);

    /* Redis's LIMIT arithmetic, clipped to the length, verbatim in effect:
     * an empty window is end == start - 1. */
    long long len = k ? (long long)value_len(k) : 0;
    long long start = clamp(r.limit_start, 0, len);
    long long count = clamp(r.limit_count, -1, len);
    long long end = count < 0 ? len - 1 : start + count - 1;
    if (start >= len) {
        start = len - 1;
        end = len - 2;
    }
    if (end >= len) end = len - 1;

    if (r.dontsort && is_set) {
        /* Redis loads a whole set and takes the window of it as it is. */
        load(&s, k, 0, (size_t)len, 0);
    } else if (r.dontsort) {
        /* No order to make: the window is read straight off the value in
         * its own order (reversed for DESC) and becomes the whole vector. */
        if (k && end >= start)
            load(&s, k, (size_t)(r.desc ? len - start - 1 : start), (size_t)(end - start + 1), r.desc);
        end -= start;
        start = 0;
    } else if (k) {
        load(&s, k, 0, (size_t)len, 0);
    }

    int numbers_ok = 1;
    if (!r.dontsort) {
        numbers_ok = weigh(&s, &r);
        s.desc = r.desc;
        s.alpha = r.alpha;
        s.by_pattern = r.by != NULL;
        s.binary = r.store != NULL;
        if (r.by && (start != 0 || end != len - 1))
            partial_sort(&s, 0, s.n, start, end);
        else if (s.n > 1)
            qsort_r(s.items, s.n, sizeof(*s.items), compare, &s);
    }

    long long outlen = (r.ngets ? r.ngets : 1) * (end - start + 1);
    if (!numbers_ok) reply_error(c, "ERR One or more scores can't be converted into double");
    else if (!r.store) reply_sorted(&s, &r, start, end, outlen);
    else store_sorted(&s, &r, start, end, outlen);
    resp_buf_free(&s.arena);
    resp_buf_free(&s.name);
out:
    free(s.items);
    free(r.gets);
}

void cmd_sort(client *c) { sort_generic(c, 0); }
void cmd_sort_ro(client *c) { sort_generic(c, 1); }
