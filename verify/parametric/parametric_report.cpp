// The parametric checker's verdict as text and JSON. The verdict line says exactly what was
// proved and for which ranges, and what was not.
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/semantics/event_graph.h"
#include "verify/parametric/parametric_checker.h"
#include "verify/parametric/site_format.h"

namespace braid::verify {

namespace {

std::string bindingsText(const Witness& w) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : w.bindings) parts.push_back(k + "=" + std::to_string(v));
  parts.push_back(std::to_string(w.ranks) + " rank(s)");
  return joinText(parts, ", ");
}

std::string verdictText(const ParametricResult& r) {
  std::vector<std::string> proven, boundedOnly, everyProven, violated, open;
  for (const auto& p : r.properties) {
    if (p.status == ClaimStatus::kProven) {
      everyProven.push_back(p.name);
      (p.scope.find("1..") != std::string::npos ? boundedOnly : proven).push_back(p.name);
    } else if (p.status == ClaimStatus::kViolated) {
      violated.push_back(p.name);
    } else {
      open.push_back(p.name + " (" + claimStatusName(p.status) + ")");
    }
  }
  std::ostringstream os;
  std::string where = r.scope();
  if (r.bugFound()) {
    os << "BUG: " << joinText(violated, ", ") << " violated (counterexample confirmed by the bounded checker)\n";
  } else if (r.proven()) {
    // A property Z3 decided only stream count by stream count (a small --timeout makes more of
    // them) is proven within the bound only: named as such, never left out of the verdict.
    os << "PROVEN: " << joinText(everyProven, ", ") << "\n  " << where << "\n";
    if (!boundedOnly.empty())
      os << "  proven only for numberOfStreams up to the bound: " << joinText(boundedOnly, ", ") << "\n";
    return os.str();
  } else {
    os << "NOT PROVEN: " << joinText(open, ", ") << "\n";
  }
  if (!proven.empty() || !boundedOnly.empty()) {
    os << "  proven: " << joinText(proven, ", ");
    if (!proven.empty()) os << " -- " << where;
    os << "\n";
    if (!boundedOnly.empty())
      os << "  proven only for numberOfStreams up to the bound: " << joinText(boundedOnly, ", ") << "\n";
  }
  if (!r.unsupported.empty()) os << "  (nothing is claimed where the program uses constructs the encoding does not model)\n";
  return os.str();
}

}  // namespace

const char* claimStatusName(ClaimStatus s) {
  switch (s) {
    case ClaimStatus::kProven:
      return "proven";
    case ClaimStatus::kViolated:
      return "violated";
    case ClaimStatus::kUnknown:
      return "unknown";
    case ClaimStatus::kUnsupported:
      return "unsupported";
  }
  return "?";
}

bool ParametricResult::proven() const {
  if (!unsupported.empty()) return false;
  for (const auto& p : properties)
    if (p.status != ClaimStatus::kProven) return false;
  return true;
}

bool ParametricResult::bugFound() const {
  for (const auto& w : witnesses)
    if (w.confirmed) return true;
  return false;
}

std::string ParametricResult::scope() const {
  std::vector<std::string> parts;
  for (const auto& s : symbols) parts.push_back(s + " >= 1");
  parts.push_back(streamScope);
  std::string s = "for all " + joinText(parts, ", ");
  s += ", ranks 0.." + std::to_string(ranks - 1) + " (rank symbolic)";
  if (!domainNotes.empty()) s += ", where " + joinText(domainNotes, " and ");
  return s;
}

int parametricExitCode(const ParametricResult& r) {
  if (r.bugFound()) return 1;
  if (r.proven()) return 0;
  return 4;
}

std::string replayArguments(const Witness& w) {
  std::string s;
  for (const auto& [k, v] : w.bindings)
    if (k != kNumberOfStreams) s += "--bind " + k + "=" + std::to_string(v) + " ";
  s += "--ranks " + std::to_string(w.ranks);
  if (auto it = w.bindings.find(kNumberOfStreams); it != w.bindings.end())
    s += " --streams " + std::to_string(it->second);
  return s;
}

