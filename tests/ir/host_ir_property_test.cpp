// Property: for random host programs (random nesting of loops and branches, every statement
// kind, random tensors, meshes and scalar expressions, HostUnits), parse(print(p)) is
// structurally equal to p and printing is a fixed point, in both dialects.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

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
    int n_units = pick(0, 2);
    for (int u = 0; u < n_units; ++u) {
      int id = pick(0, 5);
      if (p.hostUnits().count(id)) continue;
      p.hostUnits().emplace(id, hostUnit(id));
    }
    scope(p.body(), 0, pick(0, 6));
  }

 private:
  TensorView* newTensor(Fusion& f, int name) {
    static const std::vector<DataType> dtypes = {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16,
                                                 DataType::kInt32, DataType::kInt64, DataType::kBool};
    static const std::vector<MemoryType> mems = {MemoryType::kGlobal, MemoryType::kLocal, MemoryType::kShared};
    static const std::vector<IterType> kinds = {IterType::kIteration, IterType::kReduction, IterType::kBroadcast};
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
    e->cacheOp = oneOf(std::vector<std::string>{"Streaming", "Unspecified", "AllLevels"});
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
    int ops = pick(0, 3);
    for (int i = 0; i < ops; ++i) randomExpr(*u.fusion, pool);
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

  StmtPtr stmt(int depth) {
    int k = pick(0, depth < 3 ? 15 : 13);
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
      case 2: {
        TensorView* in = anyTensor();
        if (in->loop().empty()) return std::make_unique<StartCoalescing>();
        auto a = std::make_unique<AliasSelect>();
        a->in = in;
        a->out = anyTensor();
        a->axis = oneOf(in->loop());
        a->index = randomScalar(2);
        return a;
      }
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
        post->hostUnit = p.hostUnits().begin()->first;
        int ni = pick(0, 2), no = pick(0, 2);
        for (int i = 0; i < ni; ++i) post->inputs.push_back(anyTensor());
        for (int i = 0; i < no; ++i) post->outputs.push_back(anyTensor());
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
      case 10: {
        auto c = std::make_unique<P2PCommunication>();
        c->id = next_comm_++;
        c->type = coin() ? P2PType::kSend : P2PType::kRecv;
        c->buffer = anyTensor();
        c->peer = randomScalar(2);
        c->backend = static_cast<CommBackend>(pick(0, 2));
        comm_ids_.push_back(c->id);
        return c;
      }
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
  for (HostIrDialect d : {HostIrDialect::kLegacy, HostIrDialect::kModern}) {
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
    if (!structurallyEqual(g.p, q, &why)) RC_FAIL(why + "\n" + text);
    RC_ASSERT(print(q, o) == text);
    RC_ASSERT(!toJson(q).empty());
  }
}

}  // namespace
}  // namespace braid
