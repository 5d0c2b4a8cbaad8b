#include "passes/lower.h"

#include "ir/error.h"
#include "passes/pass_manager.h"

namespace braid {

void validateLoweringOptions(const LoweringOptions& options, int64_t devices) {
  if (devices < 1) throw Error("the number of devices must be at least 1, got " + std::to_string(devices));
  if (options.streams < 1) throw Error("the number of streams must be at least 1, got " + std::to_string(options.streams));
  if (options.ringBuffers && options.indexing == StreamIndexing::kRaw)
    throw Error("ring buffers need modulo stream indexing (--indexing modulo): iterations i and i + numberOfStreams "
                "share a ring slot, which is only safe when one stream runs both in order");
  if (options.deferWaits && options.protocol == StreamProtocol::kInLoopSync)
    throw Error("--defer-waits needs protocol A or C: the deferred Wait goes to the iteration's join on the main "
                "stream, and protocol B's loop body never returns to the main stream");
}

namespace {

void checkMeshesFit(const Fusion& f, int64_t devices) {
  for (const TensorView* tv : f.tensors()) {
    if (!tv->hasDeviceMesh()) continue;
    for (int64_t d : tv->deviceMesh()->devices())
      if (d < 0 || d >= devices)
        throw Error("T" + std::to_string(tv->name()) + "'s mesh " + tv->deviceMesh()->str() + " names device " +
                    std::to_string(d) + ", but only " + std::to_string(devices) + " devices were given");
  }
}

}  // namespace

HostProgram lower(Fusion& fusion, const LoweringOptions& options, int64_t devices, const LowerConfig& config) {
  validateLoweringOptions(options, devices);
  checkMeshesFit(fusion, devices);
  LoweringContext ctx(fusion, options, devices);
  ctx.shouldMerge = config.shouldMerge;
  PassManager pm;
  if (config.dumpPasses) pm.setDump(true, config.dumpStream);
  else if (pm.dumping()) pm.setDump(true, config.dumpStream);
  addStandardPasses(pm);
  for (const auto& hook : config.afterPass) pm.addAfterPassHook(hook);
  pm.run(ctx);
  return std::move(ctx.program);
}

}  // namespace braid
