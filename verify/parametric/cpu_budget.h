// A budget in CPU time for one Z3 query. Z3's own "timeout" parameter is wall-clock: on a loaded
// machine or under a sanitizer a query that needs 0.5 s of CPU can run out of 4 s of wall time,
// and the verdict then depends on the machine's load (docs/VERIFY.md, "Unknown answers and the CPU
// budget"). Here a watchdog thread reads the CPU clock of the thread that calls check() and
// interrupts the solver (Z3_solver_interrupt) once the query has used its CPU budget; a wall-clock
// ceiling, a multiple of the budget, still ends a query whose process gets almost no CPU.
//
// Z3 is never handed a timer of its own: Z3 4.8.12's timer (scoped_timer) returns an expired
// timer's worker thread to its pool while the timer that owns it is still alive and holds the
// worker's mutex, so a timer started inside it on the same thread (a tactic's try_for inside the
// query's timeout) takes that worker and blocks forever on the mutex its own thread holds: with a
// timeout of a few milliseconds the first query hung (docs/VERIFY.md). Z3's internal timers (the
// QF_NIA tactic's try_for) run one after the other, never inside each other, so without an outer
// timer none of them can meet an expired one.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <time.h>

#include <z3++.h>

namespace braid::verify::parametric {

// What one query may use: `cpu` of the solving thread's CPU time, and at most `wall` of wall time.
struct QueryBudget {
  std::chrono::milliseconds cpu{4000};
  std::chrono::milliseconds wall{80000};

  // The ceiling as a multiple of the CPU budget: a process getting a twentieth of a core still
  // gets its answers; one starved further ends with unknown.
  static constexpr int kWallCeilingFactor = 20;
  static QueryBudget ofCpuMs(unsigned ms);
};

// The CPU clock of one thread, readable from any thread (pthread_getcpuclockid): time the thread
// spends waiting, blocked or preempted does not advance it.
class ThreadCpuClock {
 public:
  static ThreadCpuClock ofCallingThread();
  std::chrono::nanoseconds now() const;

 private:
  explicit ThreadCpuClock(clockid_t id) : id_(id) {}
  clockid_t id_;
};

// Why a budgeted run ended.
enum class BudgetEnd {
  kInTime,       // the work returned before any limit
  kCpuSpent,     // the thread used the CPU budget: interrupted
  kWallCeiling,  // the wall-clock ceiling passed first: interrupted
};

// Watches one run at a time from its own thread (started with the first run).
class BudgetWatchdog {
 public:
  BudgetWatchdog();
  ~BudgetWatchdog();
  BudgetWatchdog(const BudgetWatchdog&) = delete;
  BudgetWatchdog& operator=(const BudgetWatchdog&) = delete;

  // Runs `work` on the calling thread. Once the thread has used `b.cpu` of CPU time since the
  // call, or `b.wall` of wall time has passed, calls `interrupt` from the watchdog thread, and
  // again every few milliseconds until `work` returns (an interrupt may come before the work is
  // ready to receive it). `interrupt` is never called after run() returns.
  BudgetEnd run(const QueryBudget& b, const std::function<void()>& work, const std::function<void()>& interrupt);

  // The CPU time the calling thread used during the last run.
  std::chrono::nanoseconds lastCpu() const { return lastCpu_; }

 private:
  struct State;
  std::unique_ptr<State> st_;
  std::chrono::nanoseconds lastCpu_{0};
};

// `s.check()` within the budget, interrupting the solver when it runs out. `reason` receives why
// the answer is unknown: "CPU budget of 4000 ms spent", "wall-clock ceiling of 80000 ms reached
// (1200 ms of CPU used)", or Z3's own reason_unknown; "" when decided.
z3::check_result checkWithin(BudgetWatchdog& dog, z3::solver& s, const QueryBudget& b, std::string& reason);

}  // namespace braid::verify::parametric
