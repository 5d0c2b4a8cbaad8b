// Session 12 probe: the SM clock after the GPU idled g ms, sampled on the device. A one-thread
// kernel reads %globaltimer and clock64 every 5 us; the clock over an interval is cycles / time.
// Modes, each after 10 ms idle + 3 ms of GEMMs (clocks up) + an idle gap g:
//   alone:   the trace kernel only (one SM busy)
//   load:    the trace kernel beside 2048x2048x4096 bf16 GEMMs back to back (every SM busy)
//   barrier: a tiny kernel and a host synchronize first (what braid run's barrier does), then load
// Writes JSON lines: mode, gap, rep, launch-to-start latency (host realtime vs globaltimer), and the
// samples (us since the first, MHz over the interval ending there).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <time.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void trace(unsigned long long* out, int n, unsigned long long period) {
  unsigned long long next = gt();
  for (int i = 0; i < n; ++i) {
    unsigned long long t;
    do { t = gt(); } while (t < next);
    out[2 * i] = t; out[2 * i + 1] = clock64();
    next = t + period;
  }
}
static void spin(double ms) { auto t = std::chrono::steady_clock::now(); while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count() < ms) {} }
static unsigned long long realtime() { timespec ts; clock_gettime(CLOCK_REALTIME, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "w");
  cublasHandle_t h; cublasCreate(&h);
  const int M = 2048, N = 2048, K = 4096, W = 4096;
  __nv_bfloat16 *a, *b, *c, *wa, *wb, *wc;
  CK(cudaMalloc(&a, 2ull * M * K)); CK(cudaMalloc(&b, 2ull * K * N)); CK(cudaMalloc(&c, 2ull * M * N));
  CK(cudaMalloc(&wa, 2ull * W * W)); CK(cudaMalloc(&wb, 2ull * W * W)); CK(cudaMalloc(&wc, 2ull * W * W));
  std::vector<__nv_bfloat16> host(size_t(W) * W);
  std::mt19937 rng(1);
  for (auto& x : host) x = __float2bfloat16(float(int(rng() % 5) - 2));
  CK(cudaMemcpy(a, host.data(), 2ull * M * K, cudaMemcpyHostToDevice)); CK(cudaMemcpy(b, host.data(), 2ull * K * N, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(wa, host.data(), 2ull * W * W, cudaMemcpyHostToDevice)); CK(cudaMemcpy(wb, host.data(), 2ull * W * W, cudaMemcpyHostToDevice));
  cudaStream_t s1, s2; cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  const int NS = 400; unsigned long long* d; CK(cudaMalloc(&d, 16ull * NS));
  std::vector<unsigned long long> hs(2 * NS);
  float one = 1, zero = 0;
  auto gemm = [&](cudaStream_t s, int m, int n, int k, void* A, void* B, void* C) {
    cublasSetStream(h, s);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_16BF, m, B, CUDA_R_16BF, k, &zero, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  for (int i = 0; i < 50; ++i) { gemm(s1, M, N, K, a, b, c); gemm(s1, W, W, W, wa, wb, wc); }
  trace<<<1, 1, 0, s2>>>(d, 10, 5000);
  CK(cudaDeviceSynchronize());
  std::vector<double> gaps = {0, 0.05, 0.2, 0.5, 1, 2, 3, 5, 7, 10, 12, 15, 20, 30, 50, 100, 300};
  const char* modes[] = {"alone", "load", "barrier"};
  std::mt19937 sh(2);
  for (int rep = 0; rep < 3; ++rep)
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<double> order = gaps; std::shuffle(order.begin(), order.end(), sh);
      for (double g : order) {
        spin(10);
        for (int i = 0; i < 18; ++i) gemm(s1, W, W, W, wa, wb, wc);  // ~3 ms
        CK(cudaDeviceSynchronize());
        spin(g);
        if (mode == 2) { trace<<<1, 1, 0, s2>>>(d, 1, 0); CK(cudaDeviceSynchronize()); }
        unsigned long long launched = realtime();
        trace<<<1, 1, 0, s2>>>(d, NS, 5000);
        if (mode >= 1) for (int i = 0; i < 40; ++i) gemm(s1, M, N, K, a, b, c);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hs.data(), d, 16ull * NS, cudaMemcpyDeviceToHost));
        fprintf(f, "{\"mode\":\"%s\",\"gap_ms\":%g,\"rep\":%d,\"start_latency_us\":%.1f,\"samples\":[", modes[mode], g, rep,
                (double(hs[0]) - double(launched)) / 1000.0);
        for (int i = 1; i < NS; ++i)
          fprintf(f, "%s[%.1f,%.0f]", i > 1 ? "," : "", (hs[2 * i] - hs[0]) / 1000.0,
                  double(hs[2 * i + 1] - hs[2 * i - 1]) / double(hs[2 * i] - hs[2 * i - 2]) * 1000.0);
        fprintf(f, "]}\n");
      }
      printf("rep %d mode %s\n", rep, modes[mode]); fflush(stdout);
    }
  fclose(f);
  return 0;
}
