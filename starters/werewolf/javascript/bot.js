#!/usr/bin/env node
// Starter agent for Werewolf (AIWolf 0.6.x TCP protocol), JavaScript (Node.js), standard library
// only.
//
// Usage:  node bot.js HOST PORT [NAME [ROLE]]   (ROLE: the role to ask for, e.g. SEER; default none)
// Run:    kakehiki play werewolf --seat 'tcp-cmd:node starters/werewolf/javascript/bot.js {host} {port}' --fill builtin:sample
// Check:  kakehiki check werewolf --seat 'tcp-cmd:node starters/werewolf/javascript/bot.js {host} {port}'
//
// Protocol (docs/protocols/werewolf.md): the server sends one JSON packet per line, with the keys
// request, gameInfo, gameSetting, talkHistory, whisperHistory. Answer these requests with one line:
//   NAME -> your name         ROLE -> none, or the role you would like
//   TALK, WHISPER -> an utterance ("VOTE Agent[03]", "Over", "Skip", ...)
//   VOTE, DIVINE, GUARD, ATTACK -> {"agentIdx":N}
// and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH. Games follow one another on
// the same connection: read until the server closes it.
//
// Strategy (replace it with yours): each day pick a suspect at random (a werewolf the seer has
// found, if any), say "VOTE Agent[NN]" and vote for it; the seer also announces its last
// divination; divine, guard and attack random valid agents.
"use strict";
const net = require("net");
const readline = require("readline");

// splitmix64 seeded from the match seed the referee passes, so a match replays exactly.
let state = BigInt(process.env.KAKEHIKI_SEED || "0");
function pick(candidates) {
  if (!candidates.length) return -1;
  const M = (1n << 64n) - 1n;
  state = (state + 0x9e3779b97f4a7c15n) & M;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
  return candidates[Number((z ^ (z >> 31n)) % BigInt(candidates.length))];
}

const agentName = (a) => `Agent[${String(a).padStart(2, "0")}]`; // at least two digits

const [host, port, name = "starter", wish = "none"] = process.argv.slice(2);
if (!port) {
  process.stderr.write("usage: node bot.js HOST PORT [NAME [ROLE]]\n");
  process.exit(2);
}
const me = { id: 0, roles: {}, alive: [], talks: 0, suspect: -1, announce: null, divined: new Set() };

function others(excludeWolves = false) {
  return me.alive.filter((a) => a !== me.id && !(excludeWolves && me.roles[a] === "WEREWOLF"));
}

function update(info, request) {
  me.id = info.agent;
  me.roles = info.roleMap; // our own role; a werewolf also sees the others
  me.alive = Object.keys(info.statusMap).filter((a) => info.statusMap[a] === "ALIVE").map(Number);
  if (request === "DAILY_INITIALIZE") {
    // A new day.
    me.talks = 0;
    me.suspect = pick(others(me.roles[me.id] === "WEREWOLF"));
    const judge = info.divineResult; // seer only: last night's divination
    if (judge && me.alive.includes(judge.target)) {
      me.announce = `DIVINED ${agentName(judge.target)} ${judge.result}`;
      if (judge.result === "WEREWOLF") me.suspect = judge.target;
    }
  }
}

// The reply line to a packet, or null when the request expects none.
function answer(packet) {
  const request = packet.request;
  if (packet.gameInfo) update(packet.gameInfo, request);
  let target;
  switch (request) {
    case "NAME":
      return name;
    case "ROLE":
      return wish;
    case "TALK":
      me.talks += 1;
      if (me.talks === 1 && me.suspect > 0) return "VOTE " + agentName(me.suspect);
      if (me.announce) {
        const said = me.announce;
        me.announce = null;
        return said;
      }
      return "Over";
    case "WHISPER":
      return "Over";
    case "VOTE":
      target = others().includes(me.suspect) ? me.suspect : pick(others());
      break;
    case "DIVINE": {
      const fresh = others().filter((a) => !me.divined.has(a));
      target = pick(fresh.length ? fresh : others());
      me.divined.add(target);
      break;
    }
    case "GUARD":
      target = pick(others());
      break;
    case "ATTACK":
      target = pick(others(true));
      break;
    case "INITIALIZE": // a new game
      me.divined.clear();
      me.announce = null;
      return null;
    default:
      return null; // DAILY_INITIALIZE, DAILY_FINISH, FINISH: no reply
  }
  return JSON.stringify({ agentIdx: target }); // {"agentIdx":N}, no spaces
}

// Connect, retrying for a few seconds while the server starts.
function connect(attempt = 0) {
  const socket = net.connect({ host, port: Number(port) }, () => {
    socket.setNoDelay(true);
    const lines = readline.createInterface({ input: socket, crlfDelay: Infinity });
    lines.on("line", (line) => {
      if (!line.trim()) return;
      const reply = answer(JSON.parse(line)); // one packet per line
      if (reply !== null) socket.write(reply + "\n");
    });
  });
  socket.on("error", (e) => {
    if (attempt >= 100) throw e;
    setTimeout(() => connect(attempt + 1), 50);
  });
}

connect();
