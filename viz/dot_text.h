// Writing Graphviz DOT text: quoting, HTML-like label escaping and attribute lists. The pictures
// are built as DOT text (not through cgraph) so that viz works, and its output can be tested, on
// machines without Graphviz; render.h lays the text out and renders it where Graphviz exists.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace braid::viz {

// The font of every picture's labels (Graphviz maps it to the closest installed face).
inline constexpr const char* kDotFont = "Helvetica";

// A DOT double-quoted string: `"`, `\` and newlines escaped. Graphviz's own escapes (\n, \l, \r
// in labels) are not produced: use dotLines() for multi-line labels.
std::string dotQuote(const std::string& s);

// Text for inside an HTML-like label (<...>): &, <, >, " escaped.
std::string htmlEscape(const std::string& s);

// The lines of a plain label joined with Graphviz's line breaks: `\n` (centred), `\l` (left) or
// `\r` (right aligned), each line escaped; the result is meant for DotAttrs::raw.
std::string dotLines(const std::vector<std::string>& lines, char justify = 'n');

// `[name="value", ...]`, in insertion order; setting a name again replaces its value.
class DotAttrs {
 public:
  DotAttrs& set(const std::string& name, const std::string& value);  // quoted
  DotAttrs& set(const std::string& name, double value);              // a number, %g-like
  DotAttrs& raw(const std::string& name, const std::string& text);   // already DOT syntax ("<..>" or "\"..\"")
  bool empty() const { return attrs_.empty(); }
  std::string str() const;

 private:
  std::vector<std::pair<std::string, std::string>> attrs_;
};

// "12.5" rather than "12.500000": numbers for positions and sizes, 2 decimals at most.
std::string dotNumber(double v);

}  // namespace braid::viz
