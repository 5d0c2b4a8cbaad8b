// The timeline picture's layout: every box, text and arrow placed in points. Drawing order, sizes
// and the readability rules (identical ranks drawn once, too-thin ops widened or merged, arrows
// capped) live here; timeline_dot.cpp only writes the result as DOT.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ir/error.h"
#include "viz/rank_groups.h"
#include "viz/text_metrics.h"
#include "viz/timeline_canvas.h"
#include "viz/timeline_draw.h"
#include "viz/timeline_style.h"

namespace braid::viz {

namespace {

constexpr double kMargin = 14;
constexpr double kRankLabelW = 66;
constexpr double kLaneLabelW = 128;
constexpr double kRightMargin = 28;
constexpr double kGroupGap = 7;
constexpr double kOverlapStripH = 7;  // the "hidden / exposed" strip at the top of a rank group
constexpr double kBoxFont = 8;
constexpr double kLaneFont = 8.5;
constexpr double kMinGapPt = 1;  // ops closer than this are "touching" for dense-run merging

int laneOrder(TimelineStreamKind k) {
  switch (k) {
    case TimelineStreamKind::kDefault:
      return 0;
    case TimelineStreamKind::kWorker:
      return 1;
    case TimelineStreamKind::kCommunicator:
      return 2;
  }
  return 3;
}

std::string defaultLabel(const Timeline& t) {
  std::string s = t.source;
  if (!t.machine.empty()) s += " on " + t.machine;
  for (const auto& [k, v] : t.meta) s += ", " + k + "=" + v;
  return s;
}

std::string opTooltip(const Timeline& t, const TimelineOp& op, const std::vector<int64_t>& ranks) {
  std::string s = op.name;
  if (op.line > 0) s += " (line " + std::to_string(op.line) + ")";
  if (!op.iteration.empty()) s += " [" + op.iteration + "]";
  s += "\n" + std::string(ranks.size() > 1 ? "ranks " + rankListStr(ranks) : "rank " + std::to_string(op.rank)) +
       ", " + t.streams[static_cast<size_t>(op.stream)].name;
  s += "\n" + durationStr(op.startUs) + " to " + durationStr(op.endUs) + " (" + durationStr(op.durationUs()) + ")";
  if (op.bytes > 0) s += "\n" + bytesStr(op.bytes);
  if (op.flops > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g GFLOP", op.flops / 1e9);
    s += std::string(op.bytes > 0 ? ", " : "\n") + buf;
  }
  return s;
}

class Builder : private Canvas {
 public:
  Builder(const std::vector<Timeline>& ts, const TimelineDrawOptions& o) : ts_(ts), o_(o) {
    for (const Timeline& t : ts) maxUs_ = std::max(maxUs_, t.makespanUs());
    if (maxUs_ <= 0) maxUs_ = 1;
    plotX0_ = kMargin + kRankLabelW + kLaneLabelW;
    plotX1_ = plotX0_ + o.widthPt;
    picture.width = plotX1_ + kRightMargin;
    picture.timeScale = o.widthPt / maxUs_;
    axis_ = chooseTimeAxis(maxUs_, o.widthPt);
  }

  TimelinePicture build() {
    cursorY = kMargin;
    header();
    for (size_t i = 0; i < ts_.size(); ++i) panel(i);
    drawLegend(*this, ts_, kMargin);
    picture.height = cursorY + kMargin;
    std::stable_sort(picture.boxes.begin(), picture.boxes.end(),
                     [](const PlacedBox& a, const PlacedBox& b) { return a.role < b.role; });
    return std::move(picture);
  }

 private:
  double X(double us) const { return plotX0_ + us * picture.timeScale; }

  std::string label(size_t i) const {
    return i < o_.labels.size() && !o_.labels[i].empty() ? o_.labels[i] : defaultLabel(ts_[i]);
  }

  void header() {
    std::string title = o_.title;
    if (title.empty()) {
      std::set<std::string> programs;
      for (const Timeline& t : ts_) programs.insert(t.program.empty() ? "(unnamed program)" : t.program);
      for (const auto& p : programs) title += (title.empty() ? "" : " vs ") + p;
      title = "Timeline of " + title;
    }
    text(kMargin, picture.width - kMargin, 14, title).bold = true;
    cursorY += 20;
    for (size_t i = 1; i < ts_.size(); ++i) {
      double a = ts_[0].makespanUs(), b = ts_[i].makespanUs();
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f", a > 0 ? b / a : 0.0);
      text(kMargin, picture.width - kMargin, 10.5,
           "[" + std::to_string(i + 1) + "] takes " + ratio + "x as long as [1] (" + durationStr(b) + " vs " +
               durationStr(a) + ")");
      cursorY += 15;
    }
    cursorY += 6;
  }

