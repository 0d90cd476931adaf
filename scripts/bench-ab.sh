#!/bin/bash
# Alternated A/B timing of one scene: runs `BIN bench SCENE -n STEPS` for each binary in turn,
# ROUNDS times, and prints per binary the best median, the median of the medians and the fastest
# step. This machine's speed drifts by 10-40 % within minutes; alternating the binaries and
# reading the median of medians separates a few-per-cent change from the drift better than one
# run of each.
# usage: scripts/bench-ab.sh ROUNDS STEPS SCENE BIN...
R=$1; N=$2; S=$3; shift 3
for i in $(seq $R); do for b in "$@"; do echo "$b $($b bench $S -n $N | tail -2 | head -1 | awk '{print $3, $4}')"; done; done | python3 -c "
import sys
d={}
for l in sys.stdin:
    b,med,mn=l.split(); d.setdefault(b,[]).append((float(med),float(mn)))
for b,v in d.items():
    m=sorted(x[0] for x in v)
    print('%-18s best median %.4f  median of medians %.4f  min %.4f' % (b.split('/')[-1], m[0], m[len(m)//2], min(x[1] for x in v)))
"
