#include "verify/parametric/site_format.h"

#include <sstream>
#include <vector>

#include "ir/semantics/event_graph.h"

namespace braid::verify {

std::string siteText(const Site& s) {
  std::ostringstream os;
  os << "  " << s.role << ": " << (s.statement.empty() ? "(program)" : s.statement);
  if (s.loc.known()) os << "   [" << s.loc.str() << "]";
  os << "\n      ";
  std::vector<std::string> parts;
  if (s.rank >= 0) parts.push_back("rank " + std::to_string(s.rank));
  if (!s.stream.empty()) parts.push_back("on " + s.stream);
  if (!s.loops.empty()) parts.push_back(sem::loopIndicesStr(s.loops));
  if (!s.detail.empty()) parts.push_back(s.detail);
  for (size_t i = 0; i < parts.size(); ++i) os << (i ? ", " : "") << parts[i];
  os << "\n";
  return os.str();
}

nlohmann::json siteJson(const Site& s) {
  nlohmann::json js;
  js["role"] = s.role;
  js["statement"] = s.statement;
  js["file"] = s.loc.file;
  js["line"] = s.loc.line;
  js["column"] = s.loc.col;
  js["rank"] = s.rank;
  js["stream"] = s.stream;
  js["loops"] = nlohmann::json::object();
  for (const auto& l : s.loops) js["loops"][l.name] = l.value;
  js["detail"] = s.detail;
  return js;
}

std::string joinText(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace braid::verify
