//===- dpc.cpp - the dpc command line -------------------------------------===//
//
// `dpc compile` imports a model (ONNX or nn MLIR) and prints a stage of its
// compilation; `dpc calibrate` times its training step on each device for
// `dpc compile --balance`; the other commands (run, eval, predict, inspect,
// launch) have parsers of their own. Errors a user can cause are one line
// naming the file, with a non-zero exit.
//
//===----------------------------------------------------------------------===//
// size: to split (issue 26): each command into a file of its own.

#include "frontend/onnx/EvalExportNote.h"
#include "frontend/onnx/ONNXImporter.h"
#include "ir/dist/DistDialect.h"
#include "passes/Passes.h"
#include "passes/RematSupport.h"
#include "runtime/io/FileWrite.h"
#include "runtime/launch/Launcher.h"
#include "runtime/plan/ByteSize.h"
#include "runtime/train/EvalCommand.h"
#include "runtime/train/ExportCommand.h"
#include "runtime/train/RunCommand.h"
#include "tools/CompilePipeline.h"
#include "tools/Registration.h"
#include "tools/dpc/Balance.h"
#include "tools/dpc/Calibrate.h"
#include "tools/dpc/Help.h"
#include "tools/dpc/Inspect.h"
#include "tools/dpc/LossFlags.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <array>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;
using dpc::PipelineOptions;

static cl::SubCommand compileCommand("compile",
                                     "Compile a model (.onnx or .mlir)");
static cl::SubCommand calibrateCommand(
    "calibrate",
    "Time the training step of a model (or of a one-device plan file) on "
    "each device alone; write the cost file of dpc compile --balance");

// The groups of `dpc compile --help` and `dpc calibrate --help`.
static cl::OptionCategory inputOutputOptions("Input and output");
static cl::OptionCategory parallelOptions("Devices and data parallelism");
static cl::OptionCategory trainingOptions("Training step");
static cl::OptionCategory memoryOptions("Memory");
static cl::OptionCategory timingOptions("Timing");

// The model, the output and the training step are the same for both.
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::sub(compileCommand),
                                      cl::sub(calibrateCommand));
static cl::opt<std::string>
    outputPath("o", cl::desc("the output file (default: stdout)"),
               cl::value_desc("FILE"), cl::init("-"), cl::sub(compileCommand),
               cl::sub(calibrateCommand), cl::cat(inputOutputOptions));
static cl::opt<int64_t> batchSize(
    "batch",
    cl::desc("the global batch, the most a step runs (default 256 for "
             "training stages)"),
    cl::value_desc("N"), cl::sub(compileCommand), cl::cat(inputOutputOptions));

static cl::opt<std::string>
    devices("devices",
            cl::desc("the devices to train on: cpu:K or cuda:K, "
                     "comma-separated (default cpu:0)"),
            cl::value_desc("DEVICES"), cl::init("cpu:0"),
            cl::sub(compileCommand), cl::sub(calibrateCommand),
            cl::cat(parallelOptions));
static cl::list<int64_t>
    split("split",
          cl::desc("each device's rows of the batch (default: even, as "
                   "torch.chunk)"),
          cl::value_desc("N,N,..."), cl::CommaSeparated,
          cl::sub(compileCommand), cl::cat(parallelOptions));
static cl::opt<std::string>
    balance("balance",
            cl::desc("split the batch by each device's throughput, from dpc "
                     "calibrate's file (default: equal)"),
            cl::value_desc("COSTS.json"), cl::ValueOptional,
            cl::sub(compileCommand), cl::cat(parallelOptions));
static cl::opt<bool>
    syncBn("sync-bn",
           cl::desc("synchronize batch-norm statistics over the devices "
                    "(SyncBatchNorm)"),
           cl::sub(compileCommand), cl::cat(parallelOptions));
static cl::opt<int64_t> gradAccum(
    "grad-accum",
    cl::desc("micro-batches per optimizer step, gradients accumulated "
             "(default 1)"),
    cl::init(1), cl::value_desc("K"), cl::sub(compileCommand),
    cl::cat(parallelOptions));
static cl::opt<double>
    bucketMb("bucket-mb",
             cl::desc("gradient all-reduce bucket size in MiB, after a "
                      "first of 1 MiB (default 25)"),
             cl::init(25.0), cl::value_desc("MIB"), cl::sub(compileCommand),
             cl::cat(parallelOptions));

