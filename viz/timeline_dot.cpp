// Writes a laid-out timeline picture as DOT for Graphviz's `neato -n` (engine "nop"): each box
// and text is a fixed-size node at its pinned position, each arrow an edge between two invisible
// points. Nodes are drawn in the order they are written (outputorder=nodesfirst), so the
// layout's drawing order holds; edges come last, on top.
#include <cstdio>
#include <sstream>

#include "viz/dot_text.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"
#include "viz/timeline_style.h"

namespace braid::viz {

namespace {


std::string inches(double pt) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", pt / 72.0);
  return buf;
}

// Graphviz's y axis points up; the layout's points down.
std::string pos(double x, double y, double height) {
  return "\"" + dotNumber(x) + "," + dotNumber(height - y) + "\"";
}

}  // namespace

std::string timelinePictureToDot(const TimelinePicture& p) {
  std::ostringstream os;
  os << "digraph timeline {\n"
     << "  graph [outputorder=nodesfirst, splines=line, bgcolor=\"white\", pad=\"0.1\", fontname=\"" << kDotFont
     << "\"];\n"
     << "  node [shape=box, style=filled, fixedsize=true, label=\"\", margin=0, penwidth=0.6, fontname=\"" << kDotFont
     << "\", fontsize=8];\n"
     << "  edge [arrowsize=0.45, penwidth=0.75];\n";
  // The page: an invisible node as large as the picture, so that the rendered size is the
  // layout's, margins included.
  os << "  page [style=invis, pos=" << pos(p.width / 2, p.height / 2, p.height) << ", width=" << inches(p.width)
     << ", height=" << inches(p.height) << "];\n";
  int n = 0;
  for (const PlacedBox& b : p.boxes) {
    DotAttrs a;
    a.raw("pos", pos((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2, p.height))
        .raw("width", inches(b.x1 - b.x0))
        .raw("height", inches(b.y1 - b.y0))
        .set("fillcolor", b.fill)
        .set("color", b.stroke.empty() ? "transparent" : b.stroke);
    if (b.dashed) a.set("style", "filled,dashed");
    if (!b.label.empty()) {
      a.set("label", b.label);
      if (!b.fontColor.empty()) a.set("fontcolor", b.fontColor);
    }
    if (!b.tooltip.empty()) a.set("tooltip", b.tooltip);
    if (!b.id.empty()) a.set("id", b.id);
    if (!b.cls.empty()) a.set("class", b.cls);
    os << "  b" << n++ << " " << a.str() << ";\n";
  }
  n = 0;
  for (const PlacedText& t : p.texts) {
    if (t.text.empty()) continue;
    DotAttrs a;
    a.set("shape", "plaintext")
        .set("style", "")
        .raw("pos", pos((t.x0 + t.x1) / 2, (t.y0 + t.y1) / 2, p.height))
        .raw("width", inches(t.x1 - t.x0))
        .raw("height", inches(t.y1 - t.y0))
        .raw("label", dotLines({t.text}, t.justify))
        .set("fontsize", t.fontSize)
        .set("fontcolor", t.color);
    if (t.bold || t.italic)
      a.set("fontname", std::string(kDotFont) + (t.bold && t.italic ? "-BoldOblique" : t.bold ? "-Bold" : "-Oblique"));
    if (!t.tooltip.empty()) a.set("tooltip", t.tooltip);
    os << "  t" << n++ << " " << a.str() << ";\n";
  }
  n = 0;
  for (const PlacedArrow& r : p.arrows) {
    os << "  a" << n << "t [shape=point, style=invis, width=0.01, height=0.01, pos=" << pos(r.x0, r.y0, p.height)
       << "];\n";
    os << "  a" << n << "h [shape=point, style=invis, width=0.01, height=0.01, pos=" << pos(r.x1, r.y1, p.height)
       << "];\n";
    DotAttrs a;
    a.set("color", arrowColor(r.kind)).set("class", std::string("arrow ") + timelineEdgeKindName(r.kind));
    if (r.kind == TimelineEdgeKind::kPost) a.set("style", "dashed");
    os << "  a" << n << "t -> a" << n << "h " << a.str() << ";\n";
    ++n;
  }
  os << "}\n";
  return os.str();
}

std::string timelinesToDot(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o) {
  return timelinePictureToDot(layoutTimelines(timelines, o));
}

void renderTimelines(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o, const std::string& path) {
  pictureFormatOf(path);  // a bad extension is reported before any work
  writePicture(timelinesToDot(timelines, o), "nop", path);
}

}  // namespace braid::viz
