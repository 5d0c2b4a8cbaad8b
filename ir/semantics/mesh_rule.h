// Which ranks run a statement. nvFuser lowers one program per device and leaves out, on each
// device, the statements whose tensors' meshes do not include it (MultiDeviceExecutor's
// involvedDevices: the meshes of an expression's inputs and outputs). braid applies the same rule
// when one program runs on every rank, so that a program and the per-device programs nvFuser
// prints from it mean the same thing.
#pragma once

#include <cstdint>

#include "ir/host_ir.h"

namespace braid::sem {

// Whether `rank` runs `s` by the mesh rule: a statement without tensor operands (streams, loops,
// waits, scalars) runs everywhere; one with tensor operands runs on the union of their meshes,
// where a tensor without a mesh stands for every rank (nvFuser puts such a program on device 0
// alone; braid keeps it on every rank, as a single-device program replicated). Communications and
// CollectivePermute run on their team instead (Communication's own rule, communication_rules.h).
bool runsOnRank(const Stmt& s, int64_t rank);

}  // namespace braid::sem
