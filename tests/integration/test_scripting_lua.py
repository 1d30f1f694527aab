"""Lua semantics inside EVAL exactly as redis-server 7.0 shows them to a
client: conversions both ways, number formatting, table truncation, error
texts, pcall, the redis.* helpers, RESP3 under redis.setresp(3), the sandbox
and the bundled libraries. Every expectation was taken from redis-server
7.0.15, byte for byte."""

import platform
import re

import pytest

from resp_util import parse
from script_util import NIL, bulk, sha1hex

X86_64 = platform.machine() in ("x86_64", "AMD64")


class ScriptError:
    """Expected error raised out of a script: Redis 7.0 appends
    ' script: <sha1 of body>, on @user_script:<line>.' to the message."""

    def __init__(self, text, line=1):
        self.text = text.encode() if isinstance(text, str) else text
        self.line = line

    def expand(self, body):
        return b"-%s script: %s, on @user_script:%d.\r\n" % (
            self.text, sha1hex(body).encode(), self.line)


def expected_bytes(expected, body):
    return expected.expand(body) if isinstance(expected, ScriptError) else expected


def ev(conn, body, keys=(), args=()):
    return conn.cmd("EVAL", body, str(len(keys)), *keys, *args)


def run_cases(conn, cases):
    for body, expected in cases:
        got = ev(conn, body)
        assert got == expected_bytes(expected, body), body


def case_id(case):
    # ids must not contain "redis": `pytest -k redis` selects the reference runs
    return re.sub("(?i)redis", "R", case[0][:60])


# ---------------------------------------------------------------- Lua -> reply (RESP2)

LUA_TO_RESP2 = [
    ("return nil", NIL),
    ("return", NIL),
    ("return false", NIL),
    ("return true", b":1\r\n"),
    ("return 42", b":42\r\n"),
    ("return 3.99", b":3\r\n"),
    ("return -3.9", b":-3\r\n"),
    ("return 0.5", b":0\r\n"),
    ("return -0.5", b":0\r\n"),
    ("return 123456789.999", b":123456789\r\n"),
    ("return 2^31", b":2147483648\r\n"),
    ("return 2^53", b":9007199254740992\r\n"),
    ("return 9007199254740993", b":9007199254740992\r\n"),
    ("return -9007199254740993", b":-9007199254740992\r\n"),
    ("return 1e15", b":1000000000000000\r\n"),
    ("return {2^31, -2^31, 2^32, 2^62, 4294967295}",
     b"*5\r\n:2147483648\r\n:-2147483648\r\n:4294967296\r\n:4611686018427387904\r\n:4294967295\r\n"),
    ("return 'hello'", b"$5\r\nhello\r\n"),
    ("return ''", b"$0\r\n\r\n"),
    ("return '123'", b"$3\r\n123\r\n"),
    ("return 'a\\0b'", b"$3\r\na\x00b\r\n"),
    ("return {1,2,nil,4}", b"*2\r\n:1\r\n:2\r\n"),
    ("return {1,2,'three',nil,4}", b"*3\r\n:1\r\n:2\r\n$5\r\nthree\r\n"),
    ("return {nil, 1}", b"*0\r\n"),
    ("return {1, nil}", b"*1\r\n:1\r\n"),
    ("return {}", b"*0\r\n"),
    ("return {[1]=1,[3]=3}", b"*1\r\n:1\r\n"),
    ("return {a=1}", b"*0\r\n"),
    ("return {1, a=2}", b"*1\r\n:1\r\n"),
    ("return {n=1, 'x'}", b"*1\r\n$1\r\nx\r\n"),
    ("return {1,{2,{3,'x'}},'y'}", b"*3\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n$1\r\ny\r\n"),
    ("return {'a', {}}", b"*2\r\n$1\r\na\r\n*0\r\n"),
    ("return {1, false, true, 3.7}", b"*4\r\n:1\r\n$-1\r\n:1\r\n:3\r\n"),
    ("return {1.9, -1.9}", b"*2\r\n:1\r\n:-1\r\n"),
    ("return {1, function() end, 3}", b"*3\r\n:1\r\n$-1\r\n:3\r\n"),
    ("return function() end", NIL),
    ("local a = {} for i=1,10 do a[i]=i end return a",
     b"*10\r\n" + b"".join(b":%d\r\n" % i for i in range(1, 11))),
    ("return 1, 2, 3", b":1\r\n"),
    ("return 'a', 'b'", b"$1\r\na\r\n"),
    ("return {err='x'}", b"-x\r\n"),
    ("return {err='x y'}", b"-x y\r\n"),
    ("return {err='My Error'}", b"-My Error\r\n"),
    ("return {err='ERR x'}", b"-ERR x\r\n"),
    ("return {ok='y'}", b"+y\r\n"),
    ("return {ok='y', err='x'}", b"-x\r\n"),
    ("return {1, {err='inner'}, {ok='s'}}", b"*3\r\n:1\r\n-inner\r\n+s\r\n"),
    ("return {err=42}", b"*0\r\n"),
    ("return {ok=true}", b"*0\r\n"),
    # RESP3-only shapes are flattened for a RESP2 client
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {double=3}", b"$1\r\n3\r\n"),
    ("return {double=0.1}", b"$19\r\n0.10000000000000001\r\n"),
    ("return {double='2.5'}", b"*0\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {map={}}", b"*0\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n"),
    ("return {set={}}", b"*0\r\n"),
    ("return {big_number='123456789012345678901234567890'}",
     b"$30\r\n123456789012345678901234567890\r\n"),
    ("return {verbatim_string={format='txt', string='hello'}}", b"$5\r\nhello\r\n"),
    ("return {1, {map={k='v'}}, {double=2.5}}",
     b"*3\r\n:1\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n$3\r\n2.5\r\n"),
]


@pytest.mark.parametrize("body,expected", LUA_TO_RESP2, ids=[case_id(c) for c in LUA_TO_RESP2])
def test_lua_to_resp2(conn, body, expected):
    assert ev(conn, body) == expected


@pytest.mark.skipif(not X86_64, reason="out-of-range double to int64 conversion is x86-64 specific")
@pytest.mark.parametrize("body", ["return 2^63", "return 2^64", "return -2^63", "return 1e300",
                                  "return 1/0", "return -1/0", "return math.huge",
                                  "return tonumber('9223372036854775807')"])
def test_out_of_range_numbers_become_int64_min(conn, body):
    assert ev(conn, body) == b":-9223372036854775808\r\n"


# ---------------------------------------------------------------- redis.call reply -> Lua

