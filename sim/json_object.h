// A strict reader of one JSON object: typed reads that name the file and the field in every
// error ("m.json: gpu.hbm_gbps: missing"), and a check that no field was left unread. Machine
// files (machine.h) and calibration measurements (measurements.h) are read with it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "ir/error.h"

namespace braid::sim {

// The JSON document in TEXT, read from FILE; any JSON error (a parse error, or a number out of
// range such as 1e999) is an Error naming the file. Read in the readers' own ordered type (a
// converting copy recurses once per level: a 10 KB file of nested brackets overflowed the stack),
// and refused past kMaxJsonDepth levels, far deeper than any braid file nests.
inline constexpr int kMaxJsonDepth = 64;
inline nlohmann::ordered_json parseJsonDocument(const std::string& text, const std::string& file) {
  try {
    return nlohmann::ordered_json::parse(text, [&](int depth, nlohmann::ordered_json::parse_event_t, nlohmann::ordered_json&) {
      if (depth > kMaxJsonDepth)
        throw Error(file + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels: not a braid file");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw Error(file + ": not valid JSON: " + e.what());
  }
}

class StrictJsonObject {
 public:
  StrictJsonObject(const nlohmann::ordered_json& j, std::string path, const std::string& file)
      : j_(j), path_(std::move(path)), file_(file) {
    if (!j_.is_object()) fail(path_.empty() ? "(document)" : path_, "expected an object");
  }
  ~StrictJsonObject() = default;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(file_ + ": " + field + ": " + what);
  }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const nlohmann::ordered_json& get(const std::string& key) {
    seen_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) fail(at(key), "missing");
    return *it;
  }
  // An optional field: whether it is there (a later read of it then counts as seen).
  bool has(const std::string& key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  StrictJsonObject child(const std::string& key) { return StrictJsonObject(get(key), at(key), file_); }
  std::string str(const std::string& key) {
    const nlohmann::ordered_json& v = get(key);
    if (!v.is_string()) fail(at(key), "expected a string");
    return v.get<std::string>();
  }
  bool boolean(const std::string& key) {
    const nlohmann::ordered_json& v = get(key);
    if (!v.is_boolean()) fail(at(key), "expected true or false");
    return v.get<bool>();
  }
  double num(const std::string& key, double lo, double hi, bool open_lo = false) {
    const nlohmann::ordered_json& v = get(key);
    if (!v.is_number()) fail(at(key), "expected a number");
    double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi || (open_lo && d == lo)) {
      std::ostringstream os;
      os << "expected a number in " << (open_lo ? "(" : "[") << lo << ", " << hi << "], got " << v.dump();
      fail(at(key), os.str());
    }
    return d;
  }
  double positive(const std::string& key) { return num(key, 0, 1e15, true); }
  // A measured time: at least a nanosecond (a fit divides by it), at most 1e15 us.
  double time(const std::string& key) { return num(key, 1e-3, 1e15); }
  double nonNegative(const std::string& key) { return num(key, 0, 1e15); }
  double fraction(const std::string& key) { return num(key, 0, 1, true); }
  int64_t count(const std::string& key, int64_t lo = 1, int64_t hi = std::numeric_limits<int64_t>::max()) {
    const nlohmann::ordered_json& v = get(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(at(key), "expected an integer >= " + std::to_string(lo) +
                        (hi < std::numeric_limits<int64_t>::max() ? " and <= " + std::to_string(hi) : std::string()) +
                        ", got " + v.dump());
    return v.get<int64_t>();
  }
  const nlohmann::ordered_json& array(const std::string& key) {
    const nlohmann::ordered_json& v = get(key);
    if (!v.is_array()) fail(at(key), "expected an array");
    return v;
  }
  // Fails on a field nobody read.
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (seen_.count(it.key())) continue;
      std::string known;
      for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
      fail(at(it.key()), "unknown field (known here: " + known + ")");
    }
  }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::ordered_json& j_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
};

}  // namespace braid::sim
