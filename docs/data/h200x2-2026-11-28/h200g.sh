#!/bin/bash
# Session 5, call G (2 H200): tune --graph --confirm end to end (predicted replays confirmed by
# measured replays).
TAG=${TAG:-g}; BUDGET=${BUDGET:-300}; source .dev/common.sh
build braid braid_exec_cli
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
for shape in "8192 8192 3584" "4096 8192 1792"; do set -- $shape
  timeout 150 $B tune ag_matmul --machine h200 --graph --devices 2 --m $1 --k $2 --n $3 --streams 1,2,4 --protocols A,B --pools chunks --defer-waits off --confirm 3 --repeat 20 > $R/tune_$1.txt 2>&1
  echo "tune $1 rc=$?"; tail -n 14 $R/tune_$1.txt
done
el done
