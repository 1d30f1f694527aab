/* test_geohash.c - the geohash math against numbers redis-server 7.0.15
 * gives: scores of GEOADD, GEOPOS's decoded points, GEOHASH's strings,
 * GEODIST's distances, and the boxes a search covers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "geohash.h"

static uint64_t score_of(double lon, double lat)
{
    store_geohash h;
    assert_int_equal(store_geohash_encode(lon, lat, STORE_GEO_STEP_MAX, &h), 1);
    return store_geohash_align52(h);
}

/* GEOPOS prints "%.17Lf" trimmed; the untrimmed digits are enough here. */
static void assert_point(double score, const char *lon, const char *lat)
{
    double xy[2];
    char buf[64];
    assert_int_equal(store_geohash_decode_score(score, xy), 1);
    snprintf(buf, sizeof(buf), "%.17f", xy[0]);
    assert_string_equal(buf, lon);
    snprintf(buf, sizeof(buf), "%.17f", xy[1]);
    assert_string_equal(buf, lat);
}

static void test_encode_scores(void **state)
{
    (void)state;
    assert_true(score_of(13.361389, 38.115556) == 3479099956230698ULL);
    assert_true(score_of(15.087269, 37.502669) == 3479447370796909ULL);
    assert_true(score_of(0, 0) == 3377699720527872ULL);
    assert_true(score_of(-180, -85.05112878) == 0);
    /* the top edge carries past 52 bits, as in Redis */
    assert_true(score_of(180, 85.05112878) == 13510798882111488ULL);
    store_geohash h;
    assert_int_equal(store_geohash_encode(180.0001, 0, 26, &h), 0);
    assert_int_equal(store_geohash_encode(0, 85.06, 26, &h), 0);
    assert_int_equal(store_geohash_encode(0, 0, 0, &h), 0);
}

static void test_decode_points(void **state)
{
    (void)state;
    assert_point(3479099956230698.0, "13.36138933897018433", "38.11555639549629859");
    assert_point(3479447370796909.0, "15.08726745843887329", "37.50266842333162032");
    assert_point(0, "-179.99999731779098511", "-85.05112751263942528");
    assert_point(3377699720527872.0, "0.00000268220901489", "0.00000126736058093");
    /* clamped to the limits */
    assert_point(13510798882111488.0, "180.00000000000000000", "85.05112877999999910");
}

static void test_geohash_strings(void **state)
{
    (void)state;
    char buf[12];
    assert_int_equal(store_geohash_string(3479099956230698.0, buf), 1);
    assert_string_equal(buf, "sqc8b49rny0");
    assert_int_equal(store_geohash_string(3479447370796909.0, buf), 1);
    assert_string_equal(buf, "sqdtr74hyu0");
    assert_int_equal(store_geohash_string(13510798882111488.0, buf), 1);
    assert_string_equal(buf, "bp05b5048p0");
    assert_int_equal(store_geohash_string(0, buf), 1);
    assert_string_equal(buf, "00bh0hbj200");
}

static void test_distances(void **state)
{
    (void)state;
    double a[2], b[2];
    char buf[64];
    store_geohash_decode_score(3479099956230698.0, a);
    store_geohash_decode_score(3479447370796909.0, b);
    snprintf(buf, sizeof(buf), "%.4f", store_geo_distance(a[0], a[1], b[0], b[1]));
    assert_string_equal(buf, "166274.1516");
    /* the same meridian takes the latitude shortcut */
    assert_true(store_geo_distance(10, 0, 10, 1) == store_geo_distance(10, 1, 10, 0));
    snprintf(buf, sizeof(buf), "%.4f", store_geo_distance(10, 0, 10, 1));
    assert_string_equal(buf, "111226.3000");
}

static void test_within(void **state)
{
    (void)state;
    double d;
    store_geo_shape circle = {STORE_GEO_CIRCLE, {15, 37}, 1000, 200, 0, 0};
    assert_int_equal(store_geo_within(&circle, 15.087269, 37.502669, &d), 1);
    circle.radius = 50;
    assert_int_equal(store_geo_within(&circle, 15.087269, 37.502669, &d), 0);
    /* a 400 km box holds a point 280 km away on its diagonal */
    store_geo_shape box = {STORE_GEO_BOX, {15, 37}, 1000, 0, 400, 400};
    assert_int_equal(store_geo_within(&box, 17.24151, 38.788135, &d), 1);
    box.height = 300;
    assert_int_equal(store_geo_within(&box, 17.24151, 38.788135, &d), 0);
}

static void test_boxes(void **state)
{
    (void)state;
    store_geohash b[9];
    /* a small radius: 9 boxes of one step, the centre first */
    store_geo_shape s = {STORE_GEO_CIRCLE, {13.361389, 38.115556}, 1000, 1, 0, 0};
    store_geo_boxes(&s, b);
    int kept = 0;
    for (int i = 0; i < 9; i++) kept += b[i].step != 0;
    assert_true(kept >= 1);
    assert_true(b[0].step > 10);
    store_geohash c;
    store_geohash_encode(13.361389, 38.115556, b[0].step, &c);
    assert_true(c.bits == b[0].bits);
    /* a radius beyond the earth: the coarsest step, nothing dropped */
    s.radius = 50000;
    store_geo_boxes(&s, b);
    for (int i = 0; i < 9; i++) assert_int_equal(b[i].step, 1);
    /* a neighbour wraps around the antimeridian */
    store_geo_shape w = {STORE_GEO_CIRCLE, {-179.9, 0}, 1000, 1000, 0, 0};
    store_geo_boxes(&w, b);
    store_geo_area centre, west;
    assert_int_equal(store_geohash_decode(b[0], &centre), 1);
    assert_int_equal(store_geohash_decode(b[4], &west), 1);
    assert_true(west.lon_min > 0);
    assert_true(centre.lon_min == -180);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_scores),
        cmocka_unit_test(test_decode_points),
        cmocka_unit_test(test_geohash_strings),
        cmocka_unit_test(test_distances),
        cmocka_unit_test(test_within),
        cmocka_unit_test(test_boxes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
