// Property: for random host programs (random nesting of loops and branches, every statement
// kind, random tensors, meshes and scalar expressions, HostUnits modelled, kept as text, elided or
// absent, index definitions, tensors whose dtype is not printed), parse(print(p)) is structurally
// equal to p and printing is a fixed point, in each of nvFuser's three printer generations.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "ir/host_ir_text.h"

namespace braid {
namespace {

int pick(int lo, int hi) { return *rc::gen::inRange(lo, hi + 1); }  // [lo, hi]
bool coin() { return *rc::gen::arbitrary<bool>(); }
template <class T>
const T& oneOf(const std::vector<T>& v) {
  return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
}

Scalar randomScalar(int depth) {
  static const std::vector<std::string> symbols = {"i0", "i2", "StreamIdx", "deviceIdx.x", "numberOfStreams", "rank", "i17"};
  int k = pick(0, depth > 0 ? 5 : 1);
  if (k == 0) return Scalar(static_cast<int64_t>(pick(-3, 64)));
  if (k == 1) return Scalar::symbol(oneOf(symbols));
  if (k == 2) return Scalar::logicalNot(randomScalar(depth - 1));
  static const std::vector<ScalarOp> ops = {ScalarOp::kAdd, ScalarOp::kSub, ScalarOp::kMul, ScalarOp::kDiv,
                                            ScalarOp::kMod, ScalarOp::kCeilDiv, ScalarOp::kEq, ScalarOp::kNe,
                                            ScalarOp::kLt, ScalarOp::kLe, ScalarOp::kGt, ScalarOp::kGe,
                                            ScalarOp::kAnd, ScalarOp::kOr};
  return Scalar::binary(oneOf(ops), randomScalar(depth - 1), randomScalar(depth - 1));
}

class Gen {
 public:
  HostProgram p;

  void build() {
    int n_tensors = pick(1, 8);
    for (int i = 0; i < n_tensors; ++i) tensors_.push_back(newTensor(p.tensors(), next_name_++));
    for (TensorView* tv : tensors_) {
      if (pick(0, 3) == 0) p.inputs().push_back(tv);
      else if (pick(0, 3) == 0) p.outputs().push_back(tv);
    }
    if (!p.outputs().empty() && !p.inputs().empty() && coin()) p.aliases().emplace_back(p.outputs()[0], p.inputs()[0]);
    if (coin())
      p.scalarInputs().push_back(ScalarOperand{static_cast<size_t>(pick(0, static_cast<int>(p.inputs().size()))),
                                               Scalar::symbol("i5")});
    int n_units = pick(0, 2);
    for (int u = 0; u < n_units; ++u) {
      int id = pick(0, 5);
      if (p.hostUnits().count(id)) continue;
      p.hostUnits().emplace(id, hostUnit(id));
    }
    scope(p.body(), 0, pick(0, 6));
    // Index definitions: a chain (each may use the ones before it), printed in any order.
    int n_defs = pick(0, 3);
    std::vector<std::pair<std::string, Scalar>> defs;
    for (int i = 0; i < n_defs; ++i) {
      Scalar v = randomScalar(2);
      if (i > 0 && coin()) v = Scalar::binary(ScalarOp::kAdd, Scalar::symbol(defs.back().first), v);
      defs.emplace_back("i8" + std::to_string(i), v);
    }
    if (coin()) std::reverse(defs.begin(), defs.end());
    p.indexDefinitions() = defs;
  }

 private:
  TensorView* newTensor(Fusion& f, int name) {
    static const std::vector<DataType> dtypes = {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16,
                                                 DataType::kInt32, DataType::kInt64, DataType::kBool};
    static const std::vector<MemoryType> mems = {MemoryType::kGlobal, MemoryType::kLocal, MemoryType::kShared,
                                                 MemoryType::kSymmetric};
    static const std::vector<IterType> kinds = {IterType::kIteration, IterType::kReduction, IterType::kBroadcast,
                                                IterType::kSymbolic};
    static const std::vector<ParallelType> pts = {ParallelType::kSerial, ParallelType::kStream, ParallelType::kDIDx,
                                                  ParallelType::kDIDy};
    std::vector<IterDomain*> ids;
    int rank = pick(0, 3);
    for (int i = 0; i < rank; ++i)
      ids.push_back(f.newIterDomain(randomScalar(1), oneOf(kinds), oneOf(pts), pick(0, 4) == 0, next_id_++));
    TensorView* tv = f.newTensor(ids, oneOf(dtypes), oneOf(mems), name);
    int mesh = pick(0, 3);
    if (mesh == 1) tv->setDeviceMesh(DeviceMesh::range(pick(1, 8)));
    if (mesh == 2) tv->setDeviceMesh(DeviceMesh({0, 1, 2, 3, 4, 5}, {2, 3}));
    if (pick(0, 5) == 0) tv->setDtypeKnown(false);
    return tv;
  }

