// The happens-before graph as DOT for Graphviz's `dot`: clusters per rank and stream, one node
// per event in stream order, ordering edges by kind, the findings' marks on top, and a caption
// (title, what was cut, the findings, a legend) as the graph's label.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "viz/dot_text.h"
#include "viz/finding_marks.h"
#include "viz/graph_cut.h"
#include "viz/hb_graph.h"
#include "viz/render.h"
#include "viz/text_metrics.h"
#include "viz/timeline_style.h"

namespace braid::viz {

namespace {

constexpr const char* kErrorColor = "#d62728";
constexpr const char* kWarningColor = "#d98400";

struct EdgeStyle {
  const char* color;
  const char* style;
  double width;
  const char* name;  // for the legend
};

EdgeStyle edgeStyle(sem::EdgeKind k) {
  switch (k) {
    case sem::EdgeKind::kStream:
      return {"#9a9a9a", "solid", 1.0, "stream order"};
    case sem::EdgeKind::kSync:
      return {"#1f77b4", "solid", 1.6, "Synchronize"};
    case sem::EdgeKind::kWait:
      return {"#8e44ad", "solid", 1.6, "Wait"};
    case sem::EdgeKind::kPost:
      return {"#7f7f7f", "dashed", 1.2, "posted after"};
    case sem::EdgeKind::kCommOrder:
      return {"#e07b00", "dotted", 1.2, "communicator order"};
  }
  return {"#555555", "dashed", 1.0, "ordering"};
}

// Node colours by what an event does: a light fill (the text stays readable) with the timeline's
// colour for the kind as the border.
struct NodeLook {
  const char* fill;
  const char* border;
};

NodeLook nodeLook(sem::EventKind k) {
  switch (k) {
    case sem::EventKind::kCompute:
      return {"#dce7f3", opKindColor(TimelineOpKind::kCompute)};
    case sem::EventKind::kCopy:
      return {"#dff0ef", opKindColor(TimelineOpKind::kCopy)};
    case sem::EventKind::kMemset:
      return {"#eeeae8", opKindColor(TimelineOpKind::kMemset)};
    case sem::EventKind::kCollective:
    case sem::EventKind::kP2P:
      return {"#fde3c8", opKindColor(TimelineOpKind::kCommunication)};
    default:
      return {"#f1f1f1", "#9a9a9a"};
  }
}

std::string eventTitle(const sem::Event& e) {
  switch (e.kind) {
    case sem::EventKind::kEntry:
      return "program entry";
    case sem::EventKind::kExit:
      return "program exit";
    case sem::EventKind::kFree:
      return e.stmt ? "free (" + sem::stmtSummary(*e.stmt) + ")" : "free";
    case sem::EventKind::kAlloc:
      return e.stmt ? "allocate (" + sem::stmtSummary(*e.stmt) + ")" : "allocate";
    default:
      break;
  }
  if (e.isMarker() || !e.stmt) return e.op;
  return sem::stmtSummary(*e.stmt);
}

std::string eventWhere(const sem::Event& e) {
  std::string s;
  if (e.stmt && e.stmt->loc.known()) s = "line " + std::to_string(e.stmt->loc.line);
  std::string loops = sem::loopIndicesStr(e.loops);
  if (!loops.empty()) s += (s.empty() ? "" : " · ") + loops;
  return s;
}

class GraphWriter {
 public:
  GraphWriter(const sem::EventGraph& g, const FindingMarks* marks, const Selection& sel)
      : g_(g), marks_(marks), sel_(sel) {
    // A Wait right after its communication on the same stream is also a stream-order edge: only
    // the more specific one is drawn.
    for (const sem::Edge& e : g.edges)
      if (e.kind != sem::EdgeKind::kStream) specific_.insert({e.from, e.to});
  }

