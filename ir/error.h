// Errors that braid reports to its users. Every error says what was wrong and where; the CLI maps
// them to exit codes (2: bad input, 1: a bug found in the program under study).
#pragma once

#include <stdexcept>
#include <string>

namespace braid {

// A position in a text file, 1-based. line == 0 means "no position known".
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool known() const { return line > 0; }
  // "file:line:col", or "file:line" when col is unknown; "<input>" stands for an unnamed file.
  std::string str() const;
  bool operator==(const SourceLoc&) const = default;
};

// Base of all errors braid reports as "bad input" (exit code 2).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A syntax or consistency error in a host IR file: "file:line:col: error: expected X, found Y".
class ParseError : public Error {
 public:
  ParseError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// A fusion or schedule that cannot be lowered / evaluated as asked (e.g. "Stream axis was split").
class NotLowerableError : public Error {
 public:
  using Error::Error;
};

}  // namespace braid
