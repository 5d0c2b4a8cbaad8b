// What `braid calibrate --measure` measures: a plan of GEMM shapes, copy sizes, collectives
// (kind, team, bytes), point-to-point sizes, host costs and overlap pairs, laid around the points
// of a base machine's efficiency curves so that the fit (calibrate.h) has a measurement near each
// constant it fits. The plan is a Measurements whose times are all zero: the microbenchmark
// driver (exec/microbench.h, run by cli/exec_module) fills them in.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

// The groups of measurements, as `--only` names them.
inline constexpr const char* kMeasureParts[] = {"gemm", "copy", "collective", "p2p", "host", "overlap", "copy_engine", "power", "after_idle"};

struct MeasurePlanOptions {
  bool quick = false;  // knots only and x4 size steps, fewer shapes (a ~1 minute run on GPUs)
  std::vector<DataType> dtypes = {DataType::kBFloat16, DataType::kHalf, DataType::kFloat};
  double minBytes = 64 * 1024.0;       // collectives and p2p, smallest message
  double maxBytes = 1024.0 * 1024 * 1024;  // collectives, p2p and copies, largest
  double maxGemmFlops = 4e12;          // GEMMs above this are left out
  // GEMM shapes measured besides the plan's own (m, n, k): a workload's per-rank GEMMs, which the
  // calibrated machine then times as measured (gpu.measured_gemms), and whose slowdown beside
  // collectives the overlap part measures.
  std::vector<std::array<int64_t, 3>> extraGemms;
  int64_t world = 1;                   // ranks taking part
  int64_t ranksPerNode = 1;            // ranks on one host (they are numbered node by node)
  bool streams = true;                 // the device has streams and a clock (overlap is measurable)
  bool copyEngines = false;            // the ranks can run the copy-engine transport (CUDA, one host)
  bool commHighPriority = false;       // the communicators' streams run at the greatest priority (overlaps say so)
  std::vector<std::string> parts = {std::begin(kMeasureParts), std::end(kMeasureParts)};
};

// Throws Error on options no plan can come from (sizes out of order, an unknown part, no dtype).
void checkMeasurePlanOptions(const MeasurePlanOptions& o);

// The plan: GEMMs at the matmul-efficiency knots (and, unless quick, half a decade between them)
// in two aspect ratios and every dtype; copies at the memory-efficiency knots; every collective
// but SendRecv at every power of two (quick: of four) from minBytes to maxBytes, for team sizes
// 2, 4, 8, ... up to the world and the world itself; p2p at the same sizes within a node (and
// across nodes when there are several); every host cost; overlap of two GEMMs (quick: one) and
// every extraGemms shape beside an Allreduce, Allgather and ReduceScatter (quick: Allreduce) of
// the whole world on NCCL, and with copyEngines on the copy engines too (world >= 2 and streams);
// with copyEngines, Allgather, ReduceScatter and Allreduce of the whole world on the copy engines
// from 1 MiB (or minBytes) up. extraGemms are measured alone in every dtype, beside collectives in
// the first. power (with streams: it needs the device clock): an 8192^3 GEMM in the first dtype
// back to back for 400 ms, in ten 20 ms bursts 2, 5, 10, 20 and 50 ms apart (quick: 5 and 20) and
// at duty cycles 0.95-0.7 (quick: 0.9, 0.8), and 3072^3, 4096^3 and 6144^3 (quick: 4096^3) back to
// back for 300 ms, each from an idle second. after_idle (with streams): 100 host operations after
// 0.5-100 ms idle (quick: 2, 20, 100) and back to back, launched and replayed as a CUDA graph.
Measurements planMeasurements(const Machine& base, const MeasurePlanOptions& o);

// "gemm,copy" -> {"gemm", "copy"}; throws Error naming an unknown part.
std::vector<std::string> parseMeasureParts(const std::string& list);
// "16384x4096x4096,2048x4096x4096" (m x n x k each) -> the shapes; throws Error naming a bad one.
std::vector<std::array<int64_t, 3>> parseGemmShapes(const std::string& list);
// "bf16,fp32" -> the dtypes; throws Error naming an unknown one.
std::vector<DataType> parseMeasureDtypes(const std::string& list);

}  // namespace braid::sim