  // The rank groups of timeline t that are drawn, each restricted to the ranks asked for.
  std::vector<RankGroup> drawnGroups(const Timeline& t, TimelinePanel& panel) const {
    std::vector<RankGroup> all = groupIdenticalRanks(t, o_.aggregateRanks ? o_.rankTolerance * maxUs_ : -1.0);
    std::set<int64_t> wanted(o_.ranks.begin(), o_.ranks.end());
    std::vector<RankGroup> out;
    std::vector<int64_t> shown, merged;
    int64_t present = 0;
    for (RankGroup& g : all) {
      present += static_cast<int64_t>(g.ranks.size());
      RankGroup kept;
      for (int64_t r : g.ranks)
        if (wanted.empty() || wanted.count(r)) kept.ranks.push_back(r);
      if (kept.ranks.empty()) continue;
      shown.insert(shown.end(), kept.ranks.begin(), kept.ranks.end());
      if (kept.ranks.size() > 1) merged.push_back(kept.representative());
      out.push_back(std::move(kept));
    }
    std::sort(shown.begin(), shown.end());
    if (!wanted.empty())
      panel.notes.push_back("showing ranks " + rankListStr(shown) + " of the " + std::to_string(present) +
                            " ranks with ops");
    if (!merged.empty()) {
      std::string groups;
      for (const RankGroup& g : out)
        if (g.ranks.size() > 1) groups += (groups.empty() ? "" : "; ") + rankListStr(g.ranks);
      panel.notes.push_back("identical ranks are drawn once (every start and end within " +
                            durationStr(o_.rankTolerance * maxUs_) + "): ranks " + groups);
    }
    return out;
  }

  void panel(size_t index) {
    const Timeline& t = ts_[index];
    notLastInRun_.clear();
    notFirstInRun_.clear();
    TimelinePanel panel;
    panel.label = ts_.size() > 1 ? "[" + std::to_string(index + 1) + "] " + label(index) : label(index);
    panel.overlap = overlapOf(t);
    const std::string pid = "p" + std::to_string(index);

    // Header: label, then the numbers that matter.
    text(kMargin, picture.width - kMargin, 11.5, panel.label).bold = true;
    cursorY += 16;
    size_t nranks = std::max<size_t>(1, panel.overlap.ranks.size());
    std::string summary = "makespan " + durationStr(t.makespanUs());
    if (panel.overlap.communicationUs > 0) {
      summary += "  |  communication " + durationStr(panel.overlap.communicationUs / static_cast<double>(nranks)) +
                 " per rank: " + percentStr(panel.overlap.hiddenFraction()) + " hidden under compute, " +
                 durationStr(panel.overlap.exposedUs / static_cast<double>(nranks)) + " exposed";
    } else {
      summary += "  |  no communication";
    }
    summary += "  |  " + std::to_string(panel.overlap.ranks.size()) + " rank" + (nranks == 1 ? "" : "s") + ", " +
               std::to_string(t.ops.size()) + " ops";
    text(kMargin, picture.width - kMargin, 9.5, summary).color = "#444444";
    cursorY += 17;

    // Room for the end-of-timeline mark's label.
    double endLabelY = cursorY;
    cursorY += 12;
    std::vector<RankGroup> groups = drawnGroups(t, panel);
    // Lanes of each group's representative, default stream first, then workers, then communicators.
    std::map<std::pair<int64_t, int32_t>, std::vector<const TimelineOp*>> byLane;
    for (const TimelineOp& op : t.ops) byLane[{op.rank, op.stream}].push_back(&op);
    int64_t emptyStreams = 0;
    double panelTop = cursorY;
    std::map<std::pair<int64_t, int32_t>, size_t> laneOf;
    std::vector<bool> detailed = chooseDetailed(t, groups, panel);
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      if (detailed[gi]) {
        detailedGroup(t, groups[gi], byLane, panel, laneOf, &emptyStreams, pid);
      } else {
        summaryRow(t, groups[gi], panel, pid);
      }
      cursorY += kGroupGap;
    }
    double panelBottom = cursorY - kGroupGap;
    if (emptyStreams > 0)
      panel.notes.push_back(std::to_string(emptyStreams) + " stream" + (emptyStreams == 1 ? "" : "s") +
                            " without ops not drawn");
    if (o_.arrows) arrows(t, panel, laneOf);
    grid(panelTop, panelBottom);
    endMark(t.makespanUs(), endLabelY, panelTop, panelBottom);
    axisAt(panelBottom + 3);
    if (panel.denseRuns > 0)
      panel.notes.push_back(std::to_string(panel.denseRuns) + " dense run" + (panel.denseRuns == 1 ? "" : "s") +
                            " of ops too thin to draw one by one (" + std::to_string(panel.denseRunOps) +
                            " ops) drawn as one dashed box each; the SVG's tooltips list them");
    for (const std::string& note : panel.notes) {
      PlacedText& n = text(kMargin, picture.width - kMargin, 8.5, "note: " + note);
      n.italic = true;
      n.color = "#555555";
      cursorY += 12;
    }
    cursorY += 12;
    picture.panels.push_back(std::move(panel));
  }

