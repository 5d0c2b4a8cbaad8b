// Text widths without a font engine: the layouts decide what fits before Graphviz measures
// anything. Estimates for DejaVu Sans (what Helvetica resolves to on Debian, and the widest of
// the usual sans fonts), so a label that "fits" here fits in the PNG and the SVG.
#pragma once

#include <string>

namespace braid::viz {

// Width in points of `s` at `fontSize` points (UTF-8 aware; a slight over-estimate).
double textWidth(const std::string& s, double fontSize);

// `s`, or its longest prefix followed by "…" that fits in `width` points ("" if not even "…").
std::string fitText(const std::string& s, double width, double fontSize);

}  // namespace braid::viz
