#!/usr/bin/env node
// Starter client for Geister (GPW/GAT contest server protocol), JavaScript (Node.js), standard
// library only.
//
// Run:    kakehiki play geister --seat 'tcp-cmd:node starters/geister/javascript/bot.js {host} {port}' --seat builtin:random
//         or over stdin/stdout, without arguments: --seat 'cmd:node starters/geister/javascript/bot.js'
// Check:  kakehiki check geister --seat 'tcp-cmd:node starters/geister/javascript/bot.js {host} {port}'
//
// Protocol (docs/protocols/geister.md): ASCII lines; the server ends its lines with CR LF.
//   server: SET?                  -> you: SET:ABCD   (the 4 of your ghosts A..H that are red)
//   server: MOV?<48-char board>   -> you: MOV:A,N    (ghost A..H, direction N E W S)
//   server: OK / OKR / OKB / NG   (accepted / captured red / captured blue / refused)
//   server: WON:/LST:/DRW:<board> the game is over; the server closes the connection.
// The board: 16 groups "x y letter", your ghosts A..H first (R/B), then the opponent's (u for
// unknown); 99 = captured, 88 = escaped; y = 0 is the opponent's side, north.
//
// Strategy (replace it with yours): escape with a blue ghost when one stands on an exit corner,
// otherwise a random legal move, preferring to move forward; red ghosts chosen at random.
"use strict";
const net = require("net");
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

// A legal move "MOV:X,D" for the 48-character board of a MOV? message.
function chooseMove(board) {
  const ghosts = [];
  for (let i = 0; i < 8; i++) {
    ghosts.push({ x: +board[3 * i], y: +board[3 * i + 1], colour: board[3 * i + 2] });
  }
  const alive = (g) => g.colour === "R" || g.colour === "B"; // captured ghosts show 99 and r/b
  const forward = [];
  const other = [];
  const dirs = [["N", 0, -1], ["E", 1, 0], ["W", -1, 0], ["S", 0, 1]];
  for (let i = 0; i < 8; i++) {
    const g = ghosts[i];
    if (!alive(g)) continue;
    const letter = "ABCDEFGH"[i];
    for (const [d, dx, dy] of dirs) {
      const exit = (g.x === 0 && g.y === 0 && "NW".includes(d)) || (g.x === 5 && g.y === 0 && "NE".includes(d));
      if (g.colour === "B" && exit) return `MOV:${letter},${d}`; // a blue ghost escapes: we win
      const nx = g.x + dx;
      const ny = g.y + dy;
      const inside = nx >= 0 && nx < 6 && ny >= 0 && ny < 6;
      const blocked = ghosts.some((h) => alive(h) && h.x === nx && h.y === ny); // our own ghost
      if (inside && !blocked) (d === "N" ? forward : other).push(`MOV:${letter},${d}`);
    }
  }
  if (forward.length && (!other.length || below(10) < 6)) return forward[below(forward.length)];
  return other[below(other.length)];
}

function play(input, write) {
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  lines.on("line", (line) => {
    const msg = line.replace(/\r$/, ""); // lines, never raw chunks: TCP may merge messages
    if (msg === "SET?") {
      const letters = "ABCDEFGH".split("");
      for (let i = 7; i > 0; i--) {
        const j = below(i + 1);
        [letters[i], letters[j]] = [letters[j], letters[i]];
      }
      write("SET:" + letters.slice(0, 4).join("") + "\r\n");
    } else if (msg.startsWith("MOV?") && msg.length >= 52) {
      write(chooseMove(msg.slice(4)) + "\r\n");
    } else if (/^(WON|LST|DRW):/.test(msg)) {
      process.stderr.write("result " + msg + "\n");
      process.exit(0);
    } // OK, OKR, OKB, NG: nothing to do
  });
}

// Connect, retrying for a few seconds while the server starts.
function connect(host, port, attempt = 0) {
  const socket = net.connect({ host, port: Number(port) }, () => {
    socket.setNoDelay(true);
    play(socket, (text) => socket.write(text));
  });
  socket.on("error", (e) => {
    if (attempt >= 100) throw e;
    setTimeout(() => connect(host, port, attempt + 1), 50);
  });
}

const args = process.argv.slice(2);
if (args.length === 2) connect(args[0], args[1]); // HOST PORT: the contest's TCP protocol
else play(process.stdin, (text) => process.stdout.write(text)); // or stdin/stdout
