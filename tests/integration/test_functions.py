"""Redis 7 functions as Redis 7.0 has them: FUNCTION LOAD (the library
metadata, the load-time sandbox, redis.register_function's two forms and
flags), FCALL / FCALL_RO, DELETE / FLUSH / LIST / STATS, DUMP / RESTORE with
its three policies (and a payload of redis-server's restored here and back),
BUSY with FUNCTION KILL vs SCRIPT KILL, and RESP3 replies. Byte for byte on
a raw connection."""

import time

import pytest

from resp_util import encode_command, parse

OK = b"+OK\r\n"
NOT_FOUND = b"-ERR Function not found\r\n"
BUSY_FN = b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
BUSY_EVAL = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
NOTBUSY = b"-NOTBUSY No scripts in execution right now.\r\n"
NAME_ERR = (b"Library names can only contain letters, numbers, or underscores(_) "
            b"and must be at least one character long")


def lib(name, body):
    return "#!lua name=%s\n%s" % (name, body)


def fn_lib(libname, fname, body, flags=None):
    if flags is None:
        return lib(libname, "redis.register_function('%s', function(KEYS, ARGV)\n %s \nend)"
                   % (fname, body))
    return lib(libname, "redis.register_function{function_name='%s', callback=function(KEYS, ARGV)\n"
               " %s \nend, flags={%s}}" % (fname, body, ",".join("'%s'" % f for f in flags)))


def bulk(s):
    s = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(s), s)


def err(text):
    return b"-" + (text.encode() if isinstance(text, str) else text) + b"\r\n"


@pytest.fixture
def fc(server):
    """A raw connection to a server with no function libraries."""
    c = server.raw()
    assert c.cmd("FUNCTION", "FLUSH") == OK
    yield c
    c.cmd("CONFIG", "SET", "maxmemory", "0")
    c.cmd("FUNCTION", "FLUSH")


# ---------------------------------------------------------------- LOAD

def test_load_returns_the_library_name_and_fcall_runs(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("mylib", "hello", "return 'hi'")) == bulk("mylib")
    assert fc.cmd("FCALL", "hello", "0") == bulk("hi")
    assert fc.cmd("FCALL", "HELLO", "0") == bulk("hi")   # names ignore case
    assert fc.cmd("fcall_ro", "hello", "0") == err("ERR Can not execute a script with write flag using *_ro command.")


def test_load_existing_library_needs_replace(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("lib1", "f1", "return 1")) == bulk("lib1")
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("lib1", "f2", "return 2")) == err("ERR Library 'lib1' already exists")
    # library names are case-sensitive, function names are not
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("LIB1", "F1", "return 2")) == err("ERR Function F1 already exists")
    assert fc.cmd("FUNCTION", "DELETE", "Lib1") == err("ERR Library not found")
    assert fc.cmd("FUNCTION", "LOAD", "REPLACE", fn_lib("lib1", "f1", "return 2")) == bulk("lib1")
    assert fc.cmd("FCALL", "f1", "0") == b":2\r\n"
    # a failed REPLACE keeps the old library
    assert fc.cmd("FUNCTION", "LOAD", "replace", fn_lib("lib1", "f1", "bad script")).startswith(
        b"-ERR Error compiling function: user_function:")
    assert fc.cmd("FCALL", "f1", "0") == b":2\r\n"


def test_load_function_name_collision_across_libraries(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("a", "f", "return 1")) == bulk("a")
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("b", "f", "return 2")) == err("ERR Function f already exists")
    assert fc.cmd("FUNCTION", "LOAD", lib("c", "redis.register_function('g', function() end)\n"
                                             "redis.register_function('g', function() end)")) == err(
        "ERR Error registering functions: ERR Function already exists in the library")
    # within a library names are case-sensitive: both count, FCALL reaches one
    assert fc.cmd("FUNCTION", "LOAD", lib("c", "redis.register_function('g', function() return 7 end)\n"
                                             "redis.register_function('G', function() return 7 end)")) == bulk("c")
    assert fc.cmd("FCALL", "g", "0") == b":7\r\n"
    assert parse(fc.cmd("FUNCTION", "STATS"))[3] == [b"LUA", [b"libraries_count", 2, b"functions_count", 3]]


