//===- Init.cpp - fresh initial weights for `dpc run --init` --------------===//

#include "runtime/train/Init.h"

#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/TrainingState.h"

#include <cmath>
#include <map>
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

namespace {

/// One f32 parameter of the plan, whole, and this process's tensors of it
/// (each device's copy, or each device's shard with --shard parameters).
struct LogicalParameter {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<size_t> local;
};

/// The plan's f32 parameters in plan order, each once: every device count,
/// every rank of dpc launch and every stage draws the same values.
std::vector<LogicalParameter> getLogicalParameters(rt::Executor &executor) {
  const plan::Plan &plan = executor.getPlan().get();
  std::vector<LogicalParameter> parameters;
  std::map<std::string, size_t> byName;
  for (const plan::PersistentTensor *tensor : *plan.persistent()) {
    if (tensor->kind() != plan::PersistentKind::Parameter ||
        tensor->dtype() != plan::DType::F32)
      continue;
    auto [at, fresh] =
        byName.try_emplace(tensor->name()->str(), parameters.size());
    if (!fresh)
      continue;
    parameters.push_back({at->first, rt::getWholeDims(*tensor), {}});
  }
  for (size_t i : executor.getPrimaryPersistent()) {
    auto it = byName.find(plan.persistent()->Get(i)->name()->str());
    if (it != byName.end())
      parameters[it->second].local.push_back(i);
  }
  return parameters;
}

/// Writes `whole`'s values to each of the parameter's local tensors: a
/// copy takes them all, a shard its range.
void writeParameter(rt::Executor &executor, const LogicalParameter &parameter,
                    const std::vector<float> &whole) {
  const plan::Plan &plan = executor.getPlan().get();
  for (size_t i : parameter.local) {
    const plan::PersistentTensor &tensor = *plan.persistent()->Get(i);
    int64_t offset = rt::isShard(tensor) ? tensor.shard_offset() : 0;
    executor.writePersistent(i, whole.data() + offset);
  }
}

} // namespace

void dpc::train::initializeParameters(rt::Executor &executor,
                                      const InitScheme &scheme, uint64_t seed) {
  if (scheme.kind == InitScheme::Model)
    return;
  std::mt19937_64 random(seed ^ 0x5DEECE66Dull);
  for (const LogicalParameter &parameter : getLogicalParameters(executor)) {
    const std::vector<int64_t> &dims = parameter.dims;
    std::vector<float> values(plan::getNumElements(dims));
    if (scheme.kind == InitScheme::Hash) {
      for (size_t k = 0; k < values.size(); ++k)
        values[k] = hashInitValue(parameter.name, dims, k, scheme.hashSeed);
      writeParameter(executor, parameter, values);
      continue;
    }
    // One draw per tensor, written to every device's copy: replicas start
    // equal, and a plan on N devices starts where the one-device plan does.
    if (dims.size() < 2)
      continue;
    double receptive = 1;
    for (size_t d = 2; d < dims.size(); ++d)
      receptive *= dims[d];
    double fanIn = dims[1] * receptive, fanOut = dims[0] * receptive;
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
    writeParameter(executor, parameter, values);
  }
}
