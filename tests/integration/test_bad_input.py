"""The bad-input battery: malformed multibulk, huge lengths, bad bulk
terminators, odd inline quoting, binary garbage, negative and huge numbers,
NULs in names. Each case gets the same visible outcome from both servers:
the same replies byte for byte, and the same fate for the connection:
CLOSED after the replies, OPEN (a probe sent afterwards is answered next) or
WAITING (for the rest of a command: nothing comes back, nothing closes).
A bystander connection is unaffected throughout."""

import random

import pytest

from resp_util import encode_command

CLOSED, OPEN, WAITING = "closed", "open", "waiting"
PROBE = encode_command("ECHO", "probe:3f9c")
PROBE_REPLY = b"$10\r\nprobe:3f9c\r\n"


def E(*args):
    return encode_command(*args)


def rnd(seed, n):
    r = random.Random(seed)
    return bytes(r.getrandbits(8) for _ in range(n))


# (id, bytes sent, what becomes of the connection, replies before that)
CASES = [
    # malformed multibulk
    ("mb_star_where_dollar_expected", b"*2\r\n$3\r\nGET\r\n*1\r\n",
     CLOSED, b"-ERR Protocol error: expected '$', got '*'\r\n"),
    ("mb_count_cr_only", b"*1\r",
     WAITING, b''),
    ("mb_count_cr_then_not_lf", b"*1\rX$4\r\nPING\r\n",
     OPEN, b'+PONG\r\n'),
    ("mb_count_nul_hides_crlf", b"*1\x00\r\n$4\r\nPING\r\n",
     WAITING, b''),
    ("mb_count_with_space_inside", b"* 1\r\n$4\r\nPING\r\n",
     CLOSED, b'-ERR Protocol error: invalid multibulk length\r\n'),
    ("mb_count_hex", b"*0x1\r\n$4\r\nPING\r\n",
     CLOSED, b'-ERR Protocol error: invalid multibulk length\r\n'),
    ("mb_bulk_len_lf_only", b"*1\r\n$4\nPING\r\n",
     CLOSED, b'-ERR Protocol error: invalid bulk length\r\n'),
    ("mb_bulk_len_trailing_garbage", b"*1\r\n$4abc\r\nPING\r\n",
     CLOSED, b'-ERR Protocol error: invalid bulk length\r\n'),
    ("mb_bulk_len_nul", b"*1\r\n$4\x00\r\nPING\r\n",
     WAITING, b''),
    ("mb_fewer_args_then_new_command", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n",
     CLOSED, b"-ERR Protocol error: expected '$', got '*'\r\n"),
    ("mb_zero_then_inline", b"*0\r\nPING\r\n",
     OPEN, b'+PONG\r\n'),
    ("mb_negative_big", b"*-2147483649\r\n",
     OPEN, b''),
    ("mb_count_just_star_lf", b"*\n",
     WAITING, b''),
    # huge lengths
    ("huge_count_int_max_waits", b"*2147483647\r\n$4\r\nPING\r\n",
     WAITING, b''),
    ("huge_count_over_int_max", b"*2147483648\r\n",
     CLOSED, b'-ERR Protocol error: invalid multibulk length\r\n'),
    ("huge_count_llong_max", b"*9223372036854775807\r\n",
     CLOSED, b'-ERR Protocol error: invalid multibulk length\r\n'),
    ("huge_count_over_llong", b"*9223372036854775808\r\n",
     CLOSED, b'-ERR Protocol error: invalid multibulk length\r\n'),
    ("huge_bulk_512mb_waits", b"*1\r\n$536870912\r\n",
     WAITING, b''),
    ("huge_bulk_llong_max", b"*1\r\n$9223372036854775807\r\n",
     CLOSED, b'-ERR Protocol error: invalid bulk length\r\n'),
    ("huge_bulk_21_digits", b"*1\r\n$100000000000000000000\r\n",
     CLOSED, b'-ERR Protocol error: invalid bulk length\r\n'),
    # bad bulk terminators: Redis skips the two bytes after a payload unchecked
    ("term_xx_instead_of_crlf", b"*1\r\n$4\r\nPINGxx",
     OPEN, b'+PONG\r\n'),
    ("term_lf_only_shifts_stream", b"*1\r\n$4\r\nPING\n*1\r\n$4\r\nPING\r\n",
     OPEN, b"+PONG\r\n-ERR unknown command '1', with args beginning with: \r\n-ERR unknown command '$4', with args beginning with: \r\n+PONG\r\n"),
    ("term_missing_then_next_command", b"*2\r\n$4\r\nECHO\r\n$2\r\nhi*1\r\n$4\r\nPING\r\n",
     OPEN, b"$2\r\nhi\r\n-ERR unknown command '$4', with args beginning with: \r\n+PONG\r\n"),
    ("term_payload_longer_than_declared", b"*2\r\n$4\r\nECHO\r\n$2\r\nhello\r\n",
     OPEN, b"$2\r\nhe\r\n-ERR unknown command 'o', with args beginning with: \r\n"),
    ("term_payload_shorter_waits", b"*2\r\n$4\r\nECHO\r\n$10\r\nhi\r\n",
     WAITING, b''),
    # inline quoting
    ("quote_unclosed_double", b'ECHO "abc\r\n',
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_escaped_close_double", b'ECHO "abc\\"\r\n',
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_escaped_close_single", b"ECHO 'abc\\'\r\n",
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_lone_double", b'"\r\n',
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_empty_command_name", b'""\r\n',
     OPEN, b"-ERR unknown command '', with args beginning with: \r\n"),
    ("quote_glued_after_close", b"ECHO 'a'b\r\n",
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_glued_before_open", b'ECHO a"b c"\r\n',
     OPEN, b'$4\r\nab c\r\n'),
    ("quote_short_hex", b'ECHO "\\x4"\r\n',
     OPEN, b'$2\r\nx4\r\n'),
    ("quote_bad_hex", b'ECHO "\\xZZ"\r\n',
     OPEN, b'$3\r\nxZZ\r\n'),
    ("quote_trailing_backslash", b'ECHO "a\\\r\n',
     CLOSED, b'-ERR Protocol error: unbalanced quotes in request\r\n'),
    ("quote_tab_separated", b'ECHO\t"a b"\t\'c\'\r\n',
     OPEN, b"-ERR wrong number of arguments for 'echo' command\r\n"),
    ("quote_cr_inside_line", b'ECHO a\rb\r\n',
     OPEN, b"-ERR wrong number of arguments for 'echo' command\r\n"),
    # binary garbage
    ("bin_all_bytes", bytes(range(256)),
     WAITING, b''),
    ("bin_random_2k", rnd(1, 2048),
     WAITING, b''),
    ("bin_invalid_utf8_lines", b"\x80abc \xc3\x28 d\r\n\xe2\x82\r\n",
     OPEN, b"-ERR unknown command '\x80abc', with args beginning with: '\xc3(' 'd' \r\n-ERR unknown command '\xe2\x82', with args beginning with: \r\n"),
    ("bin_high_bytes_line", b"\xff\xfe\xfd\r\n",
     OPEN, b"-ERR unknown command '\xff\xfe\xfd', with args beginning with: \r\n"),
    ("bin_nul_line", b"\x00\x00\r\n",
     WAITING, b''),
    ("bin_nul_then_ping", b"\x00\r\nPING\r\n",
     WAITING, b''),
    ("bin_ff_over_inline_limit", b"\xff" * 70000,
     CLOSED, b'-ERR Protocol error: too big inline request\r\n'),
    ("bin_dollar_line", b"$4\r\nPING\r\n",
     OPEN, b"-ERR unknown command '$4', with args beginning with: \r\n+PONG\r\n"),
    ("bin_plus_line", b"+OK\r\n",
     OPEN, b"-ERR unknown command '+OK', with args beginning with: \r\n"),
    ("bin_colon_line", b":1\r\n",
     OPEN, b"-ERR unknown command ':1', with args beginning with: \r\n"),
    ("bin_resp3_map", b"%1\r\n+a\r\n+b\r\n",
     OPEN, b"-ERR unknown command '%1', with args beginning with: \r\n-ERR unknown command '+a', with args beginning with: \r\n-ERR unknown command '+b', with args beginning with: \r\n"),
    # negative and huge numbers in commands
    ("cnt_scan_count_zero", E(b"SCAN", b"0", b"COUNT", b"0"),
     OPEN, b'-ERR syntax error\r\n'),
    ("cnt_scan_count_negative", E(b"SCAN", b"0", b"COUNT", b"-1"),
     OPEN, b'-ERR syntax error\r\n'),
    ("cnt_scan_count_huge", E(b"SCAN", b"0", b"COUNT", b"99999999999999999999"),
     OPEN, b'-ERR value is not an integer or out of range\r\n'),
    ("cnt_scan_cursor_negative", E(b"SCAN", b"-1"),
     OPEN, b'*2\r\n$1\r\n0\r\n*0\r\n'),
    ("cnt_scan_cursor_huge", E(b"SCAN", b"18446744073709551616"),
     OPEN, b'-ERR invalid cursor\r\n'),
    ("cnt_scan_cursor_max", E(b"SCAN", b"18446744073709551615"),
     OPEN, b'*2\r\n$1\r\n0\r\n*0\r\n'),
    ("cnt_expire_negative", E(b"SET", b"k", b"v") + E(b"EXPIRE", b"k", b"-1") + E(b"EXISTS", b"k"),
     OPEN, b'+OK\r\n:1\r\n:0\r\n'),
    ("cnt_expire_huge", E(b"SET", b"k", b"v") + E(b"EXPIRE", b"k", b"9223372036854775807"),
     OPEN, b"+OK\r\n-ERR invalid expire time in 'expire' command\r\n"),
    ("cnt_pexpireat_min", E(b"SET", b"k", b"v") + E(b"PEXPIREAT", b"k", b"-9223372036854775808") + E(b"EXISTS", b"k"),
     OPEN, b'+OK\r\n:1\r\n:0\r\n'),
    ("cnt_setex_negative", E(b"SETEX", b"k", b"-5", b"v"),
     OPEN, b"-ERR invalid expire time in 'setex' command\r\n"),
    ("cnt_setex_zero", E(b"SETEX", b"k", b"0", b"v"),
     OPEN, b"-ERR invalid expire time in 'setex' command\r\n"),
    ("cnt_psetex_huge", E(b"PSETEX", b"k", b"9223372036854775807", b"v"),
     OPEN, b"-ERR invalid expire time in 'psetex' command\r\n"),
    ("cnt_set_ex_zero", E(b"SET", b"k", b"v", b"EX", b"0"),
     OPEN, b"-ERR invalid expire time in 'set' command\r\n"),
    ("cnt_set_px_huge", E(b"SET", b"k", b"v", b"PX", b"9223372036854775807"),
     OPEN, b"-ERR invalid expire time in 'set' command\r\n"),
    ("cnt_set_exat_negative", E(b"SET", b"k", b"v", b"EXAT", b"-1"),
     OPEN, b"-ERR invalid expire time in 'set' command\r\n"),
    ("cnt_incrby_overflow", E(b"SET", b"n", b"9223372036854775807") + E(b"INCRBY", b"n", b"1"),
     OPEN, b'+OK\r\n-ERR increment or decrement would overflow\r\n'),
    ("cnt_decrby_min", E(b"DECRBY", b"n", b"-9223372036854775808"),
     OPEN, b'-ERR decrement would overflow\r\n'),
    ("cnt_incrby_not_number", E(b"INCRBY", b"n", b"9223372036854775808"),
     OPEN, b'-ERR value is not an integer or out of range\r\n'),
    ("cnt_hincrby_overflow", E(b"HINCRBY", b"h", b"f", b"-9223372036854775808") + E(b"HINCRBY", b"h", b"f", b"-1"),
     OPEN, b':-9223372036854775808\r\n-ERR increment or decrement would overflow\r\n'),
    ("cnt_select_negative", E(b"SELECT", b"-1"),
     OPEN, b'-ERR DB index is out of range\r\n'),
    ("cnt_select_huge", E(b"SELECT", b"99999999999"),
     OPEN, b'-ERR value is out of range, value must between -2147483648 and 2147483647\r\n'),
    ("cnt_wait_negative", E(b"WAIT", b"-1", b"-1"),
     OPEN, b'-ERR timeout is negative\r\n'),
    ("cnt_client_kill_id_negative", E(b"CLIENT", b"KILL", b"ID", b"-1"),
     OPEN, b'-ERR client-id should be greater than 0\r\n'),
    ("cnt_mget_many_keys", E(*([b"MGET"] + [b"k%d" % i for i in range(3000)])),
     OPEN, b"*3000\r\n" + b"$-1\r\n" * 3000),
    ("cnt_hello_huge", E(b"HELLO", b"99999999999999999999"),
     OPEN, b'-ERR Protocol version is not an integer or out of range\r\n'),
    # NULs (and CR/LF) in names: Redis formats names with %s, which stops at a NUL
    ("nul_in_key", E(b"SET", b"a\x00b", b"v") + E(b"GET", b"a\x00b") + E(b"GET", b"a") + E(b"KEYS", b"a*"),
     OPEN, b'+OK\r\n$1\r\nv\r\n$-1\r\n*1\r\n$3\r\na\x00b\r\n'),
    ("nul_in_field", E(b"HSET", b"h", b"f\x00g", b"\x00") + E(b"HGETALL", b"h"),
     OPEN, b':1\r\n*2\r\n$3\r\nf\x00g\r\n$1\r\n\x00\r\n'),
    ("nul_in_command_name", E(b"GE\x00T", b"k"),
     OPEN, b"-ERR unknown command 'GE', with args beginning with: 'k' \r\n"),
    ("nul_in_unknown_args", E(b"NOPE", b"a\x00b", b"c"),
     OPEN, b"-ERR unknown command 'NOPE', with args beginning with: 'a' 'c' \r\n"),
    ("crlf_in_unknown_command", E(b"NO\r\nPE", b"x\r\ny"),
     OPEN, b"-ERR unknown command 'NO  PE', with args beginning with: 'x  y' \r\n"),
    ("nul_in_client_name", E(b"CLIENT", b"SETNAME", b"a\x00b"),
     OPEN, b'-ERR Client names cannot contain spaces, newlines or special characters.\r\n'),
    ("nul_in_config_get", E(b"CONFIG", b"GET", b"maxmemory\x00"),
     OPEN, b'*0\r\n'),
    ("nul_in_config_set", E(b"CONFIG", b"SET", b"maxmemory\x00", b"1"),
     OPEN, b"-ERR Unknown option or number of arguments for CONFIG SET - 'maxmemory'\r\n"),
    ("nul_in_subcommand", E(b"CLIENT", b"GET\x00NAME"),
     OPEN, b"-ERR unknown subcommand 'GET'. Try CLIENT HELP.\r\n"),
    ("nul_in_number", E(b"INCRBY", b"n", b"1\x00"),
     OPEN, b'-ERR value is not an integer or out of range\r\n'),
    ("nul_in_pattern", E(b"SET", b"a\x00b", b"v") + E(b"KEYS", b"a\x00*"),
     OPEN, b'+OK\r\n*1\r\n$3\r\na\x00b\r\n'),
    ("long_unknown_command_name", E(b"X" * 300, b"Y" * 300),
     OPEN, b"-ERR unknown command '" + b"X" * 128 + b"', with args beginning with: '" + b"Y" * 128 + b"' \r\n"),
]


