#include "cli/sim_outputs.h"

#include "viz/timeline_draw.h"

namespace braid::cli {

viz::TraceOptions smCounterTracks(const sim::SimResult& r) {
  viz::TraceOptions to;
  for (size_t gpu = 0; gpu < r.engine.busySms.size(); ++gpu) {
    viz::TraceCounter c;
    c.rank = r.graph.ranks[gpu];
    c.name = "busy SMs";
    for (const auto& pt : r.engine.busySms[gpu]) c.points.emplace_back(pt.us, pt.value);
    to.counters.push_back(std::move(c));
  }
  return to;
}

std::string foldedRanksNote(const sim::SimResult& r) {
  if (!r.classes.folded()) return "";
  const size_t kShown = 3;
  std::string note;
  for (size_t c = 0; c < r.classes.representatives.size() && c < kShown; ++c) {
    if (r.classes.classSize[c] < 2) continue;
    note += (note.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r.classes.representatives[c]) +
            " drawn for ranks " + r.classes.members(static_cast<int32_t>(c));
  }
  if (r.classes.representatives.size() > kShown) note += "; ...";
  return note;
}

void drawSimulatedTimelines(const std::vector<Timeline>& timelines, const std::vector<std::string>& labels,
                            const std::string& title, const std::string& path) {
  viz::TimelineDrawOptions o;
  o.title = title;
  o.labels = labels;
  viz::renderTimelines(timelines, o, path);
}

}  // namespace braid::cli
