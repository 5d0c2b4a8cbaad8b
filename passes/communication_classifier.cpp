#include "passes/communication_classifier.h"

#include <algorithm>

#include "ir/error.h"
#include "passes/fusion_utils.h"

namespace braid {

namespace {

constexpr ParallelType kDidTypes[] = {ParallelType::kDIDx, ParallelType::kDIDy};

// The logical axis of `tv` sharded on `p`, skipping broadcast axes (which hold no data to shard).
int shardedAxis(const TensorView* tv, ParallelType p) {
  for (size_t i = 0; i < tv->logical().size(); ++i) {
    const IterDomain* id = tv->logical()[i];
    if (id->parallelType() == p && !id->isBroadcast()) return static_cast<int>(i);
  }
  return -1;
}

bool meshesDiffer(const TensorView* a, const TensorView* b) {
  return a->hasDeviceMesh() && b->hasDeviceMesh() && *a->deviceMesh() != *b->deviceMesh();
}

bool pairReshards(const Expr& e, size_t input_index) {
  const TensorView* p = e.input(input_index);
  const TensorView* c = e.output(0);
  if (meshesDiffer(p, c)) return true;
  std::vector<int> map = producerToConsumerMap(e, input_index);
  for (ParallelType t : kDidTypes) {
    int pa = shardedAxis(p, t);
    if (pa >= 0) {
      int ca = map[static_cast<size_t>(pa)];
      if (ca < 0 || c->logical()[static_cast<size_t>(ca)]->parallelType() != t) return true;
    }
    int ca = shardedAxis(c, t);
    if (ca >= 0) {
      for (size_t q = 0; q < map.size(); ++q) {
        if (map[q] != ca) continue;
        const IterDomain* pid = p->logical()[q];
        if (!pid->isBroadcast() && pid->parallelType() != t) return true;
      }
    }
  }
  return false;
}

std::string exprLabel(const Expr& e) {
  return tvLabel(e.output(0)) + " = " + opTypeName(e.type()) + "(" + tvLabel(e.input(0)) + ")";
}

[[noreturn]] void notLowerable(const Expr& e, const std::string& why) {
  throw NotLowerableError("resharding expr `" + exprLabel(e) + "` is not lowerable: " + why);
}

std::vector<int64_t> unionTeam(std::vector<int64_t> team, int64_t extra) {
  if (std::find(team.begin(), team.end(), extra) == team.end()) team.push_back(extra);
  return team;
}

}  // namespace

std::string CommunicationInfo::str() const {
  std::string s = communicationTypeName(type);
  s += " team=(";
  for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
  s += ")";
  if (didToStream) s += " root=<stream index>";
  else if (root) s += " root=" + std::to_string(*root);
  if (redOp) s += std::string(" op=") + reductionOpName(*redOp);
  return s;
}

bool isReshardingPair(const Expr& e, size_t input_index) { return pairReshards(e, input_index); }

bool isResharding(const Expr& e) {
  for (size_t i = 0; i < e.inputs().size(); ++i)
    if (pairReshards(e, i)) return true;
  return false;
}

CommunicationInfo classifyCommunication(const Expr& e) {
  if (e.type() != OpType::kSet && e.type() != OpType::kReduction)
    notLowerable(e, std::string("only set and reduction ops become communications, this is ") +
                        opTypeName(e.type()) + "; insert a set() before it that does the resharding");
  if (e.inputs().size() != 1 || e.outputs().size() != 1) notLowerable(e, "expected one input and one output");
  const TensorView* p = e.input(0);
  const TensorView* c = e.output(0);
  if (!p->hasDeviceMesh() || !c->hasDeviceMesh())
    notLowerable(e, "both " + tvLabel(p) + " and " + tvLabel(c) + " need a device mesh");
  const DeviceMesh& pm = *p->deviceMesh();
  const DeviceMesh& cm = *c->deviceMesh();
  if (pm.shape().size() > 1 || cm.shape().size() > 1)
    notLowerable(e, "only 1D device meshes are supported (" + pm.str() + " -> " + cm.str() + ")");
  if (shardedAxis(p, ParallelType::kDIDy) >= 0 || shardedAxis(c, ParallelType::kDIDy) >= 0)
    notLowerable(e, "DIDy needs a 2D mesh; only DIDx resharding is supported");

  std::vector<int> map = producerToConsumerMap(e, 0);
  const int pa = shardedAxis(p, ParallelType::kDIDx);
  const int ca = shardedAxis(c, ParallelType::kDIDx);
  const bool same_mesh = pm == cm;
  CommunicationInfo info;
  info.producerAxis = pa;
  info.consumerAxis = ca;

  if (e.type() == OpType::kSet) {
    if (pa < 0 && ca < 0) {
      if (same_mesh) notLowerable(e, "it does not change the sharding");
      if (pm.size() == 1 && cm.size() == 1) {
        info.type = CommunicationType::kSendRecv;
        info.root = pm.devices()[0];
        info.team = {pm.devices()[0], cm.devices()[0]};
      } else {
        info.type = CommunicationType::kBroadcast;
        info.root = pm.devices()[0];
        info.team = unionTeam(cm.devices(), pm.devices()[0]);
      }
      return info;
    }
    if (pa >= 0 && p->logical()[static_cast<size_t>(pa)]->isReduction()) {
      // The producer holds partial results (a device-parallel reduction axis, nvFuser's rDIDx):
      // combining them is a reduction collective.
      if (!same_mesh) notLowerable(e, "combining partial results needs the same mesh on both sides");
      const Expr* def = p->definition();
      info.redOp = def != nullptr && def->type() == OpType::kReduction ? def->reductionOp : ReductionOpType::kAdd;
      info.team = pm.devices();
      if (ca < 0) {
        info.type = CommunicationType::kAllreduce;
        return info;
      }
      int src = -1;
      for (size_t q = 0; q < map.size(); ++q)
        if (map[q] == ca) src = static_cast<int>(q);
      info.type = CommunicationType::kReduceScatter;
      info.producerAxis = src;
      return info;
    }
    if (pa >= 0 && ca < 0) {
      int mapped = map[static_cast<size_t>(pa)];
      if (mapped >= 0 && c->logical()[static_cast<size_t>(mapped)]->isStream()) {
        if (!same_mesh) notLowerable(e, "a DID -> Stream resharding needs the same mesh on both sides");
        info.type = CommunicationType::kBroadcast;
        info.didToStream = true;
        info.consumerAxis = mapped;
        info.team = pm.devices();
        return info;
      }
      info.consumerAxis = mapped;
      if (mapped < 0) notLowerable(e, "the sharded axis of " + tvLabel(p) + " has no counterpart in " + tvLabel(c));
      if (same_mesh) {
        info.type = CommunicationType::kAllgather;
        info.team = pm.devices();
        return info;
      }
      if (cm.size() == 1) {
        info.type = CommunicationType::kGather;
        info.root = cm.devices()[0];
        info.team = unionTeam(pm.devices(), cm.devices()[0]);
        return info;
      }
      notLowerable(e, "gathering onto a different mesh of more than one device needs one Gather per receiver; "
                      "not supported");
    }
    if (pa < 0 && ca >= 0) {
      int src = -1;
      for (size_t q = 0; q < map.size(); ++q)
        if (map[q] == ca) src = static_cast<int>(q);
      info.producerAxis = src;
      info.type = CommunicationType::kScatter;
      int64_t root = pm.devices()[0];
      for (int64_t d : pm.devices())
        if (cm.has(d)) {
          root = d;
          break;
        }
      info.root = root;
      info.team = unionTeam(cm.devices(), root);
      return info;
    }
    // Both sharded.
    if (map[static_cast<size_t>(pa)] == ca) {
      if (pm.size() == 1 && cm.size() == 1) {
        info.type = CommunicationType::kSendRecv;
        info.root = pm.devices()[0];
        info.team = {pm.devices()[0], cm.devices()[0]};
        return info;
      }
      notLowerable(e, "moving a sharded tensor between meshes " + pm.str() + " and " + cm.str() +
                          " needs one SendRecv per mesh position; not supported");
    }
    if (!same_mesh) notLowerable(e, "AllToAll needs the same mesh on both sides");
    info.type = CommunicationType::kAllToAll;
    info.team = pm.devices();
    return info;
  }

  // Reduction: the producer's sharded axis must be the reduced one.
  info.redOp = e.reductionOp;
  if (pa < 0) notLowerable(e, "the reduction does not reduce a device-parallel axis of " + tvLabel(p));
  int reduced = map[static_cast<size_t>(pa)];
  if (reduced < 0 || !c->logical()[static_cast<size_t>(reduced)]->isReduction())
    notLowerable(e, "the device-parallel axis of " + tvLabel(p) + " is not reduced");
  for (size_t i = 0; i < c->logical().size(); ++i) {
    if (static_cast<int>(i) != reduced && c->logical()[i]->isReduction())
      notLowerable(e, "it also reduces the local axis " + c->logical()[i]->str() +
                          "; reduce it locally first (a separate sum) and keep only the device-parallel axis here");
  }
  if (ca >= 0) {
    if (!same_mesh) notLowerable(e, "ReduceScatter needs the same mesh on both sides");
    int src = -1;
    for (size_t q = 0; q < map.size(); ++q)
      if (map[q] == ca) src = static_cast<int>(q);
    info.type = CommunicationType::kReduceScatter;
    info.producerAxis = src;  // the axis scattered over the team
    info.team = pm.devices();
    return info;
  }
  info.producerAxis = pa;
  if (same_mesh) {
    info.type = CommunicationType::kAllreduce;
    info.team = pm.devices();
    return info;
  }
  if (cm.size() == 1) {
    info.type = CommunicationType::kReduce;
    info.root = cm.devices()[0];
    info.team = unionTeam(pm.devices(), cm.devices()[0]);
    return info;
  }
  notLowerable(e, "reducing onto a different mesh of more than one device is not supported");
}

}  // namespace braid
