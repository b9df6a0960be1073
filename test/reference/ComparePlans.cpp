//===- ComparePlans.cpp - two plans of one model train alike
//---------------===//
//
// dpc-compare-plans A.plan B.plan IMAGES.npy LABELS.npy --batch N
//     [--steps K] [--lr LR] [--tolerance T]
//
// Trains both plans (e.g. one device, and several with --sync-bn) from their
// initial state on the same sequence of batches: N rows at a time through
// the data, the last batch short when N does not divide it, for K steps.
// Then compares every parameter and buffer (each plan's device-0 copy) and
// the last loss: prints one line per tensor with its relative error
// (max |a - b| / max |b|) and exits 1 if any exceeds the tolerance.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npy.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace dpc;

namespace {

struct Trained {
  std::unique_ptr<exec::Executor> executor;
  double lastLoss = 0;
};

Trained train(const std::string &path, const std::vector<float> &images,
              const std::vector<int32_t> &labels, int64_t imageSize,
              int64_t batch, int64_t steps, float lr) {
  Trained result;
  result.executor =
      std::make_unique<exec::Executor>(plan::LoadedPlan::load(path));
  exec::Executor &executor = *result.executor;
  int step = executor.findStep("train_step");
  int64_t count = labels.size(), row = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (row >= count)
      row = 0;
    int64_t rows = std::min(batch, count - row);
    executor.setInput(step, "images", &images[row * imageSize],
                      rows * imageSize * sizeof(float));
    executor.setInput(step, "labels", &labels[row], rows * sizeof(int32_t));
    executor.setInput(step, "lr", &lr, sizeof(lr));
    executor.run(step, rows);
    result.lastLoss = executor.getScalarOutput(step, "loss");
    row += rows;
  }
  return result;
}

std::vector<float> read(const exec::Executor &executor, size_t index) {
  std::vector<float> values(executor.getPersistentBytes(index) / 4);
  executor.readPersistent(index, values.data());
  return values;
}

int compare(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dpc-compare-plans A.plan B.plan IMAGES.npy "
                         "LABELS.npy --batch N [--steps K] [--lr LR] "
                         "[--tolerance T]\n");
    return 2;
  }
  int64_t batch = 0, steps = 3;
  double lr = 0.1, tolerance = 1e-5;
  for (int i = 5; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--batch")
      batch = std::stoll(argv[i + 1]);
    else if (flag == "--steps")
      steps = std::stoll(argv[i + 1]);
    else if (flag == "--lr")
      lr = std::stod(argv[i + 1]);
    else if (flag == "--tolerance")
      tolerance = std::stod(argv[i + 1]);
  }
  data::NpyArray imageArray = data::readNpy(argv[3]);
  std::vector<float> images = imageArray.as<float>();
  std::vector<int32_t> labels = data::readNpy(argv[4]).as<int32_t>();
  int64_t imageSize = images.size() / labels.size();
  Trained a = train(argv[1], images, labels, imageSize, batch, steps, lr);
  Trained b = train(argv[2], images, labels, imageSize, batch, steps, lr);

  bool ok = true;
  auto report = [&](const std::string &what, double error) {
    bool pass = error <= tolerance;
    ok &= pass;
    std::printf("%-36s relative error %.3g %s\n", what.c_str(), error,
                pass ? "ok" : "TOO LARGE");
  };
  report("loss", std::fabs(a.lastLoss - b.lastLoss) / std::fabs(b.lastLoss));
  const plan::Plan &planA = a.executor->getPlan().get();
  const plan::Plan &planB = b.executor->getPlan().get();
  size_t compared = 0;
  for (size_t ia : a.executor->getPrimaryPersistent()) {
    const auto *tensor = planA.persistent()->Get(ia);
    if (tensor->kind() == plan::PersistentKind::OptimizerState)
      continue;
    std::string name = tensor->name()->str();
    for (size_t ib : b.executor->getPrimaryPersistent()) {
      if (planB.persistent()->Get(ib)->name()->str() != name)
        continue;
      std::vector<float> x = read(*a.executor, ia), y = read(*b.executor, ib);
      double diff = 0, scale = 0;
      for (size_t k = 0; k < x.size(); ++k) {
        diff = std::max(diff, std::fabs(double(x[k]) - y[k]));
        scale = std::max(scale, std::fabs(double(y[k])));
      }
      report(name, scale == 0 ? diff : diff / scale);
      ++compared;
    }
  }
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
