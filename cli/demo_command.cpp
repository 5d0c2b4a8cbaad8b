// `braid demo`: the main job, on a built-in default that shows what braid is for. It lowers a
// real workload (allgather + matmul over 8 H200s of one node, 4 streams, bf16, sizes where the
// allgathers and the GEMMs take times of the same order) under two stream protocols (A and C), verifies both
// for those sizes, simulates both on the h200 machine model and writes, into one folder, the host
// programs, the verification reports, the predicted timelines, Perfetto traces and one picture of
// both timelines on one time scale, where protocol C's serialized iterations are seen at a glance
// (docs/DEMO.md). Exit 0 when both programs verify without error (warnings are listed), 1 when
// either has an error or deadlocks in the simulation, 2 on bad input. No GPU is needed.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "catalog/workload.h"
#include "cli/command.h"
#include "cli/demo_summary.h"
#include "cli/sim_outputs.h"
#include "cli/workload_flags.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "verify/checker.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"

namespace braid::cli {
namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::string workload = "ag_matmul";
  std::string outDir = "braid-demo";
  std::string machine = "h200";
  std::vector<std::string> protocols = {"A", "C"};
  WorkloadFlags flags;
  StreamProtocol protocolOf[2] = {};  // the protocols, checked
};

// The built-in default: allgather + matmul over the 8 GPUs of one H200 node, 4 chunks on 4
// streams, bf16, the allgathers on the copy engines. At these sizes the allgathers take about a
// fifth of the GEMMs' time on the h200 model, so how well a protocol overlaps them shows. On
// NCCL (`--comm-backend nccl`) the calibrated h200 has each chunk's allgather wait for the GEMM
// beside it (a cuBLAS GEMM keeps its SMs), so there protocol A barely differs from C; on two
// H200s every best overlap schedule ran on the copy engines (PERFORMANCE.md).
WorkloadParams demoDefaults() {
  WorkloadParams p;
  p.lowering.commBackend = CommBackend::kCuda;
  p.devices = 8;
  p.streams = 4;
  p.lowering.streams = 4;
  p.m = 16384;
  p.k = 8192;
  p.n = 8192;
  p.dtype = DataType::kBFloat16;
  return p;
}

// Where every file goes; checked before anything is computed.
fs::path prepareOutDir(const std::string& out) {
  if (out.empty()) throw Error("--out: empty folder name");
  fs::path dir(out);
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw Error("--out " + out + ": exists and is not a folder (remove it or pick another --out)");
  fs::create_directories(dir, ec);
  if (ec) throw Error("--out " + out + ": cannot create the folder: " + ec.message());
  return dir;
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path);
}

// One protocol's program, verification and simulation.
struct ProtocolRun {
  std::string protocol;
  WorkloadParams params;
  std::string text;  // the host program as written
  HostProgram program;
  verify::VerifyResult verdict;
  sim::SimResult sim;
  Timeline timeline;
};

void lowerAndCheck(const DemoArgs& a, const std::string& protocol, const sim::Machine& machine,
                   const std::string& hirPath, ProtocolRun& run) {
  WorkloadFlags flags = a.flags;
  flags.protocol = protocol;
  Workload w = makeWorkload(a.workload, applyWorkloadFlags(flags, demoDefaults()));
  run.params = w.params;
  run.protocol = streamProtocolName(w.params.lowering.protocol);
  run.text = print(lower(*w.fusion, w.params.lowering, w.params.devices));
  run.program = parseHostProgram(run.text, hirPath);  // findings and timelines point at the written file

  verify::VerifyOptions vo;
  vo.ranks = w.params.devices;
  vo.streams = w.params.lowering.streams;
  run.verdict = verify::verifyProgram(run.program, vo);
  run.verdict.program = hirPath;

  sim::SimOptions so;
  so.semantics.numRanks = w.params.devices;
  so.semantics.numberOfStreams = w.params.lowering.streams;
  so.fold = false;  // every rank in the timelines and traces; these programs are small enough
  so.recordSmCounters = true;
  run.sim = sim::simulate(run.program, machine, so);
  run.timeline = sim::toTimeline(run.sim, hirPath);
  run.timeline.meta["protocol"] = run.protocol;
}

// Short dtype names for titles, rather than the C type names the host IR prints ("__bfloat").
std::string dtypeStr(DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kHalf:
      return "fp16";
    case DataType::kFloat:
      return "fp32";
    case DataType::kDouble:
      return "fp64";
    default:
      return std::string(dataTypeName(t));
  }
}

std::string sizesStr(const WorkloadParams& p) {
  return std::to_string(p.devices) + " ranks, " + std::to_string(p.lowering.streams) + " streams, m=" +
         std::to_string(p.m) + " k=" + std::to_string(p.k) + " n=" + std::to_string(p.n) + " " + dtypeStr(p.dtype);
}

