//===- MakeTestPlan.cpp - writes a hand-built MLP plan --------------------===//
//
// dpc-make-test-plan OUT.dpcplan [--batch N] [--hidden N] [--optimizer
// sgd|adamw] [--momentum M] [--two-streams]: a plan for trying dpc-run
// before the compiler writes plans.
//
// Forgeries for the loader's tests: --num-events N claims N events in the
// train step; --forge-images C,H,W makes every step's images input and
// the plan's sample_dims C x H x W (the model behind them unchanged);
// --forge-drop-bias D leaves the first layer's bias out of device D's
// train step (its replica then computes another model).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/test/TestPlans.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

static constexpr const char *kUsage =
    "usage: dpc-make-test-plan OUT [--batch N] [--hidden N] [--optimizer "
    "sgd|adamw] [--momentum M] [--two-streams] [--split B0,B1,...] "
    "[--num-events N] [--forge-images C,H,W] [--forge-drop-bias DEVICE]\n";

int main(int argc, char **argv) {
  dpc::plan::test::MlpPlanOptions options;
  options.batch = 256;
  std::string out;
  int64_t numEvents = -1;
  std::vector<int64_t> forgedImages;
  int dropBiasDevice = -1;
  auto parseList = [](const std::string &list) {
    std::vector<int64_t> values;
    for (size_t at = 0; at <= list.size();) {
      size_t comma = std::min(list.find(',', at), list.size());
      values.push_back(std::atoll(list.substr(at, comma - at).c_str()));
      at = comma + 1;
    }
    return values;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(1);
      }
      return argv[++i];
    };
    if (arg == "--batch")
      options.batch = std::atoll(value().c_str());
    else if (arg == "--hidden")
      options.hidden = std::atoll(value().c_str());
    else if (arg == "--optimizer")
      options.optimizer = value();
    else if (arg == "--momentum")
      options.momentum = std::atof(value().c_str());
    else if (arg == "--two-streams")
      options.twoStreams = true;
    else if (arg == "--split") // Per-device batches, e.g. 96,160.
      options.split = parseList(value());
    else if (arg == "--num-events")
      numEvents = std::atoll(value().c_str());
    else if (arg == "--forge-images")
      forgedImages = parseList(value());
    else if (arg == "--forge-drop-bias")
      dropBiasDevice = std::atoi(value().c_str());
    else if (out.empty() && arg[0] != '-')
      out = arg;
    else {
      std::cerr << kUsage;
      return 1;
    }
  }
  if (out.empty() || options.batch < 1 ||
      (options.optimizer != "sgd" && options.optimizer != "adamw")) {
    std::cerr << kUsage;
    return 1;
  }
  dpc::plan::PlanT plan = dpc::plan::test::buildMlpPlanObject(options);
  if (numEvents >= 0)
    plan.steps[0]->num_events = static_cast<int32_t>(numEvents);
  if (forgedImages.size() == 3) {
    plan.sample_dims = forgedImages;
    for (auto &step : plan.steps)
      for (auto &tensor : step->tensors)
        if (tensor->name == "images")
          tensor->dims = {tensor->dims[0], forgedImages[0], forgedImages[1],
                          forgedImages[2]};
  }
  for (auto &step : plan.steps)
    if (step->device == dropBiasDevice && step->name == "train_step")
      for (auto &call : step->streams[0]->instructions)
        if (call->kernel == dpc::plan::Kernel::LinearForward) {
          call->operands[2] = -1;
          break;
        }
  if (!dpc::plan::test::writeFile(out, dpc::plan::test::packPlan(plan))) {
    std::cerr << out << ": cannot write the file\n";
    return 1;
  }
  return 0;
}
