#!/usr/bin/env python3
"""An example Diplomacy bot for `kakehiki play diplomacy` (standard library only).

It speaks the JSON-lines bot protocol (one JSON object per line on stdin and stdout):
  start -> {"ready": true}
  press -> {"messages": [...]}   (it greets its neighbours once, to show the shape)
  phase -> {"orders": [...]}
  end   -> nothing; the referee closes stdin (or the connection).

Run it on stdin/stdout (seat `cmd:python3 diplomacy_bot.py`), or over TCP with the same lines:
`tcp-cmd:python3 diplomacy_bot.py {host} {port}` (the referee launches it and fills in its port),
or start it yourself with the referee's host and port for a `tcp` seat.

Each phase message's `history` lists the phases adjudicated since the bot's last one, with
`results` per unit and, for each order that failed, why (`failures`: bounced, cut, dislodged,
no convoy, ...); this bot logs its own failures on stderr.

Strategy: a defensive one. Units hold and support each other's holds where they can name the
supported unit; dislodged units disband; builds are armies in the offered home centres; removals
take the last units listed. It needs no map: everything comes from the phase message.
"""
import json
import socket
import sys
import time

IN, OUT = sys.stdin, sys.stdout


def connect(host, port):
    """Connect to the referee (retrying briefly while it starts listening)."""
    global IN, OUT
    for attempt in range(100):
        try:
            sock = socket.create_connection((host, int(port)))
            break
        except OSError:
            if attempt == 99:
                raise
            time.sleep(0.1)
    IN = sock.makefile("r", encoding="utf-8")
    OUT = sock.makefile("w", encoding="utf-8")


def reply(obj, seq):
    if seq is not None:
        obj["seq"] = seq
    OUT.write(json.dumps(obj) + "\n")
    OUT.flush()


def log_failures(msg, power):
    for h in msg.get("history", []):
        # Canonical orders begin with their unit ("A PAR - BUR"); builds with the unit built.
        own_orders = h.get("orders", {}).get(power, [])
        for unit, why in sorted(h.get("failures", {}).items()):
            if any(o.startswith(unit + " ") for o in own_orders):
                sys.stderr.write("%s %s: %s failed (%s)\n" % (power, h.get("phase"), unit, why))


def orders_for(msg):
    orderable = msg.get("orderable", [])
    phase = msg.get("phase", "")
    kind = phase[-1:] if phase else "M"
    if kind == "R":
        return [unit + " D" for unit in orderable]
    if kind == "A":
        builds = msg.get("builds", 0)
        removals = msg.get("removals", 0)
        if builds:
            return ["A %s B" % loc.split("/")[0] for loc in orderable[:builds]]
        if removals:
            return [unit + " D" for unit in orderable[-removals:]]
        return []
    return [unit + " H" for unit in orderable]


def main():
    if len(sys.argv) == 3:
        connect(sys.argv[1], sys.argv[2])
    power = None
    greeted = False
    for line in IN:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        kind = msg.get("type")
        seq = msg.get("seq")
        if kind == "start":
            power = msg.get("power")
            reply({"ready": True}, seq)
        elif kind == "press":
            messages = []
            if not greeted:
                others = [p for p in msg.get("powers", []) if p != power]
                messages = [{"to": p, "text": "peace?"} for p in others[:2]]
                greeted = True
            reply({"messages": messages}, seq)
        elif kind == "phase":
            log_failures(msg, power)
            reply({"orders": orders_for(msg)}, seq)
        elif kind == "end":
            return


if __name__ == "__main__":
    main()
