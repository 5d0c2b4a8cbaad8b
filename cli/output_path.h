// Checking where a command will write before it does any work: a command that fails writing its
// third output must not have replaced the first (`braid validate --timeline P --trace
// /missing/t.json` overwrote P, then failed).
#pragma once

#include <string>

namespace braid::cli {

// Throws Error naming `flag` and `path` when `path` is a folder, or its folder does not exist or
// cannot be written. An empty path (the output not asked for) passes.
void checkOutputPath(const std::string& flag, const std::string& path);

}  // namespace braid::cli
