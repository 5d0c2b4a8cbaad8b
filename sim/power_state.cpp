#include "sim/power_state.h"

#include <cmath>
#include <limits>

namespace braid::sim {

namespace {
constexpr double kEps = 1e-9;
}

bool PowerState::capped() const { return m_.enabled() && level_ >= m_.capLoad - kEps && load_ > m_.capLoad + kEps; }

void PowerState::advance(double us) {
  if (!m_.enabled() || us <= 0) return;
  if (capped()) {
    level_ = m_.capLoad;
    return;
  }
  const double next = load_ + (level_ - load_) * std::exp(-us / m_.timeConstantUs);
  // Rising toward a load above the cap, the level stops at the cap (the clocks drop there).
  level_ = load_ > m_.capLoad && level_ <= m_.capLoad ? std::min(next, m_.capLoad) : next;
}

void PowerState::setLoad(double load) { load_ = std::max(0.0, load); }

// Power at relative clock c is taken as linear between the cap (at 1 / cappedSlowdown, a full
// load) and a full load (at c = 1): a load L draws L * p(c), and the clocks settle where that is
// the cap. At L = 1 that is 1 / cappedSlowdown; at L = capLoad full clocks.
double PowerState::computeFactor() const {
  if (!capped()) return 1;
  const double cap = m_.capLoad;
  const double clock = 1 - (1 - cap / load_) * (1 - 1 / m_.cappedSlowdown) / (1 - cap);
  return 1 / std::max(clock, 1e-3);
}

double PowerState::usUntilCap() const {
  if (!m_.enabled() || load_ <= m_.capLoad + kEps) return std::numeric_limits<double>::infinity();
  if (level_ >= m_.capLoad - kEps) return 0;
  return m_.timeConstantUs * std::log((load_ - level_) / (load_ - m_.capLoad));
}

double idleLevel(const PowerModel& m, double level, double us) {
  PowerState s(m, level);
  s.setLoad(0);
  s.advance(us);
  return s.level();
}

double runFullLoad(PowerState& s, double baseUs, double load) {
  s.setLoad(load);
  const double until = s.usUntilCap();
  if (until >= baseUs) {
    s.advance(baseUs);
    return baseUs;
  }
  s.advance(until);
  const double left = (baseUs - until) * s.computeFactor();  // the rest at the cap's clocks
  s.advance(left);
  return until + left;
}

}  // namespace braid::sim
