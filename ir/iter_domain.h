// IterDomain: one axis of a tensor, as nvFuser has it: an extent, a kind (iteration, reduction,
// broadcast), a parallel type (Serial, Stream, DIDx, DIDy) and an rfactor flag. Scheduling
// (split, merge) makes new IterDomains; each records the transform that produced it so passes
// can map a loop axis back to the logical axis it came from.
#pragma once

#include <string>

#include "ir/scalar.h"
#include "ir/types.h"

namespace braid {

class IterDomain;

// The transform that produced an IterDomain (null for a logical axis).
struct IdTransform {
  enum class Kind { kSplit, kMerge };
  Kind kind = Kind::kSplit;
  // kSplit: in -> (outer, inner). inner_split: the factor is the inner extent (nvFuser's default);
  // otherwise the factor is the outer extent (how Stream / DID axes are usually split off).
  IterDomain* in = nullptr;
  Scalar factor;
  bool inner_split = true;
  // kMerge: (outer, inner) -> out.
  IterDomain* outer = nullptr;
  IterDomain* inner = nullptr;
  IterDomain* out = nullptr;
};

class IterDomain {
 public:
  IterDomain(int id, Scalar extent, IterType iter_type = IterType::kIteration,
             ParallelType parallel = ParallelType::kSerial, bool rfactor = false)
      : id_(id), extent_(std::move(extent)), iter_type_(iter_type), parallel_(parallel), rfactor_(rfactor) {}

  int id() const { return id_; }
  const Scalar& extent() const { return extent_; }
  IterType iterType() const { return iter_type_; }
  ParallelType parallelType() const { return parallel_; }
  bool isRFactor() const { return rfactor_; }
  bool isReduction() const { return iter_type_ == IterType::kReduction; }
  bool isBroadcast() const { return iter_type_ == IterType::kBroadcast; }
  bool isStream() const { return parallel_ == ParallelType::kStream; }
  bool isDeviceParallel() const { return braid::isDeviceParallel(parallel_); }
  const IdTransform* definition() const { return definition_; }

  void parallelize(ParallelType p) { parallel_ = p; }
  void setRFactor(bool rf) { rfactor_ = rf; }
  void setIterType(IterType t) { iter_type_ = t; }
  void setExtent(Scalar e) { extent_ = std::move(e); }
  void setDefinition(const IdTransform* d) { definition_ = d; }

  // `iS5{i2}`, `iStreamIdx4{i0}`, `ideviceIdx.x22{2}rf`, `rS23{4}rf`, `iS21{( ceilDiv(i0, 3) )}`.
  std::string str() const;
  // Same kind, parallel type, extent and rfactor flag (ids may differ).
  bool sameAs(const IterDomain& other) const;

 private:
  int id_;
  Scalar extent_;
  IterType iter_type_;
  ParallelType parallel_;
  bool rfactor_;
  const IdTransform* definition_ = nullptr;
};

}  // namespace braid
