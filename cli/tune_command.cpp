// `braid tune WORKLOAD --machine M [--streams 1,2,4,8] [--protocols A,B,C]
// [--pipelines collective,p2p] [--pools chunks,1] [--defer-waits off,on] [--prefetch off,on]
// [--top K] [--json]`: simulate every lowering of the workload over
// those choices in parallel and rank them against serial (one chunk) (docs/TUNE.md). With
// `--confirm N [--backend cuda|cpu] [--repeat R]`, then run the N best and the serial one with
// `braid run` and compare (cli/tune_confirm.h). Exit 0 when some configuration simulated, 1 when
// none did, 2 on bad input (and when a confirming run fails).
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/sim_target.h"
#include "cli/tune_confirm.h"
#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "sim/tune.h"

namespace braid::cli {
namespace {

struct TuneArgs {
  SimArgs sim;
  std::string streams = "1,2,4,8";
  std::string protocols = "A,B,C";
  std::string pipelines = "collective,p2p";
  std::string pools = "chunks,1";
  std::string deferWaits = "off,on";
  std::string prefetch = "off,on";
  std::string commBackends;  // --comm-backends; default: both on one host, else nccl
  int64_t top = 10;
  int64_t confirm = 0;  // --confirm N: run the N best with braid run
  std::string backend = "cuda";
  int64_t repeat = 10;
  std::vector<std::string> workloadArgs;  // the workload flags given, for braid run
};

std::vector<std::string> splitList(const std::string& flag, const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string v; std::getline(ss, v, ',');) {
    if (v.empty()) throw Error(flag + ": empty value in '" + s + "'");
    out.push_back(v);
  }
  if (out.empty()) throw Error(flag + ": no values");
  return out;
}

// `v` as a whole integer, or nullopt.
std::optional<int64_t> integer(const std::string& v) {
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || used == 0) return std::nullopt;
  return x;
}

sim::TuneSpace spaceOf(const TuneArgs& a) {
  sim::TuneSpace s;
  s.streams.clear();
  for (const auto& v : splitList("--streams", a.streams)) {
    std::optional<int64_t> x = integer(v);
    if (!x) throw Error("--streams: '" + v + "' is not an integer");
    if (*x > kMaxStreams)
      throw Error("--streams: " + v + " is more than the " + std::to_string(kMaxStreams) + " streams a rank may have");
    s.streams.push_back(*x);
  }
  s.protocols = splitList("--protocols", a.protocols);
  s.pipelines = splitList("--pipelines", a.pipelines);
  s.pools.clear();
  for (const auto& v : splitList("--pools", a.pools)) {
    if (v == "chunks") {
      s.pools.push_back(0);
      continue;
    }
    std::optional<int64_t> x = integer(v);
    if (!x || *x <= 0) throw Error("--pools: '" + v + "' is neither 'chunks' nor a positive number of streams");
    s.pools.push_back(*x);
  }
  auto onOff = [](const char* flag, const std::string& list) {
    std::vector<bool> out;
    for (const auto& v : splitList(flag, list)) {
      if (v != "on" && v != "off") throw Error(std::string(flag) + ": '" + v + "' must be on or off");
      out.push_back(v == "on");
    }
    return out;
  };
  s.deferWaits = onOff("--defer-waits", a.deferWaits);
  s.prefetch = onOff("--prefetch", a.prefetch);
  if (!a.commBackends.empty()) s.commBackends = splitList("--comm-backends", a.commBackends);
  return s;
}

// What --power did to the ranking, for the table's head ("" for an idle start).
std::string powerWording(const SimArgs& a, const sim::Machine& machine) {
  if (a.power == "idle") return "";
  if (!machine.gpu.power.enabled()) return "; " + machine.name + " models no power cap: --power changes nothing";
  return "; each candidate predicted " +
         (a.power == "steady" ? std::string("in the steady state of") : "after " + a.power) +
         " back-to-back runs of itself (the power cap, docs/SIM.md)";
}

