//===- CudaDevice.cpp - the CUDA backend of Device/Stream/Event -----------===//

#include "runtime/cuda/CudaDevice.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/cuda/NcclCommunicator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>
#include <utility>

namespace dpc::cuda {

//===----------------------------------------------------------------------===//
// DeviceScope and device discovery
//===----------------------------------------------------------------------===//

DeviceScope::DeviceScope(int ordinal) {
  DPC_CUDA_CHECK(cudaGetDevice(&previous));
  if (previous != ordinal)
    DPC_CUDA_CHECK(cudaSetDevice(ordinal));
}

DeviceScope::DeviceScope(int ordinal, std::nothrow_t) {
  DPC_CUDA_REPORT(cudaGetDevice(&previous));
  if (previous != ordinal)
    DPC_CUDA_REPORT(cudaSetDevice(ordinal));
}

DeviceScope::~DeviceScope() { DPC_CUDA_REPORT(cudaSetDevice(previous)); }

int getVisibleDeviceCount() {
  int count = 0;
  DPC_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) // some drivers say so instead of cudaErrorNoDevice
    throw CudaError("cudaGetDeviceCount found no GPU", true);
  return count;
}

std::unique_ptr<rt::Device> createCudaDevice(const std::string &name) {
  std::string index = name.substr(name.find(':') + 1);
  if (name.rfind("cuda:", 0) != 0 || index.empty() || index.size() > 6 ||
      index.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("device '" + name +
                             "' is not a CUDA device name (cuda:K)");
  int ordinal = std::atoi(index.c_str());
  int count = getVisibleDeviceCount();
  if (ordinal >= count) {
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw std::runtime_error(
        "device '" + name + "' is not available: " + std::to_string(count) +
        " GPU(s) visible" +
        (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")"
                 : std::string()));
  }
  return std::make_unique<CudaDevice>(name, ordinal);
}

bool isCudaDevice(const rt::Device &device) {
  return dynamic_cast<const CudaDevice *>(&device) != nullptr;
}

std::vector<std::unique_ptr<comm::Communicator>>
createCudaCommunicators(const std::vector<rt::Device *> &devices) {
  std::vector<int> ordinals;
  for (rt::Device *device : devices)
    if (auto *gpu = dynamic_cast<CudaDevice *>(device))
      ordinals.push_back(gpu->getOrdinal());
  if (ordinals.empty())
    return {};
  if (ordinals.size() != devices.size())
    throw std::runtime_error(
        "a plan cannot mix CUDA and CPU devices in one process");
  return NcclCommunicator::createGroup(ordinals);
}

std::unique_ptr<comm::Communicator>
createCudaRankCommunicator(rt::Device &device, comm::Communicator &host,
                           std::chrono::milliseconds timeout) {
  auto *gpu = dynamic_cast<CudaDevice *>(&device);
  if (!gpu)
    return nullptr;
  auto communicator =
      NcclCommunicator::createForRank(host, gpu->getOrdinal(), timeout);
  auto watch = std::make_shared<CollectiveWatch>(gpu->getOrdinal(), timeout);
  communicator->watchCollectives(watch);
  gpu->setCollectiveWatch(std::move(watch));
  return communicator;
}

//===----------------------------------------------------------------------===//
// CudaEvent
//===----------------------------------------------------------------------===//

CudaEvent::CudaEvent(CudaDevice &device) : device(device) {
  DeviceScope scope(device.getOrdinal());
  // No timing: records and waits are cheaper without it.
  DPC_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
}

CudaEvent::~CudaEvent() {
  device.drain();
  DeviceScope scope(device.getOrdinal(), std::nothrow);
  DPC_CUDA_REPORT(cudaEventDestroy(event));
}

void CudaEvent::synchronize() {
  device.drain(); // the most recent record has been issued
  DPC_CUDA_CHECK(cudaEventSynchronize(event));
}

//===----------------------------------------------------------------------===//
// CudaStream
//===----------------------------------------------------------------------===//

CudaStream::CudaStream(CudaDevice &device, plan::StreamKind kind)
    : device(device) {
  DeviceScope scope(device.getOrdinal());
  int lowest = 0, highest = 0; // numerically: greatest priority is lowest
  DPC_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
  int priority = kind == plan::StreamKind::Communication ? highest : lowest;
  // Non-blocking: no implicit order with the legacy default stream; the
  // plan's events give all the order there is.
  DPC_CUDA_CHECK(
      cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority));
}

