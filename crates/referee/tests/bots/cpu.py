#!/usr/bin/env python3
"""NAC bots for the CPU-fairness test (`cpu.py <mode> <n>`):

  burn N   thinks N ms of CPU time each turn (measured with process_time, so a starved bot
           takes longer on the wall clock), then plays a legal move;
  spin N   starts N children that spin forever, then plays legal moves at once.
"""
import os
import sys
import time

mode, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout


def read_ints():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return [int(x) for x in line.split()]


if mode == "spin":
    for _ in range(n):
        if os.fork() == 0:
            while True:
                pass

out.write("READY\n")
out.flush()
turns, _players, targets = read_ints()
read_ints()
for _ in range(turns):
    header = sys.stdin.readline().split()
    if not header:
        break
    day = header[1] in ("D", "W")
    for _ in range(targets + 1):
        read_ints()
    if day:
        read_ints()
    if mode == "burn":
        end = time.process_time() + n / 1000.0
        while time.process_time() < end:
            pass
    out.write("1 2 3 4 5\n" if day else "1 2\n")
    out.flush()
