#include "ir/input_file.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "ir/error.h"

namespace braid {

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when it is not one.
size_t utf8Length(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) >> 6) != 0x2) return 0;
  return n;
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string printableFileName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    size_t n = utf8Length(name, i);
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      ++i;
      continue;
    }
    out.append(name, i, n);
    i += n;
  }
  return out;
}

std::string readInputFile(const std::string& path, const std::string& what, int64_t maxBytes) {
  // "PATH: message", as braid's other file errors.
  std::string shown = printableFileName(path) + ": ";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(shown + "cannot open the " + what);
  if (S_ISDIR(st.st_mode)) throw Error(shown + "is a directory, not a " + what);
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw Error(shown + "is " + kind + ", not a " + what + " (braid reads regular files only)");
  }
  if (st.st_size > maxBytes)
    throw Error(shown + "the " + what + " has " + std::to_string(st.st_size) + " bytes, more than the " + mib(maxBytes) +
                " braid reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(shown + "cannot open the " + what);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) throw Error(shown + "cannot read the " + what);
  // A file that grows while read is read up to its size at open: the cap holds either way.
  return text;
}

}  // namespace braid
