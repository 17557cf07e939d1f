#!/usr/bin/env python3
"""The deterministic test AI of the spec's §2.5: `worked_example.py <seat>`.

It answers turn t with the spec's string for its seat, and writes every byte it receives to stderr
(hex, one line per read line) so the test can compare what crossed the pipe.
"""
import sys

REPLIES = [
    ["0 0 1 2 3", "5 5", "4 4 5 0 1", "3 3", "1 2 3 4 5", "0 1", "2 2 2 0 0", "4 5", "5 5 4 4 3"],
    ["1 1 2 3 4", "0 4", "5 5 0 1 2", "2 2", "0 0 0 2 2", "1 2", "3 3 3 1 1", "5 0", "0 0 1 1 2"],
    ["2 2 3 4 5", "1 1", "0 0 1 2 3", "5 0", "3 3 3 4 4", "2 3", "4 4 4 5 5", "0 1", "2 2 3 3 4"],
    ["5 5 9 x", "2 3", "1 1 2 3 4", "4 1", "5 5 5 1 1", "3 4", "0 1 2 3 4", "1 2", "4 4 5 5 0"],
]

seat = int(sys.argv[1])
inp = sys.stdin.buffer
err = sys.stderr


def line():
    raw = inp.readline()
    err.write(raw.hex() + "\n")
    err.flush()
    return raw


sys.stdout.write("READY\n")
sys.stdout.flush()
line()
line()
for t in range(1, 10):
    header = line().split()
    day = header[1] in (b"D", b"W")
    for _ in range(7 + (1 if day else 0)):
        line()
    sys.stdout.write(REPLIES[seat][t - 1] + "\n")
    sys.stdout.flush()
