//===- ReplicaStep.h - one replica of a step on its device ------*- C++ -*-===//
//
// A replica is a step of the plan on its device: where each of its tensors
// lies, its streams and events, its double-buffered inputs and the kernel
// calls it prepares once per slot. It knows nothing of the other replicas
// or of the process model (Replicas.h and ReplicaDriver.h do).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_REPLICASTEP_H
#define DPC_RUNTIME_EXEC_REPLICASTEP_H

#include "runtime/abi/KernelCall.h"
#include "runtime/device/Device.h"
#include "runtime/plan/PlanLoader.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

namespace dpc::rt {

class Tracer;
class TrainingState;

/// The bytes of `tensor` at its compiled dims.
int64_t bytesOf(const plan::Tensor &tensor);
/// The bytes of one row of a batch-major tensor (whose own share of rows
/// may be 0).
int64_t rowBytesOf(const plan::Tensor &tensor);

using Bindings = flatbuffers::Vector<flatbuffers::Offset<plan::Binding>>;
/// The tensor index `name` is bound to in `list`, or -1.
int findBinding(const Bindings *list, std::string_view name);

/// One scalar of `dtype` at `raw`, as a double; `name` is the output's, for
/// the error a 16-bit dtype gets.
double readScalar(const uint8_t *raw, plan::DType dtype, std::string_view name);

struct ReplicaStep {
  /// Lays out plan step `index` on `device`: arena tensors in `arena`,
  /// persistent ones in `state`, inputs in buffers of their own.
  ReplicaStep(const plan::LoadedPlan &plan, int index, Device &device,
              comm::Communicator *communicator, void *arena,
              const TrainingState &state);

  /// Copies `bytes` for input tensor `tensor` into the slot the next run
  /// reads, through page-locked host memory, on `uploads`.
  void upload(int tensor, const void *data, size_t bytes, Stream &uploads,
              Tracer *tracer);
  /// Before a run: re-uploads inputs bound before the last run into the
  /// slot this run reads, and makes the step's streams wait for them.
  void finishUploads(Stream &uploads);
  /// Whether the calls of the slot the next run reads are made.
  bool isPrepared() const { return !prepared[slot].empty(); }
  /// Makes the calls of the instructions for the slot the next run reads.
  void prepare(const plan::LoadedPlan &plan);
  /// Enqueues the step on `rows` of `batch`, as part of optimizer update
  /// `update` from global row `firstRow` (KernelCall).
  void enqueue(const plan::LoadedPlan &plan, int64_t rows, int64_t batch,
               int64_t update, int64_t firstRow, uint64_t randomSeed,
               Tracer *tracer);
  /// After enqueuing a run on `rows`: the next run reads the other slot.
  void advance(int64_t rows);
  /// Step graphs (Device::capturesSteps): off, the step is enqueued kernel
  /// by kernel every run.
  void disableGraphs() { graphs.enabled = false; }

  int index; // the plan step
  const plan::Step *step = nullptr;
  Device *device = nullptr;
  comm::Communicator *communicator = nullptr;
  size_t group = 0;
  /// Inputs are double-buffered, so that the next run's inputs upload
  /// while a run reads the current ones: a run reads slot `slot`, and the
  /// caller binds into the slot the next run will read.
  struct Input {
    DeviceBuffer device[2];
    DeviceBuffer staging[2];          // host copies the uploads read
    std::unique_ptr<Event> staged[2]; // the last upload from staging[s]
    /// The device's memory is the host's (Device::isHostMemory): bindings
    /// are written into device[s] directly, and there is no staging.
    bool direct = false;
    bool current[2] = {false, false}; // device[s] holds the latest binding
    int latest = -1;                  // the staging of the latest binding
    size_t bytes = 0;                 // its size
  };
  std::map<int, Input> inputs; // by tensor index
  std::vector<void *> data[2]; // per slot: where each tensor starts
  int slot = 0;                // the slot the next run reads
  int lastSlot = 0;            // the slot the last run read
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  std::unique_ptr<Event> uploaded; // after this replica's uploads
  int64_t lastRows = 0;
  /// Each instruction's call, in enqueue order, made on the first run from
  /// a slot: a run only sets the rows of its batch tensors, the batch and
  /// the optimizer step, so that the step loop allocates nothing. A run
  /// waits for the last one, so no stream still reads a call it rewrites.
  struct Prepared {
    plan::KernelCall call;
    /// The arguments that hold the batch: dims[axis] is scale x rows.
    struct BatchArg {
      plan::TensorArg *arg;
      int axis;
      int64_t scale;
    };
    std::vector<BatchArg> batchArgs;
  };
  std::vector<Prepared> prepared[2];
  /// The backend's state per instruction (KernelCall::state), both slots.
  std::vector<std::unique_ptr<plan::KernelState>> kernelStates;
  /// Set by the optimizer updates of the last run that wrote NaN or
  /// infinity (KernelCall::nonFinite), on a device that checks them: in the
  /// device's host memory (page-locked on CUDA, where kernels write it).
  DeviceBuffer nonFiniteMemory;
  std::atomic<uint32_t> *nonFinite = nullptr;

  /// The runs recorded as step graphs, by what the recording fixed: the
  /// slot (where the inputs are), the rows and the global batch, and
  /// whether the run is the first optimizer update (SGD's first-step
  /// rule). A run is recorded the second time its key comes (the first
  /// warms the backend: cuDNN's algorithm search, lazily made state) and
  /// replayed from then on. Steps with collectives or dropout (whose mask
  /// keys change every run) are enqueued kernel by kernel.
  struct GraphKey {
    int slot;
    int64_t rows, batch;
    bool firstUpdate;
    bool operator<(const GraphKey &o) const {
      return std::tie(slot, rows, batch, firstUpdate) <
             std::tie(o.slot, o.rows, o.batch, o.firstUpdate);
    }
  };
  struct Graphs {
    bool enabled = true;
    bool capturable = false; // set by prepare()
    std::map<GraphKey, std::unique_ptr<StepGraph>> recorded;
    std::map<GraphKey, int> seen;
  } graphs;

private:
  void issue(const plan::LoadedPlan &plan, int64_t rows, int64_t batch,
             int64_t update, int64_t firstRow, uint64_t randomSeed,
             Tracer *tracer);
  /// Whether this run was enqueued as a step graph (replayed, or recorded
  /// and then replayed).
  bool enqueueAsGraph(const plan::LoadedPlan &plan, const GraphKey &key,
                      int64_t update, int64_t firstRow, uint64_t randomSeed);

  void layOut(const plan::LoadedPlan &plan, int slot, void *arena,
              const TrainingState &state);
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_REPLICASTEP_H
