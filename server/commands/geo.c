/* geo.c - geo commands (GEOADD ... GEOSEARCHSTORE) on sorted sets whose
 * scores are 52-bit geohashes (store/geohash.c): Redis 7.0's grammar, errors
 * in its order, its number formats, search boxes and result order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "geohash.h"
#include "mem.h"
#include "num.h"
#include "zset.h"

/* ---- arguments ---- */

static int double_or_reply(client *c, const resp_slice *a, double *d, const char *err)
{
    if (store_str2double(a->ptr, a->len, d)) return 1;
    reply_error(c, err);
    return 0;
}

/* Two arguments from a: longitude, latitude, in Redis's limits. */
static int lonlat_or_reply(client *c, const resp_slice *a, double xy[2])
{
    for (int i = 0; i < 2; i++)
        if (!double_or_reply(c, &a[i], &xy[i], "ERR value is not a valid float")) return 0;
    if (xy[0] < STORE_GEO_LONG_MIN || xy[0] > STORE_GEO_LONG_MAX || xy[1] < STORE_GEO_LAT_MIN ||
        xy[1] > STORE_GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return 0;
    }
    return 1;
}

/* A unit's size in meters, or -1 after the error reply. */
static double unit_or_reply(client *c, const resp_slice *a)
{
    static const struct { const char *name; double meters; } units[] = {
        {"m", 1}, {"km", 1000}, {"ft", 0.3048}, {"mi", 1609.34},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (arg_is(a, units[i].name)) return units[i].meters;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* The shape's unit, the last of its arguments, and so its type. */
static int shape_unit_or_reply(client *c, const resp_slice *a, store_geo_shape *s, int type)
{
    double m = unit_or_reply(c, a);
    if (m < 0) return 0;
    s->conversion = m;
    s->type = type;
    return 1;
}

/* "radius unit" from a. */
static int radius_or_reply(client *c, const resp_slice *a, store_geo_shape *s)
{
    double r;
    if (!double_or_reply(c, &a[0], &r, "ERR need numeric radius")) return 0;
    if (r < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return 0;
    }
    s->radius = r;
    return shape_unit_or_reply(c, &a[1], s, STORE_GEO_CIRCLE);
}

/* "width height unit" from a. */
static int box_or_reply(client *c, const resp_slice *a, store_geo_shape *s)
{
    double w, h;
    if (!double_or_reply(c, &a[0], &w, "ERR need numeric width") ||
        !double_or_reply(c, &a[1], &h, "ERR need numeric height"))
        return 0;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return 0;
    }
    s->width = w;
    s->height = h;
    return shape_unit_or_reply(c, &a[2], s, STORE_GEO_BOX);
}

/* A member's point; 0 if it is not there. */
static int member_point(const store_key *k, const resp_slice *m, double xy[2])
{
    double score;
    return store_zset_score(k, m->ptr, m->len, &score) && store_geohash_decode_score(score, xy);
}

/* ---- replies ---- */

/* addReplyDoubleDistance: 4 decimals, rounded as llrint does, as a bulk
 * string in both protocols. */
static void reply_distance(client *c, double d)
{
    char buf[48];
    long long v = d == 0 ? 0 : llrint(d * 10000.0);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    int n = snprintf(buf, sizeof(buf), "%s%llu.%04llu", v < 0 ? "-" : "", u / 10000, u % 10000);
    reply_bulk(c, buf, (size_t)n);
}

/* ---- GEOADD / GEOPOS / GEODIST / GEOHASH ---- */

/* zset_add_members' score of "longitude latitude member", checked before. */
static int geo_score(const resp_slice *a, double *score)
{
    double xy[2];
    store_geohash h;
    store_str2double(a[0].ptr, a[0].len, &xy[0]);
    store_str2double(a[1].ptr, a[1].len, &xy[1]);
    store_geohash_encode(xy[0], xy[1], STORE_GEO_STEP_MAX, &h);
    *score = (double)store_geohash_align52(h);
    return 1;
}

/* GEOADD key [NX|XX] [CH] longitude latitude member ...: ZADD with the
 * points as scores, every point checked first. */
void cmd_geoadd(client *c)
{
    int flags = 0, ch = 0, first = 2;
    for (; first < c->argc; first++) {
        const resp_slice *a = &c->argv[first];
        if (arg_is(a, "nx"))
            flags |= STORE_ZADD_NX;
        else if (arg_is(a, "xx"))
            flags |= STORE_ZADD_XX;
        else if (arg_is(a, "ch"))
            ch = 1;
        else
            break;
    }
    if ((c->argc - first) % 3 || ((flags & STORE_ZADD_NX) && (flags & STORE_ZADD_XX)) || first == c->argc) {
        reply_syntax_error(c);
        return;
    }
    double xy[2];
    for (int i = first; i < c->argc; i += 3)
        if (!lonlat_or_reply(c, &c->argv[i], xy)) return;
    zset_add_members(c, flags, ch, first, 3, geo_score);
}

void cmd_geopos(client *c)
{
    store_key *k;
    double xy[2];
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        if (!k || !member_point(k, &c->argv[i], xy)) {
            reply_null_array(c);
            continue;
        }
        reply_array(c, 2);
        reply_human_double(c, xy[0]);
        reply_human_double(c, xy[1]);
    }
}

