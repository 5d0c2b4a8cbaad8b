#include "ir/timeline.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/input_file.h"

namespace braid {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* kSchema = "braid-timeline/1";

template <typename E, size_t N>
E enumFromName(const std::string& name, const E (&all)[N], const char* (*nameOf)(E), const std::string& where) {
  for (E e : all)
    if (name == nameOf(e)) return e;
  std::string known;
  for (E e : all) known += (known.empty() ? "" : ", ") + std::string(nameOf(e));
  throw Error(where + ": unknown value \"" + name + "\" (expected one of " + known + ")");
}

constexpr TimelineStreamKind kStreamKinds[] = {TimelineStreamKind::kDefault, TimelineStreamKind::kWorker,
                                               TimelineStreamKind::kCommunicator};
constexpr TimelineOpKind kOpKinds[] = {TimelineOpKind::kCompute, TimelineOpKind::kCommunication,
                                       TimelineOpKind::kCopy,    TimelineOpKind::kMemset,
                                       TimelineOpKind::kSync,    TimelineOpKind::kWait,
                                       TimelineOpKind::kHost};
constexpr TimelineEdgeKind kEdgeKinds[] = {TimelineEdgeKind::kSync, TimelineEdgeKind::kWait, TimelineEdgeKind::kPost,
                                           TimelineEdgeKind::kRendezvous};

// Typed field access that names the field in every error.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const json& field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path + "." + key, "missing");
    return *it;
  }
  std::string str(const json& obj, const std::string& path, const char* key, bool required = true) const {
    if (!required && !obj.contains(key)) return "";
    const json& v = field(obj, path, key);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  double num(const json& obj, const std::string& path, const char* key, bool required = true) const {
    if (!required && !obj.contains(key)) return 0;
    const json& v = field(obj, path, key);
    if (!v.is_number()) fail(path + "." + key, "expected a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(path + "." + key, "expected a finite number");
    return d;
  }
  int64_t integer(const json& obj, const std::string& path, const char* key, bool required = true) const {
    if (!required && !obj.contains(key)) return 0;
    const json& v = field(obj, path, key);
    if (!v.is_number_integer()) fail(path + "." + key, "expected an integer");
    return v.get<int64_t>();
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_array()) fail(path + "." + key, "expected an array");
    return v;
  }
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    std::string p = path.rfind(".", 0) == 0 ? path.substr(1) : path;
    throw Error(file_ + ": " + (p.empty() ? "" : p + ": ") + what);
  }

 private:
  std::string file_;
};

}  // namespace

const char* timelineStreamKindName(TimelineStreamKind k) {
  switch (k) {
    case TimelineStreamKind::kDefault:
      return "default";
    case TimelineStreamKind::kWorker:
      return "worker";
    case TimelineStreamKind::kCommunicator:
      return "communicator";
  }
  return "?";
}

const char* timelineOpKindName(TimelineOpKind k) {
  switch (k) {
    case TimelineOpKind::kCompute:
      return "compute";
    case TimelineOpKind::kCommunication:
      return "communication";
    case TimelineOpKind::kCopy:
      return "copy";
    case TimelineOpKind::kMemset:
      return "memset";
    case TimelineOpKind::kSync:
      return "sync";
    case TimelineOpKind::kWait:
      return "wait";
    case TimelineOpKind::kHost:
      return "host";
  }
  return "?";
}

const char* timelineEdgeKindName(TimelineEdgeKind k) {
  switch (k) {
    case TimelineEdgeKind::kSync:
      return "sync";
    case TimelineEdgeKind::kWait:
      return "wait";
    case TimelineEdgeKind::kPost:
      return "post";
    case TimelineEdgeKind::kRendezvous:
      return "rendezvous";
  }
  return "?";
}

double Timeline::makespanUs() const {
  double m = 0;
  for (const auto& op : ops) m = std::max(m, op.endUs);
  return m;
}

