#include "ir/host_ir_lexer.h"

#include <cstdio>

namespace braid {

static_assert(sizeof(void*) != 8 || sizeof(Token) == 32, "docs/HARDENING.md counts 32 bytes per token");

namespace {

bool isWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordChar(char c) { return isWordStart(c) || isDigit(c) || c == '.'; }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string printableChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned>(u));
  return buf;
}

}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case TokenKind::kEnd: return "end of file";
    case TokenKind::kDirective: return "'// braid:'";
    case TokenKind::kOther: return "unexpected character " + printableChar(text.empty() ? '\0' : text[0]);
    default: return "'" + std::string(text) + "'";
  }
}

std::vector<Token> tokenize(std::string_view text, const std::string& file, size_t maxTokens) {
  std::vector<Token> out;
  int line = 1;
  size_t line_start = 0;
  bool first_on_line = true;
  size_t i = 0;
  const size_t n = text.size();
  if (n > UINT32_MAX)
    throw ParseError(SourceLoc{file, 1, 1}, "the text has " + std::to_string(n) + " bytes, more than braid reads");
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = line_start = 3;  // a UTF-8 byte order mark
  auto push = [&](TokenKind kind, size_t begin, size_t end) {
    if (out.size() >= maxTokens)
      throw ParseError(SourceLoc{file, line, static_cast<int>(begin - line_start) + 1},
                       "more than " + std::to_string(maxTokens) + " tokens (braid's limit on one file: " +
                           std::to_string(maxTokens * sizeof(Token) >> 20) + " MiB of memory for them)");
    Token t;
    t.kind = kind;
    t.text = text.substr(begin, end - begin);
    t.line = line;
    t.col = static_cast<int>(begin - line_start) + 1;
    t.offset = static_cast<uint32_t>(begin);
    t.firstOnLine = first_on_line;
    first_on_line = false;
    out.push_back(t);
  };
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      first_on_line = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      // A comment, or one of braid's extension lines (`// braid: alias T2 -> T0`).
      size_t j = i + 2;
      while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
      if (text.substr(j, 6) == "braid:") {
        push(TokenKind::kDirective, i, j + 6);
        i = j + 6;
        continue;
      }
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    size_t start = i;
    if (c == '?' && i + 1 < n && isWordStart(text[i + 1])) {
      // nvFuser's symbolic IterDomains: `?S13{...}`.
      ++i;
      while (i < n && isWordChar(text[i])) ++i;
      push(TokenKind::kWord, start, i);
      continue;
    }
    if (text.substr(i, 3) == "...") {
      push(TokenKind::kPunct, i, i + 3);
      i += 3;
      continue;
    }
    if (c == '%' && i + 1 < n && isWordStart(text[i + 1])) {
      size_t j = i + 1;
      while (j < n && isWordChar(text[j])) ++j;
      std::string_view w = text.substr(i, j - i);
      if (w == "%HostIrContainer" || w == "%kernel") {
        push(TokenKind::kWord, i, j);
        i = j;
        continue;
      }
    }
    if (isWordStart(c)) {
      while (i < n && isWordChar(text[i])) ++i;
      push(TokenKind::kWord, start, i);
      continue;
    }
    if (isDigit(c)) {
      if (c == '0' && i + 1 < n && (text[i + 1] == 'x' || text[i + 1] == 'X') && i + 2 < n && isHexDigit(text[i + 2])) {
        i += 2;
        while (i < n && isHexDigit(text[i])) ++i;
        push(TokenKind::kHexNumber, start, i);
        continue;
      }
      while (i < n && isDigit(text[i])) ++i;
      push(TokenKind::kNumber, start, i);
      continue;
    }
    auto two = text.substr(i, 2);
    if (two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "&&" || two == "||" || two == "->") {
      push(TokenKind::kPunct, i, i + 2);
      i += 2;
      continue;
    }
    switch (c) {
      case '(': case ')': case '[': case ']': case '{': case '}': case ',': case ':': case ';':
      case '=': case '!': case '<': case '>': case '+': case '-': case '*': case '/': case '%': case '.':
        push(TokenKind::kPunct, i, i + 1);
        ++i;
        continue;
      default:
        break;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)  // a control character is never part of a dump
      throw ParseError(SourceLoc{file, line, static_cast<int>(i - line_start) + 1},
                       "unexpected character " + printableChar(c));
    push(TokenKind::kOther, i, i + 1);
    ++i;
  }
  Token end;
  end.kind = TokenKind::kEnd;
  end.line = line;
  end.col = static_cast<int>(n - line_start) + 1;
  end.offset = static_cast<uint32_t>(n);
  end.text = text.substr(n);
  end.firstOnLine = true;
  out.push_back(end);
  return out;
}