  TensorView* anyTensor() { return oneOf(tensors_); }

  Expr* randomExpr(Fusion& f, const std::vector<TensorView*>& pool) {
    static const std::vector<OpType> types = {OpType::kSet, OpType::kPermute, OpType::kUnary, OpType::kBinary,
                                              OpType::kReduction, OpType::kBroadcast, OpType::kSqueeze,
                                              OpType::kReshape, OpType::kMatmul, OpType::kLinear};
    OpType t = oneOf(types);
    TensorView* out = oneOf(pool);
    std::vector<TensorView*> ins{oneOf(pool)};
    if (t == OpType::kBinary || t == OpType::kMatmul || t == OpType::kLinear) ins.push_back(oneOf(pool));
    if (t == OpType::kLinear && coin()) ins.push_back(oneOf(pool));
    Expr* e = f.newExpr(t, ins, {out});
    e->binaryOp = static_cast<BinaryOpType>(pick(0, 3));
    e->unaryOp = static_cast<UnaryOpType>(pick(0, static_cast<int>(UnaryOpType::kCast)));
    e->reductionOp = static_cast<ReductionOpType>(pick(0, 2));
    e->initValue = oneOf(std::vector<std::string>{"float(0)", "double(-inf)", "float(1)", "0"});
    e->cacheOp = oneOf(std::vector<std::string>{"Streaming", "Unspecified", "AllLevels", ""});
    e->segmenterSet = t == OpType::kSet && coin();
    if (t == OpType::kPermute) {
      int n = pick(0, 3);
      for (int i = 0; i < n; ++i) e->permutation.push_back(n - 1 - i);
    }
    int nflags = pick(0, 3);
    for (int i = 0; i < nflags; ++i) {
      e->broadcastFlags.push_back(coin());
      e->squeezeFlags.push_back(coin());
    }
    if (t != OpType::kBroadcast) e->broadcastFlags.clear();
    if (t != OpType::kSqueeze) e->squeezeFlags.clear();
    return e;
  }

  HostUnit hostUnit(int id) {
    HostUnit u;
    u.id = id;
    u.fusion = std::make_unique<Fusion>();
    std::vector<TensorView*> pool;
    int n = pick(1, 4);
    for (int i = 0; i < n; ++i) pool.push_back(newTensor(*u.fusion, i));
    u.fusion->addInput(pool[0]);
    u.fusion->addOutput(pool.back());
    if (coin()) u.scalarInputs.push_back(ScalarOperand{static_cast<size_t>(pick(0, 1)), Scalar::symbol("i7")});  // 1 input
    switch (pick(0, 3)) {
      case 0:
        u.body = HostUnit::Body::kOpaque;
        u.bodyText = oneOf(std::vector<std::string>{
            "T0_l_float[iS0{7}]\n   = iota(7, 0, 1, int64_t);\n",
            "b16 = i7 < 0;\nT3_g[ ?S4{8}rf ]\n   = slice( T0_l[ iS0{7} ], { {i20, i31, 1} } )\n",
            "T2_g_float[iS3{4}]\n   = T1_g_float[iS2{4}]\n   * 2.0;\n"});
        break;
      case 1: u.body = HostUnit::Body::kElided; break;
      default: {
        int ops = pick(0, 3);
        for (int i = 0; i < ops; ++i) randomExpr(*u.fusion, pool);
      }
    }
    return u;
  }

  StreamRef randomStream() {
    switch (pick(0, 3)) {
      case 0: return StreamRef::named("0");
      case 1: return StreamRef::named(oneOf(std::vector<std::string>{"1", "0x55d0c0", "0x7f3a10"}));
      default: return StreamRef::indexed(randomScalar(2));
    }
  }

