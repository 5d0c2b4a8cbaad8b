#include "verify/checker.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/host_ir_text.h"
#include "ir/checked_math.h"
#include "ir/semantics/budget.h"
#include "ir/semantics/interpreter.h"
#include "verify/checker_internal.h"

namespace braid::verify {

int64_t VerifyResult::errors() const {
  int64_t n = 0;
  for (const auto& f : findings) n += f.severity == Severity::kError ? 1 : 0;
  return n;
}

int64_t VerifyResult::warnings() const {
  int64_t n = 0;
  for (const auto& f : findings) n += f.severity == Severity::kWarning ? 1 : 0;
  return n;
}

int64_t VerifyResult::notes() const {
  int64_t n = 0;
  for (const auto& f : findings) n += f.severity == Severity::kNote ? 1 : 0;
  return n;
}

bool VerifyResult::has(FindingKind k) const {
  return std::any_of(findings.begin(), findings.end(), [k](const Finding& f) { return f.kind == k; });
}

namespace detail {

Finding* Reporter::add(FindingKind kind, const std::vector<const Stmt*>& stmts, const std::string& extra_key) {
  auto key = std::make_tuple(static_cast<int>(kind), stmts, extra_key);
  if (auto it = index_.find(key); it != index_.end()) {
    ++findings_[it->second].occurrences;
    return nullptr;
  }
  if (perKind_[static_cast<int>(kind)]++ >= static_cast<int>(o_.maxFindingsPerKind)) {
    ++suppressed_;
    return nullptr;
  }
  Finding f;
  f.kind = kind;
  f.severity = severityOf(kind);
  findings_.push_back(std::move(f));
  index_[key] = findings_.size() - 1;
  return &findings_.back();
}

Site Reporter::stmtSite(const std::string& role, const Stmt* stmt, int32_t rank, int32_t stream,
                        const std::vector<sem::LoopIndex>& loops, const std::string& detail) const {
  Site s;
  s.role = role;
  if (stmt) {
    s.loc = stmt->loc;
    s.statement = sem::stmtSummary(*stmt);
  }
  s.rank = rank;
  if (stream >= 0) s.stream = g_.streamName(stream);
  s.loops = loops;
  s.detail = detail;
  return s;
}

Site Reporter::eventSite(const std::string& role, int32_t event, const std::string& detail) const {
  const sem::Event& e = g_.events[static_cast<size_t>(event)];
  Site s = stmtSite(role, e.stmt, e.rank, e.stream, e.loops, detail);
  if (!e.stmt) s.statement = e.op;
  s.event = event;
  return s;
}

std::string Reporter::bufferName(int32_t buffer) const {
  if (buffer < 0) return "?";
  const sem::BufferInfo& b = g_.buffers[static_cast<size_t>(buffer)];
  std::string s = b.tensor ? b.tensor->nameStr() : "buffer";
  if (b.isInput) {
    s += " (input)";
  } else if (b.allocStmt && b.allocStmt->loc.known()) {
    s += " (allocated at line " + std::to_string(b.allocStmt->loc.line);
    if (!b.allocLoops.empty()) s += ", " + sem::loopIndicesStr(b.allocLoops);
    s += ")";
  }
  return s;
}

std::string Reporter::accessDetail(const sem::Access& a) const {
  std::string s = a.tensor ? a.tensor->nameStr() : "?";
  const sem::BufferInfo& b = g_.buffers[static_cast<size_t>(a.region.buffer)];
  if (b.tensor != a.tensor) s += " (a view of " + (b.tensor ? b.tensor->nameStr() : std::string("?")) + ")";
  return s + ": " + a.region.str();
}

std::vector<std::string> Reporter::chainLines(const sem::HappensBefore& hb,
                                              const std::vector<sem::ChainStep>& steps) const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    std::string line = i == 0 ? "    " : "--[" + std::string(sem::linkKindName(s.via)) + "]--> ";
    if (s.event >= 0) {
      line += g_.describe(s.event);
    } else if (s.group >= 0) {
      const auto& grp = g_.groups[static_cast<size_t>(s.group)];
      line += std::string(grp.p2p ? "send/recv pair" : "collective #" + std::to_string(grp.sequence + 1)) + " on " +
              grp.communicator + ": all members have started";
    }
    lines.push_back(line);
  }
  (void)hb;
  return lines;
}

