// `braid lower WORKLOAD [options]` builds a catalog workload (docs/WORKLOADS.md), lowers it to a
// host program (docs/LOWERING.md) and prints it; `braid lower --list` lists the catalog.
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "passes/workload.h"

namespace braid::cli {
namespace {

struct LowerArgs {
  std::string workload;
  bool list = false;
  int64_t devices = 2;
  int64_t streams = 4;
  int64_t m = 1024, k = 1024, n = 1024;
  std::string dtype = "float";
  std::string protocol = "A";
  std::string indexing = "modulo";
  std::string pipeline = "collective";
  bool ring = false;
  bool noDealloc = false;
  bool dumpPasses = false;
  bool modern = false;
  std::string output;
};

LoweringOptions optionsFrom(const LowerArgs& a) {
  LoweringOptions o;
  if (a.protocol == "A" || a.protocol == "a") o.protocol = StreamProtocol::kSeparateSyncLoop;
  else if (a.protocol == "B" || a.protocol == "b") o.protocol = StreamProtocol::kInLoopSync;
  else throw Error("--protocol must be A or B, got '" + a.protocol + "'");
  if (a.indexing == "modulo") o.indexing = StreamIndexing::kModulo;
  else if (a.indexing == "raw") o.indexing = StreamIndexing::kRaw;
  else throw Error("--indexing must be modulo or raw, got '" + a.indexing + "'");
  if (a.pipeline == "collective") o.pipeline = PipelineKind::kCollective;
  else if (a.pipeline == "p2p") o.pipeline = PipelineKind::kP2P;
  else throw Error("--pipeline must be collective or p2p, got '" + a.pipeline + "'");
  o.ringBuffers = a.ring;
  o.deallocate = !a.noDealloc;
  o.streams = a.streams;
  return o;
}

int runLower(const LowerArgs& a) {
  if (a.list) {
    for (const WorkloadInfo& w : workloadCatalog()) std::cout << w.name << "  " << w.description << "\n";
    return 0;
  }
  if (a.workload.empty()) throw Error("name a workload (braid lower --list shows them)");
  WorkloadParams p;
  p.devices = a.devices;
  p.streams = a.streams;
  p.m = a.m;
  p.k = a.k;
  p.n = a.n;
  auto dt = parseDataType(a.dtype == "bf16" || a.dtype == "bfloat16" ? "__bfloat"
                          : a.dtype == "fp16" || a.dtype == "half"   ? "__half"
                          : a.dtype == "fp32"                        ? "float"
                                                                     : a.dtype);
  if (!dt) throw Error("unknown --dtype '" + a.dtype + "' (float, double, half, bf16, int, int64_t, bool)");
  p.dtype = *dt;
  p.lowering = optionsFrom(a);
  Workload w = makeWorkload(a.workload, p);
  LoweringOptions o = p.lowering;
  o.streams = w.params.lowering.streams;
  LowerConfig cfg;
  cfg.dumpPasses = a.dumpPasses;
  HostProgram prog = lower(*w.fusion, o, a.devices, cfg);
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
      sub.add_option("--devices,-d", a->devices, "ranks in the mesh {0 .. D-1}")->capture_default_str();
      sub.add_option("--streams,-s", a->streams, "stream chunks and numberOfStreams")->capture_default_str();
      sub.add_option("--m", a->m, "rows")->capture_default_str();
      sub.add_option("--k", a->k, "contraction size")->capture_default_str();
      sub.add_option("--n", a->n, "columns")->capture_default_str();
      sub.add_option("--dtype", a->dtype, "float, double, half, bf16, int, int64_t, bool")->capture_default_str();
      sub.add_option("--protocol", a->protocol, "stream protocol: A (separate sync loop) or B (in-loop sync + join loop)")
          ->capture_default_str();
      sub.add_option("--indexing", a->indexing, "worker streams: modulo (i % numberOfStreams) or raw (i)")
          ->capture_default_str();
      sub.add_option("--pipeline", a->pipeline, "DID -> Stream pipelines: collective or p2p")->capture_default_str();
      sub.add_flag("--ring", a->ring, "allocate loop intermediates as a ring of numberOfStreams slices");
      sub.add_flag("--no-dealloc", a->noDealloc, "do not insert Deallocate");
      sub.add_flag("--dump-passes", a->dumpPasses, "print the program after every pass on stderr (also BRAID_DUMP=passes)");
      sub.add_flag("--modern", a->modern, "print the newer nvFuser dialect");
      sub.add_option("--output,-o", a->output, "write the host program to this file instead of stdout");
      return [a] { return runLower(*a); };
    },
    "lower a catalog workload to a host program and print it"});

}  // namespace
}  // namespace braid::cli
