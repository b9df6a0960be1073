//===- PlanLoader.cpp - reading and validating plan files -----------------===//
//
// Reading a plan file, and the validator's driver with the checks across
// steps (replicas, split, device memory); the other checks are in
// PlanHeaderChecks.cpp, PlanStepChecks.cpp and PlanInstructionChecks.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanLoader.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/abi/SharedCast.h"
#include "runtime/io/FileRead.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanValidator.h"
#include "runtime/plan/PlanVersion.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace dpc::plan {

void LoadedPlan::fail(const std::string &message) const {
  throw PlanError(name + ": " + message);
}

std::vector<int> LoadedPlan::findReplicas(std::string_view stepName) const {
  std::vector<int> replicas;
  const auto *steps = root->steps();
  for (flatbuffers::uoffset_t i = 0; steps && i < steps->size(); ++i)
    if (steps->Get(i)->name() &&
        steps->Get(i)->name()->string_view() == stepName)
      replicas.push_back(static_cast<int>(i));
  std::stable_sort(replicas.begin(), replicas.end(), [&](int a, int b) {
    return steps->Get(a)->device() < steps->Get(b)->device();
  });
  return replicas;
}

int LoadedPlan::findStep(StepRole role) const {
  const auto *steps = root->steps();
  for (flatbuffers::uoffset_t i = 0; steps && i < steps->size(); ++i)
    if (steps->Get(i)->role() == role)
      return static_cast<int>(i);
  return -1;
}

std::shared_ptr<const LoadedPlan> LoadedPlan::load(const std::string &path) {
  // FlatBuffers cannot address more: a larger "plan" (a device file, say)
  // is refused before it fills the memory.
  std::vector<uint8_t> bytes;
  std::string error;
  if (!io::readFile(path, bytes, error, FLATBUFFERS_MAX_BUFFER_SIZE))
    throw PlanError(error);
  return fromBytes(std::move(bytes), path);
}

