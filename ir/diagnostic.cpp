#include "ir/diagnostic.h"

#include <algorithm>

#include "ir/input_file.h"

namespace braid {

std::string quoteSourceLine(const std::string& text, int line, int col) {
  if (line <= 0) return "";
  size_t begin = 0;
  for (int l = 1; l < line; ++l) {
    begin = text.find('\n', begin);
    if (begin == std::string::npos) return "";
    ++begin;
  }
  size_t end = text.find('\n', begin);
  std::string src = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  if (!src.empty() && src.back() == '\r') src.pop_back();
  // A very long line is shown around the column, so the caret stays on screen.
  size_t caret = col > 0 ? static_cast<size_t>(col - 1) : 0;
  caret = std::min(caret, src.size());
  const size_t kWindow = 80;
  std::string lead;
  if (caret > kWindow) {
    size_t cut = caret - kWindow / 2;
    src = src.substr(cut);
    caret -= cut;
    lead = "...";
  }
  if (src.size() > 2 * kWindow) src = src.substr(0, 2 * kWindow) + "...";
  // Tabs stay tabs under the caret, so it lines up however the terminal expands them.
  std::string pad = lead.empty() ? "" : "   ";
  for (size_t i = 0; i < caret; ++i) pad += src[i] == '\t' ? '\t' : ' ';
  std::string num = std::to_string(line);
  std::string gutter(num.size(), ' ');
  std::string quoted = printableFileName(src);  // control bytes and broken UTF-8 shown as \xNN
  return "  " + num + " | " + lead + quoted + "\n  " + gutter + " | " + (col > 0 ? pad + "^" : "") + "\n";
}

std::string formatDiagnostic(const Error& e) {
  std::string out = e.what();
  const auto* pe = dynamic_cast<const ParseError*>(&e);
  if (!pe || !pe->loc().known() || pe->loc().file.empty()) return out;
  try {
    std::string text = readInputFile(pe->loc().file, "source file");
    std::string quote = quoteSourceLine(text, pe->loc().line, pe->loc().col);
    if (!quote.empty()) out += "\n" + quote.substr(0, quote.size() - 1);
  } catch (const std::exception&) {
    // A lowered workload's printed lines, or a file gone since: the message alone.
  }
  return out;
}

}  // namespace braid
