/* geohash.c - the geohash math of Redis's geo commands: every expression
 * is evaluated in Redis's order so scores, coordinates and distances agree
 * to the last bit (geohash.c, geohash_helper.c in Redis 7.0). */
#include <math.h>

#include "geohash.h"

#define EARTH_RADIUS_M 6372797.560856   /* WGS-84's quadratic mean radius */
#define MERCATOR_MAX 20037726.37
#define DEG_RAD (M_PI / 180.0)

static double deg_rad(double deg) { return deg * DEG_RAD; }
static double rad_deg(double rad) { return rad / DEG_RAD; }

/* Spread the low 32 bits of v over the even bits of the result. */
static uint64_t spread(uint32_t v32)
{
    uint64_t v = v32;
    v = (v | (v << 16)) & 0x0000FFFF0000FFFFULL;
    v = (v | (v << 8)) & 0x00FF00FF00FF00FFULL;
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    v = (v | (v << 2)) & 0x3333333333333333ULL;
    v = (v | (v << 1)) & 0x5555555555555555ULL;
    return v;
}

/* The even bits of v packed into 32. */
static uint32_t squeeze(uint64_t v)
{
    v &= 0x5555555555555555ULL;
    v = (v | (v >> 1)) & 0x3333333333333333ULL;
    v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    v = (v | (v >> 4)) & 0x00FF00FF00FF00FFULL;
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFFULL;
    v = (v | (v >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)v;
}

static const double wgs_lon[2] = {STORE_GEO_LONG_MIN, STORE_GEO_LONG_MAX};
static const double wgs_lat[2] = {STORE_GEO_LAT_MIN, STORE_GEO_LAT_MAX};

int store_geohash_encode_in(double lon, double lat, const double lon_range[2],
                            const double lat_range[2], unsigned step, store_geohash *h)
{
    if (step == 0 || step > 32) return 0;
    if (lon > STORE_GEO_LONG_MAX || lon < STORE_GEO_LONG_MIN || lat > STORE_GEO_LAT_MAX ||
        lat < STORE_GEO_LAT_MIN)
        return 0;
    h->bits = 0;
    h->step = (uint8_t)step;
    if (lat < lat_range[0] || lat > lat_range[1] || lon < lon_range[0] || lon > lon_range[1]) return 0;
    double lat_off = (lat - lat_range[0]) / (lat_range[1] - lat_range[0]);
    double lon_off = (lon - lon_range[0]) / (lon_range[1] - lon_range[0]);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    /* latitude in the even bits, longitude in the odd ones; an offset of
     * exactly 1 (the top edge) carries into bit 2 * step as in Redis */
    h->bits = spread((uint32_t)lat_off) | (spread((uint32_t)lon_off) << 1);
    return 1;
}

int store_geohash_encode(double lon, double lat, unsigned step, store_geohash *h)
{
    return store_geohash_encode_in(lon, lat, wgs_lon, wgs_lat, step, h);
}

int store_geohash_decode(store_geohash h, store_geo_area *a)
{
    if (h.bits == 0 && h.step == 0) return 0;
    uint32_t ilat = squeeze(h.bits), ilon = squeeze(h.bits >> 1);
    double lat_scale = wgs_lat[1] - wgs_lat[0], lon_scale = wgs_lon[1] - wgs_lon[0];
    double cells = (double)(1ULL << h.step);
    a->lat_min = wgs_lat[0] + (ilat * 1.0 / cells) * lat_scale;
    a->lat_max = wgs_lat[0] + ((ilat + 1) * 1.0 / cells) * lat_scale;
    a->lon_min = wgs_lon[0] + (ilon * 1.0 / cells) * lon_scale;
    a->lon_max = wgs_lon[0] + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return 1;
}

uint64_t store_geohash_align52(store_geohash h) { return h.bits << (52 - h.step * 2); }

static double clamp(double v, double lo, double hi) { return v > hi ? hi : v < lo ? lo : v; }

int store_geohash_decode_score(double score, double xy[2])
{
    store_geohash h = {(uint64_t)score, STORE_GEO_STEP_MAX};
    store_geo_area a;
    if (!store_geohash_decode(h, &a)) return 0;
    xy[0] = clamp((a.lon_min + a.lon_max) / 2, STORE_GEO_LONG_MIN, STORE_GEO_LONG_MAX);
    xy[1] = clamp((a.lat_min + a.lat_max) / 2, STORE_GEO_LAT_MIN, STORE_GEO_LAT_MAX);
    return 1;
}

int store_geohash_string(double score, char *dst)
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    static const double lon_range[2] = {-180, 180}, lat_range[2] = {-90, 90};
    double xy[2];
    store_geohash h = {0, 0};
    if (!store_geohash_decode_score(score, xy)) return 0;
    store_geohash_encode_in(xy[0], xy[1], lon_range, lat_range, STORE_GEO_STEP_MAX, &h);
    /* 52 bits make 10 characters; the 11th is a 0 for compatibility */
    for (int i = 0; i < 10; i++) dst[i] = alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    dst[10] = alphabet[0];
    dst[11] = '\0';
    return 1;
}

