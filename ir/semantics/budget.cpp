#include "ir/semantics/budget.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <limits>

#include "ir/checked_math.h"

namespace braid::sem {

namespace {

std::atomic<int64_t> g_max_events{0};
std::atomic<int64_t> g_max_memory{0};
std::atomic<bool> g_progress{false};

int64_t defaultMemoryBudget() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{4} << 30;  // unknown machine: 4 GiB
  return saturatingMul(pages, page) / 2;
}

// Events one run of `s` records on its rank (its nested body apart): views, stream switches and
// scalar assignments record none, an allocation two (alloc, and its free later), the rest one.
int64_t eventsOf(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kForLoop:
    case StmtKind::kIfThenElse:
    case StmtKind::kSetCurrentStream:
    case StmtKind::kGetCurrentStream:
    case StmtKind::kAliasSelect:
    case StmtKind::kShardByStream:
    case StmtKind::kSelect:
    case StmtKind::kSlice:
    case StmtKind::kScalarAssign: return 0;
    case StmtKind::kAllocate: return 2;
    default: return 1;
  }
}

struct Estimator {
  Bindings env;
  int64_t largestCount = 0;
  std::string largest;

  std::optional<int64_t> eval(const Scalar& s) {
    try {
      return s.tryEvaluate(env);
    } catch (const Error&) {
      return std::nullopt;  // the interpreter reports it, located
    }
  }

  // Events of `scope` run `times` times.
  int64_t scope(const Scope& body, int64_t times) {
    int64_t total = 0;
    for (const auto& sp : body) {
      const Stmt& s = *sp;
      total = saturatingAdd(total, saturatingMul(eventsOf(s), times));
      if (s.is<ForLoop>()) {
        const auto* f = s.as<ForLoop>();
        auto b = eval(f->begin()), e = eval(f->end());
        int64_t trips = 1;
        if (b && e) {
          int64_t d;
          trips = __builtin_sub_overflow(*e, *b, &d) ? std::numeric_limits<int64_t>::max() : std::max<int64_t>(d, 0);
        }
        int64_t inner = saturatingMul(times, trips);
        if (inner > largestCount) {
          largestCount = inner;
          largest = "FOR " + f->index + (f->loc.known() ? " at " + f->loc.str() : std::string()) + ", " +
                    std::to_string(trips) + " iterations";
        }
        auto saved = env.find(f->index) != env.end() ? std::optional<int64_t>(env[f->index]) : std::nullopt;
        if (b && e && trips > 0) env[f->index] = *e - 1;  // inner bounds at the last (largest) index
        total = saturatingAdd(total, scope(f->body, inner));
        if (saved) env[f->index] = *saved;
        else env.erase(f->index);
      } else if (s.is<IfThenElse>()) {
        const auto* i = s.as<IfThenElse>();
        total = saturatingAdd(total, std::max(scope(i->thenBody, times), scope(i->elseBody, times)));
      } else if (s.is<ScalarAssign>()) {
        const auto* a = s.as<ScalarAssign>();
        if (auto v = eval(a->value)) env[a->name] = *v;
      }
    }
    return total;
  }
};

int64_t programEvents(const HostProgram& p, const SemanticsOptions& o, std::string* largest, int64_t* largestCount) {
  Estimator est;
  est.env = o.bindings;
  est.env.emplace(kNumberOfStreams, o.numberOfStreams);
  est.env.emplace(kRank, 0);
  est.env.emplace(kDeviceIdxX, 0);
  est.env.emplace(kDeviceIdxY, 0);
  int64_t n = saturatingAdd(est.scope(p.body(), 1), 2);  // entry and exit
  if (est.largestCount > *largestCount) {
    *largestCount = est.largestCount;
    *largest = est.largest;
  }
  return n;
}

}  // namespace

void setWorkBudget(const WorkBudget& b) {
  g_max_events = b.maxEvents;
  g_max_memory = b.maxMemoryBytes;
}

WorkBudget workBudget() {
  WorkBudget b;
  b.maxMemoryBytes = g_max_memory > 0 ? g_max_memory.load() : defaultMemoryBudget();
  b.maxEvents = g_max_events > 0 ? g_max_events.load() : b.maxMemoryBytes / kBytesPerEvent;
  return b;
}

int64_t eventLimit() {
  WorkBudget b = workBudget();
  return std::clamp<int64_t>(std::min(b.maxEvents, b.maxMemoryBytes / kBytesPerEvent), 1, kMaxEventIds);
}

void setShowProgress(bool on) { g_progress = on; }
bool showProgress() { return g_progress; }

WorkEstimate estimateWork(const HostProgram& p, const SemanticsOptions& o, int64_t numRanks, int64_t ranksRun) {
  WorkEstimate w;
  w.ranks = numRanks;
  int64_t largestCount = 0;
  int64_t shared = programEvents(p, o, &w.largest, &largestCount);
  int64_t own = 0;
  int64_t ownRanks = 0;
  for (const auto& [rank, prog] : o.rankPrograms) {
    if (!prog) continue;
    own = saturatingAdd(own, programEvents(*prog, o, &w.largest, &largestCount));
    ++ownRanks;
  }
  w.events = saturatingAdd(saturatingMul(shared, std::max<int64_t>(ranksRun - ownRanks, 0)), own);
  return w;
}

std::string formatBytes(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  int64_t v = bytes;
  while (v >= 1024 * 10 && u < 6) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + units[u];
}

int64_t parseByteSize(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB") shift = 40;
  if (i == 0 || shift < 0)
    throw Error("expected a size such as 512M, 4G or 1073741824 (bytes), got '" + text + "'");
  int64_t n = 0;
  for (size_t k = 0; k < i; ++k) {
    if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text[k] - '0', &n))
      throw Error("size '" + text + "' does not fit in 64 bits");
  }
  if (n > (std::numeric_limits<int64_t>::max() >> shift)) throw Error("size '" + text + "' does not fit in 64 bits");
  if (n == 0) throw Error("size '" + text + "' must be positive");
  return n << shift;
}

}  // namespace braid::sem
