//===- Checkpoint.cpp - training state on disk ----------------------------===//
//
// Format (little-endian): "DPCCKPT2", then the fields of TrainingState in
// declaration order (strings and vectors as a u64 length and their
// elements), then an FNV-1a 64 checksum of everything before it. Version 1
// (read too) lacks the unfinished epoch's four fields.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/Checkpoint.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanTypes.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace dpc::train {
namespace {

constexpr char kMagic[8] = {'D', 'P', 'C', 'C', 'K', 'P', 'T', '2'};
constexpr size_t kVersionAt = 7; // the magic's last character

uint64_t fnv1a(const uint8_t *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * 0x100000001b3ull;
  return hash;
}

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
  bool atEnd() const { return at == end; }
  size_t at = sizeof(kMagic);

private:
  const std::vector<uint8_t> &bytes;
  size_t end;
  std::string path;
};

[[noreturn]] void failErrno(const std::string &path, const char *what) {
  throw CheckpointError(path + ": cannot " + what + " (" +
                        std::strerror(errno) + ")");
}

/// Writes `bytes` to `path` through `path`.tmp, fsync and rename.
void writeAtomically(const std::string &path,
                     const std::vector<uint8_t> &bytes) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    failErrno(temporary, "create the file");
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      failErrno(temporary, "write the file");
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    failErrno(temporary, "sync the file");
  }
  if (::close(fd) != 0)
    failErrno(temporary, "close the file");
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    failErrno(path, "replace the file");
  // Make the rename itself durable.
  std::string directory = std::filesystem::path(path).parent_path().string();
  int dirFd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
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
  w.bytes.assign(kMagic, kMagic + sizeof(kMagic));
  w.put(state.epochsDone);
  w.put(state.stepsDone);
  w.put(state.optimizerStep);
  w.put(state.seed);
  w.put(state.epochStepsDone);
  w.put(state.epochLossSum);
  w.put(state.epochCorrect);
  w.put(state.epochSeen);
  w.put<uint64_t>(state.history.size());
  for (const EpochMetrics &m : state.history) {
    w.put(m.epoch);
    for (double v : {m.trainLoss, m.trainAcc, m.testAcc, m.epochSeconds,
                     m.imagesPerSecond, m.lr})
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
  w.put(fnv1a(w.bytes.data(), w.bytes.size()));
  writeAtomically(getCheckpointPath(directory), w.bytes);
}

TrainingState loadCheckpoint(const std::string &directory) {
  std::string path = getCheckpointPath(directory);
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw CheckpointError(path + ": no checkpoint to resume from");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) + 8 ||
      std::memcmp(bytes.data(), kMagic, kVersionAt) != 0 ||
      (bytes[kVersionAt] != '1' && bytes[kVersionAt] != '2'))
    throw CheckpointError(path + ": not a dpc checkpoint");
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
  if (bytes[kVersionAt] >= '2') {
    state.epochStepsDone = r.get<int64_t>();
    state.epochLossSum = r.get<double>();
    state.epochCorrect = r.get<double>();
    state.epochSeen = r.get<int64_t>();
  }
  uint64_t epochs = r.get<uint64_t>();
  r.need(epochs * 56);
  for (uint64_t i = 0; i < epochs; ++i) {
    EpochMetrics m;
    m.epoch = r.get<int64_t>();
    for (double *v : {&m.trainLoss, &m.trainAcc, &m.testAcc, &m.epochSeconds,
                      &m.imagesPerSecond, &m.lr})
      *v = r.get<double>();
    state.history.push_back(m);
  }
  uint64_t tensors = r.get<uint64_t>();
  for (uint64_t i = 0; i < tensors; ++i) {
    SavedTensor t;
    t.name = r.getString();
    t.dtype = r.get<int32_t>();
    uint64_t rank = r.get<uint64_t>();
    r.need(rank * 8);
    for (uint64_t d = 0; d < rank; ++d)
      t.dims.push_back(r.get<int64_t>());
    t.bytes = r.getBytes();
    state.tensors.push_back(std::move(t));
  }
  if (!r.atEnd())
    throw CheckpointError(path + ": corrupted checkpoint (trailing bytes)");
  return state;
}

void captureState(const exec::Executor &executor, TrainingState &state) {
  const auto *persistent = executor.getPlan()->persistent();
  state.tensors.clear();
  for (size_t i : executor.getPrimaryPersistent()) {
    const plan::PersistentTensor &p = *persistent->Get(i);
    SavedTensor t;
    t.name = p.name()->str();
    t.dtype = static_cast<int32_t>(p.dtype());
    t.dims = plan::toDims(p.dims());
    t.bytes.resize(executor.getPersistentBytes(i));
    executor.readPersistent(i, t.bytes.data());
    state.tensors.push_back(std::move(t));
  }
  state.optimizerStep = executor.getOptimizerStep();
}

void restoreState(exec::Executor &executor, const TrainingState &state,
                  const std::string &path) {
  const auto *persistent = executor.getPlan()->persistent();
  const std::vector<size_t> &primary = executor.getPrimaryPersistent();
  size_t count = primary.size();
  if (state.tensors.size() != count)
    throw CheckpointError(path + ": holds " +
                          std::to_string(state.tensors.size()) +
                          " tensors, the plan has " + std::to_string(count) +
                          " (a checkpoint of another plan?)");
  for (size_t k = 0; k < count; ++k) {
    const plan::PersistentTensor &p = *persistent->Get(primary[k]);
    const SavedTensor &t = state.tensors[k];
    std::vector<int64_t> dims = plan::toDims(p.dims());
    if (t.name != p.name()->str() || t.dtype != int32_t(p.dtype()) ||
        t.dims != dims ||
        t.bytes.size() != executor.getPersistentBytes(primary[k]))
      throw CheckpointError(
          path + ": tensor '" + t.name + "' " + plan::formatDims(t.dims) +
          " does not match the plan's '" + p.name()->str() + "' " +
          plan::formatDims(dims) + " (a checkpoint of another plan?)");
  }
  // Every device's copy gets the saved one.
  for (size_t k = 0; k < count; ++k)
    executor.writePersistent(primary[k], state.tensors[k].bytes.data());
  executor.setOptimizerStep(state.optimizerStep);
}

} // namespace dpc::train