/* ---- distances ---- */

static double lat_distance(double lat1, double lat2)
{
    return EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double store_geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* the same meridian: the haversine reduces to the latitude difference */
    if (v == 0.0) return lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

int store_geo_within(const store_geo_shape *s, double lon, double lat, double *dist)
{
    if (s->type == STORE_GEO_CIRCLE) {
        *dist = store_geo_distance(s->xy[0], s->xy[1], lon, lat);
        return *dist <= s->radius * s->conversion;
    }
    /* a box: the cheaper latitude test first, then the longitude one
     * along the point's own parallel */
    if (lat_distance(lat, s->xy[1]) > s->height * s->conversion / 2) return 0;
    if (store_geo_distance(lon, lat, s->xy[0], lat) > s->width * s->conversion / 2) return 0;
    *dist = store_geo_distance(s->xy[0], s->xy[1], lon, lat);
    return 1;
}

/* ---- the boxes of a search ---- */

/* How many bits the 9 boxes need for a search of range_m around lat. */
static unsigned steps_for_range(double range_m, double lat)
{
    if (range_m == 0) return 26;
    int step = 1;
    while (range_m < MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2;   /* the range fits in most cases */
    if (lat > 66 || lat < -66) {   /* meridians converge towards the poles */
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return (unsigned)step;
}

/* The shape's bounding box: lon min, lat min, lon max, lat max. Edges bend
 * with latitude, so the wider parallel is taken on the equator's side. */
static void bounding_box(const store_geo_shape *s, double b[4])
{
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->type == STORE_GEO_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == STORE_GEO_CIRCLE ? s->radius : s->width / 2);
    const double lat_delta = rad_deg(height / EARTH_RADIUS_M);
    const double lon_delta_top = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    const double lon_delta_bottom = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    int south = lat < 0;
    b[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    b[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    b[1] = lat - lat_delta;
    b[3] = lat + lat_delta;
}

/* Move a hash by one cell along longitude (odd bits) or latitude (even
 * bits), wrapping around within its step. */
static void move(store_geohash *h, int d, uint64_t mine)
{
    if (d == 0) return;
    uint64_t other = ~mine;
    uint64_t m = h->bits & mine, o = h->bits & other;
    uint64_t fill = other >> (64 - h->step * 2);   /* the bits below each of ours */
    if (d > 0)
        m = m + (fill + 1);
    else
        m = (m | fill) - (fill + 1);
    m &= mine >> (64 - h->step * 2);
    h->bits = m | o;
}

static store_geohash neighbour(store_geohash h, int dx, int dy)
{
    move(&h, dx, 0xaaaaaaaaaaaaaaaaULL);
    move(&h, dy, 0x5555555555555555ULL);
    return h;
}

static void around(store_geohash c, store_geohash out[9])
{
    static const int d[9][2] = {{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
    for (int i = 0; i < 9; i++) out[i] = neighbour(c, d[i][0], d[i][1]);
}

enum { C, N, S, E, W, NE, NW, SE, SW };

void store_geo_boxes(const store_geo_shape *s, store_geohash out[9])
{
    double b[4];
    bounding_box(s, b);
    double lon = s->xy[0], lat = s->xy[1];
    /* a box's reach is to its corner */
    double range = s->type == STORE_GEO_CIRCLE ? s->radius
                   : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    range *= s->conversion;
    unsigned steps = steps_for_range(range, lat);
    store_geohash h = {0, 0};
    store_geo_area area, n, so, e, w;
    store_geohash_encode(lon, lat, steps, &h);
    around(h, out);
    store_geohash_decode(h, &area);
    /* near a cell's edge the estimate can be too fine: one step coarser
     * when a side box does not reach the bounding box */
    store_geohash_decode(out[N], &n);
    store_geohash_decode(out[S], &so);
    store_geohash_decode(out[E], &e);
    store_geohash_decode(out[W], &w);
    int coarser = n.lat_max < b[3] || so.lat_min > b[1] || e.lon_max < b[2] || w.lon_min > b[0];
    if (steps > 1 && coarser) {
        steps--;
        store_geohash_encode(lon, lat, steps, &h);
        around(h, out);
        store_geohash_decode(h, &area);
    }
    if (steps < 2) return;
    /* drop the boxes the bounding box does not reach */
    static const store_geohash none = {0, 0};
    if (area.lat_min < b[1]) out[S] = out[SW] = out[SE] = none;
    if (area.lat_max > b[3]) out[N] = out[NE] = out[NW] = none;
    if (area.lon_min < b[0]) out[W] = out[SW] = out[NW] = none;
    if (area.lon_max > b[2]) out[E] = out[SE] = out[NE] = none;
}
