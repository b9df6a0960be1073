//===- PlanLoaderTest.cpp - every bad plan is one clear line --------------===//
//
// Loading, the file's identity and version, roles and replicas, and bytes
// flipped at random: each refusal is one line naming the file.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanLoader.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/plan/PlanVersion.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include "runtime/plan/test/PlanLoaderTestUtils.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace dpc::plan {
namespace {

using namespace loader_test;

TEST(PlanLoaderTest, LoadsAWellFormedPlan) {
  auto plan = LoadedPlan::fromBytes(test::buildMlpPlan(smallMlp()), "ok.plan");
  EXPECT_EQ(plan->get().version(), kPlanVersion);
  EXPECT_EQ(plan->findStep(StepRole::Train), 0);
  EXPECT_EQ(plan->findStep(StepRole::Eval), 1);
  EXPECT_EQ(plan->findStep(StepRole::AccumFirst), -1);
  EXPECT_EQ(plan->getMaxBatch(0), 4);
}

TEST(PlanLoaderTest, ReadsFiles) {
  std::string path = testing::TempDir() + "/loader_ok.dpcplan";
  ASSERT_TRUE(test::writeFile(path, test::buildMlpPlan(smallMlp())));
  EXPECT_EQ(LoadedPlan::load(path)->getName(), path);
  std::filesystem::remove(path);
  try {
    LoadedPlan::load(path);
    FAIL();
  } catch (const PlanError &error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": cannot read the file (No such file or directory)");
  }
}

TEST(PlanLoaderTest, WrongIdentifier) {
  std::vector<uint8_t> bytes = test::buildMlpPlan(smallMlp());
  std::copy_n("NOPE", 4, bytes.begin() + 4);
  EXPECT_EQ(loadError(bytes),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
  std::string text = "hello, this is not a plan at all";
  EXPECT_EQ(loadError(std::vector<uint8_t>(text.begin(), text.end())),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
  EXPECT_EQ(loadError(std::vector<uint8_t>{}),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
}

TEST(PlanLoaderTest, RolesNameOneStepAndOneBindingEach) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  EXPECT_EQ(loadError(plan), "");
  plan.steps[1]->role = StepRole::Train;
  EXPECT_EQ(loadError(plan), "bad.plan: steps 'train_step' and 'eval_step' "
                             "both have role Train");
  plan.steps[1]->role = StepRole::AccumFirst;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step' has role "
                             "AccumFirst, but grad_accum is 1");
  plan.steps[1]->role = static_cast<StepRole>(9);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': unknown role 9");
  plan.steps[1]->role = StepRole::Eval;
  for (auto &input : plan.steps[0]->inputs)
    if (input->name == "images")
      input->role = InputRole::Labels;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': inputs 'images' "
                             "and 'labels' both have role Labels");
  for (auto &input : plan.steps[0]->inputs)
    if (input->name == "images")
      input->role = InputRole::Data;
  EXPECT_EQ(loadError(plan), "");
  for (auto &output : plan.steps[0]->outputs)
    if (output->name == "correct")
      output->output_role = OutputRole::Loss;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': outputs 'loss' "
                             "and 'correct' both have role Loss");
  for (auto &output : plan.steps[0]->outputs)
    if (output->name == "correct")
      output->output_role = static_cast<OutputRole>(7);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': output 'correct' "
                             "has unknown role 7");
}

TEST(PlanLoaderTest, ReplicasShareTheirRole) {
  MlpPlanOptions options = smallMlp();
  options.split = {2, 2};
  PlanT plan = test::buildMlpPlanObject(options);
  EXPECT_EQ(loadError(plan), "");
  for (auto &step : plan.steps)
    if (step->name == "eval_step" && step->device == 1)
      step->role = StepRole::Other;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has role Other, the one on device 0 "
                             "has role Eval");
}

/// A two-device plan, as codegen writes one: steps train_step and
/// eval_step of device 0, then those of device 1.
PlanT buildTwoDevicePlan() {
  MlpPlanOptions options = smallMlp();
  options.split = {2, 2};
  PlanT plan = test::buildMlpPlanObject(options);
  EXPECT_EQ(loadError(plan), "");
  return plan;
}

/// The binding of `bindings` called `name`.
std::vector<std::unique_ptr<BindingT>>::iterator
bindingNamed(std::vector<std::unique_ptr<BindingT>> &bindings,
             const std::string &name) {
  return std::find_if(bindings.begin(), bindings.end(),
                      [&](const auto &b) { return b->name == name; });
}

TEST(PlanLoaderTest, ReplicasHaveTheSameOutputs) {
  // One device's loss renamed: the run would report another loss.
  PlanT plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[2]->outputs, "loss"))->name = "loss2";
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 has no output 'loss', the one on "
                             "device 0 has");
  // An eval step without its correct count on one device, either one.
  plan = buildTwoDevicePlan();
  plan.steps[3]->outputs.erase(bindingNamed(plan.steps[3]->outputs, "correct"));
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has no output 'correct', the one on "
                             "device 0 has");
  plan = buildTwoDevicePlan();
  plan.steps[1]->outputs.erase(bindingNamed(plan.steps[1]->outputs, "correct"));
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has output 'correct', the one on "
                             "device 0 has not");
}