def replies_until_probe(conn):
    out = b""
    while True:
        reply = conn.read_reply(timeout=10)
        if reply == PROBE_REPLY:
            return out
        out += reply


@pytest.mark.parametrize("data,fate,replies", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(server, data, fate, replies):
    bystander = server.raw()   # connection state only: SCAN cases see the keyspace
    assert bystander.cmd("CLIENT", "SETNAME", "bystander") == b"+OK\r\n"
    c = server.raw()
    c.send_may_close(data)
    if fate == CLOSED:
        assert c.read_until_closed(timeout=10) == replies
    elif fate == WAITING:
        assert c.read_available(0.2) == replies
        assert not c.eof
    else:
        c.send(PROBE)
        assert replies_until_probe(c) == replies
    assert bystander.cmd("CLIENT", "GETNAME") == b"$9\r\nbystander\r\n"
    assert server.raw().cmd("PING") == b"+PONG\r\n"


def test_bad_input_from_many_clients_at_once(server):
    """Every case on its own connection, all open together: none disturbs
    another or the bystander."""
    bystander = server.raw()
    conns = []
    for name, data, fate, replies in CASES:
        c = server.raw()
        c.send_may_close(data)
        conns.append((name, c, fate, replies))
    assert bystander.cmd("PING") == b"+PONG\r\n"
    for name, c, fate, replies in conns:
        if fate == CLOSED:
            assert c.read_until_closed(timeout=10) == replies, name
    assert bystander.cmd("ECHO", "alive") == b"$5\r\nalive\r\n"
