//===- CalibrateCommand.cpp - dpc calibrate -------------------------------===//
//
// `dpc calibrate` times the training step on each device alone, into the
// cost file of `dpc compile --balance`; with --kernels, every convolution
// and matmul call in f32, bf16 and Winograd, into that of --costs.
//
//===----------------------------------------------------------------------===//

#include "tools/Registration.h"
#include "tools/dpc/Balance.h"
#include "tools/dpc/Calibrate.h"
#include "tools/dpc/CompileCommand.h"
#include "tools/dpc/CompileFlags.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <map>

using namespace mlir;
using dpc::PipelineOptions;

namespace dpc::cli {

/// The cost file of `dpc calibrate --kernels` from the three plans' times
/// (f32, bf16, and f32 Winograd where it applies), and its summary line on
/// stderr.
static std::string
printKernelCosts(const std::vector<std::vector<dpc::KernelTime>> &times,
                 const std::string &device, int64_t batch) {
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
    json.attribute("device", device);
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
  return text;
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
  return writeOutput(printKernelCosts(times, names[0], batch));
}

/// `dpc calibrate`: the training throughput of each device, alone, into a
/// cost file. A model is compiled once per device kind, for the first device
/// of that kind, and run as each device of the kind.
int runCalibrate() {
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

} // namespace dpc::cli