CudaStream::~CudaStream() {
  device.drain();
  DeviceScope scope(device.getOrdinal(), std::nothrow);
  DPC_CUDA_REPORT(cudaStreamSynchronize(stream));
  context.reset();
  DPC_CUDA_REPORT(cudaStreamDestroy(stream));
}

StreamContext &CudaStream::getContext() {
  if (!context)
    context = std::make_unique<StreamContext>(stream, device.getConvPlans());
  return *context;
}

void CudaStream::fail(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!failure)
    failure = std::move(error);
}

bool CudaStream::hasFailed() {
  std::lock_guard<std::mutex> lock(mutex);
  return failure != nullptr;
}

namespace {
/// Whether a failed stream may skip the call: not a collective, since a
/// replica that skipped its collective would leave the others waiting.
bool isSkippable(const plan::KernelCall &call) {
  return !plan::isCollectiveKernel(call.kernel);
}
} // namespace

void CudaStream::launch(plan::KernelCall call) {
  bool isWork = isSkippable(call);
  device.submit(
      {[this, call = std::move(call)] { runCudaKernel(getContext(), call); },
       this, isWork});
}

void CudaStream::launchPrepared(const plan::KernelCall &call) {
  device.submit({[this, &call] { runCudaKernel(getContext(), call); }, this,
                 isSkippable(call)});
}

namespace {

struct HostFunction {
  std::function<void()> function;
  CudaStream *stream;
};

void CUDART_CB runHostFunction(void *data) {
  std::unique_ptr<HostFunction> host(static_cast<HostFunction *>(data));
  try {
    host->function();
  } catch (...) {
    host->stream->fail(std::current_exception());
  }
}

} // namespace

void CudaStream::enqueueHostFunction(std::function<void()> function) {
  device.submit({[this, function = std::move(function)] {
                   auto host = std::make_unique<HostFunction>(
                       HostFunction{function, this});
                   // CUDA owns the function from here: it runs once, after
                   // the work before it, on a CUDA thread (and must not
                   // call CUDA itself; the executor's do not).
                   DPC_CUDA_CHECK(
                       cudaLaunchHostFunc(stream, runHostFunction, host.get()));
                   host.release();
                 },
                 this, true});
}

void CudaStream::copyFromHost(void *deviceDst, const void *hostSrc,
                              size_t bytes) {
  if (!bytes)
    return;
  device.submit({[this, deviceDst, hostSrc, bytes] {
                   // Ordered on this stream like a kernel; from page-locked
                   // memory the copy engine runs it while other streams'
                   // kernels run.
                   DPC_CUDA_CHECK(cudaMemcpyAsync(deviceDst, hostSrc, bytes,
                                                  cudaMemcpyHostToDevice,
                                                  stream));
                 },
                 this, true});
}

void CudaStream::record(rt::Event &event) {
  cudaEvent_t handle = static_cast<CudaEvent &>(event).get();
  device.submit(
      {[this, handle] { DPC_CUDA_CHECK(cudaEventRecord(handle, stream)); },
       this, /*isWork=*/false}); // never skipped; a failure kept
}

void CudaStream::wait(rt::Event &event) {
  cudaEvent_t handle = static_cast<CudaEvent &>(event).get();
  device.submit({[this, handle] {
                   DPC_CUDA_CHECK(cudaStreamWaitEvent(stream, handle, 0));
                 },
                 this, /*isWork=*/false}); // a lost wait would be a race
}

void CudaStream::synchronize() {
  device.drain();
  std::exception_ptr error;
  try {
    DeviceScope scope(device.getOrdinal());
    if (std::shared_ptr<CollectiveWatch> watch = device.getCollectiveWatch()) {
      // Rank mode: a collective that another rank never joins ends in an
      // error after the timeout rather than a wait for ever.
      while (DPC_CUDA_PENDING(cudaStreamQuery(stream))) {
        watch->check();
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    } else {
      DPC_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure)
      error = std::exchange(failure, nullptr);
  }
  if (error)
    std::rethrow_exception(error);
}

//===----------------------------------------------------------------------===//
// CudaDevice
//===----------------------------------------------------------------------===//

CudaDevice::CudaDevice(std::string name, int ordinal)
    : name(std::move(name)), ordinal(ordinal) {
  DeviceScope scope(ordinal);
  // Creates the context now, so that a GPU that cannot run (no kernel
  // image for it, out of memory) is reported here, not in a step.
  DPC_CUDA_CHECK(cudaFree(nullptr));
  DPC_CUDA_CHECK(cudaStreamCreateWithFlags(&copyStream, cudaStreamNonBlocking));
  worker = std::thread([this] { dispatch(); });
}

CudaDevice::~CudaDevice() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  worker.join();
  DeviceScope scope(ordinal, std::nothrow);
  DPC_CUDA_REPORT(cudaStreamDestroy(copyStream));
}

