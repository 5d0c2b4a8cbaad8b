// Property: random fusions with random Stream / DIDx schedules either lower, and the printed
// program parses back to the same program, or fail with a clear NotLowerableError. Nothing
// else (no crash, no internal error, no other exception).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <random>

#include "ir/error.h"
#include "lowering_test_util.h"
#include "tests/support/random_schedules.h"
#include "verify/checker.h"

namespace braid {
namespace {

using namespace testing_util;

TEST(LoweringPropertyTest, RandomFusionsLowerOrSayWhyNot) {
  const bool ok = rc::check("random fusions lower or fail clearly", [] {
    const int d = *rc::gen::inRange(1, 5);
    const int s = *rc::gen::inRange(1, 5);
    const int n_ops = *rc::gen::inRange(1, 5);
    Fusion f;
    DeviceMesh mesh = DeviceMesh::range(d);
    // Input [s, d, 4, 6]: explicit stream and device axes, as the catalog builds them.
    TensorView* x = f.makeTensor({s, d, 4, 6});
    x->setDeviceMesh(mesh);
    const int did_in = *rc::gen::inRange(-1, 4);
    if (did_in >= 0) x->parallelize(did_in, ParallelType::kDIDx);
    f.addInput(x);
    TensorView* w = f.makeTensor({6, 6});
    w->setDeviceMesh(mesh);
    f.addInput(w);
    TensorView* cur = x;
    std::vector<TensorView*> made;
    for (int i = 0; i < n_ops; ++i) {
      const int op = *rc::gen::inRange(0, 7);
      const int rank = static_cast<int>(cur->logical().size()) -
                       static_cast<int>(std::count_if(cur->logical().begin(), cur->logical().end(),
                                                      [](const IterDomain* id) { return id->isReduction(); }));
      TensorView* next = nullptr;
      switch (op) {
        case 0: next = set(cur); break;
        case 1: next = add(cur, cur); break;
        case 2: next = gelu(cur); break;
        case 3: next = rank > 1 ? sum(cur, {*rc::gen::inRange(0, rank)}) : set(cur); break;
        case 4: {
          // matmul needs the contracted (last data) axis to match w's 6 rows.
          const IterDomain* last = nullptr;
          for (const IterDomain* id : cur->logical())
            if (!id->isReduction()) last = id;
          next = last != nullptr && last->extent() == Scalar(6) && rank >= 2 ? matmul(cur, w) : set(cur);
          break;
        }
        case 5: {
          std::vector<bool> flags(static_cast<size_t>(rank + 1), false);
          flags[static_cast<size_t>(*rc::gen::inRange(0, rank + 1))] = true;
          next = broadcast(cur, flags);
          break;
        }
        default: {
          std::vector<int64_t> perm(static_cast<size_t>(rank));
          for (int k = 0; k < rank; ++k) perm[static_cast<size_t>(k)] = rank - 1 - k;
          next = permute(cur, perm);
          break;
        }
      }
      next->setDeviceMesh(mesh);
      const int nr = static_cast<int>(next->logical().size());
      const int stream_axis = *rc::gen::inRange(-2, nr);
      if (stream_axis >= 0 && !next->logical()[static_cast<size_t>(stream_axis)]->isReduction())
        next->parallelize(stream_axis, ParallelType::kStream);
      const int did_axis = *rc::gen::inRange(-3, nr);
      if (did_axis >= 0 && !next->logical()[static_cast<size_t>(did_axis)]->isStream())
        next->parallelize(did_axis, ParallelType::kDIDx);
      made.push_back(next);
      cur = next;
    }
    f.addOutput(cur);
    if (made.size() > 1 && *rc::gen::arbitrary<bool>()) f.addOutput(made.front());

    LoweringOptions o;
    o.protocol = *rc::gen::arbitrary<bool>() ? StreamProtocol::kInLoopSync : StreamProtocol::kSeparateSyncLoop;
    o.indexing = *rc::gen::arbitrary<bool>() ? StreamIndexing::kRaw : StreamIndexing::kModulo;
    o.pipeline = *rc::gen::arbitrary<bool>() ? PipelineKind::kP2P : PipelineKind::kCollective;
    o.ringBuffers = o.indexing == StreamIndexing::kModulo && *rc::gen::arbitrary<bool>();
    o.streams = s;
    try {
      HostProgram p = lower(f, o, d);
      std::string why = roundTrip(p);
      RC_ASSERT(why == "");
      // Basic sanity: every Wait follows its communication, no output is deallocated.
      for (const Deallocate* dl : findAll<Deallocate>(p.body()))
        for (const TensorView* out : p.outputs()) RC_ASSERT(dl->tv != out);
    } catch (const NotLowerableError& e) {
      RC_ASSERT(std::string(e.what()).size() > 20);
      RC_TAG(std::string(e.what()).substr(0, 70));
    }
  });
  EXPECT_TRUE(ok);
}

// Property: fusions scheduled as nvFuser's users write them (outer splits and merges of logical
// axes, parallelized on Stream and DIDx; shorter last chunks) either lower, parse back and verify
// with no error for their world size and stream count, or fail with a NotLowerableError. At
// least a third of them must lower (the generator also draws what nvFuser refuses too, such as
// gathering a column-sharded tensor: "Resharding on an inner axis").
TEST(LoweringPropertyTest, SplitAndMergedSchedulesLowerAndVerify) {
  int lowered = 0, refused = 0;
  const bool ok = rc::check("split and merged schedules lower and verify", [&] {
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    const int64_t d = *rc::gen::inRange(1, 5);
    std::mt19937_64 rng(seed);
    random_schedules::ScheduledCase c = random_schedules::randomScheduledFusion(rng, d);
    RC_TAG(c.lowering.streams);
    try {
      HostProgram p = lower(*c.fusion, c.lowering, d);
      ++lowered;
      RC_ASSERT(roundTrip(p) == "");
      verify::VerifyOptions o;
      o.ranks = d;
      o.streams = c.lowering.streams;
      o.parallelismWarnings = false;
      verify::VerifyResult r = verify::verifyProgram(p, o);
      if (!r.ok()) RC_FAIL(c.label + "\n" + verify::formatReport(r) + print(p));
    } catch (const NotLowerableError& e) {
      ++refused;
      RC_ASSERT(std::string(e.what()).size() > 20);
      RC_TAG(std::string(e.what()).substr(0, 90));
    }
  });
  EXPECT_TRUE(ok);
  EXPECT_GT(3 * lowered, lowered + refused) << lowered << " lowered, " << refused << " refused";
}

}  // namespace
}  // namespace braid
