// Chrome / Perfetto trace of a timeline (predicted by sim or measured by exec): open the file in
// ui.perfetto.dev (or chrome://tracing). One process per rank (pid = rank), one thread per stream
// (tid = the timeline's stream id), a complete slice per operation with its bytes, flops,
// statement line and loop indices in `args`, zero-length operations (Synchronize, Wait) as
// instant events, flow arrows for every synchronization edge, and optional counter tracks
// (busy SMs, link bandwidth).
//
// Perfetto binds a flow's end points to the slices that enclose them, so arrows are drawn
// between operations that take time: an edge into or out of a zero-length marker is moved to the
// next (or previous) operation on the marker's stream, which is what actually waited (or was
// waited for).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/timeline.h"

namespace braid::viz {

struct TraceCounter {
  int64_t rank = 0;
  std::string name;                               // "busy SMs"
  std::vector<std::pair<double, double>> points;  // (time in us, value), time ascending
};

struct TraceOptions {
  bool flows = true;  // arrows for sync / wait / post / rendezvous edges
  std::vector<TraceCounter> counters;
};

// The trace as JSON text ({"traceEvents": [...], "displayTimeUnit": "ns", ...}).
std::string chromeTraceJson(const Timeline& t, const TraceOptions& o = {});
// Writes it to `path`; throws Error when the file cannot be written.
void writeChromeTrace(const Timeline& t, const std::string& path, const TraceOptions& o = {});

}  // namespace braid::viz
