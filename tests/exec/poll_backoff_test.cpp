#include "exec/poll_backoff.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace braid::exec {
namespace {

using us = std::chrono::microseconds;

TEST(PollBackoff, SpinsInsideTheWindowThenSleepsDoublingUpToTheCap) {
  PollBackoff b(us(100), us(16));
  EXPECT_EQ(b.next(us(0)), us(0));
  EXPECT_EQ(b.next(us(99)), us(0));
  std::vector<int64_t> sleeps;
  for (int i = 0; i < 7; ++i) sleeps.push_back(b.next(us(100 + i)).count());
  EXPECT_EQ(sleeps, (std::vector<int64_t>{1, 2, 4, 8, 16, 16, 16}));
}

TEST(PollBackoff, ZeroSpinSleepsFromTheFirstPoll) {
  PollBackoff b(us(0), us(200));
  EXPECT_EQ(b.next(us(0)), us(1));
  for (int i = 0; i < 20; ++i) b.next(us(i));
  EXPECT_EQ(b.next(us(50)), us(200));
}

TEST(PollBackoff, SpinWindowFromTheEnvironment) {
  EXPECT_EQ(PollBackoff::spinFrom(std::nullopt), us(20000));
  EXPECT_EQ(PollBackoff::spinFrom("0"), us(0));
  EXPECT_EQ(PollBackoff::spinFrom("1500"), us(1500));
  EXPECT_EQ(PollBackoff::spinFrom("10000000"), us(10000000));
  for (const char* bad : {"", "-1", "1e3", "12us", "10000001", "999999999999"}) {
    try {
      PollBackoff::spinFrom(std::string(bad));
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("BRAID_POLL_SPIN_US"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace braid::exec
