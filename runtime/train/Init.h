//===- Init.h - fresh initial weights for `dpc run --init` ------*- C++ -*-===//
//
// A plan carries the model file's initial values; --init draws new ones for
// every parameter of rank >= 2 (convolution filters, linear weights) from
// the run's seed. Parameters of rank 1 (biases, batch-norm scales and
// shifts) keep the plan's values, as torch's per-layer init helpers do
// (d2l's init_weights touches only .weight).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_INIT_H
#define DPC_RUNTIME_TRAIN_INIT_H

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::rt {
class Executor;
} // namespace dpc::rt

namespace dpc::train {

struct InitScheme {
  enum Kind { Model, KaimingNormal, XavierUniform, Normal, Hash } kind = Model;
  double std = 0.0;      // Normal
  uint64_t hashSeed = 0; // Hash
};

/// Parses model|kaiming|xavier|normal:STD|hash:SEED; throws
/// std::invalid_argument.
InitScheme parseInitScheme(const std::string &text);

/// Re-initializes the executor's parameters (see above). Kaiming:
/// N(0, 2 / fan_in), torch's kaiming_normal_ default (fan_in, relu gain);
/// Xavier: U(-a, a), a = sqrt(6 / (fan_in + fan_out)); Normal: N(0, std).
/// fan_in = dims[1] * receptive field, fan_out = dims[0] * receptive field.
/// Hash ignores `seed` (see hashInitValue).
void initializeParameters(rt::Executor &executor, const InitScheme &scheme,
                          uint64_t seed);

/// Element `index` of parameter `name` (of shape `dims`) under hash:SEED:
/// u in [-1, 1) from splitmix64 of (FNV-1a(name) ^ SEED * golden) + (index +
/// 1) * golden, scaled by 1 / sqrt(fan_in) for rank >= 2 (torch's default
/// bound for Linear and Conv weights, fan_in = product of dims[1:]); rank <=
/// 1 gives 0.5 u, plus 1 for a name ending in "weight" (a norm's scale).
float hashInitValue(const std::string &name, const std::vector<int64_t> &dims,
                    uint64_t index, uint64_t seed);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_INIT_H