  // Which rank groups are drawn lane by lane; the others get one summary row each. The first
  // groups in rank order, and always the group that ends last (it sets the makespan).
  std::vector<bool> chooseDetailed(const Timeline& t, const std::vector<RankGroup>& groups, TimelinePanel& panel) const {
    size_t limit = o_.detailedGroups <= 0 ? groups.size() : static_cast<size_t>(o_.detailedGroups);
    std::vector<bool> detailed(groups.size(), false);
    if (groups.size() <= limit) {
      detailed.assign(groups.size(), true);
      return detailed;
    }
    std::map<int64_t, double> endOf;
    for (const TimelineOp& op : t.ops) endOf[op.rank] = std::max(endOf[op.rank], op.endUs);
    size_t last = 0;
    for (size_t i = 0; i < groups.size(); ++i)
      if (endOf[groups[i].representative()] > endOf[groups[last].representative()]) last = i;
    for (size_t i = 0; i < groups.size() && i < limit; ++i) detailed[i] = true;
    if (!detailed[last]) {
      detailed[limit - 1] = false;
      detailed[last] = true;
    }
    std::vector<int64_t> summarized;
    for (size_t i = 0; i < groups.size(); ++i)
      if (!detailed[i]) summarized.insert(summarized.end(), groups[i].ranks.begin(), groups[i].ranks.end());
    std::sort(summarized.begin(), summarized.end());
    bool one = summarized.size() == 1;
    panel.notes.push_back(std::string(one ? "rank " : "ranks ") + rankListStr(summarized) +
                          (one ? " is drawn as a summary row" : " are drawn as one summary row each") + " (more than " +
                          std::to_string(limit) + " different ranks; choose ranks to draw in full with --rank)");
    return detailed;
  }

  void rankLabel(const RankGroup& g, double top) {
    PlacedText& rl = text(kMargin + 4, kMargin + kRankLabelW, 10,
                          g.ranks.size() > 1 ? "ranks " + rankListStr(g.ranks) : "rank " + std::to_string(g.representative()));
    rl.bold = true;
    rl.y0 = top + 1;
    rl.y1 = top + 15;
    const double below = rl.y1;  // read before text() appends: that may move the texts (and rl)
    if (g.ranks.size() > 1) {
      PlacedText& same = text(kMargin + 4, kMargin + kRankLabelW, 8, "(identical)");
      same.y0 = below;
      same.y1 = below + 11;
      same.color = "#666666";
    }
  }

  PlacedBox& frame(const std::string& pid, int64_t rank, double top, double bottom) {
    PlacedBox& f = box(ShapeRole::kGroup, kMargin, top - 2, plotX1_ + 2, bottom + 2, "#ffffff");
    f.stroke = "#b8bcc4";
    f.id = pid + "_group_r" + std::to_string(rank);
    f.cls = "rankgroup";
    return f;
  }

