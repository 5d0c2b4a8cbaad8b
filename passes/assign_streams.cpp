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
#include "passes/pass.h"

namespace braid {
namespace {

StreamRef mainStream() { return StreamRef::named("0"); }

StreamRef worker(const LoweringContext& ctx, const std::string& index) {
  Scalar i = Scalar::symbol(index);
  if (ctx.options.indexing == StreamIndexing::kRaw) return StreamRef::indexed(i);
  return StreamRef::indexed(Scalar::binary(ScalarOp::kMod, i, Scalar::symbol(kNumberOfStreams)));
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

class AssignStreams : public Pass {
 public:
  std::string name() const override { return "assign-streams"; }
  bool run(LoweringContext& ctx) override {
    Scope& top = ctx.program.body();
    Scope out;
    bool changed = false;
    for (auto& s : top) {
      if (!s->is<ForLoop>() || !ctx.streamLoops.count(s->as<ForLoop>())) {
        out.push_back(std::move(s));
        continue;
      }
      ForLoop& loop = *s->as<ForLoop>();
      StreamRef w = worker(ctx, loop.index);
      out.push_back(streamStmt<GetCurrentStream>(mainStream()));
      Scope body;
      body.push_back(streamStmt<SetCurrentStream>(w));
      if (ctx.options.protocol != StreamProtocol::kInLoopSync) {
        if (ctx.options.protocol == StreamProtocol::kSeparateSyncLoop) {
          auto sync = sameLoop(loop);
          sync->body.push_back(streamStmt<SetCurrentStream>(w));
          sync->body.push_back(streamStmt<Synchronize>(mainStream()));
          out.push_back(std::move(sync));
        } else {
          body.push_back(streamStmt<Synchronize>(mainStream()));
        }
        for (auto& b : loop.body) body.push_back(std::move(b));
        body.push_back(streamStmt<SetCurrentStream>(mainStream()));
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
