#include "passes/communication_classifier.h"

#include <algorithm>
#include <set>

#include "ir/error.h"
#include "passes/fusion_utils.h"

namespace braid {

namespace {


bool meshesDiffer(const TensorView* a, const TensorView* b) {
  return a->hasDeviceMesh() && b->hasDeviceMesh() && *a->deviceMesh() != *b->deviceMesh();
}

// The iteration axis of `tv` sharded on `p` and its path; nullopt when there is none.
std::optional<AxisPath> shardedPath(const TensorView* tv, ParallelType p) {
  const IterDomain* id = parallelLoopAxis(tv, p, false);
  if (id == nullptr) return std::nullopt;
  return requireAxisPath(tv, id);
}

std::optional<AxisPath> reducedShardPath(const TensorView* tv, ParallelType p) {
  const IterDomain* id = parallelLoopAxis(tv, p, true);
  if (id == nullptr) return std::nullopt;
  return requireAxisPath(tv, id);
}

bool baseIsBroadcast(const TensorView* tv, const AxisPath& path) {
  for (int b : path.base)
    if (!tv->logical()[static_cast<size_t>(b)]->isBroadcast()) return false;
  return true;
}

bool baseIsReduction(const TensorView* tv, const AxisPath& path) {
  return tv->logical()[static_cast<size_t>(path.base[0])]->isReduction();
}

// How the pair (input k, output) relates along device type p.
enum class Relation {
  kSame,            // sharded the same way, or neither sharded
  kReplicatedIn,    // the consumer's sharded axis is one the producer replicates (a broadcast, or not its axis)
  kPartial,         // the producer holds partial results along p
  kGather,          // producer sharded, consumer not
  kScatter,         // consumer sharded, producer not
  kReduceAcross,    // producer's sharded axis is reduced by the op
  kMoveShard,       // both sharded, differently
};

Relation relate(const Expr& e, size_t k, ParallelType p) {
  const TensorView* prod = e.input(k);
  const TensorView* cons = e.output(0);
  auto pp = shardedPath(prod, p);
  auto cp = shardedPath(cons, p);
  if (isPartialAlong(prod, p)) return Relation::kPartial;
  if (pp) {
    auto mapped = pathToConsumer(e, k, *pp);
    if (!mapped) return cp ? Relation::kMoveShard : Relation::kGather;
    if (cons->logical()[static_cast<size_t>(mapped->base[0])]->isReduction()) {
      // The consumer keeps the same split of the reduced axis as its own device axis: each
      // device reduces its shard into a partial result (an rfactored op), nothing moves.
      if (cp && *cp == *mapped) return Relation::kSame;
      return Relation::kReduceAcross;
    }
    if (cp && *cp == *mapped) return Relation::kSame;
    return cp ? Relation::kMoveShard : Relation::kGather;
  }
  if (cp) {
    auto mapped = pathToProducer(e, k, *cp);
    if (!mapped || baseIsBroadcast(prod, *mapped)) return Relation::kReplicatedIn;
    return Relation::kScatter;
  }
  // A consumer that reduces across devices what this producer holds whole: every device would
  // use its shard of this input, which is a resharding of the input (nvFuser inserts a set).
  if (auto rp = reducedShardPath(cons, p)) {
    auto mapped = pathToProducer(e, k, AxisPath{rp->base, {}});
    if (mapped && !baseIsBroadcast(prod, *mapped)) return Relation::kScatter;
  }
  return Relation::kSame;
}

bool reshards(Relation r) { return r != Relation::kSame && r != Relation::kReplicatedIn; }

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

int64_t indexIn(const std::vector<int64_t>& team, int64_t device) {
  return std::find(team.begin(), team.end(), device) - team.begin();
}

// Fills teams/team for a same-mesh collective along `p`.
void setTeams(CommunicationInfo& info, const DeviceMesh& mesh, ParallelType p) {
  info.along = p;
  info.teams = meshSlices(mesh, p);
  info.team = info.teams.front();
}

void setSingleTeam(CommunicationInfo& info, std::vector<int64_t> team, std::optional<int64_t> root) {
  info.teams = {std::move(team)};
  info.team = info.teams.front();
  if (root) {
    info.root = root;
    info.rootIndex = indexIn(info.team, *root);
  }
}

// A set or reduction whose producer and consumer live on different meshes (1D meshes only).
CommunicationInfo classifyMeshChange(const Expr& e) {
  const TensorView* p = e.input(0);
  const TensorView* c = e.output(0);
  const DeviceMesh& pm = *p->deviceMesh();
  const DeviceMesh& cm = *c->deviceMesh();
  if (pm.shape().size() > 1 || cm.shape().size() > 1)
    notLowerable(e, "moving data between meshes of more than one dimension (" + pm.str() + " -> " + cm.str() +
                        ") is not supported; change the mesh on a 1D mesh");
  if (shardedPath(p, ParallelType::kDIDy) || shardedPath(c, ParallelType::kDIDy))
    notLowerable(e, "DIDy needs a 2D mesh");
  auto pp = shardedPath(p, ParallelType::kDIDx);
  auto cp = shardedPath(c, ParallelType::kDIDx);
  CommunicationInfo info;
  info.producerPath = pp;
  info.consumerPath = cp;
  if (pp) info.producerAxis = pp->base[0];
  if (cp) info.consumerAxis = cp->base[0];
  if (e.type() == OpType::kReduction) {
    info.redOp = e.reductionOp;
    if (!pp || !pp->isLogical()) notLowerable(e, "the reduction does not reduce a device-parallel logical axis of " + tvLabel(p));
    if (cp) notLowerable(e, "ReduceScatter needs the same mesh on both sides");
    if (cm.size() != 1) notLowerable(e, "reducing onto a different mesh of more than one device is not supported");
    info.type = CommunicationType::kReduce;
    setSingleTeam(info, unionTeam(pm.devices(), cm.devices()[0]), cm.devices()[0]);
    return info;
  }
  if (!pp && !cp) {
    if (pm.size() == 1 && cm.size() == 1) {
      info.type = CommunicationType::kSendRecv;
      setSingleTeam(info, {pm.devices()[0], cm.devices()[0]}, pm.devices()[0]);
    } else {
      info.type = CommunicationType::kBroadcast;
      setSingleTeam(info, unionTeam(cm.devices(), pm.devices()[0]), pm.devices()[0]);
    }
    return info;
  }
  if (pp && !cp) {
    if (cm.size() != 1)
      notLowerable(e, "gathering onto a different mesh of more than one device needs one Gather per receiver; "
                      "not supported");
    auto mapped = pathToConsumer(e, 0, *pp);
    if (!mapped) notLowerable(e, "the sharded axis of " + tvLabel(p) + " has no counterpart in " + tvLabel(c));
    info.consumerAxis = mapped->base[0];
    info.type = CommunicationType::kGather;
    setSingleTeam(info, unionTeam(pm.devices(), cm.devices()[0]), cm.devices()[0]);
    return info;
  }
  if (!pp && cp) {
    auto mapped = pathToProducer(e, 0, *cp);
    if (!mapped) notLowerable(e, "the sharded axis of " + tvLabel(c) + " has no counterpart in " + tvLabel(p));
    info.producerAxis = mapped->base[0];
    info.type = CommunicationType::kScatter;
    int64_t root = pm.devices()[0];
    for (int64_t d : pm.devices())
      if (cm.has(d)) {
        root = d;
        break;
      }
    setSingleTeam(info, unionTeam(cm.devices(), root), root);
    return info;
  }
  if (pm.size() == 1 && cm.size() == 1) {
    info.type = CommunicationType::kSendRecv;
    setSingleTeam(info, {pm.devices()[0], cm.devices()[0]}, pm.devices()[0]);
    return info;
  }
  notLowerable(e, "moving a sharded tensor between meshes " + pm.str() + " and " + cm.str() +
                      " needs one SendRecv per mesh position; not supported");
}

}  // namespace

std::vector<std::vector<int64_t>> meshSlices(const DeviceMesh& mesh, ParallelType p) {
  std::vector<std::vector<int64_t>> out;
  std::set<std::vector<int64_t>> seen;
  const int axis = p == ParallelType::kDIDx ? 0 : 1;
  for (int64_t d : mesh.devices()) {
    std::vector<int64_t> s = mesh.slice(d, axis);
    if (!s.empty() && seen.insert(s).second) out.push_back(std::move(s));
  }
  if (out.empty()) out.push_back(mesh.devices());
  return out;
}

bool isPartialAlong(const TensorView* tv, ParallelType p) {
  const IterDomain* id = parallelLoopAxis(tv, p, false);
  if (id == nullptr) return false;
  // An rfactored device axis, or one split off a reduction axis.
  return id->isRFactor() || baseIsReduction(tv, requireAxisPath(tv, id));
}

std::string CommunicationInfo::str() const {
  std::string s = communicationTypeName(type);
  auto teamStr = [](const std::vector<int64_t>& t) {
    std::string r = "(";
    for (size_t i = 0; i < t.size(); ++i) r += (i ? " " : "") + std::to_string(t[i]);
    return r + ")";
  };
  if (teams.size() > 1) {
    s += std::string(" along ") + std::string(parallelTypeName(along)) + " teams=";
    for (size_t i = 0; i < teams.size(); ++i) s += (i ? "," : "") + teamStr(teams[i]);
  } else {
    s += " team=" + teamStr(team);
  }
  if (didToStream || streamToDid) s += " root=<stream index>";
  else if (root) s += " root=" + std::to_string(*root);
  else if (rootIndex) s += " root=team[" + std::to_string(*rootIndex) + "]";
  if (redOp) s += std::string(" op=") + reductionOpName(*redOp);
  return s;
}

bool isReshardingPair(const Expr& e, size_t input_index) {
  const TensorView* p = e.input(input_index);
  const TensorView* c = e.output(0);
  if (meshesDiffer(p, c)) return true;
  for (ParallelType t : kDeviceParallelTypes)
    if (reshards(relate(e, input_index, t))) return true;
  return false;
}

bool isResharding(const Expr& e) {
  for (size_t i = 0; i < e.inputs().size(); ++i)
    if (isReshardingPair(e, i)) return true;
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
  if (*p->deviceMesh() != *c->deviceMesh()) return classifyMeshChange(e);
  const DeviceMesh& mesh = *p->deviceMesh();

  // Exactly one device type may change; the other must be sharded the same on both sides.
  std::optional<ParallelType> along;
  Relation rel = Relation::kSame;
  for (ParallelType t : kDeviceParallelTypes) {
    Relation r = relate(e, 0, t);
    if (!reshards(r)) continue;
    if (along)
      notLowerable(e, "it changes the sharding along both DIDx and DIDy; split it into one set per device type");
    along = t;
    rel = r;
  }
  if (!along) notLowerable(e, "it does not change the sharding");
  const ParallelType t = *along;
  if (static_cast<int>(mesh.shape().size()) <= (t == ParallelType::kDIDx ? 0 : 1))
    notLowerable(e, std::string(parallelTypeName(t)) + " needs a mesh with that dimension, " + mesh.str() + " has none");

  CommunicationInfo info;
  setTeams(info, mesh, t);
  auto pp = shardedPath(p, t);
  auto cp = shardedPath(c, t);
  info.producerPath = pp;
  info.consumerPath = cp;
  if (pp) info.producerAxis = pp->base[0];
  if (cp) info.consumerAxis = cp->base[0];

  auto combinePartials = [&](ReductionOpType op) {
    info.redOp = op;
    if (!cp) {
      info.type = CommunicationType::kAllreduce;
      return info;
    }
    auto src = pathToProducer(e, 0, *cp);
    if (!src) notLowerable(e, "the scattered axis of " + tvLabel(c) + " has no counterpart in " + tvLabel(p));
    if (const IterDomain* ps = streamLoopAxis(p); ps != nullptr && requireAxisPath(p, ps) == *src) {
      info.type = CommunicationType::kReduce;
      info.streamToDid = true;
      info.producerAxis = src->base[0];
      return info;
    }
    info.type = CommunicationType::kReduceScatter;
    info.producerAxis = src->base[0];
    return info;
  };

  switch (rel) {
    case Relation::kPartial: {
      // Partial results (an rfactored contraction or a set of them): a reduction collective.
      const Expr* def = p->definition();
      ReductionOpType op = e.type() == OpType::kReduction ? e.reductionOp
                           : def != nullptr && def->type() == OpType::kReduction ? def->reductionOp
                                                                                 : ReductionOpType::kAdd;
      return combinePartials(op);
    }
    case Relation::kReduceAcross: {
      if (e.type() != OpType::kReduction) notLowerable(e, "a set cannot reduce");
      if (!pp->isLogical())
        notLowerable(e, "it reduces the split axis " + pp->str() + " of " + tvLabel(p) +
                            " across devices and locally at once; decompose-reshardings rfactors such a reduction");
      auto mapped = pathToConsumer(e, 0, *pp);
      for (size_t i = 0; i < c->logical().size(); ++i)
        if (static_cast<int>(i) != mapped->base[0] && c->logical()[i]->isReduction())
          notLowerable(e, "it also reduces the local axis " + c->logical()[i]->str() +
                              "; reduce it locally first (a separate sum) and keep only the device-parallel axis here");
      return combinePartials(e.reductionOp);
    }
    case Relation::kGather: {
      if (e.type() != OpType::kSet) notLowerable(e, "the reduction does not reduce the device-parallel axis of " + tvLabel(p));
      auto mapped = pathToConsumer(e, 0, *pp);
      if (!mapped) notLowerable(e, "the sharded axis of " + tvLabel(p) + " has no counterpart in " + tvLabel(c));
      info.consumerAxis = mapped->base[0];
      const IterDomain* s = streamLoopAxis(c);
      if (s != nullptr && requireAxisPath(c, s) == *mapped) {
        info.type = CommunicationType::kBroadcast;
        info.didToStream = true;
        return info;
      }
      info.type = CommunicationType::kAllgather;
      return info;
    }
    case Relation::kScatter: {
      if (e.type() != OpType::kSet || !cp) notLowerable(e, "a replicated operand must be sharded by a set before it");
      auto mapped = pathToProducer(e, 0, *cp);
      info.producerAxis = mapped ? mapped->base[0] : -1;
      info.type = CommunicationType::kScatter;
      info.rootIndex = 0;
      if (info.teams.size() == 1) info.root = info.team.front();
      return info;
    }
    case Relation::kMoveShard: {
      if (e.type() != OpType::kSet) notLowerable(e, "the reduction does not reduce the device-parallel axis of " + tvLabel(p));
      auto mapped = pathToConsumer(e, 0, *pp);
      if (mapped && mapped->base == cp->base)
        notLowerable(e, "both sides shard the same axis, split differently (" + mapped->str() + " vs " + cp->str() + ")");
      if (mesh.shape().size() > 1) notLowerable(e, "AllToAll is supported on 1D meshes only");
      info.type = CommunicationType::kAllToAll;
      return info;
    }
    default:
      break;
  }
  notLowerable(e, "it does not change the sharding");
}

}  // namespace braid
