//===- RunSinks.cpp - what a training run writes on the way ---------------===//

#include "runtime/train/RunSinks.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/Trace.h"
#include "runtime/exec/TrainingState.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/Trainer.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dpc::train {

namespace {

[[noreturn]] void fail(const std::string &message) { throw RunError(message); }

/// Writes `text` to `path` (via a temporary file, so a reader never sees
/// half a plot).
void writeTextFile(const std::string &path, const std::string &text) {
  std::string error;
  if (!io::writeFileAtomically(path, text, error))
    fail(error);
}

} // namespace

MetricsSink::MetricsSink(const std::string &metricsPath, std::string plotPath,
                         const std::vector<EpochMetrics> &history,
                         const rt::Executor *executor)
    : plotPath(std::move(plotPath)), executor(executor) {
  if (metricsPath.empty())
    return;
  if (executor)
    for (const plan::DeviceMemory &device :
         plan::summarizeMemory(executor->getPlan().get()))
      planned.emplace_back(device.name, device.requiredBytes());
  std::string error;
  if (!metrics.open(metricsPath, error))
    fail(error);
  for (const EpochMetrics &m : history)
    append(m);
}

void MetricsSink::append(const EpochMetrics &epoch, const std::string &more) {
  std::string line = toJsonLine(epoch);
  line.insert(line.size() - 1, more); // before the closing brace
  std::string error;
  if (!metrics.append(line + "\n", error))
    fail(error);
}

namespace {
/// The process's peak resident set (VmHWM), in bytes; 0 where unknown.
int64_t getPeakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atoll(line.c_str() + 6) * 1024; // "VmHWM:  1234 kB"
  return 0;
}
} // namespace

std::string
memoryFields(const rt::Executor &executor,
             const std::vector<std::pair<std::string, int64_t>> &planned) {
  std::ostringstream os;
  os << ", \"memory\": [";
  bool first = true;
  for (size_t d = 0; d < planned.size(); ++d) {
    std::optional<rt::Device::MemoryUse> use = executor.getMemoryUse(int(d));
    if (!use)
      continue;
    os << (first ? "" : ", ") << "{\"device\": \"" << planned[d].first
       << "\", \"planned_bytes\": " << planned[d].second
       << ", \"allocated_peak_bytes\": " << use->devicePeakBytes
       << ", \"host_peak_bytes\": " << use->hostPeakBytes
       << ", \"library_peak_bytes\": " << use->libraryPeakBytes << "}";
    first = false;
  }
  os << "], \"peak_rss_bytes\": " << getPeakResidentBytes();
  return os.str();
}

void MetricsSink::record(const EpochMetrics &epoch,
                         const std::vector<EpochMetrics> &history,
                         bool complete, int64_t totalEpochs) {
  std::vector<EpochMetrics> shown = history;
  if (!complete)
    shown.push_back(epoch);
  if (metrics.isOpen())
    append(epoch, executor ? memoryFields(*executor, planned) : "");
  if (!plotPath.empty())
    writeTextFile(plotPath, renderSvgPlot(shown, totalEpochs));
}

TraceRecorder::TraceRecorder(const std::string &path, rt::Executor &executor,
                             std::ostream &out, bool quiet)
    : path(path), executor(executor), out(out), quiet(quiet) {
  if (path.empty())
    return;
  tracer = std::make_unique<rt::Tracer>();
  std::vector<std::string> names;
  for (const auto *device : *executor.getPlan().get().devices())
    names.push_back(device->name()->str());
  tracer->setDeviceNames(std::move(names));
  executor.setTracer(tracer.get());
}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::afterStep() {
  if (tracer && ++tracedSteps == kTracedSteps)
    finish();
}

void TraceRecorder::finish() {
  if (!tracer)
    return;
  executor.setTracer(nullptr);
  for (int d = 0; d < int(executor.getPlan().get().devices()->size()); ++d)
    tracer->setDeviceNotes(d, executor.getRunTimeChoices(d));
  std::ostringstream trace;
  tracer->writeChromeTrace(trace);
  writeTextFile(path, trace.str());
  double collective = 0, hidden = 0;
  for (const rt::Tracer::Overlap &device : tracer->getOverlap())
    collective += device.communicationMicros, hidden += device.hiddenMicros;
  if (!quiet && collective > 0) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "communication: %.1f ms in collectives over %lld "
                  "traced steps, %.0f%% hidden behind compute",
                  collective / 1000, static_cast<long long>(tracedSteps),
                  100 * hidden / collective);
    out << text << std::endl;
  }
  tracer.reset();
}

CheckpointPolicy::CheckpointPolicy(const RunOptions &options, bool leader,
                                   const TrainingState &state, bool collective)
    : directory(options.checkpointDirectory),
      path(options.checkpointDirectory.empty()
               ? std::string()
               : getCheckpointPath(options.checkpointDirectory)),
      writes(leader && !path.empty()),
      saving(!path.empty() && (leader || collective)),
      every(options.checkpointEvery),
      savedAt(options.resume ? state.stepsDone : -1) {}

bool CheckpointPolicy::isDueMidEpoch(int64_t stepsDone, int64_t step,
                                     int64_t stepsPerEpoch) const {
  return saving && every > 0 && stepsDone % every == 0 && step < stepsPerEpoch;
}

void CheckpointPolicy::save(const rt::Executor &executor,
                            TrainingState &state) {
  captureState(executor, state);
  if (writes)
    saveCheckpoint(directory, state);
  savedAt = state.stepsDone;
}

void CheckpointPolicy::saveIfBehind(const rt::Executor &executor,
                                    TrainingState &state) {
  if (saving && savedAt != state.stepsDone)
    save(executor, state);
}

namespace {
/// Whether saving `executor`'s state is a collective: under dpc launch,
/// with training state sharded over the ranks.
bool isCollectiveCapture(const rt::Executor &executor) {
  if (executor.getLocalDevice() < 0)
    return false;
  for (const plan::PersistentTensor *p : *executor.getPlan()->persistent())
    if (rt::isShard(*p))
      return true;
  return false;
}
} // namespace

std::string describePosition(const TrainingState &state,
                             int64_t stepsPerEpoch) {
  if (state.partial.stepsDone == 0)
    return "after epoch " + std::to_string(state.epochsDone) + " (step " +
           std::to_string(state.stepsDone) + ")";
  return "at step " + std::to_string(state.stepsDone) + " (epoch " +
         std::to_string(state.epochsDone + 1) + ", batch " +
         std::to_string(state.partial.stepsDone) + " of " +
         std::to_string(stepsPerEpoch) + ")";
}

RunSinks::RunSinks(const RunOptions &options, const RunOptions &local,
                   bool leader, rt::Executor &executor,
                   const TrainingState &state, std::ostream &out,
                   bool interactive)
    : out(out),
      metrics(local.metricsPath, local.plotPath, state.history, &executor),
      trace(local.tracePath, executor, out, local.quiet),
      progress(out, interactive, local.quiet),
      checkpoints(options, leader, state, isCollectiveCapture(executor)) {}

} // namespace dpc::train
