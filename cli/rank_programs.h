// `--rank-program` for the commands that run a host program on every rank (verify, sim): one
// program per rank, as nvFuser's multi-device executor lowers and prints them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/host_ir.h"

namespace braid::cli {

struct RankPrograms {
  std::vector<std::unique_ptr<HostProgram>> owned;
  std::map<int64_t, const HostProgram*> byRank;
  bool empty() const { return byRank.empty(); }
  // "a.hir (rank 0), b.hir (rank 1)"
  std::string describe() const;
};

// Adds `--rank-program R=FILE` (repeatable; FILE alone when it holds `Device ID = N` sections).
void addRankProgramOption(CLI::App& sub, std::vector<std::string>& specs);

// Reads every spec: `R=FILE` is rank R's program; a FILE of `Device ID = N` sections gives one
// program per device. Throws Error for a bad spec, a rank given twice, an unreadable file, and
// ParseError for a malformed program.
RankPrograms loadRankPrograms(const std::vector<std::string>& specs);

// Checks that every rank in 0..ranks-1 has a program (when there is no program for all ranks).
void requireEveryRank(const RankPrograms& rp, int64_t ranks);

}  // namespace braid::cli
