//===- CheckGradients.cpp - a plan's gradients against finite differences -===//
//
// dpc-check-gradients PLAN [--init SCHEME] [--seed S] [--classes C]
//                          [--vocab V] [--samples K] [--eps H]
//                          [--tolerance T]
//
// Checks every vector-Jacobian product a train step is built from, as
// composed by the compiler and run by the kernels, against the loss itself:
// for K sampled elements of every parameter, the gradient the step computes
// is compared with the central difference (L(w + H) - L(w - H)) / 2H of the
// loss the same step returns. The batch is seeded noise: inputs uniform in
// [-1, 1) (token inputs uniform in [0, V)), labels uniform in [0, C), at
// the plan's compiled batch. The gradient is recovered from one step at a
// learning rate of 2^20 as (before - after) / 2^20, as dpc-check-reference
// does; the loss from steps at a learning rate of 0 (SGD leaves the
// parameters as they are), each from optimizer update 0, so that a dropout
// mask is the same in every run and the loss is a smooth function of the
// weights. The error of a parameter is max_k |grad_k - fd_k| relative to
// max_k |grad_k|; a parameter whose sampled gradients and differences are
// all zero fails too: nothing would have been checked. Prints one line per
// parameter, exits 1 if any error exceeds the tolerance.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/Init.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dpc;

namespace {

/// splitmix64: a seeded stream of 64-bit values.
struct Noise {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

struct Options {
  train::InitScheme init;
  uint64_t seed = 0;
  int64_t classes = 2, vocab = 0, samples = 8;
  double eps = 3e-3, tolerance = 1e-2;
};

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 2; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 == argc)
      throw std::invalid_argument(flag + " needs a value");
    std::string value = argv[i + 1];
    if (flag == "--init")
      options.init = train::parseInitScheme(value);
    else if (flag == "--seed")
      options.seed = std::stoull(value);
    else if (flag == "--classes")
      options.classes = std::stoll(value);
    else if (flag == "--vocab")
      options.vocab = std::stoll(value);
    else if (flag == "--samples")
      options.samples = std::stoll(value);
    else if (flag == "--eps")
      options.eps = std::stod(value);
    else if (flag == "--tolerance")
      options.tolerance = std::stod(value);
    else
      throw std::invalid_argument("unknown option " + flag);
  }
  if (options.classes < 1 || options.samples < 1 || options.eps <= 0)
    throw std::invalid_argument("--classes, --samples and --eps must be > 0");
  return options;
}

/// A batch of seeded noise at the compiled batch: pixels, or token ids
/// where the input is I32, and labels.
struct NoiseBatch {
  std::vector<float> pixels;
  std::vector<int32_t> tokens, labels;
  bool isTokens = false;
};

NoiseBatch makeNoiseBatch(rt::Executor &executor, int step, int64_t batch,
                          const Options &options, Noise &noise,
                          const char *planPath) {
  const plan::Tensor *input = executor.findInput(step, "images");
  if (!input || !input->dims() || input->dims()->size() == 0)
    throw std::runtime_error(std::string(planPath) +
                             ": the train step has no batch input 'images'");
  int64_t perSample = 1;
  for (size_t d = 1; d < input->dims()->size(); ++d)
    perSample *= input->dims()->Get(d);
  NoiseBatch out;
  std::vector<float> &pixels = out.pixels;
  std::vector<int32_t> &tokens = out.tokens, &labels = out.labels;
  pixels.resize(batch * perSample);
  tokens.resize(pixels.size());
  out.isTokens = input->dtype() == plan::DType::I32;
  if (out.isTokens && options.vocab < 1)
    throw std::invalid_argument("a token input needs --vocab");
  for (size_t i = 0; i < pixels.size(); ++i) {
    pixels[i] = float(2 * noise.uniform() - 1);
    tokens[i] =
        int32_t(noise.next() % uint64_t(std::max<int64_t>(options.vocab, 1)));
  }
  labels.resize(batch);
  for (int32_t &label : labels)
    label = int32_t(noise.next() % uint64_t(options.classes));
  return out;
}

/// The whole training state, tensor by tensor.
std::vector<std::vector<float>> readState(rt::Executor &executor) {
  std::vector<std::vector<float>> state(executor.getNumPersistent());
  for (size_t i = 0; i < state.size(); ++i) {
    state[i].resize(executor.getPersistentBytes(i) / 4);
    executor.readPersistent(i, state[i].data());
  }
  return state;
}

