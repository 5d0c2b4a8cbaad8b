// Running a host program on every rank of a communicator and checking it against the reference
// (see check.h).
#ifdef BRAID_WITH_TORCH

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "exec/check.h"
#include "exec/measured_timeline.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/error.h"
#include "ir/semantics/buffer_rules.h"
#include "passes/buffer_layout.h"

namespace braid::exec {

namespace {

// Refuses sizes this machine cannot hold before anything is allocated: every rank keeps the full
// inputs and outputs in float64 (the reference and the gathered results), and `--ranks N` puts
// all ranks on this machine. An over-large run would otherwise die deep inside an allocator.
// Ranks on this machine: torchrun and OpenMPI say so; braid's own launcher starts them all here.
int64_t localRanks(int64_t world) {
  for (const char* var : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char* v = std::getenv(var); v && *v) return std::max<int64_t>(1, std::atoll(v));
  return world;
}

void checkMemoryFits(const HostProgram& program, const Bindings& b, int64_t local_ranks) {
  double bytes = 0;
  sem::ShapeMode full;
  full.fullDevice = true;
  auto add = [&](const std::vector<TensorView*>& tvs) {
    for (const TensorView* tv : tvs) {
      double n = 8;  // float64
      try {
        for (int64_t e : sem::bufferShape(*tv, b, full)) n *= static_cast<double>(e);
      } catch (const Error&) {
        continue;  // a size not known yet: the evaluator reports it if it matters
      }
      bytes += n;
    }
  };
  add(program.inputs());
  add(program.outputs());
  bytes *= 2.0 * static_cast<double>(local_ranks);  // the data and a working copy, per rank
  double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > physical) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "these sizes need about %.1f GiB of memory (%lld rank(s) on this machine, "
                  "full inputs and outputs in float64), but this machine has %.1f GiB: choose smaller sizes",
                  bytes / (1 << 30), static_cast<long long>(local_ranks), physical / (1 << 30));
    throw Error(msg);
  }
}

}  // namespace