static cl::opt<std::string>
    shard("shard",
          cl::desc("what each device keeps only its part of: none (default) "
                   "or optimizer (the optimizer state, ZeRO-1)"),
          cl::init("none"), cl::value_desc("STAGE"), cl::sub(compileCommand),
          cl::cat(memoryOptions));
static cl::opt<std::string>
    remat("remat",
          cl::desc("recompute activations: none (default), auto, budget=SIZE "
                   "(per device) or segments=K"),
          cl::init("none"), cl::value_desc("MODE"), cl::sub(compileCommand),
          cl::cat(memoryOptions));
static cl::opt<bool>
    noFusion("no-fusion",
             cl::desc("keep every kernel call apart (no fused kernels), to "
                      "compare against"),
             cl::sub(compileCommand), cl::cat(memoryOptions));
static cl::opt<bool> noShareCasts(
    "no-share-casts",
    cl::desc("let every bf16 call cast its operands itself (no bf16 copy "
             "shared between calls), to compare against"),
    cl::sub(compileCommand), cl::cat(memoryOptions));
static cl::opt<bool> noLayouts(
    "no-layouts",
    cl::desc("keep every buffer plain NCHW (no blocked layouts planned for "
             "the convolutions), to compare against"),
    cl::sub(compileCommand), cl::cat(memoryOptions));
static cl::opt<bool> reportMemory(
    "report-memory",
    cl::desc("print each device's planned peak memory by kind, and what is "
             "alive at the peak"),
    cl::sub(compileCommand), cl::cat(memoryOptions));

enum class Stage { NN, Train, Dist, Exec };
static cl::opt<Stage> emitStage(
    "emit",
    cl::desc("print a stage as MLIR instead of writing the plan: nn, train, "
             "dist or exec"),
    cl::value_desc("STAGE"),
    cl::values(clEnumValN(Stage::NN, "nn",
                          "the imported forward graph (nn dialect)"),
               clEnumValN(Stage::Train, "train",
                          "the training and evaluation steps (nn dialect)"),
               clEnumValN(Stage::Dist, "dist",
                          "the steps partitioned over the devices, with "
                          "their collectives (nn + dist)"),
               clEnumValN(Stage::Exec, "exec",
                          "the planned steps: buffers and kernel calls")),
    cl::sub(compileCommand), cl::cat(inputOutputOptions));

