//===- CheckReference.cpp - one training step against PyTorch's -----------===//
//
// dpc-check-reference PLAN DIR [--lr LR] [--tolerance T] [--init SCHEME]
//                              [--dump OUT] [--spread K]
//
// Runs the plan's train_step once on DIR's fixed batch (images.npy, of
// float pixels or integer tokens, and labels.npy) and compares with what
// PyTorch computed for the same model and initial weights: the loss, every
// parameter after the step, and every parameter's gradient, recovered from
// a second step from the same start with a learning rate of 2^20 as
// (before - after) / 2^20 (exact scaling, so that float rounding of the
// weights does not drown small gradients). The reference is either whole
// tensors (grad/NAME.npy, after/NAME.npy: tools/reference/make_reference.py)
// compared elementwise within the tolerance relative to the largest, or,
// for the model zoo's large models, a sample (reference/NAME.npy:
// tools/reference/make_zoo.py) of PyTorch's float64 step, float32
// [K + 3, 5]: columns 1 and 2 the gradient and the parameter after the
// step, columns 3 and 4 their allowances; row 0 the element count, the L2
// norms and the allowances' L2 norms; rows 1 and 2 the L2 norm and the
// largest element of PyTorch's float32 result minus its float64 one (its
// rounding noise), row 2 also the largest allowances; rows 3.. a flat
// index, the values there and their allowances ([K + 3, 3], the form before
// allowances, has no columns 3 and 4). A sampled value differs by
// at most the tolerance relative to the largest, or by twice PyTorch's own
// noise where that is larger (dpc must be as close to float64 as PyTorch's
// float32 step is), plus the element's allowance: what a float32 step may
// do that PyTorch's did not happen to (take the other side of an
// activation's kink its input is within rounding of; round a gradient whose
// terms cancel: tools/reference/zoo_allowance.py); the norms likewise.
// --init hash:SEED sets the weights first (runtime/train/Init.h), as the
// zoo's stripped models need; --dump OUT writes dpc's gradients and updated
// parameters to OUT/grad and OUT/after for offline analysis. Prints one line
// per quantity with its relative error (beyond the allowances), exits 1 if
// any exceeds the tolerance.
//
// For a sampled reference it also prints the spread: the L2 distance of all
// of dpc's gradients from float64 beyond the allowances, estimated from the
// sample (each parameter's mean square error times its element count),
// against PyTorch's own float32 distance (row 1's norms), and their ratio;
// --spread K fails a ratio above K. The per-element rule allows 1e-4
// relative where that exceeds PyTorch's noise; the spread holds the whole
// step to PyTorch's float32 accuracy.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npy.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/Init.h"
#include "runtime/train/NpyWriter.h"
#include "test/reference/TargetWords.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dpc;

namespace {

/// max_i |a_i - b_i| / max_i |b_i|: a norm-wise relative error, which
/// ignores the cancellation noise of elements far smaller than the rest.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale == 0 ? diff : diff / scale;
}

double l2Norm(const std::vector<float> &values) {
  double sum = 0;
  for (float v : values)
    sum += double(v) * v;
  return std::sqrt(sum);
}

/// What one parameter is compared with.
struct Reference {
  bool sampled = false;
  std::vector<float> grad, after; // whole tensors, or the sample
  std::vector<size_t> indices;    // sampled: the flat positions
  double count = 0, gradNorm = 0, afterNorm = 0;
  // PyTorch's rounding noise: the L2 norm and largest element.
  double gradNoiseNorm = 0, gradNoiseMax = 0;
  double afterNoiseNorm = 0, afterNoiseMax = 0;
  // Sampled: the allowances at the sample, and their L2 norms.
  std::vector<float> gradAllowance, afterAllowance;
  double gradAllowanceNorm = 0, afterAllowanceNorm = 0;
};

