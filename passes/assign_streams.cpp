// Pass 9: stream assignment. Every stream loop forks from and joins to the caller's stream.
//
// Protocol A (nvFuser's MultiDeviceExecutor, the "developed" form of PR #4217):
//   GetCurrentStream into Stream 0
//   FOR i: SetCurrentStream(worker(i)); Synchronize(Stream 0)          <- separate sync loop
//   FOR i: SetCurrentStream(worker(i)); <body>; SetCurrentStream(Stream 0); Synchronize(worker(i))
// Protocol B (nvFuser's AssignStreams):
//   GetCurrentStream into Stream 0
//   FOR i: SetCurrentStream(worker(i)); Synchronize(Stream 0); <body>
//   SetCurrentStream(Stream 0)
//   FOR i: Synchronize(worker(i))                                      <- join loop
// Protocol C (nvFuser's first stream lowering, PR #4147 with the fork of PR #3913):
//   GetCurrentStream into Stream 0
//   FOR i: SetCurrentStream(worker(i)); Synchronize(Stream 0); <body>; SetCurrentStream(Stream 0);
//          Synchronize(worker(i))                                      <- per-iteration join
//   The join of iteration i is on the main stream, which iteration i+1's fork waits on: the
//   iterations run one after the other.
// worker(i) is `Stream ( i % numberOfStreams )` (modulo) or `Stream i` (raw).
//
// Deferred waits (--defer-waits, protocols A and C): a `Wait` of the loop body for a
// communication none of whose buffers a later statement of the body touches moves after the
// iteration's `SetCurrentStream(Stream 0)`: the main stream waits for it in the join, the worker
// goes on to the next chunk (docs/LOWERING.md, "Schedules").
//
// Prefetch (--prefetch): a loop that only posts communications ahead of the next stream loop
// gives iteration i a stream of its own, ahead(i) = `Stream ( numberOfStreams + i )` (modulo;
// raw: `Stream ( S + i )`, S the loop's extent), which holds nothing but the fork from the main
// stream, so every communication is posted at once; iteration i of the compute loop then waits
// for ahead(i) right after its fork:
//   FOR i: SetCurrentStream(ahead(i)); Synchronize(Stream 0); <communications of chunk i>
//   SetCurrentStream(Stream 0)
//   <the compute loop, its fork followed by Synchronize(ahead(i))>
#include <optional>
#include <set>

#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

StreamRef mainStream() { return StreamRef::named("0"); }

StreamRef worker(const LoweringContext& ctx, const std::string& index) {
  Scalar i = Scalar::symbol(index);
  if (ctx.options.indexing == StreamIndexing::kRaw) return StreamRef::indexed(i);
  return StreamRef::indexed(Scalar::binary(ScalarOp::kMod, i, Scalar::symbol(kNumberOfStreams)));
}

// The stream of a prefetch loop's iteration: past every worker key.
StreamRef ahead(const LoweringContext& ctx, const ForLoop& loop) {
  Scalar i = Scalar::symbol(loop.index);
  Scalar base = ctx.options.indexing == StreamIndexing::kRaw ? (loop.domain ? loop.domain->extent() : loop.stop)
                                                             : Scalar::symbol(kNumberOfStreams);
  return StreamRef::indexed(Scalar::binary(ScalarOp::kAdd, base, i));
}

template <class T>
StmtPtr streamStmt(StreamRef r) {
  auto s = std::make_unique<T>();
  s->stream = std::move(r);
  return s;
}

std::unique_ptr<ForLoop> sameLoop(const ForLoop& l) {
  auto c = std::make_unique<ForLoop>();
  c->index = l.index;
  c->domain = l.domain;
  c->start = l.start;
  c->stop = l.stop;
  return c;
}

