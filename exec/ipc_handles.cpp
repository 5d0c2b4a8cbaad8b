// The copy-engine backend's IPC bookkeeping (see ipc_handles.h).
#include "exec/ipc_handles.h"

#include <cstring>

#include "ir/error.h"

namespace braid::exec::ce {

namespace {

void put64(std::vector<uint8_t>& out, int64_t v) {
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  out.insert(out.end(), b, b + 8);
}

}  // namespace

// Layout: count, then per item: handle length, handle bytes, offset, size (int64 in host order:
// both ends run on one host, CUDA IPC does not cross hosts).
std::vector<uint8_t> encodePublished(const std::vector<Published>& items) {
  std::vector<uint8_t> out;
  put64(out, static_cast<int64_t>(items.size()));
  for (const Published& p : items) {
    put64(out, static_cast<int64_t>(p.handle.size()));
    out.insert(out.end(), p.handle.begin(), p.handle.end());
    put64(out, p.offset);
    put64(out, p.bytes);
  }
  return out;
}

std::vector<Published> decodePublished(const std::vector<uint8_t>& bytes, const std::string& what) {
  size_t at = 0;
  auto bad = [&]() -> Error { return Error(what + " in the rendezvous store is malformed"); };
  auto get64 = [&]() {
    if (at + 8 > bytes.size()) throw bad();
    int64_t v = 0;
    std::memcpy(&v, bytes.data() + at, 8);
    at += 8;
    return v;
  };
  int64_t n = get64();
  if (n < 0 || n > static_cast<int64_t>(bytes.size())) throw bad();
  std::vector<Published> items;
  for (int64_t i = 0; i < n; ++i) {
    Published p;
    int64_t len = get64();
    if (len < 0 || at + static_cast<size_t>(len) > bytes.size()) throw bad();
    p.handle.assign(reinterpret_cast<const char*>(bytes.data() + at), static_cast<size_t>(len));
    at += static_cast<size_t>(len);
    p.offset = get64();
    p.bytes = get64();
    if (p.offset < 0 || p.bytes < 0) throw bad();
    items.push_back(std::move(p));
  }
  if (at != bytes.size()) throw bad();
  return items;
}

void* HandleCache::find(int64_t peer, const std::string& handle) const {
  auto it = opened_.find({peer, handle});
  return it == opened_.end() ? nullptr : it->second;
}

void HandleCache::insert(int64_t peer, const std::string& handle, void* base) { opened_[{peer, handle}] = base; }

std::vector<void*> HandleCache::mapped() const {
  std::vector<void*> v;
  for (const auto& [k, p] : opened_) v.push_back(p);
  return v;
}

}  // namespace braid::exec::ce
