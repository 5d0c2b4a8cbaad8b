// Running a host program on every rank of a communicator and checking it against the reference
// (see check.h).
#ifdef BRAID_WITH_TORCH

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "exec/check.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/error.h"

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
  ShapeContext ctx;
  ctx.bindings = &b;
  ctx.full = true;
  auto add = [&](const std::vector<TensorView*>& tvs) {
    for (const TensorView* tv : tvs) {
      double n = 8;  // float64
      try {
        for (int64_t e : bufferShape(*tv, ctx)) n *= static_cast<double>(e);
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
      for (IterDomain* id : bufferDomain(ptv)) axes += id->isReduction() ? 0 : 1;
      if (axes != rs.size())
        throw Error("input " + ptv.nameStr() + " has " + std::to_string(axes) + " axes but the reference's input " +
                    std::to_string(i) + " has shape " + shapeStr(rs) +
                    ": the program does not have the reference workload's layout");
      inferSymbols(ptv, rs, true, b);
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
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const TensorView& ptv = *program.inputs()[i];
    at::Tensor full = loaded[i];
    std::vector<int64_t> shape = ref ? fullShape(*ref->inputs()[i], b, true) : fullShape(ptv, b);
    if (!full.defined()) {
      full = randomInput(shape, opt.seed, static_cast<int64_t>(i));
    } else if (full.sizes().vec() != shape) {
      throw Error("input file for " + ptv.nameStr() + " has shape " + shapeStr(full.sizes()) + ", expected " +
                  shapeStr(shape));
    }
    full_inputs.push_back(full);
    local_inputs.push_back(sliceForRank(full, ptv, rank, toScalarType(ptv.dtype())));
  }

  if (opt.beforeRun) opt.beforeRun(b);
  EvalOptions eo;
  eo.numberOfStreams = opt.numberOfStreams;
  eo.bindings = b;
  eo.onStatement = opt.onStatement;
  Evaluator ev(program, comm, eo);
  if (opt.current) *opt.current = &ev;
  std::vector<at::Tensor> outs = ev.run(local_inputs);
  if (opt.current) *opt.current = nullptr;
  Bindings scalars = ev.scalars();

  // Gather every output to rank 0.
  std::vector<int64_t> team(static_cast<size_t>(world));
  for (int64_t r = 0; r < world; ++r) team[static_cast<size_t>(r)] = r;
  std::vector<std::vector<at::Tensor>> per_rank(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    at::Tensor local = outs[o].to(at::kDouble).contiguous();
    if (world == 1) {
      per_rank[o].push_back(local);
      continue;
    }
    at::Tensor all = rank == 0 ? at::empty({world * local.numel()}, local.options()) : at::Tensor();
    comm.gather(team, local, all, 0)->wait();
    if (rank == 0)
      for (int64_t r = 0; r < world; ++r)
        per_rank[o].push_back(all.narrow(0, r * local.numel(), local.numel()).view(local.sizes()));
  }

  CheckResult result;
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
        at::Tensor full = assembleFull(per_rank[o], ptv, shape, &replica);
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
  at::Tensor verdict = at::full({1}, static_cast<int64_t>(result.failures), at::TensorOptions().dtype(at::kLong));
  if (world > 1) comm.broadcast(team, verdict, 0)->wait();
  result.failures = verdict.item<int64_t>();
  result.ok = result.failures == 0;
  return result;
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