std::string timelineToJson(const Timeline& t, int indent) {
  json j;
  j["schema"] = kSchema;
  j["source"] = t.source;
  j["program"] = t.program;
  j["machine"] = t.machine;
  j["time_unit"] = "us";
  j["ranks"] = t.ranks;
  j["makespan_us"] = t.makespanUs();
  j["meta"] = json::object();
  for (const auto& [k, v] : t.meta) j["meta"][k] = v;
  j["streams"] = json::array();
  for (const auto& s : t.streams)
    j["streams"].push_back(
        {{"id", s.id}, {"rank", s.rank}, {"kind", timelineStreamKindName(s.kind)}, {"name", s.name}});
  j["ops"] = json::array();
  for (const auto& o : t.ops)
    j["ops"].push_back({{"id", o.id},
                        {"rank", o.rank},
                        {"stream", o.stream},
                        {"kind", timelineOpKindName(o.kind)},
                        {"name", o.name},
                        {"line", o.line},
                        {"iteration", o.iteration},
                        {"start_us", o.startUs},
                        {"end_us", o.endUs},
                        {"bytes", o.bytes},
                        {"flops", o.flops}});
  j["edges"] = json::array();
  for (const auto& e : t.edges)
    j["edges"].push_back({{"from", e.from}, {"to", e.to}, {"kind", timelineEdgeKindName(e.kind)}});
  // One op or edge per line keeps large files diff- and grep-friendly.
  if (indent < 0) return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::ostringstream os;
  os << "{\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    os << (first ? "" : ",\n") << " \"" << it.key() << "\": ";
    first = false;
    if (it->is_array() && !it->empty()) {
      os << "[\n";
      for (size_t i = 0; i < it->size(); ++i) os << "  " << (*it)[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << (i + 1 < it->size() ? ",\n" : "\n");
      os << " ]";
    } else {
      os << it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  os << "\n}\n";
  return os.str();
}

Timeline timelineFromJson(const std::string& text, const std::string& file) {
  Reader r(file);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(file + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {  // out_of_range: a number such as 1e999
    throw Error(file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) r.fail("", "expected a JSON object (a braid timeline)");
  std::string schema = r.str(j, "", "schema");
  if (schema != kSchema) r.fail("schema", "\"" + schema + "\" is not " + kSchema);
  Timeline t;
  t.source = r.str(j, "", "source");
  if (t.source != "predicted" && t.source != "measured") r.fail("source", "expected \"predicted\" or \"measured\"");
  t.program = r.str(j, "", "program", false);
  t.machine = r.str(j, "", "machine", false);
  t.ranks = r.integer(j, "", "ranks");
  if (t.ranks < 0 || t.ranks > kMaxRanks) r.fail("ranks", "expected 0.." + std::to_string(kMaxRanks) + " ranks");
  if (j.contains("meta")) {
    const json& m = j["meta"];
    if (!m.is_object()) r.fail("meta", "expected an object");
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!it->is_string()) r.fail("meta." + it.key(), "expected a string");
      t.meta[it.key()] = it->get<std::string>();
    }
  }
  const json& streams = r.array(j, "", "streams");
  for (size_t i = 0; i < streams.size(); ++i) {
    std::string p = "streams[" + std::to_string(i) + "]";
    TimelineStream s;
    s.id = static_cast<int32_t>(r.integer(streams[i], p, "id"));
    if (s.id != static_cast<int32_t>(i)) r.fail(p + ".id", "must equal its position " + std::to_string(i));
    s.rank = r.integer(streams[i], p, "rank");
    if (s.rank < 0 || s.rank >= t.ranks)
      r.fail(p + ".rank", "no rank " + std::to_string(s.rank) + " in a timeline of " + std::to_string(t.ranks) + " ranks");
    s.kind = enumFromName(r.str(streams[i], p, "kind"), kStreamKinds, timelineStreamKindName, file + ": " + p + ".kind");
    s.name = r.str(streams[i], p, "name");
    t.streams.push_back(std::move(s));
  }
  const json& ops = r.array(j, "", "ops");
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string p = "ops[" + std::to_string(i) + "]";
    const json& o = ops[i];
    TimelineOp op;
    op.id = static_cast<int32_t>(r.integer(o, p, "id"));
    if (op.id != static_cast<int32_t>(i)) r.fail(p + ".id", "must equal its position " + std::to_string(i));
    op.rank = r.integer(o, p, "rank");
    int64_t stream = r.integer(o, p, "stream");
    if (stream < 0 || stream >= static_cast<int64_t>(t.streams.size()))
      r.fail(p + ".stream", "no stream " + std::to_string(stream));
    op.stream = static_cast<int32_t>(stream);
    if (t.streams[static_cast<size_t>(stream)].rank != op.rank)
      r.fail(p + ".rank", "stream " + std::to_string(stream) + " belongs to rank " +
                              std::to_string(t.streams[static_cast<size_t>(stream)].rank));
    op.kind = enumFromName(r.str(o, p, "kind"), kOpKinds, timelineOpKindName, file + ": " + p + ".kind");
    op.name = r.str(o, p, "name");
    op.line = static_cast<int>(r.integer(o, p, "line", false));
    op.iteration = r.str(o, p, "iteration", false);
    op.startUs = r.num(o, p, "start_us");
    op.endUs = r.num(o, p, "end_us");
    if (!(std::abs(op.startUs) <= 1e15) || !(std::abs(op.endUs) <= 1e15))
      r.fail(p, "start_us and end_us must be within 1e15 us (about 30 years) of the timeline's origin");
    if (op.endUs < op.startUs) r.fail(p, "ends (" + std::to_string(op.endUs) + ") before it starts (" +
                                             std::to_string(op.startUs) + ")");
    op.bytes = r.integer(o, p, "bytes", false);
    op.flops = r.num(o, p, "flops", false);
    t.ops.push_back(std::move(op));
  }
  if (j.contains("edges")) {
    const json& edges = r.array(j, "", "edges");
    for (size_t i = 0; i < edges.size(); ++i) {
      std::string p = "edges[" + std::to_string(i) + "]";
      TimelineEdge e;
      int64_t from = r.integer(edges[i], p, "from");
      int64_t to = r.integer(edges[i], p, "to");
      for (auto [v, name] : {std::pair{from, "from"}, std::pair{to, "to"}})
        if (v < 0 || v >= static_cast<int64_t>(t.ops.size())) r.fail(p + "." + name, "no op " + std::to_string(v));
      e.from = static_cast<int32_t>(from);
      e.to = static_cast<int32_t>(to);
      e.kind = enumFromName(r.str(edges[i], p, "kind"), kEdgeKinds, timelineEdgeKindName, file + ": " + p + ".kind");
      t.edges.push_back(e);
    }
  }
  return t;
}

Timeline readTimelineFile(const std::string& path) {
  return timelineFromJson(readInputFile(path, "timeline file"), path);
}

void writeTimelineFile(const Timeline& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot write the timeline file");
  out << timelineToJson(t);
  if (!out.good()) throw Error(path + ": write failed");
}

}  // namespace braid