@pytest.mark.parametrize("code, expected", [
    ("return 1", "ERR Missing library metadata"),
    ("#!lua name=x", "ERR Invalid library metadata"),
    ("#!lua\nreturn 1", "ERR Library name was not given"),
    ("#!lua name=a name=b\nreturn 1", "ERR Invalid metadata value, name argument was given multiple times"),
    ("#!lua name=a foo=bar\nreturn 1", "ERR Invalid metadata value given: foo=bar"),
    ("#!lua name=a-b\nreturn 1", "ERR " + NAME_ERR.decode()),
    ("#!lua name=\nreturn 1", "ERR " + NAME_ERR.decode()),
    ("#!py name=a\nreturn 1", "ERR Engine 'py' not found"),
    ("#!lua name=\"a b\"\nreturn 1", "ERR " + NAME_ERR.decode()),
    ("#!lua name=a\nreturn 1", "ERR No functions registered"),
    ("#!lua name=a\nlocal x = ", "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
])
def test_load_metadata_and_body_errors(fc, code, expected):
    assert fc.cmd("FUNCTION", "LOAD", code) == err(expected)
    assert fc.cmd("FUNCTION", "LIST") == b"*0\r\n"


def test_long_names(fc):
    name = "F" * 300
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("L" + name, name, "return 5")) == bulk("L" + name)
    assert fc.cmd("FCALL", name.lower(), "0") == b":5\r\n"


def test_load_option_errors(fc):
    assert fc.cmd("FUNCTION", "LOAD", "bad", "x") == err("ERR Unknown option given: bad")
    assert fc.cmd("FUNCTION", "LOAD") == err("ERR wrong number of arguments for 'function|load' command")


REG = "ERR Error registering functions: ERR "


@pytest.mark.parametrize("body, expected", [
    ("redis.register_function()", REG + "wrong number of arguments to redis.register_function"),
    ("redis.register_function('a', function() end, 1)", REG + "wrong number of arguments to redis.register_function"),
    ("redis.register_function('f')", REG + "calling redis.register_function with a single argument is only "
                                          "applicable to Lua table (representing named arguments)."),
    ("redis.register_function({}, function() end)", REG + "first argument to redis.register_function must be a string"),
    ("redis.register_function('f', 1)", REG + "second argument to redis.register_function must be a function"),
    ("redis.register_function('a-b', function() end)", REG + NAME_ERR.decode()),
    ("redis.register_function('', function() end)", REG + NAME_ERR.decode()),
    ("redis.register_function{function_name=1.5, callback=function() end}", REG + NAME_ERR.decode()),
    ("redis.register_function{function_name={}, callback=function() end}",
     REG + "function_name argument given to redis.register_function must be a string"),
    ("redis.register_function{function_name='f', callback='x'}",
     REG + "callback argument given to redis.register_function must be a function"),
    ("redis.register_function{function_name='f', callback=function() end, description={}}",
     REG + "description argument given to redis.register_function must be a string"),
    ("redis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
     REG + "flags argument to redis.register_function must be a table representing function flags"),
    ("redis.register_function{function_name='f', callback=function() end, flags={'bad'}}", REG + "unknown flag given"),
    ("redis.register_function{function_name='f', callback=function() end, flags={1}}", REG + "unknown flag given"),
    ("redis.register_function{function_name='f', callback=function() end, other=1}",
     REG + "unknown argument given to redis.register_function"),
    ("redis.register_function{callback=function() end}", REG + "redis.register_function must get a function name argument"),
    ("redis.register_function{function_name='f'}", REG + "redis.register_function must get a callback argument"),
])
def test_register_function_errors(fc, body, expected):
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == err(expected)


@pytest.mark.parametrize("body, expected", [
    ("redis.call('ping')", "user_function:2: Script attempted to access nonexistent global variable 'call'"),
    ("redis.setresp(3)", "user_function:2: Script attempted to access nonexistent global variable 'setresp'"),
    ("math.random()", "user_function:2: Script attempted to access nonexistent global variable 'math'"),
    ("redis.math.random()", "user_function:2: Script attempted to access nonexistent global variable 'math'"),
    ("getmetatable('')", "user_function:2: Script attempted to access nonexistent global variable 'getmetatable'"),
    ("error('boom')", "user_function:2: Script attempted to access nonexistent global variable 'error'"),
    ("a = 1", "user_function:2: Attempt to modify a readonly table"),
    ("redis.x = 1", "user_function:2: Attempt to modify a readonly table"),
    ("local a = 1 while true do a = a + 1 end", "FUNCTION LOAD timeout"),
])
def test_load_time_sandbox(fc, body, expected):
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == err(REG + expected)


