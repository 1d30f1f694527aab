"""What the string and bitmap tests share: Redis's common error replies
and a bulk reply's bytes."""

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
SYNTAX = b"-ERR syntax error\r\n"


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)
