#!/bin/bash
# Per-file CPU (s), wall (s) and tests from timeplug's records:  agg.sh DIR [N]
cat "$1"/*.tsv | awk -F'\t' '{split($1,a,"::"); c[a[1]]+=$2; w[a[1]]+=$3; n[a[1]]++}
  END {for (f in c) printf "%7.2f %8.1f %4d %s\n", c[f], w[f], n[f], f}' | sort -rn | head -"${2:-20}"
