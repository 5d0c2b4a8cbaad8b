// Happens-before graphs: a host program's event graph (ir/semantics) drawn with Graphviz `dot`,
// one node per dynamic operation, grouped by rank and stream, edges coloured by the ordering they
// stand for (stream order, Synchronize, Wait, communicator order, collective rendezvous). Over it,
// a verification's findings: the statements involved highlighted and numbered, the ordering a
// race or a missing join lacks as a dashed edge, a deadlock's wait-for cycle in red. Large graphs
// are cut to the neighbourhood of the findings, and the picture says so. docs/VIZ.md.
//
//   drawVerification(graph, verifyResult, {}, "findings.svg");   // or .png, or .dot
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "verify/checker.h"

namespace braid::viz {

struct GraphDrawOptions {
  std::string title;           // default: the program's name
  int maxEvents = 160;         // larger graphs are cut (see below)
  int neighbourhood = 3;       // steps kept around each finding's events when cutting
  std::vector<int64_t> ranks;  // ranks to draw; empty: all (then cut when too large)
};

// What was drawn, for callers that report it and for tests.
struct GraphSummary {
  int64_t events = 0;       // in the graph
  int64_t drawnEvents = 0;  // drawn as nodes
  int64_t findings = 0;     // drawn over the graph
  std::vector<std::string> notes;  // what was cut, as printed on the picture
};

// DOT text for Graphviz's `dot` layout. `findings` may be null (the plain happens-before graph).
// A cut graph keeps, in order of preference: the events named by the findings and their
// neighbours within `neighbourhood` steps; else the ranks asked for; else the first rank's first
// events. Left-out stretches of a stream are drawn as "... N events" nodes.
std::string happensBeforeDot(const sem::EventGraph& g, const verify::VerifyResult* findings,
                             const GraphDrawOptions& o, GraphSummary* summary = nullptr);

// The picture of `g` with `result`'s findings, into `path` (.svg, .png or .dot).
GraphSummary drawVerification(const sem::EventGraph& g, const verify::VerifyResult& result, const GraphDrawOptions& o,
                              const std::string& path);
// The plain happens-before graph into `path`.
GraphSummary drawHappensBefore(const sem::EventGraph& g, const GraphDrawOptions& o, const std::string& path);

}  // namespace braid::viz
