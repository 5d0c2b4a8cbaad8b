// `braid tune --confirm` (see tune_confirm.h).
#include "cli/tune_confirm.h"

#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace braid::cli {
namespace {

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `argv` (argv[0]: this executable), returns its exit code and its output (stdout and
// stderr together).
std::pair<int, std::string> runSelf(const std::vector<std::string>& args) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw Error("cannot find the braid executable to run the configurations: " + ec.message());
  std::string cmd = shellQuote(self);
  for (const auto& a : args) cmd += " " + shellQuote(a);
  cmd += " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw Error("cannot start braid run");
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = ::pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return {code, out};
}

std::string lastLines(const std::string& s, size_t n) {
  size_t at = s.size();
  for (size_t i = 0; i < n && at > 0; ++i) {
    at = s.rfind('\n', at - 1);
    if (at == std::string::npos) return s;
  }
  return s.substr(at + 1);
}

}  // namespace

bool ConfirmResult::bestConfirmed() const {
  const ConfirmRow* b = measuredBest();
  return b && !rows.empty() && b == &rows.front();
}

const ConfirmRow* ConfirmResult::measuredBest() const {
  const ConfirmRow* best = nullptr;
  for (const auto& r : rows)
    if (!best || r.measuredUs < best->measuredUs) best = &r;
  return best;
}

std::vector<size_t> confirmCandidates(const sim::TuneResult& r, int64_t count) {
  std::vector<size_t> out;
  for (size_t i = 0; i < r.ranked.size() && static_cast<int64_t>(out.size()) < count; ++i)
    if (r.ranked[i].ok()) out.push_back(i);
  if (r.serial && std::find(out.begin(), out.end(), *r.serial) == out.end()) out.push_back(*r.serial);
  return out;
}

std::vector<std::string> confirmRunArgs(const ConfirmOptions& o, const sim::SweepConfig& c) {
  std::vector<std::string> a = {"run", o.target};
  a.insert(a.end(), o.workloadArgs.begin(), o.workloadArgs.end());
  for (const auto& [k, v] : c) {
    if (v == "off") continue;  // a schedule switched off: braid run's default
    a.push_back("--" + k);
    if (v != "on") a.push_back(v);  // --defer-waits and --prefetch are plain flags
  }
  for (const std::string& s : {std::string("--backend"), o.backend, std::string("--ranks"), std::to_string(o.ranks),
                               std::string("--repeat"), std::to_string(o.repeat), std::string("--timeout"),
                               std::to_string(o.timeoutSec)})
    a.push_back(s);
  if (o.graph) a.push_back("--graph");
  a.push_back("--no-check");
  a.push_back("--no-poison");
  return a;
}

double measuredWallUs(const std::string& output) {
  static const std::regex line(R"(rank ([0-9]+) timing \([^)]*\): wall ([0-9.eE+-]+) us)");
  double worst = -1;
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    worst = std::max(worst, std::stod((*it)[2].str()));
  if (worst < 0) throw Error("braid run printed no timing line");
  return worst;
}

ConfirmResult confirmTune(const sim::TuneResult& r, const ConfirmOptions& o) {
  ConfirmResult c;
  c.backend = o.backend;
  c.repeat = o.repeat;
  c.graph = o.graph;
  for (size_t i : confirmCandidates(r, o.count)) {
    const sim::SweepOutcome& s = r.ranked[i];
    std::vector<std::string> args = confirmRunArgs(o, s.config);
    auto [code, out] = runSelf(args);
    if (code != 0)
      throw Error("--confirm: braid run of " + sim::configStr(s.config) + " failed (exit " + std::to_string(code) +
                  "):\n" + lastLines(out, 8));
    ConfirmRow row;
    row.config = s.config;
    row.predictedRank = i + 1;
    row.predictedUs = s.makespanUs;
    row.serial = r.serial && *r.serial == i;
    row.command = "braid";
    for (const auto& a : args) row.command += " " + a;
    try {
      row.measuredUs = measuredWallUs(out);
    } catch (const Error& e) {
      throw Error("--confirm: " + sim::configStr(s.config) + ": " + e.what() + ":\n" + lastLines(out, 8));
    }
    std::cerr << "braid tune --confirm: " << sim::configStr(s.config) << ": measured " << row.measuredUs << " us\n";
    c.rows.push_back(row);
  }
  return c;
}