void cmd_geodist(client *c)
{
    double to_meters = 1, a[2], b[2];
    store_key *k;
    if (c->argc > 5) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 5 && (to_meters = unit_or_reply(c, &c->argv[4])) < 0) return;
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    if (!k || !member_point(k, &c->argv[2], a) || !member_point(k, &c->argv[3], b))
        reply_null(c);
    else
        reply_distance(c, store_geo_distance(a[0], a[1], b[0], b[1]) / to_meters);
}

void cmd_geohash(client *c)
{
    store_key *k;
    double score;
    char buf[12];
    if (!db_read_typed(c, &c->argv[1], STORE_ZSET, &k)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const resp_slice *m = &c->argv[i];
        if (k && store_zset_score(k, m->ptr, m->len, &score) && store_geohash_string(score, buf))
            reply_bulk(c, buf, 11);
        else
            reply_null(c);
    }
}

/* ---- the search ---- */

/* A point found. Members point into the source set, which does not change
 * while they are gathered and replied; STORE copies them out first. */
typedef struct geo_point {
    const char *m;
    size_t mlen;
    double score, dist, xy[2];
} geo_point;

#define GEO_LOCAL 128  /* points held on the stack before the heap */

typedef struct geo_found {
    geo_point *v;
    size_t n, cap;
    const store_geo_shape *shape;
    size_t limit;   /* COUNT ... ANY: stop at this many; 0 none */
    geo_point local[GEO_LOCAL];
} geo_found;

static void consider(const char *m, size_t mlen, double score, void *ctx)
{
    geo_found *f = ctx;
    geo_point p = {m, mlen, score, 0, {0, 0}};
    if (f->limit && f->n >= f->limit) return;
    if (!store_geohash_decode_score(score, p.xy) || !store_geo_within(f->shape, p.xy[0], p.xy[1], &p.dist))
        return;
    if (f->n == f->cap) {
        f->cap *= 2;
        if (f->v == f->local) {
            f->v = mem_alloc(f->cap * sizeof(*f->v));
            memcpy(f->v, f->local, sizeof(f->local));
        } else {
            f->v = mem_realloc(f->v, f->cap * sizeof(*f->v));
        }
    }
    f->v[f->n++] = p;
}

/* Every point with a score in the box's range [its hash, the next hash). */
static void search_box(const store_key *k, store_geohash h, geo_found *f)
{
    store_geohash next = {h.bits + 1, h.step};
    store_zrange r;
    memset(&r, 0, sizeof(r));
    r.min.score = (double)store_geohash_align52(h);
    r.max.score = (double)store_geohash_align52(next);
    r.max.ex = 1;
    size_t n, start = store_zset_span(k, &r, &n);
    store_zset_visit(k, start, n, 0, consider, f);
}

