//===- Registration.h - everything dpc's tools register ---------*- C++ -*-===//

#ifndef DPC_TOOLS_REGISTRATION_H
#define DPC_TOOLS_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dpc {
/// The dialects dpc's IR may contain, and those its passes produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// dpc's own passes plus the upstream ones that are useful on its IR.
void registerAllPasses();
} // namespace dpc

#endif // DPC_TOOLS_REGISTRATION_H