const ConfirmRow* ConfirmResult::serialRow() const {
  for (const auto& r : rows)
    if (r.serial) return &r;
  return nullptr;
}

// What to run, by measurement: the fastest configuration measured, which is the serial one when
// no pipelined configuration beat it (issue 14: never slower than serial, and say so).
std::string choiceLine(const ConfirmResult& c) {
  const ConfirmRow* b = c.measuredBest();
  const ConfirmRow* s = c.serialRow();
  if (!b) return "";
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  if (b->serial) {
    os << "choice: serial (" << sim::configStr(b->config)
       << "): no pipelined configuration measured faster than the serial program on this machine\n";
  } else {
    os << "choice: " << sim::configStr(b->config);
    if (s && b->measuredUs > 0) os << " (" << s->measuredUs / b->measuredUs << "x the serial program, measured)";
    os << "\n";
  }
  return os.str();
}

std::string confirmTable(const ConfirmResult& c) {
  std::ostringstream os;
  os << "confirmed with braid run --backend " << c.backend << " --repeat " << c.repeat << (c.graph ? " --graph" : "")
     << (c.backend == "cpu" ? " (CPU numbers: they say nothing of GPUs)" : "")
     << "; measured = max over ranks of the median wall time\n";
  int width = 40;  // the config column fits the longest configuration
  for (const auto& r : c.rows) width = std::max(width, static_cast<int>(sim::configStr(r.config).size()) + 2);
  os << std::setw(6) << "#" << "  " << std::left << std::setw(width) << "config" << std::right << std::setw(15)
     << "predicted_us" << std::setw(14) << "measured_us" << std::setw(9) << "error" << "\n";
  os << std::fixed << std::setprecision(1);
  for (const auto& r : c.rows) {
    double err = r.measuredUs > 0 ? (r.predictedUs - r.measuredUs) / r.measuredUs * 100 : 0;
    os << std::setw(6) << r.predictedRank << "  " << std::left << std::setw(width) << sim::configStr(r.config)
       << std::right << std::setw(15) << r.predictedUs << std::setw(14) << r.measuredUs << std::setw(8) << std::showpos
       << err << std::noshowpos << "%" << (r.serial ? "  (serial)" : "") << "\n";
  }
  if (const ConfirmRow* b = c.measuredBest())
    os << (c.bestConfirmed() ? "measured best = predicted best: " : "measured best differs from predicted best: ")
       << sim::configStr(b->config) << " (" << b->measuredUs << " us measured, predicted #" << b->predictedRank
       << ")\n";
  os << choiceLine(c);
  return os.str();
}

std::string confirmJson(const ConfirmResult& c) {
  nlohmann::ordered_json j;
  j["backend"] = c.backend;
  j["repeat"] = c.repeat;
  j["graph"] = c.graph;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : c.rows) {
    nlohmann::ordered_json cfg = nlohmann::ordered_json::object();
    for (const auto& [k, v] : r.config) cfg[k] = v;  // as tune's own rows write them
    j["rows"].push_back({{"config", cfg},
                         {"predicted_rank", r.predictedRank},
                         {"predicted_us", r.predictedUs},
                         {"measured_us", r.measuredUs},
                         {"error", r.measuredUs > 0 ? (r.predictedUs - r.measuredUs) / r.measuredUs : 0.0},
                         {"serial", r.serial},
                         {"command", r.command}});
  }
  const ConfirmRow* b = c.measuredBest();
  j["measured_best"] = b ? nlohmann::ordered_json(sim::configStr(b->config)) : nlohmann::ordered_json(nullptr);
  j["best_confirmed"] = c.bestConfirmed();
  j["choice_is_serial"] = b ? nlohmann::ordered_json(b->serial) : nlohmann::ordered_json(nullptr);
  const ConfirmRow* s = c.serialRow();
  j["speedup_over_serial"] = b && s && b->measuredUs > 0 ? nlohmann::ordered_json(s->measuredUs / b->measuredUs)
                                                          : nlohmann::ordered_json(nullptr);
  return j.dump();
}

}  // namespace braid::cli
