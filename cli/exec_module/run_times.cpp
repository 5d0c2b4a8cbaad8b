#include "cli/exec_module/run_times.h"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace braid::cli {

namespace {

using json = nlohmann::json;

std::string partFile(const std::string& file, int64_t rank) { return file + ".rank" + std::to_string(rank) + ".part"; }

json rankTimes(const exec::RunTimings& t, int64_t rank) {
  return {{"rank", rank}, {"wall_us", t.wallUs}, {"issue_us", t.issueUs}};
}

json readPart(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read a rank's run times");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace

void startRunTimes(const std::string& file) {
  std::ofstream out(file, std::ios::trunc);
  if (!out) throw Error("--run-times " + file + ": cannot write");
}

void appendRunTimes(const RunTimesContext& c, const exec::RunTimings& t, exec::Communicator& comm) {
  const int64_t rank = comm.rank(), world = comm.size();
  if (world > 1) {
    std::ofstream part(partFile(c.file, rank), std::ios::trunc);
    part << rankTimes(t, rank).dump();
    if (!part) throw Error(partFile(c.file, rank) + ": cannot write a rank's run times");
  }
  comm.barrier();
  if (rank != 0) return;
  json line = {{"program", c.program},
               {"settings", c.settings},
               {"graph", t.graph},
               {"cool_down_ms", c.coolDownMs},
               {"warmup_runs", t.warmupRuns},
               {"inputs", c.inputs}};
  json ranks = json::array();
  if (world == 1) ranks.push_back(rankTimes(t, 0));
  for (int64_t k = 0; k < world && world > 1; ++k) {
    ranks.push_back(readPart(partFile(c.file, k)));
    ::unlink(partFile(c.file, k).c_str());
  }
  line["ranks"] = std::move(ranks);
  std::ofstream out(c.file, std::ios::app);
  out << line.dump() << "\n";
  if (!out) throw Error("--run-times " + c.file + ": cannot write");
}

}  // namespace braid::cli
