"""Geo commands: GEOADD (NX/XX/CH), GEOPOS, GEODIST, GEOHASH, GEORADIUS,
GEORADIUSBYMEMBER and their _RO forms, GEOSEARCH and GEOSEARCHSTORE, on
sorted sets of 52-bit geohash scores. The exact scores, coordinate and
distance text (RESP2 bulk, RESP3 double for coordinates), the order of
results (pqsort's for COUNT), the edges (poles at +-85.05112878, the
antimeridian, a radius larger than the earth), STORE/STOREDIST, errors in
Redis's order and keyspace events; a random walk compared with a
reference redis-server byte for byte."""

import random

import pytest

from resp_util import parse
import script_util as su
from script_util import array, bulk, error, gone

WRONGTYPE = error(su.WRONGTYPE)
SYNTAX = error("ERR syntax error")
NOT_FLOAT = error("ERR value is not a valid float")
UNIT = error("ERR unsupported unit provided. please use M, KM, FT, MI")

PALERMO = ("13.361389", "38.115556", "Palermo")
CATANIA = ("15.087269", "37.502669", "Catania")


@pytest.fixture
def sicily(conn):
    assert conn.cmd("GEOADD", "Sicily", *PALERMO, *CATANIA) == b":2\r\n"
    return conn


def resp3(conn):
    assert conn.cmd("HELLO", "3").startswith(b"%")


# ---------------------------------------------------------------- GEOADD

def test_geoadd_scores_are_the_52_bit_hash(sicily):
    assert parse(sicily.cmd("ZRANGE", "Sicily", 0, -1, "WITHSCORES")) == [
        b"Palermo", b"3479099956230698", b"Catania", b"3479447370796909"]
    assert sicily.cmd("TYPE", "Sicily") == b"+zset\r\n"


def test_geoadd_options(conn, keyevents):
    steps = [
        (("GEOADD", "g", "XX", 1, 2, "a"), b":0\r\n", []),
        (("GEOADD", "g", 1, 2, "a", 3, 4, "b"), b":2\r\n", [("zadd", "g")]),
        (("GEOADD", "g", 1, 2, "a"), b":0\r\n", []),
        (("GEOADD", "g", 5, 6, "a"), b":0\r\n", [("zadd", "g")]),
        (("GEOADD", "g", "CH", 7, 8, "a", 3, 4, "b", 9, 9, "c"), b":2\r\n", [("zadd", "g")]),
        (("GEOADD", "g", "NX", 0, 0, "a", 1, 1, "d"), b":1\r\n", [("zadd", "g")]),
        (("GEOADD", "g", "XX", "CH", 0, 0, "a", 1, 1, "e"), b":1\r\n", [("zadd", "g")]),
        (("GEOADD", "g", "CH", "NX", 5, 5, "a", 2, 2, "f"), b":1\r\n", [("zadd", "g")]),
    ]
    for cmd, want, events in steps:
        assert conn.cmd(*cmd) == want, cmd
        keyevents.expect(*events)
    assert parse(conn.cmd("ZRANGE", "g", 0, -1)) == [b"a", b"d", b"f", b"b", b"c"]


def test_geoadd_errors(conn):
    assert conn.cmd("GEOADD", "g", "XX", "NX", 1, 2, "a") == SYNTAX
    assert conn.cmd("GEOADD", "g", 1, 2, "a", 3) == SYNTAX
    assert conn.cmd("GEOADD", "g", "GT", 1, 2, "a") == SYNTAX
    assert conn.cmd("GEOADD", "g", "GT", 1, 2) == NOT_FLOAT
    assert conn.cmd("GEOADD", "g", "NX", "CH", "XX") == SYNTAX
    assert conn.cmd("GEOADD", "g", "1") == error("ERR wrong number of arguments for 'geoadd' command")
    assert conn.cmd("GEOADD", "g", "abc", 2, "a") == NOT_FLOAT
    assert conn.cmd("GEOADD", "g", 1, "2x", "a") == NOT_FLOAT
    assert conn.cmd("GEOADD", "g", 200, 100, "a") == error(
        "ERR invalid longitude,latitude pair 200.000000,100.000000")
    assert conn.cmd("GEOADD", "g", 0, 85.06, "a") == error(
        "ERR invalid longitude,latitude pair 0.000000,85.060000")
    # every point is checked before anything is added
    assert conn.cmd("GEOADD", "g", 1, 2, "ok", -180.5, 0, "bad") == error(
        "ERR invalid longitude,latitude pair -180.500000,0.000000")
    gone(conn, "g")
    conn.cmd("SET", "s", "x")
    assert conn.cmd("GEOADD", "s", 1, 2, "a") == WRONGTYPE
    assert conn.cmd("GEOADD", "s", 1, 200, "a") == error(
        "ERR invalid longitude,latitude pair 1.000000,200.000000")


