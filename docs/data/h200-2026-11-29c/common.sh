# Sourced by the device scripts: environment, timer, results tarball, build.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - T0) )); }
R=/tmp/r; rm -rf $R; mkdir -p $R
finish() { tar czf $OUT/results-$TAG.tgz -C $R . ; el "tarred"; }
trap finish EXIT
B=build-gpu/cli/braid
build() {
  cmake -S . -B build-gpu -G Ninja -DBRAID_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || { tail -30 $R/configure.log; exit 1; }
  cmake --build build-gpu -j32 --target "$@" > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -60; exit 1; }
  el "built $*"
}
