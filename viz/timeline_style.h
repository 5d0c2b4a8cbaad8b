// How timeline pictures look: colours by op kind and ordering kind, number formats, the time
// axis's ticks. Shared by the timeline layout, its legend and the happens-before graph.
#pragma once

#include <cstdint>
#include <string>

#include "ir/timeline.h"

namespace braid::viz {

const char* opKindColor(TimelineOpKind k);      // box fill, "#rrggbb"
const char* opKindFontColor(TimelineOpKind k);  // text on that fill
const char* arrowColor(TimelineEdgeKind k);     // "#rrggbbaa"
const char* arrowLegendName(TimelineEdgeKind k);
// Zero-duration kinds drawn as ticks rather than boxes.
bool isMarkerKind(TimelineOpKind k);

// Communication hidden under device work / exposed: strong (strips, legend) and faint (shading).
inline constexpr const char* kHiddenFill = "#59a14f";
inline constexpr const char* kExposedFill = "#e15759";
inline constexpr const char* kHiddenShade = "#59a14f24";
inline constexpr const char* kExposedShade = "#e1575920";

// "812.4 µs", "1.234 ms", "2.5 s"; "16 MiB"; "78%".
std::string durationStr(double us);
std::string bytesStr(int64_t bytes);
std::string percentStr(double fraction);

// Ticks every `step` `unit`s (1, 2 or 5 times a power of ten), `div` microseconds per unit.
struct TimeAxis {
  double step = 1;
  double div = 1;
  const char* unit = "µs";
};
// About one tick per 85 points of an axis `widthPt` long covering [0, maxUs].
TimeAxis chooseTimeAxis(double maxUs, double widthPt);
std::string tickLabel(double value, double step);  // as many decimals as the step needs

}  // namespace braid::viz