/// The reference of parameter `name` in `dir`, or false if it has none.
bool readReference(const std::string &dir, const std::string &name,
                   Reference &ref) {
  std::string samplePath = dir + "/reference/" + name + ".npy";
  if (std::filesystem::exists(samplePath)) {
    data::NpyArray array = data::readNpy(samplePath);
    // [K + 3, 3]: the form before allowances (of a float32 step).
    size_t columns = array.shape.size() == 2 ? size_t(array.shape[1]) : 0;
    if (array.shape.size() != 2 || array.shape[0] < 3 ||
        (columns != 5 && columns != 3))
      throw std::runtime_error(samplePath + ": expected a [K + 3, 5] array");
    std::vector<double> values = array.as<double>();
    auto at = [&](size_t row, size_t column) {
      return column < columns ? values[row * columns + column] : 0.0;
    };
    ref.sampled = true;
    ref.count = at(0, 0);
    ref.gradNorm = at(0, 1);
    ref.afterNorm = at(0, 2);
    ref.gradAllowanceNorm = at(0, 3);
    ref.afterAllowanceNorm = at(0, 4);
    ref.gradNoiseNorm = at(1, 1);
    ref.afterNoiseNorm = at(1, 2);
    ref.gradNoiseMax = at(2, 1);
    ref.afterNoiseMax = at(2, 2);
    for (size_t r = 3; r < size_t(array.shape[0]); ++r) {
      ref.indices.push_back(size_t(at(r, 0)));
      ref.grad.push_back(float(at(r, 1)));
      ref.after.push_back(float(at(r, 2)));
      ref.gradAllowance.push_back(float(at(r, 3)));
      ref.afterAllowance.push_back(float(at(r, 4)));
    }
    return true;
  }
  std::string afterPath = dir + "/after/" + name + ".npy";
  if (!std::filesystem::exists(afterPath))
    return false;
  ref.grad = data::readNpy(dir + "/grad/" + name + ".npy").as<float>();
  ref.after = data::readNpy(afterPath).as<float>();
  return true;
}

/// The error of `values` against the reference's part `expected` (the
/// sample's elements, and the whole tensor's norm) beyond the allowances,
/// relative to the larger of its scale and `noise` / tolerance.
double compare(const std::vector<float> &values, const Reference &ref,
               const std::vector<float> &expected, double expectedNorm,
               double noiseMax, double noiseNorm,
               const std::vector<float> &allowance, double allowanceNorm,
               double tolerance) {
  if (!ref.sampled)
    return relativeError(values, expected);
  // The larger, or NaN if either is: a NaN anywhere must fail.
  auto worse = [](double a, double b) {
    return std::isnan(a) || a > b ? a : b;
  };
  double excess = 0, scale = noiseMax / tolerance;
  for (size_t k = 0; k < ref.indices.size(); ++k) {
    double value =
        ref.indices[k] < values.size() ? values[ref.indices[k]] : NAN;
    excess = worse(excess, std::fabs(value - expected[k]) - allowance[k]);
    scale = std::max(scale, std::fabs(double(expected[k])));
  }
  double normScale = std::max(expectedNorm, noiseNorm / tolerance);
  double normExcess =
      worse(0.0, std::fabs(l2Norm(values) - expectedNorm) - allowanceNorm);
  double normError = normExcess / (normScale == 0 ? 1 : normScale);
  return worse(normError, scale == 0 ? excess : excess / scale);
}

void dump(const std::string &path, const std::vector<float> &values,
          const plan::PersistentTensor &tensor) {
  std::vector<int64_t> shape;
  if (tensor.dims())
    shape.assign(tensor.dims()->begin(), tensor.dims()->end());
  train::writeFileAtomically(
      path, train::encodeNpy("<f4", shape, values.data(), values.size() * 4));
}

/// The command line's options after PLAN and DIR.
struct CheckOptions {
  double lr = 0.1, tolerance = 1e-4;
  train::InitScheme init;
  std::string dumpDir;
  double spreadLimit = 0; // 0: report only
};

