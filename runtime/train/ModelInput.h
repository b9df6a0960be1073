//===- ModelInput.h - the data input a plan binds ---------------*- C++ -*-===//
//
// A plan's data input, "images", is either images [N, C, H, W] (F32) or
// token ids [N, T] (I32, the indices of an embedding). Data sets hold both
// as floats (token ids exactly: the loader refuses ids from 2^24 on); this
// is where they take the input's type.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_MODELINPUT_H
#define DPC_RUNTIME_TRAIN_MODELINPUT_H

#include "runtime/exec/Executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::train {

/// The sample dims of `step`'s "images" input ([C, H, W] or [T]); throws
/// RunError naming the plan when the input is missing or of another form.
std::vector<int64_t> getInputSample(const exec::Executor &executor, int step);

/// Binds `count` samples of `values` to `step`'s "images" input, as floats
/// or as token ids, whichever the input is.
void bindInput(exec::Executor &executor, int step,
               const std::vector<float> &values);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_MODELINPUT_H
