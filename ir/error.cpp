#include "ir/error.h"

namespace braid {

std::string SourceLoc::str() const {
  std::string s = file.empty() ? "<input>" : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

ParseError::ParseError(SourceLoc loc, const std::string& message)
    : Error(loc.str() + ": error: " + message), loc_(std::move(loc)), message_(message) {}

}  // namespace braid