static cl::opt<std::string> lossName(
    "loss",
    cl::desc("the loss: cross-entropy (default), mse, l1, huber, smooth-l1 "
             "or bce-with-logits (README: Losses and targets)"),
    cl::value_desc("LOSS"), cl::init("cross-entropy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<int64_t> classAxis(
    "class-axis",
    cl::desc("cross-entropy: the logits' class dim (default 1, PyTorch's; "
             "-1: the last, a language model's [N, T, V])"),
    cl::value_desc("DIM"), cl::init(1), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<int64_t> ignoreIndex(
    "ignore-index",
    cl::desc("cross-entropy: targets of this class count for nothing "
             "(default: none)"),
    cl::value_desc("N"), cl::sub(compileCommand), cl::sub(calibrateCommand),
    cl::cat(trainingOptions));
static cl::opt<double>
    labelSmoothing("label-smoothing",
                   cl::desc("cross-entropy: PyTorch's label_smoothing"),
                   cl::value_desc("F"), cl::init(0.0), cl::sub(compileCommand),
                   cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<std::string> classWeights(
    "class-weights",
    cl::desc("cross-entropy: a weight per class, as 1,2,0.5 or a 1-D .npy"),
    cl::value_desc("LIST|FILE.npy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<double>
    huberDelta("huber-delta",
               cl::desc("huber's delta, smooth-l1's beta (default 1)"),
               cl::value_desc("F"), cl::init(1.0), cl::sub(compileCommand),
               cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<std::string> posWeight(
    "pos-weight",
    cl::desc("bce-with-logits: a weight of the positives per class (the "
             "last dim), as a list or a 1-D .npy"),
    cl::value_desc("LIST|FILE.npy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<std::string>
    optimizerName("optimizer", cl::desc("sgd (default) or adamw"),
                  cl::value_desc("NAME"), cl::init("sgd"),
                  cl::sub(compileCommand), cl::sub(calibrateCommand),
                  cl::cat(trainingOptions));
static cl::opt<double>
    momentum("momentum", cl::desc("SGD momentum (default 0)"),
             cl::value_desc("M"), cl::init(0.0), cl::sub(compileCommand),
             cl::sub(calibrateCommand), cl::cat(trainingOptions));
static cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                              cl::sub(compileCommand),
                              cl::sub(calibrateCommand),
                              cl::cat(trainingOptions));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("convolutions and matmuls in f32 (default), bf16 (f32 "
             "accumulation and weights, as torch.autocast) or auto (the "
             "faster per layer and pass)"),
    cl::value_desc("P"), cl::init("f32"), cl::sub(compileCommand),
    cl::cat(trainingOptions));
static cl::opt<std::string> precisionCosts(
    "costs",
    cl::desc("the kernel times of dpc calibrate --kernels, which decide "
             "precisions and algorithms (default: built-in rules)"),
    cl::value_desc("FILE"), cl::sub(compileCommand), cl::cat(trainingOptions));
static cl::opt<std::string> convAlgorithm(
    "conv-algorithm",
    cl::desc("CPU f32 3x3 convolutions: direct, winograd (wherever it "
             "applies) or auto (default: where it is faster)"),
    cl::value_desc("A"), cl::init("auto"), cl::sub(compileCommand),
    cl::cat(trainingOptions));
static cl::opt<double>
    weightDecay("weight-decay",
                cl::desc("weight decay (default: PyTorch's for the optimizer)"),
                cl::value_desc("W"), cl::init(-1.0), cl::sub(compileCommand),
                cl::sub(calibrateCommand), cl::cat(trainingOptions));

static cl::opt<int64_t> calibrateBatch(
    "batch",
    cl::desc("rows per timed step (default: 64 for a model, the compiled "
             "batch for a plan)"),
    cl::value_desc("N"), cl::init(0), cl::sub(calibrateCommand),
    cl::cat(timingOptions));
static cl::opt<bool> calibrateKernels(
    "kernels",
    cl::desc("time each convolution and matmul of a model in f32, bf16 and "
             "(3x3 convolutions) Winograd instead: the file of dpc compile "
             "--costs"),
    cl::sub(calibrateCommand), cl::cat(timingOptions));
static cl::opt<int>
    calibrateSteps("steps", cl::desc("timed steps per device (default 20)"),
                   cl::value_desc("S"), cl::init(20), cl::sub(calibrateCommand),
                   cl::cat(timingOptions));
static cl::opt<int>
    calibrateWarmup("warmup",
                    cl::desc("untimed steps per device first (default 3)"),
                    cl::value_desc("W"), cl::init(3), cl::sub(calibrateCommand),
                    cl::cat(timingOptions));

/// Prints `dpc: error: <file>: <message>` and returns the exit code.
static int reportError(StringRef file, const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "dpc")
      << file << ": " << message << "\n";
  return 1;
}

/// Diagnostics after the import concern the model: one line naming it and
/// the node (or input) at fault, from the location the importer gave the
/// ops.
static LogicalResult reportModelDiagnostic(Diagnostic &diag) {
  if (diag.getSeverity() != DiagnosticSeverity::Error)
    return success();
  std::string node;
  diag.getLocation()->walk([&](Location nested) {
    if (auto name = dyn_cast<NameLoc>(nested)) {
      node = name.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  reportError(modelPath,
              (node.empty() ? "" : "node '" + node + "': ") + diag.str());
  return success();
}

static OwningOpRef<ModuleOp> loadModel(MLIRContext &context) {
  if (llvm::sys::path::extension(modelPath) == ".mlir") {
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    std::string message;
    auto file = openInputFile(modelPath, &message);
    if (!file) {
      reportError(modelPath, message);
      return nullptr;
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  std::string error;
  OwningOpRef<ModuleOp> module =
      dpc::frontend::importONNXFile(modelPath, context, error);
  if (!module)
    reportError(modelPath, error);
  else if (std::string note = dpc::frontend::getEvalExportNote(modelPath);
           !note.empty())
    llvm::WithColor::note(llvm::errs(), "dpc")
        << modelPath << ": " << note << "\n";
  return module;
}

/// The plan of the exec-level `module`, with the parameters' initial values
/// from the model file.
static FailureOr<std::vector<uint8_t>> buildPlan(ModuleOp module,
                                                 int64_t batch) {
  ScopedDiagnosticHandler handler(module.getContext(), reportModelDiagnostic);
  std::string error;
  FailureOr<std::vector<uint8_t>> plan =
      dpc::buildModelPlan(module, modelPath, batch, DPC_VERSION, error);
  if (!error.empty())
    reportError(modelPath, error);
  return plan;
}

/// Writes `bytes` to `outputPath` (atomically: a failed write leaves no
/// partial plan), or to stdout for "-".
static int writeOutput(StringRef bytes) {
  if (outputPath == "-") {
    llvm::outs() << bytes;
    llvm::outs().flush();
    if (std::error_code error = llvm::outs().error()) {
      llvm::outs().clear_error();
      return reportError("<stdout>", "cannot write (" + error.message() + ")");
    }
    return 0;
  }
  std::string error;
  if (!dpc::io::writeFileAtomically(outputPath, bytes.data(), bytes.size(),
                                    error)) {
    llvm::WithColor::error(llvm::errs(), "dpc") << error << "\n";
    return 1;
  }
  return 0;
}

/// The pipeline's options that come from compile's and calibrate's flags.
static PipelineOptions getFlagPipelineOptions() {
  PipelineOptions pipeline;
  pipeline.loss.loss = lossName;
  pipeline.loss.classAxis = classAxis;
  if (ignoreIndex.getNumOccurrences())
    pipeline.loss.ignoreIndex = ignoreIndex;
  pipeline.loss.labelSmoothing = labelSmoothing;
  pipeline.loss.delta = huberDelta;
  pipeline.optimizer = optimizerName;
  pipeline.momentum = momentum;
  pipeline.nesterov = nesterov;
  pipeline.weightDecay = weightDecay;
  pipeline.syncBn = syncBn;
  pipeline.bucketMb = bucketMb;
  pipeline.layouts = !noLayouts;
  pipeline.fusion = !noFusion;
  pipeline.shareCasts = !noShareCasts;
  return pipeline;
}

/// Imports the model and runs `pipeline` on it; null after an error.
static OwningOpRef<ModuleOp> compileModel(MLIRContext &context,
                                          const PipelineOptions &pipeline) {
  OwningOpRef<ModuleOp> module = loadModel(context);
  if (!module)
    return nullptr;
  ScopedDiagnosticHandler handler(&context, reportModelDiagnostic);
  if (failed(verify(*module)))
    return nullptr;
  PassManager pm(&context);
  dpc::buildCompilePipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

/// The device names of --devices, or an error naming the flag.
static FailureOr<SmallVector<std::string>> parseDevices() {
  SmallVector<StringRef> names;
  StringRef(devices).split(names, ',');
  SmallVector<std::string> result;
  for (StringRef name : names) {
    name = name.trim();
    if (!dpc::dist::isDeviceName(name)) {
      reportError("--devices",
                  "bad device '" + name + "': expected cpu:K or cuda:K");
      return failure();
    }
    if (llvm::is_contained(result, name)) {
      reportError("--devices", "device '" + name + "' is listed twice");
      return failure();
    }
    result.push_back(name.str());
  }
  return result;
}

/// The split of `batch` that --balance chooses, printed on stderr.
static FailureOr<std::vector<int64_t>> chooseBalancedSplit(int64_t batch) {
  FailureOr<SmallVector<std::string>> names = parseDevices();
  if (failed(names))
    return failure();
  dpc::CostModel costs;
  if (!balance.empty()) {
    llvm::Expected<dpc::CostModel> read = dpc::readCostModel(balance);
    if (!read) {
      llvm::WithColor::error(llvm::errs(), "dpc")
          << llvm::toString(read.takeError()) << "\n";
      return failure();
    }
    costs = std::move(*read);
  } else {
    // No measurements: every device alike.
    costs.throughput = {{"cpu", 1.0}, {"cuda", 1.0}};
  }
  SmallVector<double> throughputs;
  for (const std::string &name : *names) {
    llvm::Expected<double> throughput = dpc::lookupThroughput(costs, name);
    if (!throughput) {
      reportError(balance, llvm::toString(throughput.takeError()));
      return failure();
    }
    throughputs.push_back(*throughput);
  }
  SmallVector<int64_t> split = dpc::balanceSplit(throughputs, batch);
  llvm::raw_ostream &os = llvm::errs();
  os << "dpc: balance:";
  for (size_t d = 0; d < split.size(); ++d) {
    os << (d ? ", " : " ") << (*names)[d] << " "
       << llvm::format("%.4g", throughputs[d]);
    if (!costs.unit.empty())
      os << " " << costs.unit;
    os << " -> " << split[d] << " rows";
  }
  if (balance.empty())
    os << " (no cost file: equal throughput)\n";
  else
    os << " (" << balance << ")\n";
  return std::vector<int64_t>(split.begin(), split.end());
}

// size: to shorten (issue 26), with the split of this file.
static int runCompile() {
  if (batchSize.getNumOccurrences() && batchSize <= 0)
    return reportError(modelPath, "--batch must be a positive integer, got " +
                                      Twine(batchSize.getValue()));
  if (balance.getNumOccurrences() && split.getNumOccurrences())
    return reportError("--balance", "cannot be combined with --split: both "
                                    "choose the split");
  bool writesPlan = !emitStage.getNumOccurrences();
  dpc::RematerializeOptions rematOptions;
  {
    StringRef spec = remat;
    if (spec.consume_front("segments=")) {
      if (spec.getAsInteger(10, rematOptions.segments) ||
          rematOptions.segments < 2)
        return reportError(modelPath, "--remat=segments=K needs an integer "
                                      "K > 1, got '" +
                                          spec + "'");
    } else if (spec.consume_front("budget=")) {
      if (!dpc::plan::parseByteSize(spec.str()))
        return reportError(modelPath, "--remat=budget=SIZE: '" + spec +
                                          "' is not a size (e.g. 1.5GiB, "
                                          "300MiB, bytes)");
      rematOptions.budget = spec.str();
    } else if (spec == "auto") {
      rematOptions.budget = "auto";
    } else if (spec != "none") {
      return reportError(modelPath, "--remat: expected none, auto, "
                                    "budget=SIZE or segments=K, got '" +
                                        spec + "'");
    }
  }
  if (precision != "f32" && precision != "bf16" && precision != "auto")
    return reportError(modelPath, "--precision: expected f32, bf16 or auto, "
                                  "got '" +
                                      precision + "'");
  if (precisionCosts.getNumOccurrences() && precision == "bf16")
    return reportError(precisionCosts, "--costs chooses for --precision "
                                       "f32 or auto, but the precision is " +
                                           precision);
  if (convAlgorithm != "direct" && convAlgorithm != "winograd" &&
      convAlgorithm != "auto")
    return reportError(modelPath, "--conv-algorithm: expected direct, "
                                  "winograd or auto, got '" +
                                      convAlgorithm + "'");
  if (convAlgorithm == "winograd" && precision == "bf16")
    return reportError(modelPath, "--conv-algorithm winograd computes in f32 "
                                  "only, but --precision is bf16");
  if (reportMemory && emitStage.getNumOccurrences() && emitStage != Stage::Exec)
    return reportError(modelPath, "--report-memory needs the planned steps: "
                                  "write a plan or use --emit=exec");
  if (writesPlan && outputPath == "-")
    return reportError(modelPath, "give the plan file with -o PLAN, or "
                                  "print a stage with --emit");

  // Training stages need a fixed batch: the plan is sized for it.
  PipelineOptions pipeline = getFlagPipelineOptions();
  for (auto [flag, weights] :
       {std::pair(&classWeights, &pipeline.loss.classWeights),
        std::pair(&posWeight, &pipeline.loss.posWeight)}) {
    if (!flag->getNumOccurrences())
      continue;
    std::vector<double> values;
    std::string error;
    if (!dpc::readWeightList(flag->ArgStr.str(), *flag, values, error))
      return reportError(modelPath, error);
    weights->assign(values.begin(), values.end());
  }
  pipeline.training = writesPlan || emitStage != Stage::NN;
  pipeline.batch = batchSize.getNumOccurrences() ? batchSize.getValue()
                   : pipeline.training           ? 256
                                                 : 0;
  pipeline.lowers = writesPlan || emitStage == Stage::Exec;
  pipeline.partitions = pipeline.lowers || emitStage == Stage::Dist;
  pipeline.devices = devices;
  pipeline.split.assign(split.begin(), split.end());
  if (gradAccum < 1)
    return reportError(modelPath, "--grad-accum must be at least 1");
  if (gradAccum > 1 && (!pipeline.training || pipeline.batch % gradAccum != 0))
    return reportError(modelPath,
                       "--grad-accum " + Twine(gradAccum.getValue()) +
                           " must divide the batch " + Twine(pipeline.batch));
  pipeline.gradAccum = gradAccum;
  pipeline.rematerializes =
      pipeline.partitions || (emitStage == Stage::Train && remat != "none");
  pipeline.remat = rematOptions;
  if (shard != "none" && shard != "optimizer")
    return reportError(modelPath,
                       "--shard " + shard + ": expected none or optimizer" +
                           (shard == "gradients" || shard == "parameters"
                                ? " (" + shard + " sharding is not built yet)"
                                : ""));
  pipeline.shardOptimizer = shard == "optimizer";
  pipeline.precision = precision;
  pipeline.costs = precisionCosts;
  pipeline.convAlgorithm = convAlgorithm;
  if (pipeline.partitions && balance.getNumOccurrences()) {
    // With --grad-accum, the split is that of one micro-batch.
    FailureOr<std::vector<int64_t>> balanced =
        chooseBalancedSplit(pipeline.batch / pipeline.gradAccum);
    if (failed(balanced))
      return 1;
    pipeline.split = std::move(*balanced);
  }

  DialectRegistry registry;
  dpc::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = compileModel(context, pipeline);
  if (!module)
    return 1;
  if (writesPlan || reportMemory) {
    FailureOr<std::vector<uint8_t>> plan = buildPlan(*module, pipeline.batch);
    if (failed(plan))
      return 1;
    // The writer checks the loader's limits where it knows the node at
    // fault; whatever else the loader would refuse is caught here, so that
    // no plan is written that `dpc run` refuses.
    if (std::string problem = dpc::checkPlanLoads(
            *plan, writesPlan ? outputPath.getValue() : "the plan");
        !problem.empty())
      return reportError(modelPath, "the compiled plan fails the runtime's "
                                    "checks (a compiler bug; no plan is "
                                    "written): " +
                                        problem);
    // The report goes where it cannot mix with a printed stage.
    if (reportMemory)
      if (int status = dpc::printMemoryReport(*plan, modelPath,
                                              writesPlan ? stdout : stderr))
        return status;
    if (writesPlan)
      return writeOutput(StringRef(reinterpret_cast<const char *>(plan->data()),
                                   plan->size()));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return writeOutput(text);
}

/// `dpc calibrate --kernels`: every convolution and matmul call of the
/// model's train step timed in f32, in bf16 and, where it applies, in f32
/// with Winograd on one CPU device, as the cost file of `dpc compile
/// --costs`:
///
///   {"unit": "us", "device": "cpu:0", "batch": 64,
///    "kernels": {"<cost key>": {"f32": 812.5, "bf16": 402.1,
///                               "f32_winograd": 301.7}, ...}}
///
/// A key (runtime/abi/KernelCostKey.h) several calls share gets their mean.
// size: to shorten (issue 26), with the split of this file.
static int calibrateKernelTimes(bool isModel, ArrayRef<std::string> names) {
  if (!isModel)
    return reportError(modelPath, "--kernels times a model (.onnx or "
                                  ".mlir), which it compiles in f32, "
                                  "bf16 and Winograd, not a plan");
  if (names.size() != 1 || !StringRef(names[0]).starts_with("cpu:"))
    return reportError("--devices", "--kernels times one CPU device");
  DialectRegistry registry;
  dpc::registerAllDialects(registry);
  dpc::CalibrateOptions options;
  options.batch = calibrateBatch;
  options.warmup = calibrateWarmup;
  options.steps = calibrateSteps;
  std::vector<std::vector<dpc::KernelTime>> times;
  int64_t batch = 0;
  // f32 direct, bf16, and f32 with Winograd wherever it applies, unless it
  // applies nowhere.
  for (auto [precision, algorithm] :
       {std::pair("f32", "direct"), std::pair("bf16", "direct"),
        std::pair("f32", "winograd")}) {
    PipelineOptions pipeline = getFlagPipelineOptions();
    pipeline.batch = batch = calibrateBatch ? calibrateBatch.getValue() : 64;
    pipeline.training = pipeline.partitions = pipeline.lowers = true;
    pipeline.devices = names[0];
    pipeline.precision = precision;
    pipeline.convAlgorithm = algorithm;
    MLIRContext context(registry);
    OwningOpRef<ModuleOp> module = compileModel(context, pipeline);
    if (!module)
      return 1;
    bool anyWinograd = false;
    module->walk([&](Operation *op) {
      auto name = op->getAttrOfType<StringAttr>("algorithm");
      anyWinograd |= name && name.getValue() == "winograd";
    });
    if (StringRef(algorithm) == "winograd" && !anyWinograd)
      break;
    FailureOr<std::vector<uint8_t>> plan = buildPlan(*module, pipeline.batch);
    if (failed(plan))
      return 1;
    dpc::CalibrateDevice device;
    device.name = names[0];
    device.plan = std::move(*plan);
    std::string error;
    if (!dpc::measureKernelTimes(std::move(device), modelPath, options,
                                 times.emplace_back(), error)) {
      llvm::WithColor::error(llvm::errs(), "dpc") << error << "\n";
      return 1;
    }
  }
  // The plans make the same calls in the same order.
  struct Sums {
    double f32 = 0, bf16 = 0, winograd = 0, calls = 0;
    bool hasWinograd = false;
  };
  std::map<std::string, Sums> costs;
  for (size_t i = 0; i < times[0].size(); ++i) {
    Sums &cost = costs[times[0][i].key];
    cost.f32 += times[0][i].micros;
    cost.bf16 += times[1].at(i).micros;
    if (times.size() > 2 && times[2].at(i).winograd) {
      cost.winograd += times[2][i].micros;
      cost.hasWinograd = true;
    }
    cost.calls += 1;
  }
  size_t winogradShapes = llvm::count_if(
      costs, [](const auto &entry) { return entry.second.hasWinograd; });
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("unit", "us");
    json.attribute("model", modelPath);
    json.attribute("device", names[0]);
    json.attribute("batch", batch);
    json.attribute("steps", int64_t(calibrateSteps));
    json.attributeObject("kernels", [&] {
      // Not a structured binding: clang 14 refuses to capture one in the
      // lambda below.
      for (const auto &entry : costs) {
        const auto &cost = entry.second;
        json.attributeObject(entry.first, [&] {
          for (auto [name, sum] :
               {std::pair("f32", cost.f32), std::pair("bf16", cost.bf16),
                std::pair("f32_winograd", cost.winograd)}) {
            if (StringRef(name) == "f32_winograd" && !cost.hasWinograd)
              continue;
            json.attributeBegin(name);
            json.rawValue(
                llvm::formatv("{0}", llvm::format("%.1f", sum / cost.calls))
                    .str());
            json.attributeEnd();
          }
        });
      }
    });
  });
  os << "\n";
  llvm::errs() << "dpc: calibrate: " << costs.size()
               << " convolution and matmul shapes timed in f32 and bf16, "
               << winogradShapes << " of them in f32 Winograd too ("
               << times[0].size() << " calls, median of "
               << calibrateSteps.getValue() << " steps of " << batch
               << " rows)\n";
  return writeOutput(text);
}

/// `dpc calibrate`: the training throughput of each device, alone, into a
/// cost file. A model is compiled once per device kind, for the first device
/// of that kind, and run as each device of the kind.
static int runCalibrate() {
  if (calibrateSteps < 1)
    return reportError("--steps", "must be at least 1, got " +
                                      Twine(calibrateSteps.getValue()));
  if (calibrateWarmup < 0)
    return reportError("--warmup", "must not be negative, got " +
                                       Twine(calibrateWarmup.getValue()));
  if (calibrateBatch < 0)
    return reportError("--batch", "must be a positive integer, got " +
                                      Twine(calibrateBatch.getValue()));
  FailureOr<SmallVector<std::string>> names = parseDevices();
  if (failed(names))
    return 1;
  StringRef extension = llvm::sys::path::extension(modelPath);
  bool isModel = extension == ".onnx" || extension == ".mlir";
  if (calibrateKernels)
    return calibrateKernelTimes(isModel, *names);

  // The plan each device kind runs.
  llvm::StringMap<std::vector<uint8_t>> plans;
  llvm::StringMap<int> devicesOfKind;
  for (const std::string &name : *names)
    ++devicesOfKind[StringRef(name).split(':').first];
  if (!isModel) {
    auto file = llvm::MemoryBuffer::getFile(modelPath, /*IsText=*/false);
    if (!file)
      return reportError(modelPath, "cannot read the plan file: " +
                                        file.getError().message());
    StringRef bytes = (*file)->getBuffer();
    for (const auto &kind : devicesOfKind)
      plans[kind.getKey()].assign(bytes.begin(), bytes.end());
  } else {
    DialectRegistry registry;
    dpc::registerAllDialects(registry);
    for (const std::string &name : *names) {
      StringRef kind = StringRef(name).split(':').first;
      if (plans.count(kind))
        continue;
      PipelineOptions pipeline = getFlagPipelineOptions();
      pipeline.batch = calibrateBatch ? calibrateBatch.getValue() : 64;
      pipeline.training = pipeline.partitions = pipeline.lowers = true;
      pipeline.devices = name;
      MLIRContext context(registry);
      OwningOpRef<ModuleOp> module = compileModel(context, pipeline);
      if (!module)
        return 1;
      FailureOr<std::vector<uint8_t>> plan = buildPlan(*module, pipeline.batch);
      if (failed(plan))
        return 1;
      plans[kind] = std::move(*plan);
    }
  }

  std::vector<dpc::CalibrateDevice> calibrated;
  for (const std::string &name : *names) {
    StringRef kind = StringRef(name).split(':').first;
    dpc::CalibrateDevice device;
    device.name = name;
    device.plan = plans[kind];
    device.numLocalDevices = devicesOfKind[kind];
    calibrated.push_back(std::move(device));
  }
  dpc::CalibrateOptions options;
  options.batch = calibrateBatch;
  options.warmup = calibrateWarmup;
  options.steps = calibrateSteps;
  std::vector<dpc::Measurement> measurements;
  std::string error;
  if (!dpc::measureThroughputs(std::move(calibrated), modelPath, options,
                               measurements, error)) {
    llvm::WithColor::error(llvm::errs(), "dpc") << error << "\n";
    return 1;
  }

  dpc::CostModel costs;
  costs.unit = "images/s";
  costs.model = modelPath;
  costs.steps = calibrateSteps;
  for (size_t d = 0; d < names->size(); ++d) {
    const dpc::Measurement &measurement = measurements[d];
    costs.batch = measurement.batch;
    costs.throughput.emplace_back((*names)[d], measurement.imagesPerSecond);
    llvm::errs() << "dpc: calibrate: " << (*names)[d] << " "
                 << llvm::format("%.0f", measurement.imagesPerSecond)
                 << " images/s (median of " << calibrateSteps.getValue()
                 << " steps of " << measurement.batch << " rows: "
                 << llvm::format("%.3f", measurement.medianStepSeconds * 1e3)
                 << " ms)\n";
  }
  return writeOutput(dpc::printCostModel(costs));
}

/// `dpc compile --help` and `dpc calibrate --help`.
static void printHelp(cl::SubCommand &command) {
  llvm::raw_ostream &os = llvm::outs();
  if (&command == &compileCommand) {
    dpc::printSubCommandHelp(
        os, command,
        "usage: dpc compile MODEL.onnx|MODEL.mlir -o PLAN [options]",
        "Compiles a model into a data-parallel training plan (or prints a "
        "stage of it as MLIR).",
        {&inputOutputOptions, &parallelOptions, &trainingOptions,
         &memoryOptions});
    return;
  }
  dpc::printSubCommandHelp(
      os, command,
      "usage: dpc calibrate MODEL.onnx|MODEL.mlir|PLAN --devices DEVICES "
      "[options]",
      "Times the training step on each device alone; writes the cost file "
      "of dpc compile --balance.",
      {&parallelOptions, &trainingOptions, &timingOptions,
       &inputOutputOptions});
}

static bool isHelpFlag(StringRef arg) {
  return arg == "-h" || arg == "--help" || arg == "-help";
}

/// The commands with a parser of their own (no LLVM option parsing).
static std::optional<int> runOwnCommand(int argc, char **argv) {
  StringRef command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run")
    return dpc::runtime::runCommand(argc - 1, argv + 1);
  if (command == "eval")
    return dpc::runtime::evalCommand(args, std::cout, std::cerr);
  if (command == "predict")
    return dpc::runtime::predictCommand(args, std::cout, std::cerr);
  if (command == "export")
    return dpc::runtime::exportCommand(args, std::cout, std::cerr);
  if (command == "inspect")
    return dpc::inspectCommand(argc - 1, argv + 1);
  if (command == "launch")
    return dpc::launch::launchCommand(argc - 1, argv + 1);
  return std::nullopt;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "dpc: error: missing command; see 'dpc --help'\n";
    return 1;
  }
  StringRef command = argv[1];
  if (isHelpFlag(command)) {
    dpc::printCommandsHelp(llvm::outs());
    return 0;
  }
  if (command == "--version") {
    dpc::printVersion(llvm::outs());
    return 0;
  }
  if (std::optional<int> status = runOwnCommand(argc, argv))
    return *status;
  if (command != "compile" && command != "calibrate") {
    llvm::errs() << "dpc: error: unknown command '" << command
                 << "'; see 'dpc --help'\n";
    return 1;
  }
  for (int i = 2; i < argc; ++i) {
    if (isHelpFlag(argv[i])) {
      printHelp(command == "compile" ? compileCommand : calibrateCommand);
      return 0;
    }
  }
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "dpc\n");
  if (compileCommand)
    return runCompile();
  return runCalibrate();
}
