#!/bin/bash
# Alternating runs (A B A B ...) of the same tests in two checkouts, -n 0, each run's CPU as
# suite3's reap.py counts it.   VENV=<venv> ab.sh CHECKOUT_A CHECKOUT_B ROUNDS [pytest args...]
A=$1; B=$2; ROUNDS=$3; shift 3
HERE=$(cd "$(dirname "$0")" && pwd); R=$(dirname "$HERE")
: "${VENV:?}"
for r in $(seq 1 "$ROUNDS"); do for X in "$A" "$B"; do
  out=$(cd "$X" && "$VENV/bin/python" "$R/2026-11-29-suite3/reap.py" "$VENV/bin/python" -m pytest -q \
    -p no:cacheprovider --basetemp="/dev/shm/ab-$r-$(basename "$X")" "$@" 2>&1 | grep -E "passed|failed|REAP rc" | tr '\n' ' ')
  rm -rf "/dev/shm/ab-$r-$(basename "$X")"
  echo "$X round $r: $out"
done; done