void CudaDevice::submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(task));
  }
  changed.notify_all();
}

void CudaDevice::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return queue.empty() && !busy; });
}

void CudaDevice::dispatch() {
  std::exception_ptr setup;
  try {
    DPC_CUDA_CHECK(cudaSetDevice(ordinal));
  } catch (...) {
    setup = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, and everything submitted has been issued
    Task task = std::move(queue.front());
    queue.pop_front();
    busy = true;
    lock.unlock();
    if (setup) {
      if (task.stream)
        task.stream->fail(setup);
    } else if (!(task.isWork && task.stream && task.stream->hasFailed()) &&
               !(task.isWork && capturing && captureFailure)) {
      try {
        task.run();
      } catch (...) {
        if (capturing) { // the capture's failure: nothing ran
          if (!captureFailure)
            captureFailure = std::current_exception();
        } else if (task.stream) {
          task.stream->fail(std::current_exception());
        }
      }
    }
    lock.lock();
    busy = false;
    changed.notify_all();
  }
}

namespace {

/// An allocation's status: out of memory is OutOfMemory, as the Device
/// interface promises; anything else a CudaError naming `call`.
void checkAllocation(cudaError_t status, const char *call,
                     const std::string &device, size_t bytes,
                     const char *kind) {
  if (status == cudaErrorMemoryAllocation) {
    // Clears the (non-sticky) error, which it returns: nothing to report.
    (void)cudaGetLastError(); // lint: allowed
    throw rt::OutOfMemory(device, bytes, kind);
  }
  if (failed(status))
    throwStatus(status, call);
}

} // namespace

void *CudaDevice::allocate(size_t bytes) {
  DeviceScope scope(ordinal);
  void *pointer = nullptr;
  checkAllocation(cudaMalloc(&pointer, bytes ? bytes : 1), // lint: checked
                  "cudaMalloc(&pointer, bytes)", getName(), bytes,
                  "GPU memory");
  // The interface promises zeros (Zeros-initialized training state relies
  // on it); done before any stream can see the memory.
  DPC_CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, copyStream));
  DPC_CUDA_CHECK(cudaStreamSynchronize(copyStream));
  return pointer;
}

void CudaDevice::deallocate(void *pointer) {
  if (!pointer)
    return;
  DeviceScope scope(ordinal, std::nothrow); // DeviceBuffer's destructor
  DPC_CUDA_REPORT(cudaFree(pointer));
}

void *CudaDevice::allocateHost(size_t bytes) {
  DeviceScope scope(ordinal);
  void *pointer = nullptr;
  // Portable: page-locked for every CUDA context, so that any device's
  // stream may copy from it.
  checkAllocation(cudaHostAlloc(&pointer, bytes ? bytes : 1, // lint: checked
                                cudaHostAllocPortable),
                  "cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable)",
                  getName(), bytes, "page-locked host memory");
  std::memset(pointer, 0, bytes);
  return pointer;
}

void CudaDevice::deallocateHost(void *pointer) {
  if (pointer)
    DPC_CUDA_REPORT(cudaFreeHost(pointer));
}

void CudaDevice::copyFromHost(void *deviceDst, const void *hostSrc,
                              size_t bytes) {
  if (!bytes)
    return;
  DeviceScope scope(ordinal);
  DPC_CUDA_CHECK(cudaMemcpyAsync(deviceDst, hostSrc, bytes,
                                 cudaMemcpyHostToDevice, copyStream));
  DPC_CUDA_CHECK(cudaStreamSynchronize(copyStream));
}

void CudaDevice::copyToHost(void *hostDst, const void *deviceSrc,
                            size_t bytes) {
  if (!bytes)
    return;
  DeviceScope scope(ordinal);
  DPC_CUDA_CHECK(cudaMemcpyAsync(hostDst, deviceSrc, bytes,
                                 cudaMemcpyDeviceToHost, copyStream));
  DPC_CUDA_CHECK(cudaStreamSynchronize(copyStream));
}

//===----------------------------------------------------------------------===//
// Step graphs
//===----------------------------------------------------------------------===//

