// cudaSoftwareVersions (cuda_info.h): asks the CUDA runtime and NCCL, in CUDA builds only.
#include "exec/cuda_info.h"

#ifdef BRAID_WITH_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace braid::exec {

#ifdef BRAID_WITH_CUDA
namespace {

// CUDA writes versions as 1000 major + 10 minor (13000 is 13.0).
std::string cudaVersionString(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

std::vector<std::pair<std::string, std::string>> cudaSoftwareVersions() {
  std::vector<std::pair<std::string, std::string>> out;
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) out.emplace_back("cuda", cudaVersionString(v));
  if (cudaDriverGetVersion(&v) == cudaSuccess) out.emplace_back("cuda_driver", cudaVersionString(v));
  // NCCL writes 10000 major + 100 minor + patch since 2.9 (22803 is 2.28.3).
  if (ncclGetVersion(&v) == ncclSuccess)
    out.emplace_back("nccl", std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
                                 std::to_string(v % 100));
  return out;
}
#else
std::vector<std::pair<std::string, std::string>> cudaSoftwareVersions() { return {}; }
#endif

}  // namespace braid::exec
