// Building blocks of the host-program passes: cloning tensors and exprs into a program's (or a
// HostUnit's) Fusion, views, and small queries over statements.
#pragma once

#include <functional>
#include <vector>

#include "passes/buffer_layout.h"
#include "passes/pass.h"

namespace braid {

// A copy of `src` in `into`: same dtype and mesh, logical axes cloned (kind, parallel type,
// extent, rfactor) except `drop` (a logical position, or -1). `name` < 0 picks a fresh name;
// same_ids keeps the IterDomain ids (only for the first clone of a fusion tensor); other clones
// (views, per-iteration buffers) turn Stream axes serial.
TensorView* cloneTensor(Fusion& into, const TensorView* src, int drop, int name, bool same_ids, MemoryType mem);

// The program tensor of fusion tensor `ft` whose buffer is `layout` (passes/buffer_layout.h),
// without the layout axis at `drop` (-1: none). `name` < 0 picks a fresh name; same_ids keeps the
// IterDomain ids (only for the first clone of a fusion tensor). Also records its AxisOrigin.
TensorView* cloneLayout(LoweringContext& ctx, const TensorView* ft, const std::vector<LayoutAxis>& layout, int drop,
                        int name, bool same_ids, MemoryType mem);

// An axis has one element per rank: device-parallel, broadcast, constant extent 1; for the chunked
// axis of a view, when its chunk is one element (LoweringContext::chunkAxisExtent).
bool hasLocalExtentOne(const LoweringContext& ctx, const IterDomain* id);

// A fresh contiguous buffer (global memory) holding what `t` holds: for a ShardByStream view, its
// chunk's extent on the chunked axis. For communications on strided views.
TensorView* stagingBufferFor(LoweringContext& ctx, TensorView* t);

// The number of elements of chunk `index` when `extent` elements are cut into `chunks` chunks of
// ceilDiv(extent, chunks) (ShardByStream's rule): the chunk size, less what the last chunk lacks.
Scalar chunkExtent(const Scalar& extent, const Scalar& chunks, const Scalar& index);

// A copy of `src` over new operands in `into`. dropped_in[k] / dropped_out are the logical
// positions the operands lost relative to src's operands (views of one stream slice), or -1;
// attributes that index axes (permutation, broadcast and squeeze flags) are adjusted.
Expr* cloneExpr(Fusion& into, const Expr& src, std::vector<TensorView*> ins, std::vector<TensorView*> outs,
                const std::vector<int>& dropped_in, int dropped_out);

// Builds the HostUnit `id` running `exprs` (fusion exprs). `boundary(ft)` returns the program
// tensor bound to fusion tensor `ft` at the unit's boundary (inputs and outputs), or null for a
// tensor internal to the unit, which is cloned with logical axis `internal_drop(ft)` dropped.
HostUnit buildHostUnit(int id, const std::vector<const Expr*>& exprs,
                       const std::function<TensorView*(const TensorView*)>& boundary,
                       const std::function<int(const TensorView*)>& internal_drop);

// The tensors a statement writes directly (not those of nested bodies), into `out` (cleared
// first; a reusable buffer, as ir's stmtTensors (ir/host_ir.h) gives the tensors it names).
void stmtWrites(const Stmt& s, std::vector<TensorView*>& out);
// The same as a new vector, for passes that look at a few statements.
std::vector<TensorView*> stmtWrites(const Stmt& s);

// The buffer a tensor names: itself, or the base of the view chain it belongs to.
TensorView* bufferOf(const LoweringContext& ctx, TensorView* tv);

StmtPtr makeHostOp(Expr* e);

}  // namespace braid
