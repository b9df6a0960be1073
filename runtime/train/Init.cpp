//===- Init.cpp - fresh initial weights for `dpc run --init` --------------===//

#include "runtime/train/Init.h"

#include "runtime/exec/Executor.h"

#include <cmath>
#include <random>
#include <stdexcept>

using namespace dpc;
using namespace dpc::train;

InitScheme dpc::train::parseInitScheme(const std::string &text) {
  InitScheme scheme;
  if (text == "model")
    scheme.kind = InitScheme::Model;
  else if (text == "kaiming")
    scheme.kind = InitScheme::KaimingNormal;
  else if (text == "xavier")
    scheme.kind = InitScheme::XavierUniform;
  else if (text.rfind("normal:", 0) == 0) {
    scheme.kind = InitScheme::Normal;
    size_t used = 0;
    try {
      scheme.std = std::stod(text.substr(7), &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != text.size() - 7 || !(scheme.std > 0))
      throw std::invalid_argument("normal:STD needs a positive STD, got '" +
                                  text.substr(7) + "'");
  } else if (text.rfind("hash:", 0) == 0) {
    scheme.kind = InitScheme::Hash;
    std::string digits = text.substr(5);
    size_t used = 0;
    try {
      if (!digits.empty() && digits[0] != '-')
        scheme.hashSeed = std::stoull(digits, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != digits.size())
      throw std::invalid_argument("hash:SEED needs a non-negative integer "
                                  "SEED, got '" +
                                  digits + "'");
  } else {
    throw std::invalid_argument(
        "expected model, kaiming, xavier, normal:STD or hash:SEED, got '" +
        text + "'");
  }
  return scheme;
}

namespace {

/// Uniform doubles in [0, 1) from mt19937_64's fixed output (the standard
/// distributions are not fixed across library versions).
double uniform(std::mt19937_64 &random) {
  return (random() >> 11) * (1.0 / 9007199254740992.0);
}

/// A standard normal draw (Box-Muller).
double normal(std::mt19937_64 &random) {
  double u1 = 1.0 - uniform(random), u2 = uniform(random);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// splitmix64's finalizer: a bijective mix of all 64 bits.
uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001B3ull;
  return hash;
}

} // namespace

float dpc::train::hashInitValue(const std::string &name,
                                const std::vector<int64_t> &dims,
                                uint64_t index, uint64_t seed) {
  uint64_t bits =
      mix64((fnv1a64(name) ^ (seed * kGolden)) + (index + 1) * kGolden);
  double u = 2 * ((bits >> 11) * (1.0 / 9007199254740992.0)) - 1; // exact
  if (dims.size() >= 2) {
    double fanIn = 1;
    for (size_t d = 1; d < dims.size(); ++d)
      fanIn *= double(dims[d]);
    return float(u * (1 / std::sqrt(fanIn)));
  }
  bool isScale =
      name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0;
  return float(u * 0.5 + (isScale ? 1.0 : 0.0));
}

void dpc::train::initializeParameters(rt::Executor &executor,
                                      const InitScheme &scheme, uint64_t seed) {
  if (scheme.kind == InitScheme::Model)
    return;
  const plan::Plan &plan = executor.getPlan().get();
  if (scheme.kind == InitScheme::Hash) {
    for (size_t i : executor.getPrimaryPersistent()) {
      const plan::PersistentTensor *tensor = plan.persistent()->Get(i);
      if (tensor->kind() != plan::PersistentKind::Parameter ||
          tensor->dtype() != plan::DType::F32)
        continue;
      std::vector<int64_t> dims;
      if (tensor->dims())
        dims.assign(tensor->dims()->begin(), tensor->dims()->end());
      std::string name = tensor->name()->str();
      std::vector<float> values(executor.getPersistentBytes(i) / sizeof(float));
      for (size_t k = 0; k < values.size(); ++k)
        values[k] = hashInitValue(name, dims, k, scheme.hashSeed);
      executor.writePersistent(i, values.data());
    }
    return;
  }
  std::mt19937_64 random(seed ^ 0x5DEECE66Dull);
  // One draw per tensor, written to every device's copy: replicas start
  // equal, and a plan on N devices starts where the one-device plan does.
  for (size_t i : executor.getPrimaryPersistent()) {
    const plan::PersistentTensor *tensor = plan.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter ||
        tensor->dtype() != plan::DType::F32 || !tensor->dims() ||
        tensor->dims()->size() < 2)
      continue;
    const auto &dims = *tensor->dims();
    double receptive = 1;
    for (size_t d = 2; d < dims.size(); ++d)
      receptive *= dims[d];
    double fanIn = dims[1] * receptive, fanOut = dims[0] * receptive;
    std::vector<float> values(executor.getPersistentBytes(i) / sizeof(float));
    for (float &value : values) {
      switch (scheme.kind) {
      case InitScheme::KaimingNormal:
        value = float(normal(random) * std::sqrt(2.0 / fanIn));
        break;
      case InitScheme::XavierUniform: {
        double bound = std::sqrt(6.0 / (fanIn + fanOut));
        value = float((2 * uniform(random) - 1) * bound);
        break;
      }
      case InitScheme::Normal:
        value = float(normal(random) * scheme.std);
        break;
      case InitScheme::Model:
      case InitScheme::Hash:
        break;
      }
    }
    executor.writePersistent(i, values.data());
  }
}
