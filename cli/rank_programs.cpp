#include "cli/rank_programs.h"

#include <charconv>

#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/verifier.h"

namespace braid::cli {

std::string RankPrograms::describe() const {
  std::string s;
  for (const auto& [rank, p] : byRank)
    s += (s.empty() ? "" : ", ") + p->sourceName + " (rank " + std::to_string(rank) + ")";
  return s;
}

void addRankProgramOption(CLI::App& sub, std::vector<std::string>& specs) {
  sub.add_option("--rank-program", specs,
                 "RANK=FILE: the program nvFuser printed for that device (repeatable); a FILE alone holds every "
                 "device's program after 'Device ID = N' lines");
}

RankPrograms loadRankPrograms(const std::vector<std::string>& specs) {
  RankPrograms rp;
  auto add = [&](int64_t rank, HostProgram p, const std::string& spec) {
    verifyWellFormed(p);
    if (rp.byRank.count(rank)) throw Error("--rank-program: rank " + std::to_string(rank) + " is given twice ('" + spec + "')");
    rp.owned.push_back(std::make_unique<HostProgram>(std::move(p)));
    rp.byRank[rank] = rp.owned.back().get();
  };
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      auto dumps = parseDeviceDumpsFile(spec);
      if (dumps.empty())
        throw Error("--rank-program '" + spec + "': give RANK=FILE, or a file with a 'Device ID = N' line before each "
                    "device's program");
      for (auto& [rank, p] : dumps) {
        p.sourceName = spec;
        add(rank, std::move(p), spec);
      }
      continue;
    }
    std::string r = spec.substr(0, eq), file = spec.substr(eq + 1);
    int64_t rank = -1;
    auto [ptr, ec] = std::from_chars(r.data(), r.data() + r.size(), rank);
    if (ec != std::errc() || ptr != r.data() + r.size() || rank < 0 || file.empty())
      throw Error("--rank-program '" + spec + "': expected RANK=FILE with a rank >= 0");
    add(rank, parseHostProgramFile(file), spec);
  }
  return rp;
}

void requireEveryRank(const RankPrograms& rp, int64_t ranks) {
  std::string missing;
  for (int64_t r = 0; r < ranks; ++r)
    if (!rp.byRank.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (!missing.empty())
    throw Error("no program for rank(s) " + missing + " of " + std::to_string(ranks) +
                ": give --rank-program RANK=FILE for each, or a program for all ranks as the target");
}

}  // namespace braid::cli