def test_load_time_api_logs_and_versions(fc):
    body = ("redis.log(redis.LOG_NOTICE, 'loading')\n"
            "local v = redis.REDIS_VERSION\n"
            "redis.register_function('v', function() return v end)")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    assert fc.cmd("FCALL", "v", "0") == bulk("7.0.15")


def test_functions_see_runtime_globals_but_not_the_load_api(fc):
    body = ("local lib = redis\n"
            "redis.register_function('f1', function() return math.floor(2.5) end)\n"
            "redis.register_function('f2', function() return redis.register_function('x', function() end) end)\n"
            "redis.register_function('f3', function() return lib.register_function('x', function() end) end)\n"
            "redis.register_function('f4', function() g = 1 end)")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    assert fc.cmd("FCALL", "f1", "0") == b":2\r\n"
    assert fc.cmd("FCALL", "f2", "0") == err(
        "ERR user_function:4: attempt to call field 'register_function' (a nil value) script: f2, on @user_function:4.")
    assert fc.cmd("FCALL", "f3", "0") == err(
        "ERR redis.register_function can only be called on FUNCTION LOAD command script: f3, on @user_function:5.")
    assert fc.cmd("FCALL", "f4", "0") == err(
        "ERR user_function:6: Attempt to modify a readonly table script: f4, on @user_function:6.")


# ---------------------------------------------------------------- FCALL