  std::string write(const std::string& title) {
    os_ << "digraph happens_before {\n"
        << "  graph [rankdir=TB, newrank=true, nodesep=0.25, ranksep=0.32, fontname=\"" << kDotFont
        << "\", fontsize=10, labelloc=t, labeljust=l, bgcolor=\"white\", pad=\"0.2\"];\n"
        << "  node [fontname=\"" << kDotFont << "\", fontsize=9, shape=box, style=\"rounded,filled\", margin=\"0.08,0.03\"];\n"
        << "  edge [arrowsize=0.6, fontname=\"" << kDotFont << "\", fontsize=8];\n";
    clusters();
    orderingEdges();
    rendezvousEdges();
    markEdges();
    os_ << "  label=" << caption(title) << ";\n}\n";
    return os_.str();
  }

 private:
  bool kept(int32_t e) const { return sel_.keep[static_cast<size_t>(e)]; }

  void clusters() {
    std::map<int32_t, std::vector<const sem::StreamInfo*>> byRank;
    for (const sem::StreamInfo& s : g_.streams) {
      bool any = false;
      for (int32_t e : s.events) any |= kept(e);
      if (any) byRank[s.rank].push_back(&s);
    }
    for (const auto& [rank, streams] : byRank) {
      os_ << "  subgraph cluster_rank" << rank << " {\n"
          << "    label=<<B>rank " << rank << "</B>>; fontsize=11; style=\"rounded\"; color=\"#b8bcc4\";\n";
      for (const sem::StreamInfo* s : streams) stream(*s);
      os_ << "  }\n";
    }
  }

  void stream(const sem::StreamInfo& s) {
    os_ << "    subgraph cluster_stream" << s.id << " {\n"
        << "      label=" << dotQuote(s.name) << "; fontsize=9; style=\"filled,rounded\"; fillcolor=\""
        << (s.isDefault() ? "#f4f6f9" : s.isCommunicator() ? "#fff6ec" : "#fafafa") << "\"; color=\"#d5d8dd\";\n";
    // Kept events in FIFO order; a run of left-out events becomes one "..." node.
    int32_t skipped = 0;
    std::string prev;
    int32_t prevEvent = -1;
    auto link = [&](const std::string& node, bool elided, int32_t event) {
      if (!prev.empty() && !specific_.count({prevEvent, event})) {
        EdgeStyle st = edgeStyle(sem::EdgeKind::kStream);
        os_ << "      " << prev << " -> " << node << " "
            << DotAttrs()
                   .set("color", st.color)
                   .set("style", elided ? "dashed" : st.style)
                   .set("weight", 10.0)
                   .str()
            << ";\n";
      }
      prev = node;
      prevEvent = event;
    };
    auto flushSkipped = [&](int32_t nextEvent) {
      if (skipped == 0) return;
      std::string node = "skip" + std::to_string(s.id) + "_" + std::to_string(nextEvent);
      os_ << "      " << node << " [shape=plaintext, style=\"\", label=\"... " << skipped << " event"
          << (skipped == 1 ? "" : "s") << "\", fontcolor=\"#777777\", fontsize=8];\n";
      link(node, true, -1);
      skipped = 0;
    };
    for (int32_t e : s.events) {
      if (!kept(e)) {
        ++skipped;
        continue;
      }
      flushSkipped(e);
      node(g_.events[static_cast<size_t>(e)]);
      link("e" + std::to_string(e), false, e);
    }
    // Events left out after the last kept one are not shown: nothing orders after them here.
    if (skipped > 0 && !prev.empty()) flushSkipped(-1);
    os_ << "    }\n";
  }