/* membersOfAllNeighbors: the 9 boxes in order, a box equal to the one
 * searched last skipped (a huge radius repeats them; Redis never compares
 * with the centre box, index 0), stopping once ANY's count is reached. */
static void search(const store_key *k, geo_found *f)
{
    store_geohash boxes[9];
    int last = 0;
    store_geo_boxes(f->shape, boxes);
    for (int i = 0; i < 9; i++) {
        if (boxes[i].bits == 0 && boxes[i].step == 0) continue;
        if (last && boxes[i].bits == boxes[last].bits && boxes[i].step == boxes[last].step) continue;
        if (f->n && f->limit && f->n >= f->limit) break;
        search_box(k, boxes[i], f);
        last = i;
    }
}

static int by_dist_asc(const void *a, const void *b)
{
    const geo_point *x = a, *y = b;
    return x->dist > y->dist ? 1 : x->dist == y->dist ? 0 : -1;
}

static int by_dist_desc(const void *a, const void *b) { return -by_dist_asc(a, b); }

/* The first `want` points of a COUNT in order, as Redis's pqsort puts
 * them: Bentley & McIlroy's quicksort that only descends into parts
 * holding ranks below want. Equal distances come out in the order this
 * exact sequence of swaps leaves them, so it is followed step by step. */
typedef int (*geo_cmp)(const void *, const void *);

static void swap_points(geo_point *v, size_t i, size_t j, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        geo_point t = v[i + k];
        v[i + k] = v[j + k];
        v[j + k] = t;
    }
}

static size_t median3(const geo_point *v, size_t a, size_t b, size_t c, geo_cmp cmp)
{
    if (cmp(&v[a], &v[b]) < 0) return cmp(&v[b], &v[c]) < 0 ? b : cmp(&v[a], &v[c]) < 0 ? c : a;
    return cmp(&v[b], &v[c]) > 0 ? b : cmp(&v[a], &v[c]) < 0 ? a : c;
}

