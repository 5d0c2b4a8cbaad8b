// The measurement plan's options from `braid calibrate --measure`'s flags, with the defaults of
// each backend. Shared by `braid` (which checks the flags before loading the run module) and the
// run module (which plans with them on every rank).
#pragma once

#include <algorithm>
#include <cstdint>

#include "cli/measure_config.h"
#include "ir/error.h"
#include "sim/measure_plan.h"

namespace braid::cli {

// Throws Error on a bad flag (an unknown dtype or part, sizes out of order).
inline sim::MeasurePlanOptions measurePlanOptions(const MeasureConfig& c, int64_t world, int64_t ranksPerNode) {
  const bool cuda = c.backend == "cuda";
  sim::MeasurePlanOptions o;
  o.quick = c.quick;
  o.dtypes = sim::parseMeasureDtypes(c.dtypes.empty() ? (cuda ? "bf16,fp16,fp32" : "fp32") : c.dtypes);
  if (!c.only.empty()) o.parts = sim::parseMeasureParts(c.only);
  o.minBytes = c.minBytes > 0 ? c.minBytes : 64 * 1024.0;
  // CPU defaults are small: the CPU backend is for testing the driver, and big GEMMs take seconds.
  o.maxBytes = c.maxBytes > 0 ? c.maxBytes : cuda ? 1024.0 * 1024 * 1024 : 4.0 * 1024 * 1024;
  o.maxGemmFlops = c.maxGemmFlops > 0 ? c.maxGemmFlops : cuda ? 4e12 : 1e9;
  if (!c.gemmShapes.empty()) o.extraGemms = sim::parseGemmShapes(c.gemmShapes);
  o.world = world;
  o.ranksPerNode = std::max<int64_t>(1, std::min(world, ranksPerNode));
  o.streams = cuda;
  o.copyEngines = cuda && world >= 2 && o.ranksPerNode >= world;  // CUDA IPC stays on one host
  if (c.commPriority != "normal" && c.commPriority != "high")
    throw Error("--comm-priority must be normal or high, got '" + c.commPriority + "'");
  if (c.commPriority == "high" && !cuda) throw Error("--comm-priority high needs --backend cuda (stream priorities)");
  o.commHighPriority = c.commPriority == "high";
  sim::checkMeasurePlanOptions(o);
  return o;
}

}  // namespace braid::cli
