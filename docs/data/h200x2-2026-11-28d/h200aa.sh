#!/bin/bash
# Session 8, call AA (2 H200): every catalog workload, both transports, three launchers, protocols A/B/C, at the session's executor (as session 4's call A, docs/data/h200x2-2026-11-28/h200a.sh).
TAG=${TAG:-aa}; BUDGET=${BUDGET:-545}; source .dev/common.sh
build braid braid_exec_cli
nvidia-smi -L > $R/gpus.txt; nvidia-smi topo -m > $R/topo.txt 2>&1
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
$B lower --list > $R/list.txt 2>&1
W=$(awk '{print $1}' $R/list.txt | grep -E '^[a-z_0-9]+$')
echo "$W" | wc -l
ARGS="--backend cuda --m 64 --k 32 --n 32 --streams 2 --timeout 60 --sweep protocol=A,B,C"
mkdir -p $R/c; port=29600; n=0; pass=0; fail=0
: > $R/summary.txt
for w in $W; do for L in ${LAUNCHERS:-ranks torchrun mpirun}; do for t in nccl cuda; do
  if (( $(left) < 25 )); then echo "NOTRUN $w $L $t" >> $R/summary.txt; continue; fi
  port=$((port+1)); log=$R/c/${w}_${L}_${t}.log
  case $L in
    ranks) timeout 150 $B run $w $ARGS --backend-override $t --ranks 2 > $log 2>&1 ;;
    torchrun) timeout 150 torchrun --nproc-per-node 2 --master-port $port --no-python -- $B run $w $ARGS --backend-override $t > $log 2>&1 ;;
    mpirun) timeout 150 mpirun --allow-run-as-root -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port -x NCCL_NVLS_ENABLE $B run $w $ARGS --backend-override $t > $log 2>&1 ;;
  esac
  rc=$?; n=$((n+1))
  comm=$(grep -o '\[nccl[^,]*\|\[cuda-ipc[^,]*' $log | sort -u | tr '\n' ' ')
  cfg=$(grep -c "^braid run: $w" $log)
  echo "$w $L $t rc=$rc configs=$cfg $comm" >> $R/summary.txt
  if [ $rc = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); tail -4 $log; fi
done; done; done
el "launches $n pass $pass fail $fail"
cat $R/summary.txt | awk '{print $4}' | sort | uniq -c
grep -v "rc=0" $R/summary.txt | head -40
