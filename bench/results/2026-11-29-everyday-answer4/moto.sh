#!/bin/bash
# moto examples of issue 42: cold (fresh cache) and warm (index built); $1: a checkout to run
cd ${1:-/work/wt/answer4}
T=/work/trees/head/moto
export CQ_SERVER=0 CQ_LLM=off
run() {
  for mode in cold warm; do
    if [ $mode = cold ]; then d=$(mktemp -d); export CQ_CACHE_DIR=$d; else export CQ_CACHE_DIR=/work/wt/answer4/.tmp/c7; fi
    /work/wt/answer4/.venv/bin/python -m cq search --root $T "$@" > /tmp/answer4-moto.out 2>/dev/null
    echo "[$mode] ${*:0:80}"
    grep -m1 '^\*\*Answer' /tmp/answer4-moto.out | cut -c1-250
    grep -A2 '^## Relevant Functions' /tmp/answer4-moto.out | sed -n 3p | cut -c1-140
    [ $mode = cold ] && rm -rf $d
  done
}
run "The specified bucket does not exist"
run -F "The specified bucket does not exist"
run "where is S3Backend defined?"
run "where is EC2Backend defined?"
run "who calls FakeBucket.create_from_cloudformation_json?"
run "who calls create_bucket?"
run "where is S3Backend imported?"
run getBucket
run "how are buckets created?"
run "$(cat /work/wt/answer4/bench/results/2026-11-29-everyday-answer3/traceback.txt)"
