//===- ImportContext.h - what the ONNX importer lends its parts -*- C++ -*-===//
//
// The importer (Importer.h) implements it; families that keep their own
// bookkeeping (LstmImport.h) reach the importer's values and op
// construction through this interface alone.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_IMPORTCONTEXT_H
#define DPC_FRONTEND_ONNX_IMPORTCONTEXT_H

#include "frontend/onnx/ShapeFolding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <string>

namespace dpc::frontend {

class ImportContext {
public:
  virtual ~ImportContext() = default;

  /// The nn value of ONNX value `name`; fails as the importer does when it
  /// has none.
  virtual mlir::Value valueOf(const std::string &name) = 0;
  /// The value of `name` if it is known at import (ShapeFolding.h).
  virtual const KnownTensor *knownTensorOf(const std::string &name) = 0;
  /// Builds one nn op named `opName` with `numResults` results at the
  /// current node, with the result types the nn dialect infers; fails with
  /// the op's message if it rejects its operands.
  virtual mlir::Operation *build(llvm::StringRef opName,
                                 mlir::ValueRange operands,
                                 llvm::ArrayRef<mlir::NamedAttribute> attrs,
                                 unsigned numResults = 1) = 0;
  /// Binds ONNX value `name` to `value` / to a tensor known at import.
  virtual void bind(const std::string &name, mlir::Value value) = 0;
  virtual void bindKnown(const std::string &name, KnownTensor value) = 0;
  /// Fails the current node with `message` (the importer adds the node).
  [[noreturn]] virtual void error(const std::string &message) = 0;
  virtual mlir::OpBuilder &opBuilder() = 0;
  /// A tensor whose dim 0 is the batch (the first data input): what a
  /// value repeated for each sample is broadcast over.
  virtual mlir::Value batchRows() = 0;

  template <typename OpTy>
  mlir::Value create(mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return build(OpTy::getOperationName(), operands, attrs)->getResult(0);
  }
};

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_IMPORTCONTEXT_H
