// Timeline pictures: one or more timelines (ir/timeline.h: predicted by sim, measured by exec)
// drawn as lanes of boxes on one time scale, one panel per timeline, stacked so that their time
// axes line up. docs/VIZ.md shows what the picture contains and how it stays readable.
//
//   renderTimelines({predicted, measured}, {}, "out.svg");   // or .png, or .dot
//
// The layout is computed here (timeline_layout.cpp) with every position pinned; Graphviz's
// `neato -n` ("nop") only draws it (timeline_dot.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/timeline.h"
#include "viz/overlap.h"

namespace braid::viz {

struct TimelineDrawOptions {
  std::string title;                // picture title; default: from the timelines' program names
  std::vector<std::string> labels;  // one per timeline; default: source and meta ("predicted, protocol=A")
  double widthPt = 1000;            // length of the time axis in points (1/72 in; PNG: 96 dpi)
  double laneHeightPt = 16;
  std::vector<int64_t> ranks;  // ranks to draw; empty: all
  bool aggregateRanks = true;  // draw ranks that did the same thing at the same time once
  // Two ranks are "the same" when every start and end differs by at most this fraction of the
  // longest makespan.
  double rankTolerance = 0.002;
  // At most this many groups of identical ranks are drawn lane by lane (0: all); the others get
  // one summary row each (device work, hidden and exposed communication).
  int detailedGroups = 4;
  bool arrows = true;    // Synchronize / Wait / post orderings between lanes
  int maxArrows = 300;   // per timeline; beyond this, post arrows go first, then the latest ones
  double minBoxPt = 2;   // thinner boxes are widened to this, or merged into a dense run
  int minDenseRun = 3;   // consecutive too-thin ops (gaps under 1 pt) merged into one box
};

// ---- The layout: positions in points, y growing downwards from the top of the picture. ----

enum class ShapeRole {  // in drawing order: later roles are drawn on top
  kGroup,    // a rank group's frame
  kStripe,   // a lane's background (SVG class "lane")
  kGrid,     // a time gridline
  kHidden,   // communication hidden under device work (shading over a rank group)
  kExposed,  // communication while no device work runs
  kOp,       // one op
  kRun,      // a dense run of too-thin ops merged into one box
  kMarker,   // a zero-duration op (Synchronize, Wait): a tick
  kAxis,     // the time axis line and its ticks
  kSwatch,   // a legend swatch
};

struct PlacedBox {
  ShapeRole role = ShapeRole::kOp;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string fill;  // "#rrggbb" or "#rrggbbaa"
  std::string stroke;  // "" for none
  bool dashed = false;
  std::string label;  // drawn inside when non-empty
  std::string fontColor;
  std::string tooltip;
  std::string id;     // SVG id, unique ("p0_op12", "p0_lane_r0_s3")
  std::string cls;    // SVG class ("op compute")
};

struct PlacedText {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // the text is justified inside this box
  std::string text;
  double fontSize = 9;
  bool bold = false;
  bool italic = false;
  char justify = 'l';  // 'l', 'r' or 'n' (centred)
  std::string color = "#222222";
  std::string tooltip;
};

struct PlacedArrow {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // tail, head
  TimelineEdgeKind kind = TimelineEdgeKind::kSync;
  int32_t from = 0, to = 0;  // op ids
};

struct PlacedLane {
  int64_t rank = 0;                // the rank drawn (a group's representative)
  std::vector<int64_t> ranks;      // the ranks it stands for
  int32_t stream = 0;              // TimelineStream id
  double y0 = 0, y1 = 0;
  std::vector<int32_t> ops;        // op ids drawn on the lane, in start order (merged runs included)
};

struct TimelinePanel {
  std::string label;
  std::vector<PlacedLane> lanes;
  OverlapSummary overlap;
  int64_t denseRuns = 0;       // merged runs
  int64_t denseRunOps = 0;     // ops inside them
  int64_t arrowsDropped = 0;
  std::vector<std::vector<int64_t>> summaryRows;  // ranks drawn as one summary row each
  std::vector<std::string> notes;  // what was aggregated or left out, as printed on the picture
};

struct TimelinePicture {
  double width = 0, height = 0;
  double timeScale = 0;  // points per microsecond
  std::vector<TimelinePanel> panels;
  std::vector<PlacedBox> boxes;  // in drawing order (later on top)
  std::vector<PlacedText> texts;
  std::vector<PlacedArrow> arrows;
};

// Throws Error when there is nothing to draw (no timeline, or no op on the ranks asked for).
TimelinePicture layoutTimelines(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o);

// DOT text for Graphviz's `neato -n` (layout engine "nop"): every node pinned.
std::string timelinePictureToDot(const TimelinePicture& p);
std::string timelinesToDot(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o);

// Draws the timelines into `path`: .svg, .png (Graphviz needed) or .dot.
void renderTimelines(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o, const std::string& path);

}  // namespace braid::viz
