//===- Checkpoint.cpp - training state on disk ----------------------------===//
//
// Format (little-endian): "DPCCKPT4", then the fields of TrainingState in
// declaration order (strings and vectors as a u64 length and their
// elements), then an FNV-1a 64 checksum of everything before it. Version 3
// lacks the DataForm, 2 the validation metrics, 1 PartialEpoch.
// docs/checkpoint-format.md is the reference; change both together, with a new
// version.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/Checkpoint.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/TrainingState.h"
#include "runtime/io/FileRead.h"
#include "runtime/io/FileWrite.h"
#include "runtime/plan/Checksum.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/NonFinite.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>

namespace dpc::train {
namespace {

/// "DPCCKPT" and the format version as one ASCII digit.
constexpr char kMagicPrefix[7] = {'D', 'P', 'C', 'C', 'K', 'P', 'T'};
constexpr size_t kMagicSize = sizeof(kMagicPrefix) + 1;

class Writer {
public:
  template <typename T> void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto *p = reinterpret_cast<const uint8_t *>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put(const std::string &text) {
    put<uint64_t>(text.size());
    bytes.insert(bytes.end(), text.begin(), text.end());
  }
  void putBytes(const std::vector<uint8_t> &data) {
    put<uint64_t>(data.size());
    bytes.insert(bytes.end(), data.begin(), data.end());
  }
  std::vector<uint8_t> bytes;
};

class Reader {
public:
  Reader(const std::vector<uint8_t> &bytes, size_t end, std::string path)
      : bytes(bytes), end(end), path(std::move(path)) {}
  template <typename T> T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, &bytes[at], sizeof(T));
    at += sizeof(T);
    return value;
  }
  std::string getString() {
    uint64_t size = get<uint64_t>();
    need(size);
    std::string text(bytes.begin() + at, bytes.begin() + at + size);
    at += size;
    return text;
  }
  std::vector<uint8_t> getBytes() {
    uint64_t size = get<uint64_t>();
    need(size);
    std::vector<uint8_t> data(bytes.begin() + at, bytes.begin() + at + size);
    at += size;
    return data;
  }
  void need(uint64_t size) {
    if (size > end - at)
      throw CheckpointError(path + ": corrupted checkpoint (truncated)");
  }
  /// Room for `count` items of at least `itemBytes` each: a count read
  /// from the file bounds no allocation the file cannot back.
  void needItems(uint64_t count, uint64_t itemBytes) {
    if (count > (end - at) / itemBytes)
      throw CheckpointError(path + ": corrupted checkpoint (truncated)");
  }
  bool atEnd() const { return at == end; }
  size_t at = kMagicSize;

private:
  const std::vector<uint8_t> &bytes;
  size_t end;
  std::string path;
};

/// An epoch's metrics: its number and six doubles (eight from version 3,
/// with the validation loss and accuracy).
uint64_t getEpochMetricsBytes(int version) {
  return 8 + (version >= 3 ? 8 : 6) * 8;
}
/// A tensor with an empty name, no dims and no bytes: three lengths and
/// the dtype.
constexpr uint64_t kMinSavedTensorBytes = 3 * 8 + 4;

[[noreturn]] void failInvalid(const std::string &path,
                              const std::string &reason) {
  throw CheckpointError(path + ": invalid checkpoint (" + reason + ")");
}

/// The counters agree with each other and with the metrics: a checksum
/// proves the file is as written, not that what was written makes sense.
void checkProgress(const TrainingState &state, const std::string &path) {
  if (state.epochsDone < 0 || state.stepsDone < 0 || state.optimizerStep < 0)
    failInvalid(path, "negative epochs, steps or optimizer steps done");
  if (static_cast<uint64_t>(state.epochsDone) != state.history.size())
    failInvalid(path, std::to_string(state.epochsDone) +
                          " epochs done but the metrics of " +
                          std::to_string(state.history.size()));
  for (size_t i = 0; i < state.history.size(); ++i)
    if (state.history[i].epoch != static_cast<int64_t>(i + 1))
      failInvalid(path, "metrics entry " + std::to_string(i) + " is epoch " +
                            std::to_string(state.history[i].epoch) + ", not " +
                            std::to_string(i + 1));
  if (state.stepsDone < state.epochsDone)
    failInvalid(path, std::to_string(state.epochsDone) + " epochs done in " +
                          std::to_string(state.stepsDone) + " steps");
  if (state.optimizerStep > state.stepsDone)
    failInvalid(path, std::to_string(state.optimizerStep) +
                          " optimizer steps in " +
                          std::to_string(state.stepsDone) + " steps");
}

