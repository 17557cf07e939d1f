#!/usr/bin/env python3
"""A zoo of misbehaving NAC bots for the referee's tests: `zoo.py <mode> <marker>`.

The marker is only there so the test can find leaked processes by their command line.
"""
import os
import subprocess
import sys
import time

mode = sys.argv[1]
marker = sys.argv[2] if len(sys.argv) > 2 else ""
out = sys.stdout


def say(text):
    out.write(text)
    out.flush()


def read_block(first):
    """Read the settings (turn 1) and one turn block; return (turn, is_day)."""
    if first:
        if not sys.stdin.readline():
            sys.exit(0)
        sys.stdin.readline()
    header = sys.stdin.readline().split()
    if not header:
        sys.exit(0)
    turn, day = int(header[0]), header[1] in ("D", "W")
    for _ in range(6):
        sys.stdin.readline()
    sys.stdin.readline()
    if day:
        sys.stdin.readline()
    return turn, day


def play(answer):
    """Play 9 turns, replying with answer(turn, day) (a string written as is)."""
    for t in range(1, 10):
        turn, day = read_block(t == 1)
        answer(turn, day)


def good(turn, day):
    say("1 2 3 4 5\n" if day else "1 2\n")


def sleeper():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker])


if mode == "never_ready":
    time.sleep(120)
elif mode == "late_ready":
    time.sleep(6)
    say("READY\n")
    play(good)
elif mode == "bad_ready":
    say("hello\n")
    play(good)
elif mode == "ready_no_newline":
    say("READY")
    play(good)
elif mode == "exit_after_ready":
    say("READY\n")
    sys.exit(0)
elif mode == "hang_turn3":
    say("READY\n")
    play(lambda t, d: time.sleep(120) if t == 3 else good(t, d))
elif mode == "crash_turn2":
    say("READY\n")
    play(lambda t, d: sys.exit(7) if t == 2 else good(t, d))
elif mode == "garbage":
    say("READY\n")
    def garbage(t, d):
        out.buffer.write(b"\x00\xff garbage \xf0\x9f\x98\x80 \n")
        out.flush()

    play(garbage)
elif mode == "too_few":
    say("READY\n")
    play(lambda t, d: say("1\n"))
elif mode == "too_many":
    say("READY\n")
    play(lambda t, d: say("1 2 3 4 5 1 2 3 4 5\n"))
elif mode == "out_of_range":
    say("READY\n")
    play(lambda t, d: say("6 7 -1 99999999999999999999 5\n" if d else "6 5\n"))
elif mode == "split_write":
    say("READY\n")

    def split(t, d):
        say("1 2" if d else "3")
        time.sleep(0.05)
        say(" 3 4 5\n" if d else " 4\n")

    play(split)
elif mode == "no_newline":
    say("READY\n")
    play(lambda t, d: say("2 2 2 2 2" if d else "2 2"))
elif mode == "flood_stdout":
    say("READY\n")
    while True:
        say("1 2 3 4 5\n" * 1000)
elif mode == "flood_stderr":
    say("READY\n")
    chunk = "e" * 65536

    def noisy(t, d):
        for _ in range(50):
            sys.stderr.write(chunk)
        sys.stderr.flush()
        good(t, d)

    play(noisy)
elif mode == "fork_child":
    sleeper()
    say("READY\n")
    play(lambda t, d: sys.exit(0) if t == 2 else good(t, d))
elif mode == "unsolicited":
    say("READY\n")
    say("chatter before the first block\n")
    play(lambda t, d: (good(t, d), say("and after the reply\n")))
elif mode == "good":
    say("READY\n")
    play(good)
else:
    sys.stderr.write("unknown mode %r\n" % mode)
    sys.exit(2)