def test_fcall_keys_and_args_are_the_callback_arguments(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l", "f", "return {KEYS[1], KEYS[2], ARGV[1], #ARGV}")) == bulk("l")
    assert parse(fc.cmd("FCALL", "f", "2", "k1", "k2", "a1", "a2")) == [b"k1", b"k2", b"a1", 2]
    assert fc.cmd("FUNCTION", "LOAD", "REPLACE", fn_lib("l", "f", "return redis.call('set', KEYS[1], ARGV[1])")) == bulk("l")
    assert fc.cmd("FCALL", "f", "1", "x", "v") == OK
    assert fc.cmd("GET", "x") == bulk("v")


@pytest.mark.parametrize("args, expected", [
    (("nosuch", "0"), "ERR Function not found"),
    (("f", "x"), "ERR Bad number of keys provided"),
    (("f", "2", "a"), "ERR Number of keys can't be greater than number of args"),
    (("f", "-1"), "ERR Number of keys can't be negative"),
    (("f",), "ERR wrong number of arguments for 'fcall' command"),
])
def test_fcall_argument_errors(fc, args, expected):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l", "f", "return 1")) == bulk("l")
    assert fc.cmd("FCALL", *args) == err(expected)


def test_fcall_runtime_errors_name_the_function(fc):
    body = ("redis.register_function('e1', function() return redis.call('nosuch') end)\n"
            "redis.register_function('e2', function() error('x') end)\n"
            "redis.register_function('e3', function() return redis.error_reply('MY boom') end)")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    assert fc.cmd("FCALL", "e1", "0") == err(
        "ERR Unknown Redis command called from script script: e1, on @user_function:2.")
    assert fc.cmd("FCALL", "e2", "0") == err("ERR user_function:3: x script: e2, on @user_function:3.")
    assert fc.cmd("FCALL", "e3", "0") == err("MY boom")


def test_fcall_ro_and_no_writes(fc):
    body = ("redis.register_function{function_name='r', callback=function(k) return redis.call('get', k[1]) end, "
            "flags={'no-writes'}}\n"
            "redis.register_function{function_name='w', callback=function(k) return redis.call('set', k[1], 1) end, "
            "flags={'no-writes'}}\n"
            "redis.register_function('plain', function(k) return redis.call('get', k[1]) end)")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    assert fc.cmd("SET", "k", "v") == OK
    assert fc.cmd("FCALL_RO", "r", "1", "k") == bulk("v")
    assert fc.cmd("FCALL", "r", "1", "k") == bulk("v")
    assert fc.cmd("FCALL", "w", "1", "k") == err(
        "ERR Write commands are not allowed from read-only scripts. script: w, on @user_function:3.")
    assert fc.cmd("FCALL_RO", "plain", "1", "k") == err(
        "ERR Can not execute a script with write flag using *_ro command.")


def test_allow_oom_and_deny_oom(fc):
    body = ("redis.register_function('w', function() return redis.call('set', 'x', '1') end)\n"
            "redis.register_function{function_name='ok', callback=function() return redis.call('set', 'x', '2') end, "
            "flags={'allow-oom'}}\n"
            "redis.register_function{function_name='ro', callback=function() return 'r' end, flags={'no-writes'}}")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    payload = parse(fc.cmd("FUNCTION", "DUMP"))
    assert fc.cmd("CONFIG", "SET", "maxmemory", "1") == OK
    assert fc.cmd("FCALL", "w", "0") == err("OOM command not allowed when used memory > 'maxmemory'.")
    assert fc.cmd("FCALL", "ok", "0") == OK
    assert fc.cmd("FCALL", "ro", "0") == bulk("r")
    assert fc.cmd("FCALL_RO", "ro", "0") == bulk("r")
    assert fc.cmd("FUNCTION", "LOAD", "REPLACE", lib("l", "")) == err(
        "OOM command not allowed when used memory > 'maxmemory'.")
    assert fc.cmd("FUNCTION", "RESTORE", payload, "REPLACE") == err(
        "OOM command not allowed when used memory > 'maxmemory'.")
    assert fc.cmd("CONFIG", "SET", "maxmemory", "0") == OK
    assert fc.cmd("GET", "x") == bulk("2")


def test_flushall_keeps_functions(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l", "f", "return 1")) == bulk("l")
    assert fc.cmd("FLUSHALL") == OK
    assert fc.cmd("SCRIPT", "FLUSH") == OK
    assert fc.cmd("FCALL", "f", "0") == b":1\r\n"


# ---------------------------------------------------------------- DELETE / FLUSH / LIST / STATS

def test_delete_and_flush(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("a", "fa", "return 1")) == bulk("a")
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("b", "fb", "return 2")) == bulk("b")
    assert fc.cmd("FUNCTION", "DELETE", "nosuch") == err("ERR Library not found")
    assert fc.cmd("FUNCTION", "DELETE", "A") == err("ERR Library not found")
    assert fc.cmd("FUNCTION", "DELETE", "a") == OK
    assert fc.cmd("FCALL", "fa", "0") == NOT_FOUND
    assert fc.cmd("FCALL", "fb", "0") == b":2\r\n"
    assert fc.cmd("FUNCTION", "FLUSH", "bad") == err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert fc.cmd("FUNCTION", "FLUSH", "sync", "x") == err(
        "ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")
    assert fc.cmd("FUNCTION", "FLUSH", "ASYNC") == OK
    assert fc.cmd("FCALL", "fb", "0") == NOT_FOUND
    assert parse(fc.cmd("FUNCTION", "STATS")) == [
        b"running_script", None, b"engines", [b"LUA", [b"libraries_count", 0, b"functions_count", 0]]]


def test_list_libraries(fc):
    code = lib("mylib", "redis.register_function{function_name='f1', callback=function() return 1 end, "
                        "description='the first', flags={'allow-stale', 'no-writes', 'no-cluster', "
                        "'allow-cross-slot-keys', 'allow-oom'}}")
    assert fc.cmd("FUNCTION", "LOAD", code) == bulk("mylib")
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("other", "f2", "return 2")) == bulk("other")
    f1 = [b"name", b"f1", b"description", b"the first", b"flags",
          [b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster", b"allow-cross-slot-keys"]]
    f2 = [b"name", b"f2", b"description", None, b"flags", []]
    mine = [b"library_name", b"mylib", b"engine", b"LUA", b"functions", [f1]]
    other = [b"library_name", b"other", b"engine", b"LUA", b"functions", [f2]]
    assert sorted(parse(fc.cmd("FUNCTION", "LIST"))) == sorted([mine, other])
    assert parse(fc.cmd("FUNCTION", "LIST", "LIBRARYNAME", "MY*")) == [mine]
    assert parse(fc.cmd("FUNCTION", "LIST", "withcode", "libraryname", "my*")) == [
        mine + [b"library_code", code.encode()]]
    assert parse(fc.cmd("FUNCTION", "LIST", "LIBRARYNAME", "zz*")) == []


@pytest.mark.parametrize("args, expected", [
    (("bad",), "ERR Unknown argument bad"),
    (("withcode", "withcode"), "ERR Unknown argument withcode"),
    (("libraryname",), "ERR library name argument was not given"),
    (("libraryname", "a", "libraryname", "b"), "ERR Unknown argument libraryname"),
    (("x\r\n+INJECTED",), "ERR Unknown argument x  +INJECTED"),
])
def test_list_argument_errors(fc, args, expected):
    assert fc.cmd("FUNCTION", "LIST", *args) == err(expected)


def test_help_and_unknown_subcommand(fc):
    reply = parse(fc.cmd("FUNCTION", "HELP"))
    assert reply[0] == b"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert reply[1] == b"LOAD [REPLACE] <FUNCTION CODE>"
    assert reply[-2:] == [b"HELP", b"    Prints this help."]
    assert fc.cmd("FUNCTION", "NOSUCH") == err(
        "ERR unknown subcommand 'NOSUCH'. Try FUNCTION HELP.")
    assert fc.cmd("FUNCTION", "KILL") == NOTBUSY


# ---------------------------------------------------------------- DUMP / RESTORE

def test_dump_restore_policies(fc):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l1", "f1", "return 1")) == bulk("l1")
    dump = parse(fc.cmd("FUNCTION", "DUMP"))
    assert dump[0] == 0xF5 and dump[-10:-8] == b"\x0a\x00"   # FUNCTION2 record, RDB version 10
    assert fc.cmd("FUNCTION", "RESTORE", dump) == err("ERR Library l1 already exists")
    assert fc.cmd("FUNCTION", "RESTORE", dump, "REPLACE") == OK
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l2", "f2", "return 2")) == bulk("l2")
    assert fc.cmd("FUNCTION", "RESTORE", dump, "FLUSH") == OK
    assert fc.cmd("FCALL", "f2", "0") == NOT_FOUND
    assert fc.cmd("FCALL", "f1", "0") == b":1\r\n"
    assert fc.cmd("FUNCTION", "FLUSH") == OK
    assert fc.cmd("FUNCTION", "RESTORE", dump, "append") == OK
    assert fc.cmd("FCALL", "f1", "0") == b":1\r\n"
    assert fc.cmd("FUNCTION", "RESTORE", dump, "bad") == err(
        "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    assert fc.cmd("FUNCTION", "RESTORE", dump, "FLUSH", "x") == err(
        "ERR unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP.")


def test_restore_collisions_change_nothing(fc):
    assert fc.cmd("FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function() return 1 end)\n"
                                                  "redis.register_function('f3', function() return 3 end)")) == bulk("lib1")
    dump = parse(fc.cmd("FUNCTION", "DUMP"))
    assert fc.cmd("FUNCTION", "FLUSH") == OK
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("lib1", "f6", "return 6")) == bulk("lib1")
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("lib2", "f3", "return 33")) == bulk("lib2")
    assert fc.cmd("FUNCTION", "RESTORE", dump) == err("ERR Library lib1 already exists")
    assert fc.cmd("FUNCTION", "RESTORE", dump, "REPLACE") == err("ERR Function f3 already exists")
    assert fc.cmd("FCALL", "f6", "0") == b":6\r\n"
    assert fc.cmd("FCALL", "f3", "0") == b":33\r\n"
    assert fc.cmd("FCALL", "f1", "0") == NOT_FOUND


