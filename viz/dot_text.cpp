#include "viz/dot_text.h"

#include <cmath>
#include <cstdio>

namespace braid::viz {

std::string dotQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string htmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string dotLines(const std::vector<std::string>& lines, char justify) {
  std::string body;
  for (const auto& line : lines) {
    std::string q = dotQuote(line);
    body += q.substr(1, q.size() - 2);
    body += '\\';
    body += justify == 'l' || justify == 'r' ? justify : 'n';
  }
  // A trailing centred break would add an empty line.
  if (justify != 'l' && justify != 'r' && !body.empty()) body.resize(body.size() - 2);
  return "\"" + body + "\"";
}

std::string dotNumber(double v) {
  if (std::fabs(v) < 0.005) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

DotAttrs& DotAttrs::set(const std::string& name, const std::string& value) {
  return raw(name, dotQuote(value));
}

DotAttrs& DotAttrs::set(const std::string& name, double value) {
  return raw(name, dotNumber(value));
}

DotAttrs& DotAttrs::raw(const std::string& name, const std::string& text) {
  for (auto& [n, v] : attrs_)
    if (n == name) {
      v = text;
      return *this;
    }
  attrs_.emplace_back(name, text);
  return *this;
}

std::string DotAttrs::str() const {
  std::string s = "[";
  for (size_t i = 0; i < attrs_.size(); ++i) s += (i ? ", " : "") + attrs_[i].first + "=" + attrs_[i].second;
  return s + "]";
}

}  // namespace braid::viz