/// A tensor's dtype, dims and bytes agree.
void checkSavedTensor(const SavedTensor &t, const std::string &path) {
  std::string where = "tensor '" + t.name + "'";
  if (t.name.empty())
    failInvalid(path, "a tensor has no name");
  if (t.dtype < 0 || t.dtype > static_cast<int32_t>(plan::DType::MAX))
    failInvalid(path, where + " has unknown dtype " + std::to_string(t.dtype));
  if (t.dims.size() > plan::kMaxTensorRank)
    failInvalid(path, where + " has rank " + std::to_string(t.dims.size()));
  int64_t bytes = plan::getByteSize(plan::DType(t.dtype), t.dims);
  if (bytes < 0)
    failInvalid(path, where + " has invalid dims " + plan::formatDims(t.dims));
  if (static_cast<uint64_t>(bytes) != t.bytes.size())
    failInvalid(path, where + " " + plan::formatDims(t.dims) + " holds " +
                          std::to_string(t.bytes.size()) + " bytes, not " +
                          std::to_string(bytes));
}

} // namespace

std::string getCheckpointPath(const std::string &directory) {
  return (std::filesystem::path(directory) / "checkpoint.dpcckpt").string();
}

void saveCheckpoint(const std::string &directory, const TrainingState &state) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw CheckpointError(directory + ": cannot create the directory (" +
                          error.message() + ")");
  Writer w;
  w.bytes.assign(kMagicPrefix, kMagicPrefix + sizeof(kMagicPrefix));
  w.bytes.push_back('0' + kCheckpointFormatVersion);
  w.put(state.epochsDone);
  w.put(state.stepsDone);
  w.put(state.optimizerStep);
  w.put(state.seed);
  w.put(state.partial.stepsDone);
  w.put(state.partial.samplesSeen);
  w.put(state.partial.lossSum);
  w.put(state.partial.correct);
  w.put(state.partial.trainSeconds);
  w.put<uint64_t>(state.history.size());
  for (const EpochMetrics &m : state.history) {
    w.put(m.epoch);
    for (double v : {m.trainLoss, m.trainAcc, m.testAcc, m.epochSeconds,
                     m.imagesPerSecond, m.lr, m.valLoss, m.valAcc})
      w.put(v);
  }
  w.put<uint64_t>(state.tensors.size());
  for (const SavedTensor &t : state.tensors) {
    w.put(t.name);
    w.put(t.dtype);
    w.put<uint64_t>(t.dims.size());
    for (int64_t d : t.dims)
      w.put(d);
    w.putBytes(t.bytes);
  }
  w.put(static_cast<int32_t>(state.dataForm.layout));
  const data::Normalization &normalization = state.dataForm.normalization;
  w.put<uint64_t>(normalization.mean.size());
  for (size_t c = 0; c < normalization.mean.size(); ++c)
    w.put(normalization.mean[c]), w.put(normalization.std[c]);
  w.put(fnv1a(w.bytes.data(), w.bytes.size()));
  std::string message;
  if (!io::writeFileAtomically(getCheckpointPath(directory), w.bytes.data(),
                               w.bytes.size(), message))
    throw CheckpointError(message);
}

