"""The struct and cmsgpack libraries inside EVAL, byte for byte as
redis-server 7.0.15 gives them: formats, alignment, integer widths and
conversions, MessagePack type choices, table shapes, nesting and stack limits,
and every error text. Expectations were taken from redis-server 7.0.15
(x86-64); the cases that depend on how x86-64 converts out-of-range doubles
are skipped elsewhere."""

import platform
import re

import pytest

from script_util import NIL, bulk, sha1hex

X86_64 = platform.machine() in ("x86_64", "AMD64")


class ScriptError:
    """Expected error raised out of a script: Redis 7.0 appends
    ' script: <sha1 of body>, on @user_script:<line>.' to the message."""

    def __init__(self, text, line=1):
        self.text = text.encode()
        self.line = line

    def expand(self, body):
        return b"-%s script: %s, on @user_script:%d.\r\n" % (
            self.text, sha1hex(body).encode(), self.line)


def ev(conn, body, keys=(), args=()):
    return conn.cmd("EVAL", body, str(len(keys)), *keys, *args)


def check(conn, body, expected):
    if isinstance(expected, ScriptError):
        expected = expected.expand(body)
    assert ev(conn, body) == expected, body


def ids(cases):
    # ids must not contain "redis": `pytest -k redis` selects the reference runs
    return [re.sub("(?i)redis", "R", body[:70]) for body, _ in cases]


# ---------------------------------------------------------------- struct

