// What each fuzz target checks on one input. The libFuzzer mains (fuzz/*.cpp) and the regression
// test over the inputs fuzzing found (tests/fuzz) call the same functions, so a reproducer kept
// in tests/fuzz/inputs/ is checked exactly as the fuzzer checked it.
#pragma once
#include <stdexcept>
#include <string_view>

namespace braid::fuzz {

// A property an input broke (besides crashing): thrown, never caught by the checks, so libFuzzer
// reports it as a crash and the regression test as a failure.
class CheckFailure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Each returns normally when braid handled the input (parsed it, or refused it with an Error).
// Any other exception, or a sanitizer report, is a bug.
void checkHostIrParser(std::string_view text);
void checkScalarParser(std::string_view text);
void checkVerify(std::string_view text);
void checkMachineJson(std::string_view text);
void checkTimelineJson(std::string_view text);
void checkMeasurementsJson(std::string_view text);

}  // namespace braid::fuzz
