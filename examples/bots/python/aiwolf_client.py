#!/usr/bin/env python3
"""An AIWolf 0.6.x protocol client written from the spec, standard library only.

It behaves like the AIWolf Python client libraries: it connects to the server, reads one JSON
packet per line, keeps its own view of the game (gameInfo, talk lists rebuilt from the history
diffs), and answers the eight reply-expecting requests. It checks what the spec promises about
every packet (all keys present, compact JSON, ASCII) and exits with status 3 on a violation.

Usage: aiwolf_client.py HOST PORT [--name NAME] [--mode MODE]

Modes (for tests of the server's failure handling):
  normal      play legal random actions
  silent      answer NAME, then never reply
  slow        sleep past the time limit on the first VOTE of every game, then play on
  disconnect  close the connection at the first TALK of day 1 of the first game
  garbage     answer every request with garbage
  spaced      answer targets as {"agentIdx": N} (with a space; the server accepts it)
  chatty      send an extra unsolicited line after every reply
"""

import json
import os
import random
import socket
import sys
import time

PACKET_KEYS = {"gameInfo", "gameSetting", "request", "talkHistory", "whisperHistory"}
INFO_KEYS = {
    "agent", "attackVoteList", "attackedAgent", "cursedFox", "day", "divineResult", "executedAgent",
    "existingRoleList", "guardedAgent", "lastDeadAgentList", "latestAttackVoteList",
    "latestExecutedAgent", "latestVoteList", "mediumResult", "remainTalkMap", "remainWhisperMap",
    "roleMap", "statusMap", "talkList", "voteList", "whisperList",
}
SETTING_KEYS = {
    "enableNoAttack", "enableNoExecution", "enableRoleRequest", "maxAttackRevote", "maxRevote",
    "maxSkip", "maxTalk", "maxTalkTurn", "maxWhisper", "maxWhisperTurn", "playerNum", "randomSeed",
    "roleNumMap", "talkOnFirstDay", "timeLimit", "validateUtterance", "votableInFirstDay",
    "voteVisible", "whisperBeforeRevote",
}


def fail(msg):
    sys.stderr.write("protocol violation: %s\n" % msg)
    sys.stderr.flush()
    sys.exit(3)