STRUCT = [
    ("return struct.pack('>h', -2)", bulk(b'\xff\xfe')),
    ("return struct.pack('<H', 513)", bulk(b'\x01\x02')),
    ("return struct.pack('>l', -2)", bulk(b'\xff\xff\xff\xff\xff\xff\xff\xfe')),
    ("return struct.pack('<L', 1)", bulk(b'\x01\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>T', 2^40)", bulk(b'\x00\x00\x01\x00\x00\x00\x00\x00')),
    ("return struct.pack('>i3', -1)", bulk(b'\xff\xff\xff')),
    ("return struct.pack('<I5', 2^33 + 7)", bulk(b'\x07\x00\x00\x00\x02')),
    ("return struct.pack('i', 2^31)", bulk(b'\x00\x00\x00\x80')),
    ("return struct.pack('b', 300)", bulk(b',')),
    ("return struct.pack('b', 1.7)", bulk(b'\x01')),
    ("return struct.pack('b', -1.7)", bulk(b'\xff')),
    ("return struct.pack('b', '12')", bulk(b'\x0c')),
    ("return struct.pack('i0', 5)", bulk(b'')),
    ("return struct.pack('< I2 > I2', 1, 1)", bulk(b'\x01\x00\x00\x01')),
    ("return struct.pack('>f', 1.5)", bulk(b'?\xc0\x00\x00')),
    ("return struct.pack('<f', 1.5)", bulk(b'\x00\x00\xc0?')),
    ("return struct.pack('>d', 1.5)", bulk(b'?\xf8\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('<d', 0.1)", bulk(b'\x9a\x99\x99\x99\x99\x99\xb9?')),
    ("return struct.pack('>f', 1e300)", bulk(b'\x7f\x80\x00\x00')),
    ("return struct.pack('>f', -1e300)", bulk(b'\xff\x80\x00\x00')),
    ("return struct.pack('xxb', 3)", bulk(b'\x00\x00\x03')),
    ("return struct.pack('c2', 'abcdef')", bulk(b'ab')),
    ("return struct.pack('c0', 'abcdef')", bulk(b'abcdef')),
    ("return struct.pack('c0', 123)", bulk(b'123')),
    ("return struct.pack('c', 'xyz')", bulk(b'x')),
    ("return struct.pack('s', 'a\\0b')", bulk(b'a\x00b\x00')),
    ("return struct.pack('s', 12.5)", bulk(b'12.5\x00')),
    ("return struct.pack('d', '0x10')", bulk(b'\x00\x00\x00\x00\x00\x000@')),
    ("return struct.pack('b\\0b', 1, 2)", bulk(b'\x01')),
    ("return struct.pack('')", bulk(b'')),
    ("return struct.pack('!')", bulk(b'')),
    ("return struct.pack('!4 b i4', 1, 2)", bulk(b'\x01\x00\x00\x00\x02\x00\x00\x00')),
    ("return struct.pack('! b d', 1, 2)",
     bulk(b'\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@')),
    ("return struct.pack('!2 b d', 1, 2)", bulk(b'\x01\x00\x00\x00\x00\x00\x00\x00\x00@')),
    ("return struct.pack('!4 b i3', 1, 2)", bulk(b'\x01\x00\x00\x02\x00\x00')),
    ("return struct.pack('!4 bbb i3', 1, 1, 1, 2)", bulk(b'\x01\x01\x01\x02\x00\x00')),
    ("return struct.pack('!4 b i6', 1, 2)", bulk(b'\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00')),
    ("return struct.pack('!4 b c3', 1, 'abc')", bulk(b'\x01abc')),
    ("return struct.pack('!4 b x i', 1, 2)", bulk(b'\x01\x00\x00\x00\x02\x00\x00\x00')),
    ("return struct.pack('!4 b f', 1, 2)", bulk(b'\x01\x00\x00\x00\x00\x00\x00@')),
    ("return struct.pack('!1073741824')", bulk(b'')),
    ("return struct.pack('b', 1, 2)", bulk(b'\x01')),
    ("return {struct.unpack('>b', '\\255')}", b'*2\r\n:-1\r\n:2\r\n'),
    ("return {struct.unpack('>B', '\\255')}", b'*2\r\n:255\r\n:2\r\n'),
    ("return {struct.unpack('>h', '\\128\\000')}", b'*2\r\n:-32768\r\n:3\r\n'),
    ("return {struct.unpack('<H', '\\001\\128')}", b'*2\r\n:32769\r\n:3\r\n'),
    ("return {struct.unpack('<i3', '\\255\\255\\127')}", b'*2\r\n:8388607\r\n:4\r\n'),
    ("return {struct.unpack('<i3', '\\255\\255\\128')}", b'*2\r\n:-8323073\r\n:4\r\n'),
    ("return {struct.unpack('<I3', '\\255\\255\\255')}", b'*2\r\n:16777215\r\n:4\r\n'),
    ("return {struct.unpack('>i0 b', '\\1')}", b'*3\r\n:0\r\n:1\r\n:2\r\n'),
    ("return tostring(struct.unpack('>I8', '\\255\\255\\255\\255\\255\\255\\255\\255'))",
     bulk(b'1.844674407371e+19')),
    ("return tostring(struct.unpack('>i8', '\\128\\0\\0\\0\\0\\0\\0\\1'))",
     bulk(b'-9.2233720368548e+18')),
    ("return tostring(struct.unpack('>f', '\\63\\192\\0\\0'))", bulk(b'1.5')),
    ("return tostring(struct.unpack('<d', struct.pack('<d', 0.1)))", bulk(b'0.1')),
    ("return tostring(struct.unpack('>d', '\\127\\240\\0\\0\\0\\0\\0\\0'))", bulk(b'inf')),
    ("return {struct.unpack('b', 'ab', 2)}", b'*2\r\n:98\r\n:3\r\n'),
    ("return {struct.unpack('b', 'ab', 1.9)}", b'*2\r\n:97\r\n:2\r\n'),
    ("return {struct.unpack('', 'ab', 4)}", b'*1\r\n:4\r\n'),
    ("return {struct.unpack('', 'ab', -5)}", b'*1\r\n:-5\r\n'),
    ("return {struct.unpack('s', '\\0')}", b'*2\r\n$0\r\n\r\n:2\r\n'),
    ("return {struct.unpack('ss', 'ab\\0cd\\0')}", b'*3\r\n$2\r\nab\r\n$2\r\ncd\r\n:7\r\n'),
    ("return {struct.unpack('b c0', '\\002abc')}", b'*2\r\n$2\r\nab\r\n:4\r\n'),
    ("return {struct.unpack('b c0', '\\000abc')}", b'*2\r\n$0\r\n\r\n:2\r\n'),
    ("return {struct.unpack('c2 c0', ' 2abc')}", b'*2\r\n$2\r\nab\r\n:5\r\n'),
    ("return {struct.unpack('c3 c0', '1.5abc')}", b'*2\r\n$1\r\na\r\n:5\r\n'),
    ("return {struct.unpack('b x c0', '\\002aabc')}", b'*2\r\n$2\r\nab\r\n:5\r\n'),
    ("return {struct.unpack('b c0', '\\002abc', 1, 'zz')}", b'*2\r\n$2\r\nab\r\n:4\r\n'),
    ("return {struct.unpack('x b', 'ab')}", b'*2\r\n:98\r\n:3\r\n'),
    ("return {struct.unpack('!4 b i', struct.pack('!4 b i', 1, 2))}", b'*3\r\n:1\r\n:2\r\n:9\r\n'),
    ("return {struct.unpack('!4 i', 'aa\\0\\0\\1\\0\\0\\0', 2)}", b'*2\r\n:1\r\n:9\r\n'),
    ("return {struct.unpack('b', '\\1', 1, 'zz')}", b'*2\r\n:1\r\n:2\r\n'),
    ("return struct.unpack('b', 5)", b':53\r\n'),
    ("return struct.size('c')", b':1\r\n'),
    ("return struct.size('c5')", b':5\r\n'),
    ("return struct.size('z')", b':0\r\n'),
    ("return struct.size('b9')", b':1\r\n'),
    ("return struct.size('!4 b i')", b':8\r\n'),
    ("return struct.size('!4 b i3 b i6')", b':14\r\n'),
    ("return struct.size('!4 I3 b I3')", b':9\r\n'),
    ("return struct.size('!8 b T l L h H')", b':36\r\n'),
    ("return struct.size('!b d')", b':16\r\n'),
    ("return struct.size('c2147483647c2147483647c2147483647')", b':6442450941\r\n'),
    ("return struct.size('')", b':0\r\n'),
]

STRUCT_ERRORS = [
    ("return struct.pack('z', 1)",
     ScriptError("ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'z')")),
    ("return struct.pack('=I2', 258)",
     ScriptError("ERR user_script:1: bad argument #1 to 'pack' (invalid format option '=')")),
    ('return struct.pack(5)',
     ScriptError("ERR user_script:1: bad argument #1 to 'pack' (invalid format option '5')")),
    ('return struct.pack()',
     ScriptError("ERR user_script:1: bad argument #1 to 'pack' (string expected, got no value)")),
    ('return struct.pack({})',
     ScriptError("ERR user_script:1: bad argument #1 to 'pack' (string expected, got table)")),
    ("return struct.pack('!0')", ScriptError('ERR user_script:1: alignment 0 is not a power of 2')),
    ("return struct.pack('!3')", ScriptError('ERR user_script:1: alignment 3 is not a power of 2')),
    ("return struct.pack('i33', 1)",
     ScriptError('ERR user_script:1: integral size 33 is larger than limit of 32')),
    ("return struct.pack('i2147483647', 5)",
     ScriptError('ERR user_script:1: integral size 2147483647 is larger than limit of 32')),
    ("return struct.pack('i2147483648', 5)",
     ScriptError('ERR user_script:1: integral size overflow')),
    ("return struct.pack('!2147483648', 5)",
     ScriptError('ERR user_script:1: integral size overflow')),
    ("return struct.pack('c5', 'ab')",
     ScriptError("ERR user_script:1: bad argument #3 to 'pack' (string too short)")),
    ("return struct.pack('c2147483647', 'a')",
     ScriptError("ERR user_script:1: bad argument #3 to 'pack' (string too short)")),
    ("return struct.pack('b')",
     ScriptError("ERR user_script:1: bad argument #2 to 'pack' (number expected, got nil)")),
    ("return struct.pack('b b b', 1, 2)",
     ScriptError("ERR user_script:1: bad argument #4 to 'pack' (number expected, got nil)")),
    ("return struct.pack('b', 'x')",
     ScriptError("ERR user_script:1: bad argument #2 to 'pack' (number expected, got string)")),
    ("return struct.pack('b', true)",
     ScriptError("ERR user_script:1: bad argument #2 to 'pack' (number expected, got boolean)")),
    ("return struct.pack('c0', nil)",
     ScriptError("ERR user_script:1: bad argument #2 to 'pack' (string expected, got nil)")),
    ("return struct.pack('c1', {})",
     ScriptError("ERR user_script:1: bad argument #2 to 'pack' (string expected, got table)")),
    ("return struct.unpack('b', '')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('b', 'a', 0)",
     ScriptError("ERR user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)")),
    ("return struct.unpack('b', 'a', -5)",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('b', 'ab', 3)",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('b', 'ab', 'x')",
     ScriptError("ERR user_script:1: bad argument #3 to 'unpack' (number expected, got string)")),
    ("return struct.unpack('b')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (string expected, got no value)")),
    ('return struct.unpack()',
     ScriptError("ERR user_script:1: bad argument #1 to 'unpack' (string expected, got no value)")),
    ("return struct.unpack('z', 'ab')",
     ScriptError("ERR user_script:1: bad argument #1 to 'unpack' (invalid format option 'z')")),
    ("return struct.unpack('s', 'abc')",
     ScriptError('ERR user_script:1: unfinished string in data')),
    ("return struct.unpack('s', 'ab', 10)",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('c0', 'abc')",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('c0', '3')",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('c0', 'abc', 1)",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('x c0', 'aabc')",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('b c0 c0', '\\002abc')",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('b c0', '\\005abc')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('c1 c0', '\\000abc')",
     ScriptError("ERR user_script:1: format 'c0' needs a previous size")),
    ("return struct.unpack('c6', 'ab', -5)",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('c2147483647', 'a')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('!4 b i', '\\1\\0\\0')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.size('s')",
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)")),
    ("return struct.size('b s')",
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)")),
    ("return struct.size('c0')",
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (option 'c0' has no fixed size)")),
    ("return struct.size('?')",
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (invalid format option '?')")),
    ("return struct.size('=')",
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (invalid format option '=')")),
    ("return struct.size('i40')",
     ScriptError('ERR user_script:1: integral size 40 is larger than limit of 32')),
    ("return struct.size('!3')", ScriptError('ERR user_script:1: alignment 3 is not a power of 2')),
    ('return struct.size()',
     ScriptError("ERR user_script:1: bad argument #1 to 'size' (string expected, got no value)")),
]

# Out-of-range double -> integer casts show what x86-64 does with them.
STRUCT_X86 = [
    ("return struct.pack('>I8', 2^64)", bulk(b'\x00\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>I8', 2^63)", bulk(b'\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>I8', 2^63+2^12)", bulk(b'\x80\x00\x00\x00\x00\x00\x10\x00')),
    ("return struct.pack('>I8', 1e30)", bulk(b'\x00\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>I8', 0/0)", bulk(b'\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>I8', 1/0)", bulk(b'\x00\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>i8', -1/0)", bulk(b'\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>i8', -1e30)", bulk(b'\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>i8', -2^63)", bulk(b'\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>I8', 2^64-2^11)", bulk(b'\xff\xff\xff\xff\xff\xff\xf8\x00')),
    ("return struct.pack('>T l L', 2^64-1, -2^63, 2^63)",
     bulk(b'\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('i32', -1)",
     bulk(b'\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00')),
    ("return struct.pack('>i16', -1)",
     bulk(b'\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff')),
    ("return struct.pack('<i16', -2)",
     bulk(b'\xfe\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00')),
    ("return {struct.unpack('>i16', struct.pack('>i16', -1))}", b'*2\r\n:-1\r\n:17\r\n'),
    ("return {struct.unpack('>i9', '\\255\\255\\255\\255\\255\\255\\255\\255\\255')}",
     b'*2\r\n:-1\r\n:10\r\n'),
    ("return {struct.unpack('>i9', '\\000\\000\\000\\000\\000\\000\\000\\000\\128')}",
     b'*2\r\n:-128\r\n:10\r\n'),
    ("return {struct.unpack('>i12', '\\000\\000\\000\\000\\000\\000\\000\\000\\000\\008\\000\\000')}",
     b'*2\r\n:524288\r\n:13\r\n'),
    ("return tostring(struct.unpack('<i10', '\\001\\000\\000\\000\\000\\000\\000\\128\\255\\255'))",
     bulk(b'-32767')),
    ("return tostring(struct.unpack('<I16', '\\001\\000\\000\\000\\000\\000\\000\\128\\255\\255\\255\\255\\255\\255\\255\\255'))",
     bulk(b'9.2233720368548e+18')),
    ("return {struct.unpack('d c0', struct.pack('d', 1e30) .. 'abc')}", b'*2\r\n$0\r\n\r\n:9\r\n'),
    ("return {struct.unpack('d c0', struct.pack('d', -0.5) .. 'abc')}", b'*2\r\n$0\r\n\r\n:9\r\n'),
    ("return {struct.unpack('d c0', struct.pack('d', 2.9) .. 'abc')}",
     b'*2\r\n$2\r\nab\r\n:11\r\n'),
    ("return struct.unpack('b c0', '\\255abc')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return struct.unpack('d c0', struct.pack('d', 0/0) .. 'abc')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)")),
    ("return {struct.unpack('', 'ab', 2^64)}", b'*1\r\n:-9223372036854775808\r\n'),
]

# ---------------------------------------------------------------- cmsgpack

MSGPACK = [
    ('return cmsgpack.pack({})', bulk(b'\x90')),
    ('return cmsgpack.pack(nil)', bulk(b'\xc0')),
    ('return cmsgpack.pack(nil, 1)', bulk(b'\xc0\x01')),
    ('return cmsgpack.pack(function() end)', bulk(b'\xc0')),
    ('return cmsgpack.pack(coroutine.create(function() end))', bulk(b'\xc0')),
    ('return cmsgpack.pack(redis.call)', bulk(b'\xc0')),
    ('return cmsgpack.pack(KEYS)', bulk(b'\x90')),
    ("return cmsgpack.pack(string.rep('a', 31))", bulk(b'\xbfaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')),
    ("return cmsgpack.pack(string.rep('a', 32))", bulk(b'\xd9 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')),
    ("return cmsgpack.pack(string.rep('a', 255)):sub(1, 3)", bulk(b'\xd9\xffa')),
    ("return cmsgpack.pack(string.rep('a', 256)):sub(1, 4)", bulk(b'\xda\x01\x00a')),
    ("return cmsgpack.pack(string.rep('a', 65535)):sub(1, 4)", bulk(b'\xda\xff\xffa')),
    ("return cmsgpack.pack(string.rep('a', 65536)):sub(1, 6)", bulk(b'\xdb\x00\x01\x00\x00a')),
    ("return cmsgpack.pack('123')", bulk(b'\xa3123')),
    ('return cmsgpack.pack(127, 128, 255, 256, 65535, 65536, 2^32-1, 2^32)',
     bulk(b'\x7f\xcc\x80\xcc\xff\xcd\x01\x00\xcd\xff\xff\xce\x00\x01\x00\x00\xce\xff\xff\xff\xff\xcf\x00\x00\x00\x01\x00\x00\x00\x00')),
    ('return cmsgpack.pack(-32, -33, -128, -129, -32768, -32769, -2^31, -2^31-1)',
     bulk(b'\xe0\xd0\xdf\xd0\x80\xd1\xff\x7f\xd1\x80\x00\xd2\xff\xff\x7f\xff\xd2\x80\x00\x00\x00\xd3\xff\xff\xff\xff\x7f\xff\xff\xff')),
    ('return cmsgpack.pack(2^53, -2^53, 2^63 - 1024, -2^63)',
     bulk(b'\xcf\x00 \x00\x00\x00\x00\x00\x00\xd3\xff\xe0\x00\x00\x00\x00\x00\x00\xcf\x7f\xff\xff\xff\xff\xff\xfc\x00\xd3\x80\x00\x00\x00\x00\x00\x00\x00')),
    ('return cmsgpack.pack(2^63)', bulk(b'\xca_\x00\x00\x00')),
    ('return cmsgpack.pack(2^64)', bulk(b'\xca_\x80\x00\x00')),
    ('return cmsgpack.pack(0/0)', bulk(b'\xcb\xff\xf8\x00\x00\x00\x00\x00\x00')),
    ('return cmsgpack.pack(1/0, -1/0)', bulk(b'\xca\x7f\x80\x00\x00\xca\xff\x80\x00\x00')),
    ('return cmsgpack.pack(-0.0)', bulk(b'\x00')),
    ('return cmsgpack.pack(0.1)', bulk(b'\xcb?\xb9\x99\x99\x99\x99\x99\x9a')),
    ('return cmsgpack.pack(1e300, 1e-45, 3.4028234663852886e38, 1e39, -1.5, 2^-149, 2^-150, 0.5)',
     bulk(b'\xcb~7\xe4<\x88\x00u\x9c\xcb6\x96\xd6\x01\xad7j\xb9\xca\x7f\x7f\xff\xff\xcbH\x07\x82\x87\xf4\x9cJ\x1d\xca\xbf\xc0\x00\x00\xca\x00\x00\x00\x01\xcb6\x90\x00\x00\x00\x00\x00\x00\xca?\x00\x00\x00')),
    ('return cmsgpack.pack({1,2,nil,4})', bulk(b'\x83\x01\x01\x02\x02\x04\x04')),
    ('return cmsgpack.pack({[1]=1,[3]=3})', bulk(b'\x82\x01\x01\x03\x03')),
    ('return cmsgpack.pack({[1.5]=1})', bulk(b'\x81\xca?\xc0\x00\x00\x01')),
    ('return cmsgpack.pack({[0]=1})', bulk(b'\x81\x00\x01')),
    ('return cmsgpack.pack({[-1]=1})', bulk(b'\x81\xff\x01')),
    ('return cmsgpack.pack({[2^53]=1})', bulk(b'\x81\xcf\x00 \x00\x00\x00\x00\x00\x00\x01')),
    ('return cmsgpack.pack({1, [2^31]=3})', bulk(b'\x82\x01\x01\xce\x80\x00\x00\x00\x03')),
    ('return cmsgpack.pack({[1]=1, [2]=2, [2^32+3]=3})',
     bulk(b'\x83\x01\x01\x02\x02\xcf\x00\x00\x00\x01\x00\x00\x00\x03\x03')),
    ('return cmsgpack.pack({1,2,3,a=1})', bulk(b'\x84\x01\x01\x02\x02\x03\x03\xa1a\x01')),
    ('return cmsgpack.pack({[true]=1})', bulk(b'\x81\xc3\x01')),
    ("return cmsgpack.pack({['1']=1})", bulk(b'\x81\xa11\x01')),
    ('return cmsgpack.pack({[{1}]=1})', bulk(b'\x81\x91\x01\x01')),
    ('return cmsgpack.pack({{},{{}},{a={}}})', bulk(b'\x93\x90\x91\x90\x81\xa1a\x90')),
    ('local t = {1,2,3,4} t[4]=nil return cmsgpack.pack(t)', bulk(b'\x93\x01\x02\x03')),
    ('local t = {1,2,3,4} t[2]=nil return cmsgpack.pack(t)', bulk(b'\x83\x01\x01\x03\x03\x04\x04')),
    ('local t = {} t[3]=3 t[2]=2 t[1]=1 return cmsgpack.pack(t)', bulk(b'\x93\x01\x02\x03')),
    ('return cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15})',
     bulk(b'\x9f\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f')),
    ('return cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16})',
     bulk(b'\xdc\x00\x10\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10')),
    ('return cmsgpack.pack({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15})',
     bulk(b'\x8f\xa1a\x01\xa1c\x03\xa1b\x02\xa1e\x05\xa1d\x04\xa1g\x07\xa1f\x06\xa1i\t\xa1h\x08\xa1k\x0b\xa1j\n\xa1m\r\xa1l\x0c\xa1o\x0f\xa1n\x0e')),
    ('return cmsgpack.pack({a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15,p=16})',
     bulk(b'\xde\x00\x10\xa1a\x01\xa1p\x10\xa1c\x03\xa1b\x02\xa1e\x05\xa1d\x04\xa1g\x07\xa1f\x06\xa1i\t\xa1h\x08\xa1k\x0b\xa1j\n\xa1m\r\xa1l\x0c\xa1o\x0f\xa1n\x0e')),
    ('local t = {} for i = 1, 65536 do t[i] = 0 end return cmsgpack.pack(t):sub(1, 6)',
     bulk(b'\xdd\x00\x01\x00\x00\x00')),
    ("local t = {} for i = 1, 65536 do t['k' .. i] = 0 end return cmsgpack.pack(t):sub(1, 5)",
     bulk(b'\xdf\x00\x01\x00\x00')),
    ('return cmsgpack.pack({a={a={a={a={a={a={a={a={a={a={a={a={a={a={a={a={a={a=1}}}}}}}}}}}}}}}}}})',
     bulk(b'\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\x81\xa1a\xc0')),
    ('local t = {1} for i = 1, 20 do t = {t} end return cmsgpack.pack(t)',
     bulk(b'\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0')),
    ('local t = {} t[1] = t return cmsgpack.pack(t)',
     bulk(b'\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0')),
    ('local t = {} t.me = t return #cmsgpack.pack(t)', b':65\r\n'),
    ('return cmsgpack.pack(true, false)', bulk(b'\xc3\xc2')),
    ('return #cmsgpack.pack(unpack({1,2,3,4,5,6,7,8,9,10}))', b':10\r\n'),
    ('local t = {} for i = 1, 4000 do t[i] = i end return #cmsgpack.pack(unpack(t))',
     b':11618\r\n'),
]

MSGPACK_UNPACK = [
    ("return cmsgpack.unpack('')", b'$-1\r\n'),
    ('return cmsgpack.unpack(1)', b':49\r\n'),
    ("return cmsgpack.unpack('\\208\\128')", b':-128\r\n'),
    ("return cmsgpack.unpack('\\209\\128\\000')", b':-32768\r\n'),
    ("return cmsgpack.unpack('\\210\\128\\000\\000\\000')", b':-2147483648\r\n'),
    ("return tostring(cmsgpack.unpack('\\211\\128\\000\\000\\000\\000\\000\\000\\000'))",
     bulk(b'-9.2233720368548e+18')),
    ("return cmsgpack.unpack('\\204\\255')", b':255\r\n'),
    ("return cmsgpack.unpack('\\205\\255\\255')", b':65535\r\n'),
    ("return cmsgpack.unpack('\\206\\255\\255\\255\\255')", b':4294967295\r\n'),
    ("return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))",
     bulk(b'-1')),
    ("return tostring(cmsgpack.unpack('\\207\\128\\000\\000\\000\\000\\000\\000\\000'))",
     bulk(b'-9.2233720368548e+18')),
    ("return tostring(cmsgpack.unpack('\\202\\063\\192\\000\\000'))", bulk(b'1.5')),
    ("return tostring(cmsgpack.unpack('\\203\\063\\248\\000\\000\\000\\000\\000\\000'))",
     bulk(b'1.5')),
    ("return tostring(cmsgpack.unpack('\\202\\255\\192\\000\\000'))", bulk(b'-nan')),
    ("return cmsgpack.unpack('\\224')", b':-32\r\n'),
    ("return cmsgpack.unpack('\\127')", b':127\r\n'),
    ("return cmsgpack.unpack('\\160')", bulk(b'')),
    ("return cmsgpack.unpack('\\217\\002ab')", bulk(b'ab')),
    ("return cmsgpack.unpack('\\218\\000\\002ab')", bulk(b'ab')),
    ("return cmsgpack.unpack('\\219\\000\\000\\000\\002ab')", bulk(b'ab')),
    ("return cmsgpack.unpack('\\144')", b'*0\r\n'),
    ("return cmsgpack.unpack('\\128')", b'*0\r\n'),
    ("return cmsgpack.unpack('\\220\\000\\002\\001\\002')", b'*2\r\n:1\r\n:2\r\n'),
    ("return cmsgpack.unpack('\\221\\000\\000\\000\\002\\001\\002')", b'*2\r\n:1\r\n:2\r\n'),
    ("return cmsgpack.unpack('\\222\\000\\001\\161a\\001').a", b':1\r\n'),
    ("return cmsgpack.unpack('\\223\\000\\000\\000\\001\\161a\\001').a", b':1\r\n'),
    ("return {cmsgpack.unpack('\\192\\194\\195')}", b'*0\r\n'),
    ("local a, b, c = cmsgpack.unpack('\\192\\194\\195') return {type(a), tostring(b), tostring(c)}",
     b'*3\r\n$3\r\nnil\r\n$5\r\nfalse\r\n$4\r\ntrue\r\n'),
    ("return cmsgpack.unpack('\\147\\192\\002\\003')", b'*0\r\n'),
    ("local t = cmsgpack.unpack('\\147\\192\\192\\003') return #t", b':0\r\n'),
    ("local t = cmsgpack.unpack('\\148\\001\\192\\192\\004') return #t", b':1\r\n'),
    ("local t = cmsgpack.unpack('\\132\\004\\004\\003\\003\\002\\002\\001\\001') return #t",
     b':4\r\n'),
    ("local t = cmsgpack.unpack('\\132\\161d\\004\\161c\\003\\161b\\002\\161a\\001') local r = {} for k in pairs(t) do r[#r+1]=k end return r",
     b'*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n'),
    ("return cmsgpack.pack(cmsgpack.unpack('\\133\\161d\\004\\161c\\003\\161b\\002\\161a\\001\\161e\\005'))",
     bulk(b'\x85\xa1a\x01\xa1c\x03\xa1b\x02\xa1e\x05\xa1d\x04')),
    ("return cmsgpack.pack(cmsgpack.unpack('\\133\\001\\004\\005\\003\\002\\002\\004\\001\\003\\005'))",
     bulk(b'\x95\x04\x02\x05\x01\x03')),
    ("return {cmsgpack.unpack('\\001\\002', 5)}", b'*2\r\n:1\r\n:2\r\n'),
    ("return {cmsgpack.unpack_one('')}", b'*1\r\n:-1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002\\003')}", b'*2\r\n:1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002\\003', 1)}", b'*2\r\n:2\r\n:2\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002\\003', 2)}", b'*2\r\n:-1\r\n:3\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002\\003', 3)}", b'*1\r\n:-1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002', 2.5)}", b'*1\r\n:-1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002', nil)}", b'*2\r\n:1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002\\003', '1')}", b'*2\r\n:2\r\n:2\r\n'),
    ('return {cmsgpack.unpack_one(12)}', b'*2\r\n:1\r\n:49\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\002', 1, 2, 3)}", b'*2\r\n:-1\r\n:2\r\n'),
    ("return {cmsgpack.unpack_one('\\146\\001\\001\\002\\003', 0)}",
     b'*2\r\n:3\r\n*2\r\n:1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_one('\\001\\193\\002', 2)}", b'*2\r\n:-1\r\n:2\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 2)}", b'*3\r\n:2\r\n:1\r\n:2\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 0)}", b'*3\r\n:1\r\n:2\r\n:3\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 0, 1)}", b'*1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 2, 2)}", b'*2\r\n:-1\r\n:3\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 1.7)}", b'*2\r\n:1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\193', 1)}", b'*2\r\n:1\r\n:1\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 4294967296, 1)}",
     b'*3\r\n:-1\r\n:2\r\n:3\r\n'),
    ("return {cmsgpack.unpack_limit('\\001\\002\\003', 4294967296)}",
     b'*4\r\n:-1\r\n:1\r\n:2\r\n:3\r\n'),
    ('return cmsgpack._NAME', bulk(b'cmsgpack')),
    ('return cmsgpack._VERSION', bulk(b'lua-cmsgpack 0.4.0')),
    ('return cmsgpack._DESCRIPTION', bulk(b'MessagePack C implementation for Lua')),
    ("return cmsgpack.unpack(cmsgpack.pack({1, {2, {3, 'x'}}, a = 'b'}))[2][2][2]", bulk(b'x')),
    ("return type(cmsgpack.unpack(string.rep('\\145', 3999) .. '\\001'))", bulk(b'table')),
    ("return #{cmsgpack.unpack(string.rep('\\001', 7999))}", b':7999\r\n'),
    ("return #{cmsgpack.unpack_limit(string.rep('\\001', 8000), 7998, 1)}", b':7999\r\n'),
    ("return #{struct.unpack(string.rep('b', 7997), string.rep('a', 7997))}", b':7998\r\n'),
]

