// The transport a communication statement runs on (`backend=NCCL` in the host IR). Its own header
// so that the lowering options (plain data) can choose one without the whole host IR.
#pragma once

#include <optional>
#include <string>

namespace braid {

enum class CommBackend { kNccl, kUcc, kCuda };

const char* commBackendName(CommBackend b);  // "NCCL", "UCC", "CUDA"
std::optional<CommBackend> parseCommBackend(const std::string& s);

}  // namespace braid
