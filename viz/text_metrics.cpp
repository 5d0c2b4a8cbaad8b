#include "viz/text_metrics.h"

#include <cctype>

namespace braid::viz {

namespace {

// Advance widths in em, by character class (DejaVu Sans, rounded up).
double charWidth(unsigned char c) {
  if (c == ' ' || c == '.' || c == ',' || c == ':' || c == ';' || c == '|' || c == '!' || c == '\'' || c == 'i' ||
      c == 'l' || c == 'j' || c == 'I')
    return 0.34;
  if (c == 'f' || c == 't' || c == 'r' || c == '(' || c == ')' || c == '[' || c == ']' || c == '-') return 0.42;
  if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%') return 0.92;
  if (std::isupper(c)) return 0.72;
  return 0.62;  // lower case, digits, other ASCII
}

// The byte length of the UTF-8 sequence starting with `lead`.
size_t utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xe) return 3;
  return 4;
}

}  // namespace

double textWidth(const std::string& s, double fontSize) {
  double em = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    em += c < 0x80 ? charWidth(c) : 0.75;
    i += utf8Length(c);
  }
  return em * fontSize;
}

std::string fitText(const std::string& s, double width, double fontSize) {
  if (textWidth(s, fontSize) <= width) return s;
  const std::string ellipsis = "…";
  double budget = width - textWidth(ellipsis, fontSize);
  if (budget < 0) return "";
  double used = 0;
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    double w = (c < 0x80 ? charWidth(c) : 0.75) * fontSize;
    if (used + w > budget) break;
    used += w;
    i += utf8Length(c);
    end = i;
  }
  return s.substr(0, end) + ellipsis;
}

}  // namespace braid::viz