// One line per finding ("C  warning[lost-parallelism] ag_matmul_C.hir:4:3: ..."); errors get the
// whole report, since they make the exit code 1 and the user will want the details.
std::string findingsStr(const std::vector<ProtocolRun>& runs, const fs::path& dir) {
  std::string s;
  for (const ProtocolRun& r : runs) {
    if (!r.verdict.ok()) {
      s += "\nprotocol " + r.protocol + ": " + verify::formatReport(r.verdict);
      continue;
    }
    for (const verify::Finding& f : r.verdict.findings) {
      if (f.severity == verify::Severity::kNote) continue;
      std::string where = f.sites.empty() || !f.sites[0].loc.known() ? "" : f.sites[0].loc.str() + ": ";
      s += "  " + r.protocol + "  " + sem::severityName(f.severity) + "[" + verify::findingKindName(f.kind) + "] " +
           where + f.summary + "\n";
    }
  }
  if (!s.empty() && s[0] == ' ')
    s = "verify findings (details in " + (dir / "*.verify.json").string() + "):\n" + s;
  return s;
}

int runDemo(DemoArgs& a) {
  if (a.protocols.size() != 2)
    throw Error("--protocols takes two protocols to compare (e.g. A,C), got " + std::to_string(a.protocols.size()));
  for (size_t i = 0; i < 2; ++i) {  // every flag is checked before the first file is written
    WorkloadFlags f = a.flags;
    f.protocol = a.protocols[i];
    a.protocolOf[i] = makeWorkload(a.workload, applyWorkloadFlags(f, demoDefaults())).params.lowering.protocol;
  }
  if (a.protocolOf[0] == a.protocolOf[1])
    throw Error("--protocols: compare two different protocols, got " + std::string(streamProtocolName(a.protocolOf[0])) +
                " twice");
  sim::Machine machine = sim::loadMachine(a.machine);
  fs::path dir = prepareOutDir(a.outDir);

  std::vector<ProtocolRun> runs(2);
  std::vector<std::string> written;
  auto path = [&](const std::string& name) {
    written.push_back((dir / name).string());
    return written.back();
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string stem = a.workload + "_" + streamProtocolName(a.protocolOf[i]);
    std::string hir = path(stem + ".hir");
    lowerAndCheck(a, a.protocols[i], machine, hir, runs[i]);
    const ProtocolRun& r = runs[i];
    writeFile(hir, r.text);
    writeFile(path(stem + ".verify.json"), verify::formatJson(r.verdict) + "\n");
    writeTimelineFile(r.timeline, path(stem + ".timeline.json"));
    viz::writeChromeTrace(r.timeline, path(stem + ".trace.json"), smCounterTracks(r.sim));
  }

  // The picture: both timelines on one time scale.
  std::string pictureStem = a.workload + "_" + runs[0].protocol + "_vs_" + runs[1].protocol;
  std::vector<std::string> labels, skipped;
  for (const ProtocolRun& r : runs) labels.push_back("protocol " + r.protocol + " (" + protocolGist(r.protocol) + ")");
  std::string title = a.workload + ", protocol " + runs[0].protocol + " vs " + runs[1].protocol + ": " +
                      sizesStr(runs[0].params) + ", simulated on " + machine.name;
  std::vector<Timeline> timelines = {runs[0].timeline, runs[1].timeline};
  if (viz::graphvizAvailable()) {
    for (const char* ext : {".svg", ".png"}) drawSimulatedTimelines(timelines, labels, title, path(pictureStem + ext));
  } else {
    std::string dot = path(pictureStem + ".dot");
    drawSimulatedTimelines(timelines, labels, title, dot);
    skipped.push_back("pictures skipped: braid was built without Graphviz (BRAID_WITH_GRAPHVIZ off; it needs "
                      "Debian's libgraphviz-dev). The picture's DOT text renders elsewhere: neato -n -Tsvg " +
                      dot + " -o " + pictureStem + ".svg");
  }

  std::vector<DemoRow> rows;
  for (const ProtocolRun& r : runs) rows.push_back(demoRow(r.protocol, r.sim, r.verdict));
  std::cout << "braid demo: " << a.workload << " on " << machine.name << ", " << sizesStr(runs[0].params) << ", "
            << pipelineKindName(runs[0].params.lowering.pipeline) << " pipeline"
            << (runs[0].params.lowering.commBackend == CommBackend::kCuda ? " on the copy engines" : " on NCCL") << "\n"
            << "lowered under protocols " << runs[0].protocol << " and " << runs[1].protocol
            << ", verified for these sizes, simulated on the " << machine.name << " machine model\n\n"
            << formatDemoTable(rows) << "\n"
            << findingsStr(runs, dir);
  for (const std::string& s : skipped) std::cout << s << "\n";
  std::cout << "\nwrote:\n";
  for (const std::string& path : written) std::cout << "  " << path << "\n";
  bool clean = true;
  for (const DemoRow& r : rows) clean = clean && r.clean;
  return clean ? 0 : 1;
}

BRAID_REGISTER_COMMAND(Command{
    "demo",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DemoArgs>();
      sub.add_option("--workload", a->workload, "catalog workload")->capture_default_str();
      sub.add_option("--out", a->outDir, "folder for the programs, reports, timelines, traces and pictures")
          ->capture_default_str();
      sub.add_option("--machine", a->machine, "machine preset or machine file to simulate on")->capture_default_str();
      sub.add_option("--protocols", a->protocols, "the two stream protocols to compare")
          ->delimiter(',')
          ->expected(2)
          ->default_str("A,C");
      addWorkloadFlags(sub, a->flags, demoDefaults());
      sub.remove_option(sub.get_option("--protocol"));  // --protocols picks both
      return [a] { return runDemo(*a); };
    },
    "lower a workload under protocols A and C, verify, simulate and draw both (the main job)"});

}  // namespace
}  // namespace braid::cli