std::vector<Finding> Reporter::take(int64_t* suppressed) {
  if (suppressed) *suppressed = suppressed_;
  return std::move(findings_);
}

void checkIssues(const sem::EventGraph& g, Reporter& r) {
  for (const sem::Issue& i : g.issues) {
    std::vector<const Stmt*> stmts{i.stmt};
    if (i.otherStmt) stmts.push_back(i.otherStmt);
    Finding* f = r.add(i.kind, stmts, i.stmt ? "" : i.message);
    if (!f) continue;
    f->summary = sem::findingHeadline(i.kind);
    if (i.event >= 0) {
      f->sites.push_back(r.eventSite("here", i.event));
    } else {
      f->sites.push_back(r.stmtSite("here", i.stmt, i.rank, i.stream, i.loops));
    }
    if (i.otherEvent >= 0) {
      f->sites.push_back(r.eventSite("other", i.otherEvent));
    } else if (i.otherStmt) {
      f->sites.push_back(r.stmtSite(i.kind == FindingKind::kUseAfterDeallocate ? "deallocated" : "other", i.otherStmt,
                                    i.otherRank, i.otherStream, i.otherLoops));
    }
    std::string msg = i.message;
    static const char* verbs[] = {"uses ",   "selects ", "takes ", "writes ", "waits ", "deallocates ", "input ",
                                  "output ", "buffer ",  "is ",    "has ",    "neither ", "sends ", "opens ",
                                  "matches "};
    bool verb = false;
    for (const char* v : verbs) verb |= msg.rfind(v, 0) == 0;
    if (verb) {
      msg = (i.stmt ? "This statement " : "The program ") + msg;
    } else if (!msg.empty()) {
      msg[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(msg[0])));
    }
    f->explanation.push_back(msg + ".");
    switch (i.kind) {
      case FindingKind::kNonContiguousComm:
        f->explanation.push_back(
            "Communications read and write dense row-major memory; a permuted or strided view "
            "would be sent in the wrong order. Copy it into a contiguous buffer first.");
        break;
      case FindingKind::kUseAfterDeallocate:
        f->explanation.push_back(
            "Move the Deallocate after the last use (and after the join of the streams that use it).");
        break;
      case FindingKind::kCollectiveMismatch:
      case FindingKind::kMismatchedStatements:
        f->explanation.push_back(
            "NCCL needs every member of a communicator to issue the same collectives in the same "
            "order with the same type, root, sizes, dtype and reduction op; otherwise it hangs "
            "or corrupts data. Issue the collectives from the same statements in the same order on "
            "every rank.");
        break;
      case FindingKind::kBadRoot:
        f->explanation.push_back(
            "The root of a rooted collective must be a member of its team on every rank and "
            "iteration; NCCL rejects it otherwise. Compute the root from the team.");
        break;
      case FindingKind::kCommunicationSize:
        f->explanation.push_back("Size the buffers by the communication's rule (docs/VERIFY.md).");
        break;
      case FindingKind::kUnclosedCoalescing:
        f->explanation.push_back(
            "Close every group with EndCoalescing before the next StartCoalescing and before "
            "the program returns; the group is only posted when it is closed.");
        break;
      default:
        break;
    }
  }
}

}  // namespace detail

VerifyResult checkEventGraph(const sem::EventGraph& g, const VerifyOptions& o) {
  sem::HappensBefore serialized(g, /*communicatorOrder=*/true);
  sem::HappensBefore hb(g, /*communicatorOrder=*/false);
  hb.restrictRunsTo(serialized);
  detail::Reporter r(g, o);
  detail::checkIssues(g, r);
  // A rank that stopped at a statement that cannot run has no meaningful ordering after it:
  // reporting what follows would bury the one error under its consequences.
  if (!g.halted()) {
    detail::checkDeadlock(g, serialized, r);
    detail::checkRacesAndCoverage(g, hb, r);
    detail::checkJoins(g, hb, r);
    detail::checkUnwaitedCommunications(g, hb, r);
    detail::checkLifetimes(g, hb, r);
    if (o.parallelismWarnings) detail::checkParallelism(g, hb, r);
  }
  VerifyResult res;
  res.findings = r.take(&res.suppressed);
  res.haltedRanks = g.haltedRanks;
  std::stable_sort(res.findings.begin(), res.findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) < static_cast<int>(b.severity);
  });
  res.ranks = g.numRanks;
  res.numberOfStreams = g.numberOfStreams;
  res.events = static_cast<int64_t>(g.events.size());
  res.streamCount = static_cast<int64_t>(g.streams.size());
  return res;
}

