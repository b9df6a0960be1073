//===- CompilePipeline.h - the passes of dpc compile ------------*- C++ -*-===//
//
// The pass pipeline `dpc compile` runs on an imported model and the plan it
// writes, in one place so that the ONNX compile fuzz target
// (fuzz/OnnxCompileFuzzer.cpp) runs exactly what users run. As IREE's
// Stream phases, each phase is a builder of its own, and the pipeline and
// its phases are registered, so that dpc-opt replays any stage of
// `dpc compile --emit=STAGE` with one flag:
//
//   dpc-opt nn.mlir --dpc-compile-pipeline="emit=dist batch=8
//   devices=cpu:0,cpu:1" dpc-opt train.mlir
//   --dpc-dist-phase="devices=cpu:0,cpu:1"
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_COMPILEPIPELINE_H
#define DPC_TOOLS_COMPILEPIPELINE_H

#include "passes/Passes.h"
#include "passes/TrainLoss.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dpc {

/// dpc compile's --shard: what each device keeps only its part of (the
/// stages built so far; each includes the ones before).
enum class ShardStage { None, Optimizer, Gradients, Parameters };

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
  std::string precision = "f32";      // --precision
  std::string costs;                  // --costs
  std::string convAlgorithm = "auto"; // --conv-algorithm
  // The training step's loss and optimizer (--loss, --optimizer, ...).
  LossOptions loss;
  std::string optimizer = "sgd";
  double momentum = 0;
  bool nesterov = false;
  double weightDecay = -1; // -1: the optimizer's default
  bool syncBn = false;
  ShardStage shard = ShardStage::None; // --shard
  /// The gradient buckets (MiB); 0: the default, getBucketMb().
  double bucketMb = 0;
  /// 25 MiB, as DDP; 4 with sharded gradients, whose buckets' whole
  /// gradients and ranges are alive together (ResNet-18 with AdamW on 4
  /// devices: 25 MiB buckets leave more gradient bytes than ZeRO-1).
  double getBucketMb() const {
    return bucketMb > 0                     ? bucketMb
           : shard >= ShardStage::Gradients ? 4.0
                                            : 25.0;
  }
  bool layouts = true;    // --no-layouts clears it
  bool fusion = true;     // --no-fusion clears it
  bool shareCasts = true; // --no-share-casts clears it
};

/// Adds the passes that turn an imported module into what `pipeline` asks
/// for (a forward graph, a training step, per-device steps, exec IR): the
/// canonicalizer, then the phases below that `pipeline` asks for, in order.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const PipelineOptions &pipeline);

/// The training step and its gradient accumulation (with
/// `pipeline.training`), then the batch (with `pipeline.batch`): the nn
/// graph of `--emit=train`.
void buildTrainPhase(mlir::OpPassManager &pm, const PipelineOptions &pipeline);

/// The data-parallel partition over `pipeline.devices`, the optimizer-state
/// and gradient sharding (`pipeline.shard`) and the communication buckets: the
/// steps of `--emit=dist`, before rematerialization.
void buildDistPhase(mlir::OpPassManager &pm, const PipelineOptions &pipeline);

/// Rematerialization with `pipeline.remat`, measured by the back end's
/// memory plan (codegen's planStepMemory).
void buildRematPhase(mlir::OpPassManager &pm, const PipelineOptions &pipeline);

/// The lowering to exec IR and the passes that plan it: streams, arena,
/// memory report, layouts, fusion, precision and shared casts.
void buildExecPhase(mlir::OpPassManager &pm, const PipelineOptions &pipeline);

/// The stages `dpc compile --emit` prints.
enum class CompileStage { NN, Train, Dist, Exec };
/// dpc compile's --precision and --conv-algorithm.
enum class KernelPrecision { F32, BF16, Auto, TF32 };
enum class ConvAlgorithm { Direct, Winograd, Auto };

