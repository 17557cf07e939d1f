"""A small natural-language Werewolf agent on aiwolf-nlp-common (the agents' own packet parser).

Usage: nlp_agent.py URL [NAME] [MODE]. It plays until the server closes the connection. Every
packet goes through aiwolf_nlp_common's Packet.from_dict (as Client.receive does); any packet it
cannot read, or any inconsistency it notices, ends it with an error (the referee then records the
seat's disconnect). The packet's JSON is also checked for the fields upstream's schema requires
that the library does not read: every talk's `time`, and `setting.talk.duration` exactly in
group chat. MODE `silent` answers nothing after INITIALIZE (for timeout tests); MODE `chat`
plays a game whose talk is a group chat, saying one thing and then Over in each talk window.
"""

import json
import random
import sys

from aiwolf_nlp_common.client import Client
from aiwolf_nlp_common.packet import Packet, Request, Role, Status

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


# Group chat: the next `turn` of each agent in the current window, and the last `time` seen.
next_turn = {}
last_time = 0


def check_raw(raw):
    """The fields of upstream's schema that aiwolf_nlp_common 0.7.0 does not read."""
    global last_time
    talks = list(raw.get("talk_history") or []) + list(raw.get("whisper_history") or [])
    for key in ("new_talk", "new_whisper"):
        if raw.get(key) is not None:
            talks.append(raw[key])
    for t in talks:
        check(isinstance(t.get("time"), int) and t["time"] >= 0, "a talk without an integer time")
        check(isinstance(t.get("turn"), int), "a talk without an integer turn")
    setting = raw.get("setting")
    if setting is not None:
        duration = setting["talk"].get("duration")
        if mode == "chat":
            check(isinstance(duration, int) and duration > 0, "group chat without talk.duration")
        else:
            check(duration is None, "talk.duration in turns")
    if raw["request"] == "TALK_PHASE_START":
        next_turn.clear()
    new = raw.get("new_talk")
    if raw["request"] == "TALK_BROADCAST" and new is not None:
        check(new["turn"] == next_turn.get(new["agent"], 0), "group-chat turns count per agent")
        next_turn[new["agent"]] = new["turn"] + 1
        check(new["time"] >= last_time, "group-chat times in order")
        last_time = new["time"]


while True:
    try:
        frame = client.socket.recv()
    except Exception:  # the server closes the connection after FINISH
        if finished:
            break
        raise
    if isinstance(frame, (bytes, bytearray)):
        frame = bytes(frame).decode("utf-8")
    raw = json.loads(frame)
    packet = Packet.from_dict(raw)
    check_raw(raw)
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
    elif req == Request.TALK_PHASE_START:
        check(mode == "chat", "a group-chat window in turns")
        client.send("Hello from @" + rng.choice(alive) + "'s neighbour." if alive else "Over")
        client.send("Over")
    elif req == Request.TALK_BROADCAST:
        check(packet.new_talk is not None, "TALK_BROADCAST carries new_talk")
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
