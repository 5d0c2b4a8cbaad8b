#include "cli/demo_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "viz/timeline_style.h"

namespace braid::cli {

namespace {

// Columns a UTF-8 string takes in a terminal ("µs" is two): its bytes that start a character.
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// "clean", or the counts of errors and warnings with the kinds found.
std::string verdictOf(const verify::VerifyResult& v) {
  std::map<std::string, int> errorKinds, warningKinds;
  for (const auto& f : v.findings) {
    if (f.severity == verify::Severity::kError) ++errorKinds[verify::findingKindName(f.kind)];
    else if (f.severity == verify::Severity::kWarning) ++warningKinds[verify::findingKindName(f.kind)];
  }
  auto counted = [](int64_t n, const char* what, const std::map<std::string, int>& kinds) {
    std::string s = std::to_string(n) + " " + what + (n == 1 ? "" : "s") + " (";
    bool first = true;
    for (const auto& [k, c] : kinds) s += (first ? "" : ", ") + k, first = false;
    return s + ")";
  };
  std::string s = v.errors() > 0 ? counted(v.errors(), "error", errorKinds) : "clean";
  if (v.warnings() > 0) s += ", " + counted(v.warnings(), "warning", warningKinds);
  return s;
}

}  // namespace

DemoRow demoRow(const std::string& protocol, const sim::SimResult& r, const verify::VerifyResult& v) {
  DemoRow row;
  row.protocol = protocol;
  row.makespanUs = r.makespanUs;
  row.hiddenFraction = r.overlapFraction;
  for (const auto& s : r.stats) {
    row.exposedCommUs = std::max(row.exposedCommUs, s.exposedCommUs);
    row.communicates = row.communicates || s.commUs > 0;
  }
  row.peakConcurrency = r.peakConcurrency;
  row.deadlocked = r.engine.deadlocked;
  row.verdict = verdictOf(v);
  row.clean = v.ok() && !row.deadlocked;
  return row;
}

std::string protocolGist(const std::string& protocol) {
  if (protocol == "A") return "fork once, join per iteration";
  if (protocol == "B") return "fork per iteration, join after the loop";
  if (protocol == "C") return "fork and join every iteration";
  return "";
}

std::string formatDemoTable(const std::vector<DemoRow>& rows) {
  const std::vector<std::string> head = {"protocol", "makespan", "comm hidden", "exposed comm", "peak concurrency",
                                         "verify"};
  std::vector<std::vector<std::string>> cells = {head};
  for (const DemoRow& r : rows)
    cells.push_back({r.protocol, r.deadlocked ? "deadlocks" : viz::durationStr(r.makespanUs), r.communicates ? viz::percentStr(r.hiddenFraction) : "no comm",
                     viz::durationStr(r.exposedCommUs), std::to_string(r.peakConcurrency), r.verdict});
  std::vector<size_t> width(head.size(), 0);
  for (const auto& line : cells)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], columns(line[c]));
  std::ostringstream os;
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) {
      os << line[c];
      if (c + 1 < line.size()) os << std::string(width[c] - columns(line[c]) + 2, ' ');
    }
    os << "\n";
  }
  if (rows.size() == 2 && !rows[0].deadlocked && !rows[1].deadlocked && rows[0].makespanUs > 0 &&
      rows[1].makespanUs > 0) {
    const DemoRow& fast = rows[0].makespanUs <= rows[1].makespanUs ? rows[0] : rows[1];
    const DemoRow& slow = &fast == &rows[0] ? rows[1] : rows[0];
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", slow.makespanUs / fast.makespanUs);
    os << "\nprotocol " << slow.protocol << " takes " << ratio << " as long as protocol " << fast.protocol << ": it ";
    if (slow.communicates)
      os << "hides " << viz::percentStr(slow.hiddenFraction) << " of its communication under computation ("
         << fast.protocol << ": " << viz::percentStr(fast.hiddenFraction) << ") and ";
    os << "runs at most " << slow.peakConcurrency << " operation" << (slow.peakConcurrency == 1 ? "" : "s")
       << " at once per GPU (" << fast.protocol << ": " << fast.peakConcurrency << ").\n";
  }
  return os.str();
}

}  // namespace braid::cli
