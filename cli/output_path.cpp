#include "cli/output_path.h"

#include <unistd.h>

#include <filesystem>

#include "ir/error.h"

namespace braid::cli {

void checkOutputPath(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw Error(flag + " " + path + ": is a folder, not a file to write");
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec)) throw Error(flag + " " + path + ": no folder " + dir.string() + " to write it in");
  if (::access(dir.c_str(), W_OK) != 0) throw Error(flag + " " + path + ": the folder " + dir.string() + " is not writable");
}

}  // namespace braid::cli