@pytest.mark.parametrize("payload, expected", [
    (b"bad", "ERR DUMP payload version or checksum are wrong"),
    (b"\xf5\x03abc\x0a\x00" + b"\x00" * 8, "ERR DUMP payload version or checksum are wrong"),
])
def test_restore_bad_payload_keeps_libraries(fc, payload, expected):
    assert fc.cmd("FUNCTION", "LOAD", fn_lib("l", "f", "return 1")) == bulk("l")
    assert fc.cmd("FUNCTION", "RESTORE", payload) == err(expected)
    assert fc.cmd("FCALL", "f", "0") == b":1\r\n"


def test_restore_payload_of_a_key_is_not_a_function(fc):
    assert fc.cmd("SET", "k", "v") == OK
    key_dump = parse(fc.cmd("DUMP", "k"))
    assert fc.cmd("FUNCTION", "RESTORE", key_dump) == err("ERR given type is not a function")


def test_dump_restores_across_servers(server, reference_redis):
    """A dump of redis-server's restores here, and this server's dump
    restores in redis-server, each byte-identical to the other's dump."""
    ref = reference_redis.raw()
    here = server.raw()
    for c in (ref, here):
        assert c.cmd("FUNCTION", "FLUSH") == OK
    long_body = "return '" + "x" * 200 + "'"   # long enough for LZF
    code = lib("shared", "redis.register_function('s1', function(k, a) return a[1] end)\n"
                         "redis.register_function('s2', function() %s end)" % long_body)
    assert ref.cmd("FUNCTION", "LOAD", code) == bulk("shared")
    ref_dump = parse(ref.cmd("FUNCTION", "DUMP"))
    assert here.cmd("FUNCTION", "RESTORE", ref_dump) == OK
    assert here.cmd("FCALL", "s1", "0", "v") == bulk("v")
    here_dump = parse(here.cmd("FUNCTION", "DUMP"))
    assert here_dump == ref_dump
    assert ref.cmd("FUNCTION", "RESTORE", here_dump, "FLUSH") == OK
    assert ref.cmd("FCALL", "s2", "0") == bulk("x" * 200)
    here.cmd("FUNCTION", "FLUSH")


