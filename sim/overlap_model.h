// The model's view of an overlap microbenchmark (measurements.h, OverlapMeasurement; exec's
// microbench runs it): GEMMs back to back on one stream of every team member, the collectives
// back to back on the communicator's stream (NCCL's or the copy engines'), both started together. The engine (engine.h)
// schedules exactly that, with the machine's contention model, and the times are read the way the
// microbenchmark reads them: the median GEMM wholly inside the collectives' span, and the median
// collective wholly inside the GEMMs' span. Calibration fits the contention constants to it, so
// what it fits is what the simulator then does.
#pragma once

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

struct OverlapPrediction {
  double gemmAloneUs = 0, gemmBesideUs = 0;
  double commAloneUs = 0, commBesideUs = 0;
};

// `copyEngines`: the collective runs on the copy engines (its cost copyEngineCollectiveCost, no SMs
// held), else on NCCL. Throws Error when the collective's team does not fit the machine's topology.
OverlapPrediction simulateOverlap(const Machine& mc, const GemmShape& gemm, const CollectiveMeasurement& collective,
                                  bool copyEngines = false);

}  // namespace braid::sim