int runTune(const TuneArgs& args) {
  const SimArgs& base = args.sim;
  if (base.target.empty()) throw Error("a workload name is required (see `braid lower --list`)");
  if (!isWorkloadName(base.target)) {
    if (parseTarget(base))  // a file: its protocol and pipeline are fixed in its text
      throw Error(base.target + ": tune searches the lowerings of a catalog workload; for a host IR file use "
                  "`braid sim FILE --sweep streams=1,2,4,8`");
  }
  if (args.top <= 0) throw Error("--top must be positive, got " + std::to_string(args.top));
  if (args.confirm < 0) throw Error("--confirm must be positive, got " + std::to_string(args.confirm));
  sim::Machine machine = loadMachineFor(base.machine, base.nodes, base.gpusPerNode);
  parsePowerStart(base.power, base.powerGapMs);  // bad --power / --power-gap fail once, not per candidate
  const int64_t devices = applyWorkloadFlags(base.flags, simDefaults()).devices;
  sim::TuneSpace space = spaceOf(args);
  // Both transports where the copy engines can run (the ranks on one host of the machine), else
  // NCCL, unless --comm-backends says (docs/TUNE.md).
  const bool oneHost = devices <= machine.topology.gpusPerNode;
  if (args.commBackends.empty()) space.commBackends = oneHost ? std::vector<std::string>{"nccl", "cuda"}
                                                              : std::vector<std::string>{"nccl"};
  std::vector<sim::SweepConfig> candidates = sim::tuneCandidates(space);

  // Lower every candidate now: bad flags fail before anything runs, and choices the workload
  // ignores (a pipeline kind without a DID -> Stream resharding) give the same program, which
  // is simulated once.
  std::vector<sim::SweepConfig> distinct;
  std::vector<std::pair<std::string, std::string>> same;  // (config, same program as config)
  std::map<std::string, std::string> seen;                // program text -> first config
  std::optional<std::string> firstError;
  size_t prepared = 0;
  for (const auto& c : candidates) {
    SimArgs a = base;
    for (const auto& [k, v] : c) applySetting(a, k, v, true);
    applyWorkloadFlags(a.flags, simDefaults());  // a bad protocol or pipeline name is bad input
    Prepared p;
    try {
      prepare(a, nullptr, p);
    } catch (const Error& e) {
      if (!firstError) firstError = e.what();
      distinct.push_back(c);  // its error is reported with the ranking
      continue;
    }
    ++prepared;
    // The program and the numberOfStreams it runs with (a p2p pipeline's text does not depend on it).
    std::string key = print(*p.program) + "\nnumberOfStreams " + std::to_string(p.options.semantics.numberOfStreams);
    auto [it, fresh] = seen.emplace(key, sim::configStr(c));
    if (fresh)
      distinct.push_back(c);
    else
      same.emplace_back(sim::configStr(c), it->second);
  }

  // No candidate lowers at all (--m 2^50, say): the flags are bad, not the candidates.
  if (prepared == 0 && firstError) throw Error(*firstError + " (in every configuration tune would try)");

  auto one = [&](const sim::SweepConfig& c) {
    SimArgs a = base;
    for (const auto& [k, v] : c) applySetting(a, k, v, true);
    Prepared p;
    prepare(a, nullptr, p);
    return sim::summarize(sim::simulate(*p.program, machine, p.options), c);
  };
  bool tty = ::isatty(STDERR_FILENO) != 0;
  auto outcomes = sim::runSweep(distinct, one, 0, tty ? std::function<void(size_t, size_t)>(drawProgress) : nullptr);
  sim::TuneResult r = sim::rankTune(std::move(outcomes));
  size_t top = static_cast<size_t>(args.top);
  std::optional<ConfirmResult> confirmed;
  if (args.confirm > 0 && !r.ranked.empty() && r.ranked.front().ok()) {
    ConfirmOptions co;
    co.count = args.confirm;
    co.backend = args.backend;
    co.repeat = args.repeat;
    co.ranks = devices;
    co.target = base.target;
    co.workloadArgs = args.workloadArgs;
    co.graph = args.sim.graph;
    // braid run's size and dtype defaults are not tune's (sim's): pass on what was simulated.
    const WorkloadFlags& f = base.flags;
    const WorkloadParams d = simDefaults();
    for (auto [name, given, value] : {std::tuple{"--m", f.has(f.m), d.m}, std::tuple{"--k", f.has(f.k), d.k},
                                      std::tuple{"--n", f.has(f.n), d.n}})
      if (!given) co.workloadArgs.insert(co.workloadArgs.end(), {name, std::to_string(value)});
    if (f.dtype.empty()) co.workloadArgs.insert(co.workloadArgs.end(), {"--dtype", std::string(dataTypeName(d.dtype))});
    confirmed = confirmTune(r, co);
  }
  if (base.json) {
    if (!confirmed) {
      std::cout << sim::tuneJson(r, top) << "\n";
    } else {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(sim::tuneJson(r, top));
      j["confirm"] = nlohmann::ordered_json::parse(confirmJson(*confirmed));
      std::cout << j.dump() << "\n";
    }
  } else {
    std::cout << "braid tune: " << base.target << " on " << machine.name << " (" << machine.gpu.model << "), "
              << candidates.size() << " candidates, " << distinct.size() << " distinct programs simulated"
              << powerWording(base, machine)
              << "\n"
              << sim::tuneTable(r, top);
    if (!same.empty()) {
      std::cout << "not listed (the workload lowers them to the same program as a listed one):\n";
      for (const auto& [c, as] : same) std::cout << "  " << c << "  =  " << as << "\n";
    }
    if (args.commBackends.empty() && !oneHost)
      std::cout << "transports: NCCL only (the copy engines do not cross hosts and the ranks span "
                << (devices + machine.topology.gpusPerNode - 1) / machine.topology.gpusPerNode << " nodes)\n";
    if (confirmed) std::cout << confirmTable(*confirmed);
  }
  return !r.ranked.empty() && r.ranked.front().ok() ? 0 : 1;
}

