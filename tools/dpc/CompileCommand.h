//===- CompileCommand.h - dpc compile and calibrate -------------*- C++ -*-===//
//
// The two commands LLVM's option parser reads (CompileFlags.h), and what
// they share: loading and compiling the model, writing the output, the
// one-line errors.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_COMPILECOMMAND_H
#define DPC_TOOLS_DPC_COMPILECOMMAND_H

#include "tools/CompilePipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::cli {

/// `dpc compile` and `dpc calibrate` after their flags are parsed: the exit
/// status.
int runCompile();
int runCalibrate();

/// Prints `dpc: error: <file>: <message>` and returns the exit code.
int reportError(llvm::StringRef file, const llvm::Twine &message);
/// The pipeline's options that come from compile's and calibrate's flags.
PipelineOptions getFlagPipelineOptions();
/// Imports the model and runs `pipeline` on it; null after an error, which
/// it reports in one line unless `quiet` (a trial compilation).
mlir::OwningOpRef<mlir::ModuleOp> compileModel(mlir::MLIRContext &context,
                                               const PipelineOptions &pipeline,
                                               bool quiet = false);
/// The plan of the exec-level `module`, with the parameters' initial values
/// from the model file.
mlir::FailureOr<std::vector<uint8_t>> buildPlan(mlir::ModuleOp module,
                                                int64_t batch);
/// Writes `bytes` to -o (atomically), or to stdout for "-".
int writeOutput(llvm::StringRef bytes);
/// The device names of --devices, or an error naming the flag.
mlir::FailureOr<llvm::SmallVector<std::string>> parseDevices();

} // namespace dpc::cli

#endif // DPC_TOOLS_DPC_COMPILECOMMAND_H
