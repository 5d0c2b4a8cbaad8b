// The one way braid reads an input file (host IR, machine files, timelines): a regular file of at
// most kMaxInputFileBytes, read whole. A directory, /dev/zero, a FIFO or a file over 64 MiB is refused
// with an Error naming the path and what it is, before anything is read.
#pragma once

#include <cstdint>
#include <string>

namespace braid {

// 64 MiB: far above any nvFuser dump or machine file (a few MB with kernels), and small enough
// that the lexer's tokens (56 bytes per token, up to one token per 2 bytes) stay under 2 GB.
inline constexpr int64_t kMaxInputFileBytes = int64_t{256} << 20;

// The contents of `path`; `what` names the kind of file in messages ("host IR file").
std::string readInputFile(const std::string& path, const std::string& what,
                          int64_t maxBytes = kMaxInputFileBytes);

// `name` with every byte that is not printable UTF-8 written as \xNN, for messages and JSON.
std::string printableFileName(const std::string& name);

}  // namespace braid
