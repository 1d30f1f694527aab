"""LOLWUT: the version line, and VERSION 5's and 6's art as Redis 7.0 draws
it (random in parts: its shape is checked, and what is not random)."""

import math
import re

import pytest

SCHOTTER = "Georg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15"
SKYLINE = ["Dedicated to the 8 bit game developers of past and present.",
           "Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15"]
PIXEL = re.compile(r"\x1b\[0;(30;40|90;100|37;47|97;107)m \x1b\[0m")


def lolwut(conn, *args):
    reply = conn.call("LOLWUT", *args)
    assert isinstance(reply, bytes), reply
    return reply.decode()


def schotter_rows(cols, per_row, per_col):
    width = cols * 2
    pad = 2 if width > 4 else 0
    side = (width - pad * 2) / per_row
    height = int(side * per_col + pad * 2)
    return height, math.ceil(height / 4)


@pytest.mark.parametrize("args,cols,per_row,per_col", [
    ((), 66, 8, 12), (("40",), 40, 8, 12), (("10", "3", "4"), 10, 3, 4), (("100", "20", "30"), 100, 20, 30),
    (("0", "0", "0"), 1, 1, 1), (("2", "1", "1"), 2, 1, 1), (("5000", "1", "1"), 1000, 1, 1),
])
def test_version_5_schotter(conn, args, cols, per_row, per_col):
    text = lolwut(conn, "VERSION", "5", *args)
    height, rows = schotter_rows(cols, per_row, per_col)
    lines = text.split("\n")
    assert lines[-1] == "" and lines[-2] == SCHOTTER
    art = lines[:rows]
    assert all(len(l) == cols and all(0x2800 <= ord(ch) <= 0x28FF for ch in l) for l in art), art
    # a newline ends each row of braille but one ending on the last pixel row
    assert lines[rows:-2] == ([] if (rows - 1) * 4 == height - 1 else [""])
    if height > 4:
        assert any(ch != "\u2800" for ch in text)


def test_version_5_top_rows_are_not_random(conn):
    # the first two rows of squares are drawn straight: the same every time
    first, second = lolwut(conn, "VERSION", "5"), lolwut(conn, "VERSION", "5")
    assert first.split("\n")[:2] == second.split("\n")[:2]
    # the top edges of the first row's eight squares, as redis-server draws them
    assert first.split("\n")[0] == "\u2800" + ("\u2864" + "\u2824" * 7) * 8 + "\u2844"


@pytest.mark.parametrize("args,cols,rows", [
    ((), 80, 20), (("10", "5"), 10, 5), (("1", "1"), 1, 1), (("0", "-3"), 1, 1), (("2000", "3"), 1000, 3),
])
def test_version_6_skyline(conn, args, cols, rows):
    lines = lolwut(conn, "VERSION", "6", *args).split("\n")
    assert lines[rows:] == SKYLINE + [""]
    for line in lines[:rows]:
        assert PIXEL.sub("", line) == "" and len(PIXEL.findall(line)) == cols, line


def test_version_line_and_arguments(conn):
    version = "Redis ver. 7.0.15\n"
    for args in [(), ("VERSION", "7"), ("VERSION", "4"), ("VERSION", "9"), ("VERSION", "59"), ("VERSION", "-1"),
                 ("VERSION", "49", "3"), ("x", "y"), ("VERSION",), ("5", "1")]:
        assert lolwut(conn, *args) == version, args
    # 5.9 draws the skyline, 4.9 Schotter (Redis reads the version's text)
    assert conn.cmd("LOLWUT", "VERSION", "a") == b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("LOLWUT", "VERSION", "5", "a") == b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("LOLWUT", "VERSION", "6", "1", "a") == b"-ERR value is not an integer or out of range\r\n"
    assert conn.cmd("LOLWUT", "VERSION", "5", "1", "1", "1", "x") == conn.cmd("LOLWUT", "VERSION", "5", "1", "1", "1")
