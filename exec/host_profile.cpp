// The host profile's accumulator, kind names and table (see host_profile.h).
#include "exec/host_profile.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "ir/expr.h"
#include "ir/host_ir.h"

namespace braid::exec {

void HostProfile::add(std::string_view kind, int64_t ns) {
  for (HostProfileEntry& e : entries_)
    if (e.kind == kind) {
      ++e.count;
      e.totalNs += ns;
      return;
    }
  entries_.push_back({std::string(kind), 1, ns});
}

void HostProfile::merge(const HostProfile& other) {
  for (const HostProfileEntry& o : other.entries_) {
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const HostProfileEntry& e) { return e.kind == o.kind; });
    if (it == entries_.end()) {
      entries_.push_back(o);
    } else {
      it->count += o.count;
      it->totalNs += o.totalNs;
    }
  }
}

std::vector<HostProfileEntry> HostProfile::sorted() const {
  std::vector<HostProfileEntry> v = entries_;
  std::sort(v.begin(), v.end(), [](const HostProfileEntry& a, const HostProfileEntry& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.kind < b.kind;
  });
  return v;
}

const HostProfileEntry* HostProfile::find(std::string_view kind) const {
  for (const HostProfileEntry& e : entries_)
    if (e.kind == kind) return &e;
  return nullptr;
}

int64_t HostProfile::totalNs() const {
  int64_t t = 0;
  for (const HostProfileEntry& e : entries_) t += e.totalNs;
  return t;
}

int64_t HostProfile::totalCount() const {
  int64_t n = 0;
  for (const HostProfileEntry& e : entries_) n += e.count;
  return n;
}

std::string_view hostProfileKind(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kHostOp:
      return opTypeName(s.as<HostOp>()->op->type());
    case StmtKind::kCommunication: {
      // Built once (thread-safe static initialization): no allocation per sample.
      constexpr size_t kTypes = static_cast<size_t>(CommunicationType::kAllToAll) + 1;
      static const std::array<std::string, kTypes> names = [] {
        std::array<std::string, kTypes> n;
        for (size_t i = 0; i < kTypes; ++i)
          n[i] = std::string("Communication ") + communicationTypeName(static_cast<CommunicationType>(i));
        return n;
      }();
      return names[static_cast<size_t>(s.as<Communication>()->type)];
    }
    default:
      return stmtKindName(s.kind());
  }
}

std::string formatHostProfile(const HostProfile& profile, const std::string& indent) {
  std::vector<HostProfileEntry> rows = profile.sorted();
  const int64_t totalNs = profile.totalNs();
  rows.push_back({"total", profile.totalCount(), totalNs});
  size_t w = 4;
  for (const HostProfileEntry& e : rows) w = std::max(w, e.kind.size());
  const int width = static_cast<int>(w);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %10s %12s %10s %7s\n", width, "kind", "count", "total us", "us/stmt", "share");
  out += indent + line;
  for (const HostProfileEntry& e : rows) {
    const double us = static_cast<double>(e.totalNs) / 1e3;
    const double per = e.count ? us / static_cast<double>(e.count) : 0.0;
    const double share = totalNs ? 100.0 * static_cast<double>(e.totalNs) / static_cast<double>(totalNs) : 0.0;
    std::snprintf(line, sizeof line, "%-*s %10lld %12.1f %10.3f %6.1f%%\n", width, e.kind.c_str(),
                  static_cast<long long>(e.count), us, per, share);
    out += indent + line;
  }
  return out;
}

}  // namespace braid::exec
