// What `braid sim` and `braid demo` write from a simulation: the predicted timeline's Perfetto
// trace with a busy-SM counter track per simulated GPU, and the pictures of one or more
// simulated timelines on one time scale (docs/VIZ.md).
#pragma once

#include <string>
#include <vector>

#include "ir/timeline.h"
#include "sim/simulate.h"
#include "viz/trace_writer.h"

namespace braid::cli {

// The busy-SM series of every simulated GPU (empty unless SimOptions::recordSmCounters was set).
viz::TraceOptions smCounterTracks(const sim::SimResult& r);

// When ranks were folded (simulated once per class of identical ranks), which drawn rank stands
// for which: "rank 0 drawn for ranks 0-7"; "" when every rank was simulated.
std::string foldedRanksNote(const sim::SimResult& r);

// Draws `timelines` (one panel each, labelled by `labels`) into `path` (.svg, .png or .dot).
// Throws Error for an unknown extension, or a picture asked of a build without Graphviz.
void drawSimulatedTimelines(const std::vector<Timeline>& timelines, const std::vector<std::string>& labels,
                            const std::string& title, const std::string& path);

}  // namespace braid::cli