  void node(const sem::Event& e) {
    NodeLook look = nodeLook(e.kind);
    std::string title = fitText(eventTitle(e), 260, 9);
    std::string label = "<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\"><TR><TD>" +
                        htmlEscape(title) + "</TD></TR>";
    std::string where = eventWhere(e);
    if (!where.empty())
      label += "<TR><TD><FONT POINT-SIZE=\"8\" COLOR=\"#555555\">" + htmlEscape(where) + "</FONT></TD></TR>";
    DotAttrs a;
    a.set("fillcolor", look.fill).set("color", look.border).set("id", "ev" + std::to_string(e.id));
    std::string cls = std::string("event ") + sem::eventKindName(e.kind);
    if (e.isMarker()) a.set("fontsize", 8.0).set("style", "rounded,filled,dashed");
    if (e.kind == sem::EventKind::kEntry || e.kind == sem::EventKind::kExit) a.set("shape", "ellipse").set("style", "filled");
    if (marks_) {
      auto it = marks_->events.find(e.id);
      if (it != marks_->events.end()) {
        bool error = false;
        std::string roles;
        for (const EventMark& m : it->second) {
          error |= m.error;
          roles += (roles.empty() ? "" : ", ") + ("#" + std::to_string(m.finding)) + " " + m.role;
        }
        const char* color = error ? kErrorColor : kWarningColor;
        label += "<TR><TD><FONT POINT-SIZE=\"9\" COLOR=\"" + std::string(color) + "\"><B>" + htmlEscape(roles) +
                 "</B></FONT></TD></TR>";
        a.set("color", color).set("penwidth", 2.6);
        cls += " finding";
      }
    }
    label += "</TABLE>>";
    a.raw("label", label).set("class", cls).set("tooltip", g_.describe(e.id));
    os_ << "      e" << e.id << " " << a.str() << ";\n";
  }

  void orderingEdges() {
    for (const sem::Edge& e : g_.edges) {
      if (e.kind == sem::EdgeKind::kStream) continue;  // drawn inside the stream clusters
      if (!kept(e.from) || !kept(e.to)) continue;
      EdgeStyle st = edgeStyle(e.kind);
      used_.insert(e.kind);
      os_ << "  e" << e.from << " -> e" << e.to << " "
          << DotAttrs()
                 .set("color", st.color)
                 .set("style", st.style)
                 .set("penwidth", st.width)
                 .set("class", std::string("ordering ") + st.name)
                 .str()
          << ";\n";
    }
  }

  void rendezvousEdges() {
    for (const sem::CollectiveGroup& grp : g_.groups) {
      std::vector<int32_t> members;
      for (int32_t m : grp.members)
        if (kept(m)) members.push_back(m);
      for (size_t i = 0; i + 1 < members.size(); ++i) {
        rendezvous_ = true;
        os_ << "  e" << members[i] << " -> e" << members[i + 1]
            << " [dir=none, style=dashed, color=\"#f28e2b\", constraint=false, class=\"rendezvous\"];\n";
      }
    }
  }

  std::string endName(const MarkEnd& m) const { return "e" + std::to_string(m.event); }

  bool drawn(const MarkEnd& m) const { return kept(m.event); }

  void markEdges() {
    if (!marks_) return;
    for (const MarkEdge& m : marks_->edges) {
      if (!drawn(m.from) || !drawn(m.to)) continue;
      const char* color = m.error ? kErrorColor : kWarningColor;
      DotAttrs a;
      a.set("color", color).set("fontcolor", color);
      if (m.style == MarkStyle::kMissing) {
        // Not a real ordering: it must not move the nodes.
        a.set("style", "dashed").set("penwidth", 2.2).set("constraint", "false").set("class", "finding missing");
      } else {
        // A cycle or chain laid out as a staircase reads in order.
        a.set("penwidth", 3.0).set("class", "finding path");
      }
      if (!m.label.empty()) a.set("label", m.label);
      os_ << "  " << endName(m.from) << " -> " << endName(m.to) << " " << a.str() << ";\n";
    }
  }