TrainingState loadCheckpoint(const std::string &directory) {
  std::string path = getCheckpointPath(directory);
  std::vector<uint8_t> bytes;
  std::string error;
  int number;
  if (!io::readFile(path, bytes, error, UINT64_MAX, &number))
    throw CheckpointError(
        number == ENOENT ? path + ": no checkpoint to resume from" : error);
  if (bytes.size() < kMagicSize + 8 ||
      std::memcmp(bytes.data(), kMagicPrefix, sizeof(kMagicPrefix)) != 0)
    throw CheckpointError(path + ": not a dpc checkpoint");
  int version = bytes[sizeof(kMagicPrefix)] - '0';
  if (version < 1 || version > kCheckpointFormatVersion)
    throw CheckpointError(path + ": checkpoint format version " +
                          std::string(1, char(bytes[sizeof(kMagicPrefix)])) +
                          " is not one this dpc reads (1 to " +
                          std::to_string(kCheckpointFormatVersion) + ")");
  size_t end = bytes.size() - 8;
  uint64_t checksum;
  std::memcpy(&checksum, &bytes[end], 8);
  if (checksum != fnv1a(bytes.data(), end))
    throw CheckpointError(path + ": corrupted checkpoint (checksum mismatch)");

  Reader r(bytes, end, path);
  TrainingState state;
  state.epochsDone = r.get<int64_t>();
  state.stepsDone = r.get<int64_t>();
  state.optimizerStep = r.get<int64_t>();
  state.seed = r.get<uint64_t>();
  if (version >= 2) {
    state.partial.stepsDone = r.get<int64_t>();
    state.partial.samplesSeen = r.get<int64_t>();
    state.partial.lossSum = r.get<double>();
    state.partial.correct = r.get<double>();
    state.partial.trainSeconds = r.get<double>();
  }
  uint64_t epochs = r.get<uint64_t>();
  r.needItems(epochs, getEpochMetricsBytes(version));
  for (uint64_t i = 0; i < epochs; ++i) {
    EpochMetrics m;
    m.epoch = r.get<int64_t>();
    for (double *v : {&m.trainLoss, &m.trainAcc, &m.testAcc, &m.epochSeconds,
                      &m.imagesPerSecond, &m.lr})
      *v = r.get<double>();
    if (version >= 3)
      m.valLoss = r.get<double>(), m.valAcc = r.get<double>();
    state.history.push_back(m);
  }
  uint64_t tensors = r.get<uint64_t>();
  r.needItems(tensors, kMinSavedTensorBytes);
  for (uint64_t i = 0; i < tensors; ++i) {
    SavedTensor t;
    t.name = r.getString();
    t.dtype = r.get<int32_t>();
    uint64_t rank = r.get<uint64_t>();
    r.needItems(rank, sizeof(int64_t));
    for (uint64_t d = 0; d < rank; ++d)
      t.dims.push_back(r.get<int64_t>());
    t.bytes = r.getBytes();
    state.tensors.push_back(std::move(t));
  }
  if (version >= 4) {
    DataForm &form = state.dataForm;
    form.known = true;
    int32_t layout = r.get<int32_t>();
    if (layout < 0 || layout > int32_t(data::ImageLayout::NHWC))
      failInvalid(path, "unknown image layout " + std::to_string(layout));
    form.layout = data::ImageLayout(layout);
    uint64_t channels = r.get<uint64_t>();
    r.needItems(channels, 2 * sizeof(float));
    for (uint64_t c = 0; c < channels; ++c) {
      form.normalization.mean.push_back(r.get<float>());
      form.normalization.std.push_back(r.get<float>());
      if (!std::isfinite(form.normalization.mean.back()) ||
          !(form.normalization.std.back() > 0) ||
          !std::isfinite(form.normalization.std.back()))
        failInvalid(path, "channel " + std::to_string(c) +
                              "'s normalization is not a finite mean and a "
                              "std > 0");
    }
  }
  if (!r.atEnd())
    throw CheckpointError(path + ": corrupted checkpoint (trailing bytes)");
  checkProgress(state, path);
  for (const SavedTensor &t : state.tensors)
    checkSavedTensor(t, path);
  return state;
}

