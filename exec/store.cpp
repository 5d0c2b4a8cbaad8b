// The rendezvous store (see store.h).
#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_C10D_STORE)

#include "exec/store.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <string>

#include "exec/launcher.h"
#include "ir/error.h"

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
    try {
      base = c10::make_intrusive<c10d::TCPStore>(rv.masterAddr, o);
    } catch (const std::exception& e) {
      // The launcher picked a port that something else took since: it can start again elsewhere.
      if (o.isServer && portInUse(rv.port, e.what()))
        throw PortTaken("rank 0 cannot serve the rendezvous store on port " + std::to_string(rv.port) +
                        ": another process listens there");
      throw;
    }
  }
  base->setTimeout(rv.timeout);
  return c10::make_intrusive<c10d::PrefixStore>(rv.prefix, base);
}

c10::intrusive_ptr<c10d::Store> connectStoreOrExplain(const Rendezvous& rv) {
  try {
    return connectStore(rv);
  } catch (const PortTaken&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw Error("rank " + std::to_string(rv.rank) + " could not reach the rendezvous store at " + rv.masterAddr + ":" +
                std::to_string(rv.port) + ": " + msg.substr(0, msg.find('\n')));
  }
}

}  // namespace braid::exec

#endif
