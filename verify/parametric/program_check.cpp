#include "verify/parametric/program_check.h"

#include <memory>
#include <sstream>

#include "ir/semantics/interpreter.h"

namespace braid::verify {

const char* verifyModeName(VerifyMode m) {
  switch (m) {
    case VerifyMode::kAuto:
      return "auto";
    case VerifyMode::kBounded:
      return "bounded";
    case VerifyMode::kParametric:
      return "parametric";
  }
  return "?";
}

std::optional<VerifyMode> parseVerifyMode(const std::string& s) {
  if (s == "auto") return VerifyMode::kAuto;
  if (s == "bounded") return VerifyMode::kBounded;
  if (s == "parametric") return VerifyMode::kParametric;
  return std::nullopt;
}

VerifyMode chooseMode(const HostProgram& p, const CheckOptions& o) {
  if (o.mode != VerifyMode::kAuto) return o.mode;
  if (!parametricAvailable()) return VerifyMode::kBounded;
  return sem::unboundSymbols(p, o.bounded.bindings).empty() ? VerifyMode::kBounded : VerifyMode::kParametric;
}

ProgramCheck checkProgram(const HostProgram& p, const CheckOptions& o) {
  ProgramCheck c;
  c.mode = chooseMode(p, o);
  if (c.mode == VerifyMode::kBounded) {
    VerifyResult r = verifyProgram(p, o.bounded);
    c.ok = r.ok();
    c.bug = !r.ok();
    c.incomplete = r.has(FindingKind::kUnboundTensor);
    c.exitCode = r.ok() ? 0 : 1;
    c.summary = r.ok() ? "verified for these bindings" : std::to_string(r.errors()) + " error(s)";
    if (!r.ok()) {
      std::string kinds;
      for (const auto& f : r.findings)
        if (f.severity == Severity::kError) kinds += (kinds.empty() ? "" : ", ") + std::string(findingKindName(f.kind));
      c.summary += ": " + kinds;
    }
    c.report = formatReport(r);
    c.bounded = std::move(r);
    return c;
  }
  ParametricOptions po = o.parametric;
  po.bindings = o.bounded.bindings;
  po.ranks = o.bounded.ranks;
  ParametricResult r = proveProgram(p, po);
  c.ok = r.proven();
  c.bug = r.bugFound();
  for (const auto& w : r.witnesses) c.incomplete |= w.confirmed && w.kind == FindingKind::kUnboundTensor;
  c.exitCode = parametricExitCode(r);
  if (c.ok) {
    c.summary = "proven " + r.scope();
  } else {
    std::string open;
    for (const auto& pv : r.properties)
      if (pv.status != ClaimStatus::kProven)
        open += (open.empty() ? "" : ", ") + pv.name + " " + claimStatusName(pv.status);
    c.summary = (c.bug ? "bug: " : "not proven: ") + open;
  }
  c.report = formatParametricReport(r);
  c.parametric = std::move(r);
  return c;
}

std::string EachPassResult::report() const {
  std::ostringstream os;
  for (const auto& p : passes) {
    os << "after " << p.pass << ": ";
    if (!p.hasProgram) {
      os << "no host program yet\n";
    } else if (p.check.incomplete) {
      os << "not executable yet (uses tensors nothing allocated)\n";
    } else {
      os << p.check.summary << "\n";
    }
  }
  const std::string& bad = !firstFailing.empty() ? firstFailing : firstUnproven;
  if (bad.empty()) {
    os << "every pass's output verifies\n";
    return os.str();
  }
  os << "\nfirst pass whose output " << (!firstFailing.empty() ? "fails" : "is not proven") << ": " << bad << "\n\n";
  for (const auto& p : passes)
    if (p.pass == bad) os << p.check.report;
  return os.str();
}

namespace {

// The hook that checks the program after a pass, appending to `out`.
AfterPassHook checkingHook(std::shared_ptr<std::vector<PassCheck>> out, CheckOptions check, int64_t devices) {
  if (check.bounded.ranks == 0) check.bounded.ranks = devices;
  return [out, check](const std::string& pass, bool changed, const LoweringContext& ctx) {
    PassCheck pc;
    pc.pass = pass;
    pc.changed = changed;
    pc.hasProgram = ctx.hasProgram;
    if (ctx.hasProgram) pc.check = checkProgram(ctx.program, check);
    out->push_back(std::move(pc));
  };
}

// The first pass whose (executable, or last) program fails, and the first not proven.
void classify(EachPassResult& res) {
  for (size_t i = 0; i < res.passes.size(); ++i) {
    const PassCheck& p = res.passes[i];
    if (!p.hasProgram) continue;
    bool last = i + 1 == res.passes.size();
    if (p.check.incomplete && !last) continue;
    if (p.check.bug && res.firstFailing.empty()) res.firstFailing = p.pass;
    if (!p.check.ok && !p.check.bug && res.firstUnproven.empty()) res.firstUnproven = p.pass;
  }
}

}  // namespace

EachPassResult lowerVerifyingEachPass(Fusion& fusion, const LoweringOptions& options, int64_t devices,
                                      const CheckOptions& check, LowerConfig config) {
  auto checks = std::make_shared<std::vector<PassCheck>>();
  config.afterPass.push_back(checkingHook(checks, check, devices));
  EachPassResult res;
  res.program = lower(fusion, options, devices, config);
  res.passes = std::move(*checks);
  classify(res);
  return res;
}

EachPassResult runVerifyingEachPass(PassManager& pm, LoweringContext& ctx, const CheckOptions& check) {
  auto checks = std::make_shared<std::vector<PassCheck>>();
  pm.addAfterPassHook(checkingHook(checks, check, ctx.devices));
  pm.run(ctx);
  EachPassResult res;
  res.passes = *checks;
  res.program = std::move(ctx.program);
  classify(res);
  return res;
}

}  // namespace braid::verify
