//===- MakeTestPlan.cpp - writes a hand-built MLP plan --------------------===//
//
// dpc-make-test-plan OUT.dpcplan [--batch N] [--hidden N] [--optimizer
// sgd|adamw] [--momentum M] [--two-streams]: a plan for trying dpc-run
// before the compiler writes plans.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/test/TestPlans.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  dpc::plan::test::MlpPlanOptions options;
  options.batch = 256;
  std::string out;
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
    else if (arg == "--split") {
      // Per-device batches, e.g. 96,160: a data-parallel plan.
      std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        options.split.push_back(
            std::atoll(list.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    } else if (out.empty() && arg[0] != '-')
      out = arg;
    else {
      std::cerr << "usage: dpc-make-test-plan OUT [--batch N] [--hidden N] "
                   "[--optimizer sgd|adamw] [--momentum M] [--two-streams] "
                   "[--split B0,B1,...]\n";
      return 1;
    }
  }
  if (out.empty() || options.batch < 1 ||
      (options.optimizer != "sgd" && options.optimizer != "adamw")) {
    std::cerr << "usage: dpc-make-test-plan OUT [--batch N] [--hidden N] "
                 "[--optimizer sgd|adamw] [--momentum M] [--two-streams] "
                 "[--split B0,B1,...]\n";
    return 1;
  }
  if (!dpc::plan::test::writeFile(out,
                                  dpc::plan::test::buildMlpPlan(options))) {
    std::cerr << out << ": cannot write the file\n";
    return 1;
  }
  return 0;
}
