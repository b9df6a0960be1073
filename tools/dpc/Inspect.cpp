//===- Inspect.cpp - dpc inspect: what a plan holds, before it runs -------===//
//
// dpc inspect PLAN [--json]
//
// Per device: the planned peak (state + the largest arena) split into
// parameters, buffers, optimizer state, gradients, activations and
// workspace, the tensors alive at the peak, the FLOPs recomputation adds,
// each step's arena, streams, all-reduce and all-gather buckets, the
// ranges of sharded optimizer state a device holds, and how many of its
// convolution and matmul calls compute in bf16 (--precision) and how many
// of its convolution calls run Winograd (--conv-algorithm).
// Reads the plan through the runtime's loader, so what it shows has passed
// the same validation `dpc run` applies.
//
//===----------------------------------------------------------------------===//

#include "tools/dpc/Inspect.h"

#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanMemory.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace dpc;

namespace {

/// ", N <kind> bucket(s): <MiB> ...", nothing for none.
void printBuckets(const char *kind, const std::vector<int64_t> &bytes);
/// The comma-separated numbers of a JSON list.
void printJsonList(const std::vector<int64_t> &values);

struct StepSummary {
  std::string name;
  int64_t batch = 0;
  int64_t arenaBytes = 0;
  int64_t instructions = 0;
  int64_t streams = 0;
  std::vector<int64_t> bucketBytes;  // one per AllReduce, in order
  std::vector<int64_t> gatherBytes;  // one per AllGather: its wholes
  std::vector<int64_t> scatterBytes; // one per ReduceScatter: its wholes
  /// Layout changes the plan makes (Reorder kernels) and the tensors it
  /// keeps in a blocked layout.
  int64_t reorders = 0;
  int64_t blockedTensors = 0;
  // Convolution and matmul calls (Kernels.def's kMixedPrecision), and
  // those of them that compute in bf16 (--precision).
  int64_t precisionKernels = 0;
  int64_t bf16Kernels = 0, tf32Kernels = 0;
  // bf16 calls that read another call's bf16 copy of an operand (a cast
  // slot's reuse, runtime/abi/SharedCast.h): casts saved per step.
  int64_t sharedCasts = 0;
  // Convolution calls, and those of them that run Winograd.
  int64_t convolutionKernels = 0;
  int64_t winogradKernels = 0;
};

/// Sharded training state of one kind: how many tensors a device holds a
/// range of, the ranges' bytes and the whole tensors'.
struct ShardSummary {
  int64_t tensors = 0;
  int64_t bytes = 0;
  int64_t wholeBytes = 0;
};

struct DeviceSummary {
  plan::DeviceMemory memory;
  std::vector<StepSummary> steps;
  /// --shard optimizer and up; --shard parameters.
  ShardSummary optimizerShards, parameterShards;
};

int64_t tensorBytes(const plan::Tensor &tensor, int64_t batch) {
  return plan::getNumElements(plan::getRuntimeDims(tensor, batch)) *
         plan::getDTypeSize(tensor.dtype());
}

std::vector<DeviceSummary> summarize(const plan::Plan &plan) {
  std::vector<DeviceSummary> devices;
  for (plan::DeviceMemory &memory : plan::summarizeMemory(plan))
    devices.push_back({std::move(memory), {}});
  for (const plan::PersistentTensor *state : *plan.persistent()) {
    if (!state->logical_dims())
      continue;
    DeviceSummary &device = devices.at(state->device());
    ShardSummary &shards = state->kind() == plan::PersistentKind::Parameter
                               ? device.parameterShards
                               : device.optimizerShards;
    int64_t size = plan::getDTypeSize(state->dtype());
    ++shards.tensors;
    shards.bytes += plan::getNumElements(plan::toDims(state->dims())) * size;
    shards.wholeBytes +=
        plan::getNumElements(plan::toDims(state->logical_dims())) * size;
  }
  for (const plan::Step *step : *plan.steps()) {
    StepSummary summary;
    summary.name = step->name()->str();
    summary.arenaBytes = step->arena_bytes();
    summary.streams = step->streams()->size();
    for (const plan::Tensor *tensor : *step->tensors()) {
      if (tensor->batch_dim() && tensor->dims()->size() > 0 &&
          tensor->batch_axis() == 0 && tensor->batch_scale() == 1)
        summary.batch = tensor->dims()->Get(0);
      summary.blockedTensors += tensor->layout() != plan::Layout::Plain;
    }
    for (const plan::Stream *stream : *step->streams()) {
      summary.instructions += stream->instructions()->size();
      for (const plan::Instruction *instruction : *stream->instructions()) {
        summary.reorders += instruction->kernel() == plan::Kernel::Reorder;
        const plan::KernelSignature *signature =
            plan::getKernelSignature(instruction->kernel());
        if (signature && signature->has(plan::kMixedPrecision)) {
          ++summary.precisionKernels;
          summary.bf16Kernels += instruction->precision() == plan::DType::BF16;
          summary.tf32Kernels += instruction->precision() == plan::DType::TF32;
          summary.sharedCasts += instruction->cast_reuse();
        }
        if (signature && signature->attrs == plan::KernelAttrs::Conv2dAttrs) {
          ++summary.convolutionKernels;
          summary.winogradKernels +=
              instruction->algorithm() &&
              instruction->algorithm()->string_view() == "winograd";
        }
        // A collective's bytes are those of its wholes.
        std::vector<int64_t> *buckets =
            instruction->kernel() == plan::Kernel::AllReduce
                ? &summary.bucketBytes
            : instruction->kernel() == plan::Kernel::AllGather
                ? &summary.gatherBytes
            : instruction->kernel() == plan::Kernel::ReduceScatter
                ? &summary.scatterBytes
                : nullptr;
        if (!buckets)
          continue;
        int64_t bytes = 0;
        for (int32_t t : instruction->kernel() == plan::Kernel::AllGather
                             ? *instruction->results()
                             : *instruction->operands())
          bytes += tensorBytes(*step->tensors()->Get(t), summary.batch);
        buckets->push_back(bytes);
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

void printBuckets(const char *kind, const std::vector<int64_t> &bytes) {
  if (bytes.empty())
    return;
  std::printf(", %zu %s bucket(s):", bytes.size(), kind);
  for (int64_t b : bytes)
    std::printf(" %s", megabytes(b).c_str());
}

void printJsonList(const std::vector<int64_t> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    std::printf("%s%lld", i ? ", " : "", static_cast<long long>(values[i]));
}

/// The peak of one device, by kind, and what is alive there.
void printDeviceMemory(std::FILE *out, const plan::DeviceMemory &memory) {
  // Whole parameters gathered from their shards for a pass (ZeRO-3).
  std::string gathered =
      memory.gatheredParameterBytes
          ? " + " + megabytes(memory.gatheredParameterBytes) + " gathered"
          : "";
  std::fprintf(out,
               "device %s: peak %s (parameters %s%s, buffers %s, optimizer "
               "state %s, gradients %s, activations %s, workspace %s)\n",
               memory.name.c_str(), megabytes(memory.peakBytes()).c_str(),
               megabytes(memory.parameterBytes).c_str(), gathered.c_str(),
               megabytes(memory.bufferBytes).c_str(),
               megabytes(memory.optimizerBytes).c_str(),
               megabytes(memory.gradientBytes).c_str(),
               megabytes(memory.activationBytes).c_str(),
               megabytes(memory.workspaceBytes).c_str());
  std::fprintf(out, "  recomputation: %.3f GFLOP per step\n",
               memory.rematFlops / 1e9);
  if (memory.liveAtPeak.empty())
    return;
  std::fprintf(out, "  largest tensors alive at the %s peak:\n",
               memory.peakStep.c_str());
  for (const plan::LiveTensor *tensor : memory.liveAtPeak)
    std::fprintf(out, "    %10s  %-10s  %s\n",
                 megabytes(tensor->bytes()).c_str(),
                 tensor->kind() ? tensor->kind()->c_str() : "?",
                 tensor->name() ? tensor->name()->c_str() : "?");
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
    printDeviceMemory(stdout, device.memory);
    for (auto [kind, shards] :
         {std::pair{"optimizer state", &device.optimizerShards},
          std::pair{"parameters", &device.parameterShards}})
      if (shards->tensors > 0)
        std::printf("  %s sharded: this device's ranges of %lld tensor(s), "
                    "%s of their %s\n",
                    kind, static_cast<long long>(shards->tensors),
                    megabytes(shards->bytes).c_str(),
                    megabytes(shards->wholeBytes).c_str());
    for (const StepSummary &step : device.steps) {
      std::printf("  %s: batch %lld, arena %s, %lld kernels on %lld "
                  "stream(s)",
                  step.name.c_str(), static_cast<long long>(step.batch),
                  megabytes(step.arenaBytes).c_str(),
                  static_cast<long long>(step.instructions),
                  static_cast<long long>(step.streams));
      if (step.bf16Kernels > 0)
        std::printf(", bf16 in %lld of %lld convolution/matmul calls",
                    static_cast<long long>(step.bf16Kernels),
                    static_cast<long long>(step.precisionKernels));
      if (step.tf32Kernels > 0)
        std::printf(", tf32 in %lld of %lld convolution/matmul calls",
                    static_cast<long long>(step.tf32Kernels),
                    static_cast<long long>(step.precisionKernels));
      if (step.sharedCasts > 0)
        std::printf(", %lld of them reading a shared bf16 cast",
                    static_cast<long long>(step.sharedCasts));
      if (step.winogradKernels > 0)
        std::printf(", Winograd in %lld of %lld convolution calls",
                    static_cast<long long>(step.winogradKernels),
                    static_cast<long long>(step.convolutionKernels));
      printBuckets("all-reduce", step.bucketBytes);
      printBuckets("reduce-scatter", step.scatterBytes);
      printBuckets("all-gather", step.gatherBytes);
      std::printf(", %lld reorder(s), %lld blocked tensor(s)\n",
                  static_cast<long long>(step.reorders),
                  static_cast<long long>(step.blockedTensors));
    }
  }
}

std::string jsonEscape(const std::string &text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      escaped += c;
  }
  return escaped;
}

void printJson(const plan::LoadedPlan &loaded,
               const std::vector<DeviceSummary> &devices) {
  const plan::Plan &plan = loaded.get();
  std::printf("{\"version\": %u, \"compiled_batch\": %lld, "
              "\"grad_accum\": %d, \"devices\": [",
              plan.version(), static_cast<long long>(plan.compiled_batch()),
              plan.grad_accum());
  for (size_t d = 0; d < devices.size(); ++d) {
    const plan::DeviceMemory &memory = devices[d].memory;
    auto ll = [](int64_t value) { return static_cast<long long>(value); };
    std::printf("%s{\"name\": \"%s\", \"peak_bytes\": %lld, "
                "\"parameters_bytes\": %lld, \"buffers_bytes\": %lld, "
                "\"optimizer_bytes\": %lld, \"gradients_bytes\": %lld, "
                "\"activations_bytes\": %lld, \"workspace_bytes\": %lld, "
                "\"gathered_parameters_bytes\": %lld, "
                "\"remat_flops\": %lld, \"peak_step\": \"%s\", "
                "\"live_at_peak\": [",
                d ? ", " : "", memory.name.c_str(), ll(memory.peakBytes()),
                ll(memory.parameterBytes), ll(memory.bufferBytes),
                ll(memory.optimizerBytes), ll(memory.gradientBytes),
                ll(memory.activationBytes), ll(memory.workspaceBytes),
                ll(memory.gatheredParameterBytes), ll(memory.rematFlops),
                memory.peakStep.c_str());
    for (size_t t = 0; t < memory.liveAtPeak.size(); ++t) {
      const plan::LiveTensor *tensor = memory.liveAtPeak[t];
      std::printf(
          "%s{\"name\": \"%s\", \"kind\": \"%s\", \"bytes\": %lld}",
          t ? ", " : "",
          jsonEscape(tensor->name() ? tensor->name()->str() : "").c_str(),
          tensor->kind() ? tensor->kind()->c_str() : "", ll(tensor->bytes()));
    }
    std::printf("], \"steps\": [");
    const DeviceSummary &device = devices[d];
    for (size_t s = 0; s < device.steps.size(); ++s) {
      const StepSummary &step = device.steps[s];
      std::printf("%s{\"name\": \"%s\", \"batch\": %lld, \"arena_bytes\": "
                  "%lld, \"kernels\": %lld, \"streams\": %lld, "
                  "\"bf16_kernels\": %lld, \"tf32_kernels\": %lld, "
                  "\"shared_casts\": %lld, "
                  "\"winograd_kernels\": %lld, "
                  "\"bucket_bytes\": [",
                  s ? ", " : "", step.name.c_str(),
                  static_cast<long long>(step.batch),
                  static_cast<long long>(step.arenaBytes),
                  static_cast<long long>(step.instructions),
                  static_cast<long long>(step.streams),
                  static_cast<long long>(step.bf16Kernels),
                  static_cast<long long>(step.tf32Kernels),
                  static_cast<long long>(step.sharedCasts),
                  static_cast<long long>(step.winogradKernels));
      printJsonList(step.bucketBytes);
      std::printf("], \"gather_bytes\": [");
      printJsonList(step.gatherBytes);
      std::printf("], \"scatter_bytes\": [");
      printJsonList(step.scatterBytes);
      std::printf("], \"reorders\": %lld, \"blocked_tensors\": %lld}",
                  static_cast<long long>(step.reorders),
                  static_cast<long long>(step.blockedTensors));
    }
    const ShardSummary &state = device.optimizerShards;
    const ShardSummary &params = device.parameterShards;
    std::printf("], \"optimizer_shards\": %lld, \"optimizer_shard_bytes\": "
                "%lld, \"optimizer_sharded_whole_bytes\": %lld, "
                "\"parameter_shards\": %lld, \"parameter_shard_bytes\": "
                "%lld, \"parameter_sharded_whole_bytes\": %lld}",
                ll(state.tensors), ll(state.bytes), ll(state.wholeBytes),
                ll(params.tensors), ll(params.bytes), ll(params.wholeBytes));
  }
  std::printf("]}\n");
}

} // namespace

int dpc::printMemoryReport(const std::vector<uint8_t> &planBytes,
                           const std::string &name, std::FILE *out) {
  try {
    auto loaded = plan::LoadedPlan::fromBytes(planBytes, name);
    for (const plan::DeviceMemory &memory :
         plan::summarizeMemory(loaded->get()))
      printDeviceMemory(out, memory);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}

std::vector<dpc::DevicePeak>
dpc::getDevicePeaks(const std::vector<uint8_t> &planBytes) {
  std::vector<DevicePeak> peaks;
  try {
    auto loaded = plan::LoadedPlan::fromBytes(planBytes, "the plan");
    for (const plan::DeviceMemory &memory :
         plan::summarizeMemory(loaded->get())) {
      DevicePeak &peak = peaks.emplace_back();
      peak.device = memory.name;
      peak.bytes = memory.peakBytes();
      std::pair<const char *, int64_t> kinds[] = {
          {"parameters", memory.parameterBytes},
          {"gathered parameters", memory.gatheredParameterBytes},
          {"buffers", memory.bufferBytes},
          {"optimizer state", memory.optimizerBytes},
          {"gradients", memory.gradientBytes},
          {"activations", memory.activationBytes},
          {"workspace", memory.workspaceBytes}};
      for (auto [kind, bytes] : kinds)
        if (bytes > peak.largestBytes) {
          peak.largestKind = kind;
          peak.largestBytes = bytes;
        }
    }
  } catch (const std::exception &) {
    return {};
  }
  return peaks;
}

std::string dpc::formatBytes(int64_t bytes) { return plan::formatBytes(bytes); }

std::string dpc::checkPlanLoads(const std::vector<uint8_t> &planBytes,
                                const std::string &name) {
  try {
    plan::LoadedPlan::fromBytes(planBytes, name);
  } catch (const std::exception &error) {
    return error.what();
  }
  return "";
}

int dpc::inspectCommand(int argc, char **argv) {
  std::string path;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: dpc inspect PLAN [--json]\n"
          "Shows what a plan holds per device: planned memory by kind, the "
          "tensors alive at the peak, steps, streams, all-reduce buckets.\n"
          "\n"
          "Output:\n"
          "  --json              the same as one JSON object\n");
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
