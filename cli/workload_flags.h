// The workload flags that `braid lower`, `verify`, `run` and `demo` share (sizes, dtype, stream
// protocol, indexing, pipeline kind, ring buffers), and `--bind NAME=VALUE` parsing. A flag left
// unset keeps the command's own default, so each command can pick defaults that suit it.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "catalog/workload.h"
#include "ir/host_ir.h"
#include "ir/scalar.h"

namespace braid::cli {

struct WorkloadFlags {
  static constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();
  int64_t devices = kUnset;
  int64_t streams = kUnset;
  int64_t pool = kUnset;  // numberOfStreams, apart from the chunk count
  int64_t m = kUnset, k = kUnset, n = kUnset;
  int64_t tp = kUnset;
  bool has(int64_t v) const { return v != kUnset; }
  std::string dtype, protocol, indexing, pipeline, ownShard, commBackend;
  bool ring = false;
  bool noDealloc = false;
  bool deferWaits = false;
  bool prefetch = false;
};

// Adds --devices --streams --pool --m --k --n --tp --dtype --protocol --indexing --pipeline --ring
// --no-dealloc --defer-waits --prefetch --own-shard --comm-backend to `sub`; `defaults` is only shown in the help text.
void addWorkloadFlags(CLI::App& sub, WorkloadFlags& flags, const WorkloadParams& defaults);

// `base` with every flag that was given applied; throws Error for a bad dtype, protocol,
// indexing, pipeline, own-shard or comm-backend name, or a non-positive size.
WorkloadParams applyWorkloadFlags(const WorkloadFlags& flags, WorkloadParams base);

// For a host IR file, whose text fixes what the lowering flags choose: throws Error naming the
// first flag given that only a workload's lowering reads (sizes, dtype, protocol, pipeline, ...),
// unless `allowed` lists it ("streams", "comm-backend", ...), so no flag is silently ignored.
void refuseLoweringFlags(const WorkloadFlags& flags, const std::string& file, const std::vector<std::string>& allowed);

// CLI11 validators: a rank count (1..kMaxRanks), a stream count (1..kMaxStreams), --bind syntax.
CLI::Validator rankCount();
CLI::Validator streamCount();
CLI::Validator bindingSyntax();
// `s` as one number in [lo, hi]; nullopt for trailing text, NaN or a number out of range.
std::optional<double> numberIn(const std::string& s, double lo, double hi);
// A number in [lo, hi] (numberIn; CLI::Range lets NaN through).
CLI::Validator finiteRange(double lo, double hi);
// A list option given empty (--only "") is a mistake, not "everything".
CLI::Validator nonEmpty();

// NAME=VALUE pairs of integers (`--bind i0=8192`); throws Error naming the bad one.
Bindings parseBindings(const std::vector<std::string>& binds);

// True when `name` is a catalog workload.
bool isWorkloadName(const std::string& name);

// The command-line target of verify, sim and their kin: the well-formed program of the file at
// TARGET, or nothing when TARGET names a catalog workload; neither is an Error listing the
// workloads. Anything at the path (a directory, a FIFO) is read as a file and refused by the reader.
std::optional<HostProgram> readTargetFile(const std::string& target);

}  // namespace braid::cli
