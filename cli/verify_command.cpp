// `braid verify FILE|WORKLOAD [--bind i0=..] [--ranks N] [--streams S] [--json] [--dot FILE]`: the
// exact bounded checker. Exit 0 when the program is correct for those bindings, 1 when a bug is
// found (warnings alone do not fail), 2 on bad input. `--dot` draws the findings over the
// happens-before graph (viz/hb_graph.h).
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/workload_flags.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "passes/lower.h"
#include "passes/workload.h"
#include "verify/checker.h"
#include "viz/hb_graph.h"
#include "viz/render.h"

namespace braid::cli {
namespace {

struct VerifyArgs {
  std::string target;
  std::vector<std::string> binds;
  int64_t ranks = 0;
  bool json = false;
  bool noWarnings = false;
  std::string dot;
  WorkloadFlags flags;
};

// Small default sizes: the checker is exact for the sizes it is given, and the sizes do not change
// a schedule's synchronization.
WorkloadParams verifyDefaults() {
  WorkloadParams p;
  p.m = p.k = p.n = 64;
  return p;
}

HostProgram loadTarget(const VerifyArgs& a, int64_t* ranks) {
  if (std::filesystem::exists(a.target)) return parseHostProgramFile(a.target);
  if (!isWorkloadName(a.target)) {
    std::string names;
    for (const auto& w : workloadCatalog()) names += (names.empty() ? "" : ", ") + w.name;
    throw Error("'" + a.target + "' is neither a file nor a workload (known workloads: " + names + ")");
  }
  WorkloadParams base = verifyDefaults();
  if (*ranks > 0) base.devices = *ranks;
  Workload w = makeWorkload(a.target, applyWorkloadFlags(a.flags, base));
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
      sub.add_flag("--json", args->json, "print the findings as JSON");
      sub.add_flag("--no-warnings", args->noWarnings, "do not look for lost parallelism");
      sub.add_option("--dot", args->dot,
                     "draw the findings over the happens-before graph: FILE.dot, .svg or .png (docs/VIZ.md)");
      addWorkloadFlags(sub, args->flags, verifyDefaults());
      return [args] {
        const WorkloadFlags& f = args->flags;
        if (f.has(f.streams) && f.streams <= 0) throw Error("--streams must be positive");
        if (args->ranks < 0) throw Error("--ranks must be positive");
        verify::VerifyOptions o;
        o.bindings = parseBindings(args->binds);
        o.streams = f.has(f.streams) ? f.streams : 4;
        o.parallelismWarnings = !args->noWarnings;
        int64_t ranks = args->ranks;
        if (!args->dot.empty()) viz::pictureFormatOf(args->dot);  // a bad extension fails before the work
        HostProgram p = loadTarget(*args, &ranks);
        if (p.sourceName.empty()) p.sourceName = args->target;
        o.ranks = ranks;
        verify::VerifyResult r = verify::verifyProgram(p, o);
        if (args->json) {
          std::cout << verify::formatJson(r) << "\n";
        } else {
          std::cout << verify::formatReport(r);
        }
        if (!args->dot.empty()) {
          // The same graph the checker saw (verifyProgram builds it from the same options).
          sem::SemanticsOptions so;
          so.bindings = o.bindings;
          so.numRanks = o.ranks;
          so.numberOfStreams = o.streams;
          viz::GraphSummary drawn = viz::drawVerification(sem::buildEventGraph(p, so), r, {}, args->dot);
          std::cerr << "wrote " << args->dot << " (" << drawn.drawnEvents << " of " << drawn.events << " events)\n";
        }
        return r.ok() ? 0 : 1;
      };
    },
    "check a host program's synchronization, aliasing and collectives (exact for given sizes)"});

}  // namespace
}  // namespace braid::cli