# ---------------------------------------------------------------- GEOPOS GEODIST GEOHASH

def test_geopos(sicily):
    want = (b"*3\r\n*2\r\n$17\r\n13.36138933897018433\r\n$17\r\n38.11555639549629859\r\n"
            b"*2\r\n$17\r\n15.08726745843887329\r\n$17\r\n37.50266842333162032\r\n*-1\r\n")
    assert sicily.cmd("GEOPOS", "Sicily", "Palermo", "Catania", "nope") == want.replace(b"$17", b"$20")
    assert sicily.cmd("GEOPOS", "nokey", "a", "b") == b"*2\r\n*-1\r\n*-1\r\n"
    assert sicily.cmd("GEOPOS", "Sicily") == b"*0\r\n"
    resp3(sicily)
    assert sicily.cmd("GEOPOS", "Sicily", "Palermo", "nope") == (
        b"*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n")
    sicily.cmd("SET", "s", "x")
    assert sicily.cmd("GEOPOS", "s", "a") == WRONGTYPE


@pytest.mark.parametrize("unit,text", [(None, "166274.1516"), ("m", "166274.1516"), ("km", "166.2742"),
                                       ("KM", "166.2742"), ("mi", "103.3182"), ("ft", "545518.8700")])
def test_geodist_units(sicily, unit, text):
    args = ("GEODIST", "Sicily", "Palermo", "Catania") + ((unit,) if unit else ())
    assert sicily.cmd(*args) == bulk(text)
    resp3(sicily)   # a bulk string in RESP3 too, as Redis sends it
    assert sicily.cmd(*args) == bulk(text)


def test_geodist_edge_cases(sicily):
    assert sicily.cmd("GEODIST", "Sicily", "Palermo", "Palermo") == bulk("0.0000")
    assert sicily.cmd("GEODIST", "Sicily", "Palermo", "nope") == b"$-1\r\n"
    assert sicily.cmd("GEODIST", "nokey", "a", "b") == b"$-1\r\n"
    assert sicily.cmd("GEODIST", "Sicily", "Palermo", "Catania", "yd") == UNIT
    assert sicily.cmd("GEODIST", "Sicily", "Palermo", "Catania", "km", "x") == SYNTAX
    # the unit is read before the key
    sicily.cmd("SET", "s", "x")
    assert sicily.cmd("GEODIST", "s", "a", "b", "yd") == UNIT
    assert sicily.cmd("GEODIST", "s", "a", "b") == WRONGTYPE
    resp3(sicily)
    assert sicily.cmd("GEODIST", "Sicily", "Palermo", "nope") == b"_\r\n"


def test_geohash(sicily):
    assert sicily.cmd("GEOHASH", "Sicily", "Palermo", "Catania", "nope") == (
        b"*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n")
    assert sicily.cmd("GEOHASH", "nokey", "a") == b"*1\r\n$-1\r\n"
    sicily.cmd("SET", "s", "x")
    assert sicily.cmd("GEOHASH", "s", "a") == WRONGTYPE


