// `braid verify FILE|WORKLOAD [--bind i0=..] [--ranks N] [--streams S] [--mode M] [--json]`.
// Bounded mode is exact for the bindings given; parametric mode (Z3) proves the properties for
// every value of the sizes left symbolic and of numberOfStreams, or finds a counterexample that
// the bounded checker confirms. --mode auto (the default) picks parametric when symbols stay
// unbound, bounded otherwise. Exit 0 correct / proven, 1 a bug was found, 2 bad input,
// 4 inconclusive (parametric: unknown, CPU budget spent, unsupported construct, unconfirmed candidate).
// `--dot FILE` draws the findings over the happens-before graph (viz/hb_graph.h). Warnings and
// notes alone do not fail. `--rank-program R=FILE` gives a rank its own program
// (nvFuser prints one per device); the bounded checker runs them.
#include <cmath>
#include <iostream>

#include "catalog/workload.h"
#include "cli/budget_flags.h"
#include "cli/command.h"
#include "cli/rank_programs.h"
#include "cli/workload_flags.h"
#include "ir/host_ir_text.h"
#include "ir/scalar_parser.h"
#include "ir/verifier.h"
#include "passes/lower.h"
#include "ir/semantics/interpreter.h"
#include "verify/checker.h"
#include "verify/parametric/program_check.h"
#include "viz/hb_graph.h"
#include "viz/render.h"

