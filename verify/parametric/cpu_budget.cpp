#include "verify/parametric/cpu_budget.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include <pthread.h>

#include "ir/error.h"

namespace braid::verify::parametric {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

QueryBudget QueryBudget::ofCpuMs(unsigned ms) {
  QueryBudget b;
  b.cpu = milliseconds(std::max(1u, ms));
  b.wall = b.cpu * kWallCeilingFactor;
  return b;
}

ThreadCpuClock ThreadCpuClock::ofCallingThread() {
  clockid_t id;
  if (pthread_getcpuclockid(pthread_self(), &id) != 0) throw Error("cannot read this thread's CPU clock");
  return ThreadCpuClock(id);
}

nanoseconds ThreadCpuClock::now() const {
  timespec ts{};
  if (clock_gettime(id_, &ts) != 0) throw Error("cannot read a thread's CPU clock");
  return std::chrono::seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec);
}

// Everything the watchdog thread shares with run(), under `m`.
struct BudgetWatchdog::State {
  std::mutex m;
  std::condition_variable cv;
  std::thread thread;
  bool stop = false;
  bool armed = false;
  uint64_t run = 0;  // which run is armed (a new one must not inherit the last one's waits)
  std::optional<ThreadCpuClock> clock;
  nanoseconds cpu0{0};
  steady_clock::time_point wall0;
  QueryBudget budget;
  const std::function<void()>* interrupt = nullptr;
  BudgetEnd fired = BudgetEnd::kInTime;

  void watch();
};

// Once fired, the interrupt is repeated this often until the work returns: Z3 drops an interrupt
// that comes before check() has installed its handler.
static constexpr milliseconds kRepeat{5};
// The shortest wait between two readings of the clock.
static constexpr std::chrono::microseconds kMinWait{200};

void BudgetWatchdog::State::watch() {
  std::unique_lock<std::mutex> lk(m);
  while (true) {
    cv.wait(lk, [&] { return stop || armed; });
    if (stop) return;
    const uint64_t mine = run;
    while (armed && run == mine && !stop) {
      const steady_clock::time_point now = steady_clock::now();
      const nanoseconds used = clock->now() - cpu0;
      const nanoseconds elapsed = now - wall0;
      if (fired == BudgetEnd::kInTime) {
        if (used >= budget.cpu) {
          fired = BudgetEnd::kCpuSpent;
        } else if (elapsed >= budget.wall) {
          fired = BudgetEnd::kWallCeiling;
        }
      }
      nanoseconds wait = kRepeat;
      if (fired != BudgetEnd::kInTime) {
        (*interrupt)();  // under `m`: run() cannot return (and its solver go away) meanwhile
      } else {
        // A thread's CPU clock advances no faster than wall time, so neither limit can pass
        // before the nearer of the two remainders has elapsed.
        wait = std::max<nanoseconds>(std::min<nanoseconds>(budget.cpu - used, budget.wall - elapsed), kMinWait);
      }
      cv.wait_for(lk, wait, [&] { return !armed || run != mine || stop; });
    }
  }
}

BudgetWatchdog::BudgetWatchdog() : st_(std::make_unique<State>()) {}

BudgetWatchdog::~BudgetWatchdog() {
  {
    std::lock_guard<std::mutex> lk(st_->m);
    st_->stop = true;
  }
  st_->cv.notify_all();
  if (st_->thread.joinable()) st_->thread.join();
}

BudgetEnd BudgetWatchdog::run(const QueryBudget& b, const std::function<void()>& work,
                              const std::function<void()>& interrupt) {
  const ThreadCpuClock clock = ThreadCpuClock::ofCallingThread();
  const nanoseconds cpu0 = clock.now();
  {
    std::lock_guard<std::mutex> lk(st_->m);
    if (!st_->thread.joinable()) st_->thread = std::thread([s = st_.get()] { s->watch(); });
    st_->clock = clock;
    st_->cpu0 = cpu0;
    st_->wall0 = steady_clock::now();
    st_->budget = b;
    st_->interrupt = &interrupt;
    st_->fired = BudgetEnd::kInTime;
    st_->armed = true;
    ++st_->run;
  }
  st_->cv.notify_all();
  // Disarms when the work returns or throws, after an interrupt under way has finished.
  struct Disarm {
    State& st;
    BudgetEnd& end;
    ~Disarm() {
      {
        std::lock_guard<std::mutex> lk(st.m);
        st.armed = false;
        st.interrupt = nullptr;
        end = st.fired;
      }
      st.cv.notify_all();
    }
  };
  BudgetEnd end = BudgetEnd::kInTime;
  {
    Disarm disarm{*st_, end};
    work();
  }
  lastCpu_ = clock.now() - cpu0;
  return end;
}

z3::check_result checkWithin(BudgetWatchdog& dog, z3::solver& s, const QueryBudget& b, std::string& reason) {
  z3::check_result r = z3::unknown;
  const BudgetEnd end = dog.run(b, [&] { r = s.check(); }, [&] { Z3_solver_interrupt(s.ctx(), s); });
  reason.clear();
  if (r != z3::unknown) return r;  // Z3's answer, even when it came as the budget ran out
  auto ms = [](nanoseconds d) { return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()); };
  switch (end) {
    case BudgetEnd::kCpuSpent:
      reason = "CPU budget of " + ms(b.cpu) + " ms spent";
      break;
    case BudgetEnd::kWallCeiling:
      reason = "wall-clock ceiling of " + ms(b.wall) + " ms reached (" + ms(dog.lastCpu()) + " ms of CPU used)";
      break;
    case BudgetEnd::kInTime:
      reason = s.reason_unknown();
      break;
  }
  return r;
}

}  // namespace braid::verify::parametric
