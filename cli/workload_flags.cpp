#include "cli/workload_flags.h"

#include <algorithm>

#include <cctype>
#include <filesystem>
#include <sstream>

#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace braid::cli {

CLI::Validator rankCount() { return CLI::Range(int64_t{1}, kMaxRanks).description("1.." + std::to_string(kMaxRanks)); }
CLI::Validator streamCount() {
  return CLI::Range(int64_t{1}, kMaxStreams).description("1.." + std::to_string(kMaxStreams));
}

std::optional<double> numberIn(const std::string& s, double lo, double hi) {
  double v = 0;
  size_t used = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // NaN compares false with both bounds.
  if (used != s.size() || !(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

CLI::Validator finiteRange(double lo, double hi) {
  std::ostringstream d;
  d << "[" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi, text = d.str()](std::string& s) {
        return numberIn(s, lo, hi) ? std::string() : "'" + s + "' is not a number in " + text;
      },
      d.str());
}

CLI::Validator nonEmpty() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("expected a non-empty list") : std::string(); },
                        "LIST");
}

CLI::Validator bindingSyntax() {
  return CLI::Validator(
      [](std::string& s) {
        try {
          parseBindings({s});
          return std::string();
        } catch (const Error& e) {
          return std::string(e.what());
        }
      },
      "NAME=INTEGER");
}

void addWorkloadFlags(CLI::App& sub, WorkloadFlags& f, const WorkloadParams& d) {
  auto dflt = [](int64_t v) { return " (default " + std::to_string(v) + ")"; };
  CLI::Validator size = CLI::Range(int64_t{1}, kMaxElements).description("1..2^50");
  sub.add_option("--devices,-d", f.devices, "workload: ranks in the mesh {0 .. D-1}" + dflt(d.devices))
      ->check(rankCount());
  sub.add_option("--streams,-s", f.streams, "stream-parallel chunks, and numberOfStreams unless --pool" + dflt(d.streams))
      ->check(streamCount());
  sub.add_option("--pool", f.pool,
                 "worker stream pool: numberOfStreams, iteration i on Stream ( i % P ) (default: one per chunk; "
                 "1 keeps every chunk's compute on one stream)")
      ->check(streamCount());
  sub.add_option("--m", f.m, "workload size m" + dflt(d.m))->check(size);
  sub.add_option("--k", f.k, "workload size k" + dflt(d.k))->check(size);
  sub.add_option("--n", f.n, "workload size n" + dflt(d.n))->check(size);
  sub.add_option("--tp", f.tp, "2D-mesh workloads: tensor-parallel width, the mesh's columns (default: 2 if D is even, else 1)")
      ->check(rankCount());
  sub.add_option("--dtype", f.dtype, "float, double, half, bf16, int, int64_t (default " +
                                         std::string(dataTypeName(d.dtype)) + ")")
      ->check(CLI::Validator(
          [](std::string& t) {
            return parseDataType(t == "fp32" ? "float" : t) ? std::string()
                                                            : "unknown dtype '" + t +
                                                                  "' (float, double, half, bf16, int, int64_t)";
          },
          "DTYPE"));
  sub.add_option("--protocol", f.protocol, "stream protocol: A (separate sync loop), B (in-loop sync + join loop) or C (in-loop sync + per-iteration join)");
  sub.add_option("--indexing", f.indexing, "worker streams: modulo (i % numberOfStreams) or raw (i)");
  sub.add_option("--pipeline", f.pipeline, "DID -> Stream pipelines: collective or p2p");
  sub.add_flag("--ring", f.ring, "allocate stream-loop intermediates as a ring of numberOfStreams slices");
  sub.add_flag("--no-dealloc", f.noDealloc, "do not insert Deallocate");
  sub.add_flag("--defer-waits", f.deferWaits,
               "protocol A/C: wait for a communication whose output the loop does not read again on the main "
               "stream in the iteration's join, not on the worker (docs/LOWERING.md, Schedules)");
  sub.add_flag("--prefetch", f.prefetch,
               "post the communications of a stream loop whose inputs the loop does not compute in a loop of "
               "their own, ahead of the compute (docs/LOWERING.md, Schedules)");
  sub.add_option("--own-shard", f.ownShard,
                 "--pipeline p2p: copy (default) this rank's own shard into its chunk, or read it in-place "
                 "(docs/LOWERING.md, pass forward-own-shard)");
  sub.add_option("--comm-backend", f.commBackend,
                 std::string("transport of every communication the lowering creates: nccl or cuda (the copy engines, "
                             "backend=CUDA; docs/LOWERING.md, pass select-comm-backend); default ") +
                     (d.lowering.commBackend == CommBackend::kCuda ? "cuda" : "nccl") +
                     "; sim and validate of a host IR file: cuda puts all its communications on the copy engines");
}