REPLY_TO_LUA = [
    ("return redis.call('get','nokey')", NIL),
    ("return type(redis.call('get','nokey'))", bulk("boolean")),
    ("return tostring(redis.call('get','nokey'))", bulk("false")),
    ("return redis.call('get','nokey') == false", b":1\r\n"),
    ("return redis.call('hget','nokey','f')", NIL),
    ("return type(redis.call('incr','lua-n'))", bulk("number")),
    ("return redis.call('del','nokey')", b":0\r\n"),
    ("return redis.call('pttl','nokey')", b":-2\r\n"),
    ("return type(redis.call('set','lua-k','v'))", bulk("table")),
    ("return redis.call('set','lua-k','v').ok", bulk("OK")),
    ("return redis.call('set','lua-k','v')", b"+OK\r\n"),
    ("return redis.call('ping')", b"+PONG\r\n"),
    ("return redis.call('ping').ok", bulk("PONG")),
    ("local t = redis.call('set','lua-k','v') local n = 0 for k in pairs(t) do n = n + 1 end return n",
     b":1\r\n"),
    ("return redis.call('echo', 'x')", bulk("x")),
    ("return type(redis.call('hgetall','nokey'))", bulk("table")),
    ("return redis.call('hgetall','nokey')", b"*0\r\n"),
    ("redis.call('hset','lua-h','a','1') return redis.call('hgetall','lua-h')",
     b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    ("return redis.call('exists', 'lua-k2', 'lua-k2', 'nokey')", b":0\r\n"),
    ("redis.call('set','lua-k2','v') return redis.call('exists', 'lua-k2', 'lua-k2', 'nokey')",
     b":2\r\n"),
    ("return #redis.call('time')", b":2\r\n"),
    ("return redis.call('publish', 'nobody-listens', 'x')", b":0\r\n"),
]


@pytest.mark.parametrize("body,expected", REPLY_TO_LUA, ids=[case_id(c) for c in REPLY_TO_LUA])
def test_reply_to_lua(conn, body, expected):
    assert ev(conn, body) == expected


def test_integer_reply_beyond_2_53_loses_precision(conn):
    conn.cmd("SET", "big", "9007199254740993")
    assert ev(conn, "return redis.call('incr', 'big')") == b":9007199254740994\r\n"
    assert ev(conn, "return redis.call('get', 'big')") == bulk("9007199254740994")
    assert ev(conn, "return tostring(redis.call('incr', 'big'))") == bulk("9.007199254741e+15")


@pytest.mark.skipif(not X86_64, reason="out-of-range double to int64 conversion is x86-64 specific")
def test_int64_max_reply_round_trips_to_int64_min(conn):
    conn.cmd("SET", "big2", "9223372036854775806")
    # 9223372036854775807 becomes the double 2^63, which converts back to INT64_MIN
    assert ev(conn, "return redis.call('incr', 'big2')") == b":-9223372036854775808\r\n"
    body = "return redis.call('incr', 'big2')"
    assert ev(conn, body) == ScriptError("ERR increment or decrement would overflow").expand(body)


def test_int64_min_integer_reply_reaches_lua(conn):
    # found by fuzz_lua: the reply reader refused INT64_MIN's magnitude
    conn.cmd("SET", "small", "-9223372036854775807")
    assert ev(conn, "return redis.call('decr', 'small')") == b":-9223372036854775808\r\n"
    assert ev(conn, "return tostring(redis.call('get', 'small'))") == bulk("-9223372036854775808")
    assert ev(conn, "return redis.pcall('decr', 'small')['err']") == bulk(
        "ERR increment or decrement would overflow")


OUT_OF_INT_RANGE = [   # found by fuzz_lua (an undefined cast in latchd)
    ("redis.setresp(4294967298); return 1", "ERR RESP version must be 2 or 3."),
    ("redis.setresp(1/0)", "ERR RESP version must be 2 or 3."),
    ("redis.set_repl(4294967296)", "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."),
    ("redis.set_repl(0/0)", "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."),
    ("redis.set_repl(-2^31-1)", "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."),
    ("redis.log(4294967299, 'x'); return 1", "ERR Invalid debug level."),
]


@pytest.mark.skipif(not X86_64, reason="out-of-range double to int conversion is x86-64 specific")
@pytest.mark.parametrize("body,message", OUT_OF_INT_RANGE, ids=[case_id(c) for c in OUT_OF_INT_RANGE])
def test_out_of_int_range_numbers_are_refused(conn, body, message):
    assert ev(conn, body) == ScriptError(message).expand(body.encode())


def test_in_range_fractions_truncate(conn):
    assert ev(conn, "redis.setresp(2.9) return redis.call('hgetall', 'nokey')") == b"*0\r\n"
    assert ev(conn, "redis.set_repl(3.7)") == NIL


# ---------------------------------------------------------------- numbers passed to redis.call

ARG_FORMAT = [
    ("0", "0"),
    ("30000", "30000"),
    ("tonumber('30000')", "30000"),
    ("-7", "-7"),
    ("3.0", "3"),
    ("1.5", "1.5"),
    ("-0.0", "-0"),
    ("0.1", "0.10000000000000001"),
    ("1/3", "0.33333333333333331"),
    ("2^53", "9007199254740992"),
    ("9007199254740993", "9007199254740992"),
    ("1e15", "1000000000000000"),
    ("1e16", "10000000000000000"),
    ("1e17", "1e+17"),
    ("1e20", "1e+20"),
    ("123456789012345678", "1.2345678901234568e+17"),
    ("12345678901234567890", "1.2345678901234567e+19"),
    ("2^63", "9.2233720368547758e+18"),
    ("-2^63", "-9.2233720368547758e+18"),
    ("0.5e-5", "5.0000000000000004e-06"),
    ("1/0", "inf"),
    ("-1/0", "-inf"),
    ("tostring(30000)", "30000"),
    ("tostring(1.5)", "1.5"),
    ("30000 .. ''", "30000"),
]


@pytest.mark.parametrize("expr,stored", ARG_FORMAT, ids=[a for a, _ in ARG_FORMAT])
def test_number_arguments_formatting(conn, expr, stored):
    body = "redis.call('set', KEYS[1], %s) return redis.call('get', KEYS[1])" % expr
    assert ev(conn, body, ["num"]) == bulk(stored)


def test_set_px_with_lua_number_value(conn):
    body = "redis.call('set', KEYS[1], 0, 'px', 5000) return redis.call('get', KEYS[1])"
    assert ev(conn, body, ["latch"]) == bulk("0")
    pttl = parse(conn.cmd("PTTL", "latch"))
    assert 4000 < pttl <= 5000
    body = "return redis.call('set', KEYS[1], 1, 'PX', ARGV[1])"
    assert ev(conn, body, ["latch"], ["13500"]) == b"+OK\r\n"
    assert conn.cmd("GET", "latch") == bulk("1")


def test_integral_float_arguments_are_integers(conn):
    assert ev(conn, "return redis.call('pexpire', KEYS[1], 1e3)", ["nokey"]) == b":0\r\n"
    conn.cmd("SET", "k", "v")
    assert ev(conn, "return redis.call('pexpire', KEYS[1], 1.5e3)", ["k"]) == b":1\r\n"
    assert 1000 < parse(conn.cmd("PTTL", "k")) <= 1500
    assert ev(conn, "return redis.call('hincrby', KEYS[1], 'f', 2.0)", ["h"]) == b":2\r\n"
    body = "return redis.call('hincrby', KEYS[1], 'f', 1.5)"
    assert ev(conn, body, ["h"]) == ScriptError("ERR value is not an integer or out of range").expand(body)
    body = "return redis.call('pexpire', KEYS[1], 1500.7)"
    assert ev(conn, body, ["k"]) == ScriptError("ERR value is not an integer or out of range").expand(body)


# ---------------------------------------------------------------- Lua number / string coercion

COERCION = [
    ("return tostring(30000)", bulk("30000")),
    ("return tostring(2^53)", bulk("9.007199254741e+15")),
    ("return tostring(2^63)", bulk("9.2233720368548e+18")),
    ("return tostring(1e15)", bulk("1e+15")),
    ("return tostring(1e14)", bulk("1e+14")),
    ("return tostring(100000000000000)", bulk("1e+14")),
    ("return tostring(0.1)", bulk("0.1")),
    ("return tostring(1/3)", bulk("0.33333333333333")),
    ("return tostring(math.pi)", bulk("3.1415926535898")),
    ("return tostring(math.huge)", bulk("inf")),
    ("return tostring(-math.huge)", bulk("-inf")),
    ("return tostring(nil)", bulk("nil")),
    ("return tostring(true)", bulk("true")),
    ("return 10 .. ''", bulk("10")),
    ("return 1.5 .. ''", bulk("1.5")),
    ("return 1e100 .. ''", bulk("1e+100")),
    ("return -0 .. ''", bulk("-0")),
    ("return string.format('%d', 3.7)", bulk("3")),
    ("return string.format('%d', 123456789012)", bulk("123456789012")),
    ("return string.format('%s %5.2f %x', 'a', 3.14159, 255)", bulk("a  3.14 ff")),
    ("return string.format('%q', 'a\\nb')", bulk(b'"a\\\nb"')),
    ("return string.format('%05d|%-3s|%g', 42, 'x', 0.5)", bulk("00042|x  |0.5")),
    ("return tonumber('0x10')", b":16\r\n"),
    ("return tonumber('0X1f')", b":31\r\n"),
    ("return tonumber('10', 16)", b":16\r\n"),
    ("return tonumber('ff', 16)", b":255\r\n"),
    ("return tonumber('z', 36)", b":35\r\n"),
    ("return tonumber('  12  ')", b":12\r\n"),
    ("return tonumber('12abc')", NIL),
    ("return tonumber('1e3')", b":1000\r\n"),
    ("return tonumber('')", NIL),
    ("return tonumber('0x')", NIL),
    ("return tostring(tonumber('0x10'))", bulk("16")),
    ("return '10' + 5", b":15\r\n"),
    ("return '0x10' + 0", b":16\r\n"),
    ("return '3.5' * 2", b":7\r\n"),
    ("return math.max(1, '5')", b":5\r\n"),
    ("return math.floor(3.7)", b":3\r\n"),
    ("return math.fmod(7, 3)", b":1\r\n"),
    ("return -7 % 3", b":2\r\n"),
    ("return 2^10", b":1024\r\n"),
    ("return math.pi", b":3\r\n"),
    ("return #'abc'", b":3\r\n"),
    ("return string.len('a\\0b')", b":3\r\n"),
    ("return {string.byte('A')}", b"*1\r\n:65\r\n"),
    ("return string.rep('ab', 3)", bulk("ababab")),
    ("return string.sub('hello', 2, 3)", bulk("el")),
    ("return string.upper('abc')", bulk("ABC")),
    ("return ('x'):rep(3)", bulk("xxx")),
    ("return string.char(104,105)", bulk("hi")),
    ("return {string.find('hello','l')}", b"*2\r\n:3\r\n:3\r\n"),
    ("return {string.gsub('hello','l','L')}", b"*2\r\n$5\r\nheLLo\r\n:2\r\n"),
    ("return string.match('key:123', '%d+')", bulk("123")),
    ("return table.concat({1,2,3}, ',')", bulk("1,2,3")),
    ("local t = {3,1,2} table.sort(t) return t", b"*3\r\n:1\r\n:2\r\n:3\r\n"),
    ("local t = {} table.insert(t, 1) table.insert(t, 0) return t", b"*2\r\n:1\r\n:0\r\n"),
    ("return {unpack({1,2,3})}", b"*3\r\n:1\r\n:2\r\n:3\r\n"),
    ("return {unpack({1,2,3}, 2)}", b"*2\r\n:2\r\n:3\r\n"),
    ("return {unpack({1,2,3}, 1, -1)}", b"*0\r\n"),
    ("local a, b = unpack({1,2,3}, -1, 5) return {a == nil, b == nil, select('#', unpack({1,2,3}, -1, 5))}",
     b"*3\r\n:1\r\n:1\r\n:7\r\n"),
    ("return select('#', 1, 2, 3)", b":3\r\n"),
    ("local n = 0 for i, v in ipairs({5, 6, nil, 7}) do n = n + v end return n", b":11\r\n"),
    ("local c = 0 for i = '3', 1, -1 do c = c + 1 end return c", b":3\r\n"),
    ("return _VERSION", bulk("Lua 5.1")),
    ("return type(coroutine.create)", bulk("function")),
    ("local co = coroutine.create(function() return 7 end) local ok, v = coroutine.resume(co) return v",
     b":7\r\n"),
    ("local f = loadstring('return 1 + 1') return f()", b":2\r\n"),
]


@pytest.mark.parametrize("expr,expected", [
    ("bit.tohex(65535, -2147483648)", "0000FFFF"),   # stock BitOp negates INT32_MIN: a crash
    ("bit.tohex(65535)", "0000ffff"), ("bit.tohex(-1, 3)", "fff"), ("bit.tohex(255, -4)", "00FF"),
    ("bit.tohex(1, 12)", "00000001"), ("bit.tohex(4294967295.7)", "00000000"),
    ("bit.tohex(2^40 + 5, 0)", ""), ("bit.tohex('12', 4)", "000c"),
])
def test_bit_tohex(conn, expr, expected):
    assert conn.cmd("EVAL", "return " + expr, "0") == b"$%d\r\n%s\r\n" % (len(expected), expected.encode())
    assert conn.cmd("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("first,last", [(-2, 2147483647), (0, 2147483647), (-2147483648, -2)])
def test_unpack_of_a_range_too_long_is_an_error(conn, first, last):
    """j - i + 1 overflows an int here: stock Lua 5.1 pushes past its stack."""
    reply = conn.cmd("EVAL", "return {unpack({1,2,3}, %d, %d)}" % (first, last), "0")
    assert reply.startswith(b"-ERR user_script:1: too many results to unpack script: ")
    assert conn.cmd("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("body,expected", COERCION, ids=[case_id(c) for c in COERCION])
def test_lua_values_and_coercion(conn, body, expected):
    assert ev(conn, body) == expected


# ---------------------------------------------------------------- KEYS / ARGV

def test_keys_argv_binary_safe(conn):
    key, arg = b"a\x00b", b"\xff\x00\r\n"
    assert ev(conn, "return {KEYS[1], ARGV[1], #KEYS[1], #ARGV[1]}", [key], [arg]) == (
        b"*4\r\n$3\r\na\x00b\r\n$4\r\n\xff\x00\r\n\r\n:3\r\n:4\r\n")
    assert ev(conn, "return KEYS[1] .. ARGV[1]", [key], [arg]) == b"$7\r\na\x00b\xff\x00\r\n\r\n"
    body = "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])"
    assert ev(conn, body, [b"bin\x00key"], [b"\x00\x01\x02\xff"]) == b"$4\r\n\x00\x01\x02\xff\r\n"
    assert conn.cmd("GET", b"bin\x00key") == b"$4\r\n\x00\x01\x02\xff\r\n"


def test_keys_argv_counts(conn):
    assert ev(conn, "return {#KEYS, #ARGV}", ["a", "b"], ["c"]) == b"*2\r\n:2\r\n:1\r\n"
    assert ev(conn, "return {#KEYS, #ARGV}") == b"*2\r\n:0\r\n:0\r\n"
    assert ev(conn, "return {KEYS[3] == nil, ARGV[2] == nil}", ["a"], ["b"]) == b"*2\r\n:1\r\n:1\r\n"


def test_keys_argv_are_strings(conn):
    assert ev(conn, "return {type(KEYS[1]), type(ARGV[1])}", ["1"], ["2"]) == (
        b"*2\r\n$6\r\nstring\r\n$6\r\nstring\r\n")
    assert ev(conn, "return ARGV[1] + ARGV[2]", [], ["30000", "5"]) == b":30005\r\n"
    assert ev(conn, "return ARGV[1] == 30000", [], ["30000"]) == NIL


def test_keys_argv_are_fresh_each_call(conn):
    assert ev(conn, "KEYS[1] = 'changed' return KEYS[1]", ["k"]) == bulk("changed")
    assert ev(conn, "ARGV[5] = 'x' return ARGV[5]") == bulk("x")
    assert ev(conn, "return {#KEYS, #ARGV}") == b"*2\r\n:0\r\n:0\r\n"
    assert ev(conn, "return KEYS[1]", ["k"]) == bulk("k")


# ---------------------------------------------------------------- errors out of scripts

ERRORS = [
    ("error('x')", ScriptError("ERR user_script:1: x")),
    ("error('My error')", ScriptError("ERR user_script:1: My error")),
    ("error('x', 0)", ScriptError("ERR x")),
    ("error('x', 2)", ScriptError("ERR x")),
    ("error(42)", ScriptError("ERR user_script:1: 42")),
    ("error()", ScriptError("ERR nil")),
    ("error(nil)", ScriptError("ERR nil")),
    ("error(true)", ScriptError("ERR true")),
    ("error({err='ERR custom'})", ScriptError("ERR custom")),
    ("error({err='custom thing'})", ScriptError("custom thing")),
    ("error({err='MYERR custom thing'})", ScriptError("MYERR custom thing")),
    ("error({err='x'})", ScriptError("x")),
    ("error({err=''})", ScriptError("")),
    ("error({err=42})", ScriptError("42")),
    ("error({err='x'}, 0)", ScriptError("x")),
    ("error(redis.error_reply('boom'))", ScriptError("ERR boom")),
    ("error(redis.error_reply('MY boom'))", ScriptError("MY boom")),
    ("local function f()\n  error('deep')\nend\n\nreturn f()", ScriptError("ERR user_script:2: deep", 2)),
    ("local function f()\n  error({err='DEEP x'})\nend\n\nreturn f()", ScriptError("DEEP x", 2)),
    ("local x = nil; return x()", ScriptError("ERR user_script:1: attempt to call local 'x' (a nil value)")),
    ("return nosuch()",
     ScriptError("ERR user_script:1: Script attempted to access nonexistent global variable 'nosuch'")),
    ("return 1 + nil", ScriptError("ERR user_script:1: attempt to perform arithmetic on a nil value")),
    ("\n\nreturn 1 + nil", ScriptError("ERR user_script:3: attempt to perform arithmetic on a nil value", 3)),
    ("local t = nil; return t.x", ScriptError("ERR user_script:1: attempt to index local 't' (a nil value)")),
    ("return 'a' + 1", ScriptError("ERR user_script:1: attempt to perform arithmetic on a string value")),
    ("return 'a' .. {}", ScriptError("ERR user_script:1: attempt to concatenate a table value")),
    ("return nil .. 'a'", ScriptError("ERR user_script:1: attempt to concatenate a nil value")),
    ("return #nil", ScriptError("ERR user_script:1: attempt to get length of a nil value")),
    ("local t = {} t[nil] = 1", ScriptError("ERR user_script:1: table index is nil")),
    ("return ('x'):bad()", ScriptError("ERR user_script:1: attempt to call method 'bad' (a nil value)")),
    ("return string.rep()",
     ScriptError("ERR user_script:1: bad argument #1 to 'rep' (string expected, got no value)")),
    ("return math.floor('x')",
     ScriptError("ERR user_script:1: bad argument #1 to 'floor' (number expected, got string)")),
    ("return string.format('%d', 'x')",
     ScriptError("ERR user_script:1: bad argument #2 to 'format' (number expected, got string)")),
    ("return assert(false)", ScriptError("ERR user_script:1: assertion failed!")),
    ("return assert(false, 'assert msg')", ScriptError("ERR user_script:1: assert msg")),
    ("local s = loadstring('x = 1') return s()",
     b'-ERR [string "x = 1"]:1: Attempt to modify a readonly table script: '
     b'5622cff001b63644c1a06920ad2834c7b73d8126, on x = 1:1.\r\n'),
]


@pytest.mark.parametrize("body,expected", ERRORS, ids=[case_id(c) for c in ERRORS])
def test_errors_raised_in_scripts(conn, body, expected):
    assert ev(conn, body) == expected_bytes(expected, body)


COMPILE_ERRORS = [
    ("return +", b"user_script:1: unexpected symbol near '+'"),
    ("return 'abc", b"user_script:1: unfinished string near '<eof>'"),
    ("if true then", b"user_script:1: 'end' expected near '<eof>'"),
    ("\n\nlocal = 1", b"user_script:3: '<name>' expected near '='"),
    ("return 1 1", b"user_script:1: '<eof>' expected near '1'"),
    ("x ==", b"user_script:1: '=' expected near '=='"),
]


@pytest.mark.parametrize("body,message", COMPILE_ERRORS, ids=[c[0] for c in COMPILE_ERRORS])
def test_compile_errors(conn, body, message):
    expected = b"-ERR Error compiling script (new function): %s\r\n" % message
    assert ev(conn, body) == expected
    assert conn.cmd("SCRIPT", "LOAD", body) == expected


# ---------------------------------------------------------------- redis.call errors

CALL_ERRORS = [
    ("return redis.call('nosuchcmd')", ScriptError("ERR Unknown Redis command called from script")),
    ("return redis.call('nosuchcmd', 'a', 'b')", ScriptError("ERR Unknown Redis command called from script")),
    ("return redis.call(1)", ScriptError("ERR Unknown Redis command called from script")),
    ("return redis.call()", ScriptError("ERR Please specify at least one argument for this redis lib call")),
    ("return redis.call('set','k')", ScriptError("ERR Wrong number of args calling Redis command from script")),
    ("return redis.call('get')", ScriptError("ERR Wrong number of args calling Redis command from script")),
    ("return redis.call('hincrby', 'h', 'f')",
     ScriptError("ERR Wrong number of args calling Redis command from script")),
    ("return redis.call('set','k',true)",
     ScriptError("ERR Lua redis lib command arguments must be strings or integers")),
    ("return redis.call('set','k',nil)",
     ScriptError("ERR Lua redis lib command arguments must be strings or integers")),
    ("return redis.call('set','k',{})",
     ScriptError("ERR Lua redis lib command arguments must be strings or integers")),
    ("return redis.call('get', KEYS[1])",
     ScriptError("ERR Lua redis lib command arguments must be strings or integers")),
    ("redis.call('hset','h','f','v'); return redis.call('get','h')",
     ScriptError("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ("redis.call('set','s','v'); return redis.call('hexists','s','f')",
     ScriptError("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ("redis.call('set','k3','abc'); return redis.call('incr','k3')",
     ScriptError("ERR value is not an integer or out of range")),
    ("return redis.call('set','k',0,'px','0')", ScriptError("ERR invalid expire time in 'set' command")),
    ("return redis.call('set','k',0,'px','-5')", ScriptError("ERR invalid expire time in 'set' command")),
    ("return redis.call('set','k',0,'px','abc')", ScriptError("ERR value is not an integer or out of range")),
    ("return redis.call('pexpire','k','abc')", ScriptError("ERR value is not an integer or out of range")),
    ("return redis.call('hincrby','h','f','abc')", ScriptError("ERR value is not an integer or out of range")),
    ("local function f()\n  return redis.call('nosuchcmd')\nend\nreturn f()",
     ScriptError("ERR Unknown Redis command called from script", 2)),
    ("\n\n\nredis.call('hset','h','f','v')\nreturn redis.call('get','h')",
     ScriptError("WRONGTYPE Operation against a key holding the wrong kind of value", 5)),
]


@pytest.mark.parametrize("body,expected", CALL_ERRORS, ids=[case_id(c) for c in CALL_ERRORS])
def test_call_errors(conn, body, expected):
    assert ev(conn, body) == expected_bytes(expected, body)


NOT_ALLOWED = ["subscribe','x", "eval','return 1','0", "evalsha','%s','0" % ("e" * 40),
               "eval_ro','return 1','0", "script','load','return 1", "script','flush",
               "client','list", "client','id", "hello','3", "auth','x", "quit",
               "config','get','maxmemory", "reset"]


@pytest.mark.parametrize("args", NOT_ALLOWED, ids=[a.split("'")[0] for a in NOT_ALLOWED])
def test_commands_not_allowed_from_scripts(conn, args):
    body = "return redis.call('%s')" % args
    assert ev(conn, body) == ScriptError("ERR This Redis command is not allowed from script").expand(body)
    body = "return redis.pcall('%s')" % args
    assert ev(conn, body) == b"-ERR This Redis command is not allowed from script\r\n"
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_script_flush_inside_script_keeps_cache(conn):
    conn.cmd("SCRIPT", "LOAD", "return 'kept'")
    ev(conn, "return redis.pcall('script', 'flush')")
    assert conn.cmd("EVALSHA", sha1hex("return 'kept'"), "0") == bulk("kept")


def test_command_names_case_insensitive_and_from_argv(conn):
    assert ev(conn, "return redis.call('PiNg')") == b"+PONG\r\n"
    assert ev(conn, "return redis.call('SET', KEYS[1], 'a')", ["k"]) == b"+OK\r\n"
    assert ev(conn, "return redis.call('gEt', KEYS[1])", ["k"]) == bulk("a")
    assert ev(conn, "return redis.call(ARGV[1], KEYS[1], ARGV[2])", ["k"], ["SeT", "b"]) == b"+OK\r\n"
    assert ev(conn, "return redis.call(ARGV[1], KEYS[1])", ["k"], ["GET"]) == bulk("b")
    assert ev(conn, "return redis.call(ARGV[1], KEYS[1], ARGV[2])", ["ch"], ["PUBLISH", "m"]) == b":0\r\n"
    assert ev(conn, "return redis.call(ARGV[1], KEYS[1], ARGV[2])", ["ch"], ["publish", "m"]) == b":0\r\n"
    # sub-options are case-insensitive too
    assert ev(conn, "return redis.call('set', KEYS[1], 'c', 'Px', 5000, 'nX')", ["k2"]) == b"+OK\r\n"
    assert ev(conn, "return redis.call('set', KEYS[1], 'c', 'PX', 5000, 'NX')", ["k2"]) == NIL


def test_publish_from_script_reaches_subscriber(server, conn):
    from script_util import PUBSUB, Subscriber
    if not PUBSUB:
        pytest.skip("LATCHD_TEST_NO_PUBSUB is set")
    sub = Subscriber(server, ["ch-a"])
    body = "return {redis.call('publish', KEYS[1], ARGV[1]), redis.call(ARGV[2], KEYS[1], 'x')}"
    assert ev(conn, body, ["ch-a"], ["0", "PUBLISH"]) == b"*2\r\n:1\r\n:1\r\n"
    sub.expect([("ch-a", "0"), ("ch-a", "x")])


def test_writes_before_an_error_are_kept(conn):
    body = "redis.call('set', KEYS[1], '1') redis.call('nosuchcmd') redis.call('set', KEYS[2], '2')"
    assert ev(conn, body, ["w1", "w2"]) == ScriptError(
        "ERR Unknown Redis command called from script").expand(body)
    assert conn.cmd("GET", "w1") == bulk("1")
    assert conn.cmd("EXISTS", "w2") == b":0\r\n"


# ---------------------------------------------------------------- pcall

PCALL = [
    ("return redis.pcall('nosuchcmd')", b"-ERR Unknown Redis command called from script\r\n"),
    ("return redis.pcall()", b"-ERR Please specify at least one argument for this redis lib call\r\n"),
    ("return redis.pcall('set','k',{})", b"-ERR Lua redis lib command arguments must be strings or integers\r\n"),
    ("return redis.pcall(function() error('x') end)",
     b"-ERR Lua redis lib command arguments must be strings or integers\r\n"),
    ("redis.call('hset','h','f','v'); return redis.pcall('get','h')",
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("redis.call('hset','h','f','v'); local r = redis.pcall('get','h'); return {type(r), r.err}",
     b"*2\r\n$5\r\ntable\r\n" + bulk("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ("local r = redis.pcall('nosuchcmd'); return r.err", bulk("ERR Unknown Redis command called from script")),
    ("local r = redis.pcall('set','k'); return r.err",
     bulk("ERR Wrong number of args calling Redis command from script")),
    ("redis.call('set','k3','abc'); local r = redis.pcall('incr','k3'); return r.err",
     bulk("ERR value is not an integer or out of range")),
    ("local r = redis.pcall('incr','pc-ctr'); return r", b":1\r\n"),
    ("local t = redis.pcall('nosuchcmd') return tostring(t.ignore_error_stats_update)", bulk("true")),
    # Lua's own pcall sees redis.call errors and error() values as plain strings
    ("local ok, e = pcall(function() redis.call('nosuchcmd') end); return e",
     bulk("ERR Unknown Redis command called from script")),
    ("local ok, e = pcall(redis.call, 'nosuchcmd'); return {tostring(ok), type(e)}",
     b"*2\r\n$5\r\nfalse\r\n$6\r\nstring\r\n"),
    ("redis.call('hset','h','f','v'); local ok, e = pcall(redis.call, 'get', 'h'); return e",
     bulk("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ("local ok, e = pcall(function() error('x') end); return e", bulk("user_script:1: x")),
    ("local ok, e = pcall(function() error('zz', 0) end); return e", bulk("zz")),
    ("local ok, e = pcall(function() return 1 + nil end); return e",
     bulk("user_script:1: attempt to perform arithmetic on a nil value")),
    ("local ok, e = pcall(function() error({err='E1'}) end); return {ok, e}", b"*2\r\n$-1\r\n$2\r\nE1\r\n"),
    ("local ok, e = pcall(error, {err='E1'}); return type(e)", bulk("string")),
    ("local ok, e = pcall(function() local x = nil; x() end); return {tostring(ok), e}",
     b"*2\r\n$5\r\nfalse\r\n" + bulk("user_script:1: attempt to call local 'x' (a nil value)")),
    ("local ok, v = pcall(function() return 5 end); return {tostring(ok), v}", b"*2\r\n$4\r\ntrue\r\n:5\r\n"),
]


@pytest.mark.parametrize("body,expected", PCALL, ids=[case_id(c) for c in PCALL])
def test_pcall(conn, body, expected):
    assert ev(conn, body) == expected


def test_pcall_continues_after_error(conn):
    body = ("local r = redis.pcall('nosuchcmd') redis.call('set', KEYS[1], 'after') "
            "return {r.err, redis.call('get', KEYS[1])}")
    assert ev(conn, body, ["pk"]) == (
        b"*2\r\n" + bulk("ERR Unknown Redis command called from script") + bulk("after"))


# ---------------------------------------------------------------- error_reply / status_reply

REPLY_HELPERS = [
    ("return redis.error_reply('x')", b"-ERR x\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('ERR x')", b"-ERR x\r\n"),
    ("return redis.error_reply('-x')", b"-ERR x\r\n"),
    ("return redis.error_reply('')", b"-ERR \r\n"),
    ("return redis.error_reply('x').err", bulk("ERR x")),
    ("return redis.error_reply('MY x').err", bulk("MY x")),
    ("return type(redis.error_reply('x'))", bulk("table")),
    ("local t = redis.error_reply('x') local n = 0 for k in pairs(t) do n = n + 1 end return n", b":1\r\n"),
    ("return redis.error_reply()", b"-ERR wrong number or type of arguments\r\n"),
    ("return redis.error_reply(1)", b"-ERR wrong number or type of arguments\r\n"),
    ("return redis.status_reply('y')", b"+y\r\n"),
    ("return redis.status_reply('FINE')", b"+FINE\r\n"),
    ("return redis.status_reply('')", b"+\r\n"),
    ("return redis.status_reply('y').ok", bulk("y")),
    ("return redis.status_reply()", b"-ERR wrong number or type of arguments\r\n"),
    ("return {redis.status_reply('a'), redis.error_reply('b')}", b"*2\r\n+a\r\n-ERR b\r\n"),
]


@pytest.mark.parametrize("body,expected", REPLY_HELPERS, ids=[case_id(c) for c in REPLY_HELPERS])
def test_error_and_status_reply(conn, body, expected):
    assert ev(conn, body) == expected


ERROR_REPLY_TEXTS = [
    # (argument, reply, the table's err field): without a space the code ERR
    # is added; a leading '-' is dropped; the first word is the error code
    ("x", b"-ERR x\r\n", "ERR x"),
    ("x y", b"-x y\r\n", "x y"),
    ("one two three", b"-one two three\r\n", "one two three"),
    ("-ERR x", b"-ERR x\r\n", "ERR x"),
    ("-MY x", b"-MY x\r\n", "MY x"),
    ("-x", b"-ERR x\r\n", "ERR x"),
    ("ERR", b"-ERR ERR\r\n", "ERR ERR"),
    ("-", b"-ERR \r\n", "ERR "),
    (" lead", b"- lead\r\n", " lead"),
    ("x\ny", b"-ERR x y\r\n", "ERR x\ny"),
]


@pytest.mark.parametrize("arg,reply,field", ERROR_REPLY_TEXTS, ids=[repr(c[0]) for c in ERROR_REPLY_TEXTS])
def test_error_reply_texts(conn, arg, reply, field):
    assert ev(conn, "return redis.error_reply(ARGV[1])", [], [arg]) == reply
    assert ev(conn, "return redis.error_reply(ARGV[1]).err", [], [arg]) == bulk(field)


def test_newlines_in_error_and_status_replies_become_spaces(conn):
    assert ev(conn, "return {err=ARGV[1]}", [], ["x\r\ny"]) == b"-x  y\r\n"
    assert ev(conn, "return {ok=ARGV[1]}", [], ["x\r\ny"]) == b"+x  y\r\n"
    assert ev(conn, "return redis.status_reply(ARGV[1])", [], ["x\r\ny"]) == b"+x  y\r\n"
    body = "error(ARGV[1])"
    assert ev(conn, body, [], ["x\r\ny"]) == ScriptError("ERR user_script:1: x  y").expand(body)
    body = "error(redis.error_reply(ARGV[1]))"
    assert ev(conn, body, [], ["x y"]) == ScriptError("x y").expand(body)


# ---------------------------------------------------------------- redis.* helpers

HELPERS = [
    ("return redis.sha1hex('')", bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709")),
    ("return redis.sha1hex('return 1')", bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db")),
    ("return redis.sha1hex(1)", bulk("356a192b7913b04c54574d18c28d46e6395428ab")),
    ("return redis.sha1hex()", ScriptError("ERR wrong number of arguments")),
    ("return redis.sha1hex('a','b')", ScriptError("ERR wrong number of arguments")),
    ("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
     b"*4\r\n:0\r\n:1\r\n:2\r\n:3\r\n"),
    ("return redis.log(redis.LOG_WARNING, 'hello from a test')", NIL),
    ("return redis.log(redis.LOG_NOTICE, 'a', 'b', 3)", NIL),
    ("return redis.log()", ScriptError("ERR redis.log() requires two arguments or more.")),
    ("return redis.log('x')", ScriptError("ERR redis.log() requires two arguments or more.")),
    ("return redis.log(99, 'x')", ScriptError("ERR Invalid debug level.")),
    ("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
     b"*5\r\n:0\r\n:1\r\n:2\r\n:2\r\n:3\r\n"),
    ("return redis.set_repl(redis.REPL_ALL)", NIL),
    ("return redis.set_repl(redis.REPL_NONE)", NIL),
    ("return redis.set_repl(99)",
     ScriptError("ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")),
    ("return redis.set_repl()", ScriptError("ERR redis.set_repl() requires two arguments.")),
    ("return redis.replicate_commands()", b":1\r\n"),
    ("return type(redis.replicate_commands())", bulk("boolean")),
    ("return redis.setresp(2)", NIL),
    ("return redis.setresp(3)", NIL),
    ("return redis.setresp('3')", NIL),
    ("return redis.setresp(4)", ScriptError("ERR RESP version must be 2 or 3.")),
    ("return redis.setresp()", ScriptError("ERR redis.setresp() requires one argument.")),
    ("return {type(redis.breakpoint), type(redis.debug)}",
     b"*2\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n"),
    ("return redis.REDIS_VERSION", bulk("7.0.15")),
    ("return redis.REDIS_VERSION_NUM", b":458767\r\n"),
]


@pytest.mark.parametrize("body,expected", HELPERS, ids=[case_id(c) for c in HELPERS])
def test_helpers(conn, body, expected):
    assert ev(conn, body) == expected_bytes(expected, body)


def test_set_repl_keeps_writes(conn):
    body = "redis.set_repl(redis.REPL_NONE) redis.call('set', KEYS[1], 'v') return 1"
    assert ev(conn, body, ["repl"]) == b":1\r\n"
    assert conn.cmd("GET", "repl") == bulk("v")


# ---------------------------------------------------------------- redis.setresp and RESP3

# (body, reply on a RESP2 connection, reply on a RESP3 connection)
SETRESP = [
    ("return true", b":1\r\n", b":1\r\n"),
    ("return false", NIL, b"_\r\n"),
    ("return nil", NIL, b"_\r\n"),
    ("return {true, false, 1}", b"*3\r\n:1\r\n$-1\r\n:1\r\n", b"*3\r\n:1\r\n_\r\n:1\r\n"),
    ("redis.setresp(3) return true", b":1\r\n", b"#t\r\n"),
    ("redis.setresp(3) return false", b":0\r\n", b"#f\r\n"),
    ("redis.setresp(3) return nil", NIL, b"_\r\n"),
    ("redis.setresp(3) return {true, false, 1}", b"*3\r\n:1\r\n:0\r\n:1\r\n", b"*3\r\n#t\r\n#f\r\n:1\r\n"),
    ("redis.setresp(3) redis.setresp(2) return true", b":1\r\n", b":1\r\n"),
    ("redis.setresp(3) redis.setresp(2) return false", NIL, b"_\r\n"),
    ("return redis.call('get','nokey')", NIL, b"_\r\n"),
    ("redis.setresp(3) return redis.call('get','nokey')", NIL, b"_\r\n"),
    ("redis.setresp(3) return type(redis.call('get','nokey'))", bulk("nil"), bulk("nil")),
    ("redis.setresp(2) return type(redis.call('get','nokey'))", bulk("boolean"), bulk("boolean")),
    ("redis.setresp(3) return redis.call('get','nokey') == nil", b":1\r\n", b"#t\r\n"),
    ("redis.setresp(3) return {redis.call('get','nokey'), 1}", b"*0\r\n", b"*0\r\n"),
    ("redis.setresp(3) return {1, redis.call('get','nokey'), 2}", b"*1\r\n:1\r\n", b"*1\r\n:1\r\n"),
    ("redis.setresp(2) return {1, redis.call('get','nokey'), 2}",
     b"*3\r\n:1\r\n$-1\r\n:2\r\n", b"*3\r\n:1\r\n_\r\n:2\r\n"),
    ("return redis.call('hgetall','rh')", b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n", b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
    ("redis.setresp(3) return redis.call('hgetall','rh')",
     b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n", b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"),
    ("redis.setresp(3) return redis.call('hgetall','nokey')", b"*0\r\n", b"%0\r\n"),
    ("redis.setresp(3) return type(redis.call('hgetall','rh'))", bulk("table"), bulk("table")),
    ("redis.setresp(3) local m = redis.call('hgetall','rh') return {type(m.map), m.map.f}",
     b"*2\r\n$5\r\ntable\r\n$1\r\nv\r\n", b"*2\r\n$5\r\ntable\r\n$1\r\nv\r\n"),
    ("redis.setresp(3) return redis.call('hgetall','rh').map", b"*0\r\n", b"*0\r\n"),
    ("redis.setresp(3) return redis.call('set','rk','v')", b"+OK\r\n", b"+OK\r\n"),
    ("redis.setresp(3) return redis.call('set','rk','v').ok", bulk("OK"), bulk("OK")),
    ("redis.setresp(3) return redis.call('get','rk')", bulk("v"), bulk("v")),
    ("redis.setresp(3) return redis.call('exists','rk')", b":1\r\n", b":1\r\n"),
    ("redis.setresp(3) return redis.pcall('incr','rh')",
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
     b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("redis.setresp(3) return redis.pcall('nosuchcmd').err",
     bulk("ERR Unknown Redis command called from script"),
     bulk("ERR Unknown Redis command called from script")),
    ("redis.setresp(3) return {ok='fine'}", b"+fine\r\n", b"+fine\r\n"),
    ("redis.setresp(3) return {err='ERR bad'}", b"-ERR bad\r\n", b"-ERR bad\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n", b"%1\r\n$1\r\na\r\n:1\r\n"),
    ("return {map={a={1,2}}}", b"*2\r\n$1\r\na\r\n*2\r\n:1\r\n:2\r\n", b"%1\r\n$1\r\na\r\n*2\r\n:1\r\n:2\r\n"),
    ("return {map={}}", b"*0\r\n", b"%0\r\n"),
    ("redis.setresp(3) return {map={a=true}}", b"*2\r\n$1\r\na\r\n:1\r\n", b"%1\r\n$1\r\na\r\n#t\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n"),
    ("return {set={}}", b"*0\r\n", b"~0\r\n"),
    ("return {double=3.5}", bulk("3.5"), b",3.5\r\n"),
    ("return {double=3}", bulk("3"), b",3\r\n"),
    ("return {double=0}", bulk("0"), b",0\r\n"),
    ("return {double=-0.5}", bulk("-0.5"), b",-0.5\r\n"),
    ("return {double=-0.0}", bulk("-0"), b",-0\r\n"),
    ("return {double=2^53}", bulk("9007199254740992"), b",9007199254740992\r\n"),
    ("return {double=123456789.125}", bulk("123456789.125"), b",123456789.125\r\n"),
    ("return {double=0.1}", bulk("0.10000000000000001"), b",0.10000000000000001\r\n"),
    ("return {double=1e-7}", bulk("9.9999999999999995e-08"), b",9.9999999999999995e-08\r\n"),
    ("return {double=1e300}", bulk("1.0000000000000001e+300"), b",1.0000000000000001e+300\r\n"),
    ("return {double=1/0}", bulk("inf"), b",inf\r\n"),
    ("return {double=-1/0}", bulk("-inf"), b",-inf\r\n"),
    ("return {double='2.5'}", b"*0\r\n", b"*0\r\n"),
    ("return {big_number='123456789012345678901234567890'}",
     bulk("123456789012345678901234567890"), b"(123456789012345678901234567890\r\n"),
    ("return {verbatim_string={format='txt', string='hello'}}", bulk("hello"), b"=9\r\ntxt:hello\r\n"),
    ("return {1, {map={k='v'}}, {double=2.5}}",
     b"*3\r\n:1\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n$3\r\n2.5\r\n",
     b"*3\r\n:1\r\n%1\r\n$1\r\nk\r\n$1\r\nv\r\n,2.5\r\n"),
    ("redis.setresp(3) return redis.error_reply('bad')", b"-ERR bad\r\n", b"-ERR bad\r\n"),
]


@pytest.mark.parametrize("proto", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("body,resp2,resp3", SETRESP, ids=[case_id(c) for c in SETRESP])
def test_setresp_conversions(conn, proto, body, resp2, resp3):
    if proto == 3:
        assert conn.cmd("HELLO", "3").startswith(b"%")
    conn.cmd("HSET", "rh", "f", "v")
    conn.cmd("SET", "rk", "v")
    assert ev(conn, body) == (resp3 if proto == 3 else resp2)


def test_setresp_is_per_script(conn):
    conn.cmd("HELLO", "3")
    assert ev(conn, "redis.setresp(3) return false") == b"#f\r\n"
    assert ev(conn, "return false") == b"_\r\n"
    assert ev(conn, "return type(redis.call('get','nokey'))") == bulk("boolean")


def test_resp3_error_from_script(conn):
    conn.cmd("HELLO", "3")
    body = "redis.setresp(3) error('oops')"
    assert ev(conn, body) == ScriptError("ERR user_script:1: oops").expand(body)


# ---------------------------------------------------------------- sandbox

@pytest.mark.parametrize("name", ["os", "io", "loadfile", "dofile", "require", "module", "package",
                                  "debug", "print", "newproxy", "setfenv", "getfenv", "ffi", "jit",
                                  "utf8", "bit32"])
def test_sandbox_missing_globals(conn, name):
    body = "return type(%s)" % name
    assert ev(conn, body) == ScriptError(
        "ERR user_script:1: Script attempted to access nonexistent global variable '%s'" % name).expand(body)


@pytest.mark.parametrize("name,kind", [
    ("loadstring", "function"), ("load", "function"), ("pcall", "function"), ("xpcall", "function"),
    ("error", "function"), ("assert", "function"), ("tostring", "function"), ("tonumber", "function"),
    ("ipairs", "function"), ("pairs", "function"), ("next", "function"), ("select", "function"),
    ("unpack", "function"), ("type", "function"), ("rawget", "function"), ("rawset", "function"),
    ("rawequal", "function"), ("setmetatable", "function"), ("getmetatable", "function"),
    ("collectgarbage", "function"), ("gcinfo", "function"),
    ("coroutine", "table"), ("math", "table"), ("string", "table"), ("table", "table"),
    ("bit", "table"), ("cjson", "table"), ("struct", "table"), ("cmsgpack", "table"),
    ("redis", "table"), ("KEYS", "table"), ("ARGV", "table"), ("_G", "table"), ("_VERSION", "string"),
], ids=lambda v: re.sub("(?i)redis", "R", v))
def test_sandbox_available_globals(conn, name, kind):
    assert ev(conn, "return type(%s)" % name) == bulk(kind)


def test_sandbox_escape_attempts(conn):
    body = "return pcall(loadfile)"
    assert ev(conn, body) == ScriptError(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'loadfile'").expand(body)
    assert ev(conn, "return rawget(_G, 'os')") == NIL
    assert ev(conn, "return rawget(_G, 'io')") == NIL


def test_bytecode_is_never_loaded(conn):
    # string.dump exists, but loading a binary chunk is refused: it is parsed as text
    assert ev(conn, "return type(string.dump)") == bulk("function")
    body = "local f, e = loadstring(string.dump(function() return 1 end)) return {type(f), e}"
    assert ev(conn, body) == (b"*2\r\n$3\r\nnil\r\n"
                              + bulk(b'[string "\x1bLuaQ"]:1: unexpected symbol near \'char(27)\''))
    body = ("local s = string.dump(function() return 1 end) local i = 0 "
            "local f, e = load(function() i = i + 1 if i == 1 then return s end return nil end) "
            "return {type(f), e}")
    assert ev(conn, body) == (b"*2\r\n$3\r\nnil\r\n"
                              + bulk(b"(load):1: unexpected symbol near 'char(27)'"))
    body = "local f, e = loadstring('return +') return {type(f), e}"
    assert ev(conn, body) == (b"*2\r\n$3\r\nnil\r\n"
                              + bulk(b'[string "return +"]:1: unexpected symbol near \'+\''))


READONLY = "Attempt to modify a readonly table"

GLOBAL_WRITES = [
    ("x = 5 return x", ScriptError("ERR user_script:1: " + READONLY)),
    ("myvar = 5", ScriptError("ERR user_script:1: " + READONLY)),
    ("\nfunction f() return 1 end return f()", ScriptError("ERR user_script:2: " + READONLY, 2)),
    ("_G.x = 1", ScriptError("ERR user_script:1: " + READONLY)),
    ("rawset(_G, 'x', 1) return x", ScriptError("ERR " + READONLY)),
    ("setmetatable(_G, nil)", ScriptError("ERR " + READONLY)),
    ("redis.call = nil", ScriptError("ERR user_script:1: " + READONLY)),
    ("redis.myx = 1", ScriptError("ERR user_script:1: " + READONLY)),
    ("string.x = 1", ScriptError("ERR user_script:1: " + READONLY)),
    ("cjson.encode = nil", ScriptError("ERR user_script:1: " + READONLY)),
    ("KEYS = {}", ScriptError("ERR user_script:1: " + READONLY)),
    ("return nosuch", ScriptError(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'nosuch'")),
    ("return _G.nosuch", ScriptError(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'nosuch'")),
    ("return rawget(_G, 'nosuch')", NIL),
    ("local function f() return 1 end return f()", b":1\r\n"),
    ("local x = 5 x = x + 1 return x", b":6\r\n"),
]


@pytest.mark.parametrize("body,expected", GLOBAL_WRITES, ids=[case_id(c) for c in GLOBAL_WRITES])
def test_globals_protection(conn, body, expected):
    assert ev(conn, body) == expected_bytes(expected, body)


def test_globals_do_not_leak_between_scripts(conn):
    body = "x = 5"
    ev(conn, body)
    body = "return x"
    assert ev(conn, body) == ScriptError(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'x'").expand(body)


# ---------------------------------------------------------------- bundled libraries

LIBS = [
    ("return cjson.encode({1,2,3})", bulk("[1,2,3]")),
    ("return cjson.encode({a=1})", bulk('{"a":1}')),
    ("return cjson.encode({a={b='c'}})", bulk('{"a":{"b":"c"}}')),
    ("return cjson.encode('x\"y')", bulk('"x\\"y"')),
    ("return cjson.encode({})", bulk("{}")),
    ("return cjson.encode(cjson.null)", bulk("null")),
    ("return cjson.encode(3)", bulk("3")),
    ("return cjson.encode(1.5)", bulk("1.5")),
    ("return cjson.encode(0.1)", bulk("0.1")),
    ("return cjson.encode(12345678901234)", bulk("12345678901234")),
    ("return cjson.encode(true)", bulk("true")),
    ("return cjson.encode('a/b')", bulk('"a\\/b"')),
    ("return cjson.encode({[1]=1,[2]=2,[4]=4})", bulk("[1,2,null,4]")),
    ("return cjson.decode('[1,2,3]')", b"*3\r\n:1\r\n:2\r\n:3\r\n"),
    ("return cjson.decode('{\"a\":[1,2,{\"b\":\"c\"}]}').a[3].b", bulk("c")),
    ("return tostring(cjson.decode('{\"a\":null}').a == cjson.null)", bulk("true")),
    ("return cjson.decode('1.5')", b":1\r\n"),
    ("return tostring(cjson.decode('1.5'))", bulk("1.5")),
    ("return cjson.decode('\"x\"')", bulk("x")),
    ("return cjson.decode(cjson.encode({'a', 'b'}))", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("return cjson.decode('{bad')", ScriptError(
        "ERR user_script:1: Expected object key string but found invalid token at character 2")),
    ("return cjson.encode(function() end)", ScriptError(
        "ERR user_script:1: Cannot serialise function: type not supported")),
    ("return bit.band(0xff, 0x0f)", b":15\r\n"),
    ("return bit.bor(1, 2, 4)", b":7\r\n"),
    ("return bit.bxor(5, 3)", b":6\r\n"),
    ("return bit.bnot(0)", b":-1\r\n"),
    ("return bit.lshift(1, 10)", b":1024\r\n"),
    ("return bit.rshift(-1, 28)", b":15\r\n"),
    ("return bit.arshift(-256, 4)", b":-16\r\n"),
    ("return bit.tohex(255)", bulk("000000ff")),
    ("return bit.tohex(-1)", bulk("ffffffff")),
    ("return bit.tohex(255, 4)", bulk("00ff")),
    ("return bit.tobit(2^32 + 5)", b":5\r\n"),
    ("return bit.bswap(0x12345678)", b":2018915346\r\n"),
    ("return bit.rol(1, 33)", b":2\r\n"),
    ("return struct.pack('>I2', 258)", bulk(b"\x01\x02")),
    ("return struct.pack('<i4', -2)", bulk(b"\xfe\xff\xff\xff")),
    ("return struct.pack('bBhH', -1, 255, -2, 65535)", bulk(b"\xff\xff\xfe\xff\xff\xff")),
    ("return {struct.unpack('>I2', struct.pack('>I2', 258))}", b"*2\r\n:258\r\n:3\r\n"),
    ("return {struct.unpack('<i4 >H', struct.pack('<i4 >H', -2, 7))}", b"*3\r\n:-2\r\n:7\r\n:7\r\n"),
    ("return struct.size('>I4I2')", b":6\r\n"),
    ("return {struct.unpack('s', 'abc\\0')}", b"*2\r\n$3\r\nabc\r\n:5\r\n"),
    ("return cmsgpack.pack({1,2,3})", bulk(b"\x93\x01\x02\x03")),
    ("return cmsgpack.pack({a=1})", bulk(b"\x81\xa1a\x01")),
    ("return cmsgpack.pack('abc')", bulk(b"\xa3abc")),
    ("return cmsgpack.pack(-1)", bulk(b"\xff")),
    ("return cmsgpack.pack(300)", bulk(b"\xcd\x01,")),
    ("return cmsgpack.pack(1.5)", bulk(b"\xca?\xc0\x00\x00")),
    ("return cmsgpack.pack(true, false)", bulk(b"\xc3\xc2")),
    ("return cmsgpack.unpack(cmsgpack.pack({1,2,'x'}))", b"*3\r\n:1\r\n:2\r\n$1\r\nx\r\n"),
    ("return {cmsgpack.unpack(cmsgpack.pack({1,2,'x'}))}", b"*1\r\n*3\r\n:1\r\n:2\r\n$1\r\nx\r\n"),
    ("return cmsgpack.unpack(cmsgpack.pack({a={1,2}})).a", b"*2\r\n:1\r\n:2\r\n"),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3))}", b"*3\r\n:1\r\n$3\r\ntwo\r\n:3\r\n"),
]


@pytest.mark.parametrize("body,expected", LIBS, ids=[case_id(c) for c in LIBS])
def test_bundled_libraries(conn, body, expected):
    assert ev(conn, body) == expected_bytes(expected, body)


def test_cmsgpack_unpack_binary_argv(conn):
    assert ev(conn, "return cmsgpack.unpack(ARGV[1])", [], [b"\x93\x01\x02\xa1x"]) == (
        b"*3\r\n:1\r\n:2\r\n$1\r\nx\r\n")


def test_cjson_round_trip_through_a_key(conn):
    body = ("redis.call('set', KEYS[1], cjson.encode({owner=ARGV[1], n=3})) "
            "local t = cjson.decode(redis.call('get', KEYS[1])) return {t.owner, t.n}")
    assert ev(conn, body, ["json"], ["me"]) == b"*2\r\n$2\r\nme\r\n:3\r\n"