namespace {

// The first statement of `p` whose printed form mentions `name` as a whole word: where an unbound
// symbol is first needed, so the message can point there.
const Stmt* firstMention(const HostProgram& p, const std::string& name) {
  const Stmt* found = nullptr;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (found || !s.loc.known()) return;
    std::string text = printStmt(p, s);
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      bool starts = at == 0 || !word(text[at - 1]);
      bool ends = at + name.size() >= text.size() || !word(text[at + name.size()]);
      if (starts && ends) {
        found = &s;
        return;
      }
    }
  });
  return found;
}

// The happens-before check needs an int per event and stream of every rank; a program over that
// limit (8192 ranks x 64 streams, say) is refused before it is unrolled, not after. The estimate
// counts streams a rank may not use, so it refuses only at twice the check's own limit.
void refuseOversizedClocks(const HostProgram& p, const sem::SemanticsOptions& so) {
  int64_t ranks = so.numRanks > 0 ? so.numRanks : sem::ranksFromProgram(p);
  for (const auto& [rank, prog] : so.rankPrograms)
    ranks = std::max({ranks, rank + 1, prog ? sem::ranksFromProgram(*prog) : 1});
  int64_t streams = so.numberOfStreams;
  if (auto it = so.bindings.find(kNumberOfStreams); it != so.bindings.end()) streams = it->second;
  if (ranks <= 0 || ranks > kMaxRanks || streams <= 0 || streams > kMaxStreams) return;  // refused, located, later
  sem::WorkEstimate w = sem::estimateWork(p, so, ranks, ranks);
  // Over the event budget: buildEventGraph refuses it with the budget's message.
  if (w.events > (so.maxEvents > 0 ? so.maxEvents : sem::eventLimit())) return;
  double width = static_cast<double>(ranks) * static_cast<double>(streams + 2);
  double entries = static_cast<double>(w.events) * width;
  if (entries <= 2 * sem::kMaxClockEntries) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "too much work for the happens-before check: about %lld events x %.0f streams (%lld rank(s) x "
                "(%lld + 2)) = %.3g vector-clock entries, %.0f times its limit of %.0f; use fewer ranks, streams or "
                "iterations",
                static_cast<long long>(w.events), width, static_cast<long long>(ranks), static_cast<long long>(streams),
                entries, entries / sem::kMaxClockEntries, sem::kMaxClockEntries);
  std::string message = buf;
  if (!w.largest.empty()) message += " (most events come from " + w.largest + ")";
  throw Error(message);
}

}  // namespace

VerifyResult verifyProgram(const HostProgram& p, const VerifyOptions& o) {
  std::set<std::string> unbound = sem::unboundSymbols(p, o.bindings);
  for (const auto& [rank, prog] : o.rankPrograms)
    if (prog)
      for (const auto& n : sem::unboundSymbols(*prog, o.bindings)) unbound.insert(n);
  if (!unbound.empty()) {
    std::string names;
    for (const auto& n : unbound) names += (names.empty() ? "" : ", ") + n;
    std::string hint;
    if (p.indexDefinitions().empty())
      hint = " (an index nvFuser computes, such as a peer or a slice index, is defined in the 'Index "
             "definitions' section that NVFUSER_DUMP=host_ir(indices) prints after the dump)";
    std::string message = "the program's sizes depend on unbound symbol(s): " + names +
                          "; bind each with --bind NAME=VALUE (the check is exact for the values given)" + hint;
    // Located at the first statement that needs one of them (the first name, alphabetically).
    if (const Stmt* s = firstMention(p, *unbound.begin()))
      throw ParseError(s->loc, message + " (" + *unbound.begin() + " is first needed here)");
    throw Error(message);
  }
  sem::SemanticsOptions so;
  so.bindings = o.bindings;
  so.numRanks = o.ranks;
  so.numberOfStreams = o.streams;
  so.rankPrograms = o.rankPrograms;
  refuseOversizedClocks(p, so);
  sem::EventGraph g = sem::buildEventGraph(p, so);
  VerifyResult res = checkEventGraph(g, o);
  res.program = p.sourceName;
  res.bindings = o.bindings;
  return res;
}

