"""Wire protocol: pipelining, fragmented input, inline commands and protocol
errors (exact bytes, connection closed, other clients unaffected)."""

import socket
import threading
import time

import pytest

from resp_util import encode_command


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


# ---------------------------------------------------------------- pipelining

def test_pipeline_1000_commands_in_one_write(conn):
    payload = []
    expected = []
    for i in range(1000):
        k = b"k%d" % (i % 37)
        if i % 3 == 0:
            payload.append(encode_command("SET", k, b"v%d" % i))
            expected.append(("set", k, b"v%d" % i))
        elif i % 3 == 1:
            payload.append(encode_command("INCR", "counter"))
            expected.append(("incr",))
        else:
            payload.append(encode_command("GET", k))
            expected.append(("get", k))
    conn.send(b"".join(payload))
    replies = conn.read_replies(1000, timeout=20)
    model = {}
    counter = 0
    for exp, rep in zip(expected, replies):
        if exp[0] == "set":
            model[exp[1]] = exp[2]
            assert rep == b"+OK\r\n"
        elif exp[0] == "incr":
            counter += 1
            assert rep == b":%d\r\n" % counter
        else:
            v = model.get(exp[1])
            assert rep == (bulk(v) if v is not None else b"$-1\r\n")
    assert conn.read_available(0.1) == b""


def test_pipeline_of_pings(conn):
    conn.send(encode_command("PING") * 1000)
    assert b"".join(conn.read_replies(1000, timeout=20)) == b"+PONG\r\n" * 1000


def test_pipeline_inline(conn):
    conn.send(b"PING\r\n" * 500 + b"INCR n\r\n" * 500)
    replies = conn.read_replies(1000, timeout=20)
    assert replies[:500] == [b"+PONG\r\n"] * 500
    assert replies[500:] == [b":%d\r\n" % i for i in range(1, 501)]


def test_pipeline_via_client(r):
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.set("k%d" % i, i)
        p.get("k%d" % i)
    out = p.execute()
    assert out[0::2] == [True] * 200
    assert out[1::2] == [str(i).encode() for i in range(200)]


def test_big_pipeline_does_not_stall(conn):
    # ~6 MB of requests written while replies are not read: the server must
    # keep going (and the test must not deadlock), replies arrive in order.
    val = b"x" * 1000
    n = 6000
    data = b"".join(encode_command("SET", b"k%d" % i, val) for i in range(n))
    sender = threading.Thread(target=conn.send, args=(data,))
    sender.start()
    replies = conn.read_replies(n, timeout=60)
    sender.join()
    assert replies == [b"+OK\r\n"] * n
    assert conn.cmd("DBSIZE") == b":%d\r\n" % n


def test_large_reply(conn):
    val = b"y" * (4 << 20)
    assert conn.cmd("SET", "big", val) == b"+OK\r\n"
    assert conn.cmd("GET", "big") == bulk(val)


# ---------------------------------------------------------------- fragmentation

def test_command_split_byte_by_byte(conn):
    data = encode_command("SET", "key", "hello world") + encode_command("GET", "key")
    for i in range(len(data)):
        conn.send(data[i:i + 1])
        time.sleep(0.001)
    assert conn.read_replies(2) == [b"+OK\r\n", b"$11\r\nhello world\r\n"]


def test_inline_split_byte_by_byte(conn):
    for ch in b"SET a b\r\nGET a\r\n":
        conn.send(bytes([ch]))
        time.sleep(0.001)
    assert conn.read_replies(2) == [b"+OK\r\n", b"$1\r\nb\r\n"]


def test_bulk_split_across_writes(conn):
    conn.send(b"*2\r\n$4\r\nECHO\r\n$10\r\nhello")
    time.sleep(0.05)
    assert conn.read_available(0.05) == b""
    conn.send(b"world\r")
    time.sleep(0.05)
    conn.send(b"\n*1\r\n$4\r\nPI")
    time.sleep(0.05)
    conn.send(b"NG\r\n")
    assert conn.read_replies(2) == [b"$10\r\nhelloworld\r\n", b"+PONG\r\n"]


def test_large_argument_streamed_in_chunks(conn):
    val = bytes(range(256)) * 4096  # 1 MiB
    data = encode_command("SET", "big", val)
    for i in range(0, len(data), 7777):
        conn.send(data[i:i + 7777])
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.cmd("GET", "big") == bulk(val)


# ---------------------------------------------------------------- RESP edge cases