namespace braid::cli {
namespace {

struct VerifyArgs {
  std::string target;
  std::vector<std::string> binds;
  std::vector<std::string> assumptions;
  int64_t ranks = 0;
  bool json = false;
  bool noWarnings = false;
  std::vector<std::string> rankPrograms;
  std::string dot;
  std::string mode = "auto";
  int64_t maxStreams = 8;
  double queryCpuSec = 4;  // --timeout: CPU seconds per Z3 attempt
  unsigned resourceLimit = 0;
  WorkloadFlags flags;
  BudgetFlags budget;
};

// --timeout's range, CPU seconds per Z3 attempt: a millisecond (the budget's resolution:
// QueryBudget::ofCpuMs) to a day (the wall-clock ceiling, 20x, then stays within a month).
constexpr double kMinQueryCpuSec = 0.001;
constexpr double kMaxQueryCpuSec = 86400;

// Small default sizes: the checker is exact for the sizes it is given, and the sizes do not change
// a schedule's synchronization.
WorkloadParams verifyDefaults() {
  WorkloadParams p;
  p.m = p.k = p.n = 64;
  return p;
}

HostProgram loadTarget(const VerifyArgs& a, int64_t* ranks, bool* workload) {
  *workload = false;
  if (std::optional<HostProgram> file = readTargetFile(a.target)) {
    refuseLoweringFlags(a.flags, a.target, {"streams", "pool"});
    return std::move(*file);
  }
  WorkloadParams base = verifyDefaults();
  if (*ranks > 0) base.devices = *ranks;
  Workload w = makeWorkload(a.target, applyWorkloadFlags(a.flags, base));
  HostProgram p = lower(*w.fusion, w.params.lowering, w.params.devices);
  // Findings point at lines of `braid lower NAME` output.
  assignPrintedLocations(p, a.target + ".hir");
  p.sourceName = a.target + " (lowered)";
  *ranks = w.params.devices;
  *workload = true;
  return p;
}

// Draws `r` over the event graph the checker built (the same options build the same graph).
void drawFindings(const HostProgram& p, const verify::VerifyOptions& vo, const verify::VerifyResult& r,
                  const std::string& path) {
  sem::SemanticsOptions so;
  so.bindings = vo.bindings;
  so.numRanks = vo.ranks;
  so.numberOfStreams = vo.streams;
  so.rankPrograms = vo.rankPrograms;
  viz::GraphSummary drawn = viz::drawVerification(sem::buildEventGraph(p, so), r, {}, path);
  std::cerr << "wrote " << path << " (" << drawn.drawnEvents << " of " << drawn.events << " events)\n";
}

// --dot after a parametric check: the picture of its first confirmed counterexample, at the
// bindings the bounded checker confirmed it with.
void drawParametric(const HostProgram& p, const verify::ParametricResult& r, const verify::VerifyOptions& base,
                    const std::string& path) {
  for (const verify::Witness& w : r.witnesses) {
    if (!w.confirmed) continue;
    verify::VerifyOptions vo = base;
    vo.bindings = w.bindings;
    vo.ranks = w.ranks;
    if (auto it = w.bindings.find(kNumberOfStreams); it != w.bindings.end()) vo.streams = it->second;
    drawFindings(p, vo, w.replay, path);
    return;
  }
  std::cerr << "--dot: nothing drawn: parametric mode has no confirmed counterexample to show (bind every symbol "
               "with --bind, or use --mode bounded, to draw the graph for given sizes)\n";
}

BRAID_REGISTER_COMMAND(Command{
    "verify",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<VerifyArgs>();
      sub.add_option("target", args->target,
                     "host IR file, or a workload name (see `braid lower --list`); optional with --rank-program "
                     "for every rank");
      sub.add_option("--bind", args->binds, "bind a symbolic extent: NAME=VALUE (repeatable)")->check(bindingSyntax());
      sub.add_option("--ranks", args->ranks, "number of ranks (default: from the program's meshes; workloads: 2)")
          ->check(rankCount());
      sub.add_option("--mode", args->mode,
                     "auto (parametric when sizes stay unbound, else bounded), bounded, or parametric (Z3)");
      sub.add_option("--assume", args->assumptions,
                     "parametric: a condition on the extents to assume, e.g. 'i0 % 16 == 0' (repeatable; stated in "
                     "the verdict)");
      sub.add_option("--max-streams", args->maxStreams,
                     "parametric: the bound of the per-numberOfStreams fallback (default 8)")
          ->check(streamCount());
      sub.add_option("--timeout", args->queryCpuSec,
                     "parametric: CPU seconds per Z3 attempt, 0.001 to 86400 (default 4), measured on the solving "
                     "thread's CPU clock so that a loaded machine gets the same answers; a wall-clock ceiling of 20x "
                     "ends a starved run; a query Z3 answers unknown, or whose budget runs out, is asked twice more "
                     "in fresh solvers, then its property is unknown (exit 4)")
          ->check(CLI::Range(kMinQueryCpuSec, kMaxQueryCpuSec));
      sub.add_option("--resource-limit", args->resourceLimit,
                     "parametric: Z3's deterministic work limit per solver (rlimit; default none), for runs that "
                     "must give the same answer on every machine");
      sub.add_flag("--json", args->json, "print the findings as JSON");
      sub.add_option("--dot", args->dot,
                     "draw the findings over the happens-before graph: FILE.dot, .svg or .png (docs/VIZ.md); "
                     "in parametric mode, of the confirmed counterexample");
      sub.add_flag("--no-warnings", args->noWarnings, "do not look for lost parallelism");
      addRankProgramOption(sub, args->rankPrograms);
      addWorkloadFlags(sub, args->flags, verifyDefaults());
      addBudgetFlags(sub, args->budget);
      return [args] {
        applyBudgetFlags(args->budget);
        const WorkloadFlags& f = args->flags;
        if (f.has(f.streams) && f.streams <= 0) throw Error("--streams must be positive");
        if (args->ranks < 0) throw Error("--ranks must be positive");
        if (args->maxStreams < 1) throw Error("--max-streams must be positive");
        // (CLI::Range lets "nan" through: every comparison with it is false.)
        if (!(args->queryCpuSec >= kMinQueryCpuSec && args->queryCpuSec <= kMaxQueryCpuSec))
          throw Error("--timeout must be between 0.001 and 86400 CPU seconds");
        if (!args->dot.empty()) viz::pictureFormatOf(args->dot);  // a bad extension fails before the work
        auto mode = verify::parseVerifyMode(args->mode);
        if (!mode) throw Error("--mode must be auto, bounded or parametric, got '" + args->mode + "'");
        verify::CheckOptions o;
        o.mode = *mode;
        o.bounded.bindings = parseBindings(args->binds);
        // numberOfStreams: --pool, else --streams (a workload's chunk count), else 4.
        o.bounded.streams = f.has(f.pool) ? f.pool : f.has(f.streams) ? f.streams : 4;
        o.bounded.parallelismWarnings = !args->noWarnings;
        int64_t ranks = args->ranks;
        RankPrograms rp = loadRankPrograms(args->rankPrograms);
        if (args->target.empty() && rp.empty())
          throw Error("give a host IR file or workload to verify, or --rank-program RANK=FILE for every rank");
        if (!rp.empty()) {
          if (o.mode == verify::VerifyMode::kParametric)
            throw Error("--rank-program is checked by the bounded checker only: drop --mode parametric");
          HostProgram p;
          if (!args->target.empty()) {
            bool workload = false;
            p = loadTarget(*args, &ranks, &workload);
            if (p.sourceName.empty()) p.sourceName = args->target;
          } else {
            // Every rank runs its own program: the ranks are those given (or --ranks).
            int64_t given = rp.byRank.rbegin()->first + 1;
            for (const auto& [rank, prog] : rp.byRank) given = std::max(given, sem::ranksFromProgram(*prog));
            if (ranks <= 0) ranks = given;
            requireEveryRank(rp, ranks);
          }
          o.bounded.ranks = ranks;
          o.bounded.rankPrograms = rp.byRank;
          verify::VerifyResult r =
              verify::verifyProgram(args->target.empty() ? *rp.byRank.begin()->second : p, o.bounded);
          r.program = (args->target.empty() ? "" : p.sourceName + " (other ranks), ") + rp.describe();
          std::cout << (args->json ? verify::formatJson(r) + "\n" : verify::formatReport(r));
          if (!args->dot.empty()) drawFindings(args->target.empty() ? *rp.byRank.begin()->second : p, o.bounded, r, args->dot);
          return r.ok() ? 0 : 1;
        }
        bool workload = false;
        HostProgram p = loadTarget(*args, &ranks, &workload);
        if (p.sourceName.empty()) p.sourceName = args->target;
        o.bounded.ranks = ranks;
        // For a workload, --streams is its chunk count; the parametric proof covers every
        // numberOfStreams. For a file, --streams (or --bind numberOfStreams=S) fixes it.
        if (!workload && (f.has(f.streams) || f.has(f.pool))) o.parametric.streams = o.bounded.streams;
        if (auto it = o.bounded.bindings.find(kNumberOfStreams); it != o.bounded.bindings.end())
          o.parametric.streams = it->second;
        o.parametric.maxStreams = args->maxStreams;
        for (const auto& a : args->assumptions) o.parametric.assumptions.push_back(parseScalar(a, "--assume"));
        o.parametric.queryCpuMs = static_cast<unsigned>(std::llround(args->queryCpuSec * 1000));
        o.parametric.resourceLimit = args->resourceLimit;
        if (verify::chooseMode(p, o) == verify::VerifyMode::kParametric && !verify::parametricAvailable())
          throw Error("braid was built without Z3 (BRAID_WITH_Z3=OFF): parametric mode is unavailable");
        verify::ProgramCheck c = verify::checkProgram(p, o);
        if (args->json) {
          std::cout << (c.bounded ? verify::formatJson(*c.bounded) : verify::formatParametricJson(*c.parametric)) << "\n";
        } else {
          std::cout << c.report;
        }
        if (!args->dot.empty()) {
          if (c.bounded) {
            drawFindings(p, o.bounded, *c.bounded, args->dot);
          } else if (c.parametric) {
            drawParametric(p, *c.parametric, o.bounded, args->dot);
          }
        }
        return c.exitCode;
      };
    },
    "check a host program's synchronization, aliasing and collectives (exact for given sizes, or proved for all "
    "sizes with Z3)"});

}  // namespace
}  // namespace braid::cli