# ---------------------------------------------------------------- BUSY / KILL

LOOP = "local a = 1 while true do a = a + 1 end"


def start_busy(srv, *command):
    looper, other = srv.raw(timeout=10), srv.raw(timeout=10)
    assert other.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == OK
    looper.send(encode_command(*command))
    time.sleep(0.4)
    return looper, other


def test_function_kill_of_a_busy_function(server_factory):
    srv = server_factory()
    c = srv.raw()
    assert c.cmd("FUNCTION", "LOAD", fn_lib("l", "spin", LOOP)) == bulk("l")
    looper, other = start_busy(srv, "FCALL", "spin", "0")
    assert other.cmd("PING") == BUSY_FN
    assert other.cmd("SCRIPT", "KILL") == BUSY_FN
    stats = parse(other.cmd("FUNCTION", "STATS"))
    assert stats[0] == b"running_script"
    assert stats[1][:5] == [b"name", b"spin", b"command", [b"FCALL", b"spin", b"0"], b"duration_ms"]
    assert stats[1][5] >= 100
    assert other.cmd("FUNCTION", "KILL") == OK
    assert looper.read_reply() == err(
        "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:3.")
    assert other.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("FUNCTION", "KILL") == NOTBUSY


def test_function_kill_does_not_stop_eval(server_factory):
    srv = server_factory()
    looper, other = start_busy(srv, "EVAL", LOOP, "0")
    assert other.cmd("PING") == BUSY_EVAL
    assert other.cmd("FUNCTION", "KILL") == BUSY_EVAL
    assert other.cmd("FUNCTION", "STATS") == BUSY_EVAL
    assert other.cmd("SCRIPT", "KILL") == OK
    assert looper.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    assert other.cmd("PING") == b"+PONG\r\n"


def test_busy_function_that_wrote_is_unkillable(server_factory):
    srv = server_factory()
    c = srv.raw()
    assert c.cmd("FUNCTION", "LOAD", fn_lib("l", "w", "redis.call('set', 'a', 1) " + LOOP)) == bulk("l")
    looper, other = start_busy(srv, "FCALL", "w", "0")
    assert other.cmd("FUNCTION", "KILL").startswith(b"-UNKILLABLE Sorry the script already executed write")
    other.send(encode_command("SHUTDOWN", "NOSAVE"))
    assert other.is_closed(wait=10)
    srv.proc.wait(timeout=10)


# ---------------------------------------------------------------- RESP3

def test_resp3_conversions(fc):
    body = ("redis.register_function('m', function() redis.setresp(3) "
            "return {map={a=1}} end)\n"
            "redis.register_function('d', function() return {double=3.5} end)\n"
            "redis.register_function('t', function() redis.setresp(3) return true end)\n"
            "redis.register_function('n', function() redis.setresp(3) return redis.call('hgetall', 'nokey') end)")
    assert fc.cmd("FUNCTION", "LOAD", lib("l", body)) == bulk("l")
    assert fc.cmd("FCALL", "m", "0") == b"*2\r\n$1\r\na\r\n:1\r\n"
    assert fc.cmd("FCALL", "d", "0") == b"$3\r\n3.5\r\n"
    assert fc.cmd("FCALL", "t", "0") == b":1\r\n"
    assert fc.cmd("HELLO", "3").startswith(b"%")
    assert fc.cmd("FCALL", "m", "0") == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert fc.cmd("FCALL", "d", "0") == b",3.5\r\n"
    assert fc.cmd("FCALL", "t", "0") == b"#t\r\n"
    assert fc.cmd("FCALL", "n", "0") == b"%0\r\n"
    assert fc.cmd("FUNCTION", "STATS") == (
        b"%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n"
        b"%2\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:4\r\n")
