// Versions of the CUDA software a CUDA build runs with (for measurement files' meta): "cuda" (the
// runtime), "cuda_driver" (what the driver supports), "nccl". Empty without CUDA.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace braid::exec {

std::vector<std::pair<std::string, std::string>> cudaSoftwareVersions();

}  // namespace braid::exec
