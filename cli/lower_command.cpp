// `braid lower WORKLOAD [options]` builds a catalog workload (docs/WORKLOADS.md), lowers it to a
// host program (docs/LOWERING.md) and prints it; `braid lower --list` lists the catalog.
// `--verify-each` verifies the program after every pass and names the first pass whose output
// fails (exit 1) or is not proven (exit 4); the report goes to stderr.
#include <fstream>
#include <iostream>

#include "catalog/workload.h"
#include "cli/command.h"
#include "cli/workload_flags.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "verify/parametric/program_check.h"

namespace braid::cli {
namespace {

struct LowerArgs {
  std::string workload;
  bool list = false;
  WorkloadFlags flags;
  bool dumpPasses = false;
  bool modern = false;
  bool verifyEach = false;
  std::string verifyMode = "auto";
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
  HostProgram prog;
  int rc = 0;
  if (a.verifyEach) {
    auto mode = verify::parseVerifyMode(a.verifyMode);
    if (!mode) throw Error("--verify-mode must be auto, bounded or parametric, got '" + a.verifyMode + "'");
    verify::CheckOptions o;
    // Lowered programs have concrete sizes; auto proves them for every numberOfStreams when braid
    // has Z3, and checks the workload's stream count otherwise.
    o.mode = *mode == verify::VerifyMode::kAuto
                 ? (verify::parametricAvailable() ? verify::VerifyMode::kParametric : verify::VerifyMode::kBounded)
                 : *mode;
    o.bounded.ranks = w.params.devices;
    o.bounded.streams = w.params.lowering.streams;
    o.bounded.parallelismWarnings = false;
    verify::EachPassResult r =
        verify::lowerVerifyingEachPass(*w.fusion, w.params.lowering, w.params.devices, o, cfg);
    std::cerr << r.report();
    prog = std::move(r.program);
    rc = !r.firstFailing.empty() ? 1 : !r.firstUnproven.empty() ? 4 : 0;
  } else {
    prog = lower(*w.fusion, w.params.lowering, w.params.devices, cfg);
  }
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
  return rc;
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
      sub.add_flag("--verify-each", a->verifyEach,
                   "verify the program after every pass and name the first pass whose output fails (report on "
                   "stderr)");
      sub.add_option("--verify-mode", a->verifyMode,
                     "--verify-each's checker: auto (parametric with Z3, else bounded), bounded or parametric");
      sub.add_option("--output,-o", a->output, "write the host program to this file instead of stdout");
      return [a] { return runLower(*a); };
    },
    "lower a catalog workload to a host program and print it"});

}  // namespace
}  // namespace braid::cli
