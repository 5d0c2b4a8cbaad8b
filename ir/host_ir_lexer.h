// The tokenizer of the host IR text format (docs/HOSTIR.md) and a cursor over its tokens.
//
// Line breaks are not tokens: the parser reads statements by their grammar, so an expression may
// run over several lines (`T4...` / `   = Set( ... )`). What the parser needs from the layout is
// kept on each token instead: its line and column, and whether it is the first token of its
// line (a statement must start a line; its column gives the block it belongs to).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"

namespace braid {

enum class TokenKind : uint8_t {
  kWord,       // identifiers, with dots and a leading '%' for `%HostIrContainer` / `%kernel`
  kNumber,     // decimal integer
  kHexNumber,  // 0x55d0c0
  kPunct,      // ( ) [ ] { } , : ; = == != ! < <= > >= && || + - -> * / % . ...
  kDirective,  // `// braid:` (braid's extension lines); the rest of the line is lexed normally
  kOther,      // one character that starts no token; the parser refuses it where it matters
  kEnd,
};

// 32 bytes: a file has up to one token per byte, and the parser holds all of them at once, so
// the token's size is most of what reading a large file costs (docs/HARDENING.md, "Limits").
struct Token {
  std::string_view text;
  uint32_t offset = 0;  // byte offset of the token in the source: [offset, end())
  int line = 0;
  int col = 0;
  TokenKind kind = TokenKind::kEnd;
  bool firstOnLine = false;

  size_t end() const { return offset + text.size(); }

  bool is(std::string_view punct_or_word) const {
    return (kind == TokenKind::kPunct || kind == TokenKind::kWord) && text == punct_or_word;
  }
  // How an error message names this token: 'x', "end of file", or "character '@'".
  std::string describe() const;
};

// The most tokens one text may have: 2^26 (2 GiB of tokens), one per 4 bytes of the largest input
// file (ir/input_file.h). braid's own output has about one token per 4 bytes (a lowered 8192-rank
// program: 21 M tokens in 87 MB); a file of `,,,,` has one per byte and is refused here, with a
// location, instead of taking 32 bytes of memory per byte.
inline constexpr size_t kMaxTokens = size_t{1} << 26;

// Splits `text` into tokens; comments (`// ...` other than `// braid:`) are dropped. A printable
// character that starts no token becomes a kOther token (the text of a kernel braid keeps
// verbatim may hold any), which TokenStream refuses wherever the grammar looks at it; a control
// character throws ParseError. Texts of 4 GiB or more, or of more than `maxTokens` tokens, are
// refused (ParseError).
std::vector<Token> tokenize(std::string_view text, const std::string& file, size_t maxTokens = kMaxTokens);

// A cursor over tokens with the helpers every parser of this format needs.
class TokenStream {
 public:
  TokenStream(std::string_view text, std::string file);

  const Token& peek(size_t ahead = 0) const;
  // Consumes the next token. Inside a statement (see beginStatement), a token that starts a line
  // must be indented deeper than the statement's first token (closing `)` and `}` may sit at its
  // column): nvFuser always indents continuation lines, and a line that does not is a dump
  // hard-wrapped by a web page or mail client, which is refused rather than guessed at.
  const Token& next();
  bool atEnd() const { return peek().kind == TokenKind::kEnd; }
  // Consumes the next token if it is the punctuation or word `s`.
  bool accept(std::string_view s);
  // Consumes the punctuation or word `s`, or throws "expected <s> <context>, found <token>".
  const Token& expect(std::string_view s, std::string_view context = "");
  const Token& expectWord(std::string_view what);
  // `next` is adjacent to `prev` (no whitespace in between), e.g. `}rf`.
  static bool adjacent(const Token& prev, const Token& next) { return prev.end() == next.offset; }

  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.col}; }
  [[noreturn]] void fail(const Token& t, const std::string& message) const;
  // "expected <what>, found <token>" at the next token.
  [[noreturn]] void failExpected(std::string_view what) const;

  const std::string& file() const { return file_; }
  std::string_view source() const { return text_; }
  size_t position() const { return pos_; }
  void seek(size_t position) { pos_ = position; }

  // The statement whose tokens are being consumed starts at `first` (the next token). Its
  // continuation lines must be indented deeper than the line it starts on (a statement may follow
  // another on its line: then the line's first token counts).
  void beginStatement(const Token& first);
  void endStatement() { stmt_ = nullptr; }
  // The first token of `t`'s line (`t` itself when it starts its line).
  const Token& lineStart(const Token& t) const;

 private:
  std::string_view text_;
  std::string file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const Token* stmt_ = nullptr;
  const Token* stmtLine_ = nullptr;  // the first token of the line the statement starts on

  // The hard-wrap diagnosis of an error at `t`, if a word of `t`'s neighbourhood is split over
  // two lines the way a fixed-width wrap splits it; "" otherwise.
  std::string wrapDiagnosis(const Token& t, SourceLoc* where) const;
};

}  // namespace braid
