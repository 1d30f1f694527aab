"""SORT and SORT_RO: numeric and ALPHA order, BY patterns (strings, hash
fields via ->, constant = no sort), GET (#, *, ->), LIMIT, DESC, STORE,
sorted sets and lists, and the errors, as Redis 7.0 answers them."""

import random

import pytest

from resp_util import parse

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
SYNTAX = b"-ERR syntax error\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
NOT_DOUBLE = b"-ERR One or more scores can't be converted into double\r\n"


def sort(conn, *args):
    return parse(conn.cmd("SORT", *args))


@pytest.fixture
def users(conn):
    """A list of ids with a weight string and a hash per id."""
    conn.cmd("RPUSH", "ids", "3", "1", "2", "10")
    for i, w, name in ((1, 30, "ann"), (2, 20, "bob"), (3, 10, "cy"), (10, 40, "dee")):
        conn.cmd("SET", "w_%d" % i, str(w))
        conn.cmd("HSET", "u_%d" % i, "name", name, "age", str(50 - w))
    return conn


# ---------------------------------------------------------------- plain order

def test_numeric_and_desc(conn):
    conn.cmd("RPUSH", "l", "3", "-1", "2.5", "10", "1e1", "inf")
    assert sort(conn, "l") == [b"-1", b"2.5", b"3", b"10", b"1e1", b"inf"]
    assert sort(conn, "l", "DESC") == [b"inf", b"1e1", b"10", b"3", b"2.5", b"-1"]
    assert sort(conn, "l", "desc", "ASC") == sort(conn, "l")   # the last one wins


def test_equal_scores_tie_on_bytes(conn):
    conn.cmd("RPUSH", "l", "01", "1", "1.0", "0.5", " 1")
    assert sort(conn, "l") == [b"0.5", b" 1", b"01", b"1", b"1.0"]
    assert sort(conn, "l", "DESC") == [b"1.0", b"1", b"01", b" 1", b"0.5"]


def test_alpha(conn):
    conn.cmd("RPUSH", "l", "b", "a", "C", "10", "9", "")
    assert sort(conn, "l", "ALPHA") == [b"", b"10", b"9", b"C", b"a", b"b"]
    assert sort(conn, "l", "ALPHA", "DESC") == [b"b", b"a", b"C", b"9", b"10", b""]


def test_not_a_number(conn):
    conn.cmd("RPUSH", "l", "1", "x", "2")
    assert conn.cmd("SORT", "l") == NOT_DOUBLE
    conn.cmd("RPUSH", "nan", "nan")
    assert conn.cmd("SORT", "nan") == NOT_DOUBLE
    conn.cmd("RPUSH", "big", "1e400")
    assert conn.cmd("SORT", "big") == NOT_DOUBLE
    # the error wins over STORE: nothing is stored
    assert conn.cmd("SORT", "l", "STORE", "dst") == NOT_DOUBLE
    assert conn.cmd("EXISTS", "dst") == b":0\r\n"


def test_empty_string_and_spaces_are_numbers(conn):
    conn.cmd("RPUSH", "l", "5", "", " 2", "0x10")
    assert sort(conn, "l") == [b"", b" 2", b"5", b"0x10"]


def test_missing_key_is_empty(conn):
    assert conn.cmd("SORT", "nope") == b"*0\r\n"
    assert conn.cmd("SORT", "nope", "BY", "nosort", "LIMIT", "0", "5") == b"*0\r\n"
    assert conn.cmd("SORT_RO", "nope", "ALPHA") == b"*0\r\n"


def test_wrong_type(conn):
    conn.cmd("SET", "s", "1")
    conn.cmd("HSET", "h", "f", "1")
    assert conn.cmd("SORT", "s") == WRONGTYPE
    assert conn.cmd("SORT_RO", "h") == WRONGTYPE


# ---------------------------------------------------------------- LIMIT

