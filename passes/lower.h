// The lowering entry point: a scheduled Fusion -> the SPMD host program every rank runs
// (docs/LOWERING.md). The fusion is rewritten in place (propagated schedules, inserted sets,
// rfactored reductions): keep another instance to evaluate as the reference.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "ir/host_ir.h"
#include "ir/lowering_options.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

namespace braid {

struct LowerConfig {
  bool dumpPasses = false;            // also on with BRAID_DUMP=passes
  std::ostream* dumpStream = nullptr;  // std::cerr when null
  ShouldMergeFn shouldMerge;          // segmentation's predicate; empty: the default
  std::vector<AfterPassHook> afterPass;  // instrumentation after every pass (pass_manager.h)
};

// Lowers `fusion` for `devices` ranks. Throws NotLowerableError (the fusion or schedule cannot be
// lowered; the message says what and why) or Error (bad options).
HostProgram lower(Fusion& fusion, const LoweringOptions& options, int64_t devices, const LowerConfig& config = {});

// Checks the options and the device count; throws Error naming the bad one.
void validateLoweringOptions(const LoweringOptions& options, int64_t devices);

}  // namespace braid
