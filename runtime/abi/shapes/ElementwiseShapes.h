//===- ElementwiseShapes.h - element-wise and broadcast shapes --*- C++ -*-===//
//
// Activations, Copy, Fill, Accumulate, Reorder: one element count for
// every tensor. The activations whose backward reads the forward's input
// (clip, hard sigmoid, hard swish, GELU, erf and Kernels.def's
// DPC_INPUT_ACTIVATION rows) also take their kind and parameters; dropout its
// ratio and mask site. Binary ops broadcast the second operand to the first,
// numpy-style, at any rank that merges to 4 dims.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_ELEMENTWISESHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_ELEMENTWISESHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dpc::plan {

/// The activations whose backward reads x, with up to two parameters
/// (runtime/kernels/KernelMath.h's inputActivation*).
enum class InputActivation : int32_t {
  Clip,        // a = min, b = max: hardtanh, ReLU6
  HardSigmoid, // clamp(a x + b, 0, 1)
  HardSwish,   // x relu6(x + 3) / 6
  Gelu,        // x Phi(x), with erf
  GeluTanh,    // GELU's tanh approximation
  Erf,         // erf(x): GELU as older exporters write it
// One per DPC_INPUT_ACTIVATION row, named as the row (a = alpha, b = beta).
#define DPC_KERNEL(...)
#define DPC_INPUT_ACTIVATION(Name) Name,
#include "runtime/abi/Kernels.def"
};

struct ActivationParams {
  float a = 0.f, b = 0.f;
};

/// An input activation (forward or backward): which, with its parameters
/// (finite; for Clip min <= max), and the element count.
struct InputActivationShape {
  InputActivation kind;
  ActivationParams params;
  int64_t size;
};

/// DropoutForward/Backward: the ratio (in [0, 1]) and site of the mask, and
/// the operand as `rows` (dim 0, the batch) of `cols` elements.
struct DropoutShape {
  double ratio;
  int64_t site;
  int64_t rows, cols;
  bool rowwise;
  int64_t span = 1; // elements per draw
  /// Kept: x scale + shift (scale 0: 1 / (1 - ratio)); dropped: fill.
  double scale = 0, shift = 0, fill = 0;
  /// Every element times shift + scale u, u its draw in [0, 1) (RReLU).
  bool uniform = false;
};

/// Binary ops with numpy broadcasting of the second operand: out has lhs's
/// shape, and rhs's dims, right-aligned, each equal the lhs dim or are 1
/// (bias [c] against [n, c], [c, 1, 1] against [n, c, h, w], a scalar).
struct BroadcastShape {
  int64_t out[4]; // lhs/out dims, merged (makeBroadcastShape), padded with 1
  int64_t rhs[4]; // rhs dims aligned to out, each out[i] or 1
};

/// Aligns numpy-style dims; throws std::invalid_argument if rhs does not
/// broadcast to lhs or, after merging, more than 4 dims remain. Dims of any
/// rank are views: unit dims of lhs go, and each run of adjacent dims that
/// rhs either all matches or all broadcasts becomes one dim (a fused-qkv
/// attention's 5-D [B, H, T, 3, D] against [1, H, 1, 3, D] is 4-D).
inline BroadcastShape makeBroadcastShape(const std::vector<int64_t> &lhsDims,
                                         const std::vector<int64_t> &rhsDims) {
  if (rhsDims.size() > lhsDims.size())
    throw std::invalid_argument("broadcast: rhs rank above lhs");
  size_t lead = lhsDims.size() - rhsDims.size();
  std::vector<int64_t> out, rhs;
  bool lastMatched = false;
  for (size_t i = 0; i < lhsDims.size(); ++i) {
    int64_t l = lhsDims[i], r = i < lead ? 1 : rhsDims[i - lead];
    if (r != l && r != 1)
      throw std::invalid_argument("broadcast: rhs does not broadcast to lhs");
    if (l == 1)
      continue;
    bool matched = r == l;
    if (!out.empty() && matched == lastMatched) {
      out.back() *= l;
      rhs.back() *= r;
    } else {
      out.push_back(l);
      rhs.push_back(r);
    }
    lastMatched = matched;
  }
  if (out.size() > 4)
    throw std::invalid_argument("broadcast: more than 4 dims after merging");
  BroadcastShape shape;
  size_t pad = 4 - out.size();
  for (size_t i = 0; i < 4; ++i) {
    shape.out[i] = i < pad ? 1 : out[i - pad];
    shape.rhs[i] = i < pad ? 1 : rhs[i - pad];
  }
  return shape;
}

/// Activations, Copy, Fill, Accumulate, Reorder: the element count.
int64_t getElementwiseSize(const KernelCall &call);
InputActivationShape getInputActivationShape(const KernelCall &call);
DropoutShape getDropoutShape(const KernelCall &call);
/// Add, Mul and AddRelu, forward and backward.
BroadcastShape getBroadcastShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_ELEMENTWISESHAPES_H
