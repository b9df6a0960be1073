//===- CpuDevice.cpp - the CPU backend of Device/Stream/Event -------------===//

#include "runtime/cpu/CpuDevice.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/kernels/KernelContext.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <omp.h>
#include <stdexcept>
#include <utility>

namespace dpc::rt {

//===----------------------------------------------------------------------===//
// CpuEvent
//===----------------------------------------------------------------------===//

uint64_t CpuEvent::addRecord() {
  std::lock_guard<std::mutex> lock(mutex);
  return ++enqueued;
}

uint64_t CpuEvent::getLastRecord() {
  std::lock_guard<std::mutex> lock(mutex);
  return enqueued;
}

void CpuEvent::reach(uint64_t record) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    // Records of one event on two streams may finish out of order.
    completed = std::max(completed, record);
  }
  reached.notify_all();
}

void CpuEvent::waitFor(uint64_t record) {
  std::unique_lock<std::mutex> lock(mutex);
  reached.wait(lock, [&] { return completed >= record; });
}

void CpuEvent::synchronize() { waitFor(getLastRecord()); }

//===----------------------------------------------------------------------===//
// CpuStream
//===----------------------------------------------------------------------===//

namespace {
std::unique_ptr<kernels::KernelContext> makeContext(int reductionThreads) {
  auto context = std::make_unique<kernels::KernelContext>();
  context->setReductionThreads(reductionThreads);
  return context;
}
} // namespace

CpuStream::CpuStream(int threads, int reductionThreads,
                     std::unique_ptr<CpuStepRecording> *recording,
                     std::function<void(int64_t)> memoryObserver)
    : recording(recording), context(makeContext(reductionThreads)),
      threads(threads) {
  context->setMemoryObserver(std::move(memoryObserver));
  worker = std::thread([this] { work(); });
}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  worker.join();
}

void CpuStream::push(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (queued == queue.size()) {
      // Full: unroll the ring into a larger one.
      std::vector<Task> larger(std::max<size_t>(64, 2 * queue.size()));
      for (size_t i = 0; i < queued; ++i)
        larger[i] = std::move(queue[(head + i) % queue.size()]);
      queue = std::move(larger);
      head = 0;
    }
    queue[(head + queued++) % queue.size()] = std::move(task);
  }
  changed.notify_all();
}

void CpuStream::launch(plan::KernelCall call) {
  if (CpuStepRecording *steps = getRecording()) {
    steps->entries.push_back(
        {CpuStepRecording::Entry::Launch, this, std::move(call)});
    return;
  }
  // A replica that skipped its collective would leave the others waiting.
  bool isWork = !plan::isCollectiveKernel(call.kernel);
  push({[call = std::move(call)](kernels::KernelContext &context) {
          runCpuKernel(context, call);
        },
        isWork});
}

void CpuStream::launchPrepared(const plan::KernelCall &call) {
  if (getRecording())
    return launch(call); // copied, as it is now
  // A pointer fits std::function's own storage: nothing is allocated.
  bool isWork = !plan::isCollectiveKernel(call.kernel);
  push({[call = &call](kernels::KernelContext &context) {
          runCpuKernel(context, *call);
        },
        isWork});
}

void CpuStream::enqueueHostFunction(std::function<void()> function) {
  if (CpuStepRecording *steps = getRecording()) {
    steps->refused = "a host function";
    return;
  }
  push({[function = std::move(function)](kernels::KernelContext &) {
          function();
        },
        true});
}

void CpuStream::copyFromHost(void *deviceDst, const void *hostSrc,
                             size_t bytes) {
  if (CpuStepRecording *steps = getRecording()) {
    steps->refused = "a copy from the host";
    return;
  }
  // A replica's empty share uploads nothing, to a null buffer.
  push({[=](kernels::KernelContext &) {
          if (bytes)
            std::memcpy(deviceDst, hostSrc, bytes);
        },
        true});
}

void CpuStream::record(Event &event) {
  if (CpuStepRecording *steps = getRecording()) {
    steps->entries.push_back(
        {CpuStepRecording::Entry::Record, this, {}, &event});
    return;
  }
  auto &cpuEvent = static_cast<CpuEvent &>(event);
  uint64_t record = cpuEvent.addRecord();
  push({[&cpuEvent, record](kernels::KernelContext &) {
          cpuEvent.reach(record);
        },
        false});
}