TokenStream::TokenStream(std::string_view text, std::string file)
    : text_(text), file_(std::move(file)), tokens_(tokenize(text, file_)) {}

const Token& TokenStream::peek(size_t ahead) const {
  size_t i = pos_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}

const Token& TokenStream::next() {
  const Token& t = peek();
  if (t.kind == TokenKind::kOther) fail(t, t.describe());
  if (stmt_ && &t != stmt_ && t.firstOnLine && t.kind != TokenKind::kEnd && t.col <= stmtLine_->col &&
      !t.is(")") && !t.is("}")) {
    fail(t, "this line continues the statement that starts at line " + std::to_string(stmt_->line) +
                ", column " + std::to_string(stmt_->col) + ", but starts at column " + std::to_string(t.col) +
                ", not to the right of that line's indentation; nvFuser indents every continuation line, so the "
                "dump looks hard-wrapped (by a web page or mail client): rejoin the line");
  }
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool TokenStream::accept(std::string_view s) {
  if (!peek().is(s)) return false;
  next();
  return true;
}

const Token& TokenStream::expect(std::string_view s, std::string_view context) {
  if (!peek().is(s)) {
    std::string what = "'" + std::string(s) + "'";
    if (!context.empty()) what += " " + std::string(context);
    failExpected(what);
  }
  return next();
}

const Token& TokenStream::expectWord(std::string_view what) {
  if (peek().kind != TokenKind::kWord) failExpected(what);
  return next();
}

const Token& TokenStream::lineStart(const Token& t) const {
  if (tokens_.empty() || &t < tokens_.data() || &t >= tokens_.data() + tokens_.size()) return t;
  const Token* p = &t;
  while (!p->firstOnLine && p > tokens_.data()) --p;
  return *p;
}

void TokenStream::beginStatement(const Token& first) {
  stmt_ = &first;
  stmtLine_ = &lineStart(first);
}

std::string TokenStream::wrapDiagnosis(const Token& t, SourceLoc* where) const {
  if (tokens_.empty() || &t < tokens_.data() || &t >= tokens_.data() + tokens_.size()) return "";
  size_t k = static_cast<size_t>(&t - tokens_.data());
  // A fixed-width wrap cuts a token at the end of a line and puts the rest at column 1 of the
  // next: the two pieces, glued, lex as one token (`fals` + `e`, `12` + `8`, `-` + `>`).
  auto split = [&](size_t a, size_t b) {
    if (b >= tokens_.size()) return false;
    const Token& x = tokens_[a];
    const Token& y = tokens_[b];
    if (x.kind == TokenKind::kEnd || y.kind == TokenKind::kEnd || x.kind == TokenKind::kDirective) return false;
    if (!y.firstOnLine || y.col != 1 || y.line != x.line + 1) return false;
    size_t e = x.end();
    bool ends_line =
        e < text_.size() && (text_[e] == '\n' || (text_[e] == '\r' && e + 1 < text_.size() && text_[e + 1] == '\n'));
    if (!ends_line) return false;
    std::string glued = std::string(x.text) + std::string(y.text);
    std::vector<Token> one = tokenize(glued, file_);
    return one.size() == 2 && one[0].kind != TokenKind::kOther;  // one token and the end
  };
  // The error is the wrap's doing when the wrap is at the start of its token's line or at the end
  // of it (the tokens up to there were read as they should not have been).
  size_t a = 0, b = 0;
  size_t j = k + 1;
  while (j < tokens_.size() && !tokens_[j].firstOnLine) ++j;
  if (k > 0 && split(k - 1, k)) {
    a = k - 1;
    b = k;
  } else if (j < tokens_.size() && split(j - 1, j)) {
    a = j - 1;
    b = j;
  } else {
    return "";
  }
  *where = loc(tokens_[b]);
  return "'" + std::string(tokens_[b].text) + "' at the start of this line continues '" + std::string(tokens_[a].text) +
         "' at the end of line " + std::to_string(tokens_[a].line) +
         ": the dump looks hard-wrapped (a long line broken by a web page or mail client); rejoin the line";
}

void TokenStream::fail(const Token& t, const std::string& message) const {
  SourceLoc where;
  std::string wrap = wrapDiagnosis(t, &where);
  if (!wrap.empty()) throw ParseError(where, wrap + " (reading it as it is: " + message + ")");
  throw ParseError(loc(t), message);
}

void TokenStream::failExpected(std::string_view what) const {
  const Token& t = peek();
  if (t.kind == TokenKind::kOther) fail(t, t.describe() + " (expected " + std::string(what) + ")");
  fail(t, "expected " + std::string(what) + ", found " + t.describe());
}

}  // namespace braid
