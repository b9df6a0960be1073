//===- dpc.cpp - the dpc command line -------------------------------------===//
//
// `dpc compile` imports a model (ONNX or nn MLIR) and prints a stage of its
// compilation. Errors a user can cause are one line naming the file, with a
// non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/PlanWriter.h"
#include "frontend/onnx/ONNXImporter.h"
#include "passes/Passes.h"
#include "passes/RematSupport.h"
#include "runtime/plan/ByteSize.h"
#include "runtime/train/RunCommand.h"
#include "tools/Registration.h"
#include "tools/dpc/Inspect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::SubCommand compileCommand("compile",
                                     "Compile a model (.onnx or .mlir)");
static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::sub(compileCommand));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::sub(compileCommand));
static cl::opt<int64_t> batchSize(
    "batch",
    cl::desc("Global batch size (the compiled maximum; training stages "
             "default to 256)"),
    cl::value_desc("N"), cl::sub(compileCommand));

static cl::opt<std::string>
    devices("devices",
            cl::desc("The devices to train on, comma-separated: cpu:K or "
                     "cuda:K (default cpu:0)"),
            cl::init("cpu:0"), cl::sub(compileCommand));
static cl::list<int64_t>
    split("split",
          cl::desc("Each device's share of the batch (default: even, like "
                   "torch.chunk)"),
          cl::CommaSeparated, cl::sub(compileCommand));
static cl::opt<bool>
    syncBn("sync-bn",
           cl::desc("Synchronize batch-norm statistics over the devices "
                    "(SyncBatchNorm): N devices train like one"),
           cl::sub(compileCommand));
static cl::opt<double>
    bucketMb("bucket-mb",
             cl::desc("Gradient all-reduce bucket size in MiB (the first "
                      "bucket is 1 MiB)"),
             cl::init(25.0), cl::sub(compileCommand));

static cl::opt<std::string> remat(
    "remat",
    cl::desc("Recompute activations in the backward pass: none, auto (fit "
             "the device's memory), budget=SIZE (e.g. 1.5GiB, per device) or "
             "segments=K"),
    cl::init("none"), cl::sub(compileCommand));
static cl::opt<bool> reportMemory(
    "report-memory",
    cl::desc("Print each device's planned peak memory by kind, the tensors "
             "alive at the peak and the FLOPs recomputation adds"),
    cl::sub(compileCommand));

enum class Stage { NN, Train, Dist, Exec };
static cl::opt<Stage> emitStage(
    "emit", cl::desc("Print a stage of the compilation as MLIR"),
    cl::values(clEnumValN(Stage::NN, "nn",
                          "the imported forward graph (nn dialect)"),
               clEnumValN(Stage::Train, "train",
                          "the training and evaluation steps (nn dialect)"),
               clEnumValN(Stage::Dist, "dist",
                          "the steps partitioned over the devices, with "
                          "their collectives (nn + dist)"),
               clEnumValN(Stage::Exec, "exec",
                          "the planned steps: buffers and kernel calls")),
    cl::sub(compileCommand));

static cl::opt<std::string> lossName("loss", cl::desc("The loss"),
                                     cl::init("cross-entropy"),
                                     cl::sub(compileCommand));
static cl::opt<std::string> optimizerName("optimizer", cl::desc("sgd or adamw"),
                                          cl::init("sgd"),
                                          cl::sub(compileCommand));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum"),
                                cl::init(0.0), cl::sub(compileCommand));
static cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                              cl::sub(compileCommand));
static cl::opt<double>
    weightDecay("weight-decay",
                cl::desc("Weight decay (default: PyTorch's for the optimizer)"),
                cl::init(-1.0), cl::sub(compileCommand));

/// Prints `dpc: error: <file>: <message>` and returns the exit code.
static int reportError(StringRef file, const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "dpc")
      << file << ": " << message << "\n";
  return 1;
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
  return module;
}

