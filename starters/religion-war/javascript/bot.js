#!/usr/bin/env node
// Starter bot for Religion War (`religion-war`, CODE FESTIVAL 2014), JavaScript (Node.js), standard library only.
//
// Run:    kakehiki play religion-war --seat 'cmd:node starters/religion-war/javascript/bot.js' --fill builtin:random
// Check:  kakehiki check religion-war --seat 'cmd:node starters/religion-war/javascript/bot.js'
//
// Protocol (docs/protocols/religion-war.md; nac's with other labels): stdin/stdout, one line per
// message. Scoring comes once, after turn 9 (nac: after 5 and 9).
//   1. write READY
//   2. read the settings once: "T P L" (turns, seats, targets), then the L weights
//   3. every turn read the block: "t X" (X = W weekday / H holiday), L lines of affinity (your
//      own first), your real affinity line, and on days the previous turn's pick counts; answer
//      with 5 target indices on a day, 2 on a night.
// After the last turn the referee closes stdin: exit then.
//
// Strategy (replace it with yours): each pick goes to the target with the best weight per point
// of affinity we lack to lead it, with a little seeded noise to break ties.
"use strict";
const readline = require("readline");

// splitmix64 seeded from the match seed the referee passes, so a match replays exactly.
let state = BigInt(process.env.KAKEHIKI_SEED || "0");
function nextRandom() {
  const M = (1n << 64n) - 1n;
  state = (state + 0x9e3779b97f4a7c15n) & M;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
  return z ^ (z >> 31n);
}

// How much we want one more point on a target: most when just behind or tied.
function value(weight, mine, top) {
  const gap = mine - top;
  return gap < 0 ? (weight * 100) / (1 - gap) : (weight * 100) / (2 + gap);
}

const ints = (line) => line.trim().split(/\s+/).filter((x) => x !== "").map(Number);

async function main() {
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) process.exit(0); // EOF: the game is over
    return r.value;
  };
  process.stdout.write("READY\n");
  const [turns, , targets] = ints(await next());
  const weights = ints(await next());
  for (let t = 0; t < turns; t++) {
    const header = (await next()).trim(); // "t X"
    const label = header.slice(-1);
    const day = label === "D" || label === "W"; // D/N are nac's labels: this bot plays both
    const pub = [];
    for (let i = 0; i < targets; i++) pub.push(ints(await next()));
    const mine = ints(await next());
    if (day) await next(); // last turn's pick counts (unused here)

    const [picks, gain] = day ? [5, 1] : [2, 2];
    const reply = [];
    for (let p = 0; p < picks; p++) {
      let best = 0;
      let bestValue = -1;
      for (let i = 0; i < targets; i++) {
        const top = Math.max(0, ...pub[i].slice(1)); // the best rival's public affinity
        const v = value(weights[i], mine[i], top) + Number(nextRandom() % 1000n) / 100;
        if (v > bestValue) [best, bestValue] = [i, v];
      }
      mine[best] += gain;
      reply.push(best);
    }
    process.stdout.write(reply.join(" ") + "\n");
  }
}

main();
