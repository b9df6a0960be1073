//===- CompilePipeline.cpp - the passes of dpc compile --------------------===//

#include "tools/CompilePipeline.h"

#include "codegen/Passes.h"
#include "codegen/PlanWriter.h"
#include "codegen/StepMemory.h"
#include "frontend/onnx/InferenceModel.h"
#include "frontend/onnx/ONNXImporter.h"
#include "ir/exec/ExecOps.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace mlir;

void dpc::buildTrainPhase(OpPassManager &pm, const PipelineOptions &pipeline) {
  if (pipeline.training) {
    NNBuildTrainStepOptions options;
    const LossOptions &loss = pipeline.loss;
    options.loss = loss.loss;
    options.classAxis = loss.classAxis;
    if (loss.ignoreIndex)
      options.ignoreIndex = *loss.ignoreIndex;
    options.labelSmoothing = loss.labelSmoothing;
    options.classWeights = loss.classWeights;
    options.posWeight = loss.posWeight;
    options.delta = loss.delta;
    options.optimizer = pipeline.optimizer;
    options.momentum = pipeline.momentum;
    options.nesterov = pipeline.nesterov;
    options.weightDecay = pipeline.weightDecay;
    pm.addPass(createNNBuildTrainStep(options));
    AccumulateGradientsOptions accumulate;
    accumulate.gradAccum = pipeline.gradAccum;
    pm.addPass(createAccumulateGradients(accumulate));
  }
  // After differentiation, so that gradients follow the open batch to
  // whichever dim holds it (attention moves it) before it is fixed.
  if (pipeline.batch) {
    NNSetBatchOptions options;
    // The steps run one micro-batch; the plan's batch stays the global one.
    options.batch = pipeline.batch / pipeline.gradAccum;
    pm.addNestedPass<func::FuncOp>(createNNSetBatch(options));
  }
}

void dpc::buildDistPhase(OpPassManager &pm, const PipelineOptions &pipeline) {
  PartitionDataParallelOptions options;
  options.devices = pipeline.devices;
  options.split = pipeline.split;
  options.syncBn = pipeline.syncBn;
  pm.addPass(createPartitionDataParallel(options));
  // On the replicas the partition made, before the buckets, which group
  // the all-gathers it adds as they group the gradient all-reduces.
  if (pipeline.shard >= ShardStage::Optimizer) {
    ShardOptimizerStateOptions shard;
    shard.stateless = pipeline.shard >= ShardStage::Gradients;
    pm.addPass(createShardOptimizerState(shard));
  }
  if (pipeline.shard >= ShardStage::Gradients)
    pm.addPass(createShardGradients());
  if (pipeline.shard >= ShardStage::Parameters)
    pm.addPass(createShardParameters());
  BucketGradientsOptions buckets;
  buckets.bucketMb = pipeline.getBucketMb();
  pm.addNestedPass<func::FuncOp>(createBucketGradients(buckets));
}

void dpc::buildRematPhase(OpPassManager &pm, const PipelineOptions &pipeline) {
  pm.addPass(createRematerialize(pipeline.remat, planStepMemory));
}

void dpc::buildExecPhase(OpPassManager &pm, const PipelineOptions &pipeline) {
  pm.addPass(createConvertNNToExec());
  pm.addPass(createScheduleExecStreams());
  pm.addPass(createPlanExecArena());
  pm.addPass(createReportExecMemory());
  if (pipeline.layouts)
    pm.addPass(createAssignExecLayouts());
  if (pipeline.fusion)
    pm.addPass(createFuseExecKernels());
  // Always: it also chooses the convolutions' algorithm in f32.
  AssignKernelPrecisionOptions options;
  options.precision = pipeline.precision;
  options.costs = pipeline.costs;
  options.convAlgorithm = pipeline.convAlgorithm;
  pm.addPass(createAssignKernelPrecision(options));
  if (pipeline.shareCasts)
    pm.addPass(createShareExecCasts());
}

void dpc::buildCompilePipeline(OpPassManager &pm,
                               const PipelineOptions &pipeline) {
  pm.addPass(createCanonicalizerPass());
  buildTrainPhase(pm, pipeline);
  if (pipeline.partitions)
    buildDistPhase(pm, pipeline);
  // On the partitioned step, so that each device's replica fits its own
  // share; before the lowering, whose planner measures it.
  if (pipeline.rematerializes)
    buildRematPhase(pm, pipeline);
  if (pipeline.lowers)
    buildExecPhase(pm, pipeline);
}

