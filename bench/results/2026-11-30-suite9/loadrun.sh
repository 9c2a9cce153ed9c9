#!/bin/bash
# The whole suite (or any pytest arguments) under `nice -n 10` beside two `yes` burners, with
# suite3's reap.py (every process's CPU), suite8's timeplug (each test's CPU and times) and
# outplug (each failure as it happens), the 1-minute load sampled every 20 s.
#   VENV=<venv> OUT=<dir> CQ_TEST_MINILM_WHEEL=<wheel> loadrun.sh CLONE NAME [pytest args...]
CLONE=$1; NAME=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd); R=$(dirname "$HERE")
: "${VENV:?}" "${OUT:?}" "${CQ_TEST_MINILM_WHEEL:?}"
cd "$CLONE" || exit 2
yes > /dev/null & B1=$!
yes > /dev/null & B2=$!
( while kill -0 $B1 2>/dev/null; do echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/$NAME.load"; sleep 20; done ) & S=$!
CPUPLUG_DIR=$OUT/$NAME CPUPLUG_RUN=$NAME PYTHONPATH=$HERE:$R/2026-11-29-suite3:$R/2026-11-30-suite8 \
  nice -n 10 "$VENV/bin/python" "$R/2026-11-29-suite3/reap.py" \
  "$VENV/bin/python" -m pytest -q -rfE -p timeplug -p outplug -p no:cacheprovider \
  --basetemp="/dev/shm/$NAME-tmp" --durations=60 "$@"
echo "rc=$?"
kill $B1 $B2 $S
