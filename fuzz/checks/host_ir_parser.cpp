// Fuzz check: the host IR text parser (every dialect). A malformed file must be an Error; a program
// that parses must print, print as JSON, and parse back from its printed text to an equal program.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"

namespace braid::fuzz {

void checkHostIrParser(std::string_view text) {
  HostProgram p;
  try {
    p = parseHostProgram(text, "fuzz.hir");
  } catch (const Error&) {
    return;
  }
  std::string printed = print(p);
  (void)toJson(p);
  HostProgram again;
  try {
    again = parseHostProgram(printed, "printed.hir");
  } catch (const Error& e) {
    throw CheckFailure(std::string("print(p) does not parse: ") + e.what());
  }
  std::string why;
  if (!structurallyEqual(p, again, &why)) throw CheckFailure("parse(print(p)) != p: " + why);
  try {
    (void)parseDeviceDumps(text, "fuzz.hir");
  } catch (const Error&) {
  }
}

}  // namespace braid::fuzz
