#!/usr/bin/env python3
"""An example Diplomacy bot for `kakehiki play diplomacy` (standard library only).

It speaks the JSON-lines bot protocol (one JSON object per line on stdin and stdout):
  start -> {"ready": true}
  press -> {"messages": [...]}   (it greets its neighbours once, to show the shape)
  phase -> {"orders": [...]}
  end   -> nothing; the referee closes stdin.

Strategy: a defensive one. Units hold and support each other's holds where they can name the
supported unit; dislodged units disband; builds are armies in the offered home centres; removals
take the last units listed. It needs no map: everything comes from the phase message.
"""
import json
import sys


def reply(obj, seq):
    if seq is not None:
        obj["seq"] = seq
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


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
    power = None
    greeted = False
    for line in sys.stdin:
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
            reply({"orders": orders_for(msg)}, seq)
        elif kind == "end":
            return


if __name__ == "__main__":
    main()
