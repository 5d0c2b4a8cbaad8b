// Helpers of the lowering tests: small fusions, top-level shape of a program, finding statements.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/host_ir_text.h"
#include "ir/ops.h"
#include "passes/lower.h"

namespace braid::testing_util {

// The kinds of the top-level statements, e.g. {"Allocate", "GetCurrentStream", "ForLoop", ...}.
inline std::vector<std::string> topLevel(const HostProgram& p) {
  std::vector<std::string> v;
  for (const auto& s : p.body()) v.push_back(stmtKindName(s->kind()));
  return v;
}

inline int countKind(const Scope& scope, StmtKind k) {
  int n = 0;
  forEachStmt(scope, [&](const Stmt& s, int) { n += s.kind() == k ? 1 : 0; });
  return n;
}

template <class T>
std::vector<const T*> findAll(const Scope& scope) {
  std::vector<const T*> v;
  forEachStmt(scope, [&](const Stmt& s, int) {
    if (s.is<T>()) v.push_back(s.as<T>());
  });
  return v;
}

// The Sets of `p` that copy a view of a program input into a buffer: the P2P pipeline's copy of
// this rank's own shard, which forward-own-shard removes where the chunk is read in place.
inline int ownShardCopies(const HostProgram& p) {
  std::set<const TensorView*> input_views;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<AliasSelect>() && std::count(p.inputs().begin(), p.inputs().end(), s.as<AliasSelect>()->in))
      input_views.insert(s.as<AliasSelect>()->out);
  });
  int n = 0;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    const Expr* e = s.is<HostOp>() ? s.as<HostOp>()->op : nullptr;
    if (e && e->type() == OpType::kSet && input_views.count(e->input(0))) ++n;
  });
  return n;
}

// The smallest stream-parallel fusion, nvFuser's SingleSetOp: tv1 = set(tv0) over [4, 8] with the
// output's axis 0 parallelized on Stream. Returns tv1.
inline TensorView* singleStreamSet(Fusion& f) {
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->parallelize(0, ParallelType::kStream);
  return tv1;
}

inline LoweringOptions protocolA() { return LoweringOptions{}; }
inline LoweringOptions protocolB() {
  LoweringOptions o;
  o.protocol = StreamProtocol::kInLoopSync;
  o.indexing = StreamIndexing::kRaw;
  return o;
}

// Compares `text` with the golden file at `path`, or (with BRAID_UPDATE_GOLDEN=1) rewrites the
// file and skips. `what` names what changed in the failure message. A macro so that GTEST_SKIP
// and ASSERT_TRUE return from the test itself.
#define BRAID_EXPECT_GOLDEN(path, text, what)                                                       \
  do {                                                                                              \
    const std::string golden_path_ = (path);                                                        \
    const char* update_ = std::getenv("BRAID_UPDATE_GOLDEN");                                       \
    if (update_ != nullptr && std::string(update_) == "1") {                                        \
      std::ofstream(golden_path_) << (text);                                                        \
      GTEST_SKIP() << "updated " << golden_path_;                                                   \
    }                                                                                               \
    std::ifstream in_(golden_path_);                                                                \
    ASSERT_TRUE(in_.good()) << "missing golden file " << golden_path_                               \
                            << " (run with BRAID_UPDATE_GOLDEN=1 to create it)";                    \
    std::stringstream expected_;                                                                    \
    expected_ << in_.rdbuf();                                                                       \
    EXPECT_EQ((text), expected_.str()) << (what) << " changed; if intended, regenerate with "       \
                                       << "BRAID_UPDATE_GOLDEN=1 and review the diff";              \
  } while (false)

// Prints, parses back and compares; returns "" when equal, else why not.
inline std::string roundTrip(const HostProgram& p) {
  std::string text = print(p);
  HostProgram q = parseHostProgram(text, "<lowered>");
  std::string why;
  if (!structurallyEqual(p, q, &why)) return why.empty() ? "differs" : why;
  return "";
}

}  // namespace braid::testing_util
