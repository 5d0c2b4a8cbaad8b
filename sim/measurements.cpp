// Reading and writing calibration measurements (measurements.h, docs/CALIBRATION.md).
#include "sim/measurements.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/input_file.h"
#include "ir/input_values.h"
#include "sim/json_object.h"

namespace braid::sim {

using json = nlohmann::ordered_json;
static constexpr const char* kSchema = "braid-measurements/1";

size_t Measurements::size() const {
  return gemms.size() + copies.size() + collectives.size() + p2p.size() + host.size() + overlaps.size() +
         copyEngine.size() + power.size() + afterIdle.size();
}

const char* hostCallName(HostCall c) {
  switch (c) {
    case HostCall::kAtenOp:
      return "aten_op";
    case HostCall::kKernelLaunch:
      return "kernel_launch";
    case HostCall::kCommunicationCall:
      return "communication_call";
    case HostCall::kStreamCall:
      return "stream_call";
    case HostCall::kAllocation:
      return "allocation";
    case HostCall::kView:
      return "view";
    case HostCall::kControl:
      return "control";
    case HostCall::kLaunchLatency:
      return "launch_latency";
    case HostCall::kKernelMin:
      return "kernel_min";
  }
  return "?";
}

static void readCollective(StrictJsonObject& o, CollectiveMeasurement& c) {
  std::string kind = o.str("kind");
  auto t = parseCommunicationType(kind);
  if (!t) o.fail(o.at("kind"), "unknown collective \"" + kind + "\" (Allgather, Allreduce, ReduceScatter, ...)");
  c.kind = *t;
  c.team = o.count("team", 1, kMaxRanks);
  c.nodes = o.has("nodes") ? o.count("nodes", 1, kMaxRanks) : 1;
  if (c.nodes > c.team) o.fail(o.at("nodes"), "more nodes than team members");
  c.bytes = o.num("bytes", 1, 1e15);
}

// Calls `each` with a strict reader of every element of the optional array `key`.
template <typename F>
static void forEach(StrictJsonObject& root, const std::string& key, F each) {
  if (!root.has(key)) return;
  const json& a = root.array(key);
  for (size_t i = 0; i < a.size(); ++i) {
    StrictJsonObject o(a[i], key + "[" + std::to_string(i) + "]", root.file());
    each(o);
    o.done();
  }
}

Measurements measurementsFromJson(const std::string& text, const std::string& file) {
  json doc = parseJsonDocument(text, file);
  StrictJsonObject root(doc, "", file);
  std::string schema = root.str("schema");
  if (schema != kSchema) root.fail("schema", "expected \"" + std::string(kSchema) + "\", got \"" + schema + "\"");
  Measurements m;
  m.gpu = root.str("gpu");
  if (root.has("meta")) {
    const json& meta = root.get("meta");
    if (!meta.is_object()) root.fail("meta", "expected an object of strings");
    for (auto it = meta.begin(); it != meta.end(); ++it) {
      if (!it.value().is_string()) root.fail("meta." + it.key(), "expected a string");
      m.meta[it.key()] = it.value().get<std::string>();
    }
    if (auto ops = m.meta.find("gemm_operands"); ops != m.meta.end() && !parseInputValues(ops->second))
      root.fail("meta.gemm_operands", "unknown kind of operand values \"" + ops->second + "\" (expected integers or normal)");
  }
  forEach(root, "gemm", [&](StrictJsonObject& o) {
    GemmMeasurement g;
    g.shape = readGemmShape(o);
    g.us = o.time("us");
    m.gemms.push_back(g);
  });
  forEach(root, "copy", [&](StrictJsonObject& o) {
    CopyMeasurement c;
    c.bytes = o.num("bytes", 1, 1e15);
    c.us = o.time("us");
    m.copies.push_back(c);
  });
  forEach(root, "collective", [&](StrictJsonObject& o) {
    CollectiveMeasurement c;
    readCollective(o, c);
    c.us = o.time("us");
    m.collectives.push_back(c);
  });
  forEach(root, "p2p", [&](StrictJsonObject& o) {
    P2PMeasurement p;
    p.bytes = o.num("bytes", 1, 1e15);
    p.interNode = o.has("inter_node") && o.boolean("inter_node");
    p.us = o.time("us");
    m.p2p.push_back(p);
  });
  forEach(root, "host", [&](StrictJsonObject& o) {
    HostMeasurement h;
    std::string call = o.str("call");
    bool known = false;
    std::string names;
    for (HostCall c : kHostCalls) {
      names += (names.empty() ? "" : ", ") + std::string(hostCallName(c));
      if (call == hostCallName(c)) h.call = c, known = true;
    }
    if (!known) o.fail(o.at("call"), "unknown call \"" + call + "\" (expected one of " + names + ")");
    h.us = o.time("us");
    m.host.push_back(h);
  });
  forEach(root, "overlap", [&](StrictJsonObject& o) {
    OverlapMeasurement v;
    {
      StrictJsonObject g = o.child("gemm");
      v.gemm = readGemmShape(g);
      g.done();
    }
    {
      StrictJsonObject c = o.child("collective");
      readCollective(c, v.collective);
      c.done();
    }
    if (o.has("transport")) {
      std::string t = o.str("transport");
      if (t != "nccl" && t != "cuda") o.fail(o.at("transport"), "expected \"nccl\" or \"cuda\" (the copy engines)");
      v.copyEngines = t == "cuda";
    }
    if (o.has("comm_priority")) {
      std::string p = o.str("comm_priority");
      if (p != "normal" && p != "high") o.fail(o.at("comm_priority"), "expected \"normal\" or \"high\"");
      v.commHighPriority = p == "high";
    }
    if (v.copyEngines && (v.collective.team < 2 || v.collective.kind == CommunicationType::kSendRecv))
      o.fail(o.at("collective"), "a copy-engine overlap needs a collective of at least 2 ranks (not SendRecv)");
    v.gemmAloneUs = o.time("gemm_alone_us");
    v.gemmBesideUs = o.time("gemm_beside_us");
    v.commAloneUs = o.time("comm_alone_us");
    v.commBesideUs = o.time("comm_beside_us");
    m.overlaps.push_back(v);
  });
  forEach(root, "copy_engine", [&](StrictJsonObject& o) {
    CopyEngineMeasurement c;
    std::string kind = o.str("kind");
    auto t = parseCommunicationType(kind);
    if (!t || *t == CommunicationType::kSendRecv)
      o.fail(o.at("kind"), "unknown collective \"" + kind + "\" (Allgather, Allreduce, ReduceScatter, ...)");
    c.kind = *t;
    c.team = o.count("team", 1, kMaxRanks);
    if (c.team < 2) o.fail(o.at("team"), "a copy-engine collective needs at least 2 ranks");
    c.bytes = o.num("bytes", 1, 1e15);
    c.us = o.time("us");
    m.copyEngine.push_back(c);
  });
  forEach(root, "power", [&](StrictJsonObject& o) {
    PowerMeasurement p;
    {
      StrictJsonObject g = o.child("gemm");
      p.gemm = readGemmShape(g);
      g.done();
    }
    p.loadMs = o.positive("load_ms");
    p.gapMs = o.nonNegative("gap_ms");
    p.bursts = o.count("bursts");
    if (o.has("duty")) p.duty = o.fraction("duty");
    const json& runs = o.array("runs");
    for (size_t i = 0; i < runs.size(); ++i) {
      const json& r = runs[i];
      const std::string where = o.at("runs") + "[" + std::to_string(i) + "]";
      if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
        o.fail(where, "expected [start_us, us]");
      PowerMeasurement::Run run{r[0].get<double>(), r[1].get<double>()};
      if (!(run.us > 0) || !std::isfinite(run.us) || !std::isfinite(run.startUs) || run.startUs < 0)
        o.fail(where, "expected a start >= 0 and a positive time");
      if (!p.runs.empty() && run.startUs < p.runs.back().startUs + p.runs.back().us * 0.999)
        o.fail(where, "starts before the run before it ended (runs are back to back on one stream)");
      p.runs.push_back(run);
    }
    if (p.runs.size() < 3) o.fail(o.at("runs"), "expected at least 3 timed runs");
    m.power.push_back(p);
  });
  forEach(root, "after_idle", [&](StrictJsonObject& o) {
    AfterIdleMeasurement w;
    w.idleMs = o.num("idle_ms", 0, 1e4);  // the benchmark's own limit (exec/microbench)
    w.ops = o.count("ops");
    if (o.has("graph")) w.graph = o.boolean("graph");
    const json& us = o.array("us");
    for (size_t i = 0; i < us.size(); ++i) {
      const std::string where = o.at("us") + "[" + std::to_string(i) + "]";
      if (!us[i].is_number() || !(us[i].get<double>() >= 1e-3) || !(us[i].get<double>() <= 1e15))
        o.fail(where, "expected a time in microseconds in [0.001, 1e15]");
      w.us.push_back(us[i].get<double>());
    }
    if (w.us.empty()) o.fail(o.at("us"), "expected at least one timed run");
    m.afterIdle.push_back(w);
  });
  root.done();
  if (m.size() == 0)
    throw Error(file +
                ": no measurements (gemm, copy, collective, p2p, host, overlap, copy_engine, power, after_idle are all absent "
                "or empty)");
  return m;
}

Measurements readMeasurementsFile(const std::string& path) {
  // As every file braid reads: a regular file of at most 256 MiB (ir/input_file.h).
  return measurementsFromJson(readInputFile(path, "measurement file"), path);
}

static json collectiveJson(const CollectiveMeasurement& c) {
  return {{"kind", communicationTypeName(c.kind)}, {"team", c.team}, {"nodes", c.nodes}, {"bytes", c.bytes}};
}

std::string measurementsToJson(const Measurements& m) {
  json j;
  j["schema"] = kSchema;
  j["gpu"] = m.gpu;
  j["meta"] = json::object();
  for (const auto& [k, v] : m.meta) j["meta"][k] = v;
  j["gemm"] = json::array();
  for (const auto& g : m.gemms) {
    json e = gemmShapeJson(g.shape);
    e["us"] = g.us;
    j["gemm"].push_back(e);
  }
  j["copy"] = json::array();
  for (const auto& c : m.copies) j["copy"].push_back({{"bytes", c.bytes}, {"us", c.us}});
  j["collective"] = json::array();
  for (const auto& c : m.collectives) {
    json e = collectiveJson(c);
    e["us"] = c.us;
    j["collective"].push_back(e);
  }
  j["p2p"] = json::array();
  for (const auto& p : m.p2p) j["p2p"].push_back({{"bytes", p.bytes}, {"inter_node", p.interNode}, {"us", p.us}});
  j["copy_engine"] = json::array();
  for (const auto& c : m.copyEngine)
    j["copy_engine"].push_back({{"kind", communicationTypeName(c.kind)}, {"team", c.team}, {"bytes", c.bytes}, {"us", c.us}});
  j["host"] = json::array();
  for (const auto& h : m.host) j["host"].push_back({{"call", hostCallName(h.call)}, {"us", h.us}});
  j["overlap"] = json::array();
  for (const auto& v : m.overlaps)
    j["overlap"].push_back({{"gemm", gemmShapeJson(v.gemm)},
                            {"collective", collectiveJson(v.collective)},
                            {"transport", v.copyEngines ? "cuda" : "nccl"},
                            {"comm_priority", v.commHighPriority ? "high" : "normal"},
                            {"gemm_alone_us", v.gemmAloneUs},
                            {"gemm_beside_us", v.gemmBesideUs},
                            {"comm_alone_us", v.commAloneUs},
                            {"comm_beside_us", v.commBesideUs}});
  if (!m.power.empty()) {
    j["power"] = json::array();
    for (const auto& p : m.power) {
      json runs = json::array();
      for (const auto& r : p.runs) runs.push_back({r.startUs, r.us});
      j["power"].push_back({{"gemm", gemmShapeJson(p.gemm)},
                            {"load_ms", p.loadMs},
                            {"gap_ms", p.gapMs},
                            {"bursts", p.bursts},
                            {"duty", p.duty},
                            {"runs", runs}});
    }
  }
  if (!m.afterIdle.empty()) {
    j["after_idle"] = json::array();
    for (const auto& w : m.afterIdle)
      j["after_idle"].push_back({{"idle_ms", w.idleMs}, {"ops", w.ops}, {"graph", w.graph}, {"us", w.us}});
  }
  return j.dump(1);
}

}  // namespace braid::sim
