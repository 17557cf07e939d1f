"""A Diplomacy test bot speaking the JSON-lines protocol. Behaviour by argv[1]:
hold: every unit holds; crash: exits at its first phase message; late-crash: holds, then
at S1902M says so on stderr and exits 1; silent: never answers phases;
illegal: sends illegal and malformed orders; press: holds, sends marked press to everyone and a
marked void order; daide-press: holds, and in each first press round sends Austria DAIDE press
and England plain text; garbage: answers phases with text that is not JSON; draw: holds and votes
for a draw. With "tcp HOST PORT" after the mode it connects to the referee and speaks the same
lines over the connection; with a file name after that it also writes the end message there."""
import json
import socket
import sys
import time

mode = sys.argv[1]
inp, out = sys.stdin, sys.stdout
end_file = None
if len(sys.argv) >= 5 and sys.argv[2] == "tcp":
    # The referee may not be listening yet: retry for a while.
    for attempt in range(200):
        try:
            sock = socket.create_connection((sys.argv[3], int(sys.argv[4])))
            break
        except OSError:
            if attempt == 199:
                raise
            time.sleep(0.05)
    inp = sock.makefile("r", encoding="utf-8")
    out = sock.makefile("w", encoding="utf-8")
    if len(sys.argv) >= 6:
        end_file = sys.argv[5]
me = None
for line in inp:
    m = json.loads(line)
    t = m["type"]
    if t == "start":
        me = m["power"]
        print(json.dumps({"ready": True}), file=out, flush=True)
    elif t == "press":
        msgs = []
        if mode == "press":
            for p in m["state"]["units"]:
                if p != me:
                    msgs.append({"to": p, "text": "PRESS-%s-%s-%s-%d" % (me, p, m["phase"], m["round"])})
        if mode == "daide-press" and m["round"] == 1:
            # DAIDE press to Austria, plain text to England, both DAIDE seats in the test.
            msgs.append({"to": "AUSTRIA", "text": "PRP ( PCE ( AUS FRA ) )"})
            msgs.append({"to": "ENGLAND", "text": "hello england"})
        print(json.dumps({"seq": m["seq"], "messages": msgs}), file=out, flush=True)
    elif t == "phase":
        if mode == "crash":
            sys.exit(3)
        if mode == "late-crash" and m["phase"] == "S1902M":
            print("bot.py: giving up at %s" % m["phase"], file=sys.stderr, flush=True)
            sys.exit(1)
        if mode == "silent":
            continue
        if mode == "garbage":
            print("these are not orders", file=out, flush=True)
            continue
        orders = []
        if m["phase"].endswith("M"):
            orders = [u + " H" for u in m["orderable"]]
        if mode == "illegal":
            orders = ["A PAR - MOS", "F XYZ H", "hello world", "A MUN B"] + orders[:1]
        if mode == "press":
            orders.append("SECRET%s%s" % (me, m["phase"]))
        # A stale reply first (wrong seq), which must be dropped.
        print(json.dumps({"seq": m["seq"] + 1000, "orders": []}), file=out, flush=True)
        reply = {"seq": m["seq"], "orders": orders}
        if mode == "draw":
            reply["draw"] = True
        print(json.dumps(reply), file=out, flush=True)
    elif t == "end":
        if end_file:
            with open(end_file, "w") as f:
                f.write(line)
        break