CheckOptions parseOptions(int argc, char **argv) {
  CheckOptions options;
  for (int i = 3; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 == argc)
      throw std::invalid_argument(flag + " needs a value");
    if (flag == "--lr")
      options.lr = std::stod(argv[i + 1]);
    else if (flag == "--tolerance")
      options.tolerance = std::stod(argv[i + 1]);
    else if (flag == "--init")
      options.init = train::parseInitScheme(argv[i + 1]);
    else if (flag == "--dump")
      options.dumpDir = argv[i + 1];
    else if (flag == "--spread")
      options.spreadLimit = std::stod(argv[i + 1]);
    else
      throw std::invalid_argument("unknown option " + flag);
  }
  return options;
}

std::vector<float> read(const rt::Executor &executor, size_t index) {
  std::vector<float> values(executor.getPersistentBytes(index) / 4);
  executor.readPersistent(index, values.data());
  return values;
}

/// The squared distance of dpc's gradient from float64's beyond the
/// allowances, estimated over the whole tensor from the sampled elements.
double estimateExcessSquares(const std::vector<float> &grad,
                             const Reference &ref) {
  double squares = 0;
  for (size_t k = 0; k < ref.indices.size(); ++k) {
    double excess =
        std::max(0.0, std::fabs(double(grad[ref.indices[k]]) - ref.grad[k]) -
                          ref.gradAllowance[k]);
    squares += excess * excess;
  }
  return squares / double(ref.indices.size()) * ref.count;
}

/// Prints dpc's and PyTorch's float32 distances from float64; whether
/// their ratio is within `spreadLimit` (0: no limit).
bool reportSpread(double dpcSquares, double torchSquares, double spreadLimit) {
  double ratio =
      std::sqrt(dpcSquares) / std::max(std::sqrt(torchSquares), 1e-300);
  bool within = spreadLimit == 0 || ratio <= spreadLimit;
  std::printf("gradient distance from float64: dpc %.3g (sampled), PyTorch "
              "float32 %.3g, ratio %.2f%s\n",
              std::sqrt(dpcSquares), std::sqrt(torchSquares), ratio,
              spreadLimit == 0 ? ""
              : within         ? " ok"
                               : " TOO LARGE");
  return within;
}

/// Writes a parameter's gradient and stepped values under `dumpDir`.
void dump(const std::string &dumpDir, const std::string &name,
          const std::vector<float> &grad, const std::vector<float> &after,
          const plan::PersistentTensor &tensor) {
  std::filesystem::create_directories(dumpDir + "/grad");
  std::filesystem::create_directories(dumpDir + "/after");
  dump(dumpDir + "/grad/" + name + ".npy", grad, tensor);
  dump(dumpDir + "/after/" + name + ".npy", after, tensor);
}

/// Runs the plan's train step on the reference batch.
struct StepRunner {
  std::shared_ptr<const plan::LoadedPlan> loaded;
  train::InitScheme init;
  std::vector<float> pixels;
  std::vector<int32_t> tokens; // token models' input
  std::vector<int32_t> labels;
  int64_t batch;

  /// A fresh executor holding the plan's initial state, or `init`'s.
  std::unique_ptr<rt::Executor> start() const {
    auto executor = std::make_unique<rt::Executor>(loaded);
    train::initializeParameters(*executor, init, /*seed=*/0);
    return executor;
  }

  /// One step from the initial state at learning rate `rate`; returns the
  /// executor to read the results from.
  std::unique_ptr<rt::Executor> trainOnce(float rate) const {
    auto executor = start();
    int step = executor->findStep(plan::StepRole::Train);
    const plan::Tensor *input = executor->findInput(step, "images");
    bool isTokens = input && input->dtype() == plan::DType::I32;
    executor->setInput(step, "images",
                       isTokens ? static_cast<const void *>(tokens.data())
                                : pixels.data(),
                       pixels.size() * 4);
    executor->setInput(step, "labels", labels.data(), labels.size() * 4);
    executor->setInput(step, "lr", &rate, sizeof(rate));
    executor->run(step, batch);
    return executor;
  }
};

