//===- Calibrate.cpp - a device's training throughput, measured -----------===//

#include "tools/dpc/Calibrate.h"

#include "runtime/abi/KernelCostKey.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/device/Device.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/Trace.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/ModelInput.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>

using namespace dpc;

namespace {

struct CalibrateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string kindOf(const std::string &device) {
  return device.substr(0, device.find(':'));
}

/// The tensor of `role` in `step` (`name`: the role's usual name), with the
/// expected dtype.
const plan::Tensor &requireInput(const rt::Executor &executor, int step,
                                 plan::InputRole role, const char *name,
                                 plan::DType dtype) {
  const plan::Tensor *tensor = executor.findInput(step, role);
  if (!tensor || tensor->dtype() != dtype)
    throw CalibrateError(std::string("train_step has no ") +
                         plan::EnumNameDType(dtype) + " input '" + name + "'");
  return *tensor;
}

/// One device's executor, its step and its bound inputs.
struct Runner {
  std::string device;
  std::unique_ptr<rt::Executor> executor;
  int step = -1;
  int64_t batch = 0;
  std::vector<double> seconds;
};

Runner prepare(CalibrateDevice device, const std::string &planName,
               int64_t batchOption) {
  auto loaded = plan::LoadedPlan::fromBytes(std::move(device.plan), planName);
  const plan::Plan &root = loaded->get();
  if (root.devices()->size() != 1)
    throw CalibrateError(
        "calibrate times one device at a time, but the plan has " +
        std::to_string(root.devices()->size()) +
        " devices; compile it with one --devices entry, or calibrate the "
        "model");
  std::string planDevice = root.devices()->Get(0)->name()->str();
  if (kindOf(planDevice) != kindOf(device.name))
    throw CalibrateError("the plan was compiled for " + planDevice +
                         ", so it cannot time " + device.name);

  // The plan's one device, run as device.name with the share of the cores
  // it gets in the real run.
  rt::DeviceFactory factory = [&](const std::string &,
                                  const rt::DeviceOptions &) {
    rt::DeviceOptions options;
    options.numLocalDevices = device.numLocalDevices;
    return rt::createDevice(device.name, options);
  };
  Runner runner;
  runner.device = device.name;
  runner.executor = std::make_unique<rt::Executor>(loaded, factory);
  rt::Executor &executor = *runner.executor;
  int step = runner.step = executor.findStep(plan::StepRole::Train);
  if (step < 0)
    throw CalibrateError("the plan has no train_step");
  int64_t batch = runner.batch =
      batchOption ? batchOption : executor.getMaxBatch(step);
  if (batch < 1 || batch > executor.getMaxBatch(step))
    throw CalibrateError("batch " + std::to_string(batch) + " is not in 1.." +
                         std::to_string(executor.getMaxBatch(step)) +
                         ", the plan's compiled batch");

  // Every data input, in the plan's order: images (F32) get random pixels,
  // token ids (I32) id 0, which every vocabulary has, so that a lookup can
  // not fail; one input is "images", several go by the model's names.
  train::PlanInputs inputs = train::getDataInputs(executor, step);
  requireInput(executor, step, plan::InputRole::Labels, "labels",
               plan::DType::I32);
  requireInput(executor, step, plan::InputRole::LearningRate, "lr",
               plan::DType::F32);
  int64_t classes = std::max<int64_t>(1, root.num_classes());

  // Random data with a fixed seed: the same work on every device.
  std::mt19937 generator(0);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, classes - 1);
  for (const auto &input : inputs) {
    const plan::Tensor &tensor = *executor.findInput(step, input.first);
    int64_t count = batch * plan::getNumElements(input.second);
    if (tensor.dtype() == plan::DType::I32) {
      std::vector<int32_t> ids(count, 0);
      executor.setInput(step, input.first, ids.data(),
                        ids.size() * sizeof(int32_t));
      continue;
    }
    std::vector<float> values(count);
    for (float &value : values)
      value = pixel(generator);
    executor.setInput(step, input.first, values.data(),
                      values.size() * sizeof(float));
  }
  std::vector<int32_t> labelData(batch);
  for (int32_t &value : labelData)
    value = label(generator);
  float lr = 0.0f;
  executor.setInput(step, plan::InputRole::Labels, labelData.data(),
                    labelData.size() * sizeof(int32_t));
  executor.setInput(step, plan::InputRole::LearningRate, &lr, sizeof(lr));
  return runner;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

} // namespace

