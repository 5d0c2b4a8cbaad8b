// How the command line shows an error: its message, and for an error located in a file the
// source line quoted with a caret under the column (as clang and MLIR diagnostics do):
//
//   f.hir:4:12: error: the size of T2_l_float (axis iS4{i2}) is negative: -5 (i2 = -5) (on rank 0)
//       4 |     T2_l_float[iS4{i2}]
//         |            ^
#pragma once

#include <string>

#include "ir/error.h"

namespace braid {

// e.what(), followed by the quoted line and caret when `e` is a ParseError whose file can be
// read and has that line. Never throws.
std::string formatDiagnostic(const Error& e);

// The quote alone ("" when the line cannot be read): `text` is the whole file.
std::string quoteSourceLine(const std::string& text, int line, int col);

}  // namespace braid
