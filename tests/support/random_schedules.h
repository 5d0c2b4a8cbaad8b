// Random fusions scheduled as nvFuser's users schedule them: logical shapes, then outer splits,
// merges and parallel types (Stream, DIDx) on inputs and outputs, for the lowering property tests
// (tests/passes: every lowered program parses back and verifies; tests/exec: it matches its
// reference on CPU ranks). Deterministic in the generator's state, so that a test can build the
// same fusion twice (one to lower, one to evaluate as the reference).
#pragma once

#include <memory>
#include <random>
#include <string>

#include "ir/lowering_options.h"
#include "ir/ops.h"

namespace braid::random_schedules {

struct ScheduledCase {
  std::unique_ptr<Fusion> fusion;
  LoweringOptions lowering;
  std::string label;  // what was drawn, for failure messages
};

// A fusion for `devices` ranks on the mesh {0 .. D-1}. Row counts are D * (S * q + extra): device
// splits of the rows divide, Stream splits may leave a shorter last chunk (never an empty one).
inline ScheduledCase randomScheduledFusion(std::mt19937_64& rng, int64_t devices) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t D = devices;
  const int64_t S = pick(1, 4);
  // How the inputs are sharded: 0 replicated, 1 rows (outer split), 2 columns, 3 the merged
  // [m * n] axis, 4 rows in S chunks each sharded ([S, DIDx(D), ...], two outer splits).
  const int64_t sharding = pick(0, 4);
  const int64_t m = sharding == 4 ? S * D * pick(1, 3) : D * (S * pick(S, S + 1) + pick(0, 1));
  const int64_t n = D * pick(1, 2);
  const DeviceMesh mesh = DeviceMesh::range(D);
  ScheduledCase c;
  c.fusion = std::make_unique<Fusion>();
  Fusion& f = *c.fusion;
  std::string label = "D=" + std::to_string(D) + " S=" + std::to_string(S) + " m=" + std::to_string(m) +
                      " n=" + std::to_string(n) + ":";

  const char* sharding_names[] = {"replicated", "rows DIDx", "columns DIDx", "merged DIDx", "[S, DIDx] rows"};
  label += std::string(" inputs ") + sharding_names[sharding];
  auto input = [&] {
    TensorView* tv = f.makeTensor({m, n});
    tv->setDeviceMesh(mesh);
    switch (sharding) {
      case 1: tv->outerSplit(0, D)->parallelize(0, ParallelType::kDIDx); break;
      case 2: tv->outerSplit(1, D)->parallelize(1, ParallelType::kDIDx); break;
      case 3: tv->merge(0)->outerSplit(0, D)->parallelize(0, ParallelType::kDIDx); break;
      case 4: tv->outerSplit(0, S)->outerSplit(1, D)->parallelize(1, ParallelType::kDIDx); break;
      default: break;
    }
    f.addInput(tv);
    return tv;
  };
  TensorView* x = input();
  const int64_t ops = pick(1, 3);
  for (int64_t i = 0; i < ops; ++i) {
    const int64_t op = pick(0, 9);
    if (op == 9) {
      // Through a merge and a split of all axes (shardings follow the outermost axis).
      x = reshape(reshape(x, {m * n}), {m, n});
      label += " reshape(flat)";
      continue;
    }
    switch (op % 5) {
      case 0: x = neg(x); label += " neg"; break;
      case 1: x = relu(x); label += " relu"; break;
      case 2: x = add(x, input()); label += " add"; break;
      case 3: x = mul(x, input()); label += " mul"; break;
      default: x = set(x); label += " set"; break;
    }
  }
  // A reduction over the columns: across devices when they are sharded (an Allreduce).
  if (pick(0, 3) == 0) {
    x = sum(x, {1});
    label += " sum(columns)";
  }
  // The output: left to propagation, or scheduled by the user (its mesh; replicated unless split).
  const bool user = pick(0, 1) == 1;
  if (user) {
    x = set(x);
    x->setDeviceMesh(mesh);
    label += " set(user's)";
  }
  f.addOutput(x);
  // Its Stream axis: none, rows, columns or the merged axis in S chunks; half of the time the
  // one that suits the inputs' sharding (as a user would choose), otherwise any.
  const bool reduced = x->logical().size() > 1 && x->logical()[1]->isReduction();
  const int64_t suited[] = {1, 2, 1, 3, 1};
  int64_t stream = pick(0, 1) ? suited[sharding] : pick(0, 3);
  if (reduced && stream >= 2) stream = 1;
  if (x->loop().size() < 2 && stream >= 2) stream = 1;
  auto serial = [&](size_t i) { return i < x->loop().size() && x->loop()[i]->parallelType() == ParallelType::kSerial; };
  if (stream == 1 && serial(0)) {
    x->outerSplit(0, S)->parallelize(0, ParallelType::kStream);
    label += " Stream(rows)";
  } else if (stream == 2 && serial(1)) {
    x->outerSplit(1, S)->parallelize(1, ParallelType::kStream);
    label += " Stream(columns)";
  } else if (stream == 3 && serial(0) && serial(1)) {
    x->merge(0)->outerSplit(0, S)->parallelize(0, ParallelType::kStream);
    label += " Stream(merged)";
  }
  c.lowering.streams = S;
  c.lowering.protocol = static_cast<StreamProtocol>(pick(0, 2));
  c.lowering.indexing = pick(0, 1) ? StreamIndexing::kRaw : StreamIndexing::kModulo;
  label += std::string(" protocol ") + streamProtocolName(c.lowering.protocol) +
           (c.lowering.indexing == StreamIndexing::kRaw ? " raw" : " modulo");
  c.label = label;
  return c;
}

}  // namespace braid::random_schedules