  void scope(Scope& out, int depth, int n) {
    for (int i = 0; i < n; ++i) out.push_back(stmt(depth));
  }

  void body(Scope& out, int depth) { scope(out, depth + 1, pick(1, 3)); }

  P2PCommunication randomP2P() {
    P2PCommunication c;
    c.id = next_comm_++;
    c.type = coin() ? P2PType::kSend : P2PType::kRecv;
    c.buffer = anyTensor();
    c.peer = randomScalar(2);
    c.backend = static_cast<CommBackend>(pick(0, 2));
    comm_ids_.push_back(c.id);
    return c;
  }

  template <class S>
  StmtPtr randomSelect() {
    TensorView* in = anyTensor();
    if (in->loop().empty()) return std::make_unique<StartCoalescing>();
    auto a = std::make_unique<S>();
    a->in = in;
    a->out = anyTensor();
    a->axis = oneOf(in->loop());
    a->index = randomScalar(2);
    return a;
  }

  // The statements of the second round of nvFuser's nodes (k >= 16).
  StmtPtr newerStmt(int k) {
    switch (k) {
      case 16: {
        auto l = std::make_unique<LaunchKernel>();
        if (coin()) l->groupId = pick(0, 9);
        int ni = pick(0, 2), no = pick(0, 2);
        for (int i = 0; i < ni; ++i) l->inputs.push_back(anyTensor());
        for (int i = 0; i < no; ++i) l->outputs.push_back(anyTensor());
        if (coin()) l->scalarInputs.push_back(ScalarOperand{static_cast<size_t>(pick(0, ni)), randomScalar(1)});
        return l;
      }
      case 17: {
        auto s = std::make_unique<ShareMemHandles>();
        int n = pick(0, 2);
        for (int i = 0; i < n; ++i) s->communications.push_back(randomP2P());
        return s;
      }
      case 18: {
        auto c = std::make_unique<CollectivePermute>();
        c->id = next_comm_++;
        int n = pick(1, 8);
        for (int i = 0; i < n; ++i) c->team.push_back(n - 1 - i);
        c->sendPeer = randomScalar(2);
        c->recvPeer = randomScalar(2);
        c->input = anyTensor();
        c->output = anyTensor();
        c->backend = static_cast<CommBackend>(pick(0, 2));
        comm_ids_.push_back(c->id);
        return c;
      }
      case 19: {
        auto v = std::make_unique<SymmetricContiguousView>();
        v->in = anyTensor();
        v->out = anyTensor();
        return v;
      }
      case 20: return randomSelect<Select>();
      case 21: {
        auto a = std::make_unique<Slice>();
        a->in = anyTensor();
        a->out = anyTensor();
        int n = pick(0, 3);
        for (int i = 0; i < n; ++i) a->ranges.push_back(SliceRange{randomScalar(1), randomScalar(1), randomScalar(1)});
        return a;
      }
      default: {
        auto a = std::make_unique<ScalarAssign>();
        a->name = oneOf(std::vector<std::string>{"i45", "i46", "b3"});
        a->value = randomScalar(2);
        return a;
      }
    }
  }

