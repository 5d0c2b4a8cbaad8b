// `braid demo`: the main job on a built-in default. Builds a real workload (allgather + matmul
// over 8 ranks with 4 stream-parallel chunks), lowers it to a host program, verifies it for those
// sizes, and writes the program and the verification report. As braid grows (simulation,
// timelines), this command grows with it; its name and defaults stay stable.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "passes/workload.h"
#include "verify/checker.h"

namespace braid::cli {
namespace {

struct DemoArgs {
  std::string workload = "ag_matmul";
  std::string outDir = "braid-demo";
  int64_t devices = 8;
  int64_t streams = 4;
  int64_t m = 8192;
  int64_t k = 1024;
  int64_t n = 1024;
  std::string protocol = "A";
};

void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
}

int runDemo(const DemoArgs& a) {
  WorkloadParams params;
  params.devices = a.devices;
  params.streams = a.streams;
  params.m = a.m;
  params.k = a.k;
  params.n = a.n;
  params.lowering.streams = a.streams;
  params.lowering.protocol = a.protocol == "B" ? StreamProtocol::kInLoopSync : StreamProtocol::kSeparateSyncLoop;
  Workload w = makeWorkload(a.workload, params);
  HostProgram program = lower(*w.fusion, w.params.lowering, w.params.devices);
  std::string text = print(program);
  program = parseHostProgram(text, a.workload + ".hir");  // findings point at the written file

  verify::VerifyOptions vo;
  vo.ranks = a.devices;
  vo.streams = a.streams;
  verify::VerifyResult result = verify::verifyProgram(program, vo);
  result.program = a.workload + ".hir";

  std::filesystem::create_directories(a.outDir);
  std::filesystem::path dir(a.outDir);
  writeFile(dir / (a.workload + ".hir"), text);
  writeFile(dir / "verify.json", verify::formatJson(result) + "\n");

  std::cout << "== " << a.workload << ": " << a.devices << " ranks, " << a.streams << " streams, m=" << a.m
            << " k=" << a.k << " n=" << a.n << ", protocol " << a.protocol << "\n\n"
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
      sub.add_option("--devices", a->devices, "ranks")->capture_default_str()->check(CLI::Range(1, 8192));
      sub.add_option("--streams", a->streams, "stream-parallel chunks and streams")
          ->capture_default_str()
          ->check(CLI::Range(1, 1024));
      sub.add_option("--m", a->m, "rows")->capture_default_str();
      sub.add_option("--k", a->k, "contraction")->capture_default_str();
      sub.add_option("--n", a->n, "columns")->capture_default_str();
      sub.add_option("--protocol", a->protocol, "stream protocol A or B")
          ->capture_default_str()
          ->check(CLI::IsMember({"A", "B"}));
      return [a] { return runDemo(*a); };
    },
    "lower, verify and report a built-in workload (the main job)"});

}  // namespace
}  // namespace braid::cli
