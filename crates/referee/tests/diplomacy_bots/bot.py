"""A Diplomacy test bot speaking the JSON-lines protocol. Behaviour by argv[1]:
hold: every unit holds; crash: exits at its first phase message; silent: never answers phases;
illegal: sends illegal and malformed orders; press: holds, sends marked press to everyone and a
marked void order; garbage: answers phases with text that is not JSON; draw: holds and votes
for a draw."""
import json
import sys

mode = sys.argv[1]
me = None
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "start":
        me = m["power"]
        print(json.dumps({"ready": True}), flush=True)
    elif t == "press":
        msgs = []
        if mode == "press":
            for p in m["state"]["units"]:
                if p != me:
                    msgs.append({"to": p, "text": "PRESS-%s-%s-%s-%d" % (me, p, m["phase"], m["round"])})
        print(json.dumps({"seq": m["seq"], "messages": msgs}), flush=True)
    elif t == "phase":
        if mode == "crash":
            sys.exit(3)
        if mode == "silent":
            continue
        if mode == "garbage":
            print("these are not orders", flush=True)
            continue
        orders = []
        if m["phase"].endswith("M"):
            orders = [u + " H" for u in m["orderable"]]
        if mode == "illegal":
            orders = ["A PAR - MOS", "F XYZ H", "hello world", "A MUN B"] + orders[:1]
        if mode == "press":
            orders.append("SECRET%s%s" % (me, m["phase"]))
        # A stale reply first (wrong seq), which must be dropped.
        print(json.dumps({"seq": m["seq"] + 1000, "orders": []}), flush=True)
        reply = {"seq": m["seq"], "orders": orders}
        if mode == "draw":
            reply["draw"] = True
        print(json.dumps(reply), flush=True)
    elif t == "end":
        break
