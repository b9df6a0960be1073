//===- Inspect.cpp - dpc inspect: what a plan holds, before it runs -------===//
//
// dpc inspect PLAN [--json]
//
// Per device: the training state by kind, each step's planned arena, the
// peak (state + the largest arena), the streams and the all-reduce buckets.
// Reads the plan through the runtime's loader, so what it shows has passed
// the same validation `dpc run` applies.
//
//===----------------------------------------------------------------------===//

#include "tools/dpc/Inspect.h"

#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanTypes.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace dpc;

namespace {

struct StepSummary {
  std::string name;
  int64_t batch = 0;
  int64_t arenaBytes = 0;
  int64_t instructions = 0;
  int64_t streams = 0;
  std::vector<int64_t> bucketBytes; // one per AllReduce, in order
};

struct DeviceSummary {
  std::string name;
  int64_t parameterBytes = 0, bufferBytes = 0, optimizerBytes = 0;
  std::vector<StepSummary> steps;

  int64_t stateBytes() const {
    return parameterBytes + bufferBytes + optimizerBytes;
  }
  int64_t peakBytes() const {
    int64_t arena = 0;
    for (const StepSummary &step : steps)
      arena = std::max(arena, step.arenaBytes);
    return stateBytes() + arena;
  }
};

int64_t tensorBytes(const plan::Tensor &tensor, int64_t batch) {
  std::vector<int64_t> dims = plan::toDims(tensor.dims());
  if (tensor.batch_dim() && !dims.empty())
    dims[0] = batch;
  return plan::getNumElements(dims) * plan::getDTypeSize(tensor.dtype());
}

std::vector<DeviceSummary> summarize(const plan::Plan &plan) {
  std::vector<DeviceSummary> devices(plan.devices()->size());
  for (size_t d = 0; d < devices.size(); ++d)
    devices[d].name = plan.devices()->Get(d)->name()->str();
  for (const plan::PersistentTensor *tensor : *plan.persistent()) {
    DeviceSummary &device = devices.at(tensor->device());
    int64_t bytes = plan::getNumElements(plan::toDims(tensor->dims())) *
                    plan::getDTypeSize(tensor->dtype());
    switch (tensor->kind()) {
    case plan::PersistentKind::Parameter:
      device.parameterBytes += bytes;
      break;
    case plan::PersistentKind::Buffer:
      device.bufferBytes += bytes;
      break;
    case plan::PersistentKind::OptimizerState:
      device.optimizerBytes += bytes;
      break;
    }
  }
  for (const plan::Step *step : *plan.steps()) {
    StepSummary summary;
    summary.name = step->name()->str();
    summary.arenaBytes = step->arena_bytes();
    summary.streams = step->streams()->size();
    for (const plan::Tensor *tensor : *step->tensors())
      if (tensor->batch_dim() && tensor->dims()->size() > 0)
        summary.batch = tensor->dims()->Get(0);
    for (const plan::Stream *stream : *step->streams()) {
      summary.instructions += stream->instructions()->size();
      for (const plan::Instruction *instruction : *stream->instructions()) {
        if (instruction->kernel() != plan::Kernel::AllReduce)
          continue;
        int64_t bytes = 0;
        for (int32_t operand : *instruction->operands())
          bytes += tensorBytes(*step->tensors()->Get(operand), summary.batch);
        summary.bucketBytes.push_back(bytes);
      }
    }
    devices.at(step->device()).steps.push_back(summary);
  }
  return devices;
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f MiB", bytes / 1048576.0);
  return text;
}

void printText(const plan::LoadedPlan &loaded,
               const std::vector<DeviceSummary> &devices) {
  const plan::Plan &plan = loaded.get();
  std::string accumulation =
      plan.grad_accum() > 1
          ? " in " + std::to_string(plan.grad_accum()) + " micro-batches"
          : "";
  std::printf("plan %s: format version %u, model %s, batch %lld%s, "
              "optimizer %s\n",
              loaded.getName().c_str(), plan.version(),
              plan.model() ? plan.model()->c_str() : "?",
              static_cast<long long>(plan.compiled_batch()),
              accumulation.c_str(),
              plan.optimizer() ? plan.optimizer()->c_str() : "none");
  for (const DeviceSummary &device : devices) {
    std::printf("device %s: peak %s (parameters %s, optimizer state %s, "
                "buffers %s)\n",
                device.name.c_str(), megabytes(device.peakBytes()).c_str(),
                megabytes(device.parameterBytes).c_str(),
                megabytes(device.optimizerBytes).c_str(),
                megabytes(device.bufferBytes).c_str());
    for (const StepSummary &step : device.steps) {
      std::printf("  %s: batch %lld, arena %s, %lld kernels on %lld "
                  "stream(s)",
                  step.name.c_str(), static_cast<long long>(step.batch),
                  megabytes(step.arenaBytes).c_str(),
                  static_cast<long long>(step.instructions),
                  static_cast<long long>(step.streams));
      if (!step.bucketBytes.empty()) {
        std::printf(", %zu all-reduce bucket(s):", step.bucketBytes.size());
        for (int64_t bytes : step.bucketBytes)
          std::printf(" %s", megabytes(bytes).c_str());
      }
      std::printf("\n");
    }
  }
}

void printJson(const plan::LoadedPlan &loaded,
               const std::vector<DeviceSummary> &devices) {
  const plan::Plan &plan = loaded.get();
  std::printf("{\"version\": %u, \"compiled_batch\": %lld, "
              "\"grad_accum\": %d, \"devices\": [",
              plan.version(), static_cast<long long>(plan.compiled_batch()),
              plan.grad_accum());
  for (size_t d = 0; d < devices.size(); ++d) {
    const DeviceSummary &device = devices[d];
    std::printf("%s{\"name\": \"%s\", \"peak_bytes\": %lld, "
                "\"parameters_bytes\": %lld, \"optimizer_bytes\": %lld, "
                "\"buffers_bytes\": %lld, \"steps\": [",
                d ? ", " : "", device.name.c_str(),
                static_cast<long long>(device.peakBytes()),
                static_cast<long long>(device.parameterBytes),
                static_cast<long long>(device.optimizerBytes),
                static_cast<long long>(device.bufferBytes));
    for (size_t s = 0; s < device.steps.size(); ++s) {
      const StepSummary &step = device.steps[s];
      std::printf("%s{\"name\": \"%s\", \"batch\": %lld, \"arena_bytes\": "
                  "%lld, \"kernels\": %lld, \"streams\": %lld, "
                  "\"bucket_bytes\": [",
                  s ? ", " : "", step.name.c_str(),
                  static_cast<long long>(step.batch),
                  static_cast<long long>(step.arenaBytes),
                  static_cast<long long>(step.instructions),
                  static_cast<long long>(step.streams));
      for (size_t b = 0; b < step.bucketBytes.size(); ++b)
        std::printf("%s%lld", b ? ", " : "",
                    static_cast<long long>(step.bucketBytes[b]));
      std::printf("]}");
    }
    std::printf("]}");
  }
  std::printf("]}\n");
}

} // namespace

int dpc::inspectCommand(int argc, char **argv) {
  std::string path;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: dpc inspect PLAN [--json]\n");
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && path.empty()) {
      path = arg;
    } else {
      std::fprintf(stderr,
                   "dpc inspect: unexpected argument '%s' (usage: "
                   "dpc inspect PLAN [--json])\n",
                   arg.c_str());
      return 1;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "dpc inspect: missing the plan file (usage: dpc "
                         "inspect PLAN [--json])\n");
    return 1;
  }
  try {
    auto loaded = plan::LoadedPlan::load(path);
    std::vector<DeviceSummary> devices = summarize(loaded->get());
    if (json)
      printJson(*loaded, devices);
    else
      printText(*loaded, devices);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