BRAID_REGISTER_COMMAND(Command{
    "tune",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<TuneArgs>();
      SimArgs& s = args->sim;
      sub.add_option("target", s.target, "a workload name (see `braid lower --list`)");
      addMachineFlags(sub, s);
      sub.add_flag("--json", s.json, "print the ranking as one JSON object");
      sub.add_flag("--no-fold", s.noFold, "simulate every rank even when ranks provably do the same work");
      sub.add_flag("--graph", s.graph,
                   "rank predicted CUDA-graph replays (sim --graph: no host issue); with --confirm, measure "
                   "replays (braid run --graph, --backend cuda)");
      addPowerFlags(sub, s);
      std::vector<CLI::Option*> before = sub.get_options();
      addWorkloadFlags(sub, s.flags, simDefaults());
      // What tune searches replaces the single-valued workload flags.
      for (const char* searched : {"--streams", "--protocol", "--pipeline", "--pool", "--defer-waits", "--prefetch", "--comm-backend"})
        sub.remove_option(sub.get_option(searched));
      // The workload flags, which --confirm passes on to braid run as given.
      std::vector<CLI::Option*> workload;
      for (CLI::Option* o : sub.get_options())
        if (std::find(before.begin(), before.end(), o) == before.end()) workload.push_back(o);
      sub.add_option("--streams,-s", args->streams, "stream counts (= chunks) to try, comma-separated (default 1,2,4,8; 1 is always tried)");
      sub.add_option("--protocols", args->protocols, "stream protocols to try: A, B, C (default A,B,C)");
      sub.add_option("--pipelines", args->pipelines, "pipeline kinds to try: collective, p2p (default collective,p2p)");
      sub.add_option("--pools", args->pools,
                     "worker pools to try: chunks (one stream per chunk) or a stream count; pools of at least the "
                     "chunk count are skipped (default chunks,1)");
      sub.add_option("--defer-waits", args->deferWaits, "deferred waits to try: off, on (default off,on; never with protocol B)");
      sub.add_option("--prefetch", args->prefetch, "prefetched communications to try: off, on (default off,on)");
      sub.add_option("--comm-backends", args->commBackends,
                     "transports to try: nccl, cuda (the copy engines, one host only) (default nccl,cuda when the "
                     "ranks fit on one node of the machine, else nccl)");
      sub.add_option("--top", args->top, "show the K fastest configurations (default 10)");
      CLI::Option* confirm = sub.add_option(
          "--confirm", args->confirm,
          "then run the N best configurations and the serial one with `braid run --repeat R --no-check` and "
          "compare measured with predicted times");
      CLI::Option* backend = sub.add_option("--backend", args->backend, "with --confirm: braid run's backend, cuda (default) or cpu")
                                 ->check(CLI::IsMember({"cpu", "cuda"}));
      CLI::Option* repeat = sub.add_option("--repeat", args->repeat, "with --confirm: timed runs per configuration (default 10)")
                                ->check(CLI::Range(int64_t{1}, int64_t{100000}));
      return [args, workload, confirm, backend, repeat] {
        if (!confirm->count() && (backend->count() || repeat->count()))
          throw Error(std::string(backend->count() ? "--backend" : "--repeat") + " needs --confirm");
        if (args->sim.graph && confirm->count() && args->backend != "cuda")
          throw Error("--graph with --confirm needs --backend cuda: braid run replays CUDA graphs only on GPUs");
        for (CLI::Option* o : workload) {
          if (!o->count()) continue;
          if (o->get_expected_min() == 0) {  // a flag
            args->workloadArgs.push_back(o->get_name());
            continue;
          }
          for (const auto& v : o->results()) {
            args->workloadArgs.push_back(o->get_name());
            args->workloadArgs.push_back(v);
          }
        }
        return runTune(*args);
      };
    },
    "search stream counts, protocols, pipeline kinds, worker pools and schedules of a workload by simulation and "
    "rank them"});

}  // namespace
}  // namespace braid::cli
