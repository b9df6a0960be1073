//===- CollectiveWatch.cpp - deadlines of a step's collectives ------------===//

#include "runtime/cuda/CollectiveWatch.h"
#include "runtime/cuda/CudaDevice.h"

#include <new>

namespace dpc::cuda {

CollectiveWatch::~CollectiveWatch() { forgetAll(); }

void CollectiveWatch::attach(Owner newOwner) {
  std::lock_guard<std::mutex> lock(mutex);
  owner = std::move(newOwner);
  attached = true;
}

void CollectiveWatch::detach() {
  std::lock_guard<std::mutex> lock(mutex);
  attached = false;
  owner = {};
}

void CollectiveWatch::forgetAll() {
  std::lock_guard<std::mutex> lock(mutex);
  DeviceScope scope(ordinal, std::nothrow);
  for (const Pending &entry : pending)
    DPC_CUDA_REPORT(cudaEventDestroy(entry.done));
  pending.clear();
}

void CollectiveWatch::add(const std::string &collective, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!attached)
    return;
  DeviceScope scope(ordinal);
  cudaEvent_t done = nullptr;
  DPC_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  pending.push_back({collective, done, Clock::now() + timeout});
  // The event completes when everything enqueued on `stream` so far has.
  DPC_CUDA_CHECK(cudaEventRecord(done, stream));
}

void CollectiveWatch::check() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!attached)
    return;
  DeviceScope scope(ordinal);
  // Collectives may be on several streams (gradient buckets on the
  // communication stream, batch-norm statistics on the compute stream).
  for (auto it = pending.begin(); it != pending.end();) {
    if (DPC_CUDA_PENDING(cudaEventQuery(it->done))) {
      ++it;
      continue;
    }
    DPC_CUDA_CHECK(cudaEventDestroy(it->done));
    it = pending.erase(it);
  }
  owner.checkErrors();
  Clock::time_point now = Clock::now();
  for (const Pending &entry : pending)
    if (now >= entry.deadline)
      owner.failTimedOut(entry.collective);
}

} // namespace dpc::cuda