  std::string caption(const std::string& title) const {
    auto row = [](const std::string& cell) { return "<TR><TD ALIGN=\"LEFT\">" + cell + "</TD></TR>"; };
    std::string s = "<<TABLE BORDER=\"0\" CELLSPACING=\"1\" CELLPADDING=\"1\">";
    s += row("<FONT POINT-SIZE=\"14\"><B>" + htmlEscape(title) + "</B></FONT>");
    if (marks_) {
      if (marks_->titles.empty()) s += row("<FONT COLOR=\"#2a7d2a\">no findings</FONT>");
      for (size_t i = 0; i < marks_->titles.size(); ++i)
        s += row("<FONT COLOR=\"" + std::string(marks_->titleIsError[i] ? kErrorColor : kWarningColor) + "\">" +
                 htmlEscape(fitText(marks_->titles[i], 900, 10)) + "</FONT>");
    }
    for (const std::string& note : sel_.notes)
      s += row("<FONT POINT-SIZE=\"9\" COLOR=\"#555555\"><I>note: " + htmlEscape(note) + "</I></FONT>");
    std::string legend = "<FONT POINT-SIZE=\"9\">edges: ";
    auto item = [&](const char* color, const std::string& text) {
      legend += "<FONT COLOR=\"" + std::string(color) + "\"><B>&#8594;</B> " + htmlEscape(text) + "</FONT>   ";
    };
    item(edgeStyle(sem::EdgeKind::kStream).color, "stream order");
    for (sem::EdgeKind k : used_) item(edgeStyle(k).color, edgeStyle(k).name);
    if (rendezvous_) item("#f28e2b", "rendezvous (dashed: members of one collective)");
    if (marks_) {
      bool missing = false, path = false, error = false;
      for (const MarkEdge& m : marks_->edges) {
        (m.style == MarkStyle::kMissing ? missing : path) = true;
        error |= m.error;
      }
      const char* color = error ? kErrorColor : kWarningColor;
      if (missing) item(color, "dashed: the ordering a finding lacks");
      if (path) item(color, "bold: the cycle or chain a finding names");
    }
    s += row(legend + "</FONT>");
    return s + "</TABLE>>";
  }

  const sem::EventGraph& g_;
  const FindingMarks* marks_;
  const Selection& sel_;
  std::ostringstream os_;
  std::set<sem::EdgeKind> used_;
  std::set<std::pair<int32_t, int32_t>> specific_;
  bool rendezvous_ = false;
};

std::string programTitle(const std::string& given, const std::string& program, bool findings) {
  if (!given.empty()) return given;
  std::string p = program.empty() ? "host program" : program;
  return findings ? "Findings of braid verify: " + p : "Happens-before graph: " + p;
}

}  // namespace

std::string happensBeforeDot(const sem::EventGraph& g, const verify::VerifyResult* findings, const GraphDrawOptions& o,
                             GraphSummary* summary) {
  FindingMarks marks;
  if (findings) marks = markFindings(g, *findings);
  Selection sel = selectEvents(g, findings ? marks.focus() : std::set<int32_t>{}, o);
  GraphWriter w(g, findings ? &marks : nullptr, sel);
  std::string dot = w.write(programTitle(o.title, findings ? findings->program : "", findings != nullptr));
  if (summary) {
    summary->events = static_cast<int64_t>(g.events.size());
    summary->drawnEvents = sel.kept;
    summary->findings = findings ? static_cast<int64_t>(findings->findings.size()) : 0;
    summary->notes = sel.notes;
  }
  return dot;
}

GraphSummary drawVerification(const sem::EventGraph& g, const verify::VerifyResult& result, const GraphDrawOptions& o,
                              const std::string& path) {
  pictureFormatOf(path);
  GraphSummary s;
  writePicture(happensBeforeDot(g, &result, o, &s), "dot", path);
  return s;
}

GraphSummary drawHappensBefore(const sem::EventGraph& g, const GraphDrawOptions& o, const std::string& path) {
  pictureFormatOf(path);
  GraphSummary s;
  writePicture(happensBeforeDot(g, nullptr, o, &s), "dot", path);
  return s;
}

}  // namespace braid::viz
