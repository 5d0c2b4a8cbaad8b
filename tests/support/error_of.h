// The message of the braid::Error a callable throws, for tests that check error texts.
#pragma once

#include <string>

#include "ir/error.h"

namespace braid::testing {

// "" when `f` throws nothing; other exception types propagate (and fail the test).
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace braid::testing