  // A rank group lane by lane: the overlap strip, then default, worker and communicator streams.
  void detailedGroup(const Timeline& t, const RankGroup& g,
                     const std::map<std::pair<int64_t, int32_t>, std::vector<const TimelineOp*>>& byLane,
                     TimelinePanel& panel, std::map<std::pair<int64_t, int32_t>, size_t>& laneOf,
                     int64_t* emptyStreams, const std::string& pid) {
    int64_t rep = g.representative();
    std::vector<const TimelineStream*> streams;
    for (const TimelineStream& s : t.streams) {
      if (s.rank != rep) continue;
      if (byLane.count({rep, s.id})) {
        streams.push_back(&s);
      } else {
        ++*emptyStreams;
      }
    }
    std::stable_sort(streams.begin(), streams.end(), [](const TimelineStream* a, const TimelineStream* b) {
      return laneOrder(a->kind) < laneOrder(b->kind);
    });
    double groupTop = cursorY;
    RankOverlap ov = rankOverlap(t, rep);
    overlapStrip(ov);
    for (const TimelineStream* s : streams) {
      PlacedLane lane;
      lane.rank = rep;
      lane.ranks = g.ranks;
      lane.stream = s->id;
      lane.y0 = cursorY;
      lane.y1 = cursorY + o_.laneHeightPt;
      laneOf[{rep, s->id}] = panel.lanes.size();
      PlacedBox& stripe = box(ShapeRole::kStripe, plotX0_ - kLaneLabelW + 4, lane.y0, plotX1_, lane.y1,
                              panel.lanes.size() % 2 ? "#eef0f3" : "#f8f9fa");
      stripe.id = pid + "_lane_r" + std::to_string(rep) + "_s" + std::to_string(s->id);
      stripe.cls = "lane";
      stripe.tooltip = s->name + " (" + timelineStreamKindName(s->kind) + " stream)";
      PlacedText& name = text(plotX0_ - kLaneLabelW + 6, plotX0_ - 6, kLaneFont, s->name, 'r');
      name.y0 = lane.y0;
      name.y1 = lane.y1;
      if (s->kind == TimelineStreamKind::kCommunicator) name.italic = true;
      cursorY = lane.y1;
      laneOps(t, byLane.at({rep, s->id}), lane, panel, pid, g.ranks);
      panel.lanes.push_back(std::move(lane));
    }
    frame(pid, rep, groupTop, cursorY);
    shade(ov, groupTop + kOverlapStripH, cursorY);
    rankLabel(g, groupTop);
  }

  // A rank group in one row: when its device work runs (blue), and when its communication runs,
  // green where hidden under that work and red where exposed.
  void summaryRow(const Timeline& t, const RankGroup& g, TimelinePanel& panel, const std::string& pid) {
    int64_t rep = g.representative();
    RankOverlap ov = rankOverlap(t, rep);
    double top = cursorY;
    double rowH = std::max(26.0, o_.laneHeightPt + 10);
    frame(pid, rep, top, top + rowH).cls = "rankgroup summary";
    double mid = top + rowH / 2;
    for (const Span& s : ov.work) {
      PlacedBox& b = box(ShapeRole::kOp, X(s.begin), top + 3, std::max(X(s.end), X(s.begin) + 0.8), mid - 1,
                         opKindColor(TimelineOpKind::kCompute));
      b.cls = "summary work";
    }
    for (const Span& s : ov.hidden)
      box(ShapeRole::kOp, X(s.begin), mid + 1, std::max(X(s.end), X(s.begin) + 0.8), top + rowH - 3, kHiddenFill).cls =
          "summary hidden";
    for (const Span& s : ov.exposed)
      box(ShapeRole::kOp, X(s.begin), mid + 1, std::max(X(s.end), X(s.begin) + 0.8), top + rowH - 3, kExposedFill)
          .cls = "summary exposed";
    PlacedText& a = text(plotX0_ - kLaneLabelW + 6, plotX0_ - 6, 7.5, "device work", 'r');
    a.y0 = top + 2;
    a.y1 = mid;
    a.italic = true;
    PlacedText& b = text(plotX0_ - kLaneLabelW + 6, plotX0_ - 6, 7.5, "comm. hidden / exposed", 'r');
    b.y0 = mid;
    b.y1 = top + rowH - 2;
    b.italic = true;
    rankLabel(g, top);
    panel.summaryRows.push_back(g.ranks);
    cursorY = top + rowH;
  }

