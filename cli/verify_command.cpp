// `braid verify FILE|WORKLOAD [--bind i0=..] [--ranks N] [--streams S] [--json]`: the exact
// bounded checker. Exit 0 when the program is correct for those bindings, 1 when a bug is
// found (warnings alone do not fail), 2 on bad input.
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "passes/workload.h"
#include "verify/checker.h"

namespace braid::cli {
namespace {

struct VerifyArgs {
  std::string target;
  std::vector<std::string> binds;
  int64_t ranks = 0;
  int64_t streams = 4;
  bool json = false;
  bool noWarnings = false;
  // Workload parameters.
  int64_t m = 64, k = 64, n = 64;
  std::string protocol = "A";
  std::string indexing = "modulo";
  std::string pipeline = "collective";
  bool ring = false;
};

Bindings parseBinds(const std::vector<std::string>& binds) {
  Bindings b;
  for (const auto& s : binds) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--bind expects NAME=VALUE, got '" + s + "'");
    std::string name = s.substr(0, eq);
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

HostProgram loadTarget(const VerifyArgs& a, int64_t* ranks) {
  if (std::filesystem::exists(a.target)) return parseHostProgramFile(a.target);
  bool known = false;
  for (const auto& w : workloadCatalog()) known |= w.name == a.target;
  if (!known) {
    std::string names;
    for (const auto& w : workloadCatalog()) names += (names.empty() ? "" : ", ") + w.name;
    throw Error("'" + a.target + "' is neither a file nor a workload (known workloads: " + names + ")");
  }
  WorkloadParams params;
  params.devices = *ranks > 0 ? *ranks : 2;
  params.streams = a.streams;
  params.m = a.m;
  params.k = a.k;
  params.n = a.n;
  params.lowering.streams = a.streams;
  if (a.protocol == "A") {
    params.lowering.protocol = StreamProtocol::kSeparateSyncLoop;
  } else if (a.protocol == "B") {
    params.lowering.protocol = StreamProtocol::kInLoopSync;
  } else {
    throw Error("--protocol must be A or B, got '" + a.protocol + "'");
  }
  if (a.indexing == "modulo") {
    params.lowering.indexing = StreamIndexing::kModulo;
  } else if (a.indexing == "raw") {
    params.lowering.indexing = StreamIndexing::kRaw;
  } else {
    throw Error("--indexing must be modulo or raw, got '" + a.indexing + "'");
  }
  if (a.pipeline == "collective") {
    params.lowering.pipeline = PipelineKind::kCollective;
  } else if (a.pipeline == "p2p") {
    params.lowering.pipeline = PipelineKind::kP2P;
  } else {
    throw Error("--pipeline must be collective or p2p, got '" + a.pipeline + "'");
  }
  params.lowering.ringBuffers = a.ring;
  Workload w = makeWorkload(a.target, params);
  HostProgram p = lower(*w.fusion, w.params.lowering, w.params.devices);
  // Findings point at lines of `braid lower NAME` output.
  assignPrintedLocations(p, a.target + ".hir");
  p.sourceName = a.target + " (lowered)";
  *ranks = w.params.devices;
  return p;
}

BRAID_REGISTER_COMMAND(Command{
    "verify",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<VerifyArgs>();
      sub.add_option("target", args->target, "host IR file, or a workload name (see `braid lower --list`)")->required();
      sub.add_option("--bind", args->binds, "bind a symbolic extent: NAME=VALUE (repeatable)");
      sub.add_option("--ranks", args->ranks, "number of ranks (default: from the program's meshes; workloads: 2)");
      sub.add_option("--streams", args->streams, "numberOfStreams (default 4)");
      sub.add_flag("--json", args->json, "print the findings as JSON");
      sub.add_flag("--no-warnings", args->noWarnings, "do not look for lost parallelism");
      sub.add_option("--m", args->m, "workload size m (default 64)");
      sub.add_option("--k", args->k, "workload size k (default 64)");
      sub.add_option("--n", args->n, "workload size n (default 64)");
      sub.add_option("--protocol", args->protocol, "workload stream protocol: A or B");
      sub.add_option("--indexing", args->indexing, "workload stream indexing: modulo or raw");
      sub.add_option("--pipeline", args->pipeline, "workload DID->Stream pipeline: collective or p2p");
      sub.add_flag("--ring", args->ring, "workload: ring buffers for stream-loop intermediates");
      return [args] {
        if (args->streams <= 0) throw Error("--streams must be positive");
        if (args->ranks < 0) throw Error("--ranks must be positive");
        verify::VerifyOptions o;
        o.bindings = parseBinds(args->binds);
        o.streams = args->streams;
        o.parallelismWarnings = !args->noWarnings;
        int64_t ranks = args->ranks;
        HostProgram p = loadTarget(*args, &ranks);
        if (p.sourceName.empty()) p.sourceName = args->target;
        o.ranks = ranks;
        verify::VerifyResult r = verify::verifyProgram(p, o);
        if (args->json) {
          std::cout << verify::formatJson(r) << "\n";
        } else {
          std::cout << verify::formatReport(r);
        }
        return r.ok() ? 0 : 1;
      };
    },
    "check a host program's synchronization, aliasing and collectives (exact for given sizes)"});

}  // namespace
}  // namespace braid::cli
