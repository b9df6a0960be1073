//===- CompileCommand.cpp - dpc compile -----------------------------------===//
//
// `dpc compile` imports a model (ONNX or nn MLIR), runs the compile pipeline
// its flags ask for and writes the plan or prints a stage; the helpers here
// (loading, compiling, writing) serve `dpc calibrate` too. Errors a user can
// cause are one line naming the file, with a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "tools/dpc/CompileCommand.h"
#include "frontend/onnx/EvalExportNote.h"
#include "frontend/onnx/ONNXImporter.h"
#include "ir/dist/DistDialect.h"
#include "passes/Passes.h"
#include "passes/RematSupport.h"
#include "runtime/io/FileWrite.h"
#include "runtime/plan/ByteSize.h"
#include "tools/CompilePipeline.h"
#include "tools/Registration.h"
#include "tools/dpc/Balance.h"
#include "tools/dpc/CompileFlags.h"
#include "tools/dpc/Inspect.h"
#include "tools/dpc/LossFlags.h"
#include "tools/dpc/MemoryBudget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <optional>

using namespace mlir;
using dpc::PipelineOptions;

namespace dpc::cli {

/// Prints `dpc: error: <file>: <message>` and returns the exit code.
int reportError(StringRef file, const Twine &message) {
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
FailureOr<std::vector<uint8_t>> buildPlan(ModuleOp module, int64_t batch) {
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
int writeOutput(StringRef bytes) {
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
PipelineOptions getFlagPipelineOptions() {
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
OwningOpRef<ModuleOp> compileModel(MLIRContext &context,
                                   const PipelineOptions &pipeline,
                                   bool quiet) {
  OwningOpRef<ModuleOp> module = loadModel(context);
  if (!module)
    return nullptr;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    return quiet ? success() : reportModelDiagnostic(diag);
  });
  if (failed(verify(*module)))
    return nullptr;
  PassManager pm(&context);
  dpc::buildCompilePipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

/// The device names of --devices, or an error naming the flag.
FailureOr<SmallVector<std::string>> parseDevices() {
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

/// Whether the run writes a plan (rather than print a stage).
static bool isWritingPlan() { return !emitStage.getNumOccurrences(); }

/// The flags' checks that need no model, and --remat parsed into
/// `rematOptions`: an exit status, 0 when they pass.
static int checkCompileFlags(dpc::RematerializeOptions &rematOptions) {
  if (batchSize.getNumOccurrences() && batchSize <= 0)
    return reportError(modelPath, "--batch must be a positive integer, got " +
                                      Twine(batchSize.getValue()));
  if (balance.getNumOccurrences() && split.getNumOccurrences())
    return reportError("--balance", "cannot be combined with --split: both "
                                    "choose the split");
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
  if (precision != "f32" && precision != "bf16" && precision != "tf32" &&
      precision != "auto")
    return reportError(modelPath, "--precision: expected f32, bf16, tf32 or "
                                  "auto, got '" +
                                      precision + "'");
  if (precision == "tf32") {
    FailureOr<SmallVector<std::string>> names = parseDevices();
    if (failed(names))
      return 1;
    for (const std::string &name : *names)
      if (!StringRef(name).starts_with("cuda:"))
        return reportError(modelPath,
                           "--precision tf32 computes on a GPU's tensor "
                           "cores: every device must be cuda:K, not '" +
                               name + "'");
  }
  if (precisionCosts.getNumOccurrences() &&
      (precision == "bf16" || precision == "tf32"))
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
  if (isWritingPlan() && outputPath == "-")
    return reportError(modelPath, "give the plan file with -o PLAN, or "
                                  "print a stage with --emit");

  return 0;
}

/// The pipeline the flags ask for, or std::nullopt after an error (reported).
static std::optional<PipelineOptions>
getCompilePipeline(const dpc::RematerializeOptions &rematOptions) {
  auto fail = [](StringRef file, const Twine &message) {
    reportError(file, message);
    return std::nullopt;
  };
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
      return fail(modelPath, error);
    weights->assign(values.begin(), values.end());
  }
  pipeline.training = isWritingPlan() || emitStage != Stage::NN;
  pipeline.batch = batchSize.getNumOccurrences() ? batchSize.getValue()
                   : pipeline.training           ? 256
                                                 : 0;
  pipeline.lowers = isWritingPlan() || emitStage == Stage::Exec;
  pipeline.partitions = pipeline.lowers || emitStage == Stage::Dist;
  pipeline.devices = devices;
  pipeline.split.assign(split.begin(), split.end());
  if (gradAccum < 1)
    return fail(modelPath, "--grad-accum must be at least 1");
  if (gradAccum > 1 && (!pipeline.training || pipeline.batch % gradAccum != 0))
    return fail(modelPath, "--grad-accum " + Twine(gradAccum.getValue()) +
                               " must divide the batch " +
                               Twine(pipeline.batch));
  pipeline.gradAccum = gradAccum;
  pipeline.rematerializes =
      pipeline.partitions || (emitStage == Stage::Train && remat != "none");
  pipeline.remat = rematOptions;
  // 0 stands for the default (PipelineOptions::getBucketMb).
  if (bucketMb.getNumOccurrences() && !(bucketMb > 0))
    return fail(modelPath, "--bucket-mb must be > 0 (MiB)");
  std::optional<ShardStage> stage =
      llvm::StringSwitch<std::optional<ShardStage>>(shard)
          .Case("none", ShardStage::None)
          .Case("optimizer", ShardStage::Optimizer)
          .Case("gradients", ShardStage::Gradients)
          .Case("parameters", ShardStage::Parameters)
          .Default(std::nullopt);
  if (!stage)
    return fail(modelPath,
                "--shard " + shard +
                    ": expected none, optimizer, gradients or parameters");
  pipeline.shard = *stage;
  pipeline.precision = precision;
  pipeline.costs = precisionCosts;
  pipeline.convAlgorithm = convAlgorithm;
  if (pipeline.partitions && balance.getNumOccurrences()) {
    // With --grad-accum, the split is that of one micro-batch.
    FailureOr<std::vector<int64_t>> balanced =
        chooseBalancedSplit(pipeline.batch / pipeline.gradAccum);
    if (failed(balanced))
      return std::nullopt;
    pipeline.split = std::move(*balanced);
  }

  return pipeline;
}

/// Compiles the model with `pipeline` and writes the plan or the stage.
/// Writes the plan (or the stage) of `module`, compiled with `pipeline`;
/// `builtPlan`: its plan, when the caller built it already.
static int writeCompiled(ModuleOp module, const PipelineOptions &pipeline,
                         const std::vector<uint8_t> *builtPlan) {
  bool writesPlan = isWritingPlan();
  if (writesPlan || reportMemory) {
    FailureOr<std::vector<uint8_t>> plan =
        builtPlan ? *builtPlan : buildPlan(module, pipeline.batch);
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
  module.print(os);
  os << "\n";
  return writeOutput(text);
}

/// Compiles the model with `pipeline` and writes the plan or the stage.
static int compileAndWrite(const PipelineOptions &pipeline) {
  DialectRegistry registry;
  dpc::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = compileModel(context, pipeline);
  if (!module)
    return 1;
  return writeCompiled(*module, pipeline, nullptr);
}

int runCompile() {
  dpc::RematerializeOptions rematOptions;
  if (int status = checkCompileFlags(rematOptions))
    return status;
  std::optional<PipelineOptions> pipeline = getCompilePipeline(rematOptions);
  if (!pipeline)
    return 1;
  if (memoryBudget.getNumOccurrences()) {
    if (!pipeline->lowers)
      return reportError(modelPath, "--memory-budget needs the planned steps: "
                                    "a plan or --emit=exec");
    // The chosen candidate is written as it was compiled for the search.
    return compileUnderBudget(*pipeline, writeCompiled);
  }
  return compileAndWrite(*pipeline);
}

} // namespace dpc::cli