namespace {

std::string siteLine(const Site& s) {
  std::ostringstream os;
  os << "  " << s.role << ": " << (s.statement.empty() ? "(program)" : s.statement);
  if (s.loc.known()) os << "   [" << s.loc.str() << "]";
  os << "\n      ";
  bool first = true;
  auto sep = [&]() {
    if (!first) os << ", ";
    first = false;
  };
  if (s.rank >= 0) {
    sep();
    os << "rank " << s.rank;
  }
  if (!s.stream.empty()) {
    sep();
    os << "on " << s.stream;
  }
  if (!s.loops.empty()) {
    sep();
    os << sem::loopIndicesStr(s.loops);
  }
  if (!s.detail.empty()) {
    sep();
    os << s.detail;
  }
  os << "\n";
  return os.str();
}

}  // namespace

std::string formatReport(const VerifyResult& r) {
  std::ostringstream os;
  os << (r.program.empty() ? "program" : r.program) << ": " << r.ranks
     << " rank(s), numberOfStreams=" << r.numberOfStreams;
  for (const auto& [k, v] : r.bindings)
    if (k != kNumberOfStreams) os << ", " << k << "=" << v;
  os << " (" << r.events << " events on " << r.streamCount << " streams)\n";
  for (const auto& f : r.findings) {
    os << "\n"
       << sem::severityName(f.severity) << "[" << findingKindName(f.kind) << "]: " << f.summary
       << "\n";
    for (const auto& s : f.sites) os << siteLine(s);
    for (const auto& e : f.explanation) os << "  " << e << "\n";
    if (!f.chain.empty()) {
      os << "  chain:\n";
      for (const auto& c : f.chain) os << "    " << c << "\n";
    }
    if (f.occurrences > 1)
      os << "  (" << f.occurrences - 1 << " more instance(s) of the same statements at other ranks or iterations)\n";
  }
  if (r.suppressed > 0) os << "\n(" << r.suppressed << " further finding(s) not listed)\n";
  if (!r.haltedRanks.empty()) {
    os << "\nrank(s)";
    for (int64_t k : r.haltedRanks) os << " " << k;
    os << " stopped at the error above; ordering, coverage and matching checks were skipped (the program "
          "cannot run past it)\n";
  }
  os << "\n";
  if (r.errors() == 0) {
    os << "verified: no errors for these bindings";
    if (r.warnings() > 0) os << " (" << r.warnings() << " warning(s))";
  } else {
    os << r.errors() << " error(s), " << r.warnings() << " warning(s)";
  }
  if (r.notes() > 0) os << "; " << r.notes() << " note(s) on what braid assumed";
  os << "\n";
  return os.str();
}

std::string formatJson(const VerifyResult& r, int indent) {
  using nlohmann::json;
  json j;
  j["program"] = r.program;
  j["ranks"] = r.ranks;
  j["numberOfStreams"] = r.numberOfStreams;
  j["bindings"] = json::object();
  for (const auto& [k, v] : r.bindings) j["bindings"][k] = v;
  j["events"] = r.events;
  j["streams"] = r.streamCount;
  j["errors"] = r.errors();
  j["warnings"] = r.warnings();
  j["notes"] = r.notes();
  j["ok"] = r.ok();
  j["suppressed"] = r.suppressed;
  j["halted_ranks"] = r.haltedRanks;
  j["findings"] = json::array();
  for (const auto& f : r.findings) {
    json jf;
    jf["kind"] = findingKindName(f.kind);
    jf["severity"] = sem::severityName(f.severity);
    jf["summary"] = f.summary;
    jf["occurrences"] = f.occurrences;
    jf["explanation"] = f.explanation;
    jf["chain"] = json::array();
    for (const auto& c : f.chain) jf["chain"].push_back(c.substr(std::min(c.find_first_not_of(' '), c.size())));
    jf["sites"] = json::array();
    for (const auto& s : f.sites) {
      json js;
      js["role"] = s.role;
      js["statement"] = s.statement;
      js["file"] = s.loc.file;
      js["line"] = s.loc.line;
      js["column"] = s.loc.col;
      js["rank"] = s.rank;
      js["stream"] = s.stream;
      js["loops"] = json::object();
      for (const auto& l : s.loops) js["loops"][l.name] = l.value;
      js["detail"] = s.detail;
      jf["sites"].push_back(js);
    }
    j["findings"].push_back(jf);
  }
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);  // a non-UTF-8 file name must not throw
}

}  // namespace braid::verify
