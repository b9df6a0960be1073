//===- TestPlans.h - plans built by hand for the runtime's tests -*- C++
//-*-===//
//
// Until the compiler writes plans, the runtime's tests build them with the
// FlatBuffers object API: a one-hidden-layer MLP (or, with hidden = 0,
// logistic regression) with a train_step (forward, cross-entropy, backward,
// SGD or AdamW) and an eval_step (forward, loss, correct count). The shape
// is what codegen is expected to write; see the conventions in
// KernelShapes.h and Executor.h.
//
// With `split`, the plan is data-parallel, as codegen writes it: devices
// cpu:0..N-1, each with its own copy of the training state (same names,
// same initial values, PersistentTensor.device) and its own replicas of
// both steps (the same instructions at its share of the batch). In the
// train step, each layer's weight-gradient kernel signals an event; a
// Communication stream waits for it and all-reduces (Sum) the layer's
// gradients as one bucket, last layer first, and signals an event the
// layer's updates wait for: the all-reduce overlaps the rest of backward.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_TEST_TESTPLANS_H
#define DPC_RUNTIME_PLAN_TEST_TESTPLANS_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan::test {

struct MlpPlanOptions {
  int64_t batch = 8;
  int64_t channels = 1, height = 28, width = 28;
  int64_t hidden = 64; // 0: logistic regression
  int64_t classes = 10;
  std::string optimizer = "sgd"; // or "adamw"
  double momentum = 0.0;
  double weightDecay = 0.0;
  uint32_t initSeed = 1;
  /// The last layer's updates on a second stream, after an event.
  bool twoStreams = false;
  DType correctDtype = DType::I64;
  /// Data parallel: each device's compiled batch (Plan.split); `batch` is
  /// ignored and becomes their sum. Empty: one device, no collectives.
  std::vector<int64_t> split;
  /// AllReduce attributes: none (Sum by default) or this op.
  bool allReduceAttrs = false;
  ReduceOp allReduceOp = ReduceOp::Sum;
};

/// Persistent tensor indices of the MLP plan: w1, b1, then (hidden > 0)
/// w2, b2, then optimizer state; with `split`, that block once per device,
/// device 0's first.
PlanT buildMlpPlanObject(const MlpPlanOptions &options);
std::vector<uint8_t> packPlan(const PlanT &plan);
inline std::vector<uint8_t> buildMlpPlan(const MlpPlanOptions &options) {
  return packPlan(buildMlpPlanObject(options));
}

/// The MLP the executor tests train: batch 8 of 1x4x4 images, 6 hidden
/// units, 3 classes, SGD with `momentum`; `split` as in MlpPlanOptions.
inline MlpPlanOptions smallMlp(std::vector<int64_t> split = {},
                               double momentum = 0.0) {
  MlpPlanOptions o;
  o.batch = 8;
  o.channels = 1, o.height = 4, o.width = 4;
  o.hidden = 6;
  o.classes = 3;
  o.momentum = momentum;
  o.split = std::move(split);
  return o;
}

/// `rows` samples for a plan of `options`: pixels uniform in [0, 1),
/// labels uniform over the classes, from `seed`.
struct Batch {
  std::vector<float> images;
  std::vector<int32_t> labels;
};
Batch randomBatch(const MlpPlanOptions &options, int64_t rows, uint32_t seed);
/// Writes `bytes` to `path`; returns false on failure.
bool writeFile(const std::string &path, const std::vector<uint8_t> &bytes);

/// Xavier-uniform initial values, as the plan holds them.
std::vector<float> xavierUniform(int64_t fanOut, int64_t fanIn, uint32_t seed);

} // namespace dpc::plan::test

#endif // DPC_RUNTIME_PLAN_TEST_TESTPLANS_H
