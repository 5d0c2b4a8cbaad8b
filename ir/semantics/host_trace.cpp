#include "ir/semantics/host_trace.h"

#include <optional>

#include "ir/error.h"

namespace braid::sem {

namespace {

class Walker {
 public:
  Walker(Bindings env, HostTrace& out) : env_(std::move(env)), out_(out) {}

  void scope(const Scope& s) {
    for (const auto& stmt : s) step(*stmt);
  }

 private:
  int64_t eval(const Scalar& s, const Stmt& stmt) {
    auto v = s.tryEvaluate(env_);
    if (!v)
      throw Error(stmt.loc.str() + ": cannot evaluate " + s.str() +
                  " (an unbound symbol; bind it with --bind NAME=VALUE)");
    return *v;
  }

  void step(const Stmt& s) {
    out_.stmts.push_back(&s);
    if (const auto* f = s.is<ForLoop>() ? s.as<ForLoop>() : nullptr) {
      int64_t begin = eval(f->begin(), s);
      int64_t end = eval(f->end(), s);
      std::optional<int64_t> saved;
      if (auto it = env_.find(f->index); it != env_.end()) saved = it->second;
      for (int64_t i = begin; i < end; ++i) {
        env_[f->index] = i;
        scope(f->body);
      }
      if (saved) {
        env_[f->index] = *saved;
      } else {
        env_.erase(f->index);
      }
    } else if (const auto* b = s.is<IfThenElse>() ? s.as<IfThenElse>() : nullptr) {
      scope(eval(b->predicate, s) != 0 ? b->thenBody : b->elseBody);
    }
  }

  Bindings env_;
  HostTrace& out_;
};

}  // namespace

HostTrace traceHost(const HostProgram& p, const Bindings& bindings, int64_t rank, int64_t numberOfStreams) {
  // The interpreter's scalars for this rank (interpreter.cpp, runRank).
  Bindings env = bindings;
  env[kRank] = rank;
  env[kDeviceIdxX] = rank;
  if (!env.count(kDeviceIdxY)) env[kDeviceIdxY] = 0;
  if (!env.count(kNumberOfStreams)) env[kNumberOfStreams] = numberOfStreams;
  HostTrace t;
  t.rank = rank;
  Walker(std::move(env), t).scope(p.body());
  return t;
}

}  // namespace braid::sem
