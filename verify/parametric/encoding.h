// The ordering constraints of a program model over a finite set of symbolic instances
// (verifiers.md, sections 2.2 and 2.5). Every operation instance x gets integer times
// s(x) <= e(x) (s < e for real work); the facts of DESIGN.md's semantics are stated for every
// pair of instances in the set, as implications guarded by the instances existing:
//
//   stream FIFO      same stream, x issued before y                 =>  e(x) <= s(y)
//   Synchronize w    x on w's target stream, issued before w        =>  e(x) <= s(w)
//   posting c        x on the stream current at c's post, before c  =>  e(x) <= s(c)
//   Wait w on c      w waits for that instance of c                 =>  e(c) <= s(w)
//   induction lemma  t@i and t@j, i < j (once t@k => t@k+1 is proved) => e(t@i) <= s(t@j)
//
// Communications run on their communicator's stream, ordered by nothing but their post and
// (for the memory they touch) Waits: the communicator's one-at-a-time order is never a memory
// ordering. Each fact is valid for every execution, so any instantiation is sound: when
// "x and y may overlap in time" is unsatisfiable, no execution overlaps them, for all values of
// the parameters and indices. The instances are every template at two arbitrary iteration
// vectors I and J (one index per loop depth, shared by all loops: loops compare by value), so a
// property stated for t@I and u@J covers every pair of iterations.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "verify/parametric/model.h"

namespace braid::verify::parametric {

struct Instance {
  int id = 0;
  int tmpl = 0;
  std::vector<z3::expr> idx;
  z3::expr s = zeroTerm();  // start
  z3::expr e = zeroTerm();  // end
  z3::expr valid = trueTerm();
  SymStream stream;
  SymStream post;
  SymStream target;
  std::vector<std::pair<z3::expr, int>> waits;  // (condition, communication instance)
};

class Encoding {
 public:
  Encoding(const ProgramModel& m, z3::solver& solver);

  const ProgramModel& model() const { return m_; }
  z3::context& ctx() const { return m_.ctx; }
  // The shared iteration vectors (index d is loop depth d + 1).
  const std::vector<z3::expr>& I() const { return I_; }
  const std::vector<z3::expr>& J() const { return J_; }
  std::vector<z3::expr> prefix(const std::vector<z3::expr>& v, size_t depth) const {
    return {v.begin(), v.begin() + static_cast<long>(std::min(depth, v.size()))};
  }

  // Instances of every template at I and J (depth 0: the one instance); asserts their facts.
  void seedBasic();
  // More instances: the first and last iteration of every template's innermost loop.
  void seedNeighbours();
  bool neighboursSeeded() const { return neighbours_; }
  // The instance of template `tmpl` at `idx` (created, with its facts, when new).
  int instance(int tmpl, const std::vector<z3::expr>& idx);
  const Instance& inst(int id) const { return instances_[static_cast<size_t>(id)]; }
  size_t instanceCount() const { return instances_.size(); }

  // Induction: asserts e(t@i) <= s(t@j) for i < j (innermost index, same outer indices) for
  // every instance of `tmpl`, present and future. Only valid once t@k => t@k+1 is proved.
  void addChainLemma(int tmpl);
  bool hasChainLemma(int tmpl) const { return lemmas_.count(tmpl) > 0; }
  std::vector<int> chainLemmas() const {
    std::vector<int> v;
    for (const auto& [t, on] : lemmas_) v.push_back(t);
    return v;
  }

  // A template term at instance `x`'s indices.
  z3::expr at(int x, const z3::expr& e) const;
  z3::expr at(int tmpl, const std::vector<z3::expr>& idx, const z3::expr& e) const;
  View at(int tmpl, const std::vector<z3::expr>& idx, const View& v) const;
  BufRef at(int tmpl, const std::vector<z3::expr>& idx, const BufRef& b) const;
  // The instance exists: its guard holds and its indices are in range.
  z3::expr validAt(int tmpl, const std::vector<z3::expr>& idx) const;
  // Template x at ix is issued before template y at iy on the rank's host thread.
  z3::expr before(int tx, const std::vector<z3::expr>& ix, int ty, const std::vector<z3::expr>& iy) const;

  // x may still run when y starts (x is not ordered before y).
  z3::expr notBefore(int x, int y) const { return inst(y).s < inst(x).e; }
  z3::expr mayOverlap(int x, int y) const { return notBefore(x, y) && notBefore(y, x); }

 private:
  void assertFacts(int x, int y);  // facts between two instances (both directions)
  void assertOwn(int x);
  z3::expr_vector fromOf(int tmpl) const;
  static std::string key(int tmpl, const std::vector<z3::expr>& idx);

  const ProgramModel& m_;
  z3::solver& solver_;
  std::vector<z3::expr> I_, J_;
  std::vector<Instance> instances_;
  std::map<std::string, int> byKey_;
  std::map<int, std::vector<int>> byTemplate_;
  std::map<int, bool> lemmas_;
  bool neighbours_ = false;
  int maxDepth_ = 0;
};

}  // namespace braid::verify::parametric
