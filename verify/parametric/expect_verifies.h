// GoogleTest assertions for pass authors: EXPECT_VERIFIES(program) passes when the program is
// proven correct (parametric mode when braid has Z3 and the program has symbolic sizes or
// numberOfStreams is left open; the bounded checker otherwise), and fails with the checker's full
// report (counterexample, bindings, replay command) otherwise.
//
//   #include "verify/parametric/expect_verifies.h"
//   HostProgram p = lower(fusion, options, devices);
//   EXPECT_VERIFIES(p);                       // every property, for every stream count
//   EXPECT_VERIFIES_WITH(p, options);         // braid::verify::CheckOptions: bindings, ranks, mode
//
// Include it only in tests (it includes gtest).
#pragma once

#include <gtest/gtest.h>

#include "verify/parametric/program_check.h"

namespace braid::verify::testing {

inline ::testing::AssertionResult verifies(const HostProgram& p, CheckOptions o = {}) {
  // Lowered programs have concrete sizes: prove them for every stream count when possible.
  if (o.mode == VerifyMode::kAuto && parametricAvailable()) o.mode = VerifyMode::kParametric;
  try {
    ProgramCheck c = checkProgram(p, o);
    if (c.ok) return ::testing::AssertionSuccess() << c.summary;
    return ::testing::AssertionFailure() << "the program does not verify (" << verifyModeName(c.mode)
                                         << " mode): " << c.summary << "\n"
                                         << c.report;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the verifier rejected the program: " << e.what();
  }
}

}  // namespace braid::verify::testing

#define EXPECT_VERIFIES(program) EXPECT_TRUE(::braid::verify::testing::verifies(program))
#define ASSERT_VERIFIES(program) ASSERT_TRUE(::braid::verify::testing::verifies(program))
#define EXPECT_VERIFIES_WITH(program, options) EXPECT_TRUE(::braid::verify::testing::verifies(program, options))
