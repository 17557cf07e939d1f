"""A Python bot for the sandbox language test: READY, then echo every line."""
import sys

print("READY", flush=True)
for line in sys.stdin:
    print("ECHO " + line.rstrip("\n"), flush=True)