@pytest.mark.parametrize("offset,count,expected", [
    ("0", "2", [b"1", b"2"]),
    ("1", "2", [b"2", b"3"]),
    ("2", "-1", [b"3", b"4", b"5"]),
    ("-3", "2", [b"1", b"2"]),
    ("4", "10", [b"5"]),
    ("5", "1", []),
    ("100", "1", []),
    ("1", "0", []),
    ("0", "-5", [b"1", b"2", b"3", b"4", b"5"]),
])
def test_limit(conn, offset, count, expected):
    conn.cmd("RPUSH", "l", "5", "3", "1", "4", "2")
    assert sort(conn, "l", "LIMIT", offset, count) == expected
    # the same window of the list's own order with a constant BY
    native = [b"5", b"3", b"1", b"4", b"2"]
    start = min(max(int(offset), 0), 5)
    n = 5 - start if int(count) < 0 else min(int(count), 5)
    assert sort(conn, "l", "BY", "nosort", "LIMIT", offset, count) == native[start:start + n]


def test_limit_desc(conn):
    conn.cmd("RPUSH", "l", "5", "3", "1", "4", "2")
    assert sort(conn, "l", "DESC", "LIMIT", "1", "2") == [b"4", b"3"]
    assert sort(conn, "l", "BY", "nosort", "DESC", "LIMIT", "1", "2") == [b"4", b"1"]


def test_limit_errors(conn):
    conn.cmd("RPUSH", "l", "1")
    assert conn.cmd("SORT", "l", "LIMIT", "x", "1") == NOT_INT
    assert conn.cmd("SORT", "l", "LIMIT", "0", "1.5") == NOT_INT
    assert conn.cmd("SORT", "l", "LIMIT", "0") == SYNTAX
    assert conn.cmd("SORT", "l", "LIMIT") == SYNTAX


# ---------------------------------------------------------------- BY and GET

def test_by_string_pattern(users):
    assert sort(users, "ids", "BY", "w_*") == [b"3", b"2", b"1", b"10"]
    assert sort(users, "ids", "BY", "w_*", "DESC") == [b"10", b"1", b"2", b"3"]


def test_by_hash_field(users):
    assert sort(users, "ids", "BY", "u_*->age") == [b"10", b"1", b"2", b"3"]
    assert sort(users, "ids", "BY", "u_*->name", "ALPHA") == [b"1", b"2", b"3", b"10"]


