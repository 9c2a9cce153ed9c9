#!/bin/bash
# Three runs of the same question, each from a fresh cache: the same Answer and first ten
# findings (issue 42). $1: a checkout to run (default: this worktree).
cd ${1:-/work/wt/answer4}
export CQ_SERVER=0 CQ_LLM=off
for spec in "moto|how are buckets created?" "MONAI|how does the persistent dataset cache transformed items on disk" "sqlfluff|how does the linter skip files that are too large"; do
  tree=${spec%%|*}; q=${spec#*|}
  for n in 1 2 3; do
    d=$(mktemp -d); export CQ_CACHE_DIR=$d
    python -m cq search --root /work/trees/head/$tree --format json "$q" 2>/dev/null | python -c "
import hashlib, json, sys
d = json.load(sys.stdin)
a = d['answer']
top = [(f['file'], f['line']) for f in d['findings'][:10]]
print(f\"$tree run $n: {a['name']} {a['file']}:{a['line']} provisional={a['provisional']} top10={hashlib.sha256(str(top).encode()).hexdigest()[:10]}\")"
    rm -rf $d
  done
done
