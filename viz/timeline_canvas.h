// The timeline layout's drawing surface (internal to viz/): the picture being built and a
// cursor that moves down the page, with helpers that place texts and boxes.
#pragma once

#include <string>
#include <vector>

#include "viz/text_metrics.h"
#include "viz/timeline_draw.h"

namespace braid::viz {

class Canvas {
 public:
  TimelinePicture picture;
  double cursorY = 0;  // top of the next row, in points from the top

  // A text justified in [x0, x1] on the row at the cursor, shortened with "…" (and the full
  // text as its tooltip) when it does not fit.
  PlacedText& text(double x0, double x1, double fontSize, const std::string& s, char justify = 'l') {
    PlacedText t;
    t.x0 = x0;
    t.x1 = x1;
    t.y0 = cursorY;
    t.y1 = cursorY + fontSize * 1.3;
    t.fontSize = fontSize;
    t.text = fitText(s, x1 - x0, fontSize);
    t.justify = justify;
    if (t.text != s) t.tooltip = s;
    picture.texts.push_back(std::move(t));
    return picture.texts.back();
  }

  PlacedBox& box(ShapeRole role, double x0, double y0, double x1, double y1, const std::string& fill) {
    PlacedBox b;
    b.role = role;
    b.x0 = x0;
    b.y0 = y0;
    b.x1 = x1;
    b.y1 = y1;
    b.fill = fill;
    picture.boxes.push_back(std::move(b));
    return picture.boxes.back();
  }
};

// The legend, at the cursor, for what the picture holds: op kinds, dense runs, the overlap
// colours, arrow kinds (timeline_legend.cpp).
void drawLegend(Canvas& c, const std::vector<Timeline>& timelines, double margin);

}  // namespace braid::viz
