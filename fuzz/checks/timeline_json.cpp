// Fuzz check: the timeline JSON loader (`braid viz` input). A malformed document must be an Error;
// one that loads must write back to JSON that loads again.
#include <cstdint>
#include <string>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "ir/timeline.h"

namespace braid::fuzz {

void checkTimelineJson(std::string_view text) {
  Timeline t;
  try {
    t = timelineFromJson(std::string(text), "fuzz.json");
  } catch (const Error&) {
    return;
  }
  (void)t.makespanUs();
  try {
    (void)timelineFromJson(timelineToJson(t), "written.json");
  } catch (const Error& e) {
    throw CheckFailure(std::string("timelineToJson(t) does not load: ") + e.what());
  }
}

}  // namespace braid::fuzz
