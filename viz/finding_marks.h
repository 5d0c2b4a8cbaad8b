// What a verification's findings add to the happens-before graph: which events to highlight
// (with the finding's number and the event's role), and which extra edges to draw: the ordering a
// race or a missing join lacks (dashed), a deadlock's wait-for cycle and the chain that
// serializes a loop (bold). A rendezvous step of a cycle or chain is an edge between two members
// of the collective, labelled with it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "verify/checker.h"

namespace braid::viz {

struct MarkEnd {
  int32_t event = -1;
  bool operator==(const MarkEnd&) const = default;
};

enum class MarkStyle {
  kMissing,  // an ordering the program lacks: dashed
  kPath,     // a cycle or chain of orderings that exists: bold
};

struct MarkEdge {
  MarkEnd from, to;
  MarkStyle style = MarkStyle::kMissing;
  std::string label;  // "#1 missing ordering"
  bool error = true;  // error (red) or warning (amber)
};

struct EventMark {
  int finding = 0;   // 1-based, as listed on the picture
  std::string role;  // the site's role: "write", "read", "free", "waits", ...
  bool error = true;
};

struct FindingMarks {
  std::map<int32_t, std::vector<EventMark>> events;
  std::vector<MarkEdge> edges;
  std::vector<std::string> titles;     // per finding: "#1 race: data race on T1 ..."
  std::vector<bool> titleIsError;
  std::set<int32_t> focus() const;     // every event marked or touched by a marked edge
};

FindingMarks markFindings(const sem::EventGraph& g, const verify::VerifyResult& r);

}  // namespace braid::viz