def test_edges_poles_and_antimeridian(conn):
    conn.cmd("GEOADD", "p", 180, 85.05112878, "ne", -180, -85.05112878, "sw", 0, 0, "origin")
    # the top edge carries past 52 bits, as in Redis
    assert parse(conn.cmd("ZRANGE", "p", 0, -1, "WITHSCORES")) == [
        b"sw", b"0", b"origin", b"3377699720527872", b"ne", b"13510798882111488"]
    assert parse(conn.cmd("GEOPOS", "p", "ne", "sw", "origin")) == [
        [b"180", b"85.0511287799999991"], [b"-179.99999731779098511", b"-85.05112751263942528"],
        [b"0.00000268220901489", b"0.00000126736058093"]]
    assert parse(conn.cmd("GEOHASH", "p", "ne", "sw", "origin")) == [b"bp05b5048p0", b"00bh0hbj200", b"s0000000000"]
    assert conn.cmd("GEODIST", "p", "ne", "sw") == bulk("18919844.5891")
    assert parse(conn.cmd("GEORADIUS", "p", 0, 0, 40000, "km", "ASC", "WITHDIST")) == [
        [b"origin", b"0.0003"], [b"sw", b"10560.8118"]]
    # both sides of the antimeridian
    conn.cmd("GEOADD", "a", 179.99, 10, "east", -179.99, 10, "west", 170, 10, "far")
    # Redis's boxes do not wrap around: west, 1 km away, is not found
    assert parse(conn.cmd("GEOSEARCH", "a", "FROMLONLAT", 180, 10, "BYRADIUS", 100, "km", "ASC", "WITHDIST")) == [
        [b"east", b"1.0956"]]
    assert parse(conn.cmd("GEOSEARCH", "a", "FROMMEMBER", "west", "BYBOX", 10, 10, "km", "ASC")) == [b"west", b"east"]


# ---------------------------------------------------------------- searches

@pytest.fixture
def places(conn):
    conn.cmd("GEOADD", "pts", *PALERMO, *CATANIA, "12.758489", "38.788135", "edge1",
             "17.241510", "38.788135", "edge2", "13.5", "37.9", "near", "15.1", "37.5", "twin")
    return conn


def test_georadius_shapes(places):
    c = places
    assert parse(c.cmd("GEORADIUS", "pts", 15, 37, 200, "km", "ASC")) == [b"twin", b"Catania", b"near", b"Palermo"]
    assert parse(c.cmd("GEORADIUS", "pts", 15, 37, 200, "km", "DESC", "COUNT", 2)) == [b"Palermo", b"near"]
    assert parse(c.cmd("GEORADIUS", "pts", 15, 37, 200, "km", "WITHDIST", "WITHHASH", "WITHCOORD", "COUNT", 1,
                       "DESC")) == [
        [b"Palermo", b"190.4424", 3479099956230698, [b"13.36138933897018433", b"38.11555639549629859"]]]
    assert parse(c.cmd("GEORADIUS_RO", "pts", 15, 37, 200, "km", "WITHDIST", "ASC")) == [
        [b"twin", b"56.3134"], [b"Catania", b"56.4413"], [b"near", b"166.0202"], [b"Palermo", b"190.4424"]]
    assert parse(c.cmd("GEORADIUSBYMEMBER", "pts", "Palermo", 100, "km", "ASC")) == [b"Palermo", b"near", b"edge1"]
    assert parse(c.cmd("GEORADIUSBYMEMBER_RO", "pts", "Palermo", 100, "km", "ASC", "WITHDIST")) == [
        [b"Palermo", b"0.0000"], [b"near", b"26.8772"], [b"edge1", b"91.4007"]]
    assert c.cmd("GEORADIUS", "pts", 0, 0, 1, "km") == b"*0\r\n"
    assert c.cmd("GEORADIUS", "nokey", 0, 0, 1, "km") == b"*0\r\n"
    resp3(c)
    assert c.cmd("GEORADIUS", "pts", 15, 37, 200, "km", "WITHDIST", "WITHCOORD", "WITHHASH", "COUNT", 1, "DESC") == (
        b"*1\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n"
        b"*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n")