namespace {

/// A captured step: the graph, its executable, and the events that forked
/// the other streams from the origin and joined them back.
struct CudaStepGraph : rt::StepGraph {
  explicit CudaStepGraph(CudaDevice &device) : device(device) {}
  ~CudaStepGraph() override {
    device.drain();
    DeviceScope scope(device.getOrdinal(), std::nothrow);
    if (exec)
      DPC_CUDA_REPORT(cudaGraphExecDestroy(exec));
    if (graph)
      DPC_CUDA_REPORT(cudaGraphDestroy(graph));
    for (cudaEvent_t event : events)
      DPC_CUDA_REPORT(cudaEventDestroy(event));
  }
  cudaEvent_t newEvent() {
    cudaEvent_t event = nullptr;
    DPC_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    events.push_back(event);
    return event;
  }

  CudaDevice &device;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaEvent_t> events;
};

std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "an unknown error";
  }
}

/// Ends `origin`'s capture into `graph`, the status returned: an
/// invalidated capture reports its error here, and ends all the same.
cudaError_t endCaptureOf(cudaStream_t origin, cudaGraph_t *graph) {
  return cudaStreamEndCapture(origin, graph); // lint: checked (the caller)
}

cudaStream_t streamOf(rt::Stream *stream) {
  return static_cast<CudaStream *>(stream)->get();
}

} // namespace

bool CudaDevice::capturesSteps() const {
  static const bool enabled = [] {
    const char *setting = std::getenv("DPC_CUDA_GRAPHS");
    return !setting || std::string(setting) != "0";
  }();
  return enabled;
}

void CudaDevice::beginCapture(const std::vector<rt::Stream *> &streams) {
  auto owned = std::make_unique<CudaStepGraph>(*this);
  CudaStepGraph *graph = owned.get();
  pendingGraph = std::move(owned);
  submit({[this, graph, streams] {
            capturing = true;
            captureFailure = nullptr;
            cudaStream_t origin = streamOf(streams.front());
            DPC_CUDA_CHECK(
                cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed));
            if (streams.size() > 1) {
              // The other streams join the capture by waiting on it.
              cudaEvent_t fork = graph->newEvent();
              DPC_CUDA_CHECK(cudaEventRecord(fork, origin));
              for (size_t i = 1; i < streams.size(); ++i)
                DPC_CUDA_CHECK(
                    cudaStreamWaitEvent(streamOf(streams[i]), fork, 0));
            }
          },
          nullptr, false});
}

std::unique_ptr<rt::StepGraph>
CudaDevice::endCapture(const std::vector<rt::Stream *> &streams,
                       std::string &why) {
  auto *graph = static_cast<CudaStepGraph *>(pendingGraph.get());
  std::string failure;
  submit({[this, graph, streams, &failure] {
            cudaStream_t origin = streamOf(streams.front());
            try {
              for (size_t i = 1; i < streams.size(); ++i) {
                cudaEvent_t join = graph->newEvent();
                DPC_CUDA_CHECK(cudaEventRecord(join, streamOf(streams[i])));
                DPC_CUDA_CHECK(cudaStreamWaitEvent(origin, join, 0));
              }
            } catch (...) {
              if (!captureFailure)
                captureFailure = std::current_exception();
            }
            // Ends the capture whatever happened, so that the streams work
            // again; an invalidated capture returns its error here.
            cudaError_t ended = endCaptureOf(origin, &graph->graph);
            capturing = false;
            if (captureFailure)
              failure = describe(std::exchange(captureFailure, nullptr));
            else if (failed(ended))
              failure = std::string("cudaStreamEndCapture: ") +
                        cudaGetErrorString(ended);
            else
              try {
                DPC_CUDA_CHECK(
                    cudaGraphInstantiate(&graph->exec, graph->graph, 0));
              } catch (const std::exception &error) {
                failure = error.what();
              }
            if (!failure.empty())
              (void)cudaGetLastError(); // lint: allowed (capture errors)
          },
          nullptr, false});
  drain();
  std::unique_ptr<rt::StepGraph> captured = std::move(pendingGraph);
  if (!failure.empty()) {
    why = failure;
    return nullptr;
  }
  return captured;
}

void CudaDevice::replay(rt::StepGraph &graph, rt::Stream &origin) {
  cudaGraphExec_t exec = static_cast<CudaStepGraph &>(graph).exec;
  auto *stream = static_cast<CudaStream *>(&origin);
  submit(
      {[stream, exec] { DPC_CUDA_CHECK(cudaGraphLaunch(exec, stream->get())); },
       stream, true});
}

std::unique_ptr<rt::Stream> CudaDevice::createStream(plan::StreamKind kind) {
  return std::make_unique<CudaStream>(*this, kind);
}

std::unique_ptr<rt::Event> CudaDevice::createEvent() {
  return std::make_unique<CudaEvent>(*this);
}

} // namespace dpc::cuda