  // A thin strip at the top of a rank group: green where communication hides under work, red
  // where it is exposed.
  void overlapStrip(const RankOverlap& ov) {
    double y0 = cursorY + 1.5, y1 = cursorY + kOverlapStripH - 1;
    for (const Span& s : ov.hidden) {
      PlacedBox& b = box(ShapeRole::kHidden, X(s.begin), y0, std::max(X(s.end), X(s.begin) + 0.8), y1, kHiddenFill);
      b.tooltip = "communication hidden under device work: " + durationStr(s.begin) + " to " + durationStr(s.end);
      b.cls = "hidden";
    }
    for (const Span& s : ov.exposed) {
      PlacedBox& b = box(ShapeRole::kExposed, X(s.begin), y0, std::max(X(s.end), X(s.begin) + 0.8), y1, kExposedFill);
      b.tooltip = "communication exposed (no device work runs): " + durationStr(s.begin) + " to " + durationStr(s.end);
      b.cls = "exposed";
    }
    if (!ov.communication.empty()) {
      PlacedText& t = text(plotX0_ - kLaneLabelW + 6, plotX0_ - 6, 7, "comm. hidden / exposed", 'r');
      t.y0 = cursorY;
      t.y1 = cursorY + kOverlapStripH;
      t.color = "#666666";
      t.italic = true;
    }
    cursorY += kOverlapStripH;
  }

  void shade(const RankOverlap& ov, double y0, double y1) {
    for (const Span& s : ov.hidden) box(ShapeRole::kHidden, X(s.begin), y0, X(s.end), y1, kHiddenShade);
    for (const Span& s : ov.exposed) box(ShapeRole::kExposed, X(s.begin), y0, X(s.end), y1, kExposedShade);
  }

  void laneOps(const Timeline& t, std::vector<const TimelineOp*> ops, PlacedLane& lane, TimelinePanel& panel,
               const std::string& pid, const std::vector<int64_t>& ranks) {
    std::stable_sort(ops.begin(), ops.end(),
                     [](const TimelineOp* a, const TimelineOp* b) { return a->startUs < b->startUs; });
    double y0 = lane.y0 + 2, y1 = lane.y1 - 2;
    auto width = [&](size_t k) { return X(ops[k]->endUs) - X(ops[k]->startUs); };
    for (size_t i = 0; i < ops.size();) {
      size_t j = i;
      if (width(i) < o_.minBoxPt)
        while (j + 1 < ops.size() && width(j + 1) < o_.minBoxPt &&
               X(ops[j + 1]->startUs) - X(ops[j]->endUs) < kMinGapPt)
          ++j;
      if (j - i + 1 >= static_cast<size_t>(std::max(2, o_.minDenseRun))) {
        denseRun(t, ops, i, j, y0, y1, lane, panel, pid);
        i = j + 1;
        continue;
      }
      const TimelineOp& op = *ops[i];
      lane.ops.push_back(op.id);
      double x0 = X(op.startUs), x1 = X(op.endUs);
      PlacedBox* b = nullptr;
      if (isMarkerKind(op.kind) && x1 - x0 < o_.minBoxPt) {
        b = &box(ShapeRole::kMarker, x0 - 0.8, y0 - 1, x0 + 0.8, y1 + 1, opKindColor(op.kind));
      } else {
        b = &box(ShapeRole::kOp, x0, y0, std::max(x1, x0 + o_.minBoxPt), y1, opKindColor(op.kind));
        b->stroke = "#00000055";
        std::vector<std::string> candidates;
        if (!op.iteration.empty()) candidates.push_back(op.name + " " + op.iteration);
        candidates.push_back(op.name);
        for (const std::string& c : candidates)
          if (textWidth(c, kBoxFont) <= b->x1 - b->x0 - 4) {
            b->label = c;
            break;
          }
        b->fontColor = opKindFontColor(op.kind);
      }
      b->id = pid + "_op" + std::to_string(op.id);
      b->cls = std::string("op ") + timelineOpKindName(op.kind);
      b->tooltip = opTooltip(t, op, ranks);
      ++i;
    }
  }

