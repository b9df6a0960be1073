//===- CudaDevice.h - the CUDA backend of Device/Stream/Event ---*- C++ -*-===//
//
// A Stream is a cudaStream_t (a Communication stream gets the device's
// highest priority, so that all-reduce kernels are not queued behind a
// backward pass), an Event a cudaEvent_t without timing, record/wait are
// cudaEventRecord/cudaStreamWaitEvent, host functions cudaLaunchHostFunc.
//
// Each device has one dispatch thread that issues its streams' work in the
// order the executor enqueued it, across all its streams: a wait then sees
// exactly the records enqueued before it (Device.h's rule), kernel launches
// cost the executor's thread nothing, and each rank issues its NCCL calls
// from its own thread (NcclCommunicator.h says why that matters). A kernel
// that fails to enqueue (a bad shape, a library error) marks its stream
// failed: later kernels of that stream are skipped, its event records and
// collectives still run, and synchronize() throws the first failure.
// Errors of kernels that failed while running on the GPU surface, as CUDA
// reports them, from synchronize().
//
// Device memory is cudaMalloc'd and zero-filled; synchronous host copies go
// through a per-device copy stream and return when complete. Host memory
// for asynchronous uploads (Stream::copyFromHost) is page-locked
// (cudaHostAlloc): only from such memory is cudaMemcpyAsync truly
// asynchronous with the host and able to overlap kernels.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CUDADEVICE_H
#define DPC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/comm/Communicator.h"
#include "runtime/cuda/CollectiveWatch.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/device/Device.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <thread>

namespace dpc::cuda {

class CudaDevice;

class CudaEvent : public rt::Event {
public:
  explicit CudaEvent(CudaDevice &device);
  ~CudaEvent() override;
  void synchronize() override;
  cudaEvent_t get() const { return event; }

private:
  CudaDevice &device;
  cudaEvent_t event = nullptr;
};

class CudaStream : public rt::Stream {
public:
  CudaStream(CudaDevice &device, plan::StreamKind kind);
  ~CudaStream() override;

  void launch(plan::KernelCall call) override;
  /// The executor's call, unchanged until issued: referenced, not copied
  /// (no allocation per kernel on the issuing thread).
  void launchPrepared(const plan::KernelCall &call) override;
  void enqueueHostFunction(std::function<void()> function) override;
  void copyFromHost(void *deviceDst, const void *hostSrc,
                    size_t bytes) override;
  void record(rt::Event &event) override;
  void wait(rt::Event &event) override;
  void synchronize() override;

  cudaStream_t get() const { return stream; }
  /// Dispatch thread: the stream's library handles and workspace.
  StreamContext &getContext();
  /// Keeps the first failure (any thread).
  void fail(std::exception_ptr error);
  bool hasFailed();

private:
  CudaDevice &device;
  cudaStream_t stream = nullptr;
  std::unique_ptr<StreamContext> context;
  std::mutex mutex;
  std::exception_ptr failure;
};

class CudaDevice : public rt::Device {
public:
  /// `name` is "cuda:K", `ordinal` K: the K-th GPU CUDA_VISIBLE_DEVICES
  /// leaves visible. Throws CudaError when the GPU cannot be used.
  CudaDevice(std::string name, int ordinal);
  ~CudaDevice() override;

  const std::string &getName() const override { return name; }
  int getOrdinal() const { return ordinal; }
  void *allocate(size_t bytes) override;
  void deallocate(void *pointer) override;
  void *allocateHost(size_t bytes) override;
  void deallocateHost(void *pointer) override;
  void copyFromHost(void *deviceDst, const void *hostSrc,
                    size_t bytes) override;
  void copyToHost(void *hostDst, const void *deviceSrc, size_t bytes) override;
  std::unique_ptr<rt::Stream> createStream(plan::StreamKind kind) override;
  std::unique_ptr<rt::Event> createEvent() override;

  /// Work for the dispatch thread. `stream`'s failure skips it when
  /// `isWork` (null: never skipped); what it throws fails `stream`.
  struct Task {
    std::function<void()> run;
    CudaStream *stream;
    bool isWork;
  };
  void submit(Task task);
  /// Blocks until every task submitted so far has been issued.
  void drain();
  ConvPlanCache &getConvPlans() { return convPlans; }
  /// Its optimizer kernels raise a flag in page-locked host memory
  /// (KernelCall::nonFinite): no step copies the training state to check it.
  bool checksUpdates() const override { return true; }
  std::vector<std::string> getRunTimeChoices() const override {
    return convPlans.getChoices();
  }
  /// Step graphs: CUDA graphs captured from the streams (relaxed mode, on
  /// the dispatch thread), unless DPC_CUDA_GRAPHS=0. A failure while
  /// capturing (a library call that refuses capture) is the capture's, not
  /// the stream's: endCapture reports it and the step runs kernel by kernel.
  bool capturesSteps() const override;
  void beginCapture(const std::vector<rt::Stream *> &streams) override;
  std::unique_ptr<rt::StepGraph>
  endCapture(const std::vector<rt::Stream *> &streams,
             std::string &why) override;
  void replay(rt::StepGraph &graph, rt::Stream &origin) override;
  /// Rank mode: the deadlines of this rank's collectives, which the
  /// streams' waits poll (CollectiveWatch.h); set before any step runs.
  void setCollectiveWatch(std::shared_ptr<CollectiveWatch> newWatch) {
    watch = std::move(newWatch);
  }
  std::shared_ptr<CollectiveWatch> getCollectiveWatch() const { return watch; }

private:
  void dispatch();

  std::string name;
  int ordinal;
  cudaStream_t copyStream = nullptr;
  ConvPlanCache convPlans;
  std::shared_ptr<CollectiveWatch> watch;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Task> queue;
  bool busy = false, stopping = false;
  /// Dispatch thread: the capture in progress, and its first failure.
  bool capturing = false;
  std::exception_ptr captureFailure;
  /// Executor thread: the graph between beginCapture and endCapture.
  std::unique_ptr<rt::StepGraph> pendingGraph;
  std::thread worker;
};

/// Makes `ordinal` the calling thread's device for a scope. The nothrow
/// form (for destructors) reports a failure on stderr instead.
class DeviceScope {
public:
  explicit DeviceScope(int ordinal);
  DeviceScope(int ordinal, std::nothrow_t);
  ~DeviceScope();

private:
  int previous = 0;
};

/// The GPUs this process sees (CUDA_VISIBLE_DEVICES applies). Throws
/// CudaError (noGpu) when there is no usable driver or device.
int getVisibleDeviceCount();

/// The device called "cuda:K". Throws CudaError, or std::runtime_error for
/// a malformed name or a K beyond the visible GPUs.
std::unique_ptr<rt::Device> createCudaDevice(const std::string &name);

bool isCudaDevice(const rt::Device &device);

/// NCCL communicators over `devices` (rank = index) when all of them are
/// CUDA devices; empty when none is; throws std::runtime_error when mixed.
std::vector<std::unique_ptr<comm::Communicator>>
createCudaCommunicators(const std::vector<rt::Device *> &devices);

/// Rank mode: the NCCL communicator of this process's `device` in `host`'s
/// group (NcclCommunicator::createForRank); null when `device` is not a
/// CUDA device.
std::unique_ptr<comm::Communicator>
createCudaRankCommunicator(rt::Device &device, comm::Communicator &host,
                           std::chrono::milliseconds timeout);

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CUDADEVICE_H
