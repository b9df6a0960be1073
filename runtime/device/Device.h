//===- Device.h - devices, streams and events -------------------*- C++ -*-===//
//
// What the executor needs from a device, and nothing more: memory, streams
// that run work in order, and events that order work across streams. The
// CPU backend implements a stream as a worker thread and an event as a
// counter with a condition variable; a CUDA backend maps them onto
// cudaStream_t and cudaEvent_t with the same semantics:
//
//  - Work enqueued on one stream runs in enqueue order.
//  - Stream::record(e) marks the point after the work enqueued so far;
//    Stream::wait(e) makes later work on that stream wait until the most
//    recent record of `e` enqueued BEFORE the call has been reached (like
//    cudaStreamWaitEvent; waiting for a never-recorded event is a no-op).
//  - Kernel failures are reported by synchronize(); a failed stream skips
//    its remaining kernels but still records its events and still runs its
//    collectives, so that other streams and other replicas never wait
//    forever.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DEVICE_DEVICE_H
#define DPC_RUNTIME_DEVICE_DEVICE_H

#include "runtime/abi/KernelCall.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace dpc::comm {
class Communicator;
}

namespace dpc::rt {

/// What a device throws when its memory runs out: a std::bad_alloc that
/// says which device, what kind of memory and how many bytes.
class OutOfMemory : public std::bad_alloc {
public:
  OutOfMemory(const std::string &device, size_t bytes, const char *kind)
      : message(device + ": cannot allocate " + std::to_string(bytes) +
                " bytes of " + kind) {}
  const char *what() const noexcept override { return message.c_str(); }

private:
  std::string message;
};

class Event {
public:
  virtual ~Event() = default;
  /// Blocks the host until the most recent record has been reached.
  virtual void synchronize() = 0;
};

class Stream {
public:
  virtual ~Stream() = default;
  /// Enqueues a kernel; everything `call` points to must stay valid until
  /// it has run.
  virtual void launch(plan::KernelCall call) = 0;
  /// Enqueues a kernel whose call (the executor's, made once per
  /// instruction) stays valid and unchanged until it has run, so that it
  /// need not be copied.
  virtual void launchPrepared(const plan::KernelCall &call) { launch(call); }
  /// Enqueues a host function (cudaLaunchHostFunc on CUDA).
  virtual void enqueueHostFunction(std::function<void()> function) = 0;
  /// Enqueues a copy from host memory to device memory (cudaMemcpyAsync on
  /// CUDA): neither may be touched until it has run. From memory of
  /// Device::allocateHost it runs without blocking the host.
  virtual void copyFromHost(void *deviceDst, const void *hostSrc,
                            size_t bytes) = 0;
  virtual void record(Event &event) = 0;
  virtual void wait(Event &event) = 0;
  /// Blocks until all enqueued work is done; throws the first failure of a
  /// kernel since the last synchronize (std::runtime_error) and clears it.
  virtual void synchronize() = 0;
};

/// A step's work recorded once and replayed as a whole (a CUDA graph): the
/// kernels' arguments as they were when recorded, the streams' order and
/// their events within the step. What Device::endCapture gives back.
class StepGraph {
public:
  virtual ~StepGraph() = default;
};

class Device {
public:
  virtual ~Device() = default;
  virtual const std::string &getName() const = 0;

  /// Device memory, zero-filled, aligned for any kernel. Throws
  /// OutOfMemory.
  virtual void *allocate(size_t bytes) = 0;
  virtual void deallocate(void *pointer) = 0;
  /// Host memory that streams copy from asynchronously (page-locked on
  /// CUDA), zero-filled. Throws OutOfMemory.
  virtual void *allocateHost(size_t bytes) = 0;
  virtual void deallocateHost(void *pointer) = 0;
  /// Synchronous copies and fills; no stream may be using the memory.
  virtual void copyFromHost(void *deviceDst, const void *hostSrc,
                            size_t bytes) = 0;
  virtual void copyToHost(void *hostDst, const void *deviceSrc,
                          size_t bytes) = 0;

  virtual std::unique_ptr<Stream> createStream(plan::StreamKind kind) = 0;
  virtual std::unique_ptr<Event> createEvent() = 0;

  /// Whether its memory is the host's: the executor then binds inputs by
  /// writing them where the kernels read them, with no staging copy.
  virtual bool isHostMemory() const { return false; }
  /// Whether its optimizer updates report NaN or infinity written, through
  /// KernelCall::nonFinite: the trainer's check then reads a flag instead
  /// of the training state.
  virtual bool checksUpdates() const { return false; }

  /// What the device chose while running where the plan leaves it a choice
  /// (cuDNN's algorithm per convolution shape within the plan's workspace),
  /// one line each, in the order made: for traces.
  virtual std::vector<std::string> getRunTimeChoices() const { return {}; }

  /// Step graphs: whether this device records a step's work and replays
  /// it (CUDA graphs; the CPU's recording, for tests). Between
  /// beginCapture and endCapture, what `streams` are given is recorded and
  /// does not run; streams[0] is where the recording starts and ends, the
  /// others fork from it and join it. Events recorded and waited for
  /// within the recording order it; none may be waited for outside it.
  virtual bool capturesSteps() const { return false; }
  virtual void beginCapture(const std::vector<Stream *> & /*streams*/) {}
  /// The recording, or null when the device refused it, with the reason in
  /// `why`: its work did not run, and the caller enqueues it again.
  virtual std::unique_ptr<StepGraph>
  endCapture(const std::vector<Stream *> & /*streams*/, std::string &why) {
    why = "this device does not record steps";
    return nullptr;
  }
  /// Enqueues `graph` on `origin`, the streams[0] it was recorded from.
  virtual void replay(StepGraph & /*graph*/, Stream & /*origin*/) {}

