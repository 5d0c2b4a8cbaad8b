// Reading and writing host programs in the text format of docs/HOSTIR.md (nvFuser's
// NVFUSER_DUMP=host_ir), and a JSON dump of their structure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/host_ir.h"

namespace braid {

// nvFuser's printers, oldest first (docs/HOSTIR.md, "Dialects").
//   kOldest: July to November 2024: `T0_g[ iS0{4} ]` (no dtype before September), `Input=` /
//            `Output=` in Communication (July), statements of a loop body run together on one
//            line (July and August), `iStream7{8}`.
//   kLegacy: the "to Stream" printer, December 2024 to January 2026: `SetCurrentStream to
//            Stream X`, `GetCurrentStream into Stream 0`, `Wait Communication N`, `iStreamIdx`.
//   kModern: today's printer: `SetCurrentStream(Stream X)`, `Stream 0x.. = GetCurrentStream()`,
//            `Wait(Communication N)`, `istreamIdx`.
enum class HostIrDialect { kOldest, kLegacy, kModern };
const char* dialectName(HostIrDialect d);  // "oldest", "to-stream", "today"
std::optional<HostIrDialect> parseDialectName(const std::string& s);

struct PrintOptions {
  // braid's library default stays the "to Stream" printer that its golden files use; `braid
  // print` writes kModern unless asked otherwise.
  HostIrDialect dialect = HostIrDialect::kLegacy;
};

// The canonical text of `p`. parse(print(p)) is structurally equal to p.
std::string print(const HostProgram& p, const PrintOptions& options = {});
// The canonical text of one statement (with its nested body), at indentation `indent` levels.
// Without the program, tensors whose dtype the file did not print show the stand-in kFloat.
std::string printStmt(const Stmt& s, int indent = 0, const PrintOptions& options = {});
std::string printStmt(const HostProgram& p, const Stmt& s, int indent = 0, const PrintOptions& options = {});

// Sets every statement's `loc` to the line it has in print(p) (file name `file`), so findings
// about built (lowered) programs point into their printed text.
void assignPrintedLocations(HostProgram& p, const std::string& file);

// Parses every dialect, any base indentation, expressions split over lines, HostUnit sections
// (modelled, kept as text, elided or absent) and the "Index definitions:" section. Throws
// ParseError ("file:line:col: error: expected ..., found ...") on malformed input, including a
// dump hard-wrapped by a web page.
HostProgram parseHostProgram(std::string_view text, const std::string& file = "");
// Reads and parses a file; a missing or unreadable file is an Error naming the path.
HostProgram parseHostProgramFile(const std::string& path);

// A dump of the per-device programs nvFuser's MultiDeviceExecutor prints, each after a
// `Device ID = N` line (as its multi-device tutorial shows them): the programs by device, with
// their own line numbers in the file. Empty when the text has no such line.
std::vector<std::pair<int64_t, HostProgram>> parseDeviceDumps(std::string_view text, const std::string& file = "");
std::vector<std::pair<int64_t, HostProgram>> parseDeviceDumpsFile(const std::string& path);

// Structural equality: same inputs/outputs/aliases, same statements with the same operands
// (tensors compared by name, dtype, memory type, domains and mesh), same HostUnits. When they
// differ and `why` is given, it names the first difference.
bool structurallyEqual(const HostProgram& a, const HostProgram& b, std::string* why = nullptr);

// A machine-readable dump of the program's structure (`braid print --json`).
std::string toJson(const HostProgram& p, int indent = 2);

}  // namespace braid
