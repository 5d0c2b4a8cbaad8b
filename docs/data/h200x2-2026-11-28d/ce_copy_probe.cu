// Probe (session 8): does a same-device cudaMemcpyAsync wait for a multi-wave kernel's dispatch
// (an SM copy), and does cudaMemcpyBatchAsync's PreferOverlapWithCompute hint or a high stream
// priority change that? A spinning kernel of many waves fills the SMs on stream A; a 64 MiB
// device-to-device copy is timed on stream B (events around it).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void spin(long long cycles, int* sink) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0 && cycles < 0) *sink = 1;
}

int main() {
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int clockKHz = 0; CK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, 0));
  size_t bytes = 64ull << 20;
  void *src, *dst; int* sink;
  CK(cudaMalloc(&src, bytes)); CK(cudaMalloc(&dst, bytes)); CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(src, 1, bytes));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t a, bn, bh;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&bn, cudaStreamNonBlocking, 0));
  CK(cudaStreamCreateWithPriority(&bh, cudaStreamNonBlocking, hi));
  cudaEvent_t e0, e1, k0, k1;
  for (cudaEvent_t* ev : {&e0, &e1, &k0, &k1}) CK(cudaEventCreate(ev));
  long long cycles = (long long)clockKHz * 50 / 1000;  // ~50 us per block
  int blocks = sms * 2 * 16;                              // 2 blocks per SM (1024 threads), 16 waves: ~800 us
  auto run = [&](const char* name, cudaStream_t b, int mode) {
    float best = 1e9, kern = 0;
    for (int rep = 0; rep < 5; ++rep) {
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(k0, a));
      spin<<<blocks, 1024, 0, a>>>(cycles, sink);
      CK(cudaEventRecord(k1, a));
      // start the copy once the kernel is surely dispatching its waves
      spin<<<1, 32, 0, b>>>(0, sink);  // nothing: keeps b's order simple
      CK(cudaEventRecord(e0, b));
      if (mode == 0) {
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b));
      } else {
        cudaMemcpyAttributes at = {};
        at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        at.flags = cudaMemcpyFlagPreferOverlapWithCompute;
        at.srcLocHint.type = cudaMemLocationTypeDevice; at.srcLocHint.id = 0;
        at.dstLocHint.type = cudaMemLocationTypeDevice; at.dstLocHint.id = 0;
        const void* srcs[1] = {src}; void* dsts[1] = {dst}; size_t sizes[1] = {bytes}; size_t idx[1] = {0};
#if CUDART_VERSION >= 13000
        CK(cudaMemcpyBatchAsync((const void* const*)dsts, srcs, sizes, 1, &at, idx, 1, b));
#else
        size_t fail = 0;
        CK(cudaMemcpyBatchAsync(dsts, (void**)srcs, sizes, 1, &at, idx, 1, &fail, b));
#endif
      }
      CK(cudaEventRecord(e1, b));
      CK(cudaDeviceSynchronize());
      float ms, kms; CK(cudaEventElapsedTime(&ms, e0, e1)); CK(cudaEventElapsedTime(&kms, k0, k1));
      if (ms < best) best = ms, kern = kms;
    }
    // alone
    float alone = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      CK(cudaEventRecord(e0, b));
      if (mode == 0) CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b));
      else {
        cudaMemcpyAttributes at = {};
        at.srcAccessOrder = cudaMemcpySrcAccessOrderStream; at.flags = cudaMemcpyFlagPreferOverlapWithCompute;
        at.srcLocHint.type = cudaMemLocationTypeDevice; at.dstLocHint.type = cudaMemLocationTypeDevice;
        const void* srcs[1] = {src}; void* dsts[1] = {dst}; size_t sizes[1] = {bytes}; size_t idx[1] = {0};
#if CUDART_VERSION >= 13000
        CK(cudaMemcpyBatchAsync((const void* const*)dsts, srcs, sizes, 1, &at, idx, 1, b));
#else
        size_t fail = 0;
        CK(cudaMemcpyBatchAsync(dsts, (void**)srcs, sizes, 1, &at, idx, 1, &fail, b));
#endif
      }
      CK(cudaEventRecord(e1, b)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (ms < alone) alone = ms;
    }
    std::printf("%-40s alone %8.1f us  beside a %8.1f us kernel %8.1f us\n", name, alone * 1e3, kern * 1e3, best * 1e3);
  };
  run("memcpyAsync DtoD, normal priority", bn, 0);
  run("memcpyAsync DtoD, high priority", bh, 0);
  run("memcpyBatchAsync overlap hint, normal", bn, 1);
  run("memcpyBatchAsync overlap hint, high", bh, 1);
  return 0;
}