static void sort_nearest(geo_point *v, size_t s, size_t n, geo_cmp cmp, size_t want)
{
    for (;;) {
        if (n < 7) {   /* insertion sort */
            for (size_t m = s + 1; m < s + n; m++)
                for (size_t l = m; l > s && cmp(&v[l - 1], &v[l]) > 0; l--) swap_points(v, l, l - 1, 1);
            return;
        }
        size_t pm = s + n / 2;
        if (n > 7) {
            size_t pl = s, pn = s + n - 1;
            if (n > 40) {   /* Tukey's ninther */
                size_t d = n / 8;
                pl = median3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = median3(v, pm - d, pm, pm + d, cmp);
                pn = median3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = median3(v, pl, pm, pn, cmp);
        }
        swap_points(v, s, pm, 1);
        /* split three ways: equal ones gather at both ends first */
        size_t pa = s + 1, pb = s + 1, pc = s + n - 1, pd = s + n - 1;
        int r;
        for (;;) {
            for (; pb <= pc && (r = cmp(&v[pb], &v[s])) <= 0; pb++)
                if (r == 0) swap_points(v, pa++, pb, 1);
            for (; pb <= pc && (r = cmp(&v[pc], &v[s])) >= 0; pc--)
                if (r == 0) swap_points(v, pc, pd--, 1);
            if (pb > pc) break;
            swap_points(v, pb++, pc--, 1);
        }
        size_t end = s + n, k;
        k = pa - s < pb - pa ? pa - s : pb - pa;
        swap_points(v, s, pb - k, k);
        k = pd - pc < end - pd - 1 ? pd - pc : end - pd - 1;
        swap_points(v, pb, end - k, k);
        if ((k = pb - pa) > 1) sort_nearest(v, s, k, cmp, want);   /* the smaller ones start at s */
        if ((k = pd - pc) <= 1 || end - k >= want) return;
        s = end - k;
        n = k;
    }
}

enum {
    FROM_COORDS = 1,    /* GEORADIUS: longitude latitude radius unit */
    FROM_MEMBER = 2,    /* GEORADIUSBYMEMBER: member radius unit */
    NO_STORE = 4,       /* the _RO variants */
    SEARCH = 8,         /* GEOSEARCH's FROM... / BY... options */
    SEARCH_STORE = 16,  /* GEOSEARCHSTORE: the destination first */
};
enum { SORT_NONE, SORT_ASC, SORT_DESC };

typedef struct geo_query {
    store_geo_shape shape;
    const resp_slice *store;   /* the destination, NULL to reply */
    int storedist;
    int withdist, withhash, withcoord;
    int from_member, from_lonlat, by_radius, by_box;
    int sort, any;
    long long count;
} geo_query;

/* georadiusGeneric's option loop from argv[base]; 0 after the error. */
static int parse_options(client *c, const store_key *k, int base, int flags, geo_query *q)
{
    int n = c->argc - base, search = (flags & SEARCH) != 0;
    int may_store = !(flags & NO_STORE) && !search;
    for (int i = 0; i < n; i++) {
        const resp_slice *a = &c->argv[base + i], *next = a + 1;
        if (arg_is(a, "withdist")) {
            q->withdist = 1;
        } else if (arg_is(a, "withhash")) {
            q->withhash = 1;
        } else if (arg_is(a, "withcoord")) {
            q->withcoord = 1;
        } else if (arg_is(a, "any")) {
            q->any = 1;
        } else if (arg_is(a, "asc")) {
            q->sort = SORT_ASC;
        } else if (arg_is(a, "desc")) {
            q->sort = SORT_DESC;
        } else if (arg_is(a, "count") && i + 1 < n) {
            if (!arg_ll_or_reply(c, next, &q->count)) return 0;
            if (q->count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return 0;
            }
            i++;
        } else if ((arg_is(a, "store") || arg_is(a, "storedist")) && i + 1 < n && may_store) {
            q->store = next;
            q->storedist = arg_is(a, "storedist");
            i++;
        } else if (arg_is(a, "storedist") && search && (flags & SEARCH_STORE)) {
            q->storedist = 1;
        } else if (arg_is(a, "frommember") && i + 1 < n && search && !q->from_lonlat) {
            /* a missing source is reported once the options are read */
            if (k && !member_point(k, next, q->shape.xy)) {
                reply_error(c, "ERR could not decode requested zset member");
                return 0;
            }
            q->from_member = 1;
            i++;
        } else if (arg_is(a, "fromlonlat") && i + 2 < n && search && !q->from_member) {
            if (!lonlat_or_reply(c, next, q->shape.xy)) return 0;
            q->from_lonlat = 1;
            i += 2;
        } else if (arg_is(a, "byradius") && i + 2 < n && search && !q->by_box) {
            if (!radius_or_reply(c, next, &q->shape)) return 0;
            q->by_radius = 1;
            i += 2;
        } else if (arg_is(a, "bybox") && i + 3 < n && search && !q->by_radius) {
            if (!box_or_reply(c, next, &q->shape)) return 0;
            q->by_box = 1;
            i += 3;
        } else {
            reply_syntax_error(c);
            return 0;
        }
    }
    return 1;
}

/* The combinations Redis refuses once every option is read. */
static int check_query(client *c, int flags, const geo_query *q)
{
    const resp_slice *name = &c->argv[0];
    if (q->store && (q->withdist || q->withhash || q->withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     flags & SEARCH_STORE ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return 0;
    }
    if ((flags & SEARCH) && !(q->from_member || q->from_lonlat)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)name->len, name->ptr);
        return 0;
    }
    if ((flags & SEARCH) && !(q->by_radius || q->by_box)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s",
                     (int)name->len, name->ptr);
        return 0;
    }
    if (q->any && !q->count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return 0;
    }
    return 1;
}

/* The first n points into dst (the source may be dst: the members are
 * copied out before it changes). */
