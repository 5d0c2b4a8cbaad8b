// End-to-end checks of bad input: each `braid ARGS` must exit 2 with MESSAGE on stderr.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/cli_runner.h"

namespace braid::testing {

struct BadInput {
  std::string args;
  std::string message;  // a part of stderr
};

inline void expectBadInput(const std::vector<BadInput>& cases) {
  for (const auto& c : cases) {
    CliResult r = runBraid(c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace braid::testing