void reconcileDataForm(TrainingState &state, data::ImageLayout &layout,
                       data::Normalization &normalization,
                       const std::string &path) {
  DataForm &form = state.dataForm;
  if (form.known) {
    const char *names[] = {"auto", "nchw", "nhwc"};
    if (layout == data::ImageLayout::Auto)
      layout = form.layout;
    else if (form.layout != data::ImageLayout::Auto && layout != form.layout)
      throw CheckpointError(path + ": was trained with --layout " +
                            names[int(form.layout)] + ", not " +
                            names[int(layout)] +
                            " (leave --layout out to use the checkpoint's)");
    bool same = normalization.mean == form.normalization.mean &&
                normalization.std == form.normalization.std;
    if (normalization.empty())
      normalization = form.normalization;
    else if (!same)
      throw CheckpointError(
          path + ": was trained " +
          (form.normalization.empty()
               ? std::string("without --normalize")
               : "with --normalize " +
                     formatNormalization(form.normalization)) +
          ", not with " + formatNormalization(normalization) +
          " (leave --normalize out to use the checkpoint's)");
  }
  form = {true, layout, normalization};
}

void checkResumable(const TrainingState &state, int64_t epochs,
                    int64_t maxSteps, const std::string &path) {
  if (state.epochsDone > epochs)
    throw CheckpointError(
        path + ": has done " + std::to_string(state.epochsDone) +
        " epochs, more than this run's " + std::to_string(epochs));
  if (maxSteps >= 0 && state.stepsDone > maxSteps)
    throw CheckpointError(
        path + ": has done " + std::to_string(state.stepsDone) +
        " steps, more than this run's --steps " + std::to_string(maxSteps));
}

/// The plan's tensors as a checkpoint holds them, in plan order: each
/// primary copy alone, or every shard of a sharded tensor together (at its
/// first shard), so that a checkpoint holds the logical, whole state
/// whatever the sharding.
static std::vector<std::vector<size_t>>
getSavedTensors(const rt::Executor &executor) {
  const auto *persistent = executor.getPlan()->persistent();
  std::vector<std::vector<size_t>> saved;
  std::map<std::string, size_t> shardsOf;
  for (size_t i : executor.getPrimaryPersistent()) {
    const plan::PersistentTensor &p = *persistent->Get(i);
    if (!rt::isShard(p)) {
      saved.push_back({i});
      continue;
    }
    auto [at, first] = shardsOf.try_emplace(p.name()->str(), saved.size());
    if (first)
      saved.emplace_back();
    saved[at->second].push_back(i);
  }
  return saved;
}

/// The byte range of shard `p` in the whole tensor.
static std::pair<size_t, size_t>
getShardBytes(const plan::PersistentTensor &p) {
  auto size = static_cast<size_t>(plan::getDTypeSize(p.dtype()));
  return {p.shard_offset() * size,
          plan::getNumElements(plan::toDims(p.dims())) * size};
}

/// Whether the shards `shards` of a tensor of `bytes` bytes tile it: this
/// process holds all of them (else, under dpc launch, one each).
static bool shardsTile(const rt::Executor &executor,
                       const std::vector<size_t> &shards, size_t bytes) {
  const auto *persistent = executor.getPlan()->persistent();
  size_t covered = 0;
  for (size_t i : shards)
    covered += getShardBytes(*persistent->Get(i)).second;
  return covered == bytes;
}

void captureState(const rt::Executor &executor, TrainingState &state) {
  const auto *persistent = executor.getPlan()->persistent();
  state.tensors.clear();
  for (const std::vector<size_t> &group : getSavedTensors(executor)) {
    const plan::PersistentTensor &p = *persistent->Get(group[0]);
    SavedTensor t;
    t.name = p.name()->str();
    t.dtype = static_cast<int32_t>(p.dtype());
    t.dims = rt::getWholeDims(p);
    if (!rt::isShard(p)) {
      t.bytes.resize(executor.getPersistentBytes(group[0]));
      executor.readPersistent(group[0], t.bytes.data());
    } else {
      // Gathered: each shard at its offset; under dpc launch, every
      // rank's through the communicator.
      t.bytes.resize(plan::getNumElements(t.dims) *
                     plan::getDTypeSize(p.dtype()));
      if (!shardsTile(executor, group, t.bytes.size())) {
        try {
          executor.gatherShard(group[0], t.bytes.data());
        } catch (const std::runtime_error &error) {
          throw CheckpointError(error.what());
        }
        state.tensors.push_back(std::move(t));
        continue;
      }
      for (size_t i : group) {
        auto [offset, bytes] = getShardBytes(*persistent->Get(i));
        std::vector<uint8_t> shard(bytes);
        executor.readPersistent(i, shard.data());
        std::copy(shard.begin(), shard.end(), t.bytes.begin() + offset);
      }
    }
    state.tensors.push_back(std::move(t));
  }
  state.optimizerStep = executor.getOptimizerStep();
}

