"""What the string and bitmap tests share: Redis's common error replies,
a bulk reply's bytes, and the keyevent names a run of commands raises."""

from resp_util import parse

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
SYNTAX = b"-ERR syntax error\r\n"

END = b"__keyevent@0__:~end~"   # published after the commands: their events come first


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def keyevents(server, conn, commands):
    """The event names (keyevent channels, notify-keyspace-events KEA) the
    commands raise, in order."""
    conn.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        sub = server.raw()
        sub.cmd("PSUBSCRIBE", "__keyevent@0__:*")
        for args in commands:
            conn.cmd(*args)
        conn.cmd("PUBLISH", END, "")
        got = []
        while True:
            m = parse(sub.read_reply())
            if m[2] == END:
                return got
            got.append(m[2].split(b":", 1)[1])
    finally:
        conn.cmd("CONFIG", "SET", "notify-keyspace-events", "")
