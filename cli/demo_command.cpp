// `braid demo`: the main job on a built-in default. Builds a real workload (allgather + matmul
// over 8 ranks with 4 stream-parallel chunks), lowers it to a host program, verifies it for those
// sizes, and writes the program and the verification report. As braid grows (simulation,
// timelines), this command grows with it; its name and defaults stay stable.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "catalog/workload.h"
#include "cli/command.h"
#include "cli/workload_flags.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "verify/checker.h"

namespace braid::cli {
namespace {

struct DemoArgs {
  std::string workload = "ag_matmul";
  std::string outDir = "braid-demo";
  WorkloadFlags flags;
};

// The built-in default: allgather + matmul over 8 ranks, 4 chunks on 4 streams, protocol A.
WorkloadParams demoDefaults() {
  WorkloadParams p;
  p.devices = 8;
  p.streams = 4;
  p.lowering.streams = 4;
  p.m = 8192;
  p.k = 1024;
  p.n = 1024;
  return p;
}

void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
}

int runDemo(const DemoArgs& a) {
  Workload w = makeWorkload(a.workload, applyWorkloadFlags(a.flags, demoDefaults()));
  const WorkloadParams& p = w.params;
  HostProgram program = lower(*w.fusion, w.params.lowering, w.params.devices);
  std::string text = print(program);
  program = parseHostProgram(text, a.workload + ".hir");  // findings point at the written file

  verify::VerifyOptions vo;
  vo.ranks = p.devices;
  vo.streams = p.lowering.streams;
  verify::VerifyResult result = verify::verifyProgram(program, vo);
  result.program = a.workload + ".hir";

  std::filesystem::create_directories(a.outDir);
  std::filesystem::path dir(a.outDir);
  writeFile(dir / (a.workload + ".hir"), text);
  writeFile(dir / "verify.json", verify::formatJson(result) + "\n");

  std::cout << "== " << a.workload << ": " << p.devices << " ranks, " << p.lowering.streams << " streams, m=" << p.m
            << " k=" << p.k << " n=" << p.n << ", protocol " << streamProtocolName(p.lowering.protocol) << ", "
            << pipelineKindName(p.lowering.pipeline) << " pipeline\n\n"
            << text << "\n"
            << verify::formatReport(result) << "\n"
            << "wrote " << (dir / (a.workload + ".hir")).string() << " and " << (dir / "verify.json").string()
            << "\n";
  return result.ok() ? 0 : 1;
}

BRAID_REGISTER_COMMAND(Command{
    "demo",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DemoArgs>();
      sub.add_option("--workload", a->workload, "catalog workload")->capture_default_str();
      sub.add_option("--out", a->outDir, "folder for the program and reports")->capture_default_str();
      addWorkloadFlags(sub, a->flags, demoDefaults());
      return [a] { return runDemo(*a); };
    },
    "lower, verify and report a built-in workload (the main job)"});

}  // namespace
}  // namespace braid::cli