void CpuStream::wait(Event &event) {
  if (CpuStepRecording *steps = getRecording()) {
    steps->entries.push_back({CpuStepRecording::Entry::Wait, this, {}, &event});
    return;
  }
  auto &cpuEvent = static_cast<CpuEvent &>(event);
  uint64_t record = cpuEvent.getLastRecord();
  push({[&cpuEvent, record](kernels::KernelContext &) {
          cpuEvent.waitFor(record);
        },
        false});
}

void CpuStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex);
  drained.wait(lock, [&] { return queued == 0 && !busy; });
  if (std::exception_ptr error = std::exchange(failure, nullptr))
    std::rethrow_exception(error);
}

void CpuStream::work() {
  if (threads > 0)
    omp_set_num_threads(threads);
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || queued > 0; });
    if (queued == 0)
      return; // stopping, and everything enqueued has run
    Task task = std::move(queue[head]);
    head = (head + 1) % queue.size();
    --queued;
    bool skip = task.isWork && failure;
    busy = true;
    lock.unlock();
    std::exception_ptr error;
    if (!skip) {
      try {
        task.run(*context);
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    busy = false;
    if (error && !failure)
      failure = error;
    if (queued == 0)
      drained.notify_all();
  }
}

//===----------------------------------------------------------------------===//
// CpuDevice
//===----------------------------------------------------------------------===//

void *CpuDevice::allocate(size_t bytes) {
  // Cache-line aligned, as oneDNN and vector loops like. calloc rather than
  // memset: large blocks come zeroed from the OS, untouched until used.
  constexpr size_t kAlignment = 64;
  void *block =
      bytes > SIZE_MAX / 2 ? nullptr : std::calloc(1, bytes + 2 * kAlignment);
  if (!block)
    throw OutOfMemory(name, bytes, "memory");
  // The block's start is kept just below the aligned pointer.
  auto address = reinterpret_cast<uintptr_t>(block) + sizeof(void *);
  address = (address + kAlignment - 1) / kAlignment * kAlignment;
  void *pointer = reinterpret_cast<void *>(address);
  static_cast<void **>(pointer)[-1] = block;
  return pointer;
}

void CpuDevice::deallocate(void *pointer) {
  if (pointer)
    std::free(static_cast<void **>(pointer)[-1]);
}

void CpuDevice::copyFromHost(void *deviceDst, const void *hostSrc,
                             size_t bytes) {
  if (bytes)
    std::memcpy(deviceDst, hostSrc, bytes);
}

void CpuDevice::copyToHost(void *hostDst, const void *deviceSrc, size_t bytes) {
  if (bytes)
    std::memcpy(hostDst, deviceSrc, bytes);
}

std::unique_ptr<Stream> CpuDevice::createStream(plan::StreamKind) {
  // The stream's oneDNN buffers count as this device's library memory (the
  // device outlives its streams).
  return std::make_unique<CpuStream>(
      threads, reductionThreads, &recording,
      [this](int64_t delta) { noteLibraryBytes(delta); });
}

void CpuDevice::beginCapture(const std::vector<Stream *> &) {
  recording = std::make_unique<CpuStepRecording>();
}

std::unique_ptr<StepGraph> CpuDevice::endCapture(const std::vector<Stream *> &,
                                                 std::string &why) {
  std::unique_ptr<CpuStepRecording> done = std::move(recording);
  if (!done->refused.empty()) {
    why = done->refused + " cannot be recorded";
    return nullptr;
  }
  return done;
}

void CpuDevice::replay(StepGraph &graph, Stream &) {
  for (CpuStepRecording::Entry &entry :
       static_cast<CpuStepRecording &>(graph).entries) {
    switch (entry.kind) {
    case CpuStepRecording::Entry::Launch:
      entry.stream->launchPrepared(entry.call); // kept by the recording
      break;
    case CpuStepRecording::Entry::Record:
      entry.stream->record(*entry.event);
      break;
    case CpuStepRecording::Entry::Wait:
      entry.stream->wait(*entry.event);
      break;
    }
  }
}

std::unique_ptr<Event> CpuDevice::createEvent() {
  return std::make_unique<CpuEvent>();
}

} // namespace dpc::rt