/// Saved tensor `k` is the plan's persistent tensor `p` of `bytes` bytes:
/// the same name, dtype, dims and size.
static void checkTensorMatches(const SavedTensor &t,
                               const plan::PersistentTensor &p, size_t bytes,
                               size_t k, const std::string &path) {
  const char *another = " (a checkpoint of another plan?)";
  std::string name = p.name()->str();
  if (t.name != name)
    throw CheckpointError(path + ": tensor " + std::to_string(k) + " is '" +
                          t.name + "', the plan's is '" + name + "'" + another);
  auto dtype = plan::DType(t.dtype);
  if (dtype != p.dtype())
    throw CheckpointError(path + ": tensor '" + t.name + "' is " +
                          plan::EnumNameDType(dtype) + ", the plan's is " +
                          plan::EnumNameDType(p.dtype()) + another);
  std::vector<int64_t> dims = rt::getWholeDims(p);
  if (t.dims != dims)
    throw CheckpointError(path + ": tensor '" + t.name + "' " +
                          plan::formatDims(t.dims) + " does not match the " +
                          "plan's '" + name + "' " + plan::formatDims(dims) +
                          another);
  if (t.bytes.size() != bytes)
    throw CheckpointError(path + ": tensor '" + t.name + "' holds " +
                          std::to_string(t.bytes.size()) +
                          " bytes, the plan's " + std::to_string(bytes));
}

void checkStateValues(const SavedTensor &t, plan::PersistentKind kind,
                      const std::string &path) {
  // A checksum proves the bytes are as written, not that they are a state
  // to train or predict from: a crafted file (or an older dpc's) may hold
  // NaN weights, which would otherwise surface only as a bad first step.
  int64_t bad = findInvalidStateValue(
      t.dtype, t.bytes.data(), plan::getNumElements(t.dims),
      /*infinityAllowed=*/kind == plan::PersistentKind::Buffer);
  if (bad >= 0)
    throw CheckpointError(path + ": invalid checkpoint (tensor '" + t.name +
                          "' holds " +
                          describeNonFinite(t.dtype, t.bytes.data(), bad) +
                          " at index " + std::to_string(bad) + ")");
}

void restoreState(rt::Executor &executor, const TrainingState &state,
                  const std::string &path) {
  const auto *persistent = executor.getPlan()->persistent();
  std::vector<std::vector<size_t>> groups = getSavedTensors(executor);
  size_t count = groups.size();
  if (state.tensors.size() != count)
    throw CheckpointError(path + ": holds " +
                          std::to_string(state.tensors.size()) +
                          " tensors, the plan has " + std::to_string(count) +
                          " (a checkpoint of another plan?)");
  for (size_t k = 0; k < count; ++k) {
    const plan::PersistentTensor &tensor = *persistent->Get(groups[k][0]);
    size_t bytes = rt::isShard(tensor)
                       ? plan::getNumElements(rt::getWholeDims(tensor)) *
                             plan::getDTypeSize(tensor.dtype())
                       : executor.getPersistentBytes(groups[k][0]);
    checkTensorMatches(state.tensors[k], tensor, bytes, k, path);
    checkStateValues(state.tensors[k], tensor.kind(), path);
  }
  // Every device's copy gets the saved one; a shard its range of it.
  for (size_t k = 0; k < count; ++k)
    for (size_t i : groups[k]) {
      const plan::PersistentTensor &tensor = *persistent->Get(i);
      size_t offset = rt::isShard(tensor) ? getShardBytes(tensor).first : 0;
      executor.writePersistent(i, state.tensors[k].bytes.data() + offset);
    }
  executor.setOptimizerStep(state.optimizerStep);
}

} // namespace dpc::train
