#!/usr/bin/env python3
"""An example bot for Negotiate and Conquer (`nac`) and Religion War (`religion-war`).

It speaks the original contests' stdin/stdout protocol (standard library only):
  - write READY and flush;
  - read the settings block ("T P L", then the L weights) once;
  - each turn read the block: "t X", L affinity lines (own column first), the own real line, and on
    day turns (X = D or W) the count line; reply with 5 (day) or 2 (night) target indices.

Strategy: estimate each rival's affinity from the public lines, then spend each pick on the target
where it most improves our standing weighted by the target's weight.
"""
import sys


def read_ints(stream):
    line = stream.readline()
    if not line:
        sys.exit(0)  # the referee closed our input: the game is over
    return [int(x) for x in line.split()]


def choose(weights, public, real, picks, gain):
    targets = len(weights)
    mine = list(real)
    chosen = []
    for _ in range(picks):
        best, best_value = 0, None
        for i in range(targets):
            rivals = public[i][1:]
            top = max(rivals)
            value = 0.0
            if mine[i] <= top < mine[i] + gain:
                value += weights[i] * 2.0
            elif mine[i] > top:
                value += weights[i] * 0.1
            else:
                value += weights[i] / (2.0 + top - mine[i])
            if mine[i] <= min(rivals):
                value += weights[i]
            if best_value is None or value > best_value:
                best, best_value = i, value
        mine[best] += gain
        chosen.append(best)
    return chosen


def main():
    out = sys.stdout
    out.write("READY\n")
    out.flush()
    inp = sys.stdin
    turns, _players, targets = read_ints(inp)
    weights = read_ints(inp)
    for _ in range(turns):
        header = inp.readline().split()
        if not header:
            return
        label = header[1]
        day = label in ("D", "W")
        public = [read_ints(inp) for _ in range(targets)]
        real = read_ints(inp)
        if day:
            read_ints(inp)  # picks per target in the previous night
        picks = choose(weights, public, real, 5 if day else 2, 1 if day else 2)
        out.write(" ".join(str(p) for p in picks) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