int check(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: dpc-check-reference PLAN DIR [--lr LR] "
                         "[--tolerance T]\n");
    return 2;
  }
  std::string planPath = argv[1], dir = argv[2];
  const CheckOptions options = parseOptions(argc, argv);
  const double lr = options.lr, tolerance = options.tolerance;
  const std::string &dumpDir = options.dumpDir;

  auto loaded = plan::LoadedPlan::load(planPath);
  data::NpyArray images = data::readNpy(dir + "/images.npy");
  const StepRunner runner{loaded,
                          options.init,
                          images.as<float>(),
                          images.as<int32_t>(),
                          reference::readTargetWords(dir + "/labels.npy"),
                          images.shape[0]};
  const plan::Plan &plan = loaded->get();
  std::unique_ptr<rt::Executor> initial = runner.start();
  std::unique_ptr<rt::Executor> stepped = runner.trainOnce(float(lr));
  constexpr float kGradientRate = 1048576.0f;
  std::unique_ptr<rt::Executor> probed = runner.trainOnce(kGradientRate);

  bool ok = true;
  auto report = [&](const std::string &what, double error) {
    bool pass = error <= tolerance;
    ok &= pass;
    std::printf("%-28s relative error %.3g %s\n", what.c_str(), error,
                pass ? "ok" : "TOO LARGE");
  };
  float expectedLoss = data::readNpy(dir + "/loss.npy").as<float>()[0];
  double loss = stepped->getScalarOutput(
      stepped->findStep(plan::StepRole::Train), "loss");
  report("loss", std::fabs(loss - expectedLoss) / std::fabs(expectedLoss));

  int compared = 0;
  // Squared gradient distances from float64 over every sampled parameter:
  // dpc's (estimated, beyond the allowances) and PyTorch's float32 step's.
  double dpcSquares = 0, torchSquares = 0;
  bool sampled = false;
  for (size_t i = 0; i < plan.persistent()->size(); ++i) {
    const auto *tensor = plan.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter)
      continue;
    std::string name = tensor->name()->str();
    Reference ref;
    if (!readReference(dir, name, ref)) {
      std::printf("%-28s has no reference\n", name.c_str());
      ok = false;
      continue;
    }
    std::vector<float> before = read(*initial, i);
    std::vector<float> moved = read(*probed, i), grad(before.size());
    for (size_t k = 0; k < grad.size(); ++k)
      grad[k] = float((double(before[k]) - moved[k]) / kGradientRate);
    std::vector<float> after = read(*stepped, i);
    if (ref.sampled && ref.count != double(grad.size())) {
      std::printf("%-28s has %zu elements, the reference %.0f\n", name.c_str(),
                  grad.size(), ref.count);
      ok = false;
      continue;
    }
    if (ref.sampled && !ref.indices.empty()) {
      dpcSquares += estimateExcessSquares(grad, ref);
      torchSquares += ref.gradNoiseNorm * ref.gradNoiseNorm;
      sampled = true;
    }
    report(name + " grad",
           compare(grad, ref, ref.grad, ref.gradNorm, 2 * ref.gradNoiseMax,
                   2 * ref.gradNoiseNorm, ref.gradAllowance,
                   ref.gradAllowanceNorm, tolerance));
    report(name + " after",
           compare(after, ref, ref.after, ref.afterNorm, 2 * ref.afterNoiseMax,
                   2 * ref.afterNoiseNorm, ref.afterAllowance,
                   ref.afterAllowanceNorm, tolerance));
    if (!dumpDir.empty())
      dump(dumpDir, name, grad, after, *tensor);
    ++compared;
  }
  if (sampled)
    ok &= reportSpread(dpcSquares, torchSquares, options.spreadLimit);
  std::printf("%d parameters compared: %s\n", compared,
              ok ? "all match" : "MISMATCH");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return check(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dpc-check-reference: %s\n", e.what());
    return 1;
  }
}