class Client:
    def __init__(self, name, mode):
        self.name = name
        self.mode = mode
        # Seeded from the seat's own seed the referee passes (KAKEHIKI_SEED) and the agent's
        # name, so a game replays the same from its replay.
        self.rng = random.Random("%s:%s" % (os.environ.get("KAKEHIKI_SEED", ""), name))
        self.info = None
        self.setting = None
        self.talks = {}  # (day, idx) -> talk, from diffs (like AIWolfPy)
        self.games = 0
        self.first_vote_done = False

    def check(self, line, p):
        if set(p) != PACKET_KEYS:
            fail("packet keys %r" % sorted(p))
        if json.dumps(p, separators=(",", ":"), ensure_ascii=True) != line:
            fail("packet is not compact ASCII JSON: %r" % line[:200])
        for obj in (p, p["gameInfo"], p["gameSetting"]):
            if obj is not None and list(obj) != sorted(obj):
                fail("keys not in alphabetical order: %r" % list(obj))
        gi = p["gameInfo"]
        if gi is not None:
            if set(gi) != INFO_KEYS:
                fail("gameInfo keys %r" % sorted(gi))
            if p["talkHistory"] is not None or p["whisperHistory"] is not None:
                fail("a packet with gameInfo and histories")
            role = gi["roleMap"].get(str(gi["agent"]))
            if role is None:
                fail("own role missing")
            if p["request"] != "FINISH":
                for a, r in gi["roleMap"].items():
                    if int(a) != gi["agent"] and not (role == "WEREWOLF" and r == "WEREWOLF"):
                        fail("sees the role of agent %s" % a)
            if role != "WEREWOLF" and (gi["whisperList"] or gi["attackVoteList"] or gi["latestAttackVoteList"]):
                fail("non-wolf sees wolf information")
        if p["gameSetting"] is not None and set(p["gameSetting"]) != SETTING_KEYS:
            fail("gameSetting keys %r" % sorted(p["gameSetting"]))
        if p["request"] in ("TALK", "DAILY_FINISH") and (p["talkHistory"] is None or p["whisperHistory"] is None):
            fail("diff packet without both histories")

    def alive_others(self):
        me = self.info["agent"]
        return [int(a) for a, s in self.info["statusMap"].items() if s == "ALIVE" and int(a) != me]

    def target(self, request):
        gi = self.info
        cands = self.alive_others()
        if request == "ATTACK":
            cands = [a for a in cands if gi["roleMap"].get(str(a)) != "WEREWOLF"]
        if not cands:
            return ""
        t = self.rng.choice(cands)
        if self.mode == "spaced":
            return '{"agentIdx": %d}' % t
        return json.dumps({"agentIdx": t}, separators=(",", ":"))

    def talk(self):
        gi = self.info
        r = self.rng.random()
        if r < 0.5:
            return "Over"
        if r < 0.6:
            return "Skip"
        cands = self.alive_others()
        if not cands:
            return "Over"
        t = self.rng.choice(cands)
        if r < 0.8:
            return "VOTE Agent[%02d]" % t
        return "ESTIMATE Agent[%02d] WEREWOLF" % t

    def handle(self, p):
        req = p["request"]
        if p["gameInfo"] is not None:
            self.info = p["gameInfo"]
        if p["gameSetting"] is not None:
            self.setting = p["gameSetting"]
        for t in p["talkHistory"] or []:
            self.talks[(t["day"], t["idx"])] = t
        if req == "NAME":
            return self.name
        if self.mode == "garbage" and req in ("ROLE", "TALK", "WHISPER", "VOTE", "DIVINE", "GUARD", "ATTACK"):
            return self.rng.choice(["???", "vote Agent[01]", "{\"agentIdx\":99}", "\u00e9\u00e8", "AND (VOTE Agent[01]), (x)", ""])
        if req == "INITIALIZE":
            self.games += 1
            self.first_vote_done = False
            self.talks = {}
            return None
        if req == "ROLE":
            return "none"
        if req == "TALK":
            if self.mode == "disconnect" and self.games == 1 and self.info and self.info["day"] == 1:
                raise ConnectionAbortedError("disconnecting on purpose")
            return self.talk()
        if req == "WHISPER":
            return "Over"
        if req in ("VOTE", "DIVINE", "GUARD", "ATTACK"):
            if req == "VOTE" and self.mode == "slow" and not self.first_vote_done:
                self.first_vote_done = True
                time.sleep(self.setting["timeLimit"] / 1000.0 + 0.3)
            return self.target(req)
        return None


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    host, port = args[0], int(args[1])
    name, mode = "pyclient", "normal"
    i = 2
    while i < len(args):
        if args[i] == "--name":
            name = args[i + 1]
            i += 2
        elif args[i] == "--mode":
            mode = args[i + 1]
            i += 2
        else:
            sys.stderr.write("unknown argument %r\n" % args[i])
            sys.exit(2)
    sock = socket.create_connection((host, port))
    client = Client(name, mode)
    buf = b""
    named = False
    try:
        while True:
            chunk = sock.recv(8192)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                try:
                    line = raw.decode("ascii")
                except UnicodeDecodeError:
                    fail("non-ASCII bytes on the wire")
                p = json.loads(line)
                client.check(line, p)
                if mode == "silent" and named:
                    continue
                reply = client.handle(p)
                if p["request"] == "NAME":
                    named = True
                if reply is not None:
                    out = reply + "\n"
                    if mode == "chatty":
                        out += "unsolicited chatter\n"
                    sock.sendall(out.encode("utf-8"))
    except (ConnectionAbortedError, ConnectionResetError, BrokenPipeError):
        pass
    sock.close()


if __name__ == "__main__":
    main()
