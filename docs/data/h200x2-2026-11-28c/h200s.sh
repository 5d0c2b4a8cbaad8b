#!/bin/bash
# Session 7, call S (2 H200): braid tune --graph --confirm over both transports (now the default on
# one host) for the GEMM + RS / AR family: the simulator's ranking and the measured top choices.
TAG=${TAG:-s}; BUDGET=${BUDGET:-400}; source .dev/common.sh
build braid
mkdir -p $R/tune
t() { local name=$1; shift
  if (( $(left) < 80 )); then echo "tune $name NOTRUN"; return; fi
  timeout 150 $B tune "$@" --machine h200 --graph --devices 2 --dtype bf16 --streams 1,2,4,8 --protocols A --pipelines collective --confirm 3 --repeat 20 > $R/tune/tune_$name.txt 2>&1
  echo "tune $name rc=$?"; tail -n 12 $R/tune/tune_$name.txt; }
t rsL matmul_rs --m 16384 --k 8192 --n 4096
t arL matmul_ar --m 16384 --k 8192 --n 4096
el tune