std::string formatParametricReport(const ParametricResult& r) {
  std::ostringstream os;
  os << (r.program.empty() ? "program" : r.program) << ": parametric check, ranks 0.." << r.ranks - 1
     << " (rank symbolic), " << (r.symbols.empty() ? std::string("no symbolic extents") : "symbolic " + joinText(r.symbols, ", "))
     << ", " << r.streamScope << "\n\n";
  for (const auto& p : r.properties) {
    std::string name = p.name;
    name.resize(std::max<size_t>(name.size(), 20), ' ');
    std::string status = claimStatusName(p.status);
    status.resize(std::max<size_t>(status.size(), 12), ' ');
    os << "  " << name << status << p.scope << "\n";
    if (p.status != ClaimStatus::kProven && !p.note.empty()) os << "      " << p.note << "\n";
  }
  for (const auto& u : r.unsupported) os << "\nunsupported: " << u << "\n";
  int n = 0;
  for (const auto& w : r.witnesses) {
    os << "\ncounterexample " << ++n << " " << (w.confirmed ? "(confirmed)" : "(NOT confirmed)") << ": error["
       << findingKindName(w.kind) << "]: " << w.summary << "\n";
    os << "  bindings: " << bindingsText(w) << "\n";
    for (const auto& s : w.sites) os << siteText(s);
    if (!w.missingEdge.empty()) os << "  missing: " << w.missingEdge << "\n";
    if (!w.cycle.empty()) {
      os << "  cycle (unsat core):\n";
      for (const auto& c : w.cycle) os << "    " << c << "\n";
    }
    if (w.replayed) os << "  replay: " << w.replayNote << "\n";
    os << "  reproduce: braid verify " << (r.program.empty() ? std::string("FILE") : r.program) << " "
       << replayArguments(w) << "\n";
  }
  os << "\n" << verdictText(r);
  os << "(" << r.queries << " Z3 queries, " << static_cast<int64_t>(r.seconds * 1000 + 0.5) << " ms)\n";
  return os.str();
}

std::string formatParametricJson(const ParametricResult& r, int indent) {
  using nlohmann::json;
  json j;
  j["mode"] = "parametric";
  j["program"] = r.program;
  j["ranks"] = r.ranks;
  j["symbols"] = r.symbols;
  j["streamScope"] = r.streamScope;
  j["scope"] = r.scope();
  j["domain"] = r.domainNotes;
  j["verdict"] = r.bugFound() ? "bug" : r.proven() ? "proven" : "inconclusive";
  j["ok"] = r.proven();
  j["unsupported"] = r.unsupported;
  j["queries"] = r.queries;
  j["seconds"] = r.seconds;
  j["properties"] = json::array();
  for (const auto& p : r.properties)
    j["properties"].push_back({{"name", p.name},
                               {"meaning", p.meaning},
                               {"status", claimStatusName(p.status)},
                               {"scope", p.scope},
                               {"note", p.note},
                               {"queries", p.queries}});
  j["witnesses"] = json::array();
  for (const auto& w : r.witnesses) {
    json jw;
    jw["kind"] = findingKindName(w.kind);
    jw["property"] = w.property;
    jw["summary"] = w.summary;
    jw["confirmed"] = w.confirmed;
    jw["replay"] = w.replayNote;
    jw["reproduce"] = replayArguments(w);
    jw["bindings"] = json::object();
    for (const auto& [k, v] : w.bindings) jw["bindings"][k] = v;
    jw["ranks"] = w.ranks;
    jw["missing"] = w.missingEdge;
    jw["cycle"] = w.cycle;
    jw["sites"] = json::array();
    for (const auto& s : w.sites) jw["sites"].push_back(siteJson(s));
    j["witnesses"].push_back(jw);
  }
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);  // a non-UTF-8 file name must not throw
}

}  // namespace braid::verify
