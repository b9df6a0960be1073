//===- CompilePipeline.h - the passes of dpc compile ------------*- C++ -*-===//
//
// The pass pipeline `dpc compile` runs on an imported model and the plan it
// writes, in one place so that the ONNX compile fuzz target
// (fuzz/OnnxCompileFuzzer.cpp) runs exactly what users run.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_COMPILEPIPELINE_H
#define DPC_TOOLS_COMPILEPIPELINE_H

#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace dpc {

/// What the pipeline does to the imported model.
struct PipelineOptions {
  int64_t batch = 0; // 0: leave the model's batch as it is
  bool training = false;
  bool partitions = false;
  bool lowers = false;
  int64_t gradAccum = 1; // micro-batches per optimizer step
  std::string devices;
  std::vector<int64_t> split;
  bool rematerializes = false;
  RematerializeOptions remat;
  std::string precision = "f32"; // --precision
  std::string costs;             // --costs
  std::string convAlgorithm = "auto"; // --conv-algorithm
  // The training step's loss and optimizer (--loss, --optimizer, ...).
  std::string loss = "cross-entropy";
  std::string optimizer = "sgd";
  double momentum = 0;
  bool nesterov = false;
  double weightDecay = -1; // -1: the optimizer's default
  bool syncBn = false;
  double bucketMb = 25;
  bool layouts = true; // --no-layouts clears it
  bool fusion = true;  // --no-fusion clears it
  bool shareCasts = true; // --no-share-casts clears it
};

/// Adds the passes that turn an imported module into what `pipeline` asks
/// for (a forward graph, a training step, per-device steps, exec IR).
void buildCompilePipeline(mlir::PassManager &pm,
                          const PipelineOptions &pipeline);

/// The plan of the exec-level `module` compiled from `modelPath`, with the
/// parameters' initial values from the model file and, for an ONNX model,
/// its eval graph for `dpc export`. A problem with the model file is one
/// line in `error`; the writer's are diagnostics on the module.
mlir::FailureOr<std::vector<uint8_t>>
buildModelPlan(mlir::ModuleOp module, llvm::StringRef modelPath, int64_t batch,
               llvm::StringRef producerVersion, std::string &error);

} // namespace dpc

#endif // DPC_TOOLS_COMPILEPIPELINE_H