MSGPACK_ERRORS = [
    ('return cmsgpack.pack()',
     ScriptError("ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)")),
    ('local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))',
     ScriptError("ERR user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)")),
    ('local t = {} for i = 1, 3999 do t[i] = i end t[4000] = {} return cmsgpack.pack(unpack(t))',
     ScriptError('ERR user_script:1: stack overflow (in function table_is_an_array)')),
    ('local t = {} for i = 1, 3997 do t[i] = i end t[3998] = {a={b=1}} return cmsgpack.pack(unpack(t))',
     ScriptError('ERR user_script:1: stack overflow (in function mp_encode_lua_table_as_map)')),
    ("return cmsgpack.unpack('\\146\\001')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\145')", ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\161')", ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\001\\161')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\217')", ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\218\\000')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\220\\000')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\203\\000\\000')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\219\\255\\000\\000\\002ab')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\221\\255\\255\\255\\255\\001\\002')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\223\\255\\255\\255\\255\\001\\002')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\130\\192')",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack('\\193')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\196\\002ab')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\197\\000\\002ab')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\198\\000\\000\\000\\002ab')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\199\\001\\001\\001')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\212\\001\\001')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\146\\193')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\130\\001\\193')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\001\\193\\002')",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack('\\129\\192\\001')", ScriptError('ERR table index is nil')),
    ("return cmsgpack.unpack('\\130\\192\\001')", ScriptError('ERR table index is nil')),
    ("return cmsgpack.unpack('\\129\\203\\127\\248\\000\\000\\000\\000\\000\\000\\001')",
     ScriptError('ERR table index is NaN')),
    ('return cmsgpack.unpack()',
     ScriptError("ERR user_script:1: bad argument #1 to 'unpack' (string expected, got no value)")),
    ('return cmsgpack.unpack({})',
     ScriptError("ERR user_script:1: bad argument #1 to 'unpack' (string expected, got table)")),
    ('return cmsgpack.unpack_one()',
     ScriptError("ERR user_script:1: bad argument #1 to 'unpack_one' (string expected, got no value)")),
    ("return cmsgpack.unpack_one('\\001\\002\\003', 4)",
     ScriptError('ERR user_script:1: Start offset 4 greater than input length 3.')),
    ("return cmsgpack.unpack_one('\\001\\002\\003', -1)",
     ScriptError('ERR user_script:1: Invalid request to unpack with offset of -1 and limit of 3.')),
    ("return cmsgpack.unpack_one('\\001\\002\\003', 4294967297)",
     ScriptError('ERR user_script:1: Start offset 1 greater than input length 3.')),
    ("return cmsgpack.unpack_one('\\001\\002\\003', -4294967295)",
     ScriptError('ERR user_script:1: Invalid request to unpack with offset of 1 and limit of 3.')),
    ("return cmsgpack.unpack_one('\\001\\002', 'a')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack_one' (number expected, got string)")),
    ("return cmsgpack.unpack_one('\\146\\001\\193\\002\\003', 0)",
     ScriptError('ERR user_script:1: Bad data format in input.')),
    ("return cmsgpack.unpack_limit('\\001\\002\\003')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)")),
    ("return cmsgpack.unpack_limit('\\001\\002\\003', 'x')",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack_limit' (number expected, got string)")),
    ("return cmsgpack.unpack_limit('\\001', nil)",
     ScriptError("ERR user_script:1: bad argument #2 to 'unpack_limit' (number expected, got nil)")),
    ("return cmsgpack.unpack_limit('\\001\\002\\003', -1)",
     ScriptError('ERR user_script:1: Invalid request to unpack with offset of 0 and limit of 3.')),
    ("return cmsgpack.unpack_limit('\\001\\165', 2)",
     ScriptError('ERR user_script:1: Missing bytes in input.')),
    ("return cmsgpack.unpack_limit(string.rep('\\001', 7999), 7999)",
     ScriptError('ERR user_script:1: stack overflow (in function mp_unpack_full)')),
    ("return cmsgpack.unpack_limit(string.rep('\\001', 8000), 8000)",
     ScriptError('ERR user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)')),
    ("return cmsgpack.unpack(string.rep('\\145', 4000) .. '\\001')",
     ScriptError('ERR user_script:1: stack overflow (in function mp_decode_to_lua_array)')),
    ("return cmsgpack.unpack(string.rep('\\145', 100000))",
     ScriptError('ERR user_script:1: stack overflow (in function mp_decode_to_lua_array)')),
    ("return cmsgpack.unpack(string.rep('\\145', 3998) .. '\\001', 5, 6, 7)",
     ScriptError('ERR user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)')),
    ("return cmsgpack.unpack(string.rep('\\001', 8000))",
     ScriptError('ERR user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)')),
    ("return cmsgpack.unpack(string.rep('\\129\\001', 100000) .. '\\001')",
     ScriptError('ERR user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)')),
    ("return struct.unpack(string.rep('b', 7998), string.rep('a', 7998))",
     ScriptError('ERR user_script:1: stack overflow (too many results)')),
    ("return struct.unpack(string.rep('b', 7997) .. ' ', string.rep('a', 8000))",
     ScriptError('ERR user_script:1: stack overflow (too many results)')),
]


