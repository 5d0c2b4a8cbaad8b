// Which tensor names a loop's iterations do not carry over: names every iteration rebinds before
// any use, that nothing outside the loop body mentions. Their binding at the head of an
// iteration is never read, so the loop summary (symbolic_run.cpp) may forget it; without this a
// view bound only on some iterations (IF rank == i: T8 = HirAliasSelect(...)) would make the
// binding depend on every earlier iteration.
#pragma once

#include <set>

#include "ir/host_ir.h"

namespace braid::verify::parametric {

std::set<const TensorView*> namesNotCarried(const HostProgram& p, const ForLoop& loop);

}  // namespace braid::verify::parametric
