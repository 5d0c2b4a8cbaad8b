#include "viz/trace_writer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace braid::viz {

namespace {

using json = nlohmann::ordered_json;

// Microseconds rounded to nanoseconds: Perfetto reads `ts` in us with ns resolution.
double us(double v) { return static_cast<double>(static_cast<int64_t>(v * 1000.0 + (v >= 0 ? 0.5 : -0.5))) / 1000.0; }

int sortIndex(TimelineStreamKind k) {
  switch (k) {
    case TimelineStreamKind::kDefault:
      return 0;
    case TimelineStreamKind::kWorker:
      return 1;
    case TimelineStreamKind::kCommunicator:
      return 2;
  }
  return 3;
}

// Operations of each stream in time order, to move flow end points off zero-length markers.
class StreamOrder {
 public:
  explicit StreamOrder(const Timeline& t) : t_(t), pos_(t.ops.size(), 0) {
    for (const TimelineOp& op : t.ops) byStream_[op.stream].push_back(op.id);
    for (auto& [s, ops] : byStream_) {
      std::stable_sort(ops.begin(), ops.end(), [&](int32_t a, int32_t b) { return op(a).startUs < op(b).startUs; });
      for (size_t i = 0; i < ops.size(); ++i) pos_[static_cast<size_t>(ops[i])] = i;
    }
  }
  const TimelineOp& op(int32_t id) const { return t_.ops[static_cast<size_t>(id)]; }
  // `id` itself when it takes time, else the last operation before it on its stream that does.
  int32_t sourceSlice(int32_t id) const {
    const auto& ops = byStream_.at(op(id).stream);
    for (size_t i = pos_[static_cast<size_t>(id)] + 1; i-- > 0;)
      if (op(ops[i]).durationUs() > 0) return ops[i];
    return -1;
  }
  // `id` itself when it takes time, else the first operation after it on its stream that does.
  int32_t targetSlice(int32_t id) const {
    const auto& ops = byStream_.at(op(id).stream);
    for (size_t i = pos_[static_cast<size_t>(id)]; i < ops.size(); ++i)
      if (op(ops[i]).durationUs() > 0) return ops[i];
    return -1;
  }

 private:
  const Timeline& t_;
  std::map<int32_t, std::vector<int32_t>> byStream_;
  std::vector<size_t> pos_;
};

}  // namespace

std::string chromeTraceJson(const Timeline& t, const TraceOptions& o) {
  json events = json::array();
  std::map<int64_t, bool> ranks;
  for (const TimelineStream& s : t.streams) ranks[s.rank] = true;
  for (const auto& [rank, _] : ranks) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", rank},
                      {"args", {{"name", "rank " + std::to_string(rank) + " (" + t.source + ", " + t.machine + ")"}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"args", {{"sort_index", rank}}}});
  }
  for (const TimelineStream& s : t.streams) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s.rank}, {"tid", s.id},
                      {"args", {{"name", s.name + " [" + timelineStreamKindName(s.kind) + "]"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", s.rank}, {"tid", s.id},
                      {"args", {{"sort_index", sortIndex(s.kind) * 1000000 + s.id}}}});
  }
  for (const TimelineOp& op : t.ops) {
    json args = {{"op", op.id}, {"kind", timelineOpKindName(op.kind)}, {"bytes", op.bytes}, {"flops", op.flops}};
    if (op.line > 0) args["line"] = op.line;
    if (!op.iteration.empty()) args["iteration"] = op.iteration;
    json ev = {{"name", op.name}, {"cat", timelineOpKindName(op.kind)}, {"pid", op.rank}, {"tid", op.stream},
               {"ts", us(op.startUs)}};
    if (op.durationUs() > 0) {
      ev["ph"] = "X";
      // Rounded end minus rounded start: back-to-back operations stay back to back (Perfetto
      // drops slices of one track that overlap by a nanosecond).
      ev["dur"] = us(op.endUs) - us(op.startUs);
    } else {
      ev["ph"] = "i";
      ev["s"] = "t";
    }
    ev["args"] = std::move(args);
    events.push_back(std::move(ev));
  }
  if (o.flows) {
    StreamOrder order(t);
    int64_t id = 0;
    for (const TimelineEdge& e : t.edges) {
      int32_t from = order.sourceSlice(e.from);
      int32_t to = order.targetSlice(e.to);
      if (from < 0 || to < 0 || from == to) continue;
      const TimelineOp& a = order.op(from);
      const TimelineOp& b = order.op(to);
      // Points strictly inside their slices (Perfetto binds them to the enclosing slice).
      double out = a.endUs - std::min(a.durationUs() / 2, 0.001);
      double in = b.startUs + std::min(b.durationUs() / 2, 0.001);
      if (in < out) continue;  // moved off a marker onto work that ran earlier: no arrow
      const char* kind = timelineEdgeKindName(e.kind);
      events.push_back({{"ph", "s"}, {"id", id}, {"cat", kind}, {"name", kind}, {"pid", a.rank}, {"tid", a.stream},
                        {"ts", us(out)}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"id", id}, {"cat", kind}, {"name", kind}, {"pid", b.rank},
                        {"tid", b.stream}, {"ts", us(in)}});
      ++id;
    }
  }
  for (const TraceCounter& c : o.counters)
    for (const auto& [t_us, v] : c.points)
      events.push_back({{"ph", "C"}, {"name", c.name}, {"pid", c.rank}, {"ts", us(t_us)}, {"args", {{c.name, v}}}});
  json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  json meta = {{"source", t.source}, {"program", t.program}, {"machine", t.machine}, {"ranks", t.ranks}};
  for (const auto& [k, v] : t.meta) meta[k] = v;
  doc["otherData"] = std::move(meta);
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void writeChromeTrace(const Timeline& t, const std::string& path, const TraceOptions& o) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot write the trace");
  out << chromeTraceJson(t, o) << "\n";
  if (!out) throw Error(path + ": cannot write the trace");
}

}  // namespace braid::viz
