//===- OnnxNormalize.h - --normalize inside an exported graph ---*- C++ -*-===//
//
// A model trained with --normalize saw (x - mean[c]) / std[c], not the
// pixels its data files hold. `dpc export -o model.onnx` writes that step
// into the graph, as a Sub and a Div at each image input, so that the
// exported model takes the same pixels as `dpc predict` (f32, uint8 files
// scaled by 1/255) and computes the same f32 values as the data loader.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_ONNXNORMALIZE_H
#define DPC_RUNTIME_TRAIN_ONNXNORMALIZE_H

#include "runtime/data/ImageTransforms.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::train {

/// `graph`, a serialized onnx.GraphProto, with `normalization` applied to
/// each of its image inputs (f32, rank 4, not an initializer nor one of
/// `state`'s names) before any node reads it: the nodes read the output of
/// a Div(Sub(input, mean), std) that comes first, with mean and std
/// Constants of shape [1, C, 1, 1]. The inputs keep their names. Throws
/// RunError naming `planName` if the graph is malformed or an image input
/// has another channel count than `normalization`.
std::vector<uint8_t>
normalizeImageInputs(std::string_view graph, const std::set<std::string> &state,
                     const data::Normalization &normalization,
                     const std::string &planName);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_ONNXNORMALIZE_H