bool dpc::measureThroughputs(std::vector<CalibrateDevice> devices,
                             const std::string &planName,
                             const CalibrateOptions &options,
                             std::vector<Measurement> &results,
                             std::string &error) {
  if (options.steps < 1) {
    error = "--steps must be at least 1";
    return false;
  }
  std::string current;
  try {
    std::vector<Runner> runners;
    for (CalibrateDevice &device : devices) {
      current = device.name;
      runners.push_back(prepare(std::move(device), planName, options.batch));
    }
    for (Runner &runner : runners) {
      current = runner.device;
      for (int i = 0; i < options.warmup; ++i)
        runner.executor->run(runner.step, runner.batch);
    }
    // Turns of a few steps, each after one untimed step: the first step
    // after another device's turn pays for that device's threads yielding
    // the cores.
    using Clock = std::chrono::steady_clock;
    int turn = std::max(1, options.steps / 4);
    for (int done = 0; done < options.steps; done += turn) {
      for (Runner &runner : runners) {
        current = runner.device;
        if (runners.size() > 1)
          runner.executor->run(runner.step, runner.batch);
        for (int i = done; i < std::min(done + turn, options.steps); ++i) {
          Clock::time_point start = Clock::now();
          runner.executor->run(runner.step, runner.batch);
          runner.seconds.push_back(
              std::chrono::duration<double>(Clock::now() - start).count());
        }
      }
    }
    results.clear();
    for (const Runner &runner : runners) {
      Measurement result;
      result.batch = runner.batch;
      result.medianStepSeconds = median(runner.seconds);
      result.imagesPerSecond =
          static_cast<double>(runner.batch) / result.medianStepSeconds;
      results.push_back(result);
    }
    return true;
  } catch (const plan::PlanError &failure) {
    error = failure.what(); // already names the plan
  } catch (const std::exception &failure) {
    error = planName + ": " + current + ": " + failure.what();
  }
  return false;
}

namespace {

/// The cost key of `instruction` of `step` (runtime/abi/KernelCostKey.h).
std::string getCostKey(const plan::Step &step,
                       const plan::Instruction &instruction) {
  auto dimsOf = [&](const flatbuffers::Vector<int32_t> *indices) {
    std::vector<std::vector<int64_t>> all;
    if (!indices)
      return all;
    for (int32_t index : *indices) {
      if (index < 0)
        continue; // a left-out optional operand
      const plan::Tensor &tensor = *step.tensors()->Get(index);
      std::vector<int64_t> dims = plan::toDims(tensor.dims());
      if (tensor.batch_dim() && !dims.empty())
        dims[0] = -1;
      all.push_back(std::move(dims));
    }
    return all;
  };
  std::unique_ptr<plan::Conv2dAttrsT> conv;
  if (const plan::Conv2dAttrs *attrs = instruction.attrs_as_Conv2dAttrs())
    conv.reset(attrs->UnPack());
  return plan::getKernelCostKey(instruction.kernel(),
                                dimsOf(instruction.operands()),
                                dimsOf(instruction.results()), conv.get());
}

} // namespace

bool dpc::measureKernelTimes(CalibrateDevice device,
                             const std::string &planName,
                             const CalibrateOptions &options,
                             std::vector<KernelTime> &results,
                             std::string &error) {
  if (options.steps < 1) {
    error = "--steps must be at least 1";
    return false;
  }
  std::string current = device.name;
  try {
    Runner runner = prepare(std::move(device), planName, options.batch);
    rt::Executor &executor = *runner.executor;
    for (int i = 0; i < options.warmup; ++i)
      executor.run(runner.step, runner.batch);
    rt::Tracer tracer;
    executor.setTracer(&tracer);
    for (int i = 0; i < options.steps; ++i)
      executor.run(runner.step, runner.batch);
    executor.setTracer(nullptr);

    // Each stream runs its instructions in order, once a step: its n-th
    // span of a step is its n-th instruction.
    const plan::Step &step =
        *executor.getPlan().get().steps()->Get(runner.step);
    std::vector<std::vector<rt::TraceSpan>> byStream(step.streams()->size());
    for (rt::TraceSpan &span : tracer.getSpans())
      if (span.kind != rt::SpanKind::Upload && span.stream >= 0 &&
          span.stream < int(byStream.size()))
        byStream[span.stream].push_back(std::move(span));
    results.clear();
    for (size_t s = 0; s < byStream.size(); ++s) {
      const auto &instructions = *step.streams()->Get(s)->instructions();
      std::vector<rt::TraceSpan> &spans = byStream[s];
      std::sort(spans.begin(), spans.end(), [](const auto &a, const auto &b) {
        return a.startMicros < b.startMicros;
      });
      if (spans.size() != instructions.size() * size_t(options.steps))
        throw CalibrateError("the trace of stream " + std::to_string(s) +
                             " has " + std::to_string(spans.size()) +
                             " spans, not " + std::to_string(options.steps) +
                             " steps of " +
                             std::to_string(instructions.size()));
      for (size_t i = 0; i < instructions.size(); ++i) {
        const plan::Instruction &instruction = *instructions.Get(i);
        const plan::KernelSignature *signature =
            plan::getKernelSignature(instruction.kernel());
        if (!signature || !signature->has(plan::kMixedPrecision))
          continue;
        std::vector<double> micros;
        for (int k = 0; k < options.steps; ++k) {
          const rt::TraceSpan &span = spans[k * instructions.size() + i];
          micros.push_back(span.endMicros - span.startMicros);
        }
        const flatbuffers::String *algorithm = instruction.algorithm();
        results.push_back({getCostKey(step, instruction), median(micros),
                           algorithm && algorithm->str() == "winograd"});
      }
    }
    return true;
  } catch (const plan::PlanError &failure) {
    error = failure.what();
  } catch (const std::exception &failure) {
    error = planName + ": " + current + ": " + failure.what();
  }
  return false;
}