dpc::PipelineOptions dpc::CompilePipelineOptions::getPipelineOptions() const {
  // As tools/dpc/dpc.cpp's runCompile sets them from its flags.
  PipelineOptions pipeline;
  CompileStage stage = emit;
  pipeline.training = stage != CompileStage::NN;
  pipeline.batch = batch.hasValue()    ? batch.getValue()
                   : pipeline.training ? 256
                                       : 0;
  pipeline.lowers = stage == CompileStage::Exec;
  pipeline.partitions = pipeline.lowers || stage == CompileStage::Dist;
  pipeline.devices = devices;
  pipeline.split.assign(split.begin(), split.end());
  pipeline.gradAccum = gradAccum;
  pipeline.remat.segments = rematSegments;
  pipeline.remat.budget = rematBudget;
  bool remats = rematSegments != 0 || !rematBudget.empty();
  pipeline.rematerializes =
      pipeline.partitions || (stage == CompileStage::Train && remats);
  pipeline.loss.loss = loss;
  pipeline.optimizer = optimizer;
  pipeline.momentum = momentum;
  pipeline.nesterov = nesterov;
  pipeline.weightDecay = weightDecay;
  pipeline.syncBn = syncBn;
  pipeline.shard = shard;
  pipeline.bucketMb = bucketMb;
  static constexpr const char *kPrecisions[] = {"f32", "bf16", "auto", "tf32"};
  static constexpr const char *kAlgorithms[] = {"direct", "winograd", "auto"};
  pipeline.precision = kPrecisions[static_cast<int>(precision.getValue())];
  pipeline.costs = costs;
  pipeline.convAlgorithm =
      kAlgorithms[static_cast<int>(convAlgorithm.getValue())];
  pipeline.layouts = layouts;
  pipeline.fusion = fusion;
  pipeline.shareCasts = shareCasts;
  return pipeline;
}

void dpc::registerCompilePipelines() {
  using Registration = PassPipelineRegistration<CompilePipelineOptions>;
  static Registration compile(
      "dpc-compile-pipeline",
      "dpc compile --emit=STAGE: from the imported nn graph to `emit`",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildCompilePipeline(pm, options.getPipelineOptions());
      });
  // One phase each, on the IR of the stage before (as dpc compile prints
  // it); `emit` is that of the phase.
  static Registration train(
      "dpc-train-phase",
      "The training step and the batch: --emit=nn's IR to --emit=train's",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        PipelineOptions pipeline = options.getPipelineOptions();
        pipeline.training = true;
        buildTrainPhase(pm, pipeline);
      });
  static Registration dist(
      "dpc-dist-phase",
      "The data-parallel partition, buckets and rematerialization: "
      "--emit=train's IR (without --remat) to --emit=dist's",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        PipelineOptions pipeline = options.getPipelineOptions();
        buildDistPhase(pm, pipeline);
        buildRematPhase(pm, pipeline);
      });
  static Registration exec(
      "dpc-exec-phase",
      "The lowering and its planning: --emit=dist's IR to --emit=exec's",
      [](OpPassManager &pm, const CompilePipelineOptions &options) {
        buildExecPhase(pm, options.getPipelineOptions());
      });
}

/// What `dpc export -o model.onnx` needs of the ONNX model: its eval graph
/// without the plan's parameters and buffers (every device's copy is one).
static FailureOr<dpc::OnnxModelRecord>
recordInferenceModel(ModuleOp module, StringRef modelPath,
                     const llvm::StringMap<std::vector<uint8_t>> &tensors,
                     StringRef producerVersion, std::string &error) {
  std::vector<dpc::frontend::StateTensor> state;
  llvm::StringSet<> seen;
  module.walk([&](dpc::exec::PersistentOp op) {
    if (op.getKind() != "optimizer_state" && op.getInit() != "constant" &&
        seen.insert(op.getPlanName()).second)
      state.push_back(
          {op.getPlanName().str(), cast<RankedTensorType>(op.getType())});
  });
  dpc::frontend::InferenceModel model;
  if (!dpc::frontend::buildInferenceModel(modelPath, state, tensors,
                                          producerVersion, model, error))
    return failure();
  dpc::OnnxModelRecord record;
  record.irVersion = model.irVersion;
  record.opset = model.opset;
  record.minOpset = model.minOpset;
  record.maxOpset = model.maxOpset;
  record.head = std::move(model.head);
  record.graph = std::move(model.graph);
  record.problem = std::move(model.problem);
  for (dpc::frontend::GraphForm &form : model.forms)
    record.forms.push_back({form.minOpset, form.maxOpset, std::move(form.graph),
                            std::move(form.problem)});
  return record;
}

FailureOr<std::vector<uint8_t>>
dpc::buildModelPlan(ModuleOp module, StringRef modelPath, int64_t batch,
                    StringRef producerVersion, std::string &error) {
  bool isOnnx = llvm::sys::path::extension(modelPath) == ".onnx";
  llvm::StringMap<std::vector<uint8_t>> tensors;
  if (isOnnx && !frontend::readONNXTensors(modelPath, tensors, error))
    return failure();
  PlanOptions options;
  if (isOnnx) {
    FailureOr<OnnxModelRecord> record = recordInferenceModel(
        module, modelPath, tensors, producerVersion, error);
    if (failed(record))
      return failure();
    options.onnxModel = std::move(*record);
  }
  options.modelPath = modelPath.str();
  options.batch = batch;
  auto lookup = [&](StringRef name) -> const std::vector<uint8_t> * {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
  };
  options.initialValues = lookup;
  return writePlan(module, options);
}
