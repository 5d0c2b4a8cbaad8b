// `braid lower WORKLOAD [options]` builds a catalog workload (docs/WORKLOADS.md), lowers it to a
// host program (docs/LOWERING.md) and prints it; `braid lower --list` lists the catalog.
#include <fstream>
#include <iostream>

#include "catalog/workload.h"
#include "cli/command.h"
#include "cli/workload_flags.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"

namespace braid::cli {
namespace {

struct LowerArgs {
  std::string workload;
  bool list = false;
  WorkloadFlags flags;
  bool dumpPasses = false;
  bool modern = false;
  std::string output;
};

int runLower(const LowerArgs& a) {
  if (a.list) {
    for (const WorkloadInfo& w : workloadCatalog()) std::cout << w.name << "  " << w.description << "\n";
    return 0;
  }
  if (a.workload.empty()) throw Error("name a workload (braid lower --list shows them)");
  WorkloadParams p = applyWorkloadFlags(a.flags, WorkloadParams{});
  Workload w = makeWorkload(a.workload, p);
  LowerConfig cfg;
  cfg.dumpPasses = a.dumpPasses;
  HostProgram prog = lower(*w.fusion, w.params.lowering, w.params.devices, cfg);
  PrintOptions po;
  po.dialect = a.modern ? HostIrDialect::kModern : HostIrDialect::kLegacy;
  std::string text = print(prog, po);
  if (a.output.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(a.output);
    if (!f) throw Error("cannot write " + a.output);
    f << text;
  }
  return 0;
}

BRAID_REGISTER_COMMAND(Command{
    "lower",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<LowerArgs>();
      sub.add_option("workload", a->workload, "catalog workload to lower (see --list)");
      sub.add_flag("--list", a->list, "list the workload catalog");
      addWorkloadFlags(sub, a->flags, WorkloadParams{});
      sub.add_flag("--dump-passes", a->dumpPasses, "print the program after every pass on stderr (also BRAID_DUMP=passes)");
      sub.add_flag("--modern", a->modern, "print the newer nvFuser dialect");
      sub.add_option("--output,-o", a->output, "write the host program to this file instead of stdout");
      return [a] { return runLower(*a); };
    },
    "lower a catalog workload to a host program and print it"});

}  // namespace
}  // namespace braid::cli