  void denseRun(const Timeline& t, const std::vector<const TimelineOp*>& ops, size_t i, size_t j, double y0, double y1,
                PlacedLane& lane, TimelinePanel& panel, const std::string& pid) {
    std::map<TimelineOpKind, std::pair<double, int>> byKind;  // total duration, count
    std::map<std::string, int> names;
    for (size_t k = i; k <= j; ++k) {
      if (k != j) notLastInRun_.insert(ops[k]->id);
      if (k != i) notFirstInRun_.insert(ops[k]->id);
      auto& e = byKind[ops[k]->kind];
      e.first += ops[k]->durationUs();
      e.second += 1;
      names[ops[k]->name] += 1;
      lane.ops.push_back(ops[k]->id);
    }
    TimelineOpKind dominant = byKind.begin()->first;
    for (const auto& [k, e] : byKind)
      if (e > byKind[dominant]) dominant = k;
    double x0 = X(ops[i]->startUs);
    double x1 = std::max(X(ops[j]->endUs), x0 + o_.minBoxPt);
    // A run of only Synchronize / Wait ticks is light: it stands for no work.
    std::string fill = isMarkerKind(dominant) ? "#c9c9c9" : std::string(opKindColor(dominant)) + "99";
    PlacedBox& b = box(ShapeRole::kRun, x0, y0, x1, y1, fill);
    b.stroke = "#333333";
    b.dashed = true;
    size_t n = j - i + 1;
    std::string count = std::to_string(n) + " ops";
    if (textWidth(count, kBoxFont) <= x1 - x0 - 4) {
      b.label = count;
      b.fontColor = "#111111";
    }
    std::string contents;
    for (const auto& [name, c] : names) contents += (contents.empty() ? "" : ", ") + std::to_string(c) + "x " + name;
    b.tooltip = std::to_string(n) + " ops too thin to draw one by one, " + durationStr(ops[i]->startUs) + " to " +
                durationStr(ops[j]->endUs) + ": " + contents + "\n" + t.streams[static_cast<size_t>(ops[i]->stream)].name;
    b.id = pid + "_run" + std::to_string(panel.denseRuns);
    b.cls = "run";
    panel.denseRuns += 1;
    panel.denseRunOps += static_cast<int64_t>(n);
  }

  void arrows(const Timeline& t, TimelinePanel& panel, const std::map<std::pair<int64_t, int32_t>, size_t>& laneOf) {
    std::vector<PlacedArrow> found;
    for (const TimelineEdge& e : t.edges) {
      if (e.kind == TimelineEdgeKind::kRendezvous) continue;
      const TimelineOp& a = t.ops[static_cast<size_t>(e.from)];
      const TimelineOp& b = t.ops[static_cast<size_t>(e.to)];
      auto la = laneOf.find({a.rank, a.stream});
      auto lb = laneOf.find({b.rank, b.stream});
      if (la == laneOf.end() || lb == laneOf.end() || la->second == lb->second) continue;
      const PlacedLane& A = panel.lanes[la->second];
      const PlacedLane& B = panel.lanes[lb->second];
      PlacedArrow arrow;
      arrow.x0 = X(a.endUs);
      arrow.y0 = (A.y0 + A.y1) / 2;
      arrow.x1 = X(b.startUs);
      arrow.y1 = (B.y0 + B.y1) / 2;
      arrow.kind = e.kind;
      arrow.from = e.from;
      arrow.to = e.to;
      found.push_back(arrow);
    }
    size_t before = found.size();
    auto dropIf = [&](auto pred) { found.erase(std::remove_if(found.begin(), found.end(), pred), found.end()); };
    // An arrow from inside a dense run, or into it, points at nothing one can see; one from the
    // run's last op leaves from its right edge, one to its first op arrives at its left edge.
    dropIf([&](const PlacedArrow& a) { return notLastInRun_.count(a.from) || notFirstInRun_.count(a.to); });
    size_t intoRuns = before - found.size();
    const size_t cap = static_cast<size_t>(std::max(0, o_.maxArrows));
    if (found.size() > cap) dropIf([](const PlacedArrow& a) { return a.kind == TimelineEdgeKind::kPost; });
    // Still too many: the arrows of the first rank groups only (whole groups), so that what is
    // drawn is complete where it is drawn.
    std::string groupsKept;
    if (found.size() > cap) {
      std::map<int64_t, size_t> perRank;
      for (const PlacedArrow& a : found) ++perRank[t.ops[static_cast<size_t>(a.to)].rank];
      std::vector<int64_t> keep;
      size_t total = 0;
      for (const PlacedLane& lane : panel.lanes) {
        if (!keep.empty() && keep.back() == lane.rank) continue;
        if (total + perRank[lane.rank] > cap) break;
        total += perRank[lane.rank];
        keep.push_back(lane.rank);
      }
      dropIf([&](const PlacedArrow& a) {
        return std::find(keep.begin(), keep.end(), t.ops[static_cast<size_t>(a.to)].rank) == keep.end();
      });
      std::vector<int64_t> shown;
      for (const PlacedLane& lane : panel.lanes)
        if (std::find(keep.begin(), keep.end(), lane.rank) != keep.end() &&
            (shown.empty() || shown.back() != lane.ranks.back()))
          shown.insert(shown.end(), lane.ranks.begin(), lane.ranks.end());
      std::sort(shown.begin(), shown.end());
      shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
      groupsKept = shown.empty() ? "none" : "ranks " + rankListStr(shown) + " only";
    }
    panel.arrowsDropped = static_cast<int64_t>(before - found.size());
    if (panel.arrowsDropped > 0) {
      std::string why;
      if (intoRuns > 0) why = std::to_string(intoRuns) + " lead into dense runs";
      if (before - intoRuns > found.size())
        why += std::string(why.empty() ? "" : "; ") + "at most " + std::to_string(cap) +
               " are drawn, post arrows dropped first" + (groupsKept.empty() ? "" : ", then drawn for " + groupsKept);
      panel.notes.push_back(std::to_string(panel.arrowsDropped) + " of " + std::to_string(before) +
                            " ordering arrows not drawn (" + why + ")");
    }
    picture.arrows.insert(picture.arrows.end(), found.begin(), found.end());
  }

