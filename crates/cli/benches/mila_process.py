"""Time MILA's Game.process() on the phases of a `kakehiki diplomacy adjudicate` input file.

A comparison only: MILA is the PyPI package `diplomacy` (AGPL). It is never linked or shipped;
install it in a virtual environment outside this repository and point the benchmark at that
interpreter (KAKEHIKI_MILA_PYTHON=/path/to/venv/bin/python). Only process() is timed, not the
setting up of each position. Prints {"phases": n, "seconds": s} on stdout.
"""
import json
import sys
import time

from diplomacy import Game


def main(path):
    total = 0.0
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            v = json.loads(line)
            g = Game()
            g.clear_units()
            g.clear_centers()
            g.set_current_phase(v["phase"])
            for power, units in v["units"].items():
                g.set_units(power, units)
            for power, centers in v.get("centers", {}).items():
                g.set_centers(power, centers)
            for power, orders in v.get("orders", {}).items():
                g.set_orders(power, orders)
            t = time.perf_counter()
            g.process()
            total += time.perf_counter() - t
            n += 1
    print(json.dumps({"phases": n, "seconds": total}))


if __name__ == "__main__":
    main(sys.argv[1])