// The Waits of `body` (top level) that may wait in the join instead: their communication is a
// top-level statement of the body and no statement after it touches one of its buffers.
std::set<const Stmt*> deferrableWaits(const LoweringContext& ctx, const Scope& body) {
  std::set<const Stmt*> out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i]->is<Communication>()) continue;
    const Communication& c = *body[i]->as<Communication>();
    std::set<const TensorView*> mine;
    for (TensorView* t : stmtTensors(c)) mine.insert(bufferOf(ctx, t));
    const Stmt* wait = nullptr;
    bool touched = false;
    for (size_t j = i + 1; j < body.size(); ++j) {
      if (body[j]->is<Wait>() && body[j]->as<Wait>()->id == c.id && wait == nullptr) {
        wait = body[j].get();
        continue;
      }
      auto touches = [&](const Stmt& s, int) {
        for (TensorView* t : stmtTensors(s)) touched = touched || mine.count(bufferOf(ctx, t)) > 0;
      };
      touches(*body[j], 0);
      if (body[j]->is<ForLoop>()) forEachStmt(body[j]->as<ForLoop>()->body, touches);
      if (body[j]->is<IfThenElse>()) {
        forEachStmt(body[j]->as<IfThenElse>()->thenBody, touches);
        forEachStmt(body[j]->as<IfThenElse>()->elseBody, touches);
      }
    }
    if (wait != nullptr && !touched) out.insert(wait);
  }
  return out;
}

class AssignStreams : public Pass {
 public:
  std::string name() const override { return "assign-streams"; }
  bool run(LoweringContext& ctx) override {
    Scope& top = ctx.program.body();
    Scope out;
    bool changed = false;
    std::optional<StreamRef> prefetched;  // the streams of the prefetch loop just before
    for (auto& s : top) {
      if (!s->is<ForLoop>() || !ctx.streamLoops.count(s->as<ForLoop>())) {
        out.push_back(std::move(s));
        continue;
      }
      ForLoop& loop = *s->as<ForLoop>();
      out.push_back(streamStmt<GetCurrentStream>(mainStream()));
      if (ctx.prefetchLoops.count(&loop)) {
        prefetched = ahead(ctx, loop);
        Scope body;
        body.push_back(streamStmt<SetCurrentStream>(*prefetched));
        body.push_back(streamStmt<Synchronize>(mainStream()));
        for (auto& b : loop.body) body.push_back(std::move(b));
        loop.body = std::move(body);
        out.push_back(std::move(s));
        out.push_back(streamStmt<SetCurrentStream>(mainStream()));
        changed = true;
        continue;
      }
      StreamRef w = worker(ctx, loop.index);
      Scope body;
      body.push_back(streamStmt<SetCurrentStream>(w));
      // Chunk i's communications were posted ahead, from their own stream.
      if (prefetched) body.push_back(streamStmt<Synchronize>(*prefetched));
      prefetched.reset();
      if (ctx.options.protocol != StreamProtocol::kInLoopSync) {
        if (ctx.options.protocol == StreamProtocol::kSeparateSyncLoop) {
          auto sync = sameLoop(loop);
          sync->body.push_back(streamStmt<SetCurrentStream>(w));
          sync->body.push_back(streamStmt<Synchronize>(mainStream()));
          out.push_back(std::move(sync));
        } else {
          body.push_back(streamStmt<Synchronize>(mainStream()));
        }
        std::set<const Stmt*> deferred;
        if (ctx.options.deferWaits) deferred = deferrableWaits(ctx, loop.body);
        Scope joined;
        for (auto& b : loop.body) (deferred.count(b.get()) ? joined : body).push_back(std::move(b));
        body.push_back(streamStmt<SetCurrentStream>(mainStream()));
        for (auto& b : joined) body.push_back(std::move(b));
        body.push_back(streamStmt<Synchronize>(w));
        loop.body = std::move(body);
        out.push_back(std::move(s));
      } else {
        body.push_back(streamStmt<Synchronize>(mainStream()));
        for (auto& b : loop.body) body.push_back(std::move(b));
        loop.body = std::move(body);
        auto join = sameLoop(loop);
        join->body.push_back(streamStmt<Synchronize>(w));
        out.push_back(std::move(s));
        out.push_back(streamStmt<SetCurrentStream>(mainStream()));
        out.push_back(std::move(join));
      }
      changed = true;
    }
    top = std::move(out);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makeAssignStreamsPass() { return std::make_unique<AssignStreams>(); }

}  // namespace braid
