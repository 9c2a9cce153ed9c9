#!/bin/bash
# $1 = label, $2 = prebuild (1/0)
rm -rf /tmp/cq-c2-$1
cd ${MOTO:?tree}
export CQ_CACHE_DIR=/tmp/cq-c2-$1 CQ_SERVER=0 CQ_SEMANTIC=0
if [ "$2" = 1 ]; then cq index >/dev/null 2>&1; fi
s=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o /tmp/c2t-$1 cq search "how are buckets created?" --format json > /tmp/c2-$1.json 2>/dev/null
e=$(date +%s.%N)
python3 -c "
import json; d=json.load(open('/tmp/c2-$1.json')); t=d['run']['timings_ms']; a=d.get('answer') or {}
u,s=open('/tmp/c2t-$1').read().split()
print('$1', round($e-$s,2), 'cpu', round(float(u)+float(s),2), 'index', t.get('index'), 'wait', t.get('index.wait'), 'enrich', t.get('enrich'), 'classify', t.get('classify'), 'rewrite', t.get('rewrite'), a.get('name'))"
