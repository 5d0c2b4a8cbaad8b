// TensorView: a tensor of the Fusion IR and of host programs. It has a logical domain (its
// shape), a loop domain (how it is scheduled: split, merged, reordered, parallelized), an
// allocation domain (how its buffer is laid out and sharded; empty means "the logical domain"),
// a root domain when its defining op permutes (Set.Permute), a dtype, a memory type and an
// optional device mesh. Tensors and IterDomains are owned by their Fusion.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/device_mesh.h"
#include "ir/iter_domain.h"
#include "ir/types.h"

namespace braid {

class Expr;
class Fusion;

class TensorView {
 public:
  TensorView(Fusion* fusion, int name, DataType dtype, std::vector<IterDomain*> logical,
             MemoryType mem = MemoryType::kGlobal);

  Fusion* fusion() const { return fusion_; }
  int name() const { return name_; }  // the number in `T7`
  DataType dtype() const { return dtype_; }
  MemoryType memoryType() const { return mem_; }
  void setMemoryType(MemoryType m) { mem_ = m; }
  void setDtype(DataType t) { dtype_ = t; }
  // False for a tensor read from a dump that does not print dtypes (nvFuser before September
  // 2024: `T0_g[...]`); dtype() is then a stand-in (kFloat) and nameStr() leaves it out.
  bool dtypeKnown() const { return dtype_known_; }
  void setDtypeKnown(bool known) { dtype_known_ = known; }

  const std::vector<IterDomain*>& logical() const { return logical_; }
  const std::vector<IterDomain*>& loop() const { return loop_; }
  // The allocation domain; equals logical() unless setAllocationDomain was called.
  const std::vector<IterDomain*>& allocation() const { return allocation_.empty() ? logical_ : allocation_; }
  bool hasAllocationDomain() const { return !allocation_.empty(); }
  // For an output of Set.Permute: the domain in the input's order (empty otherwise).
  const std::vector<IterDomain*>& root() const { return root_; }
  void setRoot(std::vector<IterDomain*> root) { root_ = std::move(root); }
  // Replace the loop domain wholesale (the parser, which reads loop domains, uses this).
  void setLoop(std::vector<IterDomain*> loop) { loop_ = std::move(loop); }
  void setLogical(std::vector<IterDomain*> logical) { logical_ = std::move(logical); }

  IterDomain* axis(int i) const;  // loop axis; negative counts from the end
  int nDims() const { return static_cast<int>(loop_.size()); }

  const std::optional<DeviceMesh>& deviceMesh() const { return mesh_; }
  bool hasDeviceMesh() const { return mesh_.has_value(); }
  // Whether the mesh was given with setDeviceMesh (by the user), rather than taken over from an
  // op's first input. Sharding propagation treats a tensor with a user-given mesh as scheduled by
  // the user, as nvFuser treats a tensor with a mesh.
  bool hasUserMesh() const { return mesh_.has_value() && user_mesh_; }

  Expr* definition() const { return definition_; }
  const std::vector<Expr*>& uses() const { return uses_; }
  void setDefinition(Expr* e) { definition_ = e; }
  void addUse(Expr* e) { uses_.push_back(e); }
  void removeUse(Expr* e);

  // ---- scheduling (each returns this, for chaining) ----
  // Splits loop axis `axis` by `factor`. inner_split: factor is the inner extent (outer =
  // ceilDiv(extent, factor)); otherwise factor is the outer extent.
  TensorView* split(int axis, Scalar factor, bool inner_split = true);
  // nvFuser's outer_split / inner_split: `outerSplit(0, 4)` makes [4, ceilDiv(e, 4)], how Stream
  // and device axes are split off (parallelize the outer part); `innerSplit(0, 4)` makes
  // [ceilDiv(e, 4), 4].
  TensorView* outerSplit(int axis, Scalar parts) { return split(axis, std::move(parts), false); }
  TensorView* innerSplit(int axis, Scalar inner) { return split(axis, std::move(inner), true); }
  // Merges loop axes `axis` and `axis + 1` into one of extent outer*inner.
  TensorView* merge(int axis);
  // Moves loop axes: old position -> new position (nvFuser's reorder). Unnamed axes keep their
  // relative order in the remaining positions.
  TensorView* reorder(const std::unordered_map<int, int>& old_to_new);
  // Two loop axes may not share a non-serial type, except that a device type may sit on one
  // iteration axis and one reduction axis (nvFuser's [DIDx(d), i/d, r{DIDx(d)}, r{k/d}]: the
  // reduce-scatter of a partial sum).
  TensorView* parallelize(int axis, ParallelType p);
  // The mesh, given by the user (see hasUserMesh).
  TensorView* setDeviceMesh(DeviceMesh mesh);
  // The mesh taken over from an op's input (ops do this for their outputs).
  TensorView* inheritDeviceMesh(DeviceMesh mesh);
  // The allocation domain must be a permutation of IterDomains reachable from the logical
  // domain (logical or loop axes, e.g. to shard the allocation like the loop), name no axis twice
  // and cover every non-reduction logical axis. An empty vector resets it to the logical domain.
  TensorView* setAllocationDomain(std::vector<IterDomain*> allocation);

  // `T7_g___bfloat` (`T7_g` when the dtype is not known).
  std::string nameStr() const;
  // `T7_g___bfloat[istreamIdx20{3}, iS21{( ceilDiv(i0, 3) )}] (DeviceMesh{0 1})`: the loop domain,
  // and the mesh when it has one.
  std::string str() const;

  // The logical axis a loop axis came from through splits (nullptr after a merge of two logical
  // axes, or when `id` is not in this tensor's history).
  IterDomain* logicalOrigin(const IterDomain* id) const;
  // Position of the first loop axis with parallel type `p`, or -1.
  int loopAxisOf(ParallelType p) const;

 private:
  Fusion* fusion_;
  int name_;
  DataType dtype_;
  MemoryType mem_;
  bool dtype_known_ = true;
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> loop_;
  std::vector<IterDomain*> allocation_;
  std::vector<IterDomain*> root_;
  std::optional<DeviceMesh> mesh_;
  bool user_mesh_ = false;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
};

}  // namespace braid
