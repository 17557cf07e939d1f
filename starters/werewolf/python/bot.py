#!/usr/bin/env python3
"""Starter agent for Werewolf (AIWolf 0.6.x TCP protocol), Python 3, standard library only.

Usage: bot.py HOST PORT [NAME [ROLE]]   (ROLE: the role to ask for, e.g. SEER; default none)

Protocol (docs/protocols/werewolf.md): the server sends one JSON packet per line, with the keys
request, gameInfo, gameSetting, talkHistory, whisperHistory. Answer these requests with one line:
  NAME -> your name         ROLE -> none, or the role you would like
  TALK, WHISPER -> an utterance ("VOTE Agent[03]", "Over", "Skip", ...)
  VOTE, DIVINE, GUARD, ATTACK -> {"agentIdx":N}
and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH. Games follow one another on the
same connection: read until the server closes it.

Run (the referee launches it and fills in its port; 14 built-in agents fill the village):
  kakehiki play werewolf --seat 'tcp-cmd:python3 starters/werewolf/python/bot.py {host} {port}' --fill builtin:sample
Check:  kakehiki check werewolf --seat 'tcp-cmd:python3 starters/werewolf/python/bot.py {host} {port}'

Strategy (replace it with yours): each day pick a suspect at random (a werewolf the seer has
found, if any), say "VOTE Agent[NN]" and vote for it; the seer also announces its last
divination; divine, guard and attack random valid agents.
"""
import json
import os
import random
import socket
import sys
import time

# The referee passes the match seed: use it and a match replays exactly from its seed.
rng = random.Random(int(os.environ.get("KAKEHIKI_SEED", "0")))


class Agent:
    def __init__(self, name, wish):
        self.name = name
        self.wish = wish  # the role asked for at ROLE
        self.me = 0
        self.roles = {}  # agent -> role we know: our own; a werewolf also sees the others
        self.alive = []  # alive agents, from the latest gameInfo's statusMap
        self.talks = 0  # our talks today
        self.suspect = -1  # whom we vote for today
        self.announce = None  # the seer's divination to tell the village
        self.divined = set()

    def others(self, exclude_wolves=False):
        return [a for a in self.alive if a != self.me
                and not (exclude_wolves and self.roles.get(a) == "WEREWOLF")]

    def pick(self, candidates):
        return rng.choice(candidates) if candidates else -1

    def update(self, info, request):
        self.me = info["agent"]
        self.roles = {int(a): r for a, r in info["roleMap"].items()}
        self.alive = [int(a) for a, s in info["statusMap"].items() if s == "ALIVE"]
        if request == "DAILY_INITIALIZE":  # a new day
            self.talks = 0
            wolf = self.roles.get(self.me) == "WEREWOLF"
            self.suspect = self.pick(self.others(exclude_wolves=wolf))
            judge = info.get("divineResult")  # seer only: last night's divination
            if judge and judge["target"] in self.alive:
                self.announce = (judge["target"], judge["result"])
                if judge["result"] == "WEREWOLF":
                    self.suspect = judge["target"]

    def answer(self, packet):
        request = packet["request"]
        if packet["gameInfo"] is not None:
            self.update(packet["gameInfo"], request)
        if request == "NAME":
            return self.name
        if request == "ROLE":
            return self.wish
        if request == "INITIALIZE":  # a new game
            self.divined = set()
            self.announce = None
        if request == "TALK":
            self.talks += 1
            if self.talks == 1 and self.suspect > 0:
                return "VOTE Agent[%02d]" % self.suspect
            if self.announce:
                target, result = self.announce
                self.announce = None
                return "DIVINED Agent[%02d] %s" % (target, result)
            return "Over"
        if request == "WHISPER":
            return "Over"
        target = None
        if request == "VOTE":
            target = self.suspect if self.suspect in self.others() else self.pick(self.others())
        elif request == "DIVINE":
            fresh = [a for a in self.others() if a not in self.divined]
            target = self.pick(fresh or self.others())
            self.divined.add(target)
        elif request == "GUARD":
            target = self.pick(self.others())
        elif request == "ATTACK":
            target = self.pick(self.others(exclude_wolves=True))
        if target is not None:
            return json.dumps({"agentIdx": target}, separators=(",", ":"))  # no space after ':'
        if request == "FINISH":
            print("game over; roles %s" % packet["gameInfo"]["roleMap"], file=sys.stderr)
        return None  # INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH: no reply


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: bot.py HOST PORT [NAME [ROLE]]")
    host, port = sys.argv[1], int(sys.argv[2])
    name = sys.argv[3] if len(sys.argv) > 3 else "starter"
    wish = sys.argv[4] if len(sys.argv) > 4 else "none"
    for _ in range(100):  # the server may still be starting: retry for a few seconds
        try:
            sock = socket.create_connection((host, port))
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("cannot connect to %s:%d" % (host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    inp = sock.makefile("r", encoding="utf-8")
    agent = Agent(name, wish)
    for line in inp:  # one packet per line, until the server closes the connection
        if not line.strip():
            continue
        reply = agent.answer(json.loads(line))
        if reply is not None:
            sock.sendall((reply + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
