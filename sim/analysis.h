// What a finished schedule means: per-rank busy time of computation and communication, their
// overlap, peak concurrency, utilization, and the critical path (the chain of operations, host
// issue and waits that decides the makespan).
#pragma once

#include "sim/simulate.h"

namespace braid::sim {

// Fills stats, makespanUs, overlapFraction, peakConcurrency, criticalPath and the event counts
// of `r` from r.graph, r.sim and r.engine.
void analyze(SimResult& r);

// Total length of the union of [start, end) intervals (sorted in place).
double unionLength(std::vector<std::pair<double, double>>& intervals);
// Length of the intersection of two unions of intervals (each sorted in place).
double overlapLength(std::vector<std::pair<double, double>>& a, std::vector<std::pair<double, double>>& b);

}  // namespace braid::sim
