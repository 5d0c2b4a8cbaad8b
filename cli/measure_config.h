// `braid calibrate --measure`'s flags: run the microbenchmarks (exec/microbench.h) on every rank
// and write a measurement file (docs/CALIBRATION.md). Like RunConfig, no libtorch types: `braid`
// hands it to the run module (cli/exec_module.h), which links libtorch.
#pragma once

#include <cstdint>
#include <string>

namespace braid::cli {

struct MeasureConfig {
  std::string backend = "cuda";  // cuda (device events, NCCL) or cpu (host clock, Gloo / self)
  int64_t ranks = 0;             // 0: every visible GPU (cuda), 1 (cpu); ignored under torchrun/mpirun
  std::string out;               // the measurement file (rank 0 writes it)
  std::string machine;           // whose efficiency curves place the sizes ("": by the GPU's name)
  bool quick = false;            // --quick: knots only, x4 size steps
  int64_t reps = 10;             // timed runs per measurement (the median is kept)
  int64_t warmup = 3;            // untimed runs first
  double coolDownMs = 0;         // idle before each measurement (MicrobenchPlan::coolDownMs)
  std::string gemmOperands = "integers";  // the GEMMs' operand values (MicrobenchPlan::gemmOperands)
  std::string dtypes;            // GEMM dtypes ("": bf16,fp16,fp32 on cuda, fp32 on cpu)
  std::string only;              // parts to measure ("": all)
  double minBytes = 0;           // 0: 64 KiB
  double maxBytes = 0;           // 0: 1 GiB on cuda, 4 MiB on cpu
  double maxGemmFlops = 0;       // 0: 4e12 on cuda, 1e9 on cpu
  std::string gemmShapes;        // extra GEMM shapes, "MxNxK,..." ("": none)
  double timeoutSec = 900;       // the whole run, every rank
  std::string commPriority = "normal";  // the communicators' streams: normal or high (greatest) priority
};

}  // namespace braid::cli
