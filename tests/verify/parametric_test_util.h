// Helpers of the parametric checker's tests: prove a test program or an example dump, and read
// a result.
#pragma once

#include <string>

#include "tests/verify/verify_test_util.h"
#include "verify/parametric/parametric_checker.h"

namespace braid::testing {

inline std::string examplePath(const std::string& name) { return std::string(BRAID_SOURCE_DIR) + "/examples/" + name; }

inline verify::ParametricResult proveFile(const std::string& path, verify::ParametricOptions o = {}) {
  HostProgram p = parseHostProgramFile(path);
  return verify::proveProgram(p, o);
}

inline verify::ParametricResult proveData(const std::string& name, verify::ParametricOptions o = {}) {
  return proveFile(verifyDataPath(name), o);
}

inline const verify::PropertyVerdict* property(const verify::ParametricResult& r, const std::string& name) {
  for (const auto& p : r.properties)
    if (p.name == name) return &p;
  return nullptr;
}

inline bool hasConfirmed(const verify::ParametricResult& r, verify::FindingKind k) {
  for (const auto& w : r.witnesses)
    if (w.confirmed && w.kind == k) return true;
  return false;
}

inline bool hasCandidate(const verify::ParametricResult& r, verify::FindingKind k) {
  for (const auto& w : r.witnesses)
    if (w.kind == k) return true;
  return false;
}

}  // namespace braid::testing
