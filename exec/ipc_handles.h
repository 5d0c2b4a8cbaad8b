// Bookkeeping of the copy-engine backend's CUDA IPC handles, in plain C++ (the CUDA calls are in
// exec/cuda_ipc_communicator.cpp; tests/exec/copy_engine_plan_test.cpp tests this part):
// - what a rank publishes in the rendezvous store for an operation: per buffer, the IPC handle of
//   the allocation that holds it (cudaIpcGetMemHandle of the allocation's base), the buffer's
//   offset in it and its size;
// - the cache of handles this process opened, keyed by (peer, handle bytes): the caching allocator
//   hands the same allocations out again, so a repeated run opens nothing new; each handle is
//   opened once (CUDA refuses to open a handle twice in one process) and closed at teardown.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace braid::exec::ce {

struct Published {
  std::string handle;  // the opaque cudaIpcMemHandle_t bytes
  int64_t offset = 0;  // bytes from the allocation's base to the buffer
  int64_t bytes = 0;   // the buffer's size
};

std::vector<uint8_t> encodePublished(const std::vector<Published>& items);
// Throws braid::Error naming `what` ("rank 1's buffer for ...") when the bytes are malformed.
std::vector<Published> decodePublished(const std::vector<uint8_t>& bytes, const std::string& what);

class HandleCache {
 public:
  // The base address this process mapped for (peer, handle), or null when not opened yet.
  void* find(int64_t peer, const std::string& handle) const;
  void insert(int64_t peer, const std::string& handle, void* base);
  // Every mapping, for closing at teardown (then clear()).
  std::vector<void*> mapped() const;
  void clear() { opened_.clear(); }
  size_t size() const { return opened_.size(); }

 private:
  std::map<std::pair<int64_t, std::string>, void*> opened_;
};

}  // namespace braid::exec::ce
