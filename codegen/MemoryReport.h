//===- MemoryReport.h - what an arena buffer holds ------------*- C++ -*-===//
//
// The lowering knows which nn value each arena buffer holds; the memory
// report (report-exec-memory), which runs on the planned arena, does not.
// So convert-nn-to-exec records it on each exec.arena in two discardable
// attributes, which the report reads and then removes:
//
//  - `exec.holds`: the value, as the report names it (the nn op, the
//    model's node, "(recomputed)" for recomputed values, the tensor type);
//  - `exec.kind`: `activation` (a forward value, kept for the backward pass
//    or recomputed), `gradient` (a parameter gradient) or `workspace`
//    (anything else: backward temporaries, a kernel's scratch).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_MEMORYREPORT_H
#define DPC_CODEGEN_MEMORYREPORT_H

#include "llvm/ADT/StringRef.h"

namespace dpc {

constexpr llvm::StringLiteral kArenaHoldsAttrName = "exec.holds";
constexpr llvm::StringLiteral kArenaKindAttrName = "exec.kind";

} // namespace dpc

#endif // DPC_CODEGEN_MEMORYREPORT_H
