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

void drawSimulatedTimelines(const std::vector<Timeline>& timelines, const std::vector<std::string>& labels,
                            const std::string& title, const std::string& path) {
  viz::TimelineDrawOptions o;
  o.title = title;
  o.labels = labels;
  viz::renderTimelines(timelines, o, path);
}

}  // namespace braid::cli