def test_geosearch_radius_and_box(places):
    c = places
    assert parse(c.cmd("GEOSEARCH", "pts", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "ASC")) == [
        b"twin", b"Catania", b"near", b"Palermo"]
    # the box reaches the corners a circle of half its side misses
    assert parse(c.cmd("GEOSEARCH", "pts", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC", "WITHDIST")) == [
        [b"twin", b"56.3134"], [b"Catania", b"56.4413"], [b"near", b"166.0202"], [b"Palermo", b"190.4424"],
        [b"edge2", b"279.7403"], [b"edge1", b"279.7405"]]
    assert parse(c.cmd("GEOSEARCH", "pts", "FROMMEMBER", "Palermo", "BYBOX", 500, 200, "km", "ASC")) == [
        b"Palermo", b"near", b"edge1", b"Catania", b"twin"]
    # COUNT ANY stops at the first matches, unsorted unless asked
    assert len(parse(c.cmd("GEOSEARCH", "pts", "FROMLONLAT", 15, 37, "BYRADIUS", 5000, "km", "COUNT", 2, "ANY"))) == 2
    assert parse(c.cmd("GEOSEARCH", "pts", "FROMLONLAT", 15, 37, "BYRADIUS", 5000, "km", "COUNT", 2)) == [
        b"twin", b"Catania"]


def test_huge_radius_covers_everything_once(conn):
    rng = random.Random(7)
    pts = [(rng.uniform(-180, 180), rng.uniform(-85, 85), "m%d" % i) for i in range(300)]
    conn.cmd("GEOADD", "w", *[x for p in pts for x in p])
    for args in (("GEORADIUS", "w", 0, 0, 50000, "km"), ("GEORADIUS", "w", 179, 80, 30000, "km"),
                 ("GEOSEARCH", "w", "FROMLONLAT", -180, -85, "BYBOX", 80000, 80000, "km")):
        got = parse(conn.cmd(*args))
        assert len(got) == len(set(got)), args
    assert len(parse(conn.cmd("GEORADIUS", "w", 0, 0, 50000, "km"))) == 300


def test_store_and_storedist(places, keyevents):
    c = places
    assert c.cmd("GEORADIUS", "pts", 15, 37, 200, "km", "STORE", "dst") == b":4\r\n"
    keyevents.expect(("georadiusstore", "dst"))
    assert parse(c.cmd("ZRANGE", "dst", 0, -1, "WITHSCORES")) == [
        b"near", b"3479096050673789", b"Palermo", b"3479099956230698", b"twin", b"3479447216794612",
        b"Catania", b"3479447370796909"]
    assert c.cmd("GEORADIUSBYMEMBER", "pts", "Palermo", 100, "km", "COUNT", 2, "STOREDIST", "dst") == b":2\r\n"
    keyevents.expect(("georadiusstore", "dst"))
    assert parse(c.cmd("ZRANGE", "dst", 0, -1, "WITHSCORES")) == [b"Palermo", b"0", b"near", b"26.877218758898387"]
    assert c.cmd("GEOSEARCHSTORE", "dst", "pts", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "COUNT", 1, "STOREDIST") == b":1\r\n"
    keyevents.expect(("geosearchstore", "dst"))
    assert parse(c.cmd("ZRANGE", "dst", 0, -1)) == [b"twin"]
    # the source as its own destination
    assert c.cmd("GEOSEARCHSTORE", "pts", "pts", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km") == b":1\r\n"
    assert parse(c.cmd("ZRANGE", "pts", 0, -1)) == [b"Palermo"]
    keyevents.expect(("geosearchstore", "pts"))
    # nothing found, or no source: the destination goes
    c.cmd("SET", "dst", "x")
    c.cmd("EXPIRE", "dst", 100)
    keyevents.take()
    assert c.cmd("GEORADIUS", "pts", 0, 0, 1, "km", "STORE", "dst") == b":0\r\n"
    keyevents.expect(("del", "dst"))
    gone(c, "dst")
    c.cmd("SET", "dst", "x")
    keyevents.take()
    assert c.cmd("GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == b":0\r\n"
    keyevents.expect(("del", "dst"))
    assert c.cmd("GEORADIUSBYMEMBER", "nokey", "x", 1, "km", "STORE", "nothing") == b":0\r\n"
    keyevents.expect()


SEARCH_ERRORS = [
    (("GEORADIUS", "pts", 15, 37, 200, "km", "WITHDIST", "STORE", "d"),
     "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (("GEORADIUS_RO", "pts", 15, 37, 200, "km", "STORE", "d"), "ERR syntax error"),
    (("GEORADIUS", "pts", 15, 37, 200, "km", "STORE"), "ERR syntax error"),
    (("GEORADIUS", "pts", 15, 37, 200, "km", "COUNT"), "ERR syntax error"),
    (("GEORADIUS", "pts", 15, 37, 200, "km", "COUNT", "x"), "ERR value is not an integer or out of range"),
    (("GEORADIUS", "pts", 15, 37, 200, "km", "COUNT", 0), "ERR COUNT must be > 0"),
    (("GEORADIUS", "pts", 15, 37, 200, "km", "ANY"), "ERR the ANY argument requires COUNT argument"),
    (("GEORADIUS", "pts", 15, 37, -1, "km"), "ERR radius cannot be negative"),
    (("GEORADIUS", "pts", 15, 37, "r", "km"), "ERR need numeric radius"),
    (("GEORADIUS", "pts", 15, 37, 1, "yd"), "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (("GEORADIUS", "pts", 15, 99, 1, "km"), "ERR invalid longitude,latitude pair 15.000000,99.000000"),
    (("GEORADIUSBYMEMBER", "pts", "nope", 1, "km"), "ERR could not decode requested zset member"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "STORE", "d"), "ERR syntax error"),
    (("GEOSEARCH", "pts", "BYRADIUS", 1, "km", "ASC", "WITHDIST"),
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
    (("geosearch", "pts", "BYRADIUS", 1, "km", "ASC", "WITHDIST"),
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km"), "ERR syntax error"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "ASC", "WITHDIST"),
     "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "BYBOX", 1, 1, "km"), "ERR syntax error"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYBOX", -1, 1, "km"), "ERR height or width cannot be negative"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYBOX", "w", 1, "km"), "ERR need numeric width"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYBOX", 1, "h", "km"), "ERR need numeric height"),
    (("GEOSEARCH", "pts", "FROMMEMBER", "nope", "BYBOX", 1, 1, "km"), "ERR could not decode requested zset member"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "STOREDIST"), "ERR syntax error"),
    (("GEOSEARCHSTORE", "d", "pts", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "WITHCOORD"),
     "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (("GEOSEARCHSTORE", "d", "pts", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "km", "STORE", "x"), "ERR syntax error"),
    (("GEORADIUS", "pts", 1, 2, 3), "ERR wrong number of arguments for 'georadius' command"),
    (("GEOSEARCH", "pts", "FROMLONLAT", 1, 2, "BYRADIUS"), "ERR wrong number of arguments for 'geosearch' command"),
]


@pytest.mark.parametrize("cmd,err", SEARCH_ERRORS, ids=[" ".join(map(str, c[0][:1] + c[0][6:])) for c in SEARCH_ERRORS])
def test_search_errors(places, cmd, err):
    assert places.cmd(*cmd) == error(err)


def test_search_without_source_and_wrong_type(conn):
    # a missing source still has its arguments checked, but a member is
    # never looked for and GEORADIUSBYMEMBER's radius is never read
    assert conn.cmd("GEORADIUSBYMEMBER", "nokey", "x", "abc", "yd") == b"*0\r\n"
    assert conn.cmd("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == b"*0\r\n"
    assert conn.cmd("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "yd") == UNIT
    assert conn.cmd("GEORADIUS", "nokey", 0, 0, 1, "yd") == UNIT
    conn.cmd("SET", "s", "x")
    for cmd in (("GEORADIUS", "s", 0, 0, 1, "km"), ("GEORADIUSBYMEMBER_RO", "s", "a", 1, "km"),
                ("GEOSEARCH", "s", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"),
                ("GEOSEARCHSTORE", "d", "s", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"),
                ("GEORADIUS", "s", 0, 999, 1, "km")):
        assert conn.cmd(*cmd) == WRONGTYPE, cmd
    conn.cmd("GEOADD", "g", 0, 0, "a")
    assert conn.cmd("GEOSEARCHSTORE", "g", "s", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == WRONGTYPE
    assert conn.cmd("GEOSEARCHSTORE", "s", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == b":1\r\n"
    assert conn.cmd("TYPE", "s") == b"+zset\r\n"


def test_geo_in_scripts(sicily):
    assert parse(sicily.cmd("EVAL", "return redis.call('GEOPOS', KEYS[1], 'Palermo')", 1, "Sicily")) == [
        [b"13.36138933897018433", b"38.11555639549629859"]]
    assert sicily.cmd("EVAL", "return redis.call('GEODIST', KEYS[1], 'Palermo', 'Catania', 'km')", 1, "Sicily") == (
        bulk("166.2742"))


# ---------------------------------------------------------------- against a reference

def random_command(rng):
    def lon():
        return rng.choice([str(rng.uniform(-180, 180)), "180", "-180", "0", str(rng.uniform(13, 14))])

    def lat():
        return rng.choice([str(rng.uniform(-85.05112878, 85.05112878)), "85.05112878", "-85.05112878", "0",
                           str(rng.uniform(37, 38))])

    def member():
        return "m%d" % rng.randrange(60)

    opts = [[], ["WITHDIST"], ["WITHCOORD"], ["WITHHASH"], ["WITHDIST", "WITHCOORD", "WITHHASH"], ["ASC"],
            ["DESC"], ["COUNT", "3"], ["COUNT", "5", "DESC"], ["COUNT", "2", "ANY"], ["COUNT", "4", "ANY", "ASC"]]
    radius = rng.choice(["0", "1", "100", "5000", "500000", "20000000", str(rng.uniform(0, 3000))])
    unit = rng.choice(["km", "m", "mi", "ft"])
    o = rng.choice(opts) + rng.choice(opts)
    key = rng.choice(["g", "g", "g", "nokey"])
    return rng.choice([
        lambda: ["GEOADD", "g"] + rng.choice([[], ["NX"], ["XX"], ["CH"]]) + [lon(), lat(), member()],
        lambda: ["GEOPOS", key, member(), member()],
        lambda: ["GEOHASH", key, member(), member()],
        lambda: ["GEODIST", key, member(), member(), unit],
        lambda: ["GEORADIUS", key, lon(), lat(), radius, unit] + o,
        lambda: ["GEORADIUSBYMEMBER_RO", key, member(), radius, unit] + o,
        lambda: ["GEOSEARCH", key, "FROMLONLAT", lon(), lat(), "BYRADIUS", radius, unit] + o,
        lambda: ["GEOSEARCH", key, "FROMMEMBER", member(), "BYBOX", radius, rng.choice([radius, "10", "4000"]), unit] + o,
        lambda: ["GEOSEARCHSTORE", "dst", key, "FROMLONLAT", lon(), lat(), "BYBOX", radius, radius, unit] +
                rng.choice([[], ["STOREDIST"], ["COUNT", "3", "STOREDIST"]]),
        lambda: ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        lambda: ["ZREM", "g", member()],
    ])()


@pytest.mark.parametrize("seed", range(3))
def test_random_commands_match_reference(conn, reference_redis, seed):
    rng = random.Random(seed)
    ref = reference_redis.raw()
    ref.cmd("FLUSHALL")
    for proto in ("2", "3"):
        conn.cmd("HELLO", proto)
        ref.cmd("HELLO", proto)
        for _ in range(700):
            cmd = random_command(rng)
            assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd
