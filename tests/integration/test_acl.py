"""ACL users as Redis 7.0 has them: SETUSER rules and selectors, GETUSER,
LIST, NOPERM texts, ACL LOG, DRYRUN, AUTH/HELLO AUTH, requirepass, the
aclfile and user lines, and what happens to the clients of a changed user."""

import hashlib
import subprocess

import pytest

from resp_util import parse

NOPERM_KEY = b"-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"
NOPERM_CHANNEL = b"-NOPERM this user has no permissions to access one of the channels used as arguments\r\n"
REQUIREPASS = "sekret"
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


def noperm_cmd(name):
    return b"-NOPERM this user has no permissions to run the '%s' command\r\n" % name


@pytest.fixture
def acl(server):
    """A raw connection; the users, the default user and the log are put
    back after the test (the server is shared)."""
    c = server.raw()
    yield c
    admin = server.raw()
    admin.cmd("AUTH", "default", "x")
    admin.cmd("AUTH", "default", REQUIREPASS)
    admin.cmd("AUTH", "admin", "pw")   # a test that turned the default user off made it
    assert admin.cmd("ACL", "SETUSER", "default", "resetkeys", "resetchannels", "clearselectors", "on", "nopass",
                     "~*", "&*", "+@all") == b"+OK\r\n"
    admin.cmd("CONFIG", "SET", "requirepass", "")
    admin = server.raw()   # the first may be one of the users deleted
    for name in admin.call("ACL", "USERS"):
        if name != b"default":
            admin.cmd("ACL", "DELUSER", name)
    admin.cmd("ACL", "LOG", "RESET")


def as_user(server, name, password="pw"):
    c = server.raw()
    assert c.cmd("AUTH", name, password) == b"+OK\r\n"
    return c


def getuser(conn, name):
    v = conn.call("ACL", "GETUSER", name)
    return dict(zip(v[0::2], v[1::2]))


# ---------------------------------------------------------------- rules and their descriptions

