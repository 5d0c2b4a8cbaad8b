// The rendezvous store (see store.h).
#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_C10D_STORE)

#include "exec/store.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace braid::exec {

c10::intrusive_ptr<c10d::Store> connectStore(const Rendezvous& rv) {
  c10::intrusive_ptr<c10d::Store> base;
  if (!rv.storeFile.empty()) {
    base = c10::make_intrusive<c10d::FileStore>(rv.storeFile, static_cast<int>(rv.worldSize));
  } else {
    c10d::TCPStoreOptions o;
    o.port = static_cast<uint16_t>(rv.port);
    o.isServer = rv.rank == 0 && !rv.storeIsExternal;
    o.numWorkers = static_cast<size_t>(rv.worldSize);
    o.waitWorkers = false;
    o.timeout = rv.timeout;
    base = c10::make_intrusive<c10d::TCPStore>(rv.masterAddr, o);
  }
  base->setTimeout(rv.timeout);
  return c10::make_intrusive<c10d::PrefixStore>(rv.prefix, base);
}

}  // namespace braid::exec

#endif