CheckResult runAndCheck(const HostProgram& program, const Fusion* ref, Communicator& comm,
                        const CheckOptions& opt) {
  const int64_t rank = comm.rank();
  const int64_t world = comm.size();
  Bindings b = opt.bindings;
  if (ref && ref->inputs().size() != program.inputs().size())
    throw Error("the reference fusion has " + std::to_string(ref->inputs().size()) + " inputs, the program " +
                std::to_string(program.inputs().size()));
  // A file checked against a workload: its free symbols (i0, ...) follow from the workload's sizes.
  if (ref)
    for (size_t i = 0; i < program.inputs().size(); ++i) {
      const TensorView& ptv = *program.inputs()[i];
      std::vector<int64_t> rs = fullShape(*ref->inputs()[i], b, true);
      size_t axes = 0;
      for (IterDomain* id : sem::bufferDomain(ptv)) axes += id->isReduction() ? 0 : 1;
      // The program's buffer is the logical tensor, or the buffer the lowering makes of it (a
      // device axis split off a logical axis, as nvFuser prints outer splits).
      std::vector<int64_t> bs;
      for (const LayoutAxis& a : bufferLayout(ref->inputs()[i], false))
        if (!a.id->isReduction()) bs.push_back(a.id->isBroadcast() ? 1 : a.id->extent().evaluate(b));
      if (axes == rs.size() || axes == bs.size()) {
        inferSymbols(ptv, axes == rs.size() ? rs : bs, true, b);
        continue;
      }
      // Otherwise the buffer must hold as many elements (a merge the lowering made for its
      // Stream chunks); toBufferLayout reshapes into it.
      int64_t have = 1, want = 1;
      for (int64_t e : rs) want *= e;
      try {
        for (int64_t e : fullShape(ptv, b)) have *= e;
      } catch (const Error&) {
        have = -1;
      }
      if (have != want)
        throw Error("input " + ptv.nameStr() + " has " + std::to_string(axes) + " axes but the reference's input " +
                    std::to_string(i) + " has shape " + shapeStr(rs) + " (laid out as a buffer: " + shapeStr(bs) +
                    "): the program does not have the reference workload's layout");
    }
  // Inputs: full tensors (from files or the seed), the same on every rank; each rank runs on its slice.
  // Inputs loaded from files also determine the symbols their extents name.
  std::vector<at::Tensor> loaded(program.inputs().size());
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const TensorView& ptv = *program.inputs()[i];
    for (const auto& [name, path] : opt.inputFiles)
      if (name == "T" + std::to_string(ptv.name()) || name == std::to_string(i)) loaded[i] = loadNpy(path).to(at::kDouble);
    if (loaded[i].defined()) inferSymbols(ptv, loaded[i].sizes(), true, b);
  }
  checkMemoryFits(program, b, localRanks(world));
  std::vector<at::Tensor> full_inputs, local_inputs;
  std::map<std::string, at::Tensor> drawn;  // this call's seeded inputs (CheckOptions::inputCache)
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const TensorView& ptv = *program.inputs()[i];
    at::Tensor full = loaded[i];
    std::vector<int64_t> shape = ref ? fullShape(*ref->inputs()[i], b, true) : fullShape(ptv, b);
    const std::string cacheKey = std::string(inputValuesName(opt.inputValues)) + "/" + std::to_string(opt.seed) + "/" +
                                 std::to_string(i) + "/" + shapeStr(shape);
    if (!full.defined() && opt.inputCache) {
      auto it = opt.inputCache->find(cacheKey);
      full = it != opt.inputCache->end() ? it->second : randomInput(shape, opt.seed, static_cast<int64_t>(i), opt.inputValues);
      drawn[cacheKey] = full;
    } else if (!full.defined()) {
      full = randomInput(shape, opt.seed, static_cast<int64_t>(i), opt.inputValues);
    } else if (full.sizes().vec() != shape) {
      throw Error("input file for " + ptv.nameStr() + " has shape " + shapeStr(full.sizes()) + ", expected " +
                  shapeStr(shape));
    }
    full_inputs.push_back(full);
    at::Tensor local = sliceForRank(ref ? toBufferLayout(full, ptv, b) : full, ptv, rank, toScalarType(ptv.dtype()));
    // A float64 slice can be a view of the full tensor: the program must not write into a cached one.
    if (opt.inputCache && local.is_alias_of(full)) local = local.clone();
    local_inputs.push_back(local);
  }

  if (opt.inputCache) *opt.inputCache = std::move(drawn);
  if (opt.beforeRun) opt.beforeRun(b);
  const at::Device dev = opt.device ? opt.device->device() : at::Device(at::kCPU);
  for (auto& t : local_inputs) t = t.to(dev);
  EvalOptions eo;
  eo.numberOfStreams = opt.numberOfStreams;
  eo.bindings = b;
  eo.onStatement = opt.onStatement;
  eo.device = opt.device;
  eo.poison = opt.poison;
  Evaluator ev(program, comm, eo);
  CheckResult result;
  const bool timeline = opt.timeline && opt.device;
  if (opt.timelineRun < 0 || opt.timelineRun > opt.repeat)
    throw Error("the timeline's run " + std::to_string(opt.timelineRun) + " is not one of the " +
                std::to_string(opt.repeat) + " timed runs (0 is the checked run)");
  if (opt.timelineRun > 0 && opt.graph) throw Error("a timed run's timeline cannot be recorded inside a CUDA graph");
  if (opt.hostProfile && opt.graph)
    throw Error("a host profile needs interpreted runs: a CUDA graph replay issues no statements");
  // Every timed run starts after a barrier, so the ranks' start events agree to within its skew.
  auto startTiming = [&] {
    opt.device->setTiming(true);
    comm.setTiming(true);
  };
  auto stopTiming = [&] {
    result.timeline = measuredTimeline(ev.timed(), opt.device->spans(), rank);
    opt.device->setTiming(false);
    comm.setTiming(false);
  };
  if (timeline && opt.timelineRun == 0) {
    comm.barrier();
    startTiming();
  }
  if (opt.current) *opt.current = &ev;
  std::vector<at::Tensor> outs = ev.run(local_inputs);
  if (opt.current) *opt.current = nullptr;
  if (timeline && opt.timelineRun == 0) stopTiming();
  Bindings scalars = ev.scalars();
  result.timings.statements = ev.executedStatements();
  using Clock = std::chrono::steady_clock;
  auto us = [](Clock::time_point a, Clock::time_point z) {
    return std::chrono::duration<double, std::micro>(z - a).count();
  };
  // The previous run has finished on the device (each run ends idle), so this is idle time.
  auto coolDown = [&] {
    if (opt.coolDownMs > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(opt.coolDownMs));
  };
  if (opt.graph) {
    if (!opt.device) throw Error("--graph needs --backend cuda");
    result.timings.graph = true;
    std::unique_ptr<Device::Captured> g = opt.device->capture([&] { outs = ev.run(local_inputs); });
    // The first replay uploads the graph: it counts as a warm-up run.
    const int64_t untimed = std::max<int64_t>(1, opt.warmup);
    for (int64_t i = 0; i < untimed + opt.repeat; ++i) {
      coolDown();
      comm.barrier();
      auto t0 = Clock::now();
      g->replay();
      auto t1 = Clock::now();
      comm.drain();
      opt.device->hostSynchronize();
      auto t2 = Clock::now();
      if (i < untimed) {
        result.timings.warmupRuns = i + 1;
        continue;
      }
      result.timings.issueUs.push_back(us(t0, t1));
      result.timings.wallUs.push_back(us(t0, t2));
    }
  } else {
    for (int64_t i = 0; i < opt.warmup; ++i) {
      coolDown();
      comm.barrier();
      ev.run(local_inputs);
      ++result.timings.warmupRuns;
    }
    if (opt.hostProfile) ev.setHostProfile(&result.timings.hostProfile);
    for (int64_t i = 0; i < opt.repeat; ++i) {
      const bool timed = timeline && opt.timelineRun == i + 1;
      coolDown();
      comm.barrier();
      if (timed) startTiming();
      auto t0 = Clock::now();
      ev.run(local_inputs);
      auto t2 = Clock::now();
      if (timed) stopTiming();
      result.timings.issueUs.push_back(ev.lastIssueUs());
      result.timings.wallUs.push_back(us(t0, t2));
    }
    ev.setHostProfile(nullptr);
  }

  if (!opt.gather) return result;
  // Gather every output to rank 0.
  std::vector<int64_t> team(static_cast<size_t>(world));
  for (int64_t r = 0; r < world; ++r) team[static_cast<size_t>(r)] = r;
  std::vector<std::vector<at::Tensor>> per_rank(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    at::Tensor local = outs[o].to(at::kDouble).contiguous();
    if (world == 1) {
      per_rank[o].push_back(local.cpu());
      continue;
    }
    at::Tensor all = rank == 0 ? at::empty({world * local.numel()}, local.options()) : at::Tensor();
    comm.gather(team, local, all, 0)->wait();
    comm.drain();
    if (rank == 0) {
      all = all.cpu();
      for (int64_t r = 0; r < world; ++r)
        per_rank[o].push_back(all.narrow(0, r * local.numel(), local.numel()).view(local.sizes()));
    }
  }

  result.checked = opt.check && ref;
  if (rank == 0) {
    // Errors here are rank 0's alone: report them as a failure, so every rank still agrees below.
    try {
      std::vector<at::Tensor> ref_outs;
      if (result.checked) {
        if (ref->outputs().size() != program.outputs().size())
          throw Error("the reference fusion has " + std::to_string(ref->outputs().size()) + " outputs, the program " +
                      std::to_string(program.outputs().size()));
        OpContext ctx{&b, true, at::kDouble};
        ref_outs = evalFusion(*ref, full_inputs, ctx);
      }
      std::ostringstream os;
      for (size_t o = 0; o < outs.size(); ++o) {
        const TensorView& ptv = *program.outputs()[o];
        std::vector<int64_t> shape = result.checked ? fullShape(*ref->outputs()[o], b, true) : fullShape(ptv, scalars);
        std::string replica;
        std::vector<int64_t> buffer_shape = fullShape(ptv, scalars);
        at::Tensor full = assembleFull(per_rank[o], ptv, buffer_shape, &replica).reshape(shape);
        os << "  " << ptv.nameStr() << " " << shapeStr(full.sizes()) << ": ";
        if (!replica.empty()) {
          os << "MISMATCH: " << replica << "\n";
          ++result.failures;
        } else if (result.checked) {
          double tol = opt.tolerance.value_or(defaultTolerance(toScalarType(ptv.dtype())));
          Comparison c = compare(full, ref_outs[o], tol);
          os << describe(c) << "\n";
          if (!c.ok) ++result.failures;
        } else {
          os << "sum " << full.nan_to_num(0).sum().item<double>() << ", abs sum "
             << full.abs().nan_to_num(0).sum().item<double>()
             << (full.isnan().any().item<bool>() ? ", contains NaN (never written)" : "") << "\n";
        }
        if (!opt.saveOutputs.empty()) {
          std::filesystem::create_directories(opt.saveOutputs);
          saveNpy(opt.saveOutputs + "/T" + std::to_string(ptv.name()) + ".npy", full);
        }
      }
      result.report = os.str();
    } catch (const std::exception& e) {
      result.report += std::string("  check failed: ") + e.what() + "\n";
      result.failures = std::max<int64_t>(result.failures, 1);
    }
  }
  // Every rank learns rank 0's verdict.
  at::Tensor verdict =
      at::full({1}, static_cast<int64_t>(result.failures), at::TensorOptions().dtype(at::kLong).device(dev));
  if (world > 1) {
    comm.broadcast(team, verdict, 0)->wait();
    comm.drain();
  }
  result.failures = verdict.item<int64_t>();
  result.ok = result.failures == 0;
  return result;
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
