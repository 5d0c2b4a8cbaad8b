// Cross-check: on random stream-parallel programs (every way of placing the initial
// synchronization, the join, the slice index, a per-iteration temporary and its Deallocate), the
// parametric verdict and the bounded checker's agree for every binding within the bounds
// (i0 = 1..4, numberOfStreams = 1..3): a proof means the bounded checker finds nothing there,
// a bounded error means no proof, and a confirmed counterexample inside the bounds replays.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#if BRAID_HAVE_Z3

#include <cstdio>
#include <sstream>

#include "tests/verify/parametric_test_util.h"

namespace braid::verify {
namespace {

struct Shape {
  int initialSync = 0;  // 0 separate loop, 1 in the loop, 2 before SetCurrentStream, 3 none
  int join = 0;         // 0 in the loop, 1 join loop, 2 join of the first stream only, 3 none, 4 before SetCurrentStream
  int index = 0;        // the slice the iteration writes: 0 i, 1 0, 2 i + 1
  bool rawStreams = false;
  int temp = 0;         // 0 none, 1 per-iteration temporary freed in the iteration, 2 never freed
};

std::string programText(const Shape& s) {
  std::string stream = s.rawStreams ? "Stream i" : "Stream ( i % numberOfStreams )";
  std::string index = s.index == 0 ? "i" : s.index == 1 ? "0" : "( i + 1 )";
  std::ostringstream os;
  os << "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{i2}]) -> (T1_g_float[iStreamIdx2{i0}, iS3{i2}]) :\n";
  os << "  T1_g_float[iStreamIdx2{i0}, iS3{i2}] = ALLOCATE(buffer=T1_g_float[iStreamIdx2{i0}, iS3{i2}], "
        "mem_type=global, size=( i0 * i2 ), zero_init=false, resets_to_zero=false)\n";
  os << "  GetCurrentStream into Stream 0\n";
  if (s.initialSync == 0) {
    os << "  FOR i in iStreamIdx2{i0}:\n    SetCurrentStream to " << stream << "\n    Synchronize Stream 0\n";
  }
  os << "  FOR i in iStreamIdx2{i0}:\n";
  if (s.initialSync == 2) os << "    Synchronize Stream 0\n";
  os << "    SetCurrentStream to " << stream << "\n";
  if (s.initialSync == 1) os << "    Synchronize Stream 0\n";
  os << "    T2_l_float[iS4{i2}]\n       = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i2}], axis = iS0{i0}, index = i )\n";
  std::string src = "T2_l_float[iS4{i2}]";
  if (s.temp > 0) {
    os << "    T7_g_float[iS9{i2}] = ALLOCATE(mem_type=global, zero_init=false)\n";
    os << "    T7_g_float[iS9{i2}]\n       = Set( T2_l_float[iS4{i2}], cache_op=Streaming )\n";
    src = "T7_g_float[iS9{i2}]";
  }
  os << "    T3_l_float[iS5{i2}]\n       = HirAliasSelect( T1_g_float[iStreamIdx2{i0}, iS3{i2}], axis = "
        "iStreamIdx2{i0}, index = "
     << index << " )\n";
  os << "    T3_l_float[iS5{i2}]\n       = Set( " << src << ", cache_op=Streaming )\n";
  if (s.temp == 1) os << "    Deallocate T7_g_float[iS9{i2}]\n";
  if (s.join == 0) os << "    SetCurrentStream to Stream 0\n    Synchronize " << stream << "\n";
  if (s.join == 4) os << "    Synchronize " << stream << "\n    SetCurrentStream to Stream 0\n";
  if (s.join == 1 || s.join == 2 || s.join == 3) os << "  SetCurrentStream to Stream 0\n";
  if (s.join == 1) os << "  FOR i in iStreamIdx2{i0}:\n    Synchronize " << stream << "\n";
  if (s.join == 2) os << "  FOR i from 0 to 1:\n    Synchronize " << stream << "\n";
  os << "} // %HostIrContainer\n";
  return os.str();
}

void agreesWithinTheBounds() {
  Shape s;
  s.initialSync = *rc::gen::inRange(0, 4);
  s.join = *rc::gen::inRange(0, 5);
  s.index = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
  s.rawStreams = *rc::gen::arbitrary<bool>();
  s.temp = *rc::gen::inRange(0, 3);
  std::string text = programText(s);
  HostProgram p = parseHostProgram(text, "random.hir");
  ParametricOptions po;
  po.ranks = 1;
  ParametricResult r = proveProgram(p, po);
  RC_ASSERT(r.unsupported.empty());
  RC_TAG(r.proven() ? "proven" : "bug");
  bool boundedBug = false;
  for (int64_t i0 = 1; i0 <= 4; ++i0) {
    for (int64_t streams = 1; streams <= 3; ++streams) {
      VerifyOptions o;
      o.bindings = {{"i0", i0}, {"i2", 2}};
      o.ranks = 1;
      o.streams = streams;
      o.parallelismWarnings = false;
      VerifyResult b = verifyProgram(p, o);
      if (!b.ok()) boundedBug = true;
      if (r.proven()) RC_ASSERT(b.ok());
    }
  }
  if (boundedBug) RC_ASSERT(!r.proven());
  // Decided either way: a proof, or a counterexample the bounded checker confirms.
  RC_ASSERT(r.proven() || r.bugFound());
  RC_ASSERT(r.proven() != boundedBug);
  for (const auto& w : r.witnesses)
    if (w.confirmed) RC_ASSERT(!w.replay.ok());
}

// 40 random programs (each is proved and checked at 12 bindings): a few seconds.
TEST(ParametricCrossCheck, AgreesWithTheBoundedCheckerWithinTheBounds) {
  rc::detail::TestMetadata metadata;
  metadata.id = "ParametricCrossCheck/AgreesWithTheBoundedCheckerWithinTheBounds";
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = 40;
  auto result = rc::detail::checkTestable(&agreesWithinTheBounds, metadata, params);
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  ASSERT_TRUE(result.is<rc::detail::SuccessResult>()) << ss.str();
  // The random programs include correct and broken ones.
  bool proven = false, bug = false;
  for (const auto& [tags, count] : result.get<rc::detail::SuccessResult>().distribution) {
    for (const auto& t : tags) {
      proven |= t.find("proven") != std::string::npos;
      bug |= t.find("bug") != std::string::npos;
    }
  }
  EXPECT_TRUE(proven && bug) << ss.str();
  std::printf("%s\n", ss.str().c_str());
}

}  // namespace
}  // namespace braid::verify

#endif  // BRAID_HAVE_Z3
