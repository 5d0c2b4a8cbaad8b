#include "exec/poll_backoff.h"

#include <algorithm>
#include <cstdlib>

#include "ir/error.h"

namespace braid::exec {

PollBackoff::us PollBackoff::next(us elapsed) {
  if (elapsed < spin_) return us(0);
  sleep_ = std::min(maxSleep_, sleep_ == us(0) ? us(1) : sleep_ * 2);
  return sleep_;
}

PollBackoff::us PollBackoff::spinFrom(const std::optional<std::string>& env) {
  constexpr int64_t kDefault = 20000, kMax = 10000000;
  if (!env) return us(kDefault);
  const std::string& s = *env;
  int64_t v = 0;
  bool ok = !s.empty() && s.size() <= 8 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (ok) v = std::stoll(s);
  if (!ok || v > kMax)
    throw Error("BRAID_POLL_SPIN_US: expected microseconds in 0.." + std::to_string(kMax) + ", got \"" + s + "\"");
  return us(v);
}

PollBackoff::us PollBackoff::defaultSpin() {
  static const us spin = [] {
    const char* e = std::getenv("BRAID_POLL_SPIN_US");
    return spinFrom(e ? std::optional<std::string>(e) : std::nullopt);
  }();
  return spin;
}

}  // namespace braid::exec
