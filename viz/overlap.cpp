#include "viz/overlap.h"

#include <algorithm>
#include <set>

namespace braid::viz {

std::vector<Span> unionOf(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.end <= s.begin) continue;
    if (!out.empty() && s.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

std::vector<Span> intersectionOf(const std::vector<Span>& a, const std::vector<Span>& b) {
  std::vector<Span> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    (a[i].end < b[j].end ? i : j)++;
  }
  return out;
}

std::vector<Span> differenceOf(const std::vector<Span>& a, const std::vector<Span>& b) {
  std::vector<Span> out;
  size_t j = 0;
  for (const Span& s : a) {
    double at = s.begin;
    while (j < b.size() && b[j].end <= at) ++j;
    for (size_t k = j; k < b.size() && b[k].begin < s.end; ++k) {
      if (b[k].begin > at) out.push_back({at, b[k].begin});
      at = std::max(at, b[k].end);
    }
    if (at < s.end) out.push_back({at, s.end});
  }
  return out;
}

double totalLength(const std::vector<Span>& spans) {
  double t = 0;
  for (const Span& s : spans) t += s.length();
  return t;
}

bool isCommunication(TimelineOpKind k) {
  return k == TimelineOpKind::kCommunication;
}

bool isDeviceWork(TimelineOpKind k) {
  return k == TimelineOpKind::kCompute || k == TimelineOpKind::kCopy || k == TimelineOpKind::kMemset;
}

RankOverlap rankOverlap(const Timeline& t, int64_t rank) {
  RankOverlap r;
  r.rank = rank;
  std::vector<Span> comm, work;
  for (const TimelineOp& op : t.ops) {
    if (op.rank != rank) continue;
    if (isCommunication(op.kind)) comm.push_back({op.startUs, op.endUs});
    if (isDeviceWork(op.kind)) work.push_back({op.startUs, op.endUs});
  }
  r.communication = unionOf(std::move(comm));
  r.work = unionOf(std::move(work));
  r.hidden = intersectionOf(r.communication, r.work);
  r.exposed = differenceOf(r.communication, r.work);
  return r;
}

OverlapSummary overlapOf(const Timeline& t) {
  std::set<int64_t> ranks;
  for (const TimelineOp& op : t.ops) ranks.insert(op.rank);
  OverlapSummary s;
  for (int64_t rank : ranks) {
    RankOverlap r = rankOverlap(t, rank);
    s.communicationUs += totalLength(r.communication);
    s.hiddenUs += totalLength(r.hidden);
    s.exposedUs += totalLength(r.exposed);
    s.ranks.push_back(std::move(r));
  }
  return s;
}

}  // namespace braid::viz
