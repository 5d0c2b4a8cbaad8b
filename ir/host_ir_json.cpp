// `braid print --json`: the program's structure for scripts and other tools. Tensors are listed
// once, with their domains; statements refer to them by name ("T3").
#include <nlohmann/json.hpp>

#include "ir/host_ir_text.h"

namespace braid {

namespace {

using json = nlohmann::ordered_json;

const char* iterTypeName(IterType t) {
  switch (t) {
    case IterType::kIteration: return "iteration";
    case IterType::kReduction: return "reduction";
    case IterType::kBroadcast: return "broadcast";
    case IterType::kSymbolic: return "symbolic";
  }
  return "?";
}

json tvRef(const TensorView* tv) { return tv ? json("T" + std::to_string(tv->name())) : json(nullptr); }

json tvRefs(const std::vector<TensorView*>& v) {
  json a = json::array();
  for (const TensorView* tv : v) a.push_back(tvRef(tv));
  return a;
}

json idJson(const IterDomain* id) {
  if (!id) return nullptr;
  return json{{"id", id->id()},
              {"kind", iterTypeName(id->iterType())},
              {"parallel", std::string(parallelTypeName(id->parallelType()))},
              {"extent", id->extent().str()},
              {"rf", id->isRFactor()}};
}

json tensorJson(const HostProgram& p, const TensorView* tv) {
  json domain = json::array();
  for (const IterDomain* id : tv->loop()) domain.push_back(idJson(id));
  json j{{"name", "T" + std::to_string(tv->name())},
         {"printed", tv->nameStr()},
         {"dtype", tv->dtypeKnown() ? json(std::string(dataTypeName(tv->dtype()))) : json(nullptr)},
         {"mem", std::string(memoryTypeName(tv->memoryType()))},
         {"domain", domain}};
  if (tv->hasDeviceMesh()) j["mesh"] = json{{"devices", tv->deviceMesh()->devices()}, {"shape", tv->deviceMesh()->shape()}};
  else j["mesh"] = nullptr;
  return j;
}

json streamJson(const StreamRef& s) {
  if (s.kind == StreamRef::Kind::kNamed) return json{{"named", s.name}};
  return json{{"index", s.index.str()}};
}

json scalarRefs(const std::vector<ScalarOperand>& v) {
  json a = json::array();
  for (const ScalarOperand& s : v) a.push_back(json{{"position", s.position}, {"value", s.value.str()}});
  return a;
}

json p2pJson(const P2PCommunication& c) {
  return json{{"id", c.id},
              {"type", c.type == P2PType::kSend ? "send" : "recv"},
              {"buffer", tvRef(c.buffer)},
              {"peer", c.peer.str()},
              {"backend", commBackendName(c.backend)}};
}

json exprJson(const Expr* e) {
  if (!e) return nullptr;
  json j{{"op", opTypeName(e->type())}, {"inputs", tvRefs(e->inputs())}, {"outputs", tvRefs(e->outputs())}};
  switch (e->type()) {
    case OpType::kSet:
      j["cache_op"] = e->cacheOp;
      j["segmenter_set"] = e->segmenterSet;
      break;
    case OpType::kPermute:
      j["cache_op"] = e->cacheOp;
      j["permutation"] = e->permutation;
      break;
    case OpType::kUnary: j["unary_op"] = unaryOpName(e->unaryOp); break;
    case OpType::kBinary: j["binary_op"] = binaryOpSymbol(e->binaryOp); break;
    case OpType::kReduction:
      j["reduction_op"] = reductionOpName(e->reductionOp);
      j["initial_value"] = e->initValue;
      break;
    case OpType::kBroadcast: j["flags"] = e->broadcastFlags; break;
    case OpType::kSqueeze: j["flags"] = e->squeezeFlags; break;
    default: break;
  }
  return j;
}

json scopeJson(const Scope& s);

template <StmtKind K>
void selectJson(const SelectStmt<K>& a, json& j) {
  j["output"] = tvRef(a.out);
  j["input"] = tvRef(a.in);
  j["axis"] = idJson(a.axis);
  j["index"] = a.index.str();
}

json stmtJson(const Stmt& s) {
  json j{{"kind", stmtKindName(s.kind())}};
  j["line"] = s.loc.known() ? json(s.loc.line) : json(nullptr);
  switch (s.kind()) {
    case StmtKind::kAllocate: {
      const auto* a = s.as<Allocate>();
      j["tensor"] = tvRef(a->tv);
      j["mem_type"] = std::string(memoryTypeName(a->memType));
      j["form"] = a->legacy ? "if_unbound" : "always";
      j["size"] = a->size ? json(a->size->str()) : json(nullptr);
      j["zero_init"] = a->zeroInit;
      j["resets_to_zero"] = a->resetsToZero;
      break;
    }
    case StmtKind::kDeallocate: j["tensor"] = tvRef(s.as<Deallocate>()->tv); break;
    case StmtKind::kAliasSelect: selectJson(*s.as<AliasSelect>(), j); break;
    case StmtKind::kShardByStream: {
      const auto* a = s.as<ShardByStream>();
      j["output"] = tvRef(a->out);
      j["input"] = tvRef(a->in);
      j["stream_index"] = a->streamIndex.str();
      break;
    }
    case StmtKind::kGetCurrentStream: j["stream"] = streamJson(s.as<GetCurrentStream>()->stream); break;
    case StmtKind::kSetCurrentStream: j["stream"] = streamJson(s.as<SetCurrentStream>()->stream); break;
    case StmtKind::kSynchronize: j["stream"] = streamJson(s.as<Synchronize>()->stream); break;
    case StmtKind::kForLoop: {
      const auto* f = s.as<ForLoop>();
      j["index"] = f->index;
      j["domain"] = idJson(f->domain);
      j["start"] = f->begin().str();
      j["stop"] = f->end().str();
      j["body"] = scopeJson(f->body);
      break;
    }
    case StmtKind::kIfThenElse: {
      const auto* b = s.as<IfThenElse>();
      j["predicate"] = b->predicate.str();
      j["then"] = scopeJson(b->thenBody);
      j["else"] = scopeJson(b->elseBody);
      break;
    }
    case StmtKind::kHostOp: j["op"] = exprJson(s.as<HostOp>()->op); break;
    case StmtKind::kPostOnStream: {
      const auto* p = s.as<PostOnStream>();
      j["host_unit"] = p->hostUnit;
      j["inputs"] = tvRefs(p->inputs);
      j["scalar_inputs"] = scalarRefs(p->scalarInputs);
      j["outputs"] = tvRefs(p->outputs);
      break;
    }
    case StmtKind::kLaunchKernel: {
      const auto* k = s.as<LaunchKernel>();
      j["group_id"] = k->groupId ? json(*k->groupId) : json(nullptr);
      j["inputs"] = tvRefs(k->inputs);
      j["scalar_inputs"] = scalarRefs(k->scalarInputs);
      j["outputs"] = tvRefs(k->outputs);
      break;
    }
    case StmtKind::kCollectivePermute: {
      const auto* c = s.as<CollectivePermute>();
      j["id"] = c->id;
      j["team"] = c->team;
      j["send_peer"] = c->sendPeer.str();
      j["recv_peer"] = c->recvPeer.str();
      j["input"] = tvRef(c->input);
      j["output"] = tvRef(c->output);
      j["backend"] = commBackendName(c->backend);
      break;
    }
    case StmtKind::kShareMemHandles: {
      json a = json::array();
      for (const P2PCommunication& c : s.as<ShareMemHandles>()->communications) a.push_back(p2pJson(c));
      j["communications"] = a;
      break;
    }
    case StmtKind::kSymmetricContiguousView:
      j["output"] = tvRef(s.as<SymmetricContiguousView>()->out);
      j["input"] = tvRef(s.as<SymmetricContiguousView>()->in);
      break;
    case StmtKind::kSelect: selectJson(*s.as<Select>(), j); break;
    case StmtKind::kSlice: {
      const auto* a = s.as<Slice>();
      j["output"] = tvRef(a->out);
      j["input"] = tvRef(a->in);
      json r = json::array();
      for (const SliceRange& x : a->ranges)
        r.push_back(json{{"start", x.start.str()}, {"stop", x.stop.str()}, {"step", x.step.str()}});
      j["ranges"] = r;
      break;
    }
    case StmtKind::kScalarAssign:
      j["name"] = s.as<ScalarAssign>()->name;
      j["value"] = s.as<ScalarAssign>()->value.str();
      break;
    case StmtKind::kCommunication: {
      const auto* c = s.as<Communication>();
      j["id"] = c->id;
      j["type"] = communicationTypeName(c->type);
      j["team"] = c->team;
      j["root"] = c->root ? json(c->root->str()) : json(nullptr);
      j["red_op"] = c->redOp ? json(reductionOpName(*c->redOp)) : json(nullptr);
      j["input"] = tvRef(c->input);
      j["output"] = tvRef(c->output);
      j["backend"] = commBackendName(c->backend);
      break;
    }
    case StmtKind::kP2PCommunication: {
      json c = p2pJson(*s.as<P2PCommunication>());
      for (auto& [k, v] : c.items()) j[k] = v;
      break;
    }
    case StmtKind::kStartCoalescing: break;
    case StmtKind::kEndCoalescing: j["id"] = s.as<EndCoalescing>()->id; break;
    case StmtKind::kWait: j["id"] = s.as<Wait>()->id; break;
  }
  return j;
}

json scopeJson(const Scope& s) {
  json a = json::array();
  for (const auto& st : s)
    if (st) a.push_back(stmtJson(*st));
  return a;
}

json fusionTensors(const HostProgram& p, const Fusion& f) {
  json a = json::array();
  auto tvs = f.tensors();
  std::stable_sort(tvs.begin(), tvs.end(), [](const TensorView* x, const TensorView* y) { return x->name() < y->name(); });
  for (const TensorView* tv : tvs) a.push_back(tensorJson(p, tv));
  return a;
}

const char* bodyName(HostUnit::Body b) {
  switch (b) {
    case HostUnit::Body::kModelled: return "modelled";
    case HostUnit::Body::kOpaque: return "text";
    case HostUnit::Body::kElided: return "elided";
  }
  return "?";
}

}  // namespace

std::string toJson(const HostProgram& p, int indent) {
  json j;
  j["source"] = p.sourceName;
  j["inputs"] = tvRefs(p.inputs());
  j["scalar_inputs"] = scalarRefs(p.scalarInputs());
  j["outputs"] = tvRefs(p.outputs());
  j["scalar_outputs"] = scalarRefs(p.scalarOutputs());
  json aliases = json::array();
  for (const auto& [out, in] : p.aliases()) aliases.push_back(json{{"output", tvRef(out)}, {"input", tvRef(in)}});
  j["aliases"] = aliases;
  j["tensors"] = fusionTensors(p, p.tensors());
  j["statements"] = scopeJson(p.body());
  json defs = json::array();
  for (const auto& [name, value] : p.indexDefinitions()) defs.push_back(json{{"name", name}, {"value", value.str()}});
  j["index_definitions"] = defs;
  json units = json::array();
  for (const auto& [id, unit] : p.hostUnits()) {
    json u{{"id", id}, {"body", bodyName(unit.body)}};
    if (unit.body == HostUnit::Body::kOpaque) u["text"] = unit.bodyText;
    if (unit.fusion) {
      u["inputs"] = tvRefs(unit.fusion->inputs());
      u["scalar_inputs"] = scalarRefs(unit.scalarInputs);
      u["outputs"] = tvRefs(unit.fusion->outputs());
      u["tensors"] = fusionTensors(p, *unit.fusion);
      json ops = json::array();
      for (const Expr* e : unit.fusion->exprs()) ops.push_back(exprJson(e));
      u["ops"] = ops;
    }
    units.push_back(u);
  }
  j["host_units"] = units;
  j["missing_host_units"] = missingHostUnits(p);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);  // a non-UTF-8 file name must not throw
}

}  // namespace braid