  std::vector<double> ticks() const {
    std::vector<double> v;
    for (int k = 0;; ++k) {
      double value = k * axis_.step;
      if (value * axis_.div > maxUs_ * 1.0001) break;
      v.push_back(value);
    }
    return v;
  }

  void grid(double top, double bottom) {
    for (double v : ticks()) {
      double x = X(v * axis_.div);
      box(ShapeRole::kGrid, x - 0.3, top, x + 0.3, bottom, "#d5d8dd");
    }
  }

  // Where the timeline ends: a dark line across the panel, labelled, so that panels compare at a
  // glance.
  void endMark(double us, double labelY, double top, double bottom) {
    double x = X(us);
    PlacedBox& line = box(ShapeRole::kGrid, x - 0.7, top - 3, x + 0.7, bottom + 3, "#333333");
    line.cls = "end";
    line.tooltip = "the timeline ends at " + durationStr(us);
    PlacedText& t = text(x - 160, x + 3, 8.5, "end " + durationStr(us), 'r');
    t.y0 = labelY;
    t.y1 = labelY + 11;
    t.bold = true;
    t.color = "#333333";
  }

  void axisAt(double y) {
    cursorY = y;
    box(ShapeRole::kAxis, plotX0_, y, plotX1_, y + 0.8, "#555555");
    for (double v : ticks()) {
      double x = X(v * axis_.div);
      box(ShapeRole::kAxis, x - 0.4, y, x + 0.4, y + 4, "#555555");
      std::string label = tickLabel(v, axis_.step);
      double half = textWidth(label, 8) / 2 + 2;
      PlacedText& t = text(x - half, x + half, 8, label, 'n');
      t.y0 = y + 4;
      t.y1 = y + 15;
    }
    PlacedText& unit = text(plotX0_ - kLaneLabelW, plotX0_ - 10, 8.5, std::string("time (") + axis_.unit + ")", 'r');
    unit.y0 = y + 4;
    unit.y1 = y + 15;
    unit.color = "#444444";
    cursorY = y + 20;
  }

  const std::vector<Timeline>& ts_;
  const TimelineDrawOptions& o_;
  double maxUs_ = 0;
  double plotX0_ = 0, plotX1_ = 0;
  TimeAxis axis_;
  // Ops of the current panel inside a dense run, except its last / first one.
  std::set<int32_t> notLastInRun_, notFirstInRun_;
};

}  // namespace

TimelinePicture layoutTimelines(const std::vector<Timeline>& timelines, const TimelineDrawOptions& o) {
  if (timelines.empty()) throw Error("no timeline to draw");
  if (o.widthPt < 100 || o.widthPt > 20000) throw Error("the time axis must be 100 to 20000 points wide");
  if (o.laneHeightPt < 6 || o.laneHeightPt > 100) throw Error("the lane height must be 6 to 100 points");
  bool any = false;
  std::set<int64_t> wanted(o.ranks.begin(), o.ranks.end());
  for (const Timeline& t : timelines)
    for (const TimelineOp& op : t.ops) any |= wanted.empty() || wanted.count(op.rank);
  if (!any)
    throw Error(wanted.empty() ? "the timeline has no ops to draw"
                               : "the timeline has no ops on the ranks asked for (" +
                                     rankListStr({wanted.begin(), wanted.end()}) + ")");
  return Builder(timelines, o).build();
}

}  // namespace braid::viz
