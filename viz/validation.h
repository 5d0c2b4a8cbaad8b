// Validation: a measured timeline (exec on GPUs, docs/TIMELINE.md) against the simulator's
// prediction of the same program. Operations are matched by rank, stream, statement line, loop
// iteration and name (and their order among equal keys); the stream is dropped from the key for
// what stays unmatched, since a runtime may name its streams differently. The report gives the
// end-to-end error, every matched operation's duration and start error, errors grouped by
// operation (which part of the model is wrong), and predicted vs measured overlap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/timeline.h"

namespace braid::viz {

struct OpComparison {
  int64_t rank = 0;
  std::string stream;     // the measured op's stream name
  std::string name;       // "matmul"
  int line = 0;
  std::string iteration;  // "StreamIdx=2"
  TimelineOpKind kind = TimelineOpKind::kCompute;
  double measuredStartUs = 0, measuredUs = 0;
  double predictedStartUs = 0, predictedUs = 0;
  // (predicted - measured) / measured duration; 0 for ops that take no time in both.
  double error() const;
  double startErrorUs() const { return predictedStartUs - measuredStartUs; }
};

// Matched ops of one statement (name and line) and kind, over ranks and iterations.
struct OpGroupError {
  std::string name;
  int line = 0;
  TimelineOpKind kind = TimelineOpKind::kCompute;
  size_t count = 0;
  double measuredUs = 0, predictedUs = 0;  // sums of durations
  double medianError = 0;                  // of the signed per-op errors
  double error() const { return measuredUs > 0 ? (predictedUs - measuredUs) / measuredUs : 0; }
};

struct OverlapComparison {
  int64_t rank = -1;  // -1: all ranks
  double measuredCommUs = 0, measuredHiddenUs = 0;
  double predictedCommUs = 0, predictedHiddenUs = 0;
  double measuredFraction() const { return measuredCommUs > 0 ? measuredHiddenUs / measuredCommUs : 0; }
  double predictedFraction() const { return predictedCommUs > 0 ? predictedHiddenUs / predictedCommUs : 0; }
};

struct Validation {
  double measuredMakespanUs = 0, predictedMakespanUs = 0;
  double makespanError() const;  // (predicted - measured) / measured
  std::vector<OpComparison> ops;  // matched ops that take time in at least one timeline
  size_t matchedMarkers = 0;      // matched zero-length ops (Synchronize, Wait markers)
  std::vector<std::string> unmatchedMeasured, unmatchedPredicted;  // "rank 0, Stream 1: matmul (line 16, StreamIdx=3)"
  std::vector<OpGroupError> groups;     // largest |error| x time first
  std::vector<OverlapComparison> overlap;  // all ranks first, then each rank
  double medianAbsOpError() const;
  double maxAbsOpError() const;
};

// Throws Error when the measured timeline is not a measurement of ranks the prediction has.
Validation compareTimelines(const Timeline& measured, const Timeline& predicted);

std::string validationReport(const Validation& v, size_t maxOps);
std::string validationJson(const Validation& v);

// One timeline holding both, for one Perfetto trace: every rank's streams twice, named
// "measured: Stream 1" and "predicted: Stream 1".
Timeline sideBySide(const Timeline& measured, const Timeline& predicted);

}  // namespace braid::viz
