// Reading and writing host programs in the text format of docs/HOSTIR.md (nvFuser's
// NVFUSER_DUMP=host_ir), and a JSON dump of their structure.
#pragma once

#include <string>
#include <string_view>

#include "ir/host_ir.h"

namespace braid {

// Which nvFuser dialect the printer writes for stream statements, waits and ALLOCATE.
enum class HostIrDialect { kLegacy, kModern };

struct PrintOptions {
  HostIrDialect dialect = HostIrDialect::kLegacy;
};

// The canonical text of `p`. parse(print(p)) is structurally equal to p.
std::string print(const HostProgram& p, const PrintOptions& options = {});
// The canonical text of one statement (with its nested body), at indentation `indent` levels.
std::string printStmt(const Stmt& s, int indent = 0, const PrintOptions& options = {});

// Sets every statement's `loc` to the line it has in print(p) (file name `file`), so findings
// about built (lowered) programs point into their printed text.
void assignPrintedLocations(HostProgram& p, const std::string& file);

// Parses either dialect, any base indentation, expressions split over lines, HostUnit sections.
// Throws ParseError ("file:line:col: error: expected ..., found ...") on malformed input.
HostProgram parseHostProgram(std::string_view text, const std::string& file = "");
// Reads and parses a file; a missing or unreadable file is an Error naming the path.
HostProgram parseHostProgramFile(const std::string& path);

// Structural equality: same inputs/outputs/aliases, same statements with the same operands
// (tensors compared by name, dtype, memory type, domains and mesh), same HostUnits. When they
// differ and `why` is given, it names the first difference.
bool structurallyEqual(const HostProgram& a, const HostProgram& b, std::string* why = nullptr);

// A machine-readable dump of the program's structure (`braid print --json`).
std::string toJson(const HostProgram& p, int indent = 2);

}  // namespace braid
