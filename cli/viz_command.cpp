// `braid viz TIMELINE.json [SECOND.json] -o out.svg|out.png|out.dot`: draws one timeline, or two
// on one time scale (predicted vs measured, or two protocols), as described in docs/VIZ.md.
#include <iostream>

#include "cli/command.h"
#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/timeline.h"
#include "viz/rank_groups.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"

namespace braid::cli {
namespace {

struct VizArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string title;
  std::vector<std::string> labels;
  std::vector<int64_t> ranks;
  bool allRanks = false;
  bool noArrows = false;
  double width = 1000;
};

std::string percentStr(double f) {
  return std::to_string(static_cast<int>(100 * f + 0.5)) + "%";
}

int runViz(const VizArgs& a) {
  if (a.inputs.size() > 2) throw Error("braid viz draws one or two timelines, not " + std::to_string(a.inputs.size()));
  viz::pictureFormatOf(a.output);  // a bad extension is reported before reading anything
  std::vector<Timeline> timelines;
  for (const std::string& path : a.inputs) timelines.push_back(readTimelineFile(path));
  viz::TimelineDrawOptions o;
  o.title = a.title;
  o.labels = a.labels;
  o.ranks = a.ranks;
  o.aggregateRanks = !a.allRanks;
  o.arrows = !a.noArrows;
  o.widthPt = a.width;
  viz::TimelinePicture picture = viz::layoutTimelines(timelines, o);
  viz::writePicture(viz::timelinePictureToDot(picture), "nop", a.output);
  std::cout << "wrote " << a.output << "\n";
  for (const viz::TimelinePanel& p : picture.panels) {
    std::cout << "  " << p.label << ": " << p.lanes.size() << " lanes, communication "
              << percentStr(p.overlap.hiddenFraction()) << " hidden under compute\n";
    for (const std::string& note : p.notes) std::cout << "    note: " << note << "\n";
  }
  return 0;
}

BRAID_REGISTER_COMMAND(Command{
    "viz",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<VizArgs>();
      sub.add_option("timelines", a->inputs, "one or two timeline JSON files (docs/TIMELINE.md)")->required()->expected(1, 2);
      sub.add_option("-o,--output", a->output, "picture to write: .svg, .png (need Graphviz) or .dot")->required();
      sub.add_option("--title", a->title, "picture title (default: the program's name)");
      sub.add_option("--label", a->labels, "a panel's name, once per timeline (default: source and meta)");
      sub.add_option("--rank", a->ranks, "draw only these ranks (repeatable)")
          ->check(CLI::Range(int64_t{0}, kMaxRanks - 1));
      sub.add_flag("--all-ranks", a->allRanks, "draw every rank, also ranks identical to another");
      sub.add_flag("--no-arrows", a->noArrows, "leave out the Synchronize / Wait / post arrows");
      sub.add_option("--width", a->width, "length of the time axis in points (100 to 20000)")->capture_default_str();
      return [a] { return runViz(*a); };
    },
    "draw timelines (predicted or measured) as SVG / PNG pictures of overlap"});

}  // namespace
}  // namespace braid::cli
