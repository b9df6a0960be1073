//===- PlanValidator.h - the checks of a plan file ------------*- C++ -*-===//
//
// Private to the plan loader: the validator that walks a verified plan and
// checks what the schema cannot express, one family of checks per file
// (PlanHeaderChecks, PlanStepChecks, PlanInstructionChecks; the replicas,
// split and device memory in PlanLoader.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_PLANVALIDATOR_H
#define DPC_RUNTIME_PLAN_PLANVALIDATOR_H

#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/abi/SharedCast.h"
#include "runtime/io/FileRead.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanVersion.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace dpc::plan {

/// The end of `bytes` from `offset`, for a message: "offset + bytes", or a
/// note where the sum overflows int64 (a crafted plan).
inline std::string formatEnd(int64_t offset, int64_t bytes) {
  std::optional<int64_t> end = checkedAdd(offset, bytes);
  return end ? std::to_string(*end)
             : std::to_string(offset) + " + " + std::to_string(bytes);
}

/// Walks a verified plan and checks what the schema cannot express.
class PlanValidator {
public:
  explicit PlanValidator(LoadedPlan &loaded)
      : loaded(loaded), plan(*loaded.root) {}
  void run();

private:
  /// FlatBuffers' verifier checks that a vector's length is aligned, not
  /// its elements: in a forged plan, a [long] whose length sits at 4 mod 8
  /// would be read misaligned (undefined behaviour). Checks every [long] of
  /// the schema before anything reads one; a [long] added to Plan.fbs must
  /// be added here.
  void checkAlignment();
  void checkHeader();
  /// The eval graph `dpc export` writes as ONNX: a graph unless a problem
  /// says why there is none, opsets in ONNX's range around the model's.
  void checkOnnxModel();
  /// Dims of at most kMaxTensorRank entries and kMaxTensorElements
  /// elements; returns their byte size at `dtype`.
  int64_t checkDims(const std::string &where, DType dtype,
                    const flatbuffers::Vector<int64_t> *dimsVector);
  /// What the persistent tensors of one name say about sharding: whether
  /// they are shards, and of which whole.
  struct Shards {
    bool sharded = false;
    std::vector<int64_t> logicalDims;
    DType dtype = DType::F32;
  };
  /// A shard is a 1-D range within its whole, and every tensor of its name
  /// is a shard of the same whole (a checkpoint gathers them into it).
  void checkShard(const PersistentTensor &p, const std::string &where,
                  std::map<std::string, Shards> &shards);
  void checkPersistent();
  void checkStep(const Step &step);
  /// The step's sizes that are plain numbers: within range, and no more
  /// streams or events than are of use (each is allocated at run time).
  void checkStepSizes(const Step &step, const std::string &where);
  static int64_t countEventMentions(const Step &step);
  /// The one data input of a step (the images of an image model) is
  /// [batch, ...sample_dims], which the data set is checked against.
  void checkImagesInput(const Step &step, const std::string &where,
                        int64_t maxBatch);
  /// A blocked layout is for an arena tensor of a shape it fits, which no
  /// other tensor views under other dims.
  void checkLayout(const Tensor &tensor, const std::vector<int64_t> &dims,
                   const std::string &where);
  /// Checks tensor `t`; returns the step's compiled batch seen so far (-1
  /// for none).
  int64_t checkTensor(const Step &step, const std::string &stepWhere, int t,
                      int64_t maxBatch);
  /// Every alias must reach a real tensor without a cycle and fit in it.
  /// Each tensor's base is resolved once, so a long chain costs linear time.
  void checkAliases(const Step &step, const std::string &stepWhere);
  void checkAliasFits(const Step &step, const std::string &stepWhere, int t,
                      int target, int64_t offset);
  void checkInstructions(const Step &step, const std::string &stepWhere,
                         int numTensors, int64_t maxBatch);
  /// No instruction reads an arena tensor (or a view of one) that no
  /// instruction ordered before it -- earlier on its stream, or through
  /// events -- has written, and every output is written or bound. Bound
  /// inputs and the training state hold values before the step starts; an
  /// Input tensor no binding names holds none (nothing fills it).
  ///
  /// "Ordered before" is tracked with vector clocks: a stream's clock holds,
  /// per stream, the index of the last instruction known to have run, and
  /// an event carries its signaller's clock to the streams that wait. A
  /// write on stream S at index I precedes an instruction whose clock has
  /// clock[S] >= I.
  void checkDataflow(const Step &step, const std::string &stepWhere,
                     const std::vector<std::pair<int, int>> &order);
  /// A cast slot (SharedCast.h) is named only by a bf16 call that can
  /// share an operand's cast, and read only after this stream's latest
  /// call that filled the slot did so from the same tensor.
  void checkCastSlot(const Instruction &instruction, const std::string &where,
                     std::vector<int> &castSlotTensor);
  void checkInstruction(const Step &step, const Instruction &instruction,
                        const std::string &where, int numTensors,
                        int64_t maxBatch);
  static int countCollectives(const Step &step);
  /// Replicas of a step must issue the same collectives, and a step with
  /// collectives needs a replica on every device (they all take part).
  void checkReplicas();
  void checkSplit();
  /// What each device holds at once -- its training state, its largest
  /// arena and every step's inputs -- within kMaxDeviceBytes, so that no
  /// later sum overflows and no absurd plan reaches an allocation.
  void checkDeviceBytes();
  [[noreturn]] void failDeviceBytes(int device);
  /// Round-robin over the streams, taking an instruction once every event
  /// it waits for has its signal taken; stuck means a cycle.
  std::vector<std::pair<int, int>> orderForEnqueue(const Step &step,
                                                   const std::string &where);
  LoadedPlan &loaded;
  const Plan &plan;
};

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_PLANVALIDATOR_H
