#!/usr/bin/env python3
"""Starter bot for Diplomacy (standard map), Python 3, standard library only.

Protocol (docs/protocols/diplomacy.md): one JSON object per line on stdin, one reply per line on
stdout (flush!). Every request has a "seq"; echo it in the reply.
  {"type":"start","power":"FRANCE","powers":[...],...}     -> {"ready":true}
  {"type":"press","phase":"S1901M","round":1,"inbox":[...]}  -> {"messages":[{"to":"ITALY","text":"..."}]}
  {"type":"phase","phase":"S1901M","orderable":["A PAR",...],"state":{...},"history":[...]}
                                                           -> {"orders":["A PAR H",...]}
    (retreat phases "...R": orderable = your dislodged units; adjustment phases "...A":
     "builds":n with the locations you may build on, or "removals":n with your units)
  {"type":"end",...}                                         the game is over: exit.

Run:    kakehiki play diplomacy --seat 'cmd:python3 starters/diplomacy/python/bot.py' --fill builtin:random
Check:  kakehiki check diplomacy --seat 'cmd:python3 starters/diplomacy/python/bot.py'

Strategy (replace it with yours): it needs no map. Every unit holds, dislodged units disband,
builds are armies on randomly chosen offered centres, removals take random units; in the first
press round it greets one random power.
"""
import json
import os
import random
import sys

# The referee passes the match seed: use it and a match replays exactly from its seed.
rng = random.Random(int(os.environ.get("KAKEHIKI_SEED", "0")))


def reply(body, msg):
    """Send one reply line, echoing the request's seq."""
    body["seq"] = msg.get("seq")
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def orders_for(msg):
    phase = msg.get("phase", "")  # e.g. S1901M, F1901R, W1901A
    orderable = list(msg.get("orderable", []))
    if phase.endswith("R"):  # retreats: disband every dislodged unit ("F TRI D")
        return [unit + " D" for unit in orderable]
    if phase.endswith("A"):  # adjustments
        rng.shuffle(orderable)
        builds = msg.get("builds", 0)
        removals = msg.get("removals", 0)
        # An army: every home centre takes one. "STP/NC" -> "STP".
        orders = ["A %s B" % loc.split("/")[0] for loc in orderable[:builds]]
        return orders + [unit + " D" for unit in orderable[:removals]]
    return [unit + " H" for unit in orderable]  # movement: every unit holds ("A PAR H")


def main():
    power, others, greeted = None, [], False
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError as e:
            print("unreadable message: %s" % e, file=sys.stderr)
            continue
        kind = msg.get("type")
        if kind == "start":
            power = msg["power"]
            others = [p for p in msg.get("powers", []) if p != power]
            reply({"ready": True}, msg)
        elif kind == "press":
            messages = []
            if not greeted and others:  # press: up to 6 messages, each to one other power
                greeted = True
                messages.append({"to": rng.choice(others), "text": "Peace between us?"})
            reply({"messages": messages}, msg)
        elif kind == "phase":
            reply({"orders": orders_for(msg)}, msg)
        elif kind == "end":
            print("%s: game over (%s)" % (power, msg.get("reason")), file=sys.stderr)
            return


if __name__ == "__main__":
    main()
