// Lost parallelism (a warning): a stream loop whose consecutive iterations run on different
// streams, yet each iteration's work cannot start before the previous iteration's work has
// finished, because of the program's synchronization (HOSTIR.md's "one stream-parallel copy":
// iteration i+1's worker waits on the default stream, which waited on iteration i's worker).
#include <algorithm>
#include <map>
#include <set>

#include "verify/checker_internal.h"

namespace braid::verify::detail {

namespace {
bool isWork(const sem::Event& e) {
  return !e.isMarker();
}
}  // namespace

void checkParallelism(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  for (const sem::LoopRun& run : g.loops) {
    if (run.iterations.size() < 2) continue;
    // Per iteration: stream -> (first work event, last work event).
    std::vector<std::map<int32_t, std::pair<int32_t, int32_t>>> work(run.iterations.size());
    std::set<int32_t> all_streams;
    for (size_t i = 0; i < run.iterations.size(); ++i) {
      for (int32_t e = run.iterations[i].begin; e < run.iterations[i].end; ++e) {
        const sem::Event& x = g.events[static_cast<size_t>(e)];
        // A communicator's stream is shared by all iterations by construction; the question is
        // whether the program's own streams overlap.
        if (!isWork(x) || !hb.runs(e) || g.streams[static_cast<size_t>(x.stream)].isCommunicator()) continue;
        auto [it, inserted] = work[i].try_emplace(x.stream, e, e);
        it->second.second = e;
        all_streams.insert(x.stream);
      }
    }
    if (all_streams.size() < 2) continue;
    int pairs = 0, serialized = 0;
    int32_t example_from = -1, example_to = -1;
    for (size_t i = 0; i + 1 < run.iterations.size(); ++i) {
      const auto& a = work[i];
      const auto& b = work[i + 1];
      if (a.empty() || b.empty()) continue;
      bool disjoint = true;
      for (const auto& [s, _] : b)
        if (a.count(s)) disjoint = false;
      if (!disjoint) continue;
      ++pairs;
      bool all = true;
      int32_t from = -1, to = -1;
      for (const auto& [sb, fb] : b) {
        for (const auto& [sa, fa] : a) {
          if (!hb.ordered(fa.second, fb.first)) {
            all = false;
            break;
          }
          from = fa.second;
          to = fb.first;
        }
        if (!all) break;
      }
      if (!all) continue;
      // Serialization by the communicator alone is NCCL's rule, not the program's choice.
      auto chain = hb.chain(from, to);
      bool by_sync = false;
      for (const auto& s : chain) by_sync |= s.via == sem::LinkKind::kSync || s.via == sem::LinkKind::kWait;
      if (!by_sync) continue;
      ++serialized;
      if (example_from < 0) {
        example_from = from;
        example_to = to;
      }
    }
    if (pairs == 0 || serialized < pairs) continue;
    Finding* f = r.add(FindingKind::kLostParallelism, {run.loop});
    if (!f) continue;
    const sem::Event& a = g.events[static_cast<size_t>(example_from)];
    f->summary = "the iterations of loop " + run.loop->index + " run on different streams but one after another";
    f->sites.push_back(r.stmtSite(
        "loop", run.loop, run.rank, -1, run.outer,
        std::to_string(run.iterations.size()) + " iterations on " + std::to_string(all_streams.size()) + " streams"));
    f->sites.push_back(r.eventSite("last work of an iteration", example_from));
    f->sites.push_back(r.eventSite("first work of the next", example_to));
    f->chain = r.chainLines(hb, hb.chain(example_from, example_to));
    f->explanation.push_back(
        "Correct, but with no overlap: each iteration's first operation waits, through the "
        "chain below, for the previous iteration's last operation (rank " +
        std::to_string(a.rank) + ", every consecutive pair).");
    f->explanation.push_back(
        "Typically the worker waits on the default stream inside the loop after the default "
        "stream was made to wait on the previous worker. Fix: make the workers wait on the "
        "default stream in a separate loop before the work loop, and join them after it.");
  }
}

}  // namespace braid::verify::detail
