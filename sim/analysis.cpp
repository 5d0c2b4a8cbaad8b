#include "sim/analysis.h"

#include <algorithm>

namespace braid::sim {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

void mergeInPlace(Intervals& v) {
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (out > 0 && iv.first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, iv.second);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
}

const char* depName(DepKind k) {
  switch (k) {
    case DepKind::kStream:
      return "stream";
    case DepKind::kSync:
      return "sync";
    case DepKind::kWait:
      return "wait";
    case DepKind::kPost:
      return "post";
    case DepKind::kCommOrder:
      return "communicator order";
  }
  return "?";
}

std::string kindName(const sem::Event& e) {
  switch (e.kind) {
    case sem::EventKind::kCopy:
      return "copy";
    case sem::EventKind::kMemset:
      return "memset";
    case sem::EventKind::kCollective:
    case sem::EventKind::kP2P:
      return "communication";
    default:
      return "compute";
  }
}

int32_t peakConcurrency(std::vector<std::pair<double, int>>& points) {
  // Ends (-1) sort before starts (+1) at the same time: back-to-back work is not concurrent.
  std::sort(points.begin(), points.end());
  int32_t now = 0, peak = 0;
  for (const auto& [t, d] : points) {
    now += d;
    peak = std::max(peak, now);
  }
  return peak;
}

void criticalPath(SimResult& r) {
  const SimGraph& s = r.sim;
  const EngineResult& e = r.engine;
  int32_t cur = -1;
  double latest = -1;
  for (size_t i = 0; i < s.numEvents(); ++i)
    if (e.end[i] > latest) {
      latest = e.end[i];
      cur = static_cast<int32_t>(i);
    }
  std::vector<CriticalStep> steps;
  size_t guard = s.numEvents() + 1;
  while (cur >= 0 && guard-- > 0) {
    size_t i = static_cast<size_t>(cur);
    int32_t released = cur;  // the node whose release decided when `cur` started
    std::string via_rendezvous;
    if (s.kind[i] == NodeKind::kComm && s.rendezvous[i] >= 0) {
      int32_t last = e.lastArrival[static_cast<size_t>(s.rendezvous[i])];
      if (last >= 0 && last != cur) {
        released = last;
        via_rendezvous = "rendezvous with rank " + std::to_string(r.graph.events[static_cast<size_t>(last)].rank);
      }
    }
    int32_t b = e.binding[static_cast<size_t>(released)];
    std::string via = b < 0 ? "host issue" : depName(e.bindingKind[static_cast<size_t>(released)]);
    if (!via_rendezvous.empty()) via = via_rendezvous + " (released there by " + via + ")";
    if (s.kind[i] != NodeKind::kMarker) {
      steps.push_back({cur, kindName(r.graph.events[i]), via, e.start[i], e.end[i]});
    } else if (!steps.empty()) {
      steps.back().via = via;  // a Synchronize / Wait marker: what it waited for is the link
    }
    if (b < 0) {
      double issued = e.start[static_cast<size_t>(released)];
      if (issued > 0) steps.push_back({-1, "host", "", 0, issued});
      break;
    }
    cur = b;
  }
  std::reverse(steps.begin(), steps.end());
  if (!steps.empty() && steps.front().event >= 0) steps.front().via = "";
  r.criticalPath = std::move(steps);
}

}  // namespace

double unionLength(Intervals& v) {
  mergeInPlace(v);
  double sum = 0;
  for (const auto& [a, b] : v) sum += b - a;
  return sum;
}

double overlapLength(Intervals& a, Intervals& b) {
  mergeInPlace(a);
  mergeInPlace(b);
  double sum = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].first, b[j].first);
    double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return sum;
}

void analyze(SimResult& r) {
  const sem::EventGraph& g = r.graph;
  const SimGraph& s = r.sim;
  const EngineResult& e = r.engine;
  size_t gpus = g.ranks.size();
  std::vector<Intervals> compute(gpus), comm(gpus);
  std::vector<std::vector<std::pair<double, int>>> points(gpus);
  std::vector<double> makespan(gpus, 0), nvlink(gpus, 0), nic(gpus, 0);
  std::vector<int64_t> events(gpus, 0);
  for (size_t i = 0; i < s.numEvents(); ++i) {
    size_t gpu = static_cast<size_t>(s.gpu[i]);
    ++events[gpu];
    if (e.end[i] < 0) continue;
    makespan[gpu] = std::max(makespan[gpu], e.end[i]);
    if (s.kind[i] == NodeKind::kMarker) continue;
    std::pair<double, double> iv{e.start[i], e.end[i]};
    if (iv.second > iv.first) {
      points[gpu].push_back({iv.first, +1});
      points[gpu].push_back({iv.second, -1});
    }
    if (s.kind[i] == NodeKind::kKernel) {
      compute[gpu].push_back(iv);
    } else {
      comm[gpu].push_back(iv);
      if (s.rendezvous[i] >= 0) {
        const CommCost& c = s.rendezvousSets[static_cast<size_t>(s.rendezvous[i])].cost;
        (c.interNode ? nic : nvlink)[gpu] += c.linkBytes;
      }
    }
  }
  r.stats.clear();
  double comm_total = 0, overlap_total = 0;
  r.makespanUs = 0;
  r.peakConcurrency = 0;
  r.simulatedEvents = static_cast<int64_t>(s.numEvents());
  r.representedEvents = 0;
  const Machine& mc = r.machine;
  for (size_t gpu = 0; gpu < gpus; ++gpu) {
    RankStats st;
    st.rank = g.ranks[gpu];
    st.makespanUs = makespan[gpu];
    st.computeUs = unionLength(compute[gpu]);
    st.commUs = unionLength(comm[gpu]);
    st.overlapUs = overlapLength(compute[gpu], comm[gpu]);
    st.exposedCommUs = st.commUs - st.overlapUs;
    st.hostUs = s.hostEnd[gpu];
    st.peakConcurrency = peakConcurrency(points[gpu]);
    if (st.makespanUs > 0) {
      st.smUtilization = e.smBusyUs[gpu] / (static_cast<double>(mc.gpu.sms) * st.makespanUs);
      st.nvlinkUtilization = nvlink[gpu] / (mc.nvlink.bandwidthGBps * 1e3 * st.makespanUs);
      st.nicUtilization = nic[gpu] / (mc.interNodeGBpsPerGpu() * 1e3 * st.makespanUs);
    }
    int64_t members = r.classes.classSize[static_cast<size_t>(r.classes.classOf[static_cast<size_t>(st.rank)])];
    comm_total += static_cast<double>(members) * st.commUs;
    overlap_total += static_cast<double>(members) * st.overlapUs;
    r.representedEvents += members * events[gpu];
    r.makespanUs = std::max(r.makespanUs, st.makespanUs);
    r.peakConcurrency = std::max(r.peakConcurrency, st.peakConcurrency);
    r.stats.push_back(st);
  }
  r.overlapFraction = comm_total > 0 ? overlap_total / comm_total : 0;
  criticalPath(r);
}

}  // namespace braid::sim
