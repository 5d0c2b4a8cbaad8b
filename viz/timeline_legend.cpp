// The legend of a timeline picture: one row (wrapped when long) of swatches and names, only for
// what the picture shows.
#include <set>

#include "viz/timeline_canvas.h"
#include "viz/timeline_style.h"

namespace braid::viz {

void drawLegend(Canvas& c, const std::vector<Timeline>& timelines, double margin) {
  TimelinePicture& pic = c.picture;
  std::set<TimelineOpKind> kinds;
  for (const Timeline& t : timelines)
    for (const TimelineOp& op : t.ops) kinds.insert(op.kind);
  bool runs = false;
  for (const PlacedBox& b : pic.boxes) runs |= b.role == ShapeRole::kRun;
  std::set<TimelineEdgeKind> arrowKinds;
  for (const PlacedArrow& a : pic.arrows) arrowKinds.insert(a.kind);
  bool comm = false;
  for (const TimelinePanel& p : pic.panels) comm |= p.overlap.communicationUs > 0;

  constexpr double kFont = 8.5;
  double x = margin;
  auto advance = [&](double w) {
    x += w;
    if (x > pic.width - margin - 150) {
      x = margin;
      c.cursorY += 16;
    }
  };
  auto name = [&](double at, const std::string& s) {
    double w = textWidth(s, kFont) + 6;
    PlacedText& t = c.text(at, at + w, kFont, s);
    t.y1 = c.cursorY + 15;
    return w;
  };
  auto swatch = [&](const std::string& fill, const std::string& label, bool dashed = false) {
    PlacedBox& s = c.box(ShapeRole::kSwatch, x, c.cursorY + 3, x + 16, c.cursorY + 12, fill);
    s.stroke = "#00000066";
    s.dashed = dashed;
    advance(20 + name(x + 20, label) + 12);
  };

  PlacedText& head = c.text(x, x + 50, kFont, "legend:");
  head.bold = true;
  head.y1 = c.cursorY + 15;
  advance(50);
  for (TimelineOpKind k : kinds) {
    if (isMarkerKind(k)) {
      c.box(ShapeRole::kSwatch, x + 7, c.cursorY + 1, x + 8.6, c.cursorY + 14, opKindColor(k));
      advance(14 + name(x + 14, k == TimelineOpKind::kSync ? "Synchronize" : "Wait") + 12);
    } else {
      swatch(opKindColor(k), timelineOpKindName(k));
    }
  }
  if (runs) swatch(std::string(opKindColor(TimelineOpKind::kCompute)) + "99", "dense run (merged ops)", true);
  if (comm) {
    swatch(kHiddenFill, "communication hidden under compute");
    swatch(kExposedFill, "communication exposed");
  }
  for (TimelineEdgeKind k : arrowKinds) {
    PlacedArrow a;
    a.x0 = x;
    a.x1 = x + 22;
    a.y0 = a.y1 = c.cursorY + 7.5;
    a.kind = k;
    a.from = a.to = -1;  // a sample, not an ordering of the timeline
    pic.arrows.push_back(a);
    advance(26 + name(x + 26, arrowLegendName(k)) + 12);
  }
  c.cursorY += 18;
}

}  // namespace braid::viz
