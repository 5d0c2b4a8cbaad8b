// Fuzz check: the scalar expression parser (a `--bind` value, an extent, a loop bound). A malformed
// expression must be an Error; one that parses must print back to text that parses to the same
// tree, and evaluate or simplify without crashing.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "ir/scalar_parser.h"

namespace braid::fuzz {

void checkScalarParser(std::string_view text) {
  Scalar s;
  try {
    s = parseScalar(text, "fuzz");
  } catch (const Error&) {
    return;
  }
  Scalar again;
  try {
    again = parseScalar(s.str(), "printed");
  } catch (const Error& e) {
    throw CheckFailure(std::string("print(s) does not parse: ") + e.what());
  }
  if (again != s) throw CheckFailure("parse(print(s)) != s for " + s.str());
  Bindings bindings;
  int64_t value = 1;
  for (const std::string& name : s.freeSymbols()) bindings[name] = value++;
  try {
    (void)s.tryEvaluate(bindings);
  } catch (const Error&) {
  }
  try {
    (void)s.simplify().str();
  } catch (const Error&) {
  }
}

}  // namespace braid::fuzz