WorkloadParams applyWorkloadFlags(const WorkloadFlags& f, WorkloadParams p) {
  auto size = [](int64_t v, int64_t& into, const char* flag) {
    if (v == WorkloadFlags::kUnset) return;
    if (v <= 0) throw Error(std::string(flag) + " must be positive, got " + std::to_string(v));
    into = v;
  };
  size(f.devices, p.devices, "--devices");
  size(f.streams, p.streams, "--streams");
  size(f.m, p.m, "--m");
  size(f.k, p.k, "--k");
  size(f.n, p.n, "--n");
  size(f.tp, p.tp, "--tp");
  size(f.pool, p.pool, "--pool");
  p.lowering.streams = poolOf(p);
  if (!f.dtype.empty()) {
    auto t = parseDataType(f.dtype == "fp32" ? "float" : f.dtype);
    if (!t) throw Error("unknown --dtype '" + f.dtype + "' (float, double, half, bf16, int, int64_t)");
    p.dtype = *t;
  }
  if (!f.protocol.empty()) {
    if (f.protocol == "A" || f.protocol == "a") p.lowering.protocol = StreamProtocol::kSeparateSyncLoop;
    else if (f.protocol == "B" || f.protocol == "b") p.lowering.protocol = StreamProtocol::kInLoopSync;
    else if (f.protocol == "C" || f.protocol == "c") p.lowering.protocol = StreamProtocol::kPerIterationJoin;
    else throw Error("--protocol must be A, B or C, got '" + f.protocol + "'");
  }
  if (!f.indexing.empty()) {
    if (f.indexing == "modulo") p.lowering.indexing = StreamIndexing::kModulo;
    else if (f.indexing == "raw") p.lowering.indexing = StreamIndexing::kRaw;
    else throw Error("--indexing must be modulo or raw, got '" + f.indexing + "'");
  }
  if (!f.pipeline.empty()) {
    if (f.pipeline == "collective") p.lowering.pipeline = PipelineKind::kCollective;
    else if (f.pipeline == "p2p") p.lowering.pipeline = PipelineKind::kP2P;
    else throw Error("--pipeline must be collective or p2p, got '" + f.pipeline + "'");
  }
  if (f.ring) p.lowering.ringBuffers = true;
  if (f.noDealloc) p.lowering.deallocate = false;
  if (f.deferWaits) p.lowering.deferWaits = true;
  if (f.prefetch) p.lowering.prefetch = true;
  if (!f.ownShard.empty()) {
    if (f.ownShard == "copy") p.lowering.ownShardInPlace = false;
    else if (f.ownShard == "in-place") p.lowering.ownShardInPlace = true;
    else throw Error("--own-shard must be copy or in-place, got '" + f.ownShard + "'");
  }
  if (!f.commBackend.empty()) {
    // UCC parses as a backend of a host IR file, but nothing runs it: the lowering offers the two that run.
    if (f.commBackend == "nccl") p.lowering.commBackend = CommBackend::kNccl;
    else if (f.commBackend == "cuda") p.lowering.commBackend = CommBackend::kCuda;
    else throw Error("--comm-backend must be nccl or cuda, got '" + f.commBackend + "'");
  }
  return p;
}

void refuseLoweringFlags(const WorkloadFlags& f, const std::string& file, const std::vector<std::string>& allowed) {
  const std::vector<std::pair<std::string, bool>> given = {
      {"devices", f.has(f.devices)}, {"streams", f.has(f.streams)},   {"pool", f.has(f.pool)},
      {"m", f.has(f.m)},             {"k", f.has(f.k)},               {"n", f.has(f.n)},
      {"tp", f.has(f.tp)},           {"dtype", !f.dtype.empty()},     {"protocol", !f.protocol.empty()},
      {"indexing", !f.indexing.empty()}, {"pipeline", !f.pipeline.empty()}, {"own-shard", !f.ownShard.empty()},
      {"comm-backend", !f.commBackend.empty()}, {"ring", f.ring},     {"no-dealloc", f.noDealloc},
      {"defer-waits", f.deferWaits}, {"prefetch", f.prefetch}};
  for (const auto& [name, set] : given)
    if (set && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw Error("--" + name + " chooses how a workload is lowered; " + file +
                  " is a host IR file, whose text already fixes it" +
                  (name == "devices" ? " (--ranks gives the number of ranks of a file)" : ""));
}

Bindings parseBindings(const std::vector<std::string>& binds) {
  Bindings b;
  for (const auto& s : binds) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw Error("--bind expects NAME=VALUE, got '" + s + "'");
    std::string name = s.substr(0, eq);
    // A symbol as the host IR spells one (i0, numberOfStreams, deviceIdx.x): letters, digits, _ and .
    bool ok = std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_';
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
    if (!ok) throw Error("--bind '" + s + "': '" + name + "' is not a symbol name (letters, digits, _ and .)");
    if (b.count(name)) throw Error("--bind binds '" + name + "' twice");
    std::string value = s.substr(eq + 1);
    try {
      size_t used = 0;
      int64_t v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
      b[name] = v;
    } catch (const std::exception&) {
      throw Error("--bind " + name + ": '" + value + "' is not an integer");
    }
  }
  return b;
}

bool isWorkloadName(const std::string& name) {
  for (const auto& w : workloadCatalog())
    if (w.name == name) return true;
  return false;
}

std::optional<HostProgram> readTargetFile(const std::string& target) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(target, ec))) return parseWellFormedHostProgramFile(target);
  if (!isWorkloadName(target)) {
    std::string names;
    for (const auto& w : workloadCatalog()) names += (names.empty() ? "" : ", ") + w.name;
    throw Error("'" + target + "' is neither a file nor a workload (known workloads: " + names + ")");
  }
  return std::nullopt;
}

}  // namespace braid::cli
