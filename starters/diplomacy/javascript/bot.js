#!/usr/bin/env node
// Starter bot for Diplomacy (standard map), JavaScript (Node.js), standard library only.
//
// Run:    kakehiki play diplomacy --seat 'cmd:node starters/diplomacy/javascript/bot.js' --fill builtin:random
// Check:  kakehiki check diplomacy --seat 'cmd:node starters/diplomacy/javascript/bot.js'
//
// Protocol (docs/protocols/diplomacy.md): one JSON object per line on stdin, one reply per line on
// stdout. Every request has a "seq"; echo it in the reply.
//   {"type":"start","power":"FRANCE","powers":[...],...}     -> {"ready":true}
//   {"type":"press","phase":"S1901M","round":1,"inbox":[...]}  -> {"messages":[{"to":"ITALY","text":"..."}]}
//   {"type":"phase","phase":"S1901M","orderable":["A PAR",...],"state":{...},"history":[...]}
//                                                           -> {"orders":["A PAR H",...]}
//     (retreat phases "...R": orderable = your dislodged units; adjustment phases "...A":
//      "builds":n with the locations you may build on, or "removals":n with your units)
//   {"type":"end",...}                                         the game is over: exit.
//
// Strategy (replace it with yours): it needs no map. Every unit holds, dislodged units disband,
// builds are armies on randomly chosen offered centres, removals take random units; in the first
// press round it greets one random power.
"use strict";
const readline = require("readline");

// splitmix64 seeded from the match seed the referee passes, so a match replays exactly.
let state = BigInt(process.env.KAKEHIKI_SEED || "0");
function below(n) {
  const M = (1n << 64n) - 1n;
  state = (state + 0x9e3779b97f4a7c15n) & M;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
  return Number((z ^ (z >> 31n)) % BigInt(n));
}

function shuffle(list) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = below(i + 1);
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

// Send one reply line, echoing the request's seq.
function reply(body, msg) {
  process.stdout.write(JSON.stringify({ ...body, seq: msg.seq }) + "\n");
}

function ordersFor(msg) {
  const phase = msg.phase || ""; // e.g. S1901M, F1901R, W1901A
  const orderable = [...(msg.orderable || [])];
  if (phase.endsWith("R")) return orderable.map((unit) => unit + " D"); // retreats: disband
  if (phase.endsWith("A")) {
    shuffle(orderable);
    // An army: every home centre takes one. "STP/NC" -> "STP".
    const builds = orderable.slice(0, msg.builds || 0).map((loc) => `A ${loc.split("/")[0]} B`);
    const removals = orderable.slice(0, msg.removals || 0).map((unit) => unit + " D");
    return builds.concat(removals);
  }
  return orderable.map((unit) => unit + " H"); // movement: every unit holds ("A PAR H")
}

let power = null;
let others = [];
let greeted = false;
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    process.stderr.write(`unreadable message: ${e.message}\n`);
    return;
  }
  if (msg.type === "start") {
    power = msg.power;
    others = (msg.powers || []).filter((p) => p !== power);
    reply({ ready: true }, msg);
  } else if (msg.type === "press") {
    const messages = [];
    if (!greeted && others.length) {
      // Press: up to 6 messages, each to one other power.
      greeted = true;
      messages.push({ to: others[below(others.length)], text: "Peace between us?" });
    }
    reply({ messages }, msg);
  } else if (msg.type === "phase") {
    reply({ orders: ordersFor(msg) }, msg);
  } else if (msg.type === "end") {
    process.stderr.write(`${power}: game over (${msg.reason})\n`);
    process.exit(0);
  }
});
