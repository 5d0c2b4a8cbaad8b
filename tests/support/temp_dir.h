// A fresh temporary directory, removed with its contents when the object goes away.
//
// Written with POSIX calls rather than std::filesystem on purpose: PyTorch's pip wheels export
// their own, older copies of libstdc++'s std::filesystem symbols from libtorch*.so, and a test
// binary that links libtorch binds to them and crashes in temp_directory_path or
// create_directories (seen on the GPU machines with PyTorch 2.11). Tests that link braid::exec
// use this instead.
#pragma once

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace braid::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = buf.data();
  }
  ~TempDir() {
    ::nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return std::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `path()/name`; subdirectories named in `name` are not created.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace braid::testing
