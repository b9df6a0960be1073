//===- ComparePlans.cpp - two plans of one model train alike
//---------------===//
//
// dpc-compare-plans A.plan B.plan IMAGES.npy LABELS.npy --batch N
//     [--steps K] [--lr LR] [--tolerance T] [--init SCHEME]
//
// --init hash:SEED sets both plans' weights first (runtime/train/Init.h), as
// the zoo's stripped exports need: their weights are zeros, under which a
// model trains almost nothing to compare.
//
// Trains both plans (e.g. one device, and several with --sync-bn) from their
// initial state on the same sequence of batches: N rows at a time through
// the data, the last batch short when N does not divide it, for K steps.
// Then compares every parameter and buffer (each plan's device-0 copy) and
// the last loss: prints one line per tensor with its relative error
// (max |a - b| / max |b|) and exits 1 if any exceeds the tolerance.
//
// With --resync, every step is compared on its own: after each step the
// errors are taken (the worst over the steps is printed), and B continues
// from A's training state. Deep ReLU nets are chaotic at rounding level (a
// pre-activation within rounding of 0 flips), so two equally correct
// trainings drift apart over steps; this checks that each step computes
// the same thing, however many steps.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npy.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/Init.h"
#include "runtime/train/ModelInput.h"
#include "test/reference/TargetWords.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dpc;

namespace {

/// One plan's executor, trained step by step.
struct Trainer {
  explicit Trainer(const std::string &path)
      : executor(std::make_unique<rt::Executor>(plan::LoadedPlan::load(path))),
        trainStep(executor->findStep(plan::StepRole::Train)) {}

  /// One step on rows [row, row + rows).
  void step(const std::vector<float> &images,
            const std::vector<int32_t> &labels, int64_t imageSize,
            int64_t labelSize, int64_t row, int64_t rows, float lr) {
    // As floats or as token ids, whichever the plan's input is.
    train::bindInput(
        *executor, trainStep,
        std::vector<float>(images.begin() + row * imageSize,
                           images.begin() + (row + rows) * imageSize));
    executor->setInput(trainStep, "labels", &labels[row * labelSize],
                       rows * labelSize * sizeof(int32_t));
    executor->setInput(trainStep, "lr", &lr, sizeof(lr));
    executor->run(trainStep, rows);
    lastLoss = executor->getScalarOutput(trainStep, "loss");
  }

  std::unique_ptr<rt::Executor> executor;
  int trainStep;
  double lastLoss = 0;
};

std::vector<float> read(const rt::Executor &executor, size_t index) {
  std::vector<float> values(executor.getPersistentBytes(index) / 4);
  executor.readPersistent(index, values.data());
  return values;
}

/// The flags after the four file arguments.
struct CompareOptions {
  int64_t batch = 0, steps = 3;
  double lr = 0.1, tolerance = 1e-5;
  bool resync = false;
  std::optional<train::InitScheme> init;
};

CompareOptions parseOptions(int argc, char **argv) {
  CompareOptions options;
  for (int i = 5; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--resync") {
      options.resync = true;
      --i;
      continue;
    }
    if (i + 1 >= argc)
      throw std::invalid_argument(flag + " needs a value");
    if (flag == "--batch")
      options.batch = std::stoll(argv[i + 1]);
    else if (flag == "--steps")
      options.steps = std::stoll(argv[i + 1]);
    else if (flag == "--lr")
      options.lr = std::stod(argv[i + 1]);
    else if (flag == "--tolerance")
      options.tolerance = std::stod(argv[i + 1]);
    else if (flag == "--init")
      options.init = train::parseInitScheme(argv[i + 1]);
  }
  return options;
}

int compare(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dpc-compare-plans A.plan B.plan IMAGES.npy "
                         "LABELS.npy --batch N [--steps K] [--lr LR] "
                         "[--tolerance T] [--resync] [--init SCHEME]\n");
    return 2;
  }
  CompareOptions options = parseOptions(argc, argv);
  const int64_t batch = options.batch, steps = options.steps;
  const double lr = options.lr, tolerance = options.tolerance;
  const bool resync = options.resync;
  const std::optional<train::InitScheme> &init = options.init;
  data::NpyArray imageArray = data::readNpy(argv[3]);
  std::vector<float> images = imageArray.as<float>();
  std::vector<int32_t> labels = reference::readTargetWords(argv[4]);
  int64_t count = imageArray.shape.at(0);
  int64_t imageSize = images.size() / count;
  int64_t labelSize = labels.size() / count;
  Trainer a(argv[1]), b(argv[2]);
  if (init)
    for (Trainer *trainer : {&a, &b})
      train::initializeParameters(*trainer->executor, *init, /*seed=*/0);
  const plan::Plan &planA = a.executor->getPlan().get();
  const plan::Plan &planB = b.executor->getPlan().get();
  // Every tensor of A's state and its index in B, by name.
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t ia : a.executor->getPrimaryPersistent())
    for (size_t ib : b.executor->getPrimaryPersistent())
      if (planA.persistent()->Get(ia)->name()->str() ==
          planB.persistent()->Get(ib)->name()->str())
        pairs.emplace_back(ia, ib);

  std::map<std::string, double> errors; // worst over the compared steps
  double lossError = 0;
  auto compareStates = [&] {
    lossError = std::max(lossError, std::fabs(a.lastLoss - b.lastLoss) /
                                        std::fabs(b.lastLoss));
    for (auto [ia, ib] : pairs) {
      const auto *tensor = planA.persistent()->Get(ia);
      if (tensor->kind() == plan::PersistentKind::OptimizerState ||
          tensor->kind() == plan::PersistentKind::GradAccumulator)
        continue;
      std::vector<float> x = read(*a.executor, ia), y = read(*b.executor, ib);
      double diff = 0, scale = 0;
      for (size_t k = 0; k < x.size(); ++k) {
        diff = std::max(diff, std::fabs(double(x[k]) - y[k]));
        scale = std::max(scale, std::fabs(double(y[k])));
      }
      double &error = errors[tensor->name()->str()];
      error = std::max(error, scale == 0 ? diff : diff / scale);
    }
  };
  int64_t row = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (row >= count)
      row = 0;
    int64_t rows = std::min(batch, count - row);
    a.step(images, labels, imageSize, labelSize, row, rows, lr);
    b.step(images, labels, imageSize, labelSize, row, rows, lr);
    row += rows;
    if (!resync)
      continue;
    compareStates();
    for (auto [ia, ib] : pairs) // B goes on from A's state
      b.executor->writePersistent(ib, read(*a.executor, ia).data());
  }
  if (!resync)
    compareStates();

  bool ok = true;
  auto report = [&](const std::string &what, double error) {
    bool pass = error <= tolerance;
    ok &= pass;
    std::printf("%-36s relative error %.3g %s\n", what.c_str(), error,
                pass ? "ok" : "TOO LARGE");
  };
  report("loss", lossError);
  for (const auto &[name, error] : errors)
    report(name, error);
  size_t compared = errors.size();
  std::printf("%zu tensors compared after %lld steps: %s\n", compared,
              static_cast<long long>(steps), ok ? "all match" : "MISMATCH");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return compare(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dpc-compare-plans: %s\n", e.what());
    return 1;
  }
}