  StmtPtr stmt(int depth) {
    int k = pick(0, 22);
    if (k >= 16) return newerStmt(k);
    if (depth >= 3 && k >= 14) k = pick(0, 13);
    switch (k) {
      case 0: {
        auto a = std::make_unique<Allocate>();
        a->tv = anyTensor();
        a->memType = static_cast<MemoryType>(pick(0, 2));
        a->legacy = coin();
        a->zeroInit = coin();
        if (a->legacy) {
          a->resetsToZero = coin();
          if (coin()) a->size = randomScalar(2);
        }
        return a;
      }
      case 1: {
        auto d = std::make_unique<Deallocate>();
        d->tv = anyTensor();
        return d;
      }
      case 2: return randomSelect<AliasSelect>();
      case 3: {
        auto a = std::make_unique<ShardByStream>();
        a->in = anyTensor();
        a->out = anyTensor();
        a->streamIndex = randomScalar(2);
        return a;
      }
      case 4: {
        auto g = std::make_unique<GetCurrentStream>();
        g->stream = coin() ? StreamRef::named("0") : StreamRef::named("0x55d0c0");
        return g;
      }
      case 5: {
        auto s = std::make_unique<SetCurrentStream>();
        s->stream = randomStream();
        return s;
      }
      case 6: {
        auto s = std::make_unique<Synchronize>();
        s->stream = randomStream();
        return s;
      }
      case 7: {
        auto h = std::make_unique<HostOp>();
        h->op = randomExpr(p.tensors(), tensors_);
        return h;
      }
      case 8: {
        if (p.hostUnits().empty()) return std::make_unique<StartCoalescing>();
        auto post = std::make_unique<PostOnStream>();
        // Sometimes a unit the program does not print.
        post->hostUnit = coin() ? p.hostUnits().begin()->first : 7;
        int ni = pick(0, 2), no = pick(0, 2);
        for (int i = 0; i < ni; ++i) post->inputs.push_back(anyTensor());
        for (int i = 0; i < no; ++i) post->outputs.push_back(anyTensor());
        if (coin()) post->scalarInputs.push_back(ScalarOperand{static_cast<size_t>(pick(0, ni)), Scalar::symbol("i9")});
        return post;
      }
      case 9: {
        auto c = std::make_unique<Communication>();
        c->id = next_comm_++;
        c->type = static_cast<CommunicationType>(pick(0, 8));
        int n = pick(0, 8);
        for (int i = 0; i < n; ++i) c->team.push_back(i);
        if (isRooted(c->type) || pick(0, 4) == 0) c->root = randomScalar(2);
        if (coin()) c->redOp = static_cast<ReductionOpType>(pick(0, 2));
        c->input = anyTensor();
        c->output = anyTensor();
        c->backend = static_cast<CommBackend>(pick(0, 2));
        comm_ids_.push_back(c->id);
        return c;
      }
      case 10: return std::make_unique<P2PCommunication>(randomP2P());
      case 11: return std::make_unique<StartCoalescing>();
      case 12: {
        auto e = std::make_unique<EndCoalescing>();
        e->id = next_comm_++;
        comm_ids_.push_back(e->id);
        return e;
      }
      case 13: {
        if (comm_ids_.empty()) return std::make_unique<StartCoalescing>();
        auto w = std::make_unique<Wait>();
        w->id = oneOf(comm_ids_);
        return w;
      }
      case 14: {
        auto f = std::make_unique<ForLoop>();
        f->index = oneOf(std::vector<std::string>{"StreamIdx", "i17", "i", "streamIdx"});
        if (coin()) {
          TensorView* tv = anyTensor();
          if (!tv->loop().empty() && coin()) f->domain = oneOf(tv->loop());
          else f->domain = p.tensors().newIterDomain(randomScalar(1), IterType::kIteration, ParallelType::kStream, false, next_id_++);
        } else {
          f->start = randomScalar(1);
          f->stop = randomScalar(2);
        }
        body(f->body, depth);
        return f;
      }
      default: {
        auto b = std::make_unique<IfThenElse>();
        b->predicate = randomScalar(2);
        body(b->thenBody, depth);
        if (coin()) body(b->elseBody, depth);
        return b;
      }
    }
  }

  std::vector<TensorView*> tensors_;
  std::vector<int> comm_ids_;
  int next_name_ = 0;
  int next_id_ = 0;
  int next_comm_ = 1;
};

RC_GTEST_PROP(HostIrProperty, ParsePrintRoundTrip, ()) {
  Gen g;
  g.build();
  for (HostIrDialect d : {HostIrDialect::kModern, HostIrDialect::kLegacy, HostIrDialect::kOldest}) {
    PrintOptions o;
    o.dialect = d;
    std::string text = print(g.p, o);
    HostProgram q;
    try {
      q = parseHostProgram(text, "random.hir");
    } catch (const ParseError& e) {
      RC_FAIL(std::string(e.what()) + "\n" + text);
    }
    std::string why;
    if (!structurallyEqual(g.p, q, &why)) RC_FAIL(std::string(dialectName(d)) + ": " + why + "\n" + text);
    RC_ASSERT(print(q, o) == text);
    RC_ASSERT(!toJson(q).empty());
  }
}

}  // namespace
}  // namespace braid
