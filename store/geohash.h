/* geohash.h - Redis's 52-bit interleaved geohash (geohash.c, geohash_helper.c)
 * as pure math: encoding, decoding, neighbour boxes, haversine distances. */
#ifndef LATCHD_STORE_GEOHASH_H
#define LATCHD_STORE_GEOHASH_H

/* Pure math without I/O or state lives in store/ beside num.c (not in
 * server/commands/) so that ctest can check it bit for bit without a
 * server, and geo.c keeps only the command grammar and replies. */

#include <stdint.h>

#define STORE_GEO_STEP_MAX 26            /* 26 * 2 = 52 bits: a score */
#define STORE_GEO_LAT_MIN -85.05112878   /* EPSG:900913's limits */
#define STORE_GEO_LAT_MAX 85.05112878
#define STORE_GEO_LONG_MIN -180.0
#define STORE_GEO_LONG_MAX 180.0

/* step pairs of bits; bits 0 and step 0 is "no box" */
typedef struct store_geohash {
    uint64_t bits;
    uint8_t step;
} store_geohash;

typedef struct store_geo_area {
    double lon_min, lon_max, lat_min, lat_max;
} store_geo_area;

/* 1 with *h set, 0 if the point is outside the ranges (or Redis's limits). */
int store_geohash_encode_in(double lon, double lat, const double lon_range[2],
                            const double lat_range[2], unsigned step, store_geohash *h);
/* In Redis's ranges (latitude +-85.05112878). */
int store_geohash_encode(double lon, double lat, unsigned step, store_geohash *h);
/* The hash's box in Redis's ranges; 0 for the "no box" hash. */
int store_geohash_decode(store_geohash h, store_geo_area *a);
/* The hash as a sorted set score (its bits left-aligned to 52). */
uint64_t store_geohash_align52(store_geohash h);
/* A score as the point it stands for (its box's centre, clamped): xy is
 * longitude, latitude. 0 if it does not decode. */
int store_geohash_decode_score(double score, double xy[2]);
/* GEOHASH's standard 11-character string of a score's point (re-encoded
 * with latitude +-90, the 11th character '0'); dst holds 12 bytes. 0 if
 * the score does not decode. */
int store_geohash_string(double score, char *dst);

/* Haversine distance in meters on Redis's earth. */
double store_geo_distance(double lon1, double lat1, double lon2, double lat2);

/* A search area: a circle of radius, or a width x height box, around
 * xy, the sizes in units of conversion meters. */
enum { STORE_GEO_CIRCLE = 1, STORE_GEO_BOX = 2 };
typedef struct store_geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius, width, height;
} store_geo_shape;

/* 1 with *dist (meters from the centre) if the point is inside the shape. */
int store_geo_within(const store_geo_shape *s, double lon, double lat, double *dist);
/* The 9 boxes covering the shape, in Redis's order (centre, N, S, E, W,
 * NE, NW, SE, SW); the useless ones are "no box" (step 0). */
void store_geo_boxes(const store_geo_shape *s, store_geohash out[9]);

#endif
