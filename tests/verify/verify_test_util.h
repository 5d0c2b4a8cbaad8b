// Helpers of the verify tests: load a test program, build its event graph, verify it.
#pragma once

#include <string>

#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "verify/checker.h"

namespace braid::testing {

inline std::string verifyDataPath(const std::string& name) {
  return std::string(BRAID_TEST_DATA_DIR) + "/verify/data/" + name;
}

inline HostProgram loadVerifyProgram(const std::string& name) {
  return parseHostProgramFile(verifyDataPath(name));
}

inline verify::VerifyResult verifyFile(const std::string& name, Bindings b, int64_t ranks = 0, int64_t streams = 2) {
  HostProgram p = loadVerifyProgram(name);
  verify::VerifyOptions o;
  o.bindings = std::move(b);
  o.ranks = ranks;
  o.streams = streams;
  return verify::verifyProgram(p, o);
}

// Verifies `p` on `ranks` ranks with numberOfStreams `streams`, errors only (no parallelism warnings).
inline verify::VerifyResult verifyForErrors(const HostProgram& p, int64_t ranks, int64_t streams) {
  verify::VerifyOptions o;
  o.ranks = ranks;
  o.streams = streams;
  o.parallelismWarnings = false;
  return verify::verifyProgram(p, o);
}

inline std::string kinds(const verify::VerifyResult& r) {
  std::string s;
  for (const auto& f : r.findings) s += std::string(s.empty() ? "" : ", ") + verify::findingKindName(f.kind);
  return s.empty() ? "(none)" : s;
}

}  // namespace braid::testing
