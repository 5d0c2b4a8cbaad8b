#include "viz/timeline_style.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace braid::viz {

bool isMarkerKind(TimelineOpKind k) {
  return k == TimelineOpKind::kSync || k == TimelineOpKind::kWait;
}

TimeAxis chooseTimeAxis(double maxUs, double widthPt) {
  TimeAxis a;
  if (maxUs >= 2e7) {
    a.div = 1e6;
    a.unit = "s";
  } else if (maxUs >= 2e4) {
    a.div = 1e3;
    a.unit = "ms";
  }
  double range = maxUs / a.div;
  double wanted = std::max(2.0, std::floor(widthPt / 85));
  double raw = range / wanted;
  double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    a.step = m * p;
    if (a.step >= raw) break;
  }
  return a;
}

std::string tickLabel(double v, double step) {
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string durationStr(double us) {
  char buf[48];
  if (us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g s", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.4g ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, us >= 10 ? "%.4g µs" : "%.3g µs", us);
  }
  return buf;
}

std::string bytesStr(int64_t b) {
  char buf[48];
  if (b >= (1 << 30)) {
    std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(b) / (1 << 30));
  } else if (b >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.3g MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.3g KiB", static_cast<double>(b) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  }
  return buf;
}

std::string percentStr(double f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
  return buf;
}

const char* arrowLegendName(TimelineEdgeKind k) {
  switch (k) {
    case TimelineEdgeKind::kSync:
      return "ordered by Synchronize";
    case TimelineEdgeKind::kWait:
      return "ordered by Wait";
    case TimelineEdgeKind::kPost:
      return "posted after";
    case TimelineEdgeKind::kRendezvous:
      return "rendezvous";
  }
  return "?";
}

const char* arrowColor(TimelineEdgeKind k) {
  switch (k) {
    case TimelineEdgeKind::kSync:
      return "#2b2b2bc8";
    case TimelineEdgeKind::kWait:
      return "#8e44adc8";
    case TimelineEdgeKind::kPost:
      return "#8a8a8aa0";
    case TimelineEdgeKind::kRendezvous:
      return "#d0701bc8";
  }
  return "#000000";
}

const char* opKindColor(TimelineOpKind k) {
  switch (k) {
    case TimelineOpKind::kCompute:
      return "#4e79a7";
    case TimelineOpKind::kCommunication:
      return "#f28e2b";
    case TimelineOpKind::kCopy:
      return "#76b7b2";
    case TimelineOpKind::kMemset:
      return "#bab0ac";
    case TimelineOpKind::kSync:
      return "#3b3b3b";
    case TimelineOpKind::kWait:
      return "#8e44ad";
    case TimelineOpKind::kHost:
      return "#edc948";
  }
  return "#999999";
}

const char* opKindFontColor(TimelineOpKind k) {
  return k == TimelineOpKind::kCompute || k == TimelineOpKind::kSync || k == TimelineOpKind::kWait ? "#ffffff"
                                                                                                  : "#1a1a1a";
}

}  // namespace braid::viz
