#!/usr/bin/env python3
"""Starter agent for Werewolf, natural-language division (aiwolf-nlp-server protocol), Python 3,
standard library only (a small WebSocket client is included below).

Usage: bot.py URL [NAME]   (URL: ws://host:port/ws, the server's WebSocket address)

Protocol (docs/protocols/werewolf-nlp.md, details in docs/werewolf-nlp.md): the server sends one
JSON packet per WebSocket text message, with the keys request, info, setting, talk_history,
whisper_history (and new_talk / new_whisper in group-chat mode). Answer these requests with one
text message:
  NAME -> your name
  TALK, WHISPER -> free text ("Over" ends your turn for the day, "Skip" passes this turn)
  VOTE, DIVINE, GUARD, ATTACK -> a player's in-game name, e.g. "Agent[03]"
and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH and the group-chat packets
(TALK_PHASE_START, ...: this agent stays silent in group chat). One game per connection: the
server closes it after FINISH, and the agent exits (`kakehiki serve werewolf --protocol nlp`
plays the next game with the agents that connect next).

Run (the referee launches it and fills in {url}; four built-in agents fill the 5-player village):
  kakehiki play werewolf-nlp --seat 'ws-cmd:python3 starters/werewolf-nlp/python/bot.py {url}' --fill builtin:sample-en
Check:  kakehiki check werewolf-nlp --seat 'ws-cmd:python3 starters/werewolf-nlp/python/bot.py {url}'

Strategy (replace it with yours, e.g. with a language model): each day pick a suspect at random
(a werewolf the seer has found, if any), say "I will vote for @Agent[NN]." and vote for it; the
seer also announces its divination ("I divined @Agent[NN]: a werewolf." or "...: human."); divine,
guard and attack random valid players. These sentences are the built-in agents' templates, so
`builtin:sample` and `builtin:sample-en` understand them.
"""
import base64
import hashlib
import json
import os
import random
import socket
import struct
import sys
import time
from urllib.parse import urlsplit

# The referee passes the match seed: use it and a match replays exactly from its seed.
rng = random.Random(int(os.environ.get("KAKEHIKI_SEED", "0")))


# ---- A minimal WebSocket client (RFC 6455): text messages, ping/pong, close --------------------
class WebSocket:
    def __init__(self, url):
        parts = urlsplit(url)
        if parts.scheme != "ws":
            raise ValueError("only ws:// URLs: %s" % url)
        host, port = parts.hostname, parts.port or 80
        path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        for _ in range(100):  # the server may still be starting: retry for a few seconds
            try:
                self.sock = socket.create_connection((host, port))
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise OSError("cannot connect to %s:%d" % (host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        # The opening handshake: an HTTP/1.1 upgrade request with a random key ...
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)
        ).encode())
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in lines[0] + " ":
            raise OSError("WebSocket handshake refused: %s" % lines[0])
        # ... answered with 101 and the key's SHA-1 digest.
        accept = base64.b64encode(hashlib.sha1(
            (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        headers = {k.strip().lower(): v.strip() for k, v in
                   (line.split(":", 1) for line in lines[1:] if ":" in line)}
        if headers.get("sec-websocket-accept") != accept:
            raise OSError("WebSocket handshake: wrong Sec-WebSocket-Accept")

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        # Client frames are masked (RFC 6455 section 5.3); the mask need not be reproducible.
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._send_frame(0x1, text.encode("utf-8"))

    def recv(self):
        """The next text message, or None once the server has closed the connection."""
        message = b""
        while True:
            try:
                b0, b1 = self._take(2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack(">H", self._take(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", self._take(8))[0]
                mask = self._take(4) if b1 & 0x80 else None
                payload = self._take(n)
            except (EOFError, OSError):
                return None
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = b0 & 0x0F
            if opcode == 0x8:  # close: answer it and stop
                try:
                    self._send_frame(0x8, payload[:2])
                except OSError:
                    pass
                return None
            if opcode == 0x9:  # ping -> pong
                self._send_frame(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):  # (continuation of) a message
                message += payload
                if b0 & 0x80:  # FIN: the message is complete
                    return message.decode("utf-8")
            # 0xA (pong) and anything else: ignored


# ---- The agent --------------------------------------------------------------------------------
class Agent:
    def __init__(self, name):
        self.name = name
        self.me = ""  # our in-game name, e.g. "Agent[02]"
        self.roles = {}  # player -> role we know: our own; a werewolf also sees the others
        self.alive = []  # living players, from the latest info's status_map
        self.said_vote = False  # whether we said today whom we vote for
        self.suspect = None  # whom we vote for today
        self.announce = None  # the seer's divination to tell the village
        self.divined = set()

    def others(self, exclude_wolves=False):
        return [a for a in self.alive if a != self.me
                and not (exclude_wolves and self.roles.get(a) == "WEREWOLF")]

    def pick(self, candidates):
        return rng.choice(candidates) if candidates else self.me

    def update(self, info, request):
        self.me = info["agent"]
        self.roles = dict(info["role_map"])
        self.alive = sorted(a for a, s in info["status_map"].items() if s == "ALIVE")
        if request == "DAILY_INITIALIZE":  # a new day
            self.said_vote = False
            wolf = self.roles.get(self.me) == "WEREWOLF"
            self.suspect = self.pick(self.others(exclude_wolves=wolf))
            judge = info.get("divine_result")  # seer only: last night's divination
            if judge and judge["target"] in self.alive:
                werewolf = judge["result"] == "WEREWOLF"
                self.announce = "I divined @%s: %s." % (
                    judge["target"], "a werewolf" if werewolf else "human")
                if werewolf:
                    self.suspect = judge["target"]

    def answer(self, packet):
        request = packet["request"]
        if packet.get("info") is not None:
            self.update(packet["info"], request)
        if request == "NAME":
            return self.name
        if request == "INITIALIZE":  # a new game: the setting has the limits and the roles
            self.divined = set()
            self.announce = None
            self.suspect = None
        if request == "TALK":
            if self.announce:
                said, self.announce = self.announce, None
                return said
            if not self.said_vote and self.suspect in self.others():
                self.said_vote = True
                return "I will vote for @%s." % self.suspect
            return "Over"
        if request == "WHISPER":
            return "Over"
        if request == "VOTE":
            return self.suspect if self.suspect in self.others() else self.pick(self.others())
        if request == "DIVINE":
            fresh = [a for a in self.others() if a not in self.divined]
            target = self.pick(fresh or self.others())
            self.divined.add(target)
            return target
        if request == "GUARD":
            return self.pick(self.others())
        if request == "ATTACK":
            return self.pick(self.others(exclude_wolves=True))
        if request == "FINISH":
            print("game over; roles %s" % packet["info"]["role_map"], file=sys.stderr)
        return None  # INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH, ...: no reply


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: bot.py URL [NAME]")
    name = sys.argv[2] if len(sys.argv) > 2 else "starter"
    ws = WebSocket(sys.argv[1])
    agent = Agent(name)
    while True:  # one packet per message, until the server closes the connection
        text = ws.recv()
        if text is None:
            break
        reply = agent.answer(json.loads(text))
        if reply is not None:
            ws.send(reply)


if __name__ == "__main__":
    main()
