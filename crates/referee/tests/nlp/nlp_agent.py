"""A small natural-language Werewolf agent on aiwolf-nlp-common (the agents' own packet parser).

Usage: nlp_agent.py URL [NAME] [MODE]. It plays until the server closes the connection. Every
packet goes through aiwolf_nlp_common's Packet.from_dict; any packet it cannot read, or any
inconsistency it notices, ends it with an error (the referee then records the seat's disconnect).
MODE `silent` answers nothing after INITIALIZE (for timeout tests).
"""

import random
import sys

from aiwolf_nlp_common.client import Client
from aiwolf_nlp_common.packet import Request, Role, Status

url = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else "pyagent1"
mode = sys.argv[3] if len(sys.argv) > 3 else "play"

client = Client(url, None)
client.connect()
rng = random.Random(name)
me = None
role = None
alive = []
talks = []
finished = False


def check(cond, what):
    if not cond:
        sys.stderr.write("inconsistent packet: " + what + "\n")
        sys.exit(3)


while True:
    try:
        packet = client.receive()
    except Exception:  # the server closes the connection after FINISH
        if finished:
            break
        raise
    req = packet.request
    if packet.info is not None:
        me = packet.info.agent
        check(me in packet.info.status_map, "own name in status_map")
        alive = [a for a, s in packet.info.status_map.items() if s == Status.ALIVE and a != me]
        if req != Request.FINISH:
            check(list(packet.info.role_map.keys()) == [me] or packet.info.role_map.get(me) == Role.WEREWOLF,
                  "role_map shows others' roles to a non-werewolf")
            role = packet.info.role_map.get(me)
        else:
            check(len(packet.info.role_map) == len(packet.info.status_map), "FINISH reveals every role")
    if req == Request.INITIALIZE:
        check(packet.setting is not None, "INITIALIZE carries the setting")
    if packet.talk_history is not None:
        talks.extend(packet.talk_history)
    if req == Request.NAME:
        client.send(name)
    elif mode == "silent" and req != Request.INITIALIZE:
        continue
    elif req == Request.TALK:
        check(packet.info.remain_count is not None, "TALK carries remain_count")
        if alive and rng.random() < 0.7:
            client.send("I suspect @" + rng.choice(alive) + " a little.")
        else:
            client.send("Over")
    elif req == Request.WHISPER:
        check(role == Role.WEREWOLF, "only werewolves whisper")
        client.send("Let's attack " + rng.choice(alive) + "." if alive else "Over")
    elif req in (Request.VOTE, Request.DIVINE, Request.GUARD, Request.ATTACK):
        if req == Request.DIVINE:
            check(role == Role.SEER, "only the seer divines")
        if req == Request.GUARD:
            check(role == Role.BODYGUARD, "only the bodyguard guards")
        if req == Request.ATTACK:
            check(role == Role.WEREWOLF, "only werewolves attack")
        client.send(rng.choice(alive) if alive else me)
    elif req == Request.FINISH:
        finished = True
client.close()
