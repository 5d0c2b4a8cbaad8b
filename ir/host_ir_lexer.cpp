#include "ir/host_ir_lexer.h"

#include <cstdio>

namespace braid {

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
    default: return "'" + std::string(text) + "'";
  }
}

std::vector<Token> tokenize(std::string_view text, const std::string& file) {
  std::vector<Token> out;
  int line = 1;
  size_t line_start = 0;
  bool first_on_line = true;
  size_t i = 0;
  const size_t n = text.size();
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = line_start = 3;  // a UTF-8 byte order mark
  auto push = [&](TokenKind kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.text = text.substr(begin, end - begin);
    t.line = line;
    t.col = static_cast<int>(begin - line_start) + 1;
    t.offset = begin;
    t.end = end;
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
      case '=': case '!': case '<': case '>': case '+': case '-': case '*': case '/': case '%':
        push(TokenKind::kPunct, i, i + 1);
        ++i;
        continue;
      default:
        break;
    }
    throw ParseError(SourceLoc{file, line, static_cast<int>(i - line_start) + 1},
                     "unexpected character " + printableChar(c));
  }
  Token end;
  end.kind = TokenKind::kEnd;
  end.line = line;
  end.col = static_cast<int>(n - line_start) + 1;
  end.offset = n;
  end.end = n;
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

void TokenStream::fail(const Token& t, const std::string& message) const { throw ParseError(loc(t), message); }

void TokenStream::failExpected(std::string_view what) const {
  fail(peek(), "expected " + std::string(what) + ", found " + peek().describe());
}

}  // namespace braid
