#!/usr/bin/env python3
"""Honest NAC bots' reply times beside a neighbour with many spinning processes.

Three bots think 120 ms of CPU time per turn (crates/referee/tests/bots/cpu.py burn 120); the
fourth seat is a quiet bot (alone) or one that starts 16 spinning children. Runs:

  alone        --sandbox best, quiet neighbour
  no cpu layer --sandbox off (no cgroup at all), spinning neighbour
  cpu layer    --sandbox best, spinning neighbour
  quota 0.5    --sandbox best --cpus-per-bot 0.5, spinning neighbour

and prints the median and maximum reply time of the honest seats (a timeout counts as the turn
limit; a seat that timed out is dead for the rest of the match) and their moves that were not ok.

usage: scripts/cpu_fairness.py [--bin target/debug/kakehiki] [--matches 3] [--turn-ms 2000]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BOT = os.path.join(ROOT, "crates/referee/tests/bots/cpu.py")


def play(binary, seats, extra, seed, turn_ms):
    with tempfile.TemporaryDirectory() as tmp:
        replay = os.path.join(tmp, "r.jsonl")
        cmd = [binary, "play", "nac", "--seed", str(seed), "--opt", f"turn_ms={turn_ms}",
               "--replay", replay, "--json"]
        for s in seats:
            cmd += ["--seat", s]
        cmd += extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times, bad = [], {}
        with open(replay) as f:
            for line in f:
                ev = json.loads(line)
                if ev.get("event") != "turn":
                    continue
                for m in ev["moves"]:
                    if m["seat"] == 0:
                        continue
                    if m["status"] != "ok":
                        bad[m["status"]] = bad.get(m["status"], 0) + 1
                    if "time_us" in m:
                        times.append(m["time_us"] / 1000)
        return times, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/debug/kakehiki"))
    ap.add_argument("--matches", type=int, default=3)
    ap.add_argument("--turn-ms", type=int, default=2000)
    a = ap.parse_args()
    honest = f"cmd:python3 {BOT} burn 120"
    quiet = f"cmd:python3 {BOT} burn 0"
    spinner = f"cmd:python3 {BOT} spin 16"
    runs = [
        ("alone", quiet, ["--sandbox", "best"]),
        ("spinner, no cpu layer (--sandbox off)", spinner, ["--sandbox", "off"]),
        ("spinner, cpu layer", spinner, ["--sandbox", "best"]),
        ("spinner, cpu layer, --cpus-per-bot 0.5", spinner,
         ["--sandbox", "best", "--cpus-per-bot", "0.5"]),
    ]
    for label, fourth, extra in runs:
        times, bad = [], {}
        for seed in range(1, a.matches + 1):
            t, b = play(a.bin, [fourth, honest, honest, honest], extra, seed, a.turn_ms)
            times += t
            for k, v in b.items():
                bad[k] = bad.get(k, 0) + v
        failed = ", ".join(f"{v} {k}" for k, v in sorted(bad.items())) or "none"
        print(f"{label:42} median {statistics.median(times):6.0f} ms  max {max(times):6.0f} ms"
              f"  (moves with a time: {len(times)}; not ok: {failed})")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
