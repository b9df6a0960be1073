//===- CheckReference.cpp - one training step against PyTorch's -----------===//
//
// dpc-check-reference PLAN DIR [--lr LR] [--tolerance T]
//
// Runs the plan's train_step once on DIR's fixed batch (images.npy,
// labels.npy) and compares with what PyTorch computed for the same model and
// initial weights (tools/reference/make_reference.py): the loss, every
// parameter after the step, and every parameter's gradient, recovered from
// a second step from the same start with a huge learning rate as
// (before - after) / lr, so that float rounding of the weights does not
// drown small gradients. Prints one line
// per quantity with its relative error; exits 1 if any exceeds the
// tolerance.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Npy.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
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

int check(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: dpc-check-reference PLAN DIR [--lr LR] "
                         "[--tolerance T]\n");
    return 2;
  }
  std::string planPath = argv[1], dir = argv[2];
  double lr = 0.1, tolerance = 1e-4;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--lr")
      lr = std::stod(argv[i + 1]);
    else if (flag == "--tolerance")
      tolerance = std::stod(argv[i + 1]);
  }

  auto loaded = plan::LoadedPlan::load(planPath);
  data::NpyArray images = data::readNpy(dir + "/images.npy");
  std::vector<float> pixels = images.as<float>();
  std::vector<int32_t> tokens = images.as<int32_t>(); // token models' input
  std::vector<int32_t> labels =
      data::readNpy(dir + "/labels.npy").as<int32_t>();
  // One step from the plan's initial state at learning rate `rate`; returns
  // the executor to read the results from.
  auto trainOnce = [&](float rate) {
    auto executor = std::make_unique<exec::Executor>(loaded);
    int step = executor->findStep("train_step");
    const plan::Tensor *input = executor->findInput(step, "images");
    bool isTokens = input && input->dtype() == plan::DType::I32;
    executor->setInput(step, "images",
                       isTokens ? static_cast<const void *>(tokens.data())
                                : pixels.data(),
                       pixels.size() * 4);
    executor->setInput(step, "labels", labels.data(), labels.size() * 4);
    executor->setInput(step, "lr", &rate, sizeof(rate));
    executor->run(step, images.shape[0]);
    return executor;
  };
  const plan::Plan &plan = loaded->get();
  std::unique_ptr<exec::Executor> initial =
      std::make_unique<exec::Executor>(loaded);
  std::unique_ptr<exec::Executor> stepped = trainOnce(float(lr));
  constexpr float kGradientRate = 1e3f;
  std::unique_ptr<exec::Executor> probed = trainOnce(kGradientRate);
  auto read = [](const exec::Executor &executor, size_t index) {
    std::vector<float> values(executor.getPersistentBytes(index) / 4);
    executor.readPersistent(index, values.data());
    return values;
  };

  bool ok = true;
  auto report = [&](const std::string &what, double error) {
    bool pass = error <= tolerance;
    ok &= pass;
    std::printf("%-28s relative error %.3g %s\n", what.c_str(), error,
                pass ? "ok" : "TOO LARGE");
  };
  float expectedLoss = data::readNpy(dir + "/loss.npy").as<float>()[0];
  double loss =
      stepped->getScalarOutput(stepped->findStep("train_step"), "loss");
  report("loss", std::fabs(loss - expectedLoss) / std::fabs(expectedLoss));

  int compared = 0;
  for (size_t i = 0; i < plan.persistent()->size(); ++i) {
    const auto *tensor = plan.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter)
      continue;
    std::string name = tensor->name()->str();
    std::string afterPath = dir + "/after/" + name + ".npy";
    if (!std::filesystem::exists(afterPath)) {
      std::printf("%-28s has no reference\n", name.c_str());
      ok = false;
      continue;
    }
    std::vector<float> before = read(*initial, i);
    std::vector<float> moved = read(*probed, i), grad(before.size());
    for (size_t k = 0; k < grad.size(); ++k)
      grad[k] = float((double(before[k]) - moved[k]) / kGradientRate);
    report(
        name + " grad",
        relativeError(
            grad, data::readNpy(dir + "/grad/" + name + ".npy").as<float>()));
    report(
        name + " after",
        relativeError(read(*stepped, i), data::readNpy(afterPath).as<float>()));
    ++compared;
  }
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
