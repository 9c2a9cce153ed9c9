#!/bin/bash
# N runs of some tests under `nice -n 10` beside two `yes` burners (a fix shown to hold).
#   VENV=<venv> CQ_TEST_MINILM_WHEEL=<wheel> fileloop.sh NAME N [pytest args...]   (in a checkout)
NAME=$1; N=$2; shift 2
: "${VENV:?}" "${CQ_TEST_MINILM_WHEEL:?}"
yes > /dev/null & B1=$!
yes > /dev/null & B2=$!
for i in $(seq 1 "$N"); do
  nice -n 10 "$VENV/bin/python" -m pytest -q -rfE -p no:cacheprovider --basetemp="/dev/shm/$NAME-tmp" "$@" 2>&1 | tail -15
  echo "run $i rc=${PIPESTATUS[0]} $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
done
kill $B1 $B2
rm -rf "/dev/shm/$NAME-tmp"
