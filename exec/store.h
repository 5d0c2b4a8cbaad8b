// The rendezvous store every multi-rank backend shares ids and handles through: a c10d TCPStore
// at MASTER_ADDR:MASTER_PORT (served by rank 0 unless a launcher's agent serves it, as torchrun's
// does) or a FileStore (BRAID_STORE_FILE), with the run's key prefix.
#pragma once

#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_C10D_STORE)

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "exec/communicator.h"

namespace braid::exec {

// Connects (rank 0 serves the TCPStore unless rv.storeIsExternal); the store's timeout is
// rv.timeout. Throws what c10d throws (the caller words the error for its backend).
c10::intrusive_ptr<c10d::Store> connectStore(const Rendezvous& rv);

// connectStore for the CUDA backend's communicators: a failure becomes a braid::Error naming the
// rank and the store's address.
c10::intrusive_ptr<c10d::Store> connectStoreOrExplain(const Rendezvous& rv);

}  // namespace braid::exec

#endif