  /// The bytes DeviceBuffers hold on the device (OnDevice) and in its host
  /// memory (OnHost), now and at most since the device was made: what the
  /// runtime allocates, to set beside the plan's prediction.
  /// `library`: what the kernel libraries hold on their own for the
  /// device (oneDNN's scratchpad and reordered operands on the CPU), which
  /// the plan does not (yet) plan.
  struct MemoryUse {
    int64_t deviceBytes = 0, devicePeakBytes = 0;
    int64_t hostBytes = 0, hostPeakBytes = 0;
    int64_t libraryBytes = 0, libraryPeakBytes = 0;
  };
  MemoryUse getMemoryUse() const {
    return {deviceBytes.load(),  devicePeakBytes.load(),
            hostBytes.load(),    hostPeakBytes.load(),
            libraryBytes.load(), libraryPeakBytes.load()};
  }
  /// DeviceBuffer's accounting of what it holds.
  void noteAllocated(int64_t bytes, bool onHost) {
    add(onHost ? hostBytes : deviceBytes,
        onHost ? hostPeakBytes : devicePeakBytes, bytes);
  }
  void noteReleased(int64_t bytes, bool onHost) {
    (onHost ? hostBytes : deviceBytes) -= bytes;
  }
  /// A kernel library's change in what it holds for the device.
  void noteLibraryBytes(int64_t delta) {
    add(libraryBytes, libraryPeakBytes, delta);
  }

private:
  static void add(std::atomic<int64_t> &live, std::atomic<int64_t> &peak,
                  int64_t delta) {
    int64_t now = live += delta, seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
  }
  std::atomic<int64_t> deviceBytes{0}, devicePeakBytes{0};
  std::atomic<int64_t> hostBytes{0}, hostPeakBytes{0};
  std::atomic<int64_t> libraryBytes{0}, libraryPeakBytes{0};
};

/// Device memory (or the device's host memory) owned by one object.
class DeviceBuffer {
public:
  enum Kind { OnDevice, OnHost };
  DeviceBuffer() = default;
  DeviceBuffer(Device &device, size_t bytes, Kind kind = OnDevice)
      : device(&device), bytes(bytes), kind(kind),
        pointer(!bytes           ? nullptr
                : kind == OnHost ? device.allocateHost(bytes)
                                 : device.allocate(bytes)) {
    if (pointer)
      device.noteAllocated(int64_t(bytes), kind == OnHost);
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(device, other.device);
    std::swap(bytes, other.bytes);
    std::swap(kind, other.kind);
    std::swap(pointer, other.pointer);
    return *this;
  }
  ~DeviceBuffer() {
    if (pointer)
      device->noteReleased(int64_t(bytes), kind == OnHost);
    if (pointer && kind == OnHost)
      device->deallocateHost(pointer);
    else if (pointer)
      device->deallocate(pointer);
  }

  void *get() const { return pointer; }
  size_t size() const { return bytes; }
  Device *getDevice() const { return device; }

private:
  Device *device = nullptr;
  size_t bytes = 0;
  Kind kind = OnDevice;
  void *pointer = nullptr;
};

struct DeviceOptions {
  /// Devices of this kind that one process drives: a CPU device runs its
  /// kernels on its share of the cores (at least one thread).
  int numLocalDevices = 1;
  /// Devices of the plan. A CPU device runs the kernels whose bits depend
  /// on their thread count (oneDNN's weight gradients and inner products)
  /// on the share one process driving them all gives a device, whichever
  /// process drives it: one process or ranks, on one host or several, the
  /// same bits.
  int numPlanDevices = 1;
};

// By name, through the registry of the backends this runtime was built
// with (DeviceRegistry.h).

/// The device called `name` ("cpu:0", or "cuda:K" in a runtime built with
/// CUDA: the K-th GPU CUDA_VISIBLE_DEVICES leaves visible); throws
/// std::runtime_error, in one line, for a kind this runtime was built
/// without or a GPU it cannot use.
std::unique_ptr<Device> createDevice(const std::string &name,
                                     const DeviceOptions &options = {});

/// The collectives of one process that drives all of `devices` (rank =
/// index): NCCL when they are CUDA devices, in-process threads otherwise.
std::vector<std::unique_ptr<comm::Communicator>>
createCommunicators(const std::vector<Device *> &devices);

/// One process per device (rank mode): the communicator for collectives in
/// `device`'s memory -- NCCL for a CUDA device, made through `host` (the
/// Gloo or MPI group, a collective of it), whose waits give up after
/// `timeout` -- or null when `host` serves (a CPU device's memory is host
/// memory). Throws comm::CommError or std::runtime_error in one line.
std::unique_ptr<comm::Communicator>
createRankCommunicator(Device &device, comm::Communicator &host,
                       std::chrono::milliseconds timeout);

} // namespace dpc::rt

#endif // DPC_RUNTIME_DEVICE_DEVICE_H