int check(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dpc-check-gradients PLAN [--init SCHEME] "
                         "[--seed S] [--classes C] [--vocab V] [--samples K] "
                         "[--eps H] [--tolerance T]\n");
    return 2;
  }
  Options options = parseOptions(argc, argv);
  std::shared_ptr<const plan::LoadedPlan> loaded =
      plan::LoadedPlan::load(argv[1]);
  rt::Executor executor(loaded);
  train::initializeParameters(executor, options.init, /*seed=*/0);
  int step = executor.findStep(plan::StepRole::Train);
  if (step < 0)
    throw std::runtime_error(std::string(argv[1]) + ": no train_step");
  int64_t batch = executor.getMaxBatch(step);

  Noise noise{options.seed};
  NoiseBatch inputs =
      makeNoiseBatch(executor, step, batch, options, noise, argv[1]);
  const std::vector<float> &pixels = inputs.pixels;
  const std::vector<int32_t> &tokens = inputs.tokens, &labels = inputs.labels;
  bool isTokens = inputs.isTokens;

  // One step at learning rate `rate` from the executor's current state;
  // returns the loss.
  auto run = [&](float rate) {
    executor.setOptimizerStep(0);
    executor.setInput(step, "images",
                      isTokens ? static_cast<const void *>(tokens.data())
                               : pixels.data(),
                      pixels.size() * 4);
    executor.setInput(step, "labels", labels.data(), labels.size() * 4);
    executor.setInput(step, "lr", &rate, sizeof(rate));
    executor.run(step, batch);
    return executor.getScalarOutput(step, "loss");
  };

  // Every parameter's gradient from one step (exactly scaled: see above),
  // then the whole training state as it was.
  std::vector<std::vector<float>> state = readState(executor);
  constexpr float kGradientRate = 1048576.0f;
  run(kGradientRate);
  std::vector<std::vector<float>> moved = readState(executor);
  for (size_t i = 0; i < state.size(); ++i)
    executor.writePersistent(i, state[i].data());

  const plan::Plan &plan = loaded->get();
  bool ok = true;
  int checked = 0;
  for (size_t i = 0; i < plan.persistent()->size(); ++i) {
    const auto *tensor = plan.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter)
      continue;
    std::string name = tensor->name()->str();
    const std::vector<float> &weights = state[i];
    auto restore = [&] { executor.writePersistent(i, weights.data()); };

    // K positions spread over the tensor, at a seeded offset.
    size_t count = std::min<size_t>(options.samples, weights.size());
    size_t offset = noise.next() % weights.size();
    double largest = 0, largestDifference = 0, error = 0;
    for (size_t k = 0; k < count; ++k) {
      size_t at = (offset + k * weights.size() / count) % weights.size();
      double grad = (double(weights[at]) - moved[i][at]) / kGradientRate;
      std::vector<float> probe = weights;
      probe[at] = float(weights[at] + options.eps);
      double stepUp = probe[at] - double(weights[at]);
      executor.writePersistent(i, probe.data());
      double up = run(0.0f);
      probe[at] = float(weights[at] - options.eps);
      double stepDown = double(weights[at]) - probe[at];
      executor.writePersistent(i, probe.data());
      double down = run(0.0f);
      restore();
      double difference = (up - down) / (stepUp + stepDown);
      largest = std::max(largest, std::fabs(grad));
      largestDifference = std::max(largestDifference, std::fabs(difference));
      error = std::max(error, std::fabs(grad - difference));
    }
    bool zero = largest == 0 && largestDifference == 0;
    double relative = largest == 0 ? error : error / largest;
    bool pass = !zero && relative <= options.tolerance;
    ok &= pass;
    std::printf("%-28s %zu elements, largest |grad| %.3g, relative error "
                "%.3g %s\n",
                name.c_str(), count, largest, relative,
                zero   ? "ZERO GRADIENT"
                : pass ? "ok"
                       : "TOO LARGE");
    ++checked;
  }
  std::printf("%d parameters checked: %s\n", checked,
              ok ? "all match" : "MISMATCH");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return check(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dpc-check-gradients: %s\n", e.what());
    return 1;
  }
}
