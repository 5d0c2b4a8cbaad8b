// Reading scalar expressions as the host IR text writes them (Scalar::str()): integers, symbols
// (`i0`, `StreamIdx`, `deviceIdx.x`, `numberOfStreams`, `rank`), `+ - * / %`, `ceilDiv(a, b)`,
// comparisons, `&& || !` and parentheses. The tree is kept as written (Scalar::binary, no
// simplification), so printing it back gives the same text. nvFuser's `where`, `fmax`, `fmin`,
// `max`, `min` and `abs` (in the extents of sliced axes) are read as the equivalent arithmetic,
// which braid prints instead.
#pragma once

#include <string>
#include <string_view>

#include "ir/host_ir_lexer.h"
#include "ir/scalar.h"

namespace braid {

// Parses one expression at the cursor; stops before the first token that cannot continue it.
Scalar parseScalarExpr(TokenStream& ts);
// Parses a whole string as one expression (e.g. a `--bind` value or a test input).
Scalar parseScalar(std::string_view text, const std::string& file = "");

}  // namespace braid