static void store_points(client *c, const geo_query *q, const geo_point *v, size_t n, int flags)
{
    zset_result r;
    memset(&r, 0, sizeof(r));
    for (size_t i = 0; i < n; i++)
        zset_result_add(&r, v[i].m, v[i].mlen, q->storedist ? v[i].dist / q->shape.conversion : v[i].score);
    zset_result_seal(&r);
    zset_result_store(c, q->store, &r, flags & SEARCH ? "geosearchstore" : "georadiusstore");
    zset_result_free(&r);
}

static void reply_points(client *c, const geo_query *q, const geo_point *v, size_t n)
{
    int extra = q->withdist + q->withhash + q->withcoord;
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) {
        if (extra) reply_array(c, extra + 1);
        reply_bulk(c, v[i].m, v[i].mlen);
        if (q->withdist) reply_distance(c, v[i].dist / q->shape.conversion);
        if (q->withhash) reply_int(c, (long long)v[i].score);
        if (q->withcoord) {
            reply_array(c, 2);
            reply_human_double(c, v[i].xy[0]);
            reply_human_double(c, v[i].xy[1]);
        }
    }
}

/* georadiusGeneric: the source at argv[src]. */
static void radius_generic(client *c, int src, int flags)
{
    store_key *k;
    geo_query q;
    int base;
    memset(&q, 0, sizeof(q));
    if (!db_read_typed(c, &c->argv[src], STORE_ZSET, &k)) return;
    if (flags & FROM_COORDS) {
        base = 6;
        if (!lonlat_or_reply(c, &c->argv[2], q.shape.xy) || !radius_or_reply(c, &c->argv[4], &q.shape)) return;
    } else if (flags & FROM_MEMBER) {
        base = 5;
        /* with no source the center is never looked at, nor the radius */
        if (k && !member_point(k, &c->argv[2], q.shape.xy)) {
            reply_error(c, "ERR could not decode requested zset member");
            return;
        }
        if (k && !radius_or_reply(c, &c->argv[3], &q.shape)) return;
    } else {
        base = flags & SEARCH_STORE ? 3 : 2;
        if (flags & SEARCH_STORE) q.store = &c->argv[1];
    }
    if (!parse_options(c, k, base, flags, &q) || !check_query(c, flags, &q)) return;

    geo_found f;
    f.v = f.local;
    f.n = 0;
    f.cap = GEO_LOCAL;
    f.shape = &q.shape;
    f.limit = q.any ? (size_t)q.count : 0;
    if (k) search(k, &f);
    if (!q.store && f.n == 0) {
        reply_array(c, 0);
    } else {
        /* COUNT means the nearest ones (not with ANY: any that match) */
        if (q.count && q.sort == SORT_NONE && !q.any) q.sort = SORT_ASC;
        size_t n = q.count == 0 || f.n < (size_t)q.count ? f.n : (size_t)q.count;
        geo_cmp cmp = q.sort == SORT_ASC ? by_dist_asc : by_dist_desc;
        if (q.sort != SORT_NONE && n == f.n)
            qsort(f.v, f.n, sizeof(*f.v), cmp);
        else if (q.sort != SORT_NONE)
            sort_nearest(f.v, 0, f.n, cmp, n);
        if (q.store)
            store_points(c, &q, f.v, n, flags);
        else
            reply_points(c, &q, f.v, n);
    }
    if (f.v != f.local) free(f.v);
}

void cmd_georadius(client *c) { radius_generic(c, 1, FROM_COORDS); }
void cmd_georadius_ro(client *c) { radius_generic(c, 1, FROM_COORDS | NO_STORE); }
void cmd_georadiusbymember(client *c) { radius_generic(c, 1, FROM_MEMBER); }
void cmd_georadiusbymember_ro(client *c) { radius_generic(c, 1, FROM_MEMBER | NO_STORE); }
void cmd_geosearch(client *c) { radius_generic(c, 1, SEARCH); }
void cmd_geosearchstore(client *c) { radius_generic(c, 2, SEARCH | SEARCH_STORE); }
