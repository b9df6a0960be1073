//===- ModelInput.h - the data inputs a plan binds --------------*- C++ -*-===//
//
// A plan's data inputs are images [N, C, H, W] (F32), sequences of feature
// vectors [N, T, F] (F32, an LSTM's) or token ids [N, T] (I32, the indices
// of an embedding): one, "images", for a model with one
// input, or one per model input, under the model's input names. Data sets
// hold both as floats (token ids exactly: the loader refuses ids from 2^24
// on); this is where they take each input's type.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_MODELINPUT_H
#define DPC_RUNTIME_TRAIN_MODELINPUT_H

#include "runtime/data/BatchLoader.h"
#include "runtime/exec/Executor.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/Metrics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::train {

/// `step`'s data inputs (every input but "labels", "lr" and "step"), in the
/// plan's order, with their sample dims ([C, H, W], [T, F] or [T]); throws
/// RunError naming the plan when there is none or one is of another form.
PlanInputs getDataInputs(const rt::Executor &executor, int step);

/// A plan's targets (its labels input) and what its loss makes of them.
struct PlanTargets {
  data::TargetForm form;
  Task task = Task::Classes;
  std::string lossName = "loss";
  /// A cross-entropy's class axis in its logits (the batch is dim 0).
  int64_t classAxis = 1;
};

/// `step`'s targets: the labels input's per-sample dims and type (I32
/// classes, F32 floats) and, from its loss kernel's attributes, the class
/// count (the logits' class axis) and ignore index; a plan without a loss
/// kernel counts the plan's num_classes. Throws RunError naming the plan
/// when the step has no labels input or one of another type.
PlanTargets getPlanTargets(const rt::Executor &executor, int step);

/// The sample dims of `step`'s first data input.
std::vector<int64_t> getInputSample(const rt::Executor &executor, int step);

/// Binds `values` to `step`'s first data input, as floats or as token ids,
/// whichever the input is.
void bindInput(rt::Executor &executor, int step,
               const std::vector<float> &values);

/// Binds a batch's images and extras to `step`'s data inputs, in order, as
/// floats or as token ids, whichever each input is.
void bindInputs(rt::Executor &executor, int step, const data::Batch &batch);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_MODELINPUT_H
