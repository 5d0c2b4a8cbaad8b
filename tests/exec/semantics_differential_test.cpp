// One meaning, written once (issue 9, item 6): for random scheduled fusions lowered under every
// protocol, the evaluator binds every tensor to a buffer or view of exactly the shape, strides and
// offset that ir/semantics gives it, statement by statement. Both report their bindings through
// the same kind of hook (EvalOptions::onBind, sem::SemanticsOptions::onBind).
#ifdef BRAID_WITH_TORCH

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <random>
#include <sstream>

#include "exec/communicator.h"
#include "exec/evaluator.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/interpreter.h"
#include "passes/lower.h"
#include "tests/support/random_schedules.h"

namespace braid::exec {
namespace {

struct Binding {
  const Stmt* stmt = nullptr;
  const TensorView* tv = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // only where the size is > 1 (elsewhere a stride means nothing)
  int64_t offset = 0;

  std::string str() const {
    std::ostringstream os;
    os << (tv ? tv->nameStr() : "?") << " at " << (stmt ? stmt->loc.str() : std::string("entry")) << ": sizes [";
    for (int64_t s : sizes) os << s << " ";
    os << "] strides [";
    for (int64_t s : strides) os << s << " ";
    os << "] offset " << offset;
    return os.str();
  }
  bool operator==(const Binding& o) const {
    return stmt == o.stmt && tv == o.tv && sizes == o.sizes && strides == o.strides && offset == o.offset;
  }
};

Binding make(const Stmt* s, const TensorView* tv, std::vector<int64_t> sizes, std::vector<int64_t> strides,
             int64_t offset) {
  Binding b{s, tv, std::move(sizes), {}, offset};
  for (size_t d = 0; d < b.sizes.size(); ++d)
    if (b.sizes[d] > 1) b.strides.push_back(strides[d]);
  return b;
}

RC_GTEST_PROP(SemanticsDifferential, EvaluatorBindsTheShapesAndViewsTheSemanticsDefine, ()) {
  const auto seed = *rc::gen::inRange<uint64_t>(0, uint64_t{1} << 40);
  const auto protocol = *rc::gen::element(StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync,
                                          StreamProtocol::kPerIterationJoin);
  std::mt19937_64 rng(seed);
  random_schedules::ScheduledCase c = random_schedules::randomScheduledFusion(rng, 1);
  c.lowering.protocol = protocol;
  HostProgram p;
  try {
    p = lower(*c.fusion, c.lowering, 1);
  } catch (const NotLowerableError&) {
    RC_DISCARD("not lowerable: " + c.label);
  }
  assignPrintedLocations(p, "lowered.hir");
  RC_TAG(streamProtocolName(protocol));

  std::vector<Binding> semantic;
  sem::SemanticsOptions so;
  so.numRanks = 1;
  so.numberOfStreams = c.lowering.streams;
  so.onBind = [&](int64_t, const Stmt* s, const TensorView* tv, const sem::Region& r) {
    semantic.push_back(make(s, tv, r.sizes, r.strides, r.offset));
  };
  sem::buildEventGraph(p, so);

  std::vector<Binding> evaluated;
  auto comm = makeSelfCommunicator();
  EvalOptions eo;
  eo.numberOfStreams = c.lowering.streams;
  eo.onBind = [&](const Stmt* s, const TensorView* tv, const at::Tensor& t) {
    evaluated.push_back(make(s, tv, t.sizes().vec(), t.strides().vec(), t.storage_offset()));
  };
  std::vector<at::Tensor> inputs;
  for (size_t i = 0; i < p.inputs().size(); ++i) {
    const TensorView* tv = p.inputs()[i];
    inputs.push_back(randomInput(sem::bufferShape(*tv, {}), seed, static_cast<int64_t>(i)).to(toScalarType(tv->dtype())));
  }
  Evaluator ev(p, *comm, eo);
  ev.run(inputs);

  RC_ASSERT(!semantic.empty());
  std::string context = c.label + " protocol " + streamProtocolName(protocol) + "\n" + print(p);
  RC_ASSERT(semantic.size() == evaluated.size());
  for (size_t i = 0; i < semantic.size(); ++i) {
    if (!(semantic[i] == evaluated[i]))
      RC_FAIL("binding " + std::to_string(i) + ": the semantics binds " + semantic[i].str() + ", the evaluator " +
              evaluated[i].str() + "\n" + context);
  }
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
