#!/usr/bin/env python3
"""A Geister client for the contest server's protocol (geister_server.java), standard library only.

It connects to HOST PORT (or, with --stdio, speaks over stdin/stdout), answers SET? with a
placement and every MOV? with a random legal move computed from the 48-character board, and
checks what the protocol promises: every server message ends with CR LF and is one of the known
forms; in a MOV? no opponent ghost on the board shows its colour. After the end message it closes
and, with --games N, reconnects for the next game. It prints one line per game:
"result WON|LST|DRW <board>" and exits 0; on a protocol violation it prints "violation ..." and
exits 3.

Usage: geister_client.py HOST PORT [--games N] [--mode MODE] [--seed S] [--delay MS]
       geister_client.py --stdio [--mode MODE] [--seed S] [--delay MS]

With --delay it thinks MS milliseconds before each move (a match to watch as it is played:
`kakehiki play --serve`).

Without --seed the generator is seeded from KAKEHIKI_SEED, the seat's own seed the referee passes
to every process bot, so a match replays the same from its replay; with neither, it is unseeded.

Modes (for tests of the server's handling of misbehaving clients):
  normal      play random legal moves
  noset       never send a placement
  badset      send SET:ABCI first (refused), then a valid placement
  illegal     the first move is MOV:F,N (F is blocked by B at the start)
  outofturn   send MOV:A,N in the same write as the placement (as seat 1: before its turn)
  silent      never answer MOV?
  disconnect  close the connection at the first MOV?
  lf          end commands with LF only
  garbage     answer the first MOV? with "HELLO WORLD"
  oneperread  handle only the first message of every read and drop the rest (like some clients)
  pipelined   send the move and an extra MOV: line in one write
  crash7      exit with status 5 at the 7th MOV? (after writing why on stderr)
"""

import os
import random
import socket
import sys
import time

KNOWN = ("SET?", "OK ", "OKR", "OKB", "NG ")
ENDS = ("WON:", "LST:", "DRW:")


REPORT = sys.stdout
DELAY = 0.0  # seconds before each move (--delay)


def report(text):
    print(text, file=REPORT, flush=True)


def violation(msg):
    report("violation " + msg)
    sys.exit(3)


def check_message(msg):
    if msg in KNOWN:
        return
    if msg[:4] in ("MOV?",) + ENDS and len(msg) == 52:
        board = msg[4:]
        if msg.startswith("MOV?"):
            opp = board[24:]
            for i in range(8):
                g = opp[3 * i:3 * i + 3]
                if g[2] != "u" and g[:2] != "99":
                    violation("opponent colour visible in MOV?: " + msg)
                if g[:2] == "88":
                    violation("88 in a MOV?: " + msg)
        return
    violation("unknown message %r" % msg)


def legal_moves(board):
    own = []
    for i in range(8):
        g = board[3 * i:3 * i + 3]
        own.append((int(g[0]), int(g[1]), g[2]))
    occupied = {(x, y) for (x, y, c) in own if c in "RB"}
    moves = []
    for i, (x, y, c) in enumerate(own):
        if c not in "RB":
            continue
        for d, (dx, dy) in (("N", (0, -1)), ("E", (1, 0)), ("W", (-1, 0)), ("S", (0, 1))):
            nx, ny = x + dx, y + dy
            if 0 <= nx < 6 and 0 <= ny < 6:
                if (nx, ny) not in occupied:
                    moves.append((i, d))
            elif c == "B" and ((x, y) == (0, 0) and d in "NW" or (x, y) == (5, 0) and d in "NE"):
                moves.append((i, d))
    return moves


class Conn:
    def __init__(self, sock=None):
        self.sock = sock
        self.buf = b""

    def send(self, text):
        data = text.encode("ascii")
        if self.sock is not None:
            self.sock.sendall(data)
        else:
            os.write(1, data)

    def recv(self):
        if self.sock is not None:
            return self.sock.recv(4096)
        return os.read(0, 4096)

    def close(self):
        if self.sock is not None:
            self.sock.close()


def play_game(conn, mode, rng, first_game):
    eol = "\n" if mode == "lf" else "\r\n"
    moved = False
    asked = 0
    while True:
        data = conn.recv()
        if not data:
            return None
        conn.buf += data
        msgs = []
        while b"\r\n" in conn.buf:
            line, conn.buf = conn.buf.split(b"\r\n", 1)
            msgs.append(line.decode("ascii", "replace"))
            if mode == "oneperread":
                conn.buf = b""
                break
        for msg in msgs:
            check_message(msg)
            if msg == "SET?":
                if mode == "noset":
                    continue
                if mode == "badset":
                    conn.send("SET:ABCI" + eol)
                reds = rng.sample("ABCDEFGH", 4)
                extra = "MOV:A,N" + eol if mode == "outofturn" else ""
                conn.send("SET:" + "".join(reds) + eol + extra)
            elif msg.startswith("MOV?"):
                asked += 1
                if DELAY:
                    time.sleep(DELAY)
                if mode == "crash7" and asked == 7:
                    print("crash7: exiting at my 7th move", file=sys.stderr, flush=True)
                    sys.exit(5)
                if mode == "silent":
                    continue
                if mode == "disconnect":
                    conn.close()
                    return "DISCONNECTED"
                if mode == "garbage" and not moved:
                    moved = True
                    conn.send("HELLO WORLD" + eol)
                    continue
                if mode == "illegal" and not moved:
                    moved = True
                    conn.send("MOV:F,N" + eol)
                    continue
                moves = legal_moves(msg[4:])
                if not moves:
                    violation("no legal move in " + msg)
                i, d = rng.choice(moves)
                cmd = "MOV:%s,%s" % ("ABCDEFGH"[i], d) + eol
                if mode == "pipelined":
                    cmd += "MOV:A,N" + eol
                conn.send(cmd)
                moved = True
            elif msg[:4] in ENDS:
                return msg


def main():
    args = sys.argv[1:]
    global DELAY
    mode, games, seed, stdio = "normal", 1, None, False
    pos = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--mode":
            mode = args[i + 1]
            i += 2
        elif a == "--games":
            games = int(args[i + 1])
            i += 2
        elif a == "--seed":
            seed = int(args[i + 1])
            i += 2
        elif a == "--delay":
            DELAY = int(args[i + 1]) / 1000.0
            i += 2
        elif a == "--stdio":
            stdio = True
            i += 1
        else:
            pos.append(a)
            i += 1
    global REPORT
    if stdio:
        REPORT = sys.stderr  # stdout is the protocol channel
    if seed is None and os.environ.get("KAKEHIKI_SEED", "").isdigit():
        seed = int(os.environ["KAKEHIKI_SEED"])
    rng = random.Random(seed)
    for g in range(games):
        if stdio:
            conn = Conn(None)
        else:
            if len(pos) != 2:
                print("usage: geister_client.py HOST PORT [--games N] [--mode MODE]", file=sys.stderr)
                sys.exit(2)
            conn = None
            for _ in range(200):
                try:
                    s = socket.create_connection((pos[0], int(pos[1])), timeout=60)
                    s.settimeout(None)
                    conn = Conn(s)
                    break
                except OSError:
                    time.sleep(0.05)
            if conn is None:
                print("cannot connect", file=sys.stderr)
                sys.exit(1)
        result = play_game(conn, mode, rng, g == 0)
        if result is None:
            report("result CLOSED")
        elif result == "DISCONNECTED":
            report("result DISCONNECTED")
            return
        else:
            report("result %s %s" % (result[:3], result[4:]))
        conn.close()
        if stdio:
            return


if __name__ == "__main__":
    main()
