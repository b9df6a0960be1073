//===- CpuDevice.h - the CPU backend of Device/Stream/Event -----*- C++ -*-===//
//
// A CPU stream is a worker thread draining a queue; it owns the
// KernelContext its kernels run in (oneDNN primitives are not shared
// between threads). An event counts records enqueued and records reached;
// a wait blocks its stream until the count it captured is reached.
//
// Devices of one process split the cores: a device's worker threads set
// their own OpenMP thread count (an OpenMP ICV of the calling thread, so
// each stream's parallel regions, its oneDNN primitives included, use the
// device's share). A collective blocks only its own stream's thread.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPU_CPUDEVICE_H
#define DPC_RUNTIME_CPU_CPUDEVICE_H

#include "runtime/device/Device.h"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

namespace dpc::kernels {
class KernelContext;
}

namespace dpc::rt {

class CpuEvent : public Event {
public:
  void synchronize() override;

  /// Host side, at enqueue time: the number the new record will reach.
  uint64_t addRecord();
  /// The most recent record enqueued so far (what a wait now waits for).
  uint64_t getLastRecord();
  /// Worker side.
  void reach(uint64_t record);
  void waitFor(uint64_t record);

private:
  std::mutex mutex;
  std::condition_variable reached;
  uint64_t enqueued = 0, completed = 0;
};

class CpuStream;

/// The CPU's step graph (Device::capturesSteps; for tests of the executor's
/// recording without a GPU): what the step's streams were given, each
/// kernel's call copied as it was when recorded, as a CUDA graph keeps its
/// kernels' arguments. A replay gives it to the streams again.
struct CpuStepRecording : StepGraph {
  struct Entry {
    enum Kind { Launch, Record, Wait } kind;
    CpuStream *stream;
    plan::KernelCall call;  // Launch
    Event *event = nullptr; // Record, Wait
  };
  std::vector<Entry> entries;
  /// Set when a stream was given what a recording cannot hold.
  std::string refused;
};

class CpuStream : public Stream {
public:
  /// `threads`: the OpenMP threads of this stream's kernels (0: default);
  /// `reductionThreads`: those of the kernels whose bits depend on it (see
  /// KernelContext::setReductionThreads); `recording`: the device's
  /// recording in progress, if any (CpuDevice::beginCapture);
  /// `memoryObserver`: told of its kernels' own buffers
  /// (KernelContext::setMemoryObserver).
  explicit CpuStream(int threads = 0, int reductionThreads = 0,
                     std::unique_ptr<CpuStepRecording> *recording = nullptr,
                     std::function<void(int64_t)> memoryObserver = {});
  ~CpuStream() override;

  void launch(plan::KernelCall call) override;
  void launchPrepared(const plan::KernelCall &call) override;
  void enqueueHostFunction(std::function<void()> function) override;
  void copyFromHost(void *deviceDst, const void *hostSrc,
                    size_t bytes) override;
  void record(Event &event) override;
  void wait(Event &event) override;
  void synchronize() override;

private:
  struct Task {
    std::function<void(kernels::KernelContext &)> run;
    bool isWork; // skipped after a failure; events and collectives run
  };
  void push(Task task);
  void work();
  /// The recording in progress, or null.
  CpuStepRecording *getRecording() const {
    return recording ? recording->get() : nullptr;
  }

  std::unique_ptr<CpuStepRecording> *recording;

  std::unique_ptr<kernels::KernelContext> context;
  std::mutex mutex;
  /// Work arrived or the stream stops (the worker waits on it); apart
  /// from `drained`, so that the worker wakes a synchronizing thread once,
  /// when the queue empties, not after every task of a step.
  std::condition_variable changed;
  std::condition_variable drained;
  /// A ring of tasks that only grows: a steady step allocates nothing.
  std::vector<Task> queue;
  size_t head = 0, queued = 0;
  bool busy = false, stopping = false;
  int threads;
  std::exception_ptr failure;
  std::thread worker;
};

class CpuDevice : public Device {
public:
  /// `threads`: OpenMP threads per stream (0: OpenMP's default);
  /// `reductionThreads`: those of the kernels whose bits depend on it.
  explicit CpuDevice(std::string name, int threads = 0,
                     int reductionThreads = 0)
      : name(std::move(name)), threads(threads),
        reductionThreads(reductionThreads) {}

  const std::string &getName() const override { return name; }
  void *allocate(size_t bytes) override;
  void deallocate(void *pointer) override;
  /// Device memory is host memory: the same allocation.
  void *allocateHost(size_t bytes) override { return allocate(bytes); }
  void deallocateHost(void *pointer) override { deallocate(pointer); }
  void copyFromHost(void *deviceDst, const void *hostSrc,
                    size_t bytes) override;
  void copyToHost(void *hostDst, const void *deviceSrc, size_t bytes) override;
  std::unique_ptr<Stream> createStream(plan::StreamKind kind) override;
  std::unique_ptr<Event> createEvent() override;
  bool isHostMemory() const override { return true; }
  bool checksUpdates() const override { return true; }
  int getThreads() const { return threads; }
  int getReductionThreads() const { return reductionThreads; }

  /// Step graphs as recordings (off unless a test turns them on: on the
  /// CPU a replay saves nothing).
  void setRecordsSteps(bool on) { recordsSteps = on; }
  bool capturesSteps() const override { return recordsSteps; }
  void beginCapture(const std::vector<Stream *> &streams) override;
  std::unique_ptr<StepGraph> endCapture(const std::vector<Stream *> &streams,
                                        std::string &why) override;
  void replay(StepGraph &graph, Stream &origin) override;

private:
  std::string name;
  int threads, reductionThreads;
  bool recordsSteps = false;
  std::unique_ptr<CpuStepRecording> recording;
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_CPU_CPUDEVICE_H
