//===- PlanLoaderTestUtils.h - bad plans for the loader's tests -*- C++ -*-===//
//
// The small MLP plan the loader's tests forge, and the one-line error that
// loading a forged plan throws (PlanLoaderTest, PlanBoundsTest,
// PlanOrderTest).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_TEST_PLANLOADERTESTUTILS_H
#define DPC_RUNTIME_PLAN_TEST_PLANLOADERTESTUTILS_H

#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dpc::plan::loader_test {

using test::MlpPlanOptions;

inline MlpPlanOptions smallMlp() {
  MlpPlanOptions o;
  o.batch = 4;
  o.height = o.width = 4;
  o.hidden = 5;
  o.classes = 3;
  return o;
}

/// The message of the PlanError that loading `bytes` throws ("" if none).
inline std::string loadError(const std::vector<uint8_t> &bytes) {
  try {
    LoadedPlan::fromBytes(bytes, "bad.plan");
  } catch (const PlanError &error) {
    std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("bad.plan: ", 0), 0u) << message;
    return message;
  }
  return "";
}

inline std::string loadError(const PlanT &plan) {
  return loadError(test::packPlan(plan));
}

/// The tensor of `step` called `name`.
inline TensorT &tensorNamed(StepT &step, const std::string &name) {
  for (auto &tensor : step.tensors)
    if (tensor->name == name)
      return *tensor;
  ADD_FAILURE() << "no tensor " << name;
  return *step.tensors[0];
}

} // namespace dpc::plan::loader_test

#endif // DPC_RUNTIME_PLAN_TEST_PLANLOADERTESTUTILS_H
