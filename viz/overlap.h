// How much communication hides under computation, from a timeline: on each rank, the time when a
// communication runs while other device work (compute, copy, memset) also runs is *hidden*; the
// rest of the communication time is *exposed* (nothing else runs: the rank waits for the network).
// Unions are taken per rank, so two overlapping communications count once.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/timeline.h"

namespace braid::viz {

struct Span {
  double begin = 0;
  double end = 0;
  double length() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

// Sorted, disjoint, non-empty spans covering the same time as `spans`.
std::vector<Span> unionOf(std::vector<Span> spans);
// Both inputs sorted and disjoint (as unionOf returns them).
std::vector<Span> intersectionOf(const std::vector<Span>& a, const std::vector<Span>& b);
std::vector<Span> differenceOf(const std::vector<Span>& a, const std::vector<Span>& b);
double totalLength(const std::vector<Span>& spans);

// Whether an op kind is communication, or device work that communication can hide under.
bool isCommunication(TimelineOpKind k);
bool isDeviceWork(TimelineOpKind k);  // compute, copy, memset

struct RankOverlap {
  int64_t rank = 0;
  std::vector<Span> communication;  // union of communication ops
  std::vector<Span> work;           // union of compute, copy and memset ops
  std::vector<Span> hidden;         // communication while work runs
  std::vector<Span> exposed;        // communication while no work runs
};

struct OverlapSummary {
  std::vector<RankOverlap> ranks;  // ranks with ops, ascending
  double communicationUs = 0;      // sum over ranks of the communication union
  double hiddenUs = 0;
  double exposedUs = 0;
  // hiddenUs / communicationUs (0 without communication).
  double hiddenFraction() const { return communicationUs > 0 ? hiddenUs / communicationUs : 0; }
};

RankOverlap rankOverlap(const Timeline& t, int64_t rank);
OverlapSummary overlapOf(const Timeline& t);

}  // namespace braid::viz
