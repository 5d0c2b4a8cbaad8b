// CUDA and NCCL return-code checks for the CUDA backend: a failure becomes a braid::Error naming
// the call, so a rank reports it and exits instead of continuing on a broken device.
#pragma once

#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <string>

#include <cuda_runtime_api.h>

#include "ir/error.h"

namespace braid::exec {

inline void checkCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so the report is about this call
    throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
  }
}

// A non-blocking stream for a communicator: at the device's greatest priority when `high` (the
// block scheduler then dispatches its kernels' blocks before those of normal-priority streams, as
// blocks of running kernels retire), else at the default priority.
inline cudaStream_t createCommStream(bool high) {
  int least = 0, greatest = 0;
  if (high) checkCuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  cudaStream_t s = nullptr;
  checkCuda(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high ? greatest : 0), "cudaStreamCreateWithPriority");
  return s;
}

}  // namespace braid::exec

#endif