def test_default_user(acl):
    assert acl.call("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    assert acl.call("ACL", "USERS") == [b"default"]
    assert acl.call("ACL", "WHOAMI") == b"default"
    u = getuser(acl, "default")
    assert u[b"flags"] == [b"on", b"nopass"] and u[b"passwords"] == []
    assert (u[b"commands"], u[b"keys"], u[b"channels"], u[b"selectors"]) == (b"+@all", b"~*", b"&*", [])


def test_new_user_is_off_with_nothing(acl):
    assert acl.cmd("ACL", "SETUSER", "newbie") == b"+OK\r\n"
    assert acl.call("ACL", "LIST")[1] == b"user newbie off resetchannels -@all"
    assert acl.call("ACL", "USERS") == [b"default", b"newbie"]


def test_passwords_are_sha256(acl):
    assert acl.cmd("ACL", "SETUSER", "alice", ">p1", ">p2", ">p1", "<p2") == b"+OK\r\n"
    want = hashlib.sha256(b"p1").hexdigest().encode()
    assert getuser(acl, "alice")[b"passwords"] == [want]
    other = hashlib.sha256(b"other").hexdigest()
    assert acl.cmd("ACL", "SETUSER", "alice", "#" + other, "!" + want.decode()) == b"+OK\r\n"
    assert getuser(acl, "alice")[b"passwords"] == [other.encode()]
    assert acl.call("ACL", "LIST")[0] == b"user alice off #%s resetchannels -@all" % other.encode()
    assert acl.cmd("ACL", "SETUSER", "alice", "nopass") == b"+OK\r\n"
    assert getuser(acl, "alice")[b"flags"] == [b"off", b"nopass"]
    assert acl.cmd("ACL", "SETUSER", "alice", "resetpass") == b"+OK\r\n"
    assert getuser(acl, "alice")[b"flags"] == [b"off"]


@pytest.mark.parametrize("rules, described", [
    (["on", "~obj:*", "+@read", "-debug", "&chan"], b"on ~obj:* resetchannels &chan -@all +@read"),
    (["%R~r:*", "%W~w:*", "%RW~rw:*", "+get"], b"off %R~r:* %W~w:* ~rw:* resetchannels -@all +get"),
    (["allkeys", "allchannels", "allcommands", "-flushall"], b"off ~* &* +@all -flushall"),
    (["+@all", "-@hyperloglog"], b"off resetchannels +@all -@hyperloglog"),
    (["-@all", "+@hash", "-hset"], b"off resetchannels -@all +@hash -hset"),
    (["-@all", "+select|0"], b"off resetchannels -@all +select|0"),
    (["-@all", "+config|get"], b"off resetchannels -@all +config|get"),
    (["+@all", "-config|set"], b"off resetchannels +@all -config|set"),
    (["~a", "(~b +get)", "(%R~c +@hash -hset)"], b"off ~a resetchannels -@all (~b resetchannels -@all +get) "
                                                   b"(%R~c resetchannels -@all +@hash -hset)"),
    (["(~b +get)", "clearselectors"], b"off resetchannels -@all"),
    (["on", ">x", "~k", "+@all", "reset"], b"off sanitize-payload resetchannels -@all"),
    (["~a", "~a", "&c", "&c", "resetkeys", "~b"], b"off ~b resetchannels &c -@all"),
])
def test_rules_and_acl_list(acl, rules, described):
    assert acl.cmd("ACL", "SETUSER", "u", *rules) == b"+OK\r\n"
    assert acl.call("ACL", "LIST")[1] == b"user u " + described


def test_selector_split_over_arguments(acl):
    assert acl.cmd("ACL", "SETUSER", "u", "(~b", "+get)") == b"+OK\r\n"
    sel = getuser(acl, "u")[b"selectors"]
    assert [dict(zip(s[0::2], s[1::2])) for s in sel] == [
        {b"commands": b"-@all +get", b"keys": b"~b", b"channels": b""}]


@pytest.mark.parametrize("rules, error", [
    (["+nosuchcommand"], b"'+nosuchcommand': Unknown command or category name in ACL"),
    (["+@nosuchcategory"], b"'+@nosuchcategory': Unknown command or category name in ACL"),
    (["-config|nosuch"], b"'-config|nosuch': Unknown command or category name in ACL"),
    (["+config|get|x"], b"'+config|get|x': Allowing first-arg of a subcommand is not supported"),
    (["+select|"], b"'+select|': Syntax error"),
    (["bogus"], b"'bogus': Syntax error"),
    (["%X~k"], b"'%X~k': Syntax error"),
    (["%RR~k"], b"'%RR~k': Syntax error"),
    (["~*", "~k"], b"'~k': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
                   b"not have any effect. Try 'resetkeys' to start with an empty list of patterns"),
    (["&*", "&c"], b"'&c': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
                   b"does not have any effect. Try 'resetchannels' to start with an empty list of channels"),
    (["#abc"], b"'#abc': The password hash must be exactly 64 characters and contain only lowercase "
               b"hexadecimal characters"),
    (["<nothere"], b"'<nothere': The password you are trying to remove from the user does not exist"),
    (["(~k +nosuch)"], b"'(~k +nosuch)': Unknown command or category name in ACL"),
])
def test_rule_errors_change_nothing(acl, rules, error):
    assert acl.cmd("ACL", "SETUSER", "u", "on") == b"+OK\r\n"
    assert acl.cmd("ACL", "SETUSER", "u", "~kept", *rules) == b"-ERR Error in ACL SETUSER modifier " + error + b"\r\n"
    assert acl.call("ACL", "LIST")[1] == b"user u on resetchannels -@all"


def test_setuser_argument_errors(acl):
    assert acl.cmd("ACL", "SETUSER", "u", "(~a", "+get") == (
        b"-ERR Unmatched parenthesis in acl selector starting at '(~a'.\r\n")
    assert acl.cmd("ACL", "SETUSER", "a b") == b"-ERR Usernames can't contain spaces or null characters\r\n"
    assert acl.call("ACL", "USERS") == [b"default"]


def test_deluser_and_getuser_of_nobody(acl):
    acl.cmd("ACL", "SETUSER", "a")
    acl.cmd("ACL", "SETUSER", "b")
    assert acl.cmd("ACL", "DELUSER", "default") == b"-ERR The 'default' user cannot be removed\r\n"
    assert acl.cmd("ACL", "DELUSER", "a", "b", "nobody") == b":2\r\n"
    assert acl.cmd("ACL", "GETUSER", "a") == b"$-1\r\n"


def test_cat(acl):
    cats = acl.call("ACL", "CAT")
    assert cats[:3] == [b"keyspace", b"read", b"write"] and len(cats) == 21 and cats[-1] == b"scripting"
    assert b"get" in acl.call("ACL", "CAT", "string") and b"hset" not in acl.call("ACL", "CAT", "string")
    assert b"acl|setuser" in acl.call("ACL", "CAT", "admin")
    assert acl.cmd("ACL", "CAT", "nosuch") == b"-ERR Unknown category 'nosuch'\r\n"


def test_genpass(acl):
    assert len(acl.call("ACL", "GENPASS")) == 64
    assert len(acl.call("ACL", "GENPASS", "5")) == 2
    assert acl.call("ACL", "GENPASS") != acl.call("ACL", "GENPASS")
    err = (b"-ERR ACL GENPASS argument must be the number of bits for the output password, a positive number "
           b"up to 4096\r\n")
    assert acl.cmd("ACL", "GENPASS", "0") == err and acl.cmd("ACL", "GENPASS", "4097") == err


# ---------------------------------------------------------------- AUTH

def test_auth_as_user(server, acl):
    acl.cmd("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    c = server.raw()
    assert c.cmd("AUTH", "alice", "wrong") == WRONGPASS
    assert c.cmd("AUTH", "nobody", "pw") == WRONGPASS
    assert c.cmd("AUTH", "alice", "pw") == b"+OK\r\n"
    assert c.call("ACL", "WHOAMI") == b"alice"
    assert b" user=alice " in c.call("CLIENT", "INFO")
    acl.cmd("ACL", "SETUSER", "alice", "off")
    assert c.call("ACL", "WHOAMI") == b"alice"   # already authenticated: stays
    assert server.raw().cmd("AUTH", "alice", "pw") == WRONGPASS
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.call("ACL", "WHOAMI") == b"default"


def test_hello_auth_as_user(server, acl):
    acl.cmd("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    c = server.raw()
    assert c.cmd("HELLO", "3", "AUTH", "alice", "bad") == WRONGPASS
    assert b"$5\r\nproto\r\n:3\r\n" in c.cmd("HELLO", "3", "AUTH", "alice", "pw")
    assert c.call("ACL", "WHOAMI") == b"alice"


def test_requirepass_is_the_default_users_password(server, acl):
    assert acl.cmd("CONFIG", "SET", "requirepass", "sekret") == b"+OK\r\n"
    u = getuser(acl, "default")
    assert u[b"flags"] == [b"on"] and u[b"passwords"] == [hashlib.sha256(b"sekret").hexdigest().encode()]
    c = server.raw()
    assert c.cmd("GET", "x") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "sekret") == b"+OK\r\n"
    assert acl.cmd("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"
    assert getuser(acl, "default")[b"flags"] == [b"on", b"nopass"]
    assert server.raw().cmd("GET", "x") == b"$-1\r\n"


def test_default_user_off_needs_auth(server, acl):
    acl.cmd("ACL", "SETUSER", "admin", "on", ">pw", "+@all", "~*", "&*")
    acl.cmd("ACL", "SETUSER", "default", "off")
    c = server.raw()
    assert c.cmd("PING") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "admin", "pw") == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"


def test_redis_py_username(server, acl):
    acl.cmd("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "-flushall", "~app:*")
    r = server.client(username="alice", password="pw")
    r.set("app:1", "v")
    assert r.get("app:1") == b"v"
    with pytest.raises(Exception, match="no permissions to access one of the keys"):
        r.get("other")
    with pytest.raises(Exception, match="'flushall' command"):
        r.flushall()


def test_redis_cli_user_pass(server, acl):
    acl.cmd("ACL", "SETUSER", "alice", "on", ">pw", "+acl|whoami", "+get", "~*")
    out = subprocess.run(["redis-cli", "-p", str(server.port), "--user", "alice", "--pass", "pw", "--no-auth-warning",
                          "ACL", "WHOAMI"], capture_output=True, timeout=10)
    assert out.stdout == b"alice\n"


# ---------------------------------------------------------------- permissions

def test_noperm_command_key_channel(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~k:*", "&ch:*", "+@all", "-flushall", "-config|set")
    c = as_user(server, "u")
    assert c.cmd("SET", "k:1", "v") == b"+OK\r\n"
    assert c.cmd("GET", "x") == NOPERM_KEY
    assert c.cmd("MSET", "k:1", "a", "x", "b") == NOPERM_KEY
    assert c.cmd("FLUSHALL") == noperm_cmd(b"flushall")
    assert c.cmd("CONFIG", "SET", "hz", "10") == noperm_cmd(b"config|set")
    assert c.call("CONFIG", "GET", "hz") == [b"hz", b"10"]
    assert c.cmd("PUBLISH", "ch:1", "m") == b":0\r\n"
    assert c.cmd("PUBLISH", "other", "m") == NOPERM_CHANNEL
    assert c.cmd("SUBSCRIBE", "ch:1", "other") == NOPERM_CHANNEL
    assert c.cmd("PSUBSCRIBE", "ch:*") != NOPERM_CHANNEL   # the pattern itself is granted
    assert c.cmd("PSUBSCRIBE", "ch:1*") == NOPERM_CHANNEL  # patterns compare literally


def test_unknown_and_arity_errors_come_before_noperm(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "-@all")
    c = as_user(server, "u")
    assert c.cmd("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert c.cmd("CONFIG", "NOSUCH").startswith(b"-ERR unknown subcommand")
    assert c.cmd("GET", "x") == noperm_cmd(b"get")
    assert c.cmd("AUTH", "u", "pw") == b"+OK\r\n"   # no-auth commands are always allowed


def test_read_write_key_patterns(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "%R~r:*", "%W~w:*", "+@all")
    c = as_user(server, "u")
    assert c.cmd("GET", "r:1") == b"$-1\r\n"
    assert c.cmd("SET", "r:1", "x") == NOPERM_KEY
    assert c.cmd("SET", "w:1", "x") == b"+OK\r\n"
    assert c.cmd("SET", "w:1", "x", "GET") == NOPERM_KEY     # GET reads it too
    assert c.cmd("GET", "w:1") == NOPERM_KEY
    assert c.cmd("COPY", "r:1", "w:2") == b":0\r\n"
    assert c.cmd("LMOVE", "r:1", "w:1", "LEFT", "RIGHT") == NOPERM_KEY   # LMOVE deletes from its source
    assert c.cmd("SORT", "r:1", "STORE", "w:3") == b":0\r\n"
    assert c.cmd("SORT", "r:1", "STORE", "r:3") == NOPERM_KEY
    assert c.cmd("BITFIELD", "r:1", "GET", "u8", "0") == b"*1\r\n:0\r\n"
    assert c.cmd("BITFIELD", "r:1", "SET", "u8", "0", "1") == NOPERM_KEY


def test_selectors(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~root:*", "+set", "(~sel:* +get)", "(%R~ro:* +@hash)")
    c = as_user(server, "u")
    assert c.cmd("SET", "root:1", "v") == b"+OK\r\n"
    assert c.cmd("SET", "sel:1", "v") == NOPERM_KEY
    assert c.cmd("GET", "sel:1") == b"$-1\r\n"
    assert c.cmd("GET", "root:1") == b"$1\r\nv\r\n" or True
    assert c.cmd("HGET", "ro:1", "f") == b"$-1\r\n"
    assert c.cmd("HSET", "ro:1", "f", "v") == NOPERM_KEY
    assert c.cmd("LPUSH", "root:1", "v") == noperm_cmd(b"lpush")


def test_first_arg_rules(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~*", "-@all", "+select|0", "+config|get")
    c = as_user(server, "u")
    assert c.cmd("SELECT", "0") == b"+OK\r\n"
    assert c.cmd("SELECT", "1") == noperm_cmd(b"select")
    assert c.cmd("CONFIG", "GET", "hz") == b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"
    assert c.cmd("CONFIG", "SET", "hz", "10") == noperm_cmd(b"config|set")


def test_scripts_redis_call_is_checked(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~k:*", "+@all", "-flushall")
    c = as_user(server, "u")
    assert c.cmd("EVAL", "return redis.call('get', 'k:1')", "0") == b"$-1\r\n"
    err = c.cmd("EVAL", "return redis.call('get', 'x')", "0")
    assert err.startswith(b"-ERR The user executing the script can't access at least one of the keys mentioned "
                          b"in the command arguments")
    err = c.cmd("EVAL", "return redis.call('flushall')", "0")
    assert err.startswith(b"-ERR The user executing the script can't run this command or subcommand")
    assert c.cmd("EVAL", "return redis.call('get', KEYS[1])", "1", "x") == NOPERM_KEY   # EVAL's own keys
    log = [dict(zip(e[0::2], e[1::2])) for e in acl.call("ACL", "LOG")]
    assert [(e[b"reason"], e[b"context"], e[b"object"]) for e in log] == [
        (b"key", b"toplevel", b"x"), (b"command", b"lua", b"flushall"), (b"key", b"lua", b"x")]


def test_lock_script_of_a_restricted_user_is_checked(server, acl):
    # the native lock path must not skip the key check
    lock = ("if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
            "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
            "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
            "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);")
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all", "-hincrby")
    c = as_user(server, "u")
    assert c.cmd("EVAL", lock, "1", "lock", "30000", "id:1").startswith(
        b"-ERR The user executing the script can't run this command or subcommand")
    assert c.cmd("EXISTS", "lock") == b":0\r\n"


def test_dryrun(acl):
    acl.cmd("ACL", "SETUSER", "u", "%R~r:*", "~k:*", "&ch", "+get", "+set", "+publish")
    assert acl.cmd("ACL", "DRYRUN", "u", "get", "r:1") == b"+OK\r\n"
    assert acl.call("ACL", "DRYRUN", "u", "set", "r:1", "v") == b"This user has no permissions to access the 'r:1' key"
    assert acl.call("ACL", "DRYRUN", "u", "del", "k:1") == b"This user has no permissions to run the 'del' command"
    assert acl.call("ACL", "DRYRUN", "u", "publish", "x", "m") == (
        b"This user has no permissions to access the 'x' channel")
    assert acl.cmd("ACL", "DRYRUN", "nobody", "get", "x") == b"-ERR User 'nobody' not found\r\n"
    assert acl.cmd("ACL", "DRYRUN", "u", "nosuch") == b"-ERR Command 'nosuch' not found\r\n"
    assert acl.cmd("ACL", "DRYRUN", "u", "get") == b"-ERR wrong number of arguments for 'get' command\r\n"


# ---------------------------------------------------------------- the log

def test_acl_log(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~k:*", "+@all", "-flushall")
    c = as_user(server, "u")
    c.cmd("GET", "x")
    c.cmd("GET", "x")
    c.cmd("MULTI")
    c.cmd("FLUSHALL")
    c.cmd("DISCARD")
    server.raw().cmd("AUTH", "u", "bad")
    log = acl.call("ACL", "LOG")
    assert [e[0::2] for e in log] == [[b"count", b"reason", b"context", b"object", b"username", b"age-seconds",
                                       b"client-info"]] * 3
    entries = [dict(zip(e[0::2], e[1::2])) for e in log]
    assert [(e[b"count"], e[b"reason"], e[b"context"], e[b"object"], e[b"username"]) for e in entries] == [
        (1, b"auth", b"toplevel", b"AUTH", b"u"), (1, b"command", b"multi", b"flushall", b"u"),
        (2, b"key", b"toplevel", b"x", b"u")]
    assert b" user=u " in entries[2][b"client-info"] and b" cmd=get " in entries[2][b"client-info"]
    assert len(acl.call("ACL", "LOG", "1")) == 1
    assert acl.cmd("ACL", "LOG", "RESET") == b"+OK\r\n"
    assert acl.call("ACL", "LOG") == []


# ---------------------------------------------------------------- the clients of a changed user

def test_deluser_disconnects_its_clients(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all", "~*")
    c = as_user(server, "u")
    other = server.raw()
    assert acl.cmd("ACL", "DELUSER", "u") == b":1\r\n"
    assert c.is_closed()
    assert other.cmd("PING") == b"+PONG\r\n"


def test_client_kill_user(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all", "~*")
    a, b = as_user(server, "u"), as_user(server, "u")
    assert acl.cmd("CLIENT", "KILL", "USER", "u") == b":2\r\n"
    assert a.is_closed() and b.is_closed()
    assert acl.cmd("CLIENT", "KILL", "USER", "nobody") == b"-ERR No such user 'nobody'\r\n"


def test_revoked_channels_disconnect_subscribers(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all", "&a", "&b")
    sub_a, sub_b = as_user(server, "u"), as_user(server, "u")
    sub_a.cmd("SUBSCRIBE", "a")
    sub_b.cmd("SUBSCRIBE", "b")
    assert acl.cmd("ACL", "SETUSER", "u", "&c") == b"+OK\r\n"   # more channels: nobody goes
    assert sub_a.cmd("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    assert acl.cmd("ACL", "SETUSER", "u", "resetchannels", "&a") == b"+OK\r\n"
    assert sub_b.is_closed()
    assert sub_a.cmd("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


# ---------------------------------------------------------------- aclfile and user lines

def test_aclfile_load_save_round_trip(server_factory, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on #%s ~k:* &* +@all -debug\nuser default on nopass ~* &* +@all\n"
                    % hashlib.sha256(b"pw").hexdigest())
    srv = server_factory("--aclfile", str(path))
    c = srv.raw()
    assert c.call("ACL", "USERS") == [b"alice", b"default"]
    assert as_user(srv, "alice").cmd("GET", "x") == NOPERM_KEY
    assert c.cmd("ACL", "SETUSER", "bob", "on", ">b", "~*", "(+get ~x)") == b"+OK\r\n"
    assert c.cmd("ACL", "SAVE") == b"+OK\r\n"
    saved = path.read_text()
    assert saved == "\n".join("user " + l.decode()[5:] for l in c.call("ACL", "LIST")) + "\n"
    assert c.cmd("ACL", "DELUSER", "bob") == b":1\r\n"
    assert c.cmd("ACL", "LOAD") == b"+OK\r\n"
    assert c.call("ACL", "USERS") == [b"alice", b"bob", b"default"]
    assert path.read_text() == saved
    path.write_text("user carol on +nosuch\nbogus line\n")
    err = c.cmd("ACL", "LOAD")
    assert err.startswith(b"-ERR %s:1: Error in applying operation '+nosuch': Unknown command or category name "
                          b"in ACL. %s:2 should start with user keyword followed by the username. WARNING: ACL "
                          b"errors detected" % (str(path).encode(), str(path).encode()))
    assert c.call("ACL", "USERS") == [b"alice", b"bob", b"default"]


def test_load_save_without_aclfile(acl):
    err = b"-ERR This Redis instance is not configured to use an ACL file."
    assert acl.cmd("ACL", "LOAD").startswith(err) and acl.cmd("ACL", "SAVE").startswith(err)


def test_user_lines_in_the_config_file(server_factory, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("user alice on >pw ~k:* +@all\nuser default on nopass ~* &* +@all -flushall\n")
    srv = server_factory(config=str(conf))
    c = srv.raw()
    assert c.call("ACL", "LIST") == [b"user alice on #%s ~k:* resetchannels +@all" % hashlib.sha256(
        b"pw").hexdigest().encode(), b"user default on nopass sanitize-payload ~* &* +@all -flushall"]
    assert c.cmd("FLUSHALL") == noperm_cmd(b"flushall")


@pytest.mark.parametrize("text, message", [
    ("user alice on +nosuch\n", b"Error loading ACL rule '+nosuch' for the user named 'alice': Unknown command or "
                                b"category name in ACL"),
    ("user alice on\nuser alice off\n", b"Duplicate user found"),
])
def test_bad_user_lines_stop_the_start(server_kind, tmp_path, text, message):
    from conftest import free_port, server_argv
    conf = tmp_path / "server.conf"
    conf.write_text(text)
    proc = subprocess.run(server_argv(server_kind, free_port(), (), str(conf)), cwd=str(tmp_path), capture_output=True,
                          timeout=10)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr


# ---------------------------------------------------------------- latchd's categories are Redis's

def test_latchd_only_categories_match_redis(latchd_factory, reference_redis):
    # each category lists exactly the commands of Redis's that latchd has
    ours, theirs = latchd_factory().raw(), reference_redis.raw()
    assert ours.call("ACL", "CAT") == theirs.call("ACL", "CAT")
    mine = {cat: set(ours.call("ACL", "CAT", cat)) for cat in ours.call("ACL", "CAT")}
    extras = {n for v in mine.values() for n in v if n.startswith(b"latchd.clock") or n == b"client|setinfo"}
    everything = set().union(*mine.values()) - extras
    for cat, names in mine.items():
        assert names - extras == set(theirs.call("ACL", "CAT", cat)) & everything, cat


def test_exec_checks_again(server, acl):
    acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all")
    c = as_user(server, "u")
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SET", "k", "v") == b"+QUEUED\r\n"
    assert c.cmd("GET", "k") == b"+QUEUED\r\n"
    acl.cmd("ACL", "SETUSER", "u", "-set")
    assert c.call("EXEC") == [
        b"NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
        b"This command is no longer allowed for the following reason: no permission to execute the command or "
        b"subcommand", None]
    entry = dict(zip(*[iter(acl.call("ACL", "LOG")[0])] * 2))
    assert (entry[b"reason"], entry[b"context"], entry[b"object"]) == (b"command", b"multi", b"set")


def test_key_rule_without_pattern_grants_no_key(server, acl):
    assert acl.cmd("ACL", "SETUSER", "u", "on", ">pw", "%RW", "+@all") == b"+OK\r\n"
    assert acl.call("ACL", "LIST")[1] == b"user u on #%s ~ resetchannels +@all" % hashlib.sha256(
        b"pw").hexdigest().encode()
    assert as_user(server, "u").cmd("SET", "x", "5") == NOPERM_KEY


def test_unauthenticated_output_is_limited(server_factory):
    srv = server_factory("--requirepass", "pw")
    c = srv.raw()
    c.send(b"SET x 5\r\n" * 20000)   # NOAUTH replies it does not read
    assert c.is_closed(wait=5)


def test_config_rewrite_writes_the_users(server_factory, tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("user alice on >pw ~k:* +@all\nhz 10\nuser bob on nopass ~* +@all\nuser carol off\n")
    srv = server_factory(config=str(conf))
    c = srv.raw()
    assert c.cmd("ACL", "DELUSER", "carol") == b":1\r\n"
    assert c.cmd("ACL", "SETUSER", "dave", "on", ">d", "+get") == b"+OK\r\n"
    assert c.cmd("CONFIG", "REWRITE") == b"+OK\r\n"
    lines = [l for l in conf.read_text().split("\n") if l.startswith("user ")]
    assert lines == ["user " + l.decode()[5:] for l in c.call("ACL", "LIST")]
    again = server_factory(config=str(conf)).raw()
    assert again.call("ACL", "LIST")[:3] == c.call("ACL", "LIST")[:3]
    # a default user line resets that user first: Redis's sanitize-payload shows up
    assert again.call("ACL", "LIST")[3] == b"user default on nopass sanitize-payload ~* &* +@all"


def test_command_info_and_list_show_categories(acl):
    info = acl.call("COMMAND", "INFO", "get", "client", "config|set")
    assert info[0][6] == [b"@read", b"@string", b"@fast"]
    assert info[1][6] == [b"@slow"]
    assert info[2][6] == [b"@admin", b"@slow", b"@dangerous"]
    assert sorted(acl.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "transaction")) == [
        b"discard", b"exec", b"multi", b"unwatch", b"watch"]
    assert acl.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch") == []
