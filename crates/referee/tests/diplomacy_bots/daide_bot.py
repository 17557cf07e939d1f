"""A DAIDE test client (standard library only): connects to HOST PORT, greets with NME, accepts
the map, then orders every unit to hold, disbands dislodged units, and in winter asks MIS and
waives or removes what it says; it exits on OFF. Usage: daide_bot.py HOST PORT [NAME]."""
import socket
import struct
import sys
import time

BRA, KET = 0x4000, 0x4001
HLO, MAP, MIS, NME, NOW, OFF, SUB, YES = 0x4804, 0x4809, 0x480B, 0x480C, 0x480E, 0x4810, 0x4818, 0x481C
HLD, DSB, REM, WVE, MRT, WIN = 0x4322, 0x4340, 0x4381, 0x4382, 0x4904, 0x4704

host, port = sys.argv[1], int(sys.argv[2])
name = sys.argv[3] if len(sys.argv) > 3 else "daide_bot.py"
for attempt in range(200):
    try:
        sock = socket.create_connection((host, port))
        break
    except OSError:
        if attempt == 199:
            raise
        time.sleep(0.05)


def recv_exact(n):
    b = b""
    while len(b) < n:
        chunk = sock.recv(n - len(b))
        if not chunk:
            sys.exit(0)
        b += chunk
    return b


def send(kind, body=b""):
    sock.sendall(struct.pack(">BBH", kind, 0, len(body)) + body)


def dm(tokens):
    send(2, b"".join(struct.pack(">H", t) for t in tokens))


def text(s):
    return [BRA] + [0x4B00 | ord(c) for c in s] + [KET]


def groups(tokens):
    """The top-level bracketed groups of a token list, without their outer brackets."""
    out, depth, start = [], 0, 0
    for i, t in enumerate(tokens):
        if t == BRA:
            if depth == 0:
                start = i + 1
            depth += 1
        elif t == KET:
            depth -= 1
            if depth == 0:
                out.append(tokens[start:i])
    return out


send(0, struct.pack(">HH", 1, 0xDA10))
me = None
units = []
while True:
    kind, _, n = struct.unpack(">BBH", recv_exact(4))
    body = recv_exact(n)
    if kind != 2:
        if kind == 4:
            sys.exit(2)
        if kind == 1:
            dm([NME] + text(name) + text("1"))
        continue
    msg = list(struct.unpack(">%dH" % (n // 2), body))
    head = msg[0]
    if head == MAP:
        dm([YES, BRA] + msg + [KET])
    elif head == HLO:
        me = groups(msg[1:])[0][0]
    elif head == OFF:
        sys.exit(0)
    elif head == NOW:
        gs = groups(msg[1:])
        season = gs[0][0]
        mine = [g for g in gs[1:] if g[0] == me]
        units = [g for g in mine if MRT not in g]
        orders = []
        if season == WIN:
            dm([MIS])
            continue
        for g in mine:
            if MRT in g:
                orders.append([BRA, BRA] + g[: g.index(MRT)] + [KET, DSB, KET])
            elif season in (0x4700, 0x4702):
                orders.append([BRA, BRA] + g + [KET, HLD, KET])
        if orders:
            dm([SUB] + [t for o in orders for t in o])
    elif head == MIS and len(msg) > 1 and msg[1] == BRA and msg[2] < 0x4000:
        count = msg[2] - 0x4000 if msg[2] & 0x2000 else msg[2]
        if count < 0:
            dm([SUB] + [t for _ in range(-count) for t in [BRA, me, WVE, KET]])
        elif count > 0:
            dm([SUB] + [t for g in units[:count] for t in [BRA, BRA] + g + [KET, REM, KET]])