def test_empty_bulk_argument(conn):
    assert conn.cmd("ECHO", "") == b"$0\r\n\r\n"
    conn.send(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n")
    assert conn.read_reply() == b"$0\r\n\r\n"


def test_zero_and_negative_multibulk_are_ignored(conn):
    conn.send(b"*0\r\n*-1\r\n*-2\r\n*1\r\n$4\r\nPING\r\n")
    assert conn.read_reply() == b"+PONG\r\n"
    assert conn.read_available(0.1) == b""


def test_blank_lines_between_multibulk_commands(conn):
    conn.send(b"\r\n\r\n*1\r\n$4\r\nPING\r\n\r\n*1\r\n$4\r\nPING\r\n")
    assert conn.read_replies(2) == [b"+PONG\r\n", b"+PONG\r\n"]
    assert conn.read_available(0.1) == b""


def test_crlf_inside_bulk_is_data(conn):
    conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\n\r\n*1\r\n\r\n")
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"$6\r\n\r\n*1\r\n\r\n"


def test_disconnect_mid_command_does_not_hurt_server(server):
    c = server.raw()
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\npartial")
    c.close()
    c2 = server.raw()
    c2.send(b"*2\r\n$3\r\nGET\r\n")
    c2.sock.shutdown(socket.SHUT_RDWR)
    c2.close()
    other = server.raw()
    assert other.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("EXISTS", "k") == b":0\r\n"


def test_many_connections(server):
    conns = [server.raw() for _ in range(100)]
    for i, c in enumerate(conns):
        c.send(encode_command("SET", "c%d" % i, str(i)))
    for c in conns:
        assert c.read_reply() == b"+OK\r\n"
    for i, c in enumerate(conns):
        assert c.cmd("GET", "c%d" % i) == bulk(str(i).encode())
    for c in conns:
        c.close()
    assert server.raw().cmd("DBSIZE") == b":100\r\n"


# ---------------------------------------------------------------- inline commands

def test_inline_ping(conn):
    conn.send(b"PING\r\n")
    assert conn.read_reply() == b"+PONG\r\n"


def test_inline_lf_only(conn):
    conn.send(b"SET a b\n")
    assert conn.read_reply() == b"+OK\r\n"
    conn.send(b"GET a\n")
    assert conn.read_reply() == b"$1\r\nb\r\n"


def test_inline_several_commands_in_one_write(conn):
    conn.send(b"SET a 1\r\nINCR a\nGET a\r\n")
    assert conn.read_replies(3) == [b"+OK\r\n", b":2\r\n", b"$1\r\n2\r\n"]


def test_inline_extra_whitespace(conn):
    conn.send(b"SET  k   v  \r\n   GET\tk\r\n")
    assert conn.read_replies(2) == [b"+OK\r\n", b"$1\r\nv\r\n"]


def test_inline_empty_lines_ignored(conn):
    conn.send(b"\r\n\n\r\n   \r\n\t\r\nPING\r\n\n")
    assert conn.read_reply() == b"+PONG\r\n"
    assert conn.read_available(0.1) == b""


def test_inline_double_quotes_and_escapes(conn):
    conn.send(b'SET "key with space" "a\\x41\\t\\n\\\\\\"z"\r\n')
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.cmd("GET", "key with space") == bulk(b'aA\t\n\\"z')


def test_inline_single_quotes(conn):
    conn.send(b"ECHO 'it\\'s a \"test\"'\r\n")
    assert conn.read_reply() == bulk(b"it's a \"test\"")
    conn.send(b"ECHO 'no \\n escape'\r\n")
    assert conn.read_reply() == bulk(b"no \\n escape")


def test_inline_empty_quoted_argument(conn):
    conn.send(b'ECHO ""\r\n')
    assert conn.read_reply() == b"$0\r\n\r\n"
    conn.send(b"ECHO ''\r\n")
    assert conn.read_reply() == b"$0\r\n\r\n"


def test_inline_binary_via_hex_escape(conn):
    conn.send(b'SET bin "\\x00\\xff\\r\\n"\r\n')
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.cmd("GET", "bin") == b"$4\r\n\x00\xff\r\n\r\n"


def test_inline_then_multibulk_mixed(conn):
    conn.send(b"SET a 1\r\n" + encode_command("INCR", "a") + b"GET a\n")
    assert conn.read_replies(3) == [b"+OK\r\n", b":2\r\n", b"$1\r\n2\r\n"]


def test_inline_unknown_command(conn):
    conn.send(b"FOO bar baz\r\n")
    assert conn.read_reply() == b"-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n"
    assert conn.cmd("PING") == b"+PONG\r\n"


def test_inline_wrong_arity(conn):
    conn.send(b"GET\r\n")
    assert conn.read_reply() == b"-ERR wrong number of arguments for 'get' command\r\n"


def test_inline_just_under_limit_is_fine(conn):
    val = b"v" * (60 * 1024)
    conn.send(b"SET k " + val + b"\r\n")
    assert conn.read_reply() == b"+OK\r\n"
    assert conn.cmd("GET", "k") == bulk(val)


# ---------------------------------------------------------------- protocol errors

PROTOCOL_ERRORS = [
    ("multibulk_not_a_number", b"*abc\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_empty_count", b"*\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_plus_sign", b"*+1\r\n$4\r\nPING\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_leading_zero", b"*01\r\n$4\r\nPING\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_minus_zero", b"*-0\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_trailing_space", b"*1 \r\n$4\r\nPING\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_lf_only", b"*1\nPING\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk_over_int_max", b"*3000000000\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("bulk_negative", b"*1\r\n$-5\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_null", b"*2\r\n$4\r\nECHO\r\n$-1\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_not_a_number", b"*1\r\n$abc\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_empty_count", b"*1\r\n$\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_leading_zero", b"*1\r\n$04\r\nPING\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_plus_sign", b"*1\r\n$+4\r\nPING\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_over_512mb", b"*1\r\n$536870913\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk_huge", b"*1\r\n$5000000000\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("expected_dollar", b"*1\r\nfoo\r\n",
     b"-ERR Protocol error: expected '$', got 'f'\r\n"),
    ("expected_dollar_colon", b"*2\r\n$4\r\nECHO\r\n:4\r\n",
     b"-ERR Protocol error: expected '$', got ':'\r\n"),
    ("unbalanced_double_quote", b'SET a "b\r\n',
     b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("unbalanced_single_quote", b"SET a 'b\r\n",
     b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("closing_quote_not_followed_by_space", b'ECHO "a"b\r\n',
     b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("too_big_inline", b"x" * (70 * 1024),
     b"-ERR Protocol error: too big inline request\r\n"),
    ("too_big_mbulk_count", b"*" + b"1" * (70 * 1024),
     b"-ERR Protocol error: too big mbulk count string\r\n"),
    ("too_big_bulk_count", b"*1\r\n$" + b"1" * (70 * 1024),
     b"-ERR Protocol error: too big bulk count string\r\n"),
]


@pytest.mark.parametrize("data,reply", [(d, r) for _, d, r in PROTOCOL_ERRORS],
                         ids=[n for n, _, _ in PROTOCOL_ERRORS])
def test_protocol_error_replies_and_closes(server, data, reply):
    bystander = server.raw()
    assert bystander.cmd("SET", "bystander", "alive") == b"+OK\r\n"
    c = server.raw()
    c.send_may_close(data)
    got = c.read_until_closed(timeout=5)
    assert got == reply
    # the other client is unaffected and the server still accepts new ones
    assert bystander.cmd("GET", "bystander") == b"$5\r\nalive\r\n"
    assert server.raw().cmd("PING") == b"+PONG\r\n"


def test_protocol_error_after_valid_commands(conn):
    conn.send(b"PING\r\n" + encode_command("SET", "k", "v") + b"*abc\r\nPING\r\n")
    assert conn.read_until_closed() == (
        b"+PONG\r\n+OK\r\n-ERR Protocol error: invalid multibulk length\r\n")


def test_commands_before_protocol_error_are_applied(server, conn):
    conn.send(encode_command("SET", "k", "v") + b"*1\r\n$-5\r\n")
    assert conn.read_until_closed() == b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n"
    assert server.raw().cmd("GET", "k") == b"$1\r\nv\r\n"


def test_partial_inline_over_limit_in_pieces(conn):
    # the limit applies to the accumulated line, not one read
    for _ in range(10):
        conn.send(b"a" * 8192)
        time.sleep(0.01)
    assert conn.read_until_closed() == b"-ERR Protocol error: too big inline request\r\n"


def test_proto_max_bulk_len_applies_to_open_connections(server_factory):
    srv = server_factory()
    admin, other = srv.raw(), srv.raw()
    assert other.cmd("PING") == b"+PONG\r\n"   # connected before the change
    assert admin.cmd("CONFIG", "SET", "proto-max-bulk-len", "1048576") == b"+OK\r\n"
    other.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
    assert other.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"
    assert admin.cmd("PING") == b"+PONG\r\n"
