#!/usr/bin/env bash
# Builds braid's libFuzzer targets (clang, ASan + UBSan) in build-fuzz/, seeds each target's
# corpus from the repository's own files, and runs every target for SECONDS (default 60) each.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: host_ir_parser scalar_parser verify
#        machine_json timeline_json measurements_json; all by default). FUZZ_JOBS=N runs N workers per target
# at once; FUZZ_BUILD_DIR=DIR uses another build directory configured with -DBRAID_FUZZ=ON
# (build-fuzz by default); FUZZ_NO_BUILD=1 uses the binaries already there.
# A crash, hang, leak or broken round trip stops that target, leaves the input under
# DIR/artifacts/TARGET/ and makes the script exit 1 (docs/FUZZING.md says what to do).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(host_ir_parser scalar_parser verify machine_json timeline_json measurements_json)
jobs=${FUZZ_JOBS:-1}
out=${FUZZ_BUILD_DIR:-build-fuzz}

if [[ -z ${FUZZ_NO_BUILD:-} ]]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$out" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    -DBRAID_FUZZ=ON -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF -DBRAID_WITH_TORCH=OFF \
    -DBRAID_WITH_Z3=OFF -DBRAID_WITH_GRAPHVIZ=OFF "${launcher[@]}" >/dev/null
  cmake --build "$out" -j2 --target "${targets[@]/#/fuzz_}"
fi

# Seeds: copies of files kept in git for other reasons (nothing duplicated in the repository),
# plus every reproducer of tests/fuzz/inputs/. Scalar seeds are the extents and loop bounds
# found between braces in the host IR files.
seed() {
  local target=$1 dir=$out/corpus/$1
  mkdir -p "$dir"
  local hir=(examples/*.hir tests/*/data/*.hir tests/*/data/*/*.hir tests/*/data/*/*/*.hir
             tests/passes/golden/*.hir)
  case $target in
    host_ir_parser | verify) cp -f "${hir[@]}" "$dir"/ 2>/dev/null || true ;;
    scalar_parser)
      grep -ho '{[^{}]*}' "${hir[@]}" 2>/dev/null | sed 's/^{ *//; s/ *}$//' | sort -u |
        awk -v d="$dir" '{ f = d "/extent_" NR; printf "%s", $0 > f; close(f) }' ;;
    machine_json) cp -f sim/presets/*.json examples/machines/*.json "$dir"/ ;;
    timeline_json) cp -f tests/viz/data/*.json "$dir"/ ;;
    measurements_json) cp -f docs/data/*/measurements.json docs/data/*/*.measurements.json docs/data/*/*/*.measurements.json "$dir"/ 2>/dev/null || true ;;
  esac
  cp -f tests/fuzz/inputs/"$target"/* "$dir"/ 2>/dev/null || true
}

status=0
total=0
for t in "${targets[@]}"; do
  seed "$t"
  mkdir -p "$out/artifacts/$t" "$out/logs"
  rm -f "$out"/logs/"$t".*.log
  echo "fuzz: $t for ${seconds}s x $jobs job(s)"
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: one over 2 GiB exhausts the machine.
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
         -artifact_prefix="$out/artifacts/$t/")
  [[ -f fuzz/dictionaries/$t.dict ]] && flags+=(-dict=fuzz/dictionaries/"$t".dict)
  # Independent workers sharing one corpus directory (each picks up the others' finds when it
  # reloads), so every worker's statistics can be summed.
  pids=()
  for ((j = 0; j < jobs; j++)); do
    "$out/fuzz/fuzz_$t" "${flags[@]}" -seed=$((j + 1)) "$out/corpus/$t" >"$out/logs/$t.$j.log" 2>&1 &
    pids+=($!)
  done
  for ((j = 0; j < jobs; j++)); do
    if ! wait "${pids[j]}"; then
      status=1
      echo "fuzz: $t FAILED; see $out/logs/$t.$j.log and $out/artifacts/$t/" >&2
      grep -m3 -E 'ERROR|SUMMARY|CheckFailure|what\(\)' "$out/logs/$t.$j.log" >&2 || true
    fi
  done
  runs=$(cat "$out"/logs/"$t".*.log | { grep -o 'stat::number_of_executed_units: [0-9]*' || true; } |
         awk '{ s += $2 } END { print s + 0 }')
  echo "fuzz: $t: $runs executions"
  total=$((total + runs))
done
echo "fuzz: $total executions in total"
exit $status