TEST(PlanLoaderTest, ReplicasHaveTheSameSignature) {
  PlanT plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[2]->inputs, "lr"))->role = InputRole::Data;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': input 'lr' has "
                             "role Data on device 1, LearningRate on device 0");
  plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[3]->outputs, "logits"))->output_role =
      OutputRole::Other;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': output 'logits' has "
                             "role Other on device 1, Logits on device 0");
  plan = buildTwoDevicePlan();
  tensorNamed(*plan.steps[3], "correct").dtype = DType::I32;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': output 'correct' "
                             "is I32 [] on device 1, I64 [] on device 0");
  // The batch may differ (each device's share), the other dims not.
  MlpPlanOptions uneven = smallMlp();
  uneven.split = {1, 3};
  EXPECT_EQ(loadError(test::buildMlpPlanObject(uneven)), "");
}

/// A layer's bias left out on one device only: that replica computes
/// another model, though its signature is the same.
TEST(PlanLoaderTest, ReplicasReadTheSameState) {
  PlanT plan = buildTwoDevicePlan();
  for (auto &call : plan.steps[2]->streams[0]->instructions)
    if (call->kernel == Kernel::LinearForward)
      call->operands[2] = -1;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 never reads 'b1', the one on device 0 "
                             "does");
  // The optimizer reads every parameter whatever the model computes: its
  // reads do not count.
  plan = buildTwoDevicePlan();
  for (auto &call : plan.steps[0]->streams[0]->instructions)
    if (call->kernel == Kernel::LinearForward)
      call->operands[2] = -1;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 reads 'b1', the one on device 0 never "
                             "does");
}

/// A weight relabelled as an input that nothing binds holds no value.
TEST(PlanLoaderTest, ReadOfAnUnboundInput) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  TensorT &w1 = tensorNamed(*plan.steps[1], "w1");
  w1.storage = Storage::Input;
  w1.persistent = -1;
  int t = 0;
  while (plan.steps[1]->tensors[t]->name != "w1")
    ++t;
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'eval_step', stream 0, instruction 0 "
            "(LinearForward): operand 1 (W) reads tensor " +
                std::to_string(t) + " ('w1'), an input that no binding fills");
}

TEST(PlanLoaderTest, GradAccumulatorsNeedAccumulation) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.persistent.back()->kind = PersistentKind::GradAccumulator;
  EXPECT_NE(loadError(plan).find("' is a gradient accumulator, but "
                                 "grad_accum is 1"),
            std::string::npos);
}

TEST(PlanLoaderTest, WrongVersion) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.version = 7;
  EXPECT_EQ(loadError(plan), "bad.plan: plan format version 7, this runtime "
                             "reads version " +
                                 std::to_string(kPlanVersion) +
                                 "; recompile the model");
}

TEST(PlanLoaderTest, Truncated) {
  std::vector<uint8_t> bytes = test::buildMlpPlan(smallMlp());
  for (size_t keep : {bytes.size() / 2, bytes.size() * 3 / 4, size_t(12)}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
    EXPECT_EQ(loadError(cut), "bad.plan: corrupted plan (verification failed)")
        << keep;
  }
}

/// A changed weight (which the structural checks cannot see) fails the
/// checksum.
TEST(PlanLoaderTest, ChecksumMismatch) {
  auto plan = LoadedPlan::fromBytes(test::buildMlpPlan(smallMlp()), "ok.plan");
  const std::vector<uint8_t> &bytes = plan->getBytes();
  for (const PersistentTensor *p : *plan->get().persistent()) {
    if (!p->data())
      continue;
    std::vector<uint8_t> changed = bytes;
    changed[p->data()->data() + p->data()->size() / 2 - bytes.data()] ^= 0x10;
    EXPECT_EQ(loadError(changed),
              "bad.plan: corrupted plan (checksum mismatch: its contents "
              "changed since it was written)")
        << p->name()->str();
  }
}

/// Flipping any byte (and sealing the plan again, as a forger would) gives
/// a plan that either is rejected in one line or loads and runs without
/// crashing (e.g. a changed weight).
TEST(PlanLoaderTest, FlippedBytesNeverCrash) {
  MlpPlanOptions o = smallMlp();
  std::vector<uint8_t> bytes = test::buildMlpPlan(o);
  int loaded = 0, rejected = 0, ran = 0;
  for (size_t at = 0; at < bytes.size(); at += 5) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> flipped = bytes;
      flipped[at] ^= mask;
      sealPlan(flipped);
      std::shared_ptr<const LoadedPlan> plan;
      try {
        plan = LoadedPlan::fromBytes(flipped, "bad.plan");
      } catch (const PlanError &error) {
        ++rejected;
        EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
        continue;
      }
      ++loaded;
      // Run a few of the survivors end to end.
      if (ran >= 25 || (at % 7) != 0)
        continue;
      ++ran;
      try {
        rt::Executor executor(plan);
        for (int step = 0; step < 2; ++step) {
          std::vector<float> images(o.batch * o.height * o.width, 0.5f);
          std::vector<int32_t> labels(o.batch, 1);
          float lr = 0.1f;
          if (executor.findInput(step, "images"))
            executor.setInput(step, "images", images.data(), images.size() * 4);
          if (executor.findInput(step, "labels"))
            executor.setInput(step, "labels", labels.data(), labels.size() * 4);
          if (executor.findInput(step, "lr"))
            executor.setInput(step, "lr", &lr, 4);
          executor.run(step, std::max<int64_t>(1, executor.getMaxBatch(step)));
        }
      } catch (const std::exception &) {
        // Errors are fine; crashes are not.
      }
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(loaded, 0);
}

} // namespace
} // namespace dpc::plan
