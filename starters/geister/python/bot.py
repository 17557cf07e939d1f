#!/usr/bin/env python3
"""Starter client for Geister (GPW/GAT contest server protocol), Python 3, standard library only.

Protocol (docs/protocols/geister.md): ASCII lines; the server ends its lines with CR LF.
  server: SET?                  -> you: SET:ABCD   (the 4 of your ghosts A..H that are red)
  server: MOV?<48-char board>   -> you: MOV:A,N    (ghost A..H, direction N E W S)
  server: OK / OKR / OKB / NG   (accepted / captured red / captured blue / refused)
  server: WON:/LST:/DRW:<board> the game is over; the server closes the connection.
The board: 16 groups "x y letter", your ghosts A..H first (R/B), then the opponent's (u for
unknown); 99 = captured, 88 = escaped; y = 0 is the opponent's side, north.

Run (the referee launches it and fills in its port):
  kakehiki play geister --seat 'tcp-cmd:python3 starters/geister/python/bot.py {host} {port}' --seat builtin:random
or over stdin/stdout, without arguments:
  kakehiki play geister --seat 'cmd:python3 starters/geister/python/bot.py' --seat builtin:random
Check:  kakehiki check geister --seat 'tcp-cmd:python3 starters/geister/python/bot.py {host} {port}'

Strategy (replace it with yours): escape with a blue ghost when one stands on an exit corner,
otherwise a random legal move, preferring to move forward; red ghosts chosen at random.
"""
import os
import random
import socket
import sys
import time

# The referee passes the match seed: use it and a match replays exactly from its seed.
rng = random.Random(int(os.environ.get("KAKEHIKI_SEED", "0")))

DIRS = {"N": (0, -1), "E": (1, 0), "W": (-1, 0), "S": (0, 1)}


def choose_move(board):
    """A legal move "MOV:X,D" for the 48-character board of a MOV? message."""
    mine = []
    for i in range(8):
        x, y, colour = int(board[3 * i]), int(board[3 * i + 1]), board[3 * i + 2]
        mine.append((x, y, colour))
    alive = [(x, y) for (x, y, c) in mine if c in "RB"]  # captured ghosts show 99 and r/b
    forward, other = [], []
    for i, (x, y, c) in enumerate(mine):
        if c not in "RB":
            continue
        letter = "ABCDEFGH"[i]
        for d, (dx, dy) in DIRS.items():
            if c == "B" and ((x, y) == (0, 0) and d in "NW" or (x, y) == (5, 0) and d in "NE"):
                return "MOV:%s,%s" % (letter, d)  # a blue ghost escapes: we win
            nx, ny = x + dx, y + dy
            if 0 <= nx < 6 and 0 <= ny < 6 and (nx, ny) not in alive:
                (forward if d == "N" else other).append("MOV:%s,%s" % (letter, d))
    if forward and (not other or rng.random() < 0.6):
        return rng.choice(forward)
    return rng.choice(other)


def connect(host, port):
    for _ in range(100):  # the server may still be starting: retry for a few seconds
        try:
            return socket.create_connection((host, int(port)))
        except OSError:
            time.sleep(0.05)
    sys.exit("cannot connect to %s:%s" % (host, port))


def main():
    if len(sys.argv) == 3:
        sock = connect(sys.argv[1], sys.argv[2])
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        inp, out = sock.makefile("r", newline=""), sock.makefile("w", newline="")
    else:
        inp, out = sys.stdin, sys.stdout
    for line in inp:  # read lines, never raw chunks: TCP may merge messages
        msg = line.rstrip("\r\n")
        if msg == "SET?":
            reply = "SET:" + "".join(rng.sample("ABCDEFGH", 4))
        elif msg.startswith("MOV?"):
            reply = choose_move(msg[4:])
        elif msg[:4] in ("WON:", "LST:", "DRW:"):
            print("result " + msg, file=sys.stderr)
            return
        else:
            continue  # OK, OKR, OKB, NG
        out.write(reply + "\r\n")
        out.flush()


if __name__ == "__main__":
    main()