std::shared_ptr<const LoadedPlan>
LoadedPlan::fromBytes(std::vector<uint8_t> bytes, std::string name) {
  std::shared_ptr<LoadedPlan> plan(
      new LoadedPlan(std::move(bytes), std::move(name)));
  plan->validate();
  return plan;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

void PlanValidator::run() {
  checkAlignment();
  checkHeader();
  checkOnnxModel();
  checkPersistent();
  const auto *steps = plan.steps();
  if (!steps || steps->size() == 0)
    loaded.fail("the plan has no steps");
  // Steps of the same name on different devices are the replicas of
  // one data-parallel step.
  std::set<std::pair<std::string, int>> names;
  for (flatbuffers::uoffset_t s = 0; s < steps->size(); ++s) {
    const Step &step = *steps->Get(s);
    std::string stepName = step.name() ? step.name()->str() : "";
    if (stepName.empty())
      loaded.fail("step " + std::to_string(s) + " has no name");
    if (!names.insert({stepName, step.device()}).second)
      loaded.fail("two steps are named '" + stepName + "' on device " +
                  std::to_string(step.device()));
    checkStep(step);
  }
  checkReplicas();
  checkReplicaSignatures(loaded);
  checkRoles(loaded);
  checkSplit();
  checkDeviceBytes();
}

void PlanValidator::checkReplicas() {
  std::map<std::string, std::vector<const Step *>> replicas;
  for (const Step *step : *plan.steps())
    replicas[step->name()->str()].push_back(step);
  size_t numDevices = plan.devices()->size();
  for (const auto &[name, steps] : replicas) {
    int collectives = countCollectives(*steps[0]);
    for (const Step *step : steps)
      if (countCollectives(*step) != collectives)
        loaded.fail("step '" + name + "': the replica on device " +
                    std::to_string(step->device()) + " has " +
                    std::to_string(countCollectives(*step)) +
                    " collectives, the one on device " +
                    std::to_string(steps[0]->device()) + " has " +
                    std::to_string(collectives));
    if (collectives > 0 && steps.size() != numDevices)
      loaded.fail("step '" + name + "' has collectives but replicas on " +
                  std::to_string(steps.size()) + " of the " +
                  std::to_string(numDevices) + " devices");
  }
}

void PlanValidator::checkSplit() {
  const auto *split = plan.split();
  if (!split || split->size() == 0)
    return;
  if (split->size() != plan.devices()->size())
    loaded.fail("split " + formatDims(toDims(split)) + " has " +
                std::to_string(split->size()) + " entries for " +
                std::to_string(plan.devices()->size()) + " devices");
  int64_t sum = 0;
  for (int64_t share : *split) {
    if (share < 0)
      loaded.fail("split " + formatDims(toDims(split)) +
                  " has a negative share");
    sum += share;
  }
  // With gradient accumulation the shares are those of a micro-batch.
  if (plan.compiled_batch() > 0 &&
      sum * plan.grad_accum() != plan.compiled_batch())
    loaded.fail("split " + formatDims(toDims(split)) + " sums to " +
                std::to_string(sum) + ", not the compiled batch " +
                std::to_string(plan.compiled_batch()) +
                (plan.grad_accum() > 1
                     ? " / " + std::to_string(plan.grad_accum())
                     : std::string()));
}

void PlanValidator::checkDeviceBytes() {
  size_t numDevices = plan.devices()->size();
  std::vector<int64_t> state(numDevices, 0), arena(numDevices, 0),
      inputs(numDevices, 0);
  auto add = [&](std::vector<int64_t> &total, int device, int64_t bytes) {
    std::optional<int64_t> sum = checkedAdd(total[device], bytes);
    total[device] = sum ? *sum : kMaxDeviceBytes + 1;
    if (total[device] > kMaxDeviceBytes)
      failDeviceBytes(device);
  };
  if (const auto *persistent = plan.persistent())
    for (const PersistentTensor *p : *persistent)
      add(state, p->device(), getByteSize(p->dtype(), toDims(p->dims())));
  for (const Step *step : *plan.steps()) {
    arena[step->device()] =
        std::max(arena[step->device()], step->arena_bytes());
    if (const auto *bindings = step->inputs())
      for (const Binding *binding : *bindings) {
        const Tensor &t = *step->tensors()->Get(binding->tensor());
        add(inputs, step->device(), getByteSize(t.dtype(), toDims(t.dims())));
      }
  }
  for (size_t d = 0; d < numDevices; ++d) {
    add(state, d, arena[d]);
    add(state, d, inputs[d]);
  }
}

[[noreturn]] void PlanValidator::failDeviceBytes(int device) {
  loaded.fail("device " + plan.devices()->Get(device)->name()->str() +
              " would need more than " + std::to_string(kMaxDeviceBytes >> 40) +
              " TiB (training state, arena and inputs)");
}

std::vector<std::pair<int, int>>
PlanValidator::orderForEnqueue(const Step &step, const std::string &where) {
  std::vector<std::pair<int, int>> order;
  const auto *streams = step.streams();
  size_t numStreams = streams ? streams->size() : 0;
  std::vector<size_t> next(numStreams, 0);
  std::vector<bool> signalled(step.num_events(), false);
  auto size = [&](size_t s) {
    const auto *instructions = streams->Get(s)->instructions();
    return instructions ? instructions->size() : 0;
  };
  while (true) {
    bool progress = false, done = true;
    for (size_t s = 0; s < numStreams; ++s) {
      for (; next[s] < size(s); ++next[s]) {
        const Instruction &instruction =
            *streams->Get(s)->instructions()->Get(next[s]);
        bool ready = true;
        if (const auto *waits = instruction.wait_events())
          for (int e : *waits)
            ready = ready && signalled[e];
        if (!ready)
          break;
        if (const auto *signals = instruction.signal_events())
          for (int e : *signals)
            signalled[e] = true;
        order.emplace_back(static_cast<int>(s), static_cast<int>(next[s]));
        progress = true;
      }
      done = done && next[s] == size(s);
    }
    if (done)
      return order;
    if (!progress)
      break;
  }
  for (size_t s = 0; s < numStreams; ++s)
    if (next[s] < size(s))
      loaded.fail(where + ": stream " + std::to_string(s) + " instruction " +
                  std::to_string(next[s]) +
                  " waits for an event that can never be signalled "
                  "(the streams deadlock)");
  return order;
}

void LoadedPlan::validate() {
  const uint8_t *data = bytes.data();
  size_t size = bytes.size();
  if (size < 8 || !PlanBufferHasIdentifier(data))
    fail("not a dpc plan (no \"DPCP\" file identifier)");

  // Read the version before verifying the whole buffer, so that a plan of
  // another version is reported as such rather than as corrupted. `version`
  // is the first field of Plan and must stay so.
  flatbuffers::Verifier headerVerifier(data, size);
  flatbuffers::uoffset_t rootOffset =
      flatbuffers::ReadScalar<flatbuffers::uoffset_t>(data);
  if (rootOffset < 8 || rootOffset > size - 4)
    fail("corrupted plan (verification failed)");
  const auto *table =
      reinterpret_cast<const flatbuffers::Table *>(data + rootOffset);
  if (!table->VerifyTableStart(headerVerifier) ||
      !table->VerifyField<uint32_t>(headerVerifier, Plan::VT_VERSION, 4))
    fail("corrupted plan (verification failed)");
  uint32_t version = table->GetField<uint32_t>(Plan::VT_VERSION, 0);
  if (version != kPlanVersion)
    fail("plan format version " + std::to_string(version) +
         ", this runtime reads version " + std::to_string(kPlanVersion) +
         "; recompile the model");

  flatbuffers::Verifier verifier(data, size);
  if (!VerifyPlanBuffer(verifier))
    fail("corrupted plan (verification failed)");
  std::optional<size_t> checksumAt = findPlanChecksum(data);
  if (!checksumAt)
    fail("the plan carries no checksum");
  uint64_t expected = flatbuffers::ReadScalar<uint64_t>(data + *checksumAt);
  if (computePlanChecksum(data, size, *checksumAt) != expected)
    fail("corrupted plan (checksum mismatch: its contents changed since it "
         "was written)");
  root = GetPlan(data);
  PlanValidator(*this).run();
}

} // namespace dpc::plan
