// How a host thread that polls the device for completion (a communicator's drain, its barrier)
// paces its polls. It spins (yields between polls) for a while, then sleeps, doubling the sleep up
// to a cap. Sleeping from the first poll, as drain did before, delays the host's view of a
// completion by up to one sleep: with 200 us sleeps the two ranks left a barrier up to 200 us
// apart, and the rank that left first counted the gap in its next timed run (one graph replay
// measured 632 us on one rank and 740 on the other; docs/EXEC.md, "Polling"). Polling stays
// non-blocking so the timeout and the communicators' error checks still run between polls.
// Plain C++: tests/exec/poll_backoff_test.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace braid::exec {

class PollBackoff {
 public:
  using us = std::chrono::microseconds;
  // `spin`: how long to poll without sleeping; then sleeps of 1, 2, 4, ... us up to `maxSleep`.
  explicit PollBackoff(us spin = defaultSpin(), us maxSleep = us(200)) : spin_(spin), maxSleep_(maxSleep) {}

  // The pause before the next poll when `elapsed` has passed since polling began: zero (yield)
  // inside the spin window, else the next sleep of the doubling sequence.
  us next(us elapsed);

  // BRAID_POLL_SPIN_US, read once per process (default 20000 us: 20 ms); 0 sleeps from the first
  // poll. A value that is not an integer in [0, 10^7] throws braid::Error naming the variable.
  static us defaultSpin();
  // The same rule on a given value (nullopt: unset); what defaultSpin applies to the environment.
  static us spinFrom(const std::optional<std::string>& env);

 private:
  us spin_;
  us maxSleep_;
  us sleep_{0};
};

}  // namespace braid::exec