/// The options of the registered pipelines, named as dpc compile's flags
/// (--remat=MODE as remat-segments and remat-budget; --no-fusion as
/// fusion=false, ...).
struct CompilePipelineOptions
    : public mlir::PassPipelineOptions<CompilePipelineOptions> {
  Option<CompileStage> emit{
      *this, "emit",
      llvm::cl::desc("the last stage: nn, train, dist or exec (default)"),
      llvm::cl::init(CompileStage::Exec),
      llvm::cl::values(
          clEnumValN(CompileStage::NN, "nn", "the forward graph"),
          clEnumValN(CompileStage::Train, "train",
                     "the training and evaluation steps"),
          clEnumValN(CompileStage::Dist, "dist",
                     "the steps partitioned over the devices"),
          clEnumValN(CompileStage::Exec, "exec", "the planned steps"))};
  Option<int64_t> batch{
      *this, "batch",
      llvm::cl::desc("the global batch (default 256 for training stages)"),
      llvm::cl::init(0)};
  Option<std::string> devices{
      *this, "devices", llvm::cl::desc("cpu:K or cuda:K, comma-separated"),
      llvm::cl::init("cpu:0")};
  ListOption<int64_t> split{*this, "split",
                            llvm::cl::desc("each device's rows of the batch")};
  Option<bool> syncBn{*this, "sync-bn",
                      llvm::cl::desc("synchronize batch-norm statistics"),
                      llvm::cl::init(false)};
  Option<int64_t> gradAccum{*this, "grad-accum",
                            llvm::cl::desc("micro-batches per optimizer step"),
                            llvm::cl::init(1)};
  Option<ShardStage> shard{
      *this, "shard",
      llvm::cl::desc("what each device keeps only its part of: none "
                     "(default), optimizer, gradients or parameters"),
      llvm::cl::init(ShardStage::None),
      llvm::cl::values(
          clEnumValN(ShardStage::None, "none", "nothing"),
          clEnumValN(ShardStage::Optimizer, "optimizer",
                     "the optimizer state (ZeRO-1)"),
          clEnumValN(ShardStage::Gradients, "gradients",
                     "the optimizer state and the gradients (ZeRO-2)"),
          clEnumValN(ShardStage::Parameters, "parameters",
                     "the optimizer state, the gradients and the "
                     "parameters (ZeRO-3)"))};
  Option<double> bucketMb{
      *this, "bucket-mb",
      llvm::cl::desc("gradient bucket (MiB); 0: 25, or 4 with sharded "
                     "gradients"),
      llvm::cl::init(0.0)};
  Option<int64_t> rematSegments{
      *this, "remat-segments",
      llvm::cl::desc("--remat=segments=K: checkpoint K segments"),
      llvm::cl::init(0)};
  Option<std::string> rematBudget{
      *this, "remat-budget",
      llvm::cl::desc("--remat=budget=SIZE (or auto): the per-device budget"),
      llvm::cl::init("")};
  Option<std::string> loss{*this, "loss", llvm::cl::desc("the loss"),
                           llvm::cl::init("cross-entropy")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd or adamw"),
                                llvm::cl::init("sgd")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("SGD Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("weight decay (-1: the optimizer's default)"),
      llvm::cl::init(-1.0)};
  Option<KernelPrecision> precision{
      *this, "precision",
      llvm::cl::desc("convolutions and matmuls in f32 (default), bf16, "
                     "tf32 or auto"),
      llvm::cl::init(KernelPrecision::F32),
      llvm::cl::values(clEnumValN(KernelPrecision::F32, "f32", "f32"),
                       clEnumValN(KernelPrecision::BF16, "bf16", "bf16"),
                       clEnumValN(KernelPrecision::Auto, "auto",
                                  "the faster per layer and pass"),
                       clEnumValN(KernelPrecision::TF32, "tf32",
                                  "TensorFloat-32 on a GPU's tensor cores"))};
  Option<std::string> costs{*this, "costs",
                            llvm::cl::desc("dpc calibrate --kernels's file"),
                            llvm::cl::init("")};
  Option<ConvAlgorithm> convAlgorithm{
      *this, "conv-algorithm",
      llvm::cl::desc("CPU f32 3x3 convolutions: direct, winograd or auto "
                     "(default)"),
      llvm::cl::init(ConvAlgorithm::Auto),
      llvm::cl::values(
          clEnumValN(ConvAlgorithm::Direct, "direct", "direct"),
          clEnumValN(ConvAlgorithm::Winograd, "winograd",
                     "wherever it applies"),
          clEnumValN(ConvAlgorithm::Auto, "auto", "where it is faster"))};
  Option<bool> layouts{*this, "layouts",
                       llvm::cl::desc("blocked layouts (false: --no-layouts)"),
                       llvm::cl::init(true)};
  Option<bool> fusion{*this, "fusion",
                      llvm::cl::desc("fused kernels (false: --no-fusion)"),
                      llvm::cl::init(true)};
  Option<bool> shareCasts{
      *this, "share-casts",
      llvm::cl::desc("shared bf16 casts (false: --no-share-casts)"),
      llvm::cl::init(true)};

  /// What `dpc compile --emit=<emit>` with these flags runs.
  PipelineOptions getPipelineOptions() const;
};

/// Registers `dpc-compile-pipeline` (import to `emit`, as dpc compile) and
/// one pipeline per phase (`dpc-train-phase`, `dpc-dist-phase` with
/// rematerialization, `dpc-exec-phase`), each to run on the previous
/// stage's printed IR.
void registerCompilePipelines();

/// The plan of the exec-level `module` compiled from `modelPath`, with the
/// parameters' initial values from the model file and, for an ONNX model,
/// its eval graph for `dpc export`. A problem with the model file is one
/// line in `error`; the writer's are diagnostics on the module.
mlir::FailureOr<std::vector<uint8_t>>
buildModelPlan(mlir::ModuleOp module, llvm::StringRef modelPath, int64_t batch,
               llvm::StringRef producerVersion, std::string &error);

} // namespace dpc

#endif // DPC_TOOLS_COMPILEPIPELINE_H