def test_by_missing_weights_count_as_zero(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c", "d")
    conn.cmd("SET", "w_b", "-1")
    conn.cmd("SET", "w_c", "1")
    conn.cmd("HSET", "w_d", "x", "5")   # not a string: missing
    # a and d weigh 0 and tie: the element's bytes decide
    assert sort(conn, "l", "BY", "w_*") == [b"b", b"a", b"d", b"c"]


def test_by_missing_sorts_first_in_alpha(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    conn.cmd("SET", "w_a", "zz")
    conn.cmd("SET", "w_c", "aa")
    assert sort(conn, "l", "BY", "w_*", "ALPHA") == [b"b", b"c", b"a"]
    assert sort(conn, "l", "BY", "w_*", "ALPHA", "DESC") == [b"a", b"c", b"b"]


def test_by_not_a_number(conn):
    conn.cmd("RPUSH", "l", "a", "b")
    conn.cmd("SET", "w_a", "1")
    conn.cmd("SET", "w_b", "heavy")
    assert conn.cmd("SORT", "l", "BY", "w_*") == NOT_DOUBLE
    assert sort(conn, "l", "BY", "w_*", "ALPHA") == [b"a", b"b"]


def test_by_constant_keeps_native_order(conn):
    conn.cmd("RPUSH", "l", "3", "x", "1")
    assert sort(conn, "l", "BY", "nosort") == [b"3", b"x", b"1"]
    assert sort(conn, "l", "BY", "nosort", "DESC") == [b"1", b"x", b"3"]
    # no numbers are read, so nothing fails to convert
    assert sort(conn, "l", "BY", "constant_key", "ALPHA") == [b"3", b"x", b"1"]


def test_get_patterns(users):
    assert sort(users, "ids", "BY", "w_*", "GET", "#", "GET", "u_*->name", "GET", "w_*") == [
        b"3", b"cy", b"10", b"2", b"bob", b"20", b"1", b"ann", b"30", b"10", b"dee", b"40"]
    # a missing key, a missing field, a key of another type, no '*': nil
    users.cmd("SET", "s_1", "x")
    assert sort(users, "ids", "LIMIT", "0", "1", "GET", "nope_*", "GET", "u_*->nope",
                "GET", "u_*", "GET", "s_*->f", "GET", "fixed") == [None] * 5
    assert sort(users, "ids", "GET", "u_*->name", "LIMIT", "1", "2") == [b"bob", b"cy"]


def test_get_without_sorting(users):
    assert sort(users, "ids", "BY", "nosort", "GET", "u_*->name") == [b"cy", b"ann", b"bob", b"dee"]


def test_pattern_details(conn):
    conn.cmd("RPUSH", "l", "a")
    conn.cmd("SET", "pre-a-post", "1")
    conn.cmd("HSET", "h-a", "f->g", "2", "f", "3")
    conn.cmd("SET", "h-a->", "4")
    assert sort(conn, "l", "ALPHA", "GET", "pre-*-post") == [b"1"]
    # only the first "->" after the '*' splits key and field
    assert sort(conn, "l", "ALPHA", "GET", "h-*->f->g") == [b"2"]
    # "->" with nothing after it is part of the key name
    assert sort(conn, "l", "ALPHA", "GET", "h-*->") == [b"4"]
    # only the first '*' is replaced
    conn.cmd("SET", "a*", "5")
    assert sort(conn, "l", "ALPHA", "GET", "**") == [b"5"]


def test_binary_elements(conn):
    conn.cmd("RPUSH", "l", b"b\x00z", b"b\x00a", b"a")
    conn.cmd("SET", b"k_b\x00a", "1")
    conn.cmd("SET", b"k_b\x00z", "2")
    assert sort(conn, "l", "BY", "nosort", "GET", "k_*") == [b"2", b"1", None]
    assert sort(conn, "l", "BY", "nosort", "GET", "#") == [b"b\x00z", b"b\x00a", b"a"]
    assert sort(conn, "l", "ALPHA", "STORE", "dst") == 3
    assert parse(conn.cmd("LRANGE", "dst", "0", "-1")) == [b"a", b"b\x00a", b"b\x00z"]


# ---------------------------------------------------------------- sorted sets

def test_zset(conn):
    conn.cmd("ZADD", "z", "3", "c", "1", "a", "2", "b", "0", "10")
    assert sort(conn, "z", "BY", "nosort") == [b"10", b"a", b"b", b"c"]
    assert sort(conn, "z", "BY", "nosort", "DESC", "LIMIT", "1", "2") == [b"b", b"a"]
    assert sort(conn, "z", "ALPHA") == [b"10", b"a", b"b", b"c"]
    assert conn.cmd("SORT", "z") == NOT_DOUBLE


def test_zset_big(conn):
    conn.cmd("ZADD", "z", *[x for i in range(300) for x in (str(-i), str(i))])
    assert sort(conn, "z", "BY", "nosort", "LIMIT", "0", "3") == [b"299", b"298", b"297"]
    assert sort(conn, "z", "LIMIT", "0", "3", "DESC") == [b"299", b"298", b"297"]
    assert sort(conn, "z", "BY", "nosort", "DESC", "LIMIT", "0", "2") == [b"0", b"1"]


def test_big_list(conn):
    conn.cmd("RPUSH", "l", *[str((i * 7919) % 1000) for i in range(1000)])
    assert sort(conn, "l") == [str(i).encode() for i in range(1000)]
    assert sort(conn, "l", "LIMIT", "990", "20", "DESC") == [str(i).encode() for i in range(9, -1, -1)]


# ---------------------------------------------------------------- STORE

def test_store(users):
    assert users.cmd("SORT", "ids", "BY", "w_*", "GET", "u_*->name", "STORE", "dst") == b":4\r\n"
    assert parse(users.cmd("LRANGE", "dst", "0", "-1")) == [b"cy", b"bob", b"ann", b"dee"]
    assert users.cmd("TYPE", "dst") == b"+list\r\n"
    # a missing GET value is stored as ""
    assert users.cmd("SORT", "ids", "LIMIT", "0", "2", "GET", "#", "GET", "nope_*", "STORE", "dst") == b":4\r\n"
    assert parse(users.cmd("LRANGE", "dst", "0", "-1")) == [b"1", b"", b"2", b""]


def test_store_replaces_any_type_and_drops_ttl(conn):
    conn.cmd("RPUSH", "l", "2", "1")
    conn.cmd("SET", "dst", "old", "EX", "100")
    assert conn.cmd("SORT", "l", "STORE", "dst") == b":2\r\n"
    assert parse(conn.cmd("LRANGE", "dst", "0", "-1")) == [b"1", b"2"]
    assert conn.cmd("TTL", "dst") == b":-1\r\n"
    assert conn.cmd("SORT", "l", "DESC", "STORE", "l") == b":2\r\n"   # onto itself
    assert parse(conn.cmd("LRANGE", "l", "0", "-1")) == [b"2", b"1"]


def test_store_empty_deletes(conn):
    conn.cmd("SET", "dst", "v")
    assert conn.cmd("SORT", "nope", "STORE", "dst") == b":0\r\n"
    assert conn.cmd("EXISTS", "dst") == b":0\r\n"
    conn.cmd("RPUSH", "l", "1")
    conn.cmd("SET", "dst", "v")
    assert conn.cmd("SORT", "l", "LIMIT", "5", "5", "STORE", "dst") == b":0\r\n"
    assert conn.cmd("EXISTS", "dst") == b":0\r\n"


def test_store_alpha_is_binary(conn):
    conn.cmd("RPUSH", "l", "b", "B", "a", "A")
    assert conn.cmd("SORT", "l", "ALPHA", "STORE", "dst") == b":4\r\n"
    assert parse(conn.cmd("LRANGE", "dst", "0", "-1")) == [b"A", b"B", b"a", b"b"]


def test_sort_ro(conn):
    conn.cmd("RPUSH", "l", "2", "1")
    assert parse(conn.cmd("SORT_RO", "l")) == [b"1", b"2"]
    assert conn.cmd("SORT_RO", "l", "STORE", "dst") == SYNTAX
    assert parse(conn.cmd("SORT_RO", "l", "BY", "nosort", "GET", "#")) == [b"2", b"1"]


# ---------------------------------------------------------------- parsing

@pytest.mark.parametrize("args", [
    ["FOO"], ["BY"], ["GET"], ["STORE"], ["LIMIT", "1"], ["ALPHA", "x"],
])
def test_syntax_errors(conn, args):
    conn.cmd("RPUSH", "l", "1")
    assert conn.cmd("SORT", "l", *args) == SYNTAX


def test_syntax_checked_before_type(conn):
    conn.cmd("SET", "s", "1")
    assert conn.cmd("SORT", "s", "FOO") == SYNTAX
    assert conn.cmd("SORT", "s", "LIMIT", "a", "1") == NOT_INT


def test_arity(conn):
    assert conn.cmd("SORT") == b"-ERR wrong number of arguments for 'sort' command\r\n"
    assert conn.cmd("SORT_RO") == b"-ERR wrong number of arguments for 'sort_ro' command\r\n"


def test_command_info(conn):
    sort_info, ro_info = parse(conn.cmd("COMMAND", "INFO", "sort", "sort_ro"))
    assert sort_info[:6] == [b"sort", -2, [b"write", b"denyoom", b"movablekeys"], 1, 1, 1]
    assert ro_info[:6] == [b"sort_ro", -2, [b"readonly", b"movablekeys"], 1, 1, 1]


def test_in_transaction(conn):
    conn.cmd("RPUSH", "l", "2", "1")
    conn.cmd("MULTI")
    conn.cmd("SORT", "l", "STORE", "dst")
    conn.cmd("LRANGE", "dst", "0", "-1")
    assert parse(conn.cmd("EXEC")) == [2, [b"1", b"2"]]


def test_stats_count_pattern_lookups(conn):
    conn.cmd("RPUSH", "l", "a", "b")
    conn.cmd("SET", "w_a", "1")
    conn.cmd("CONFIG", "RESETSTAT")
    sort(conn, "l", "BY", "w_*", "GET", "w_*")
    info = conn.cmd("INFO", "stats").decode()
    hits = int(info.split("keyspace_hits:")[1].split("\r\n")[0])
    misses = int(info.split("keyspace_misses:")[1].split("\r\n")[0])
    assert (hits, misses) == (3, 2)


# ---------------------------------------------------------------- against a reference

def random_sorts(rng):
    """A dataset with many ties (shared and missing BY values, equal
    numbers written differently) and SORTs over it with random options."""
    setup = [["FLUSHALL"]]
    n = rng.choice([3, 8, 30, 60, 300])
    elems = [rng.choice(["%d" % rng.randint(-20, 20), "%d.0" % rng.randint(-5, 5), "e%d" % rng.randint(0, 40)])
             for _ in range(n)]
    setup.append(["RPUSH", "l", *elems])
    setup.append(["ZADD", "z", *[x for i, e in enumerate(elems) for x in (str(rng.randint(0, 9)), e)]])
    for e in set(elems):
        if rng.random() < 0.7:
            setup.append(["SET", "w_" + e, rng.choice(["a", "b", "c", "1", "2", "3"])])
        if rng.random() < 0.5:
            setup.append(["HSET", "h_" + e, "f", rng.choice(["x", "y", "10", "20"])])
    sorts = []
    for _ in range(40):
        # a sorted set is read in its hash table's order before sorting, and
        # redis-server seeds its hashing at random: equal elements of one
        # come out in an order not even two redis-servers share. Its own
        # order (BY a constant) is the same everywhere.
        args = [rng.choice(["l", "l", "z"])]
        if args[0] == "z":
            args += ["BY", "nosort"]
        elif rng.random() < 0.8:
            args += ["BY", rng.choice(["w_*", "h_*->f", "nosort", "missing_*"])]
        if rng.random() < 0.7:
            args += ["LIMIT", str(rng.randint(-2, n + 2)), str(rng.randint(-2, n + 2))]
        if rng.random() < 0.7:
            args.append("ALPHA")
        if rng.random() < 0.5:
            args.append("DESC")
        for _ in range(rng.randint(0, 2)):
            args += ["GET", rng.choice(["#", "w_*", "h_*->f"])]
        sorts.append(args)
    return setup, sorts


@pytest.mark.parametrize("seed", range(12))
def test_random_sorts_match_reference(conn, reference_redis, seed):
    # Equal elements come out in Redis's order too: qsort's (glibc's, the
    # same library redis-server uses) or, with BY and a LIMIT window, the
    # partial quicksort's.
    setup, sorts = random_sorts(random.Random(seed))
    ref = reference_redis.raw()
    for cmd in setup:
        assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd
    for args in sorts:
        assert conn.cmd("SORT", *args) == ref.cmd("SORT", *args), args
        store = conn.cmd("SORT", *args, "STORE", "dst")
        assert store == ref.cmd("SORT", *args, "STORE", "dst"), args
        assert conn.cmd("LRANGE", "dst", "0", "-1") == ref.cmd("LRANGE", "dst", "0", "-1"), args
