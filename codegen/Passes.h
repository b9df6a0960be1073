//===- Passes.h - codegen passes --------------------------------*- C++ -*-===//

#ifndef DPC_CODEGEN_PASSES_H
#define DPC_CODEGEN_PASSES_H

#include "ir/exec/ExecDialect.h"
#include "mlir/Pass/Pass.h"

namespace dpc {

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"

} // namespace dpc

#endif // DPC_CODEGEN_PASSES_H