@pytest.mark.parametrize("body,expected", STRUCT, ids=ids(STRUCT))
def test_struct(conn, body, expected):
    check(conn, body, expected)


@pytest.mark.parametrize("body,expected", STRUCT_ERRORS, ids=ids(STRUCT_ERRORS))
def test_struct_errors(conn, body, expected):
    check(conn, body, expected)


@pytest.mark.skipif(not X86_64, reason="out-of-range double to integer conversion is x86-64 specific")
@pytest.mark.parametrize("body,expected", STRUCT_X86, ids=ids(STRUCT_X86))
def test_struct_x86_conversions(conn, body, expected):
    check(conn, body, expected)


@pytest.mark.parametrize("body,expected", MSGPACK, ids=ids(MSGPACK))
def test_cmsgpack_pack(conn, body, expected):
    check(conn, body, expected)


@pytest.mark.parametrize("body,expected", MSGPACK_UNPACK, ids=ids(MSGPACK_UNPACK))
def test_cmsgpack_unpack(conn, body, expected):
    check(conn, body, expected)


@pytest.mark.parametrize("body,expected", MSGPACK_ERRORS, ids=ids(MSGPACK_ERRORS))
def test_cmsgpack_errors(conn, body, expected):
    check(conn, body, expected)


def test_binary_arguments_and_keys(conn):
    data = b"\x83\xa1a\x01\xa1b\x92\xc3\xc0\xa2\r\n\xd9\x02\x00\x00"
    body = "local t = cmsgpack.unpack(ARGV[1]) return {t.a, #t.b, t['\\r\\n']}"
    assert ev(conn, body, [], [data]) == b"*3\r\n:1\r\n:1\r\n$2\r\n\x00\x00\r\n"
    body = "return {struct.unpack('>I2 s c3', ARGV[1])}"
    assert ev(conn, body, [], [b"\x01\x02a\r\n\x00\xff\x00\r"]) == (
        b"*4\r\n:258\r\n$3\r\na\r\n\r\n$3\r\n\xff\x00\r\r\n:10\r\n")
    body = ("redis.call('set', KEYS[1], cmsgpack.pack({owner = ARGV[1], n = 3}, struct.pack('>i8', -7))) "
            "local t, s = cmsgpack.unpack(redis.call('get', KEYS[1])) "
            "return {t.owner, t.n, struct.unpack('>i8', s)}")
    assert ev(conn, body, ["mp"], ["me"]) == b"*4\r\n$2\r\nme\r\n:3\r\n:-7\r\n:9\r\n"
    assert conn.cmd("GET", "mp") == bulk(b"\x82\xa1n\x03\xa5owner\xa2me\xa8\xff\xff\xff\xff\xff\xff\xff\xf9")


def test_libraries_are_read_only(conn):
    for lib in ("struct", "cmsgpack"):
        body = "%s.pack = nil" % lib
        check(conn, body, ScriptError("ERR user_script:1: Attempt to modify a readonly table"))
    assert ev(conn, "return struct.nosuch") == NIL