/// Writes the plan of the exec-level `module` to `outputPath` (unless only
/// the memory report is asked for), with the parameters' initial values
/// from the model file.
static int writePlanFile(ModuleOp module, int64_t batch, bool write) {
  llvm::StringMap<std::vector<uint8_t>> tensors;
  if (llvm::sys::path::extension(modelPath) == ".onnx") {
    std::string error;
    if (!dpc::frontend::readONNXTensors(modelPath, tensors, error))
      return reportError(modelPath, error);
  }
  dpc::PlanOptions options;
  options.modelPath = modelPath;
  options.batch = batch;
  auto lookup = [&](StringRef name) -> const std::vector<uint8_t> * {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
  };
  options.initialValues = lookup;
  FailureOr<std::vector<uint8_t>> plan = dpc::writePlan(module, options);
  if (failed(plan))
    return 1;
  if (reportMemory) {
    // The report goes where it cannot mix with a printed stage.
    int status =
        dpc::printMemoryReport(*plan, modelPath, write ? stdout : stderr);
    if (status != 0 || !write)
      return status;
  }
  if (!write)
    return 0;
  std::string message;
  auto output = openOutputFile(outputPath, &message);
  if (!output)
    return reportError(outputPath, message);
  output->os().write(reinterpret_cast<const char *>(plan->data()),
                     plan->size());
  output->keep();
  return 0;
}

static int runCompile() {
  if (batchSize.getNumOccurrences() && batchSize <= 0)
    return reportError(modelPath, "--batch must be a positive integer, got " +
                                      Twine(batchSize.getValue()));
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
  if (reportMemory && emitStage.getNumOccurrences() && emitStage != Stage::Exec)
    return reportError(modelPath, "--report-memory needs the planned steps: "
                                  "write a plan or use --emit=exec");
  if (writesPlan && outputPath == "-")
    return reportError(modelPath, "give the plan file with -o PLAN, or "
                                  "print a stage with --emit");

  DialectRegistry registry;
  dpc::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = loadModel(context);
  if (!module)
    return 1;

  // Diagnostics from here on concern the model as a whole.
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      reportError(modelPath, diag.str());
    return success();
  });
  if (failed(verify(*module)))
    return 1;
  // Training stages need a fixed batch: the plan is sized for it.
  bool training = writesPlan || emitStage != Stage::NN;
  int64_t batch = batchSize.getNumOccurrences() ? batchSize.getValue()
                  : training                    ? 256
                                                : 0;
  PassManager pm(&context);
  if (batch) {
    dpc::NNSetBatchOptions options;
    options.batch = batch;
    pm.addNestedPass<func::FuncOp>(dpc::createNNSetBatch(options));
  }
  pm.addPass(createCanonicalizerPass());
  if (training) {
    dpc::NNBuildTrainStepOptions options;
    options.loss = lossName;
    options.optimizer = optimizerName;
    options.momentum = momentum;
    options.nesterov = nesterov;
    options.weightDecay = weightDecay;
    pm.addPass(dpc::createNNBuildTrainStep(options));
  }
  bool lowers = writesPlan || emitStage == Stage::Exec;
  if (lowers || emitStage == Stage::Dist) {
    dpc::PartitionDataParallelOptions options;
    options.devices = devices;
    options.split = split;
    options.syncBn = syncBn;
    pm.addPass(dpc::createPartitionDataParallel(options));
    dpc::BucketGradientsOptions buckets;
    buckets.bucketMb = bucketMb;
    pm.addNestedPass<func::FuncOp>(dpc::createBucketGradients(buckets));
  }
  // On the partitioned step, so that each device's replica fits its own
  // share; before the lowering, whose planner measures it.
  if (lowers || emitStage == Stage::Dist ||
      (emitStage == Stage::Train && remat != "none"))
    pm.addPass(dpc::createRematerialize(rematOptions));
  if (lowers)
    pm.addPass(dpc::createConvertNNToExec());
  if (failed(pm.run(*module)))
    return 1;
  if (writesPlan || reportMemory) {
    if (int status = writePlanFile(*module, batch, writesPlan))
      return status;
    if (writesPlan)
      return 0;
  }

  std::string message;
  auto output = openOutputFile(outputPath, &message);
  if (!output)
    return reportError(outputPath, message);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  // `dpc run` is the runtime's own command line: no LLVM option parsing.
  if (argc > 1 && StringRef(argv[1]) == "run")
    return dpc::runtime::runCommand(argc - 1, argv + 1);
  if (argc > 1 && StringRef(argv[1]) == "inspect")
    return dpc::inspectCommand(argc - 1, argv + 1);
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "dpc: data-parallel training compiler\n\n"
      "  dpc run PLAN ...   train a plan (see dpc run --help)\n");
  if (compileCommand)
    return runCompile();
  llvm::errs() << "dpc: error: missing command; see 'dpc --help'\n";
  return 1;
}
